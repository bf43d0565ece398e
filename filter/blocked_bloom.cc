// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "filter/blocked_bloom.h"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SIFTDB_BLOCKED_BLOOM_AVX2 1
#include <immintrin.h>
#endif

namespace siftdb {

namespace {

// Sets the k probe bits of a key whose low hash half is lo in its block.
inline void SetProbes(uint8_t* block, uint32_t lo, int k) {
  for (int i = 0; i < k; ++i) {
    SetFilterBit(block, BlockedBloomProbeBit(lo, i));
  }
}

// Sets the probes of hashes[0, n) in bits (num_blocks blocks).
__attribute__((always_inline)) inline void AddHashes(uint8_t* bits,
                                                     uint32_t num_blocks, int k,
                                                     const uint64_t* hashes,
                                                     size_t n) {
  // Blocks are random cache lines: prefetch a few keys ahead so the misses
  // overlap instead of serializing.
  constexpr size_t kPrefetchDistance = 8;
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) {
      __builtin_prefetch(
          bits + size_t{BlockedBloomBlockIndex(hashes[i + kPrefetchDistance],
                                               num_blocks)} *
                     kBlockBytes,
          /*rw=*/1);
    }
    SetProbes(bits + size_t{BlockedBloomBlockIndex(hashes[i], num_blocks)} *
                         kBlockBytes,
              static_cast<uint32_t>(hashes[i]), k);
  }
}

void AddHashesPortable(uint8_t* bits, uint32_t num_blocks, int k,
                       const uint64_t* hashes, size_t n) {
  AddHashes(bits, num_blocks, k, hashes, n);
}

using AddHashesFn = void (*)(uint8_t*, uint32_t, int, const uint64_t*, size_t);

#ifdef SIFTDB_BLOCKED_BLOOM_AVX2
// The same code compiled for BMI2, whose one-instruction variable shifts
// make setting a bit about 15% cheaper.
__attribute__((target("bmi2"))) void AddHashesBmi2(uint8_t* bits,
                                                   uint32_t num_blocks, int k,
                                                   const uint64_t* hashes,
                                                   size_t n) {
  AddHashes(bits, num_blocks, k, hashes, n);
}
#endif

AddHashesFn BestAddHashes() {
  static const AddHashesFn best = [] {
#ifdef SIFTDB_BLOCKED_BLOOM_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("bmi2")) return &AddHashesBmi2;
#endif
    return &AddHashesPortable;
  }();
  return best;
}

}  // namespace

uint32_t BlockedBloomNumBlocks(size_t n, double bits_per_key) {
  const double blocks =
      std::ceil(static_cast<double>(n) * bits_per_key / kBlockBits);
  if (!(blocks >= 1)) return 1;  // also NaN
  if (blocks >= static_cast<double>(std::numeric_limits<uint32_t>::max())) {
    return std::numeric_limits<uint32_t>::max();
  }
  return static_cast<uint32_t>(blocks);
}

BlockedBloomWriter::BlockedBloomWriter(uint32_t num_blocks, int k,
                                       std::string* dst)
    : dst_(dst),
      offset_(dst->size()),
      // Out-of-contract arguments are normalized rather than trusted.
      num_blocks_(std::max<uint32_t>(num_blocks, 1)),
      k_(std::clamp(k, 1, kMaxProbes)) {
  const size_t bytes = size_t{num_blocks_} * kBlockBytes;
  dst_->resize(offset_ + bytes + kFilterTrailerSize, '\0');
  FilterTrailer trailer;
  trailer.param = num_blocks_;
  trailer.k = static_cast<uint8_t>(k_);
  trailer.kind = FilterKind::kBlocked;
  EncodeFilterTrailer(trailer, dst_->data() + offset_ + bytes);
}

void BlockedBloomWriter::Add(const uint64_t* hashes, size_t n) {
  BestAddHashes()(reinterpret_cast<uint8_t*>(dst_->data() + offset_),
                  num_blocks_, k_, hashes, n);
}

