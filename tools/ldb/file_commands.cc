// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The ldb commands that read the DB's files themselves instead of opening
// it (the public API does not reach what they show): manifest_dump (the
// MANIFEST's edits), list_live_files_metadata (the current version's
// tables) and idump (internal entries: every live table and the logs not
// yet flushed, merged in internal-key order). They write nothing and take
// no lock.

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "db/memtable.h"
#include "db/table_cache.h"
#include "db/version.h"
#include "db/version_edit.h"
#include "db/version_set.h"
#include "db/write_batch_internal.h"
#include "siftdb/comparator.h"
#include "siftdb/env.h"
#include "table/merging_iterator.h"
#include "table/table.h"
#include "tools/ldb/commands.h"
#include "tools/ldb/key_codec.h"
#include "wal/log_reader.h"

namespace siftdb::ldb {
namespace {

// Counts and reports damage a log::Reader skips.
class StderrReporter final : public log::Reader::Reporter {
 public:
  explicit StderrReporter(std::string file) : file_(std::move(file)) {}
  void Corruption(size_t bytes_dropped, absl::Status status) override {
    absl::FPrintF(stderr, "ldb: %s: %d bytes dropped: %s\n", file_,
                  bytes_dropped, status.ToString());
    if (first_.ok()) first_ = status;
  }
  const absl::Status& first() const { return first_; }

