// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Names of the files in a database directory:
//   CURRENT            name of the live MANIFEST, one line
//   LOCK               flock'ed while the DB is open
//   LOG                human-readable info log
//   LOG.old.<micros>   a rotated LOG (LOG.old: from earlier versions)
//   MANIFEST-NNNNNN    version edits (WAL record format)
//   NNNNNN.log         write-ahead log
//   NNNNNN.sst         table
//   NNNNNN.dbtmp       temporary file (CURRENT replacement)
// Numbers are decimal, zero-padded to at least 6 digits. Persisted: the
// naming scheme never changes.

#ifndef SIFTDB_DB_FILENAME_H_
#define SIFTDB_DB_FILENAME_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace siftdb {

class Env;

enum class FileType {
  kLogFile,
  kDBLockFile,
  kTableFile,
  kDescriptorFile,
  kCurrentFile,
  kTempFile,
  kInfoLogFile,
  kMirrorHistoryFile,  // MIRROR-HISTORY and its temp file
};

std::string LogFileName(const std::string& dbname, uint64_t number);
std::string TableFileName(const std::string& dbname, uint64_t number);
std::string DescriptorFileName(const std::string& dbname, uint64_t number);
std::string CurrentFileName(const std::string& dbname);
std::string LockFileName(const std::string& dbname);
std::string TempFileName(const std::string& dbname, uint64_t number);
std::string InfoLogFileName(const std::string& dbname);
// The Redis mirror's record of its last lease (db/mirror/mirror_history.h),
// and the temp file it is written through.
std::string MirrorHistoryFileName(const std::string& dbname);
std::string MirrorHistoryTempFileName(const std::string& dbname);
std::string OldInfoLogFileName(const std::string& dbname);
// A LOG rotated at `micros` (wall clock): "<dbname>/LOG.old.<micros>".
std::string OldInfoLogFileName(const std::string& dbname, uint64_t micros);
// True for "LOG.old.<micros>" (setting *micros) and for the legacy
// "LOG.old" (*micros = 0: older than any rotated LOG).
bool ParseOldInfoLogName(std::string_view name, uint64_t* micros);
// The directory holding `path` ("." for a bare name, "/" for "/x");
// trailing slashes of `path` are ignored.
std::string ParentDirectory(const std::string& path);

// The largest file number siftdb ever gives a file. A numbered name above
// it (a stray "18446744073709551615.log") is not one of ours: counting it
// in would wrap the file-number counter.
inline constexpr uint64_t kMaxFileNumber = uint64_t{1} << 62;

// Parses a file name (not a path). False for names siftdb does not own,
// including numbered names above kMaxFileNumber.
bool ParseFileName(std::string_view filename, uint64_t* number, FileType* type);

// Makes CURRENT name MANIFEST-<descriptor_number>: writes a temp file,
// syncs it, renames it over CURRENT and syncs the directory.
absl::Status SetCurrentFile(Env* env, const std::string& dbname,
                            uint64_t descriptor_number);

}  // namespace siftdb

#endif  // SIFTDB_DB_FILENAME_H_
