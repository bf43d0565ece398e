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
namespace {

int Failed(std::string_view what, const absl::Status& s) {
  absl::FPrintF(stderr, "ldb: %s: %s\n", what, s.ToString());
  return kExitFailure;
}

int BadArg(const absl::Status& s) {
  absl::FPrintF(stderr, "ldb: %s\n", s.message());
  return kExitUsage;
}

void PrintEntry(std::string_view key, std::string_view value, bool hex) {
  absl::PrintF("%s ==> %s\n", EncodeForOutput(key, hex),
               EncodeForOutput(value, hex));
}

int Get(DB* db, const CommandArgs& a) {
  absl::StatusOr<std::string> key = DecodeArg(a.args[0], a.hex, "key");
  if (!key.ok()) return BadArg(key.status());
  std::string value;
  absl::Status s = db->Get(ReadOptions(), *key, &value);
  if (absl::IsNotFound(s)) {
    absl::FPrintF(stderr, "ldb: key %s not found\n",
                  EncodeForOutput(*key, a.hex));
    return kExitFailure;
  }
  if (!s.ok()) return Failed("get", s);
  absl::PrintF("%s\n", EncodeForOutput(value, a.hex));
  return kExitOk;
}

int Put(DB* db, const CommandArgs& a) {
  absl::StatusOr<std::string> key = DecodeArg(a.args[0], a.hex, "key");
  if (!key.ok()) return BadArg(key.status());
  absl::StatusOr<std::string> value = DecodeArg(a.args[1], a.hex, "value");
  if (!value.ok()) return BadArg(value.status());
  WriteOptions wo;
  wo.sync = true;  // a tool's write should be durable when it says OK
  absl::Status s = db->Put(wo, *key, *value);
  if (!s.ok()) return Failed("put", s);
  absl::PrintF("OK\n");
  return kExitOk;
}

int Delete(DB* db, const CommandArgs& a) {
  absl::StatusOr<std::string> key = DecodeArg(a.args[0], a.hex, "key");
  if (!key.ok()) return BadArg(key.status());
  WriteOptions wo;
  wo.sync = true;
  absl::Status s = db->Delete(wo, *key);
  if (!s.ok()) return Failed("delete", s);
  absl::PrintF("OK\n");
  return kExitOk;
}

// Prints the entries in [from, to) in order, at most `limit` (< 0: all).
int PrintRange(DB* db, bool hex, std::string_view from, const std::string* to,
               int64_t limit) {
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  const Comparator* cmp = BytewiseComparator();
  int64_t n = 0;
  for (it->Seek(from); it->Valid() && (limit < 0 || n < limit); it->Next()) {
    if (to != nullptr && cmp->Compare(it->key(), *to) >= 0) break;
    PrintEntry(it->key(), it->value(), hex);
    n++;
  }
  if (!it->status().ok()) return Failed("scan", it->status());
  return kExitOk;
}

int Scan(DB* db, const CommandArgs& a) {
  absl::StatusOr<std::string> from = DecodeArg(a.from, a.hex, "--from");
  if (!from.ok()) return BadArg(from.status());
  absl::StatusOr<std::string> to = DecodeArg(a.to, a.hex, "--to");
  if (!to.ok()) return BadArg(to.status());
  return PrintRange(db, a.hex, *from, a.has_to ? &*to : nullptr, a.limit);
}

int Dump(DB* db, const CommandArgs& a) {
  return PrintRange(db, a.hex, "", nullptr, -1);
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
      {"scan", "[--from=KEY] [--to=KEY] [--limit=N]", 0, OpenMode::kReadOnly,
       false, &Scan},
      {"dump", "", 0, OpenMode::kReadOnly, false, &Dump},
      {"compact", "", 0, OpenMode::kReadWrite, false, &Compact},
      {"stats", "", 0, OpenMode::kReadOnly, false, &Stats},
      {"checkconsistency", "", 0, OpenMode::kReadOnly, true, &CheckConsistency},
      {"sstables", "", 0, OpenMode::kReadOnly, false, &SSTables},
      {"checkpoint", "--checkpoint_dir=DIR", 0, OpenMode::kReadWrite, false,
       &Checkpoint},
      {"repair", "", 0, OpenMode::kClosed, false, &Repair},
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
