// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// sift_probe: asks the Redis mirror of a siftdb database whether keys may
// exist, without the database (include/siftdb/remote_filter.h).
//
//   sift_probe --redis=HOST:PORT --name=DB [--user U --password P] KEY...
//   producer | sift_probe --redis=HOST:PORT --name=DB
//   sift_probe --redis=HOST:PORT --name=DB --prefix [--extractor=NAME] P...
//
// Prints one line per key, in input order: "maybe <key>" or "no <key>".
// With --prefix the arguments (or lines) are prefixes, already produced by
// the database's prefix extractor, and the answer says whether any key of
// that prefix may exist (RemoteFilter::MayContainPrefixMany); --extractor
// names that extractor, so only filters holding its prefixes may say no.
// With no KEY arguments, keys are read from stdin, one per line, and
// answered in pipelined batches of --batch keys (one Redis round trip per
// batch while the mirror's table filters are cached). A summary goes to
// stderr. --redis may list several comma-separated endpoints (Redis Cluster
// seeds), or be one URL (redis://, rediss://, redis+sentinel://,
// rediss+sentinel://, unix://; TLS options are URL parameters; see
// docs/redis_client.md). The password comes from --password, else the first
// line of --password_file, else $SIFTDB_REDIS_PASSWORD. Exit status: 0 (answers
// printed; "maybe" for everything when the mirror is unusable, with the reason
// in the summary), 1 when Redis cannot be reached or refuses AUTH, 2 on bad
// usage (tools/common/flags.h).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_split.h"
#include "siftdb/remote_filter.h"
#include "tools/common/flags.h"

ABSL_FLAG(std::string, redis, "",
          "Redis endpoint(s) HOST:PORT, comma-separated, or one URL: "
          "redis://, rediss:// (TLS), redis+sentinel://, rediss+sentinel://, "
          "unix:// (docs/redis_client.md)");
ABSL_FLAG(std::string, name, "", "The database's mirror name");
ABSL_FLAG(std::string, user, "", "ACL user name");
ABSL_FLAG(std::string, password, "",
          "Password (AUTH); prefer --password_file or $SIFTDB_REDIS_PASSWORD, "
          "which stay out of ps");
ABSL_FLAG(std::string, password_file, "",
          "File whose first line is the AUTH password");
ABSL_FLAG(uint64_t, batch, 1000, "Keys per pipelined batch from stdin");
ABSL_FLAG(uint32_t, timeout_ms, 1000, "Connect and command timeout");
ABSL_FLAG(bool, quiet, false, "No summary on stderr");
ABSL_FLAG(bool, prefix, false,
          "Probe prefixes (outputs of the DB's prefix extractor), not keys");
ABSL_FLAG(std::string, extractor, "",
          "With --prefix: the extractor's name (e.g. siftdb.FixedPrefix.4); "
          "empty: the one the mirror's filters agree on");

namespace {

// The reader options the flags ask for.
// The password: --password, else --password_file's first line, else
// $SIFTDB_REDIS_PASSWORD (the last two keep it out of `ps`).
std::optional<std::string> Password() {
  if (!absl::GetFlag(FLAGS_password).empty()) {
    return absl::GetFlag(FLAGS_password);
  }
  const std::string file = absl::GetFlag(FLAGS_password_file);
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
  }
  const char* env = std::getenv("SIFTDB_REDIS_PASSWORD");
  return std::string(env != nullptr ? env : "");
}

siftdb::RemoteFilterReaderOptions ReaderOptions(std::string password) {
  siftdb::RemoteFilterReaderOptions options;
  const std::string redis = absl::GetFlag(FLAGS_redis);
  if (redis.find("://") != std::string::npos) {
    options.endpoints.push_back(redis);  // one URL (its commas are its own)
  } else {
    for (absl::string_view e : absl::StrSplit(redis, ',', absl::SkipEmpty())) {
      options.endpoints.emplace_back(e);
    }
  }
  options.username = absl::GetFlag(FLAGS_user);
  options.password = std::move(password);
  const int timeout_ms = static_cast<int>(
      std::min<uint32_t>(absl::GetFlag(FLAGS_timeout_ms), 1u << 30));
  options.connect_timeout_ms = timeout_ms;
  options.command_timeout_ms = timeout_ms;
  options.prefix_extractor = absl::GetFlag(FLAGS_extractor);
  return options;
}

