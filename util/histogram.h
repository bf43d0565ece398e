// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Histogram: a latency histogram (values are usually microseconds) with
// fixed, roughly geometric buckets, for db_bench and the benchmarks.
// Percentiles are interpolated linearly inside the bucket that holds them
// and clamped to the observed [Min, Max], so they are estimates whose
// error is bounded by the bucket width (about 10-25% of the value).
//
// Thread safety: none; give each thread its own Histogram and Merge them.

#ifndef SIFTDB_UTIL_HISTOGRAM_H_
#define SIFTDB_UTIL_HISTOGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

namespace siftdb {

class Histogram {
 public:
  Histogram();

  void Clear();
  // Negative values count as 0.
  void Add(double value);
  void Merge(const Histogram& other);

  uint64_t Count() const { return count_; }
  double Min() const { return count_ == 0 ? 0 : min_; }
  double Max() const { return count_ == 0 ? 0 : max_; }
  double Sum() const { return sum_; }
  double Average() const;
  double StdDev() const;
  double Median() const { return Percentile(50); }
  // p in [0, 100]; 0 for an empty histogram.
  double Percentile(double p) const;

  // A summary in the style of LevelDB's db_bench:
  //   Count: ... Average: ... StdDev: ...
  //   Min: ... Median: ... Max: ...
  //   Percentiles: P50: ... P99: ... P99.9: ... Max: ...
  // followed by one line per non-empty bucket with its share, cumulative
  // share and a bar.
  std::string ToString() const;

 private:
  // Upper (exclusive) limits of the buckets; the last one is +infinity.
  static const std::vector<double>& BucketLimits();

  double min_;
  double max_;
  uint64_t count_;
  double sum_;
  double sum_squares_;
  std::vector<uint64_t> buckets_;
};

}  // namespace siftdb

#endif  // SIFTDB_UTIL_HISTOGRAM_H_
