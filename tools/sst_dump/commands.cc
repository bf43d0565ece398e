// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The entry-level commands (scan, check, identify) and the property and
// filter reports, all through Table::Open.

#include <bit>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "filter/blocked_bloom.h"
#include "filter/bloom_math.h"
#include "filter/classic_bloom.h"
#include "filter/filter_format.h"
#include "filter/partitioned_filter.h"
#include "table/compression.h"
#include "table/internal_key.h"
#include "table/table.h"
#include "tools/common/hex.h"
#include "tools/sst_dump/sst_dump.h"
#include "util/coding.h"

namespace siftdb::sst_dump {
namespace {

absl::StatusOr<std::unique_ptr<Table>> OpenTableAt(Env* env,
                                                   const std::string& path) {
  uint64_t size = 0;
  auto file = OpenFile(env, path, &size);
  if (!file.ok()) return file.status();
  // No filter policy configured: the table's own is found by name.
  return Table::Open(TableOptions(), path, std::move(*file), size);
}

ReadOptions VerifyingReads(bool verify = true) {
  ReadOptions ro;
  ro.verify_checksums = verify;
  ro.fill_cache = false;
  return ro;
}

}  // namespace

absl::Status Scan(Env* env, const std::string& path, const DumpOptions& opts,
                  std::FILE* out) {
  auto table = OpenTableAt(env, path);
  if (!table.ok()) return table.status();
  const Comparator* ucmp = BytewiseComparator();
  auto it = (*table)->NewIterator(VerifyingReads(opts.verify_checksum));
  // With --prefix the scan starts at the later of --from and the prefix.
  std::optional<std::string> start = opts.from;
  if (opts.prefix.has_value() &&
      (!start.has_value() || ucmp->Compare(*start, *opts.prefix) < 0)) {
    start = opts.prefix;
  }
  if (start.has_value()) {
    std::string target;
    AppendInternalKey(&target, *start, kMaxSequenceNumber, kValueTypeForSeek);
    it->Seek(target);
  } else {
    it->SeekToFirst();
  }
  uint64_t count = 0;
  for (; it->Valid(); it->Next()) {
    ParsedInternalKey parsed;
    if (!ParseInternalKey(it->key(), &parsed)) {
      return absl::DataLossError(
          absl::StrFormat("%s: entry %d has a malformed internal key %s", path,
                          count, tools::ToHex(it->key())));
    }
    if (opts.to.has_value() && ucmp->Compare(parsed.user_key, *opts.to) >= 0) {
      break;
    }
    if (opts.prefix.has_value() && !parsed.user_key.starts_with(*opts.prefix)) {
      break;
    }
    if (opts.limit != 0 && count >= opts.limit) break;
    std::fprintf(out, "%s => '%s'\n",
                 InternalKeyDebugString(it->key(), opts.output_hex).c_str(),
                 tools::FormatBytes(it->value(), opts.output_hex).c_str());
    count++;
  }
  return it->status();
}

absl::Status Check(Env* env, const std::string& path, std::FILE*) {
  // Block level first: CRCs, block structure, tiling.
  std::FILE* devnull = std::fopen("/dev/null", "w");
  if (devnull == nullptr) return absl::InternalError("cannot open /dev/null");
  absl::Status s = Verify(env, path, devnull);
  std::fclose(devnull);
  if (!s.ok()) return s;

  auto opened = OpenTableAt(env, path);
  if (!opened.ok()) return opened.status();
  const Table& table = **opened;
  const TableProperties& props = table.properties();
  InternalKeyComparator icmp(BytewiseComparator());
  auto fail = [&](const std::string& what) {
    return absl::DataLossError(absl::StrFormat("%s: %s", path, what));
  };

  uint64_t entries = 0, deletions = 0, raw_keys = 0, raw_values = 0;
  uint64_t filter_misses = 0;
  std::string prev, first;
  const bool check_filter =
      !table.filter_data().empty() && table.filter_policy() != nullptr;
  auto it = table.NewIterator(VerifyingReads());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view key = it->key();
    ParsedInternalKey parsed;
    if (!ParseInternalKey(key, &parsed)) {
      return fail(absl::StrFormat("entry %d has a malformed internal key %s",
                                  entries, tools::ToHex(key)));
    }
    if (entries > 0 && icmp.Compare(prev, key) >= 0) {
      return fail(
          absl::StrFormat("entry %d (%s) is not after the one before "
                          "it (%s)",
                          entries, InternalKeyDebugString(key, false),
                          InternalKeyDebugString(prev, false)));
    }
    if (check_filter &&
        (entries == 0 || ExtractUserKey(prev) != parsed.user_key) &&
        !table.UserKeyMayMatch(parsed.user_key, nullptr)) {
      filter_misses++;
    }
    if (entries == 0) first.assign(key.data(), key.size());
    prev.assign(key.data(), key.size());
    entries++;
    if (parsed.type == kTypeDeletion) deletions++;
    raw_keys += key.size();
    raw_values += it->value().size();
  }
  if (!it->status().ok()) return it->status();

