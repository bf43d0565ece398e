// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/compression_dict.h"

#define ZDICT_STATIC_LINKING_ONLY  // ZDICT_trainFromBuffer_fastCover
#define ZSTD_STATIC_LINKING_ONLY   // ZSTD_create[CD]Dict_byReference
#include <zdict.h>
#include <zstd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "siftdb/options.h"

namespace siftdb {

int ZstdLevel(int level) {
  if (level == CompressionOptions::kDefaultCompressionLevel) {
    return ZSTD_CLEVEL_DEFAULT;
  }
  return std::clamp(level, ZSTD_minCLevel(), ZSTD_maxCLevel());
}

namespace {

// Raw content: whole samples taken at even steps until max_bytes is
// filled (the last one cut), so the content spans the whole table so far.
std::string RawContent(std::string_view samples,
                       const std::vector<size_t>& sizes, size_t max_bytes) {
  std::string content;
  if (sizes.empty()) return content;
  const size_t mean = std::max<size_t>(1, samples.size() / sizes.size());
  const size_t wanted = std::max<size_t>(1, max_bytes / mean);
  const size_t step = std::max<size_t>(1, sizes.size() / wanted);
  size_t offset = 0;
  for (size_t i = 0; i < sizes.size() && content.size() < max_bytes; i++) {
    if (i % step == 0) {
      const size_t take = std::min(sizes[i], max_bytes - content.size());
      content.append(samples.substr(offset, take));
    }
    offset += sizes[i];
  }
  return content;
}

}  // namespace

ZstdDictionary::ZstdDictionary(std::string bytes, uint32_t id)
    : bytes_(std::move(bytes)), id_(id) {}

ZstdDictionary::~ZstdDictionary() {
  ZSTD_freeCDict(cdict_);
  ZSTD_freeDDict(ddict_);
}

std::unique_ptr<ZstdDictionary> ZstdDictionary::Build(
    std::string_view samples, const std::vector<size_t>& sample_sizes,
    size_t max_bytes, int level, bool train) {
  max_bytes =
      std::clamp(max_bytes, kMinCompressionDictBytes, kMaxCompressionDictBytes);
  if (sample_sizes.empty() || samples.empty()) return nullptr;
  const int zlevel = ZstdLevel(level);
  std::string dict(max_bytes, '\0');
  size_t written;
  if (train) {
    // One pass of zstd's fast trainer with fixed parameters: its
    // optimizing variant (ZDICT_trainFromBuffer) tries several and costs
    // about 4x the CPU for a few percent more (docs/compaction.md).
    ZDICT_fastCover_params_t params{};
    params.k = 200;
    params.d = 8;
    params.f = 20;
    params.steps = 1;
    params.accel = 1;
    params.zParams.compressionLevel = zlevel;
    written = ZDICT_trainFromBuffer_fastCover(
        dict.data(), dict.size(), samples.data(), sample_sizes.data(),
        static_cast<unsigned>(sample_sizes.size()), params);
  } else {
    const std::string content = RawContent(samples, sample_sizes, max_bytes);
    ZDICT_params_t params{};
    params.compressionLevel = zlevel;
    written = ZDICT_finalizeDictionary(
        dict.data(), dict.size(), content.data(), content.size(),
        samples.data(), sample_sizes.data(),
        static_cast<unsigned>(sample_sizes.size()), params);
  }
  if (ZDICT_isError(written)) return nullptr;
  dict.resize(written);
  const uint32_t id = ZDICT_getDictID(dict.data(), dict.size());
  if (id == 0) return nullptr;
  std::unique_ptr<ZstdDictionary> out(new ZstdDictionary(std::move(dict), id));
  // By reference: bytes_ outlives both, and each open table then holds
  // one copy of its dictionary, not three.
  out->cdict_ = ZSTD_createCDict_byReference(out->bytes_.data(),
                                             out->bytes_.size(), zlevel);
  out->ddict_ =
      ZSTD_createDDict_byReference(out->bytes_.data(), out->bytes_.size());
  if (out->cdict_ == nullptr || out->ddict_ == nullptr) return nullptr;
  return out;
}

absl::StatusOr<std::unique_ptr<ZstdDictionary>> ZstdDictionary::Load(
    std::string bytes, std::string_view context) {
  const uint32_t id = ZDICT_getDictID(bytes.data(), bytes.size());
  if (id == 0) {
    return absl::DataLossError(
        absl::StrFormat("%s: not a zstd dictionary with an ID (%d bytes)",
                        context, bytes.size()));
  }
  std::unique_ptr<ZstdDictionary> out(new ZstdDictionary(std::move(bytes), id));
  out->ddict_ =
      ZSTD_createDDict_byReference(out->bytes_.data(), out->bytes_.size());
  if (out->ddict_ == nullptr) {
    return absl::DataLossError(
        absl::StrFormat("%s: zstd cannot load the dictionary (%d bytes, ID %d)",
                        context, out->bytes_.size(), id));
  }
  return out;
}

}  // namespace siftdb
