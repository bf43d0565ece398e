// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "filter/bloom_math.h"

#include <math.h>  // lgamma_r

#include <algorithm>
#include <cmath>
#include <limits>

namespace siftdb {

namespace {

constexpr int kMinK = 1;
constexpr int kMaxK = 30;  // the formats' kMaxProbes
const double kLn2 = std::log(2.0);

bool Positive(double x) { return x > 0 && !std::isnan(x); }

}  // namespace

double ClassicBitsPerKeyForRate(double p) {
  if (std::isnan(p) || p >= 1) return 0;
  if (p <= 0) p = std::numeric_limits<double>::denorm_min();
  return -std::log(p) / (kLn2 * kLn2);
}

double ClassicOptimalKExact(double bits_per_key) {
  return Positive(bits_per_key) ? bits_per_key * kLn2 : 0;
}

int ClassicOptimalK(double bits_per_key) {
  double k = std::round(ClassicOptimalKExact(bits_per_key));
  return static_cast<int>(std::clamp(k, double{kMinK}, double{kMaxK}));
}

BloomSize ClassicSizeForRate(uint64_t n, double p) {
  const double bpk = ClassicBitsPerKeyForRate(p);
  BloomSize size;
  double m = std::ceil(static_cast<double>(n) * bpk);
  // Saturate rather than overflow on absurd inputs.
  size.bits = m >= 1.8e19 ? std::numeric_limits<uint64_t>::max()
                          : static_cast<uint64_t>(m);
  size.k = ClassicOptimalK(
      n == 0 ? bpk : static_cast<double>(size.bits) / static_cast<double>(n));
  return size;
}

double ClassicFpRate(double bits_per_key, int k) {
  if (!Positive(bits_per_key) || k < 1) return 1;
  return std::pow(1 - std::exp(-k / bits_per_key), k);
}

double ClassicFpRateExact(uint64_t m_bits, uint64_t n, int k) {
  if (m_bits == 0 || k < 1) return 1;
  // (1 - 1/m)^{kn} computed as exp(kn * log1p(-1/m)) to stay exact for
  // large m.
  const double empty =
      std::exp(static_cast<double>(k) * static_cast<double>(n) *
               std::log1p(-1.0 / static_cast<double>(m_bits)));
  return std::pow(1 - empty, k);
}

double BlockedFpRate(double bits_per_key, int k, uint32_t block_bits) {
  if (!Positive(bits_per_key) || k < 1 || block_bits == 0) return 1;
  if (std::isinf(bits_per_key)) return 0;           // no key shares any block
  const double lambda = block_bits / bits_per_key;  // mean keys per block
  const double log_keep = std::log1p(-1.0 / block_bits);
  if (lambda > 1e4) {
    // Under 0.06 bits per key for 512-bit blocks: the load is concentrated
    // (relative sd <= 1%) and every block is full; the mean load is exact
    // enough and keeps the sum below from running over millions of terms.
    return std::pow(1 - std::exp(lambda * k * log_keep), k);
  }
  // Sum the Poisson pmf over lambda +- 12 standard deviations (the tails
  // beyond contribute < 1e-30), in log space so a large lambda does not
  // underflow exp(-lambda).
  const double sd = std::sqrt(lambda);
  const double lo = std::max(0.0, std::floor(lambda - 12 * sd - 12));
  const double hi = std::ceil(lambda + 12 * sd + 12);
  double sum = 0;
  for (double j = lo; j <= hi; j += 1) {
    // lgamma_r, not std::lgamma: the latter writes the global signgam, a
    // data race when tables are built on several threads.
    int sign;
    const double log_pmf =
        j * std::log(lambda) - lambda - ::lgamma_r(j + 1, &sign);
    const double fill = 1 - std::exp(j * k * log_keep);
    sum += std::exp(log_pmf) * std::pow(fill, k);
  }
  return std::min(sum, 1.0);
}

int BlockedOptimalK(double bits_per_key, uint32_t block_bits) {
  if (!Positive(bits_per_key)) return kMinK;
  int best_k = kMinK;
  double best_fp = BlockedFpRate(bits_per_key, kMinK, block_bits);
  for (int k = kMinK + 1; k <= kMaxK; ++k) {
    const double fp = BlockedFpRate(bits_per_key, k, block_bits);
    if (fp < best_fp) {
      best_fp = fp;
      best_k = k;
    }
  }
  return best_k;
}

}  // namespace siftdb
