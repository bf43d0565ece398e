// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/ldb/commands.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "siftdb/comparator.h"
#include "tools/ldb/key_codec.h"
#include "util/crc32c.h"

namespace siftdb::ldb {

int Failed(std::string_view what, const absl::Status& s) {
  absl::FPrintF(stderr, "ldb: %s: %s\n", what, s.ToString());
  return kExitFailure;
}

int BadArg(const absl::Status& s) {
  absl::FPrintF(stderr, "ldb: %s\n", s.message());
  return kExitUsage;
}

absl::Status DecodeRange(const CommandArgs& a, std::string* from,
                         std::string* to) {
  absl::StatusOr<std::string> f = DecodeArg(a.from, a.key_hex, "--from");
  if (!f.ok()) return f.status();
  absl::StatusOr<std::string> t = DecodeArg(a.to, a.key_hex, "--to");
  if (!t.ok()) return t.status();
  *from = std::move(*f);
  *to = std::move(*t);
  return absl::OkStatus();
}

namespace {

int Get(DB* db, const CommandArgs& a) {
  absl::StatusOr<std::string> key = DecodeArg(a.args[0], a.key_hex, "key");
  if (!key.ok()) return BadArg(key.status());
  std::string value;
  absl::Status s = db->Get(ReadOptions(), *key, &value);
  if (absl::IsNotFound(s)) {
    absl::FPrintF(stderr, "ldb: key %s not found\n",
                  EncodeForOutput(*key, a.key_hex));
    return kExitFailure;
  }
  if (!s.ok()) return Failed("get", s);
  absl::PrintF("%s\n", EncodeForOutput(value, a.value_hex));
  return kExitOk;
}

int Put(DB* db, const CommandArgs& a) {
  absl::StatusOr<std::string> key = DecodeArg(a.args[0], a.key_hex, "key");
  if (!key.ok()) return BadArg(key.status());
  absl::StatusOr<std::string> value =
      DecodeArg(a.args[1], a.value_hex, "value");
  if (!value.ok()) return BadArg(value.status());
  WriteOptions wo;
  wo.sync = true;  // a tool's write should be durable when it says OK
  absl::Status s = db->Put(wo, *key, *value);
  if (!s.ok()) return Failed("put", s);
  absl::PrintF("OK\n");
  return kExitOk;
}

int Delete(DB* db, const CommandArgs& a) {
  absl::StatusOr<std::string> key = DecodeArg(a.args[0], a.key_hex, "key");
  if (!key.ok()) return BadArg(key.status());
  WriteOptions wo;
  wo.sync = true;
  absl::Status s = db->Delete(wo, *key);
  if (!s.ok()) return Failed("delete", s);
  absl::PrintF("OK\n");
  return kExitOk;
}

// scan and dump: the entries in [--from, --to) in order, at most
// --max_keys of them; with --count_only just "Keys in range: N".
int ScanRange(DB* db, const CommandArgs& a) {
  std::string from, to;
  absl::Status decoded = DecodeRange(a, &from, &to);
  if (!decoded.ok()) return BadArg(decoded);
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  const Comparator* cmp = BytewiseComparator();
  int64_t n = 0;
  for (it->Seek(from); it->Valid() && (a.max_keys < 0 || n < a.max_keys);
       it->Next()) {
    if (a.has_to && cmp->Compare(it->key(), to) >= 0) break;
    if (!a.count_only) {
      absl::PrintF("%s ==> %s\n", EncodeForOutput(it->key(), a.key_hex),
                   EncodeForOutput(it->value(), a.value_hex));
    }
    n++;
  }
  if (!it->status().ok()) return Failed("scan", it->status());
  if (a.count_only) absl::PrintF("Keys in range: %d\n", n);
  return kExitOk;
}

// The approximate bytes the files use for [--from, --to) (unset --to: to
// the end; flushed data only, as DB::GetApproximateSizes counts).
int ApproxSize(DB* db, const CommandArgs& a) {
  std::string from, to;
  absl::Status decoded = DecodeRange(a, &from, &to);
  if (!decoded.ok()) return BadArg(decoded);
  if (!a.has_to) to.assign(64, '\xff');  // past every practical key
  const Range range{from, to};
  uint64_t size = 0;
  db->GetApproximateSizes(&range, 1, &size);
  absl::PrintF("%d\n", size);
  return kExitOk;
}

int Compact(DB* db, const CommandArgs& a) {
  absl::Status s = db->CompactRange(nullptr, nullptr);
  if (!s.ok()) return Failed("compact", s);
  absl::PrintF("OK\n");
  return kExitOk;
}

int PrintProperty(DB* db, const char* name) {
  std::string value;
  if (!db->GetProperty(name, &value)) {
    absl::FPrintF(stderr, "ldb: the DB has no property %s\n", name);
    return kExitFailure;
  }
  absl::PrintF("%s", value);
  if (value.empty() || value.back() != '\n') absl::PrintF("\n");
  return kExitOk;
}

int Stats(DB* db, const CommandArgs&) {
  return PrintProperty(db, "siftdb.stats");
}

int SSTables(DB* db, const CommandArgs&) {
  return PrintProperty(db, "siftdb.sstables");
}

// One pass of checkconsistency: walks every entry forward or backward,
// checking the order and that Get agrees with the iterator.
struct Pass {
  int64_t count = 0;
  // Order-independent digest of the entries, so both passes can be
  // compared without holding the keys in memory.
  uint64_t digest = 0;
  int64_t problems = 0;
};

constexpr int64_t kMaxReported = 20;

void Report(Pass* pass, const std::string& message) {
  if (pass->problems++ < kMaxReported) {
    absl::FPrintF(stderr, "ldb: checkconsistency: %s\n", message);
  }
}

Pass Walk(DB* db, bool forward) {
  Pass pass;
  ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::unique_ptr<Iterator> it = db->NewIterator(ro);
  const Comparator* cmp = BytewiseComparator();
  const char* dir = forward ? "forward" : "backward";
  std::string prev, got;
  if (forward) {
    it->SeekToFirst();
  } else {
    it->SeekToLast();
  }
  for (; it->Valid(); forward ? it->Next() : it->Prev()) {
    const std::string_view key = it->key();
    const std::string_view value = it->value();
    if (pass.count > 0) {
      const int c = cmp->Compare(prev, key);
      if (forward ? c >= 0 : c <= 0) {
        Report(&pass, absl::StrFormat("%s pass: key %s after %s is out of "
                                      "order",
                                      dir, EncodeForOutput(key, false),
                                      EncodeForOutput(prev, false)));
      }
    }
    absl::Status s = db->Get(ro, key, &got);
    if (!s.ok()) {
      Report(&pass, absl::StrFormat("%s pass: Get(%s) failed: %s", dir,
                                    EncodeForOutput(key, false), s.ToString()));
    } else if (got != value) {
      Report(&pass,
             absl::StrFormat(
                 "%s pass: Get(%s) returned %d bytes, the iterator %d", dir,
                 EncodeForOutput(key, false), got.size(), value.size()));
    }
    uint32_t h = crc32c::Value(key.data(), key.size());
    const char sep = 0;
    h = crc32c::Extend(h, &sep, 1);
    h = crc32c::Extend(h, value.data(), value.size());
    pass.digest += uint64_t{h} * 0x9e3779b97f4a7c15ull + key.size();
    prev.assign(key.data(), key.size());
    pass.count++;
  }
  if (!it->status().ok()) {
    Report(&pass, absl::StrFormat("%s pass: iterator error: %s", dir,
                                  it->status().ToString()));
  }
  return pass;
}

int CheckConsistency(DB* db, const CommandArgs&) {
  const Pass fwd = Walk(db, /*forward=*/true);
  const Pass bwd = Walk(db, /*forward=*/false);
  int64_t problems = fwd.problems + bwd.problems;
  if (fwd.count != bwd.count || fwd.digest != bwd.digest) {
    absl::FPrintF(stderr,
                  "ldb: checkconsistency: the forward pass saw %d entries, "
                  "the backward pass %d%s\n",
                  fwd.count, bwd.count,
                  fwd.count == bwd.count ? " with different contents" : "");
    problems++;
  }
  if (problems > 0) {
    absl::PrintF("inconsistent: %d problems in %d entries\n", problems,
                 fwd.count);
    return kExitFailure;
  }
  absl::PrintF("consistent: %d entries\n", fwd.count);
  return kExitOk;
}

int Checkpoint(DB* db, const CommandArgs& a) {
  if (a.checkpoint_dir.empty()) {
    return BadArg(absl::InvalidArgumentError(
        "checkpoint needs --checkpoint_dir=DIR (a directory that does not "
        "exist yet)"));
  }
  absl::Status s = db->CreateCheckpoint(a.checkpoint_dir);
  if (!s.ok()) return Failed("checkpoint", s);
  absl::PrintF("OK: checkpoint in %s\n", a.checkpoint_dir);
  return kExitOk;
}

// Writes RepairDB's summary lines to stderr.
class StderrLogger final : public Logger {
 public:
  void Log(std::string_view message) override {
    absl::FPrintF(stderr, "%s%s", message,
                  !message.empty() && message.back() == '\n' ? "" : "\n");
  }
};

int Repair(DB*, const CommandArgs& a) {
  StderrLogger log;
  Options options;
  options.info_log = &log;
  absl::Status s = RepairDB(a.db_path, options);
  if (!s.ok()) return Failed("repair", s);
  absl::PrintF("OK\n");
  return kExitOk;
}

}  // namespace

const std::vector<Command>& Commands() {
  static const auto* const commands = new std::vector<Command>{
      {"get", "KEY", 1, OpenMode::kReadOnly, false, &Get},
      {"put", "KEY VALUE", 2, OpenMode::kReadWrite, false, &Put},
      {"delete", "KEY", 1, OpenMode::kReadWrite, false, &Delete},
      {"scan", "[--from=KEY] [--to=KEY] [--max_keys=N] [--count_only]", 0,
       OpenMode::kReadOnly, false, &ScanRange},
      {"dump", "[--from=KEY] [--to=KEY] [--max_keys=N] [--count_only]", 0,
       OpenMode::kReadOnly, false, &ScanRange},
      {"idump",
       "[--from=KEY] [--to=KEY] [--max_keys=N] [--count_only]: internal "
       "keys",
       0, OpenMode::kClosed, false, &InternalDump},
      {"approxsize", "[--from=KEY] [--to=KEY]", 0, OpenMode::kReadOnly, false,
       &ApproxSize},
      {"manifest_dump", "[--path=MANIFEST]", 0, OpenMode::kClosed, false,
       &ManifestDump},
      {"list_live_files_metadata", "", 0, OpenMode::kClosed, false,
       &ListLiveFilesMetadata},
      {"compact", "", 0, OpenMode::kReadWrite, false, &Compact},
      {"repair", "", 0, OpenMode::kClosed, false, &Repair},
      {"checkpoint", "--checkpoint_dir=DIR", 0, OpenMode::kReadWrite, false,
       &Checkpoint},
      {"stats", "", 0, OpenMode::kReadOnly, false, &Stats},
      {"checkconsistency", "", 0, OpenMode::kReadOnly, true, &CheckConsistency},
      {"sstables", "", 0, OpenMode::kReadOnly, false, &SSTables},
  };
  return *commands;
}

const Command* FindCommand(const std::string& name) {
  for (const Command& c : Commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

}  // namespace siftdb::ldb
