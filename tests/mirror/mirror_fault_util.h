// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The fault harness of the mirror tests (issue #15): a record of the keys a
// DB acknowledged (with the wall-clock time of each acknowledgement), and a
// checker thread that reads the mirror through a real RemoteFilter over and
// over while a test injects faults between real processes, counting
//   * false negatives: "no" for an acknowledged key (async mirrors: a key
//     acknowledged before the watermark the same call reported);
//   * trusted and untrusted batches, on a timeline, so a test can measure
//     how long the mirror stayed untrusted after a fault;
//   * "no" answers for never-written keys while trusted (the mirror must
//     become useful again, not only safe).
//
// BackgroundWriter writes keys on a thread of its own and records each
// acknowledged one in an AckedKeys.
//
// Thread safety: AckedKeys is thread-safe. BackgroundWriter and
// MirrorChecker each run one thread of their own; call Start/Stop and the
// accessors from the test's thread.

#ifndef SIFTDB_TESTS_MIRROR_MIRROR_FAULT_UTIL_H_
#define SIFTDB_TESTS_MIRROR_MIRROR_FAULT_UTIL_H_

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "redis/mirror/redis_mirror_writer.h"
#include "siftdb/db.h"
#include "siftdb/remote_filter.h"
#include "tests/mirror/mirror_test_util.h"

namespace siftdb::test {

// A master whose full syncs start at once (diskless, no delay) and one
// replica of it, link up.
struct MasterAndReplica {
  std::unique_ptr<RedisServer> master;
  std::unique_ptr<RedisServer> replica;
};
inline absl::StatusOr<MasterAndReplica> StartMasterAndReplica() {
  RedisServerOptions mo;
  mo.extra_args = {"--repl-diskless-sync-delay", "0"};
  auto master = RedisServer::Start(mo);
  if (!master.ok()) return master.status();
  auto replica = (*master)->StartReplica();
  if (!replica.ok()) return replica.status();
  return MasterAndReplica{std::move(*master), std::move(*replica)};
}

// Sync mirror options that WAIT for one replica (300 ms at most).
inline Options WaitingMirrorOptions(const std::string& endpoint,
                                    const std::string& name) {
  Options o = MirrorOptions({endpoint}, name, RemoteFilterOptions::Mode::kSync);
  o.remote_filter.wait_replicas = 1;
  o.remote_filter.wait_timeout_ms = 300;
  return o;
}

class AckedKeys {
 public:
  // Records `key` as acknowledged now (call after the write returned OK).
  void Add(std::string key) {
    const int64_t now = MirrorUnixMs();
    std::lock_guard<std::mutex> l(mu_);
    keys_.emplace_back(std::move(key), now);
  }
  std::vector<std::pair<std::string, int64_t>> Snapshot() const {
    std::lock_guard<std::mutex> l(mu_);
    return keys_;
  }
  size_t size() const {
    std::lock_guard<std::mutex> l(mu_);
    return keys_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, int64_t>> keys_;
};

// Writes key<i> for i = first, first+1, ... until stopped, recording each
// acknowledged key; the DB must keep serving (every write OK).
class BackgroundWriter {
 public:
  BackgroundWriter(DB* db, AckedKeys* acked, int first)
      : db_(db), acked_(acked), next_(first) {}
  ~BackgroundWriter() { Stop(); }
  void Start() {
    thread_ = std::thread([this] {
      while (!stop_) {
        const std::string key = TestKey(next_++);
        absl::Status s = db_->Put(WriteOptions(), key, std::string(40, 'v'));
        if (!s.ok()) {
          errors_++;
          continue;
        }
        acked_->Add(key);
        absl::SleepFor(absl::Microseconds(200));
      }
    });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int errors() const { return errors_; }

 private:
  DB* const db_;
  AckedKeys* const acked_;
  int next_;
  std::atomic<bool> stop_{false};
  std::atomic<int> errors_{0};
  std::thread thread_;
};

class MirrorChecker {
 public:
  struct Batch {
    int64_t steady_ms = 0;
    bool trusted = false;
  };

  MirrorChecker(RemoteFilterReaderOptions options, std::string name,
                const AckedKeys* acked, bool async)
      : options_(std::move(options)),
        name_(std::move(name)),
        acked_(acked),
        async_(async) {
    for (int i = 0; i < 500; i++) absent_.push_back(AbsentKey(i));
  }
  ~MirrorChecker() { Stop(); }