// Asks the mirror about batches of keys, prints one answer line per key
// to stdout and counts the answers.
class KeyProber {
 public:
  // prefixes: the inputs are prefixes (MayContainPrefixMany).
  KeyProber(siftdb::RemoteFilter* filter, bool prefixes)
      : filter_(filter), prefixes_(prefixes) {}

  // Answers `keys` with one pipelined MayContainMany (or
  // MayContainPrefixMany).
  void AnswerBatch(const std::vector<std::string>& keys) {
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<bool> answers;
    absl::Status st = prefixes_ ? filter_->MayContainPrefixMany(views, &answers)
                                : filter_->MayContainMany(views, &answers);
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
  const bool prefixes_;
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
               "sift_probe: %llu %s: %llu maybe, %llu no; %llu batches, "
               "%llu round trips, %llu table filters fetched (%llu bytes); "
               "%.1f ms; mirror mode=%s complete_seq=%llu "
               "complete_unix_ms=%lld; status: %s\n",
               static_cast<unsigned long long>(total),
               absl::GetFlag(FLAGS_prefix) ? "prefixes" : "keys",
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
  namespace tools = siftdb::tools;
  tools::ToolFlagsSpec spec;
  spec.program = "sift_probe";
  spec.usage =
      "usage: sift_probe --redis=HOST:PORT[,HOST:PORT...]|URL --name=DB "
      "[--user=U] [--password_file=F] [--batch=N] "
      "[--prefix [--extractor=NAME]] "
      "[KEY...]\n"
      "  (no KEY: keys on stdin, one per line)\n"
      "  --prefix: the inputs are prefixes (outputs of the DB's prefix\n"
      "  extractor); \"no\" means no key of that prefix exists. --extractor\n"
      "  names the extractor (e.g. siftdb.FixedPrefix.4); only filters\n"
      "  holding its prefixes may then answer no.\n"
      "Exit status: 0 answers printed, 1 Redis unreachable or AUTH refused,\n"
      "2 bad command line.\n";
  spec.flag_sources = {"tools/sift_probe/"};
  int exit_code = 0;
  std::optional<tools::ToolArgs> args =
      tools::ParseToolFlags(spec, argc, argv, &exit_code);
  if (!args.has_value()) return exit_code;
  if (absl::GetFlag(FLAGS_redis).empty() || absl::GetFlag(FLAGS_name).empty()) {
    return tools::UsageError("sift_probe", "--redis and --name are required");
  }
  const uint64_t batch_size = absl::GetFlag(FLAGS_batch);
  if (batch_size == 0) {
    return tools::UsageError("sift_probe", "--batch must be at least 1");
  }
  if (!absl::GetFlag(FLAGS_prefix) && !absl::GetFlag(FLAGS_extractor).empty()) {
    return tools::UsageError("sift_probe", "--extractor needs --prefix");
  }

  std::optional<std::string> password = Password();
  if (!password.has_value()) {
    return tools::UsageError("sift_probe",
                             "cannot read the file --password_file names");
  }
  const siftdb::RemoteFilterReaderOptions options =
      ReaderOptions(std::move(*password));
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<siftdb::RemoteFilter>> filter =
      siftdb::RemoteFilter::Open(options, absl::GetFlag(FLAGS_name));
  if (!filter.ok() && absl::IsInvalidArgument(filter.status())) {
    // A malformed endpoint or URL (the message never quotes a password).
    return tools::UsageError("sift_probe",
                             std::string(filter.status().message()));
  }
  if (!filter.ok()) {
    std::fprintf(stderr, "sift_probe: %s\n",
                 filter.status().ToString().c_str());
    return 1;
  }

  KeyProber prober(filter->get(), absl::GetFlag(FLAGS_prefix));
  if (!args->positional.empty()) {
    prober.AnswerBatch(args->positional);
  } else {
    prober.AnswerStdin(batch_size);
  }
  std::fflush(stdout);

  if (!absl::GetFlag(FLAGS_quiet)) PrintSummary(prober, filter->get(), start);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
