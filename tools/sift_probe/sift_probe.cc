// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// sift_probe: asks the Redis mirror of a siftdb database whether keys may
// exist, without the database (include/siftdb/remote_filter.h).
//
//   sift_probe --redis=HOST:PORT --name=DB [--user U --password P] KEY...
//   producer | sift_probe --redis=HOST:PORT --name=DB
//
// Prints one line per key, in input order: "maybe <key>" or "no <key>".
// With no KEY arguments, keys are read from stdin, one per line, and
// answered in pipelined batches of --batch keys (one Redis round trip per
// batch while the mirror's table filters are cached). A summary goes to
// stderr. --redis may list several comma-separated endpoints (Redis Cluster
// seeds). Exit status: 0 (answers printed; "maybe" for everything when the
// mirror is unusable, with the reason in the summary), 1 when Redis cannot
// be reached or refuses AUTH, 2 on bad usage.

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "siftdb/remote_filter.h"
#include "tools/common/args.h"

namespace {

// Registers every sift_probe flag on *args.
void AddProbeFlags(siftdb::tools::ArgParser* args) {
  args->AddFlag("redis", "HOST:PORT", "Redis endpoint(s), comma-separated");
  args->AddFlag("name", "DB", "the database's mirror name");
  args->AddFlag("user", "U", "ACL user name");
  args->AddFlag("password", "P", "password (AUTH)");
  args->AddFlag("batch", "N", "keys per pipelined batch from stdin (1000)");
  args->AddFlag("timeout_ms", "MS", "connect and command timeout (1000)");
  args->AddBoolFlag("quiet", "no summary on stderr");
}

// Reads --batch and --timeout_ms. On a malformed value or a zero batch
// prints the problem to stderr and returns false (the caller exits with 2).
bool ParseBatchAndTimeout(const siftdb::tools::ArgParser& args,
                          uint64_t* batch_size, uint64_t* timeout_ms) {
  absl::StatusOr<uint64_t> batch = args.GetUint64("batch", 1000);
  absl::StatusOr<uint64_t> timeout = args.GetUint64("timeout_ms", 1000);
  if (!batch.ok() || !timeout.ok() || *batch == 0) {
    std::fprintf(stderr, "sift_probe: %s\n",
                 !batch.ok() ? std::string(batch.status().message()).c_str()
                 : !timeout.ok()
                     ? std::string(timeout.status().message()).c_str()
                     : "--batch must be at least 1");
    return false;
  }
  *batch_size = *batch;
  *timeout_ms = *timeout;
  return true;
}

// The reader options the flags ask for.
siftdb::RemoteFilterReaderOptions ReaderOptions(
    const siftdb::tools::ArgParser& args, uint64_t timeout_ms) {
  siftdb::RemoteFilterReaderOptions options;
  for (absl::string_view e :
       absl::StrSplit(args.GetString("redis"), ',', absl::SkipEmpty())) {
    options.endpoints.emplace_back(e);
  }
  options.username = args.GetString("user");
  options.password = args.GetString("password");
  options.connect_timeout_ms = static_cast<int>(timeout_ms);
  options.command_timeout_ms = static_cast<int>(timeout_ms);
  return options;
}

// Asks the mirror about batches of keys, prints one answer line per key
// to stdout and counts the answers.
class KeyProber {
 public:
  explicit KeyProber(siftdb::RemoteFilter* filter) : filter_(filter) {}

  // Answers `keys` with one pipelined MayContainMany.
  void AnswerBatch(const std::vector<std::string>& keys) {
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<bool> answers;
    absl::Status st = filter_->MayContainMany(views, &answers);
    if (first_problem_.ok() && !st.ok()) first_problem_ = st;
    out_.clear();
    for (size_t i = 0; i < keys.size(); i++) {
      out_ += answers[i] ? "maybe " : "no ";
      out_ += keys[i];
      out_ += '\n';
      maybes_ += answers[i] ? 1 : 0;
    }
    total_ += keys.size();
    std::fwrite(out_.data(), 1, out_.size(), stdout);
  }

