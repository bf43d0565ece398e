// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// AlternatingReport: how the Redis benches compare two ways of doing the
// same work in one run (plain TCP and TLS, Sentinel and a direct address, a
// replica and the master). The workloads run for each of the two variants
// in turn, round after round, so that the shared machine's drifting load
// falls on both alike; every figure keeps its samples per variant, and the
// table printed at the end gives each figure's medians and the ratio of the
// second variant's median to the first's.
//
//   AlternatingReport report("plain", "tls", layout);
//   report.Alternate(3, [&](int v) {
//     report.Record("PING round trip (us)", v, PingMicros(v), 1);
//   });
//   report.Print();
//
// Thread safety: not thread-safe; use from the bench's main thread.

#ifndef SIFTDB_BENCH_ALTERNATING_REPORT_H_
#define SIFTDB_BENCH_ALTERNATING_REPORT_H_

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace siftdb::bench {

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

class AlternatingReport {
 public:
  // How the table is laid out (printf field widths).
  struct Layout {
    std::string indent;             // before every line
    std::string corner = "median";  // the header's first cell
    int label_width = 28;
    int value_width = 12;
    int ratio_width = 10;
  };

  // The ratio column is second / first.
  AlternatingReport(std::string first, std::string second, Layout layout)
      : names_{std::move(first), std::move(second)},
        layout_(std::move(layout)) {}

  // Calls run(0) then run(1), `rounds` times.
  void Alternate(int rounds, const std::function<void(int variant)>& run) {
    for (int round = 0; round < rounds; round++) {
      for (int variant = 0; variant < 2; variant++) run(variant);
    }
  }

  // One sample of `figure` (a row; rows print in the order of their first
  // sample) for variant 0 or 1, printed with `precision` decimals.
  void Record(std::string_view figure, int variant, double value,
              int precision) {
    auto row = std::find_if(rows_.begin(), rows_.end(),
                            [&](const Row& r) { return r.label == figure; });
    if (row == rows_.end()) {
      rows_.push_back(Row{std::string(figure), precision, {}});
      row = rows_.end() - 1;
    }
    row->samples[variant].push_back(value);
  }

  double median(std::string_view figure, int variant) const {
    for (const Row& r : rows_) {
      if (r.label == figure) return Median(r.samples[variant]);
    }
    return 0;
  }

  // The header, then per figure its two medians and their ratio.
  void Print() const {
    const Layout& l = layout_;
    const std::string ratio = names_[1] + "/" + names_[0];
    std::printf("%s%-*s %*s %*s %*s\n", l.indent.c_str(), l.label_width,
                l.corner.c_str(), l.value_width, names_[0].c_str(),
                l.value_width, names_[1].c_str(), l.ratio_width, ratio.c_str());
    for (const Row& r : rows_) {
      const double a = Median(r.samples[0]), b = Median(r.samples[1]);
      std::printf("%s%-*s %*.*f %*.*f %*.2f\n", l.indent.c_str(), l.label_width,
                  r.label.c_str(), l.value_width, r.precision, a, l.value_width,
                  r.precision, b, l.ratio_width, b / a);
    }
    std::fflush(stdout);
  }

 private:
  struct Row {
    std::string label;
    int precision;
    std::vector<double> samples[2];
  };
  std::string names_[2];
  Layout layout_;
  std::vector<Row> rows_;
};

}  // namespace siftdb::bench

#endif  // SIFTDB_BENCH_ALTERNATING_REPORT_H_
