// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// InfoLog: the DB's own LOG file (<dbname>/LOG), used when
// Options::info_log is null. Rotates by size: once the LOG passes
// max_log_file_size it is renamed to LOG.old.<micros> (wall-clock
// microseconds of the rotation) and a new LOG begins; at most
// keep_log_file_num LOG.old.* files are kept, the oldest going first.
//
// Thread safety: Log() may be called from many threads at once; lines are
// never interleaved, and a rotation happens between two lines.
// Ownership: the DB owns its InfoLog; the Env must outlive it.
// Errors: a failed rotation or deletion is logged in the LOG itself and
// otherwise ignored (the LOG is for people; it never fails the DB).

#ifndef SIFTDB_DB_INFO_LOG_H_
#define SIFTDB_DB_INFO_LOG_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "siftdb/env.h"
#include "util/mutex.h"

namespace siftdb {

class InfoLog final : public Logger {
 public:
  // Starts the LOG of a DB being opened: a LOG left by the previous
  // process becomes LOG.old.<micros> (never overwritten), old LOGs beyond
  // keep_old_files are deleted, and a new, empty LOG is created.
  // max_file_size 0: no size limit.
  static absl::StatusOr<std::unique_ptr<InfoLog>> Open(Env* env,
                                                       std::string dbname,
                                                       size_t max_file_size,
                                                       size_t keep_old_files);

  void Log(std::string_view message) override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  InfoLog(Env* env, std::string dbname, size_t max_file_size,
          size_t keep_old_files, std::unique_ptr<Logger> logger);

  // Renames LOG to LOG.old.<micros> and starts a new one; deletes the old
  // LOGs beyond keep_old_files_. Lines explaining what happened go into
  // the new LOG.
  void Rotate() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Env* const env_;
  const std::string dbname_;
  const size_t max_file_size_;
  const size_t keep_old_files_;

  Mutex mu_;
  std::unique_ptr<Logger> logger_ ABSL_GUARDED_BY(mu_);
  // Bytes in the current LOG, counting each line's timestamp and thread
  // prefix at its usual width (the Env's Logger adds them).
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

// Moves <dbname>/LOG aside as LOG.old.<micros>, with micros from the wall
// clock, made unique and later than every existing LOG.old.*. Sets
// *renamed_to to the new name (empty when there was no LOG).
absl::Status RenameInfoLogAside(Env* env, const std::string& dbname,
                                std::string* renamed_to);

// Deletes the oldest LOG.old.* (and a legacy LOG.old, counted the oldest)
// of dbname until at most keep remain. Each deletion, or failure, is one
// line in *report.
absl::Status PurgeOldInfoLogs(Env* env, const std::string& dbname, size_t keep,
                              std::vector<std::string>* report);

}  // namespace siftdb

#endif  // SIFTDB_DB_INFO_LOG_H_
