// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/info_log.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/filename.h"

namespace siftdb {
namespace {

// "YYYY/MM/DD-HH:MM:SS.uuuuuu <thread id> " and the newline, as the
// POSIX Logger writes them (the thread id is usually 12 hex digits).
constexpr uint64_t kLinePrefixBytes = 41;

uint64_t WallClockMicros() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
}

// The old LOGs of dbname, oldest first, as (micros, file name).
absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>> ListOldInfoLogs(
    Env* env, const std::string& dbname) {
  auto children = env->GetChildren(dbname);
  if (!children.ok()) return children.status();
  std::vector<std::pair<uint64_t, std::string>> old;
  for (const std::string& name : *children) {
    uint64_t micros;
    if (ParseOldInfoLogName(name, &micros)) old.emplace_back(micros, name);
  }
  std::sort(old.begin(), old.end());
  return old;
}

}  // namespace

absl::Status RenameInfoLogAside(Env* env, const std::string& dbname,
                                std::string* renamed_to) {
  renamed_to->clear();
  const std::string log = InfoLogFileName(dbname);
  if (!env->FileExists(log)) return absl::OkStatus();
  auto old = ListOldInfoLogs(env, dbname);
  if (!old.ok()) return old.status();
  // Later than every existing one, so that "oldest" stays "smallest" even
  // when the wall clock stepped back.
  uint64_t micros = WallClockMicros();
  if (!old->empty() && micros <= old->back().first) {
    micros = old->back().first + 1;
  }
  const std::string target = OldInfoLogFileName(dbname, micros);
  absl::Status s = env->RenameFile(log, target);
  if (s.ok()) *renamed_to = target;
  return s;
}

absl::Status PurgeOldInfoLogs(Env* env, const std::string& dbname, size_t keep,
                              std::vector<std::string>* report) {
  auto old = ListOldInfoLogs(env, dbname);
  if (!old.ok()) return old.status();
  absl::Status result;
  const size_t excess = old->size() > keep ? old->size() - keep : 0;
  for (size_t i = 0; i < excess; i++) {
    const std::string fname = dbname + "/" + (*old)[i].second;
    absl::Status s = env->RemoveFile(fname);
    if (s.ok()) {
      report->push_back(absl::StrFormat(
          "deleted old info log %s (keep_log_file_num %d)", fname, keep));
    } else {
      report->push_back(absl::StrFormat("failed to delete old info log %s: %s",
                                        fname, s.ToString()));
      if (result.ok()) result = s;
    }
  }
  return result;
}

absl::StatusOr<std::unique_ptr<InfoLog>> InfoLog::Open(Env* env,
                                                       std::string dbname,
                                                       size_t max_file_size,
                                                       size_t keep_old_files) {
  std::string renamed_to;
  // Failing to keep the previous LOG loses no data: go on, and say so.
  const absl::Status renamed = RenameInfoLogAside(env, dbname, &renamed_to);
  std::vector<std::string> report;
  const absl::Status purged =
      PurgeOldInfoLogs(env, dbname, keep_old_files, &report);
  auto logger = env->NewLogger(InfoLogFileName(dbname));
  if (!logger.ok()) return logger.status();
  std::unique_ptr<InfoLog> log(new InfoLog(env, std::move(dbname),
                                           max_file_size, keep_old_files,
                                           std::move(*logger)));
  if (!renamed.ok()) {
    log->Log("failed to keep the previous LOG: " + renamed.ToString());
  } else if (!renamed_to.empty()) {
    log->Log("previous LOG kept as " + renamed_to);
  }
  for (const std::string& line : report) log->Log(line);
  if (!purged.ok()) log->Log("listing old info logs: " + purged.ToString());
  return log;
}

InfoLog::InfoLog(Env* env, std::string dbname, size_t max_file_size,
                 size_t keep_old_files, std::unique_ptr<Logger> logger)
    : env_(env),
      dbname_(std::move(dbname)),
      max_file_size_(max_file_size),
      keep_old_files_(keep_old_files),
      logger_(std::move(logger)) {}

void InfoLog::Log(std::string_view message) {
  MutexLock l(&mu_);
  logger_->Log(message);
  bytes_ += message.size() + kLinePrefixBytes;
  if (max_file_size_ > 0 && bytes_ >= max_file_size_) Rotate();
}

void InfoLog::Rotate() {
  const uint64_t full = bytes_;
  bytes_ = 0;  // a failed rotation is retried only after another full LOG
  std::string renamed_to;
  absl::Status s = RenameInfoLogAside(env_, dbname_, &renamed_to);
  if (!s.ok()) {
    logger_->Log("LOG rotation failed: " + s.ToString());
    return;
  }
  auto fresh = env_->NewLogger(InfoLogFileName(dbname_));
  if (!fresh.ok()) {
    // Keep writing to the renamed file rather than lose lines.
    logger_->Log("LOG rotation: starting a new LOG failed: " +
                 fresh.status().ToString());
    return;
  }
  logger_ = std::move(*fresh);
  std::vector<std::string> report;
  s = PurgeOldInfoLogs(env_, dbname_, keep_old_files_, &report);
  std::vector<std::string> lines;
  lines.push_back(absl::StrFormat(
      "LOG rotated: previous LOG (about %d bytes, max_log_file_size %d) is %s",
      full, max_file_size_, renamed_to));
  lines.insert(lines.end(), report.begin(), report.end());
  if (!s.ok()) lines.push_back("listing old info logs: " + s.ToString());
  for (const std::string& line : lines) {
    logger_->Log(line);
    bytes_ += line.size() + kLinePrefixBytes;
  }
}

}  // namespace siftdb