  if (entries != props.num_entries) {
    return fail(absl::StrFormat("%d entries read, properties say %d", entries,
                                props.num_entries));
  }
  if (deletions != props.num_deletions) {
    return fail(absl::StrFormat("%d deletions read, properties say %d",
                                deletions, props.num_deletions));
  }
  if (raw_keys != props.raw_key_size || raw_values != props.raw_value_size) {
    return fail(absl::StrFormat(
        "raw key/value bytes %d/%d, properties say %d/%d", raw_keys, raw_values,
        props.raw_key_size, props.raw_value_size));
  }
  if (first != props.smallest_key || prev != props.largest_key) {
    return fail("smallest/largest key differ from the properties");
  }
  if (filter_misses > 0) {
    return fail(absl::StrFormat(
        "the filter rejects %d user keys that are in the table (false "
        "negatives)",
        filter_misses));
  }
  return absl::OkStatus();
}

absl::Status Identify(Env* env, const std::string& path, std::FILE* out) {
  uint64_t size = 0;
  auto file = OpenFile(env, path, &size);
  if (!file.ok()) return file.status();
  if (size < kFooterSize) {
    return absl::DataLossError(absl::StrFormat(
        "%s: not a siftdb table (%d bytes, shorter than a footer)", path,
        size));
  }
  char space[8];
  std::string_view magic;
  absl::Status s = (*file)->Read(size - 8, 8, &magic, space);
  if (!s.ok()) return s;
  if (magic.size() != 8 || DecodeFixed64(magic.data()) != kTableMagicNumber) {
    return absl::DataLossError(absl::StrFormat(
        "%s: not a siftdb table (no table magic number at its end)", path));
  }
  auto table = Table::Open(TableOptions(), path, std::move(*file), size);
  if (!table.ok()) {
    return absl::DataLossError(
        absl::StrFormat("%s (the file is a siftdb table, but damaged)",
                        table.status().message()));
  }
  const TableProperties& props = (*table)->properties();
  std::fprintf(out,
               "%s: siftdb table, format version %u, %llu entries, %llu "
               "bytes\n",
               path.c_str(), (*table)->footer().format_version,
               static_cast<unsigned long long>(props.num_entries),
               static_cast<unsigned long long>(size));
  return absl::OkStatus();
}

namespace {

// "  data blocks stored: none 2, zstd 30": how many data blocks each
// compression type stores (a block that would not shrink an eighth is
// stored raw whatever the table's siftdb.compression says).
absl::Status ShowBlockTypes(Env* env, const std::string& path, std::FILE* out) {
  uint64_t size = 0;
  auto file = OpenFile(env, path, &size);
  if (!file.ok()) return file.status();
  auto layout = ReadLayout(**file, path, size);
  if (!layout.ok()) return layout.status();
  std::map<uint8_t, size_t> counts;
  for (const auto& [key, handle] : layout->data) {
    char scratch[1];
    std::string_view type;
    absl::Status s =
        (*file)->Read(handle.offset() + handle.size(), 1, &type, scratch);
    if (!s.ok()) return s;
    if (type.size() != 1) {
      return absl::DataLossError(absl::StrFormat(
          "%s: block at offset %d: truncated trailer", path, handle.offset()));
    }
    counts[static_cast<uint8_t>(type[0])]++;
  }
  std::string line;
  for (const auto& [type, n] : counts) {
    absl::StrAppendFormat(&line, "%s%s %d", line.empty() ? "" : ", ",
                          CompressionTypeName(type), n);
  }
  std::fprintf(out, "  data blocks stored: %s\n",
               line.empty() ? "(none)" : line.c_str());
  return absl::OkStatus();
}

}  // namespace

