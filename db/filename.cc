// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/filename.h"

#include "absl/strings/str_format.h"
#include "siftdb/env.h"

namespace siftdb {
namespace {

std::string NumberedName(const std::string& dbname, uint64_t number,
                         const char* suffix) {
  return absl::StrFormat("%s/%06d.%s", dbname, number, suffix);
}

// Consumes a decimal number from the front of *in; false on overflow or
// when no digit is present.
bool ConsumeNumber(std::string_view* in, uint64_t* value) {
  uint64_t v = 0;
  size_t digits = 0;
  while (digits < in->size() && (*in)[digits] >= '0' && (*in)[digits] <= '9') {
    const uint64_t d = (*in)[digits] - '0';
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
    digits++;
  }
  if (digits == 0) return false;
  in->remove_prefix(digits);
  *value = v;
  return true;
}

}  // namespace

std::string LogFileName(const std::string& dbname, uint64_t number) {
  return NumberedName(dbname, number, "log");
}

std::string TableFileName(const std::string& dbname, uint64_t number) {
  return NumberedName(dbname, number, "sst");
}

std::string DescriptorFileName(const std::string& dbname, uint64_t number) {
  return absl::StrFormat("%s/MANIFEST-%06d", dbname, number);
}

std::string CurrentFileName(const std::string& dbname) {
  return dbname + "/CURRENT";
}

std::string MirrorHistoryFileName(const std::string& dbname) {
  return dbname + "/MIRROR-HISTORY";
}

std::string MirrorHistoryTempFileName(const std::string& dbname) {
  return dbname + "/MIRROR-HISTORY.dbtmp";
}

std::string LockFileName(const std::string& dbname) { return dbname + "/LOCK"; }

std::string TempFileName(const std::string& dbname, uint64_t number) {
  return NumberedName(dbname, number, "dbtmp");
}

std::string InfoLogFileName(const std::string& dbname) {
  return dbname + "/LOG";
}

std::string OldInfoLogFileName(const std::string& dbname) {
  return dbname + "/LOG.old";
}

std::string OldInfoLogFileName(const std::string& dbname, uint64_t micros) {
  return absl::StrFormat("%s/LOG.old.%d", dbname, micros);
}

bool ParseOldInfoLogName(std::string_view name, uint64_t* micros) {
  if (name == "LOG.old") {
    *micros = 0;  // the single old LOG of earlier versions: the oldest
    return true;
  }
  constexpr std::string_view kPrefix = "LOG.old.";
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  name.remove_prefix(kPrefix.size());
  uint64_t num;
  if (name.empty() || !ConsumeNumber(&name, &num) || !name.empty()) {
    return false;
  }
  *micros = num;
  return true;
}

std::string ParentDirectory(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

bool ParseFileName(std::string_view name, uint64_t* number, FileType* type) {
  if (name == "CURRENT") {
    *number = 0;
    *type = FileType::kCurrentFile;
    return true;
  }
  if (name == "MIRROR-HISTORY" || name == "MIRROR-HISTORY.dbtmp") {
    *number = 0;
    *type = FileType::kMirrorHistoryFile;
    return true;
  }
  if (name == "LOCK") {
    *number = 0;
    *type = FileType::kDBLockFile;
    return true;
  }
  uint64_t micros;
  if (name == "LOG" || ParseOldInfoLogName(name, &micros)) {
    *number = 0;  // the rotation time is no file number
    *type = FileType::kInfoLogFile;
    return true;
  }
  if (name.substr(0, 9) == "MANIFEST-") {
    name.remove_prefix(9);
    uint64_t num;
    if (!ConsumeNumber(&name, &num) || !name.empty() || num > kMaxFileNumber) {
      return false;
    }
    *number = num;
    *type = FileType::kDescriptorFile;
    return true;
  }
  uint64_t num;
  if (!ConsumeNumber(&name, &num) || num > kMaxFileNumber) return false;
  if (name == ".log") {
    *type = FileType::kLogFile;
  } else if (name == ".sst") {
    *type = FileType::kTableFile;
  } else if (name == ".dbtmp") {
    *type = FileType::kTempFile;
  } else {
    return false;
  }
  *number = num;
  return true;
}

absl::Status SetCurrentFile(Env* env, const std::string& dbname,
                            uint64_t descriptor_number) {
  const std::string manifest = DescriptorFileName(dbname, descriptor_number);
  // CURRENT holds the manifest's name relative to the directory.
  std::string contents = manifest.substr(dbname.size() + 1) + "\n";
  const std::string tmp = TempFileName(dbname, descriptor_number);
  absl::Status s = WriteStringToFile(env, contents, tmp, /*sync=*/true);
  if (s.ok()) s = env->RenameFile(tmp, CurrentFileName(dbname));
  if (s.ok()) s = env->SyncDir(dbname);
  if (!s.ok()) env->RemoveFile(tmp).IgnoreError();
  return s;
}

}  // namespace siftdb