  // Answers the keys on stdin, one per line (a trailing '\r' dropped), in
  // batches of batch_size.
  void AnswerStdin(uint64_t batch_size) {
    std::vector<std::string> keys;
    std::string line;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      keys.push_back(std::move(line));
      if (keys.size() >= batch_size) {
        AnswerBatch(keys);
        keys.clear();
      }
    }
    if (!keys.empty()) AnswerBatch(keys);
  }

  uint64_t total() const { return total_; }
  uint64_t maybes() const { return maybes_; }
  // The first error MayContainMany reported, or OK.
  const absl::Status& first_problem() const { return first_problem_; }

 private:
  siftdb::RemoteFilter* const filter_;
  uint64_t total_ = 0;
  uint64_t maybes_ = 0;
  absl::Status first_problem_;
  std::string out_;  // one batch's answer lines
};

// Prints the summary line (counts, filter stats, timing and the mirror's
// watermark) to stderr.
void PrintSummary(const KeyProber& prober, siftdb::RemoteFilter* filter,
                  std::chrono::steady_clock::time_point start) {
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  const uint64_t total = prober.total();
  const uint64_t maybes = prober.maybes();
  const absl::Status& first_problem = prober.first_problem();
  siftdb::RemoteFilterStats st = filter->stats();
  siftdb::RemoteFilterWatermark w = filter->watermark();
  std::fprintf(stderr,
               "sift_probe: %llu keys: %llu maybe, %llu no; %llu batches, "
               "%llu round trips, %llu table filters fetched (%llu bytes); "
               "%.1f ms; mirror mode=%s complete_seq=%llu "
               "complete_unix_ms=%lld; status: %s\n",
               static_cast<unsigned long long>(total),
               static_cast<unsigned long long>(maybes),
               static_cast<unsigned long long>(total - maybes),
               static_cast<unsigned long long>(st.batches),
               static_cast<unsigned long long>(st.round_trips),
               static_cast<unsigned long long>(st.filter_fetches),
               static_cast<unsigned long long>(st.filter_fetch_bytes), ms,
               w.mode.empty() ? "?" : w.mode.c_str(),
               static_cast<unsigned long long>(w.complete_seq),
               static_cast<long long>(w.complete_unix_ms),
               first_problem.ok() ? "OK" : first_problem.ToString().c_str());
}

int Run(int argc, char** argv) {
  siftdb::tools::ArgParser args(
      "sift_probe",
      "sift_probe --redis=HOST:PORT[,HOST:PORT...] --name=DB [--user=U] "
      "[--password=P] [--batch=N] [KEY...]   (no KEY: keys on stdin)");
  AddProbeFlags(&args);
  absl::Status s = args.Parse(argc, argv);
  if (!s.ok()) {
    std::fprintf(stderr, "sift_probe: %s\n%s", std::string(s.message()).c_str(),
                 args.Usage().c_str());
    return 2;
  }
  if (!args.Has("redis") || !args.Has("name")) {
    std::fprintf(stderr, "sift_probe: --redis and --name are required\n%s",
                 args.Usage().c_str());
    return 2;
  }
  uint64_t batch_size = 0, timeout_ms = 0;
  if (!ParseBatchAndTimeout(args, &batch_size, &timeout_ms)) return 2;

  const siftdb::RemoteFilterReaderOptions options =
      ReaderOptions(args, timeout_ms);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<siftdb::RemoteFilter>> filter =
      siftdb::RemoteFilter::Open(options, args.GetString("name"));
  if (!filter.ok()) {
    std::fprintf(stderr, "sift_probe: %s\n",
                 filter.status().ToString().c_str());
    return 1;
  }

  KeyProber prober(filter->get());
  if (!args.positional().empty()) {
    prober.AnswerBatch(args.positional());
  } else {
    prober.AnswerStdin(batch_size);
  }
  std::fflush(stdout);

  if (!args.GetBool("quiet")) PrintSummary(prober, filter->get(), start);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
