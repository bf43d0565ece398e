// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/bloom/redis_bloom_dump.h"

#include <cmath>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "util/coding.h"

namespace siftdb::redis_bloom {

namespace {

void PutDouble(std::string* dst, double v) {
  uint64_t bits;
  static_assert(sizeof(bits) == sizeof(v));
  std::memcpy(&bits, &v, sizeof(bits));
  PutFixed64(dst, bits);
}

double DecodeDouble(const char* p) {
  uint64_t bits = DecodeFixed64(p);
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError("bloom dump header: " + what);
}

}  // namespace

std::string EncodeHeader(const ChainHeader& header) {
  std::string out;
  out.reserve(kHeaderFixedBytes + kHeaderLinkBytes * header.links.size());
  PutFixed64(&out, header.items);
  PutFixed32(&out, static_cast<uint32_t>(header.links.size()));
  PutFixed32(&out, header.options);
  PutFixed32(&out, header.growth);
  for (const ChainLink& link : header.links) {
    PutFixed64(&out, link.spec.bytes);
    PutFixed64(&out, link.spec.bits);
    PutFixed64(&out, link.items);
    PutDouble(&out, link.spec.error);
    PutDouble(&out, link.spec.bpe);
    PutFixed32(&out, link.spec.hashes);
    PutFixed64(&out, link.spec.capacity);
    out.push_back(static_cast<char>(link.spec.n2));
  }
  return out;
}

absl::StatusOr<ChainHeader> DecodeHeader(std::string_view data) {
  if (data.size() < kHeaderFixedBytes) {
    return Bad(absl::StrFormat("%d bytes, shorter than the %d-byte prefix",
                               data.size(), kHeaderFixedBytes));
  }
  const char* p = data.data();
  ChainHeader h;
  h.items = DecodeFixed64(p);
  const uint32_t nfilters = DecodeFixed32(p + 8);
  h.options = DecodeFixed32(p + 12);
  h.growth = DecodeFixed32(p + 16);
  if (nfilters == 0) return Bad("no sub-filters");
  if (nfilters > kMaxLinks) {
    return Bad(
        absl::StrFormat("%d sub-filters, more than %d", nfilters, kMaxLinks));
  }
  if ((data.size() - kHeaderFixedBytes) % kHeaderLinkBytes != 0 ||
      (data.size() - kHeaderFixedBytes) / kHeaderLinkBytes != nfilters) {
    return Bad(absl::StrFormat("%d bytes do not hold %d sub-filters",
                               data.size(), nfilters));
  }
  if ((h.options & kOptForce64) == 0) {
    return absl::UnimplementedError(
        "bloom dump header: filter uses RedisBloom's legacy 32-bit hash "
        "(no FORCE64 option), which siftdb does not implement");
  }
  if (h.growth < 1 && (h.options & kOptNoScaling) == 0) {
    return Bad("expansion 0 on a scaling filter");
  }
  uint64_t total_items = 0;
  p += kHeaderFixedBytes;
  for (uint32_t i = 0; i < nfilters; i++, p += kHeaderLinkBytes) {
    ChainLink link;
    link.spec.bytes = DecodeFixed64(p);
    link.spec.bits = DecodeFixed64(p + 8);
    link.items = DecodeFixed64(p + 16);
    link.spec.error = DecodeDouble(p + 24);
    link.spec.bpe = DecodeDouble(p + 32);
    link.spec.hashes = DecodeFixed32(p + 40);
    link.spec.capacity = DecodeFixed64(p + 44);
    link.spec.n2 = static_cast<uint8_t>(p[52]);
    if (link.spec.bytes == 0 || link.spec.bits / 8 != link.spec.bytes ||
        link.spec.bits % 8 != 0) {
      return Bad(absl::StrFormat("sub-filter %d: %d bits in %d bytes", i,
                                 link.spec.bits, link.spec.bytes));
    }
    if (!(link.spec.error > 0 && link.spec.error < 1) ||
        !std::isfinite(link.spec.bpe) || link.spec.bpe <= 0) {
      return Bad(absl::StrFormat("sub-filter %d: error %g, bpe %g", i,
                                 link.spec.error, link.spec.bpe));
    }
    if (link.spec.hashes == 0 ||
        link.spec.hashes != HashesForBpe(link.spec.bpe)) {
      return Bad(absl::StrFormat("sub-filter %d: %d hashes for bpe %g", i,
                                 link.spec.hashes, link.spec.bpe));
    }
    if (link.spec.bytes > kMaxLinkBytes) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "bloom dump header: sub-filter %d has %d bytes, above Redis's "
          "%d-byte string limit",
          i, link.spec.bytes, kMaxLinkBytes));
    }
    total_items += link.items;
    h.links.push_back(link);
  }
  if (total_items != h.items) {
    return Bad(absl::StrFormat("sub-filter items add up to %d, header says %d",
                               total_items, h.items));
  }
  return h;
}

std::optional<ChunkRef> DumpChunkAt(const std::vector<uint64_t>& link_bytes,
                                    int64_t iterator, uint64_t max_chunk) {
  if (iterator < 1) return std::nullopt;
  uint64_t offset = static_cast<uint64_t>(iterator) - 1;
  for (size_t i = 0; i < link_bytes.size(); i++) {
    if (offset < link_bytes[i]) {
      ChunkRef ref;
      ref.link = i;
      ref.offset = offset;
      ref.length = std::min(link_bytes[i] - offset, max_chunk);
      ref.next_iterator = iterator + static_cast<int64_t>(ref.length);
      return ref;
    }
    offset -= link_bytes[i];
  }
  return std::nullopt;
}

absl::StatusOr<ChunkRef> LoadChunkTarget(
    const std::vector<uint64_t>& link_bytes, int64_t iterator,
    uint64_t length) {
  // it - len - 1, computed without overflow.
  if (iterator < 1 || static_cast<uint64_t>(iterator) - 1 < length) {
    return absl::InvalidArgumentError("invalid offset - no link found");
  }
  uint64_t offset = static_cast<uint64_t>(iterator) - 1 - length;
  for (size_t i = 0; i < link_bytes.size(); i++) {
    if (offset < link_bytes[i]) {
      if (length > link_bytes[i] - offset) {
        return absl::InvalidArgumentError(
            "invalid chunk - Too big for current filter");
      }
      ChunkRef ref;
      ref.link = i;
      ref.offset = offset;
      ref.length = length;
      ref.next_iterator = iterator;
      return ref;
    }
    offset -= link_bytes[i];
  }
  return absl::InvalidArgumentError("invalid offset - no link found");
}

}  // namespace siftdb::redis_bloom