absl::Status ShowProperties(Env* env, const std::string& path, std::FILE* out) {
  auto table = OpenTableAt(env, path);
  if (!table.ok()) return table.status();
  std::fprintf(out, "Table properties of %s:\n", path.c_str());
  std::string text = TablePropertiesToString((*table)->properties());
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    std::fprintf(out, "  %s\n", text.substr(start, end - start).c_str());
    start = end + 1;
  }
  return ShowBlockTypes(env, path, out);
}

absl::Status ShowFilter(Env* env, const std::string& path, std::FILE* out) {
  auto table = OpenTableAt(env, path);
  if (!table.ok()) return table.status();
  const TableProperties& props = (*table)->properties();
  const std::string_view filter = (*table)->filter_data();
  std::fprintf(out, "Filter of %s:\n", path.c_str());
  if ((*table)->filter_policy_name().empty()) {
    std::fprintf(out, "  none\n");
    return absl::OkStatus();
  }
  const uint64_t keys = props.filter_num_keys;
  std::fprintf(out, "  policy: %s\n",
               std::string((*table)->filter_policy_name()).c_str());
  std::fprintf(out, "  bytes: %zu\n", filter.size());
  std::fprintf(out, "  keys: %llu\n", static_cast<unsigned long long>(keys));
  std::fprintf(out, "  bits per key (configured): %g\n",
               props.filter_bits_per_key);

  FilterTrailer trailer;
  if (!DecodeFilterTrailer(filter, &trailer)) {
    std::fprintf(out, "  encoding: not a siftdb Bloom encoding (no trailer)\n");
    return absl::OkStatus();
  }
  if (trailer.kind == FilterKind::kPartitioned) {
    FilterPartitionIndex index;
    if (!FilterPartitionIndex::Parse(filter, &index)) {
      std::fprintf(out,
                   "  encoding: partitioned, index not decodable (readers "
                   "answer \"may match\")\n");
      return absl::OkStatus();
    }
    std::fprintf(out, "  encoding: partitioned, %zu partitions\n",
                 index.size());
    for (size_t i = 0; i < index.size(); i++) {
      const FilterPartitionIndex::Entry& e = index.entry(i);
      std::fprintf(out, "  partition %zu: offset %u, %u bytes, last key %s\n",
                   i, e.offset, e.size, absl::CHexEscape(e.last_key).c_str());
    }
    return absl::OkStatus();
  }
  uint64_t bits = 0;
  int k = 0;
  bool blocked = false;
  if (trailer.kind == FilterKind::kBlocked) {
    ParsedBlockedBloom parsed(filter);
    if (parsed.valid()) {
      bits = uint64_t{parsed.num_blocks()} * kBlockBits;
      k = parsed.k();
      blocked = true;
    }
  } else if (trailer.kind == FilterKind::kClassic) {
    ParsedClassicBloom parsed(filter);
    if (parsed.valid()) {
      bits = parsed.num_bits();
      k = parsed.k();
    }
  }
  if (bits == 0) {
    std::fprintf(out,
                 "  encoding: kind 0x%02x, k %d, version %d: not decodable "
                 "(readers answer \"may match\")\n",
                 static_cast<int>(trailer.kind), trailer.k, trailer.version);
    return absl::OkStatus();
  }
  uint64_t set = 0;
  const std::string_view bit_bytes = filter.substr(0, (bits + 7) / 8);
  for (unsigned char c : bit_bytes) set += std::popcount(c);
  const double fill = static_cast<double>(set) / static_cast<double>(bits);
  const double bpk =
      keys > 0 ? static_cast<double>(bits) / static_cast<double>(keys) : 0;
  const double fp_theory = keys == 0
                               ? 0
                               : (blocked ? BlockedFpRate(bpk, k)
                                          : ClassicFpRateExact(bits, keys, k));
  std::fprintf(out, "  encoding: %s Bloom, version %d\n",
               blocked ? "blocked (64-byte blocks)" : "classic",
               trailer.version);
  std::fprintf(out, "  bits: %llu (%g per key)\n",
               static_cast<unsigned long long>(bits), bpk);
  std::fprintf(out, "  k: %d\n", k);
  std::fprintf(out, "  fill ratio: %.4f (%llu bits set)\n", fill,
               static_cast<unsigned long long>(set));
  std::fprintf(out, "  estimated FP rate: %.6f (from keys, bits and k)\n",
               fp_theory);
  std::fprintf(out, "  estimated FP rate: %.6f (fill ratio ^ k)\n",
               std::pow(fill, k));
  return absl::OkStatus();
}

}  // namespace siftdb::sst_dump