std::vector<uint64_t> BlockedBloomProbeBits(uint64_t hash, uint32_t num_blocks,
                                            int k) {
  std::vector<uint64_t> out;
  if (num_blocks == 0 || k <= 0) return out;
  out.resize(std::min(k, 32));
  BlockedBloomProbeOffsets(hash, num_blocks, static_cast<int>(out.size()),
                           out.data());
  return out;
}

bool BlockedBloomProbeScalar(const uint8_t* block, uint32_t lo, int k) {
  // Probe bit b is bit 7 - (b & 7) of byte b >> 3; shifting that byte left
  // by (b & 7) brings the bit to position 7 for every probe.
  uint32_t acc = 0x80;
  for (int i = 0; i < k; ++i) {
    const uint32_t bit = BlockedBloomProbeBit(lo, i);
    acc &= static_cast<uint32_t>(block[bit >> 3]) << (bit & 7);
  }
  return acc != 0;
}

#ifdef SIFTDB_BLOCKED_BLOOM_AVX2

namespace {

// Eight probes at a time. The block is sixteen 32-bit little-endian words
// in two registers; probe bit b (0..511) is in word b >> 5, and since bytes
// are MSB-first (Redis order) at bit (b & 24) + 7 - (b & 7) = (b ^ 7) & 31
// of that word.
__attribute__((target("avx2"))) bool ProbeAvx2(const uint8_t* block,
                                               uint32_t lo, int k) {
  const __m256i lo_v = _mm256_set1_epi32(static_cast<int>(lo));
  const __m256i low_words =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block));
  const __m256i high_words =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i seven = _mm256_set1_epi32(7);
  const __m256i low5 = _mm256_set1_epi32(31);
  const __m256i one = _mm256_set1_epi32(1);
  for (int base = 0; base < k; base += 8) {
    const __m256i x = _mm256_mullo_epi32(
        lo_v, _mm256_load_si256(reinterpret_cast<const __m256i*>(
                  &kBlockedProbePowers.v[base])));
    const __m256i bit = _mm256_srli_epi32(x, 23);
    const __m256i word = _mm256_srli_epi32(bit, 5);
    // permutevar uses the low 3 bits of `word`; bit 3 picks the half, moved
    // to the sign bit for the blend.
    const __m256i from_low = _mm256_permutevar8x32_epi32(low_words, word);
    const __m256i from_high = _mm256_permutevar8x32_epi32(high_words, word);
    const __m256i words = _mm256_castps_si256(_mm256_blendv_ps(
        _mm256_castsi256_ps(from_low), _mm256_castsi256_ps(from_high),
        _mm256_castsi256_ps(_mm256_slli_epi32(word, 28))));
    __m256i mask = _mm256_sllv_epi32(
        one, _mm256_and_si256(_mm256_xor_si256(bit, seven), low5));
    // Lanes past k test nothing.
    mask = _mm256_and_si256(
        mask, _mm256_cmpgt_epi32(_mm256_set1_epi32(k - base), lane));
    // testc: (~words & mask) == 0, i.e. every probed bit is set.
    if (!_mm256_testc_si256(words, mask)) return false;
  }
  return true;
}

}  // namespace

BlockedProbeFn BlockedBloomProbeAvx2() {
  static const bool has_avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has_avx2 ? &ProbeAvx2 : nullptr;
}

#else  // !SIFTDB_BLOCKED_BLOOM_AVX2

BlockedProbeFn BlockedBloomProbeAvx2() { return nullptr; }

#endif  // SIFTDB_BLOCKED_BLOOM_AVX2

BlockedProbeFn BlockedBloomSelectProbe() {
  const BlockedProbeFn avx2 = BlockedBloomProbeAvx2();
  return avx2 != nullptr ? avx2 : &BlockedBloomProbeScalar;
}

}  // namespace siftdb
