// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/mirror/mirror_history.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "util/crc32c.h"

namespace siftdb {

namespace {

// Persisted: the first line of format 1. Never change.
constexpr std::string_view kMagic = "siftdb-mirror-history 1";
// A record is a few hundred bytes; anything larger is not one.
constexpr uint64_t kMaxRecordBytes = 4096;
constexpr size_t kMaxReplidChars = 64;

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError("mirror history record: " + what);
}

// "<field> <value>": sets *value; false when the line is another field.
bool TakeField(std::string_view line, std::string_view field,
               std::string_view* value) {
  if (line.size() < field.size() + 1 || line.substr(0, field.size()) != field ||
      line[field.size()] != ' ') {
    return false;
  }
  *value = line.substr(field.size() + 1);
  return true;
}

}  // namespace

std::string EncodeMirrorHistory(const MirrorHistory& h) {
  std::string body = std::string(kMagic) + "\nname " +
                     absl::BytesToHexString(h.mirror_name) + "\nreplid " +
                     (h.replid.empty() ? "-" : h.replid) + "\nsettled " +
                     (h.settled ? "1" : "0") + "\n";
  const uint32_t crc = crc32c::Value(body.data(), body.size());
  absl::StrAppendFormat(&body, "crc32c %08x\n", crc);
  return body;
}

absl::StatusOr<MirrorHistory> DecodeMirrorHistory(std::string_view bytes) {
  if (bytes.size() > kMaxRecordBytes) {
    return Bad(absl::StrFormat("%d bytes, more than a record holds (%d)",
                               bytes.size(), kMaxRecordBytes));
  }
  if (bytes.empty() || bytes.back() != '\n') return Bad("no final newline");
  std::vector<std::string_view> lines;
  std::string_view rest = bytes.substr(0, bytes.size() - 1);
  while (true) {
    const size_t nl = rest.find('\n');
    lines.push_back(rest.substr(0, nl));
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  if (lines.size() != 5) {
    return Bad(absl::StrFormat("%d lines, expected 5", lines.size()));
  }
  std::string_view crc_hex;
  if (!TakeField(lines[4], "crc32c", &crc_hex) || crc_hex.size() != 8 ||
      !IsLowerHex(crc_hex)) {
    return Bad("the last line is not \"crc32c <8 hex digits>\"");
  }
  uint32_t stored = 0;
  if (!absl::SimpleHexAtoi(absl::string_view(crc_hex.data(), crc_hex.size()),
                           &stored)) {
    return Bad("bad crc32c");
  }
  const size_t body_size = bytes.size() - lines[4].size() - 1;
  const uint32_t actual = crc32c::Value(bytes.data(), body_size);
  if (stored != actual) {
    return Bad(absl::StrFormat("crc32c mismatch (stored %08x, computed %08x)",
                               stored, actual));
  }
  if (lines[0] != kMagic) {
    return Bad(
        "first line is not \"siftdb-mirror-history 1\" (a later "
        "format?)");
  }
  MirrorHistory h;
  std::string_view name_hex, replid, settled;
  if (!TakeField(lines[1], "name", &name_hex)) {
    return Bad("line 2 is not \"name <hex>\"");
  }
  if (name_hex.size() % 2 != 0 || !IsLowerHex(name_hex)) {
    return Bad("the mirror name is not lowercase hex of even length");
  }
  h.mirror_name = absl::HexStringToBytes(
      absl::string_view(name_hex.data(), name_hex.size()));
  if (!TakeField(lines[2], "replid", &replid) || replid.empty() ||
      replid.size() > kMaxReplidChars ||
      (replid != "-" && !IsLowerHex(replid))) {
    return Bad("line 3 is not \"replid <hex or ->\"");
  }
  if (replid != "-") h.replid = std::string(replid);
  if (!TakeField(lines[3], "settled", &settled) ||
      (settled != "0" && settled != "1")) {
    return Bad("line 4 is not \"settled <0|1>\"");
  }
  h.settled = settled == "1";
  return h;
}

absl::StatusOr<MirrorHistory> ReadMirrorHistory(Env* env,
                                                const std::string& dbname) {
  const std::string fname = MirrorHistoryFileName(dbname);
  if (!env->FileExists(fname)) {
    return absl::NotFoundError(fname + ": does not exist");
  }
  absl::StatusOr<uint64_t> size = env->GetFileSize(fname);
  if (!size.ok()) return size.status();
  if (*size > kMaxRecordBytes) {
    return absl::DataLossError(
        absl::StrFormat("%s: %d bytes, more than a record holds (%d)", fname,
                        *size, kMaxRecordBytes));
  }
  absl::StatusOr<std::string> bytes = ReadFileToString(env, fname);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<MirrorHistory> h = DecodeMirrorHistory(*bytes);
  if (!h.ok()) {
    return absl::DataLossError(absl::StrCat(fname, ": ", h.status().message()));
  }
  return h;
}

absl::Status WriteMirrorHistory(Env* env, const std::string& dbname,
                                const MirrorHistory& h) {
  const std::string fname = MirrorHistoryFileName(dbname);
  const std::string tmp = MirrorHistoryTempFileName(dbname);
  absl::Status s =
      WriteStringToFile(env, EncodeMirrorHistory(h), tmp, /*sync=*/true);
  if (s.ok()) s = env->RenameFile(tmp, fname);
  if (s.ok()) s = env->SyncDir(dbname);
  if (!s.ok()) env->RemoveFile(tmp).IgnoreError();
  return s;
}

}  // namespace siftdb
