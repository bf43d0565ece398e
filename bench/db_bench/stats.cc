// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "bench/db_bench/stats.h"

#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/str_format.h"

namespace siftdb::bench {
namespace {

double SecondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

ProgressMeter::ProgressMeter(std::string name, int64_t expected_ops)
    : name_(std::move(name)),
      expected_ops_(expected_ops),
      start_(Clock::now()),
      tty_(isatty(STDERR_FILENO) != 0) {}

ProgressMeter::~ProgressMeter() {
  if (tty_ && printed_.load(std::memory_order_relaxed)) {
    std::fprintf(stderr, "\r%-72s\r", "");
    std::fflush(stderr);
  }
}

void ProgressMeter::Add(int64_t ops) {
  const int64_t done = done_.fetch_add(ops, std::memory_order_relaxed) + ops;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          Clock::now() - start_)
                          .count();
  constexpr int64_t kSecond = 1000000000;
  if (now < static_cast<int64_t>(kQuietSeconds * kSecond)) return;
  int64_t last = last_report_nanos_.load(std::memory_order_relaxed);
  if (now - last < (tty_ ? 1 : 10) * kSecond) return;
  // One thread wins the right to print this second's report.
  if (!last_report_nanos_.compare_exchange_strong(last, now)) return;
  std::string line = absl::StrFormat("%s: %d ops", name_, done);
  if (expected_ops_ > 0) {
    line +=
        absl::StrFormat(" (%.0f%%)", 100.0 * static_cast<double>(done) /
                                         static_cast<double>(expected_ops_));
  }
  line += absl::StrFormat(" in %.0f s", static_cast<double>(now) / kSecond);
  if (tty_) {
    std::fprintf(stderr, "\r%-72s", line.c_str());
  } else {
    std::fprintf(stderr, "... %s\n", line.c_str());
  }
  std::fflush(stderr);
  printed_.store(true, std::memory_order_relaxed);
}

Stats::Stats(bool histogram, ProgressMeter* progress)
    : use_histogram_(histogram),
      progress_(progress),
      // No span until Start(): merging into a fresh Stats takes the span of
      // what is merged.
      start_(Clock::time_point::max()),
      finish_(Clock::time_point::min()),
      last_op_(Clock::now()) {}

void Stats::Start() {
  start_ = Clock::now();
  finish_ = start_;
  last_op_ = start_;
  busy_seconds_ = 0;
  ops_ = 0;
  bytes_ = 0;
  unreported_ops_ = 0;
  slow_ops_ = 0;
  slow_seconds_ = 0;
  hist_.Clear();
}

void Stats::Stop() {
  finish_ = Clock::now();
  busy_seconds_ = SecondsBetween(start_, finish_);
  if (progress_ != nullptr && unreported_ops_ > 0) {
    progress_->Add(unreported_ops_);
    unreported_ops_ = 0;
  }
}

void Stats::FinishedOps(int64_t n) {
  if (use_histogram_) {
    const Clock::time_point now = Clock::now();
    const double micros =
        std::chrono::duration<double, std::micro>(now - last_op_).count();
    hist_.Add(micros);
    if (micros >= kSlowOpMicros) {
      slow_ops_++;
      slow_seconds_ += micros * 1e-6;
    }
    last_op_ = now;
  }
  ops_ += n;
  unreported_ops_ += n;
  if (unreported_ops_ >= kProgressBatch && progress_ != nullptr) {
    progress_->Add(unreported_ops_);
    unreported_ops_ = 0;
  }
}

void Stats::Merge(const Stats& other) {
  hist_.Merge(other.hist_);
  slow_ops_ += other.slow_ops_;
  slow_seconds_ += other.slow_seconds_;
  ops_ += other.ops_;
  bytes_ += other.bytes_;
  busy_seconds_ += other.busy_seconds_;
  start_ = std::min(start_, other.start_);
  finish_ = std::max(finish_, other.finish_);
}

double Stats::elapsed_seconds() const {
  if (finish_ <= start_) return 0;
  return SecondsBetween(start_, finish_);
}

double ProcessCpuSeconds() {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) +
           static_cast<double>(tv.tv_usec) * 1e-6;
  };
  return seconds(ru.ru_utime) + seconds(ru.ru_stime);
}

bool ResetPeakResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

int64_t PeakResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t kib = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    long long v;
    if (std::sscanf(line, "VmHWM: %lld kB", &v) == 1) {
      kib = v;
      break;
    }
  }
  std::fclose(f);
  return kib < 0 ? -1 : kib * 1024;
}

BenchResult ResultFromStats(const std::string& name, const Stats& stats,
                            bool with_histogram) {
  BenchResult r;
  r.name = name;
  r.ops = stats.ops();
  const double ops = static_cast<double>(std::max<int64_t>(stats.ops(), 1));
  r.micros_per_op = stats.busy_seconds() * 1e6 / ops;
  const double elapsed = stats.elapsed_seconds();
  if (elapsed > 0) {
    r.ops_per_sec = static_cast<double>(stats.ops()) / elapsed;
  }
  if (stats.bytes() > 0 && elapsed > 0) {
    r.mb_per_sec = static_cast<double>(stats.bytes()) / 1048576.0 / elapsed;
  }
  if (with_histogram) {
    r.histogram = stats.histogram();
    r.slow_ops = stats.slow_ops();
    r.slow_seconds = stats.slow_seconds();
  }
  return r;
}

std::string FormatResultLine(const BenchResult& r) {
  if (r.skip_reason.has_value()) {
    return absl::StrFormat("%-12s : skipped (%s)", r.name, *r.skip_reason);
  }
  std::string extra;
  if (r.mb_per_sec >= 0) extra = absl::StrFormat("%6.1f MB/s", r.mb_per_sec);
  if (!r.message.empty()) {
    if (!extra.empty()) extra.push_back(' ');
    extra += r.message;
  }
  return absl::StrFormat("%-12s : %11.3f micros/op %.0f ops/sec;%s%s", r.name,
                         r.micros_per_op, r.ops_per_sec,
                         extra.empty() ? "" : " ", extra);
}

std::string FormatHistogram(const Histogram& h) {
  // util/histogram's block, its "Percentiles:" line in RocksDB's layout:
  // tools/benchmark.sh reads fields 3, 7, 9 and 11 as P50, P99, P99.9 and
  // P99.99.
  std::string text = h.ToString();
  const size_t start = text.find("Percentiles:");
  if (start != std::string::npos) {
    const size_t end = text.find('\n', start);
    text.replace(
        start, end == std::string::npos ? end : end - start,
        absl::StrFormat("Percentiles: P50: %.2f P75: %.2f P99: %.2f "
                        "P99.9: %.2f P99.99: %.2f",
                        h.Percentile(50), h.Percentile(75), h.Percentile(99),
                        h.Percentile(99.9), h.Percentile(99.99)));
  }
  return absl::StrFormat("Microseconds per op:\n%s", text);
}

}  // namespace siftdb::bench
