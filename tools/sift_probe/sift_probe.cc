// Copyright (c) siftdb authors.
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

int Run(int argc, char** argv) {
  siftdb::tools::ArgParser args(
      "sift_probe",
      "sift_probe --redis=HOST:PORT[,HOST:PORT...] --name=DB [--user=U] "
      "[--password=P] [--batch=N] [KEY...]   (no KEY: keys on stdin)");
  args.AddFlag("redis", "HOST:PORT", "Redis endpoint(s), comma-separated");
  args.AddFlag("name", "DB", "the database's mirror name");
  args.AddFlag("user", "U", "ACL user name");
  args.AddFlag("password", "P", "password (AUTH)");
  args.AddFlag("batch", "N", "keys per pipelined batch from stdin (1000)");
  args.AddFlag("timeout_ms", "MS", "connect and command timeout (1000)");
  args.AddBoolFlag("quiet", "no summary on stderr");
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
  absl::StatusOr<uint64_t> batch = args.GetUint64("batch", 1000);
  absl::StatusOr<uint64_t> timeout = args.GetUint64("timeout_ms", 1000);
  if (!batch.ok() || !timeout.ok() || *batch == 0) {
    std::fprintf(stderr, "sift_probe: %s\n",
                 !batch.ok() ? std::string(batch.status().message()).c_str()
                 : !timeout.ok()
                     ? std::string(timeout.status().message()).c_str()
                     : "--batch must be at least 1");
    return 2;
  }

  siftdb::RemoteFilterReaderOptions options;
  for (absl::string_view e :
       absl::StrSplit(args.GetString("redis"), ',', absl::SkipEmpty())) {
    options.endpoints.emplace_back(e);
  }
  options.username = args.GetString("user");
  options.password = args.GetString("password");
  options.connect_timeout_ms = static_cast<int>(*timeout);
  options.command_timeout_ms = static_cast<int>(*timeout);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<siftdb::RemoteFilter>> filter =
      siftdb::RemoteFilter::Open(options, args.GetString("name"));
  if (!filter.ok()) {
    std::fprintf(stderr, "sift_probe: %s\n",
                 filter.status().ToString().c_str());
    return 1;
  }

  uint64_t total = 0, maybes = 0;
  absl::Status first_problem;
  std::string out;
  auto answer = [&](const std::vector<std::string>& keys) {
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<bool> answers;
    absl::Status st = (*filter)->MayContainMany(views, &answers);
    if (first_problem.ok() && !st.ok()) first_problem = st;
    out.clear();
    for (size_t i = 0; i < keys.size(); i++) {
      out += answers[i] ? "maybe " : "no ";
      out += keys[i];
      out += '\n';
      maybes += answers[i] ? 1 : 0;
    }
    total += keys.size();
    std::fwrite(out.data(), 1, out.size(), stdout);
  };
  if (!args.positional().empty()) {
    answer(args.positional());
  } else {
    std::vector<std::string> keys;
    std::string line;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      keys.push_back(std::move(line));
      if (keys.size() >= *batch) {
        answer(keys);
        keys.clear();
      }
    }
    if (!keys.empty()) answer(keys);
  }
  std::fflush(stdout);

  if (!args.GetBool("quiet")) {
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    siftdb::RemoteFilterStats st = (*filter)->stats();
    siftdb::RemoteFilterWatermark w = (*filter)->watermark();
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
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