 private:
  const std::string file_;
  absl::Status first_;
};

// The DB's current version, recovered from its MANIFEST read-only (the
// MANIFEST is read, never written).
struct Recovered {
  Options options;
  InternalKeyComparator icmp{BytewiseComparator()};
  std::unique_ptr<TableCache> cache;
  std::unique_ptr<VersionSet> versions;  // destroyed before cache
};

absl::StatusOr<std::unique_ptr<Recovered>> Recover(const std::string& db) {
  auto r = std::make_unique<Recovered>();
  r->options.env = Env::Default();
  r->options.comparator = BytewiseComparator();
  r->cache = std::make_unique<TableCache>(db, r->options.env, TableOptions(),
                                          /*entries=*/64);
  r->versions =
      std::make_unique<VersionSet>(db, &r->options, r->cache.get(), &r->icmp);
  bool save_manifest = false;
  absl::Status s = r->versions->Recover(&save_manifest);
  if (!s.ok()) return s;
  return r;
}

std::string UserKey(std::string_view internal_key, bool hex) {
  ParsedInternalKey parsed;
  if (!ParseInternalKey(internal_key, &parsed)) {
    return "(bad internal key " + EncodeForOutput(internal_key, true) + ")";
  }
  return EncodeForOutput(parsed.user_key, hex);
}

// The path of the MANIFEST CURRENT names.
absl::StatusOr<std::string> CurrentManifest(const std::string& db) {
  absl::StatusOr<std::string> current =
      ReadFileToString(Env::Default(), CurrentFileName(db));
  if (!current.ok()) return current.status();
  std::string name = *current;
  if (!name.empty() && name.back() == '\n') name.pop_back();
  uint64_t number = 0;
  FileType type;
  if (!ParseFileName(name, &number, &type) ||
      type != FileType::kDescriptorFile) {
    return absl::DataLossError(absl::StrFormat(
        "%s names '%s', which is not a MANIFEST", CurrentFileName(db), name));
  }
  return db + "/" + name;
}

// Inserts the batches of log `number` into *mem.
absl::Status ReplayLog(const std::string& db, uint64_t number, MemTable* mem) {
  const std::string name = LogFileName(db, number);
  auto file = Env::Default()->NewSequentialFile(name);
  if (!file.ok()) return file.status();
  StderrReporter reporter(name);
  log::Reader reader(file->get(), &reporter, /*checksum=*/true, 0);
  std::string_view record;
  std::string scratch;
  WriteBatch batch;
  while (reader.ReadRecord(&record, &scratch)) {
    absl::Status s = WriteBatchInternal::SetContents(&batch, record);
    if (s.ok()) s = WriteBatchInternal::InsertInto(&batch, mem);
    if (!s.ok()) {
      return absl::DataLossError(absl::StrFormat(
          "%s: a record is not a write batch: %s", name, s.message()));
    }
  }
  return absl::OkStatus();
}

// The logs recovery would replay: number >= the version's log number, or
// its previous log number.
absl::StatusOr<std::vector<uint64_t>> LiveLogs(const std::string& db,
                                               const VersionSet& versions) {
  auto children = Env::Default()->GetChildren(db);
  if (!children.ok()) return children.status();
  std::vector<uint64_t> logs;
  for (const std::string& child : *children) {
    uint64_t number = 0;
    FileType type;
    if (ParseFileName(child, &number, &type) && type == FileType::kLogFile &&
        (number >= versions.LogNumber() ||
         number == versions.PrevLogNumber())) {
      logs.push_back(number);
    }
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

// Prints the internal entries of `it` in [from, to) per the flags.
int PrintInternal(Iterator* it, const CommandArgs& a, const std::string& from,
                  const std::string& to) {
  std::string target;
  AppendInternalKey(&target, from, kMaxSequenceNumber, kValueTypeForSeek);
  const Comparator* ucmp = BytewiseComparator();
  int64_t n = 0;
  for (it->Seek(target); it->Valid() && (a.max_keys < 0 || n < a.max_keys);
       it->Next()) {
    ParsedInternalKey parsed;
    if (!ParseInternalKey(it->key(), &parsed)) {
      return Failed("idump", absl::DataLossError(absl::StrFormat(
                                 "malformed internal key %s",
                                 EncodeForOutput(it->key(), true))));
    }
    if (a.has_to && ucmp->Compare(parsed.user_key, to) >= 0) break;
    n++;
    if (a.count_only) continue;
    if (parsed.type == kTypeDeletion) {
      absl::PrintF("%s @ %d : del\n",
                   EncodeForOutput(parsed.user_key, a.key_hex),
                   parsed.sequence);
    } else {
      absl::PrintF("%s @ %d : put ==> %s\n",
                   EncodeForOutput(parsed.user_key, a.key_hex), parsed.sequence,
                   EncodeForOutput(it->value(), a.value_hex));
    }
  }
  if (!it->status().ok()) return Failed("idump", it->status());
  if (a.count_only) absl::PrintF("Internal keys in range: %d\n", n);
  return kExitOk;
}

}  // namespace

int ManifestDump(DB*, const CommandArgs& a) {
  std::string path = a.manifest_path;
  if (path.empty()) {
    absl::StatusOr<std::string> current = CurrentManifest(a.db_path);
    if (!current.ok()) return Failed("manifest_dump", current.status());
    path = *current;
  }
  auto file = Env::Default()->NewSequentialFile(path);
  if (!file.ok()) return Failed("manifest_dump", file.status());
  absl::PrintF("%s\n", path);
  StderrReporter reporter(path);
  log::Reader reader(file->get(), &reporter, /*checksum=*/true, 0);
  std::string_view record;
  std::string scratch;
  int edits = 0;
  while (reader.ReadRecord(&record, &scratch)) {
    VersionEdit edit;
    absl::Status s = edit.DecodeFrom(record);
    if (!s.ok()) {
      return Failed("manifest_dump",
                    absl::DataLossError(absl::StrFormat(
                        "%s: edit %d: %s", path, edits + 1, s.message())));
    }
    absl::PrintF("edit %d: %s", ++edits, edit.DebugString());
  }
  absl::PrintF("%d edits\n", edits);
  if (!reporter.first().ok()) return kExitFailure;
  if (!a.manifest_path.empty()) return kExitOk;
  auto recovered = Recover(a.db_path);
  if (!recovered.ok()) return Failed("manifest_dump", recovered.status());
  const VersionSet& v = *(*recovered)->versions;
  absl::PrintF(
      "current version: log number %d, previous log %d, last sequence %d\n"
      "%s",
      v.LogNumber(), v.PrevLogNumber(), v.LastSequence(),
      v.current()->DebugString());
  return kExitOk;
}

int ListLiveFilesMetadata(DB*, const CommandArgs& a) {
  auto recovered = Recover(a.db_path);
  if (!recovered.ok()) {
    return Failed("list_live_files_metadata", recovered.status());
  }
  const Version& v = *(*recovered)->versions->current();
  bool failed = false;
  for (int level = 0; level < kNumLevels; level++) {
    for (const FileMetaData* f : v.files(level)) {
      // The compression the table was written with (its
      // siftdb.compression property), or why it cannot be read.
      std::string compression;
      absl::Status s =
          (*recovered)
              ->cache->WithTable(
                  f->number, f->file_size, [&compression](const Table& t) {
                    compression = t.properties().compression_name;
                  });
      if (!s.ok()) {
        absl::FPrintF(stderr, "ldb: list_live_files_metadata: %s\n",
                      s.ToString());
        compression = "unreadable";
        failed = true;
      }
      absl::PrintF(
          "%06d.sst level %d, %d bytes, smallest %s, largest %s, "
          "compression %s\n",
          f->number, level, f->file_size, UserKey(f->smallest, a.key_hex),
          UserKey(f->largest, a.key_hex), compression);
    }
  }
  return failed ? kExitFailure : kExitOk;
}

int InternalDump(DB*, const CommandArgs& a) {
  std::string from, to;
  absl::Status decoded = DecodeRange(a, &from, &to);
  if (!decoded.ok()) return BadArg(decoded);
  auto recovered = Recover(a.db_path);
  if (!recovered.ok()) return Failed("idump", recovered.status());
  Recovered& r = **recovered;
  auto logs = LiveLogs(a.db_path, *r.versions);
  if (!logs.ok()) return Failed("idump", logs.status());
  MemTable* mem = new MemTable(r.icmp);
  mem->Ref();
  int result = kExitOk;
  for (uint64_t number : *logs) {
    absl::Status s = ReplayLog(a.db_path, number, mem);
    if (!s.ok()) result = Failed("idump", s);
  }
  if (result == kExitOk) {
    std::vector<std::unique_ptr<Iterator>> children;
    children.push_back(mem->NewIterator());
    ReadOptions ro;
    ro.verify_checksums = true;
    ro.fill_cache = false;
    const Version& v = *r.versions->current();
    for (int level = 0; level < kNumLevels; level++) {
      for (const FileMetaData* f : v.files(level)) {
        children.push_back(r.cache->NewIterator(ro, f->number, f->file_size));
      }
    }
    std::unique_ptr<Iterator> it =
        NewMergingIterator(&r.icmp, std::move(children));
    result = PrintInternal(it.get(), a, from, to);
  }
  mem->Unref();
  return result;
}

}  // namespace siftdb::ldb
