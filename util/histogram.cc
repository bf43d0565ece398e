// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"

namespace siftdb {

const std::vector<double>& Histogram::BucketLimits() {
  static const std::vector<double>* const limits = [] {
    auto* v = new std::vector<double>;
    for (int i = 1; i <= 10; i++) v->push_back(i);
    // Then per decade: x1.2 .. x10 in steps that keep buckets ~10-25% wide.
    static constexpr double kSteps[] = {1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 3.5,
                                        4,   4.5, 5,   6,   7, 8,   9, 10};
    for (double decade = 10; decade < 1e13; decade *= 10) {
      for (double step : kSteps) v->push_back(decade * step);
    }
    v->push_back(std::numeric_limits<double>::infinity());
    return v;
  }();
  return *limits;
}

Histogram::Histogram() { Clear(); }

void Histogram::Clear() {
  min_ = std::numeric_limits<double>::infinity();
  max_ = 0;
  count_ = 0;
  sum_ = 0;
  sum_squares_ = 0;
  buckets_.assign(BucketLimits().size(), 0);
}

void Histogram::Add(double value) {
  if (!(value > 0)) value = 0;  // also maps NaN to 0
  const std::vector<double>& limits = BucketLimits();
  // First bucket whose limit exceeds value.
  const size_t b =
      std::upper_bound(limits.begin(), limits.end(), value) - limits.begin();
  buckets_[std::min(b, limits.size() - 1)]++;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  count_++;
  sum_ += value;
  sum_squares_ += value * value;
}

void Histogram::Merge(const Histogram& other) {
  if (other.count_ == 0) return;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
  sum_squares_ += other.sum_squares_;
  for (size_t b = 0; b < buckets_.size(); b++) buckets_[b] += other.buckets_[b];
}

double Histogram::Average() const {
  return count_ == 0 ? 0 : sum_ / static_cast<double>(count_);
}

double Histogram::StdDev() const {
  if (count_ == 0) return 0;
  const double n = static_cast<double>(count_);
  const double variance = (sum_squares_ * n - sum_ * sum_) / (n * n);
  return variance > 0 ? std::sqrt(variance) : 0;
}

double Histogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  const std::vector<double>& limits = BucketLimits();
  const double threshold = static_cast<double>(count_) * (p / 100.0);
  double cumulative = 0;
  for (size_t b = 0; b < buckets_.size(); b++) {
    if (buckets_[b] == 0) continue;
    const double before = cumulative;
    cumulative += static_cast<double>(buckets_[b]);
    if (cumulative >= threshold) {
      const double left = b == 0 ? 0 : limits[b - 1];
      const double right = std::isinf(limits[b]) ? max_ : limits[b];
      const double fraction =
          (threshold - before) / static_cast<double>(buckets_[b]);
      return std::clamp(left + (right - left) * fraction, Min(), max_);
    }
  }
  return max_;
}

std::string Histogram::ToString() const {
  std::string r = absl::StrFormat(
      "Count: %d  Average: %.4f  StdDev: %.2f\n"
      "Min: %.4f  Median: %.4f  Max: %.4f\n"
      "Percentiles: P50: %.2f P99: %.2f P99.9: %.2f Max: %.2f\n",
      count_, Average(), StdDev(), Min(), Median(), Max(), Percentile(50),
      Percentile(99), Percentile(99.9), Max());
  r.append(54, '-');
  r.push_back('\n');
  if (count_ == 0) return r;
  const std::vector<double>& limits = BucketLimits();
  const double mult = 100.0 / static_cast<double>(count_);
  double cumulative = 0;
  for (size_t b = 0; b < buckets_.size(); b++) {
    if (buckets_[b] == 0) continue;
    cumulative += static_cast<double>(buckets_[b]);
    const double left = b == 0 ? 0 : limits[b - 1];
    const std::string right =
        std::isinf(limits[b]) ? "inf" : absl::StrFormat("%.0f", limits[b]);
    const double share = mult * static_cast<double>(buckets_[b]);
    // 20 marks for 100%.
    const int marks = static_cast<int>(std::lround(share / 5.0));
    r += absl::StrFormat("[ %7.0f, %7s ) %7d %7.3f%% %7.3f%%", left, right,
                         buckets_[b], share, cumulative * mult);
    if (marks > 0) r += " " + std::string(marks, '#');
    r.push_back('\n');
  }
  return r;
}

}  // namespace siftdb