  void Start() {
    stop_ = false;
    thread_ = std::thread([this] { Run(); });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  int64_t false_negatives() const { return false_negatives_; }
  std::string first_false_negative() const {
    std::lock_guard<std::mutex> l(mu_);
    return first_false_negative_;
  }
  int64_t keys_checked() const { return keys_checked_; }
  std::vector<Batch> timeline() const {
    std::lock_guard<std::mutex> l(mu_);
    return timeline_;
  }
  // Of the trusted batches after steady time `since`, the fraction of
  // never-written keys answered "no" (0 when there were none).
  double AbsentNoRateSince(int64_t since) const {
    std::lock_guard<std::mutex> l(mu_);
    int64_t no = 0, asked = 0;
    for (const auto& [ms, n] : absent_no_) {
      if (ms < since) continue;
      no += n;
      asked += static_cast<int64_t>(absent_.size());
    }
    return asked == 0 ? 0 : static_cast<double>(no) / asked;
  }
  // Steady ms of the last untrusted batch at or after `since` (-1: none):
  // the end of the untrusted window that followed a fault at `since`.
  int64_t LastUntrustedSince(int64_t since) const {
    std::lock_guard<std::mutex> l(mu_);
    int64_t last = -1;
    for (const Batch& b : timeline_) {
      if (b.steady_ms >= since && !b.trusted) last = b.steady_ms;
    }
    return last;
  }
  // Waits until a trusted batch started after `since` was recorded.
  bool WaitTrustedAfter(int64_t since,
                        absl::Duration timeout = absl::Seconds(30)) const {
    return WaitUntil(
        [&] {
          std::lock_guard<std::mutex> l(mu_);
          return !timeline_.empty() && timeline_.back().trusted &&
                 timeline_.back().steady_ms > since;
        },
        timeout);
  }
  std::string Summary() const {
    std::lock_guard<std::mutex> l(mu_);
    int64_t trusted = 0;
    for (const Batch& b : timeline_) trusted += b.trusted;
    return absl::StrFormat(
        "%d batches (%d trusted), %d acknowledged keys checked, %d false "
        "negatives%s",
        timeline_.size(), trusted, keys_checked_.load(),
        false_negatives_.load(),
        first_false_negative_.empty() ? "" : " e.g. " + first_false_negative_);
  }

 private:
  void Run() {
    std::unique_ptr<RemoteFilter> reader;
    while (!stop_) {
      if (reader == nullptr) {
        auto r = RemoteFilter::Open(options_, name_);
        if (!r.ok()) {
          absl::SleepFor(absl::Milliseconds(20));
          continue;
        }
        reader = std::move(*r);
      }
      const std::vector<std::pair<std::string, int64_t>> acked =
          acked_->Snapshot();
      std::vector<std::string_view> views;
      views.reserve(acked.size() + absent_.size());
      for (const auto& [k, ms] : acked) views.push_back(k);
      for (const std::string& k : absent_) views.push_back(k);
      std::vector<bool> answers;
      const int64_t start = MirrorSteadyMs();
      absl::Status s = reader->MayContainMany(views, &answers);
      const RemoteFilterWatermark w = reader->watermark();
      int64_t absent_no = 0;
      for (size_t i = 0; i < views.size(); i++) {
        if (answers[i]) continue;
        if (i >= acked.size()) {
          absent_no++;
          continue;
        }
        // Async: only keys acknowledged before the watermark are promised.
        if (async_ && acked[i].second >= w.complete_unix_ms) continue;
        if (false_negatives_++ == 0) {
          std::lock_guard<std::mutex> l(mu_);
          first_false_negative_ = absl::StrFormat(
              "%s acknowledged at %d, watermark %d, status %s", acked[i].first,
              acked[i].second, w.complete_unix_ms, s.ToString());
        }
      }
      keys_checked_ += static_cast<int64_t>(acked.size());
      {
        std::lock_guard<std::mutex> l(mu_);
        timeline_.push_back({start, s.ok()});
        if (s.ok()) absent_no_.emplace_back(start, absent_no);
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
  }

  const RemoteFilterReaderOptions options_;
  const std::string name_;
  const AckedKeys* const acked_;
  const bool async_;
  std::vector<std::string> absent_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> false_negatives_{0};
  std::atomic<int64_t> keys_checked_{0};
  mutable std::mutex mu_;
  std::string first_false_negative_;
  std::vector<Batch> timeline_;
  std::vector<std::pair<int64_t, int64_t>> absent_no_;  // (ms, "no" count)
};

// After a fault at steady `fault_ms`: waits until the checker sees the
// mirror trusted again, stops it, prints the untrusted window, and expects
// no false negative, a window of at most `max_window_ms`, and afterwards at
// least 95% of absent keys answered "no".
inline void ExpectRecovered(MirrorChecker* checker, DB* db, int64_t fault_ms,
                            int64_t max_window_ms, const std::string& label) {
  ASSERT_TRUE(checker->WaitTrustedAfter(MirrorSteadyMs()))
      << label << ": never trusted again; " << checker->Summary()
      << "; engine: " << MirrorState(db);
  absl::SleepFor(absl::Milliseconds(300));
  checker->Stop();
  const int64_t last_untrusted = checker->LastUntrustedSince(fault_ms);
  const int64_t window = last_untrusted < 0 ? 0 : last_untrusted - fault_ms + 1;
  std::printf("%s: untrusted window %lld ms; %s\n", label.c_str(),
              static_cast<long long>(window), checker->Summary().c_str());
  EXPECT_EQ(checker->false_negatives(), 0) << checker->Summary();
  EXPECT_GT(checker->keys_checked(), 0);
  EXPECT_LE(window, max_window_ms) << checker->Summary();
  EXPECT_GE(checker->AbsentNoRateSince(last_untrusted + 1), 0.95)
      << checker->Summary();
}

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_MIRROR_MIRROR_FAULT_UTIL_H_
