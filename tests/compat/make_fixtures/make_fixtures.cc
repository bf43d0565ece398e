// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// compat_make_fixtures OUT_DIR: writes the compatibility fixtures of today's
// formats, version kFixtureVersion (tests/testdata/compat/v2/README.md),
// into OUT_DIR, which must not exist yet. For each variant of that version
// (compat_fixtures.h: filters and the compression of each phase) it
// writes, through the public API only, a small database with the Redis
// mirror on (sync mode, against a redis-server it starts on a free
// 127.0.0.1 port): tables on level 0 and below, in the variant's two
// compressions, overwrites, deletions, versions kept by a snapshot, and
// unflushed writes in the WAL at close. With the mirror settled it dumps
// every Redis key of the mirror (OUT_DIR/<variant>/mirror.txt) and records,
// for every written key and 1000 never-written ones, DB::Get's answer and
// RemoteFilter's (OUT_DIR/<variant>/answers.txt), and for a variant with a
// prefix extractor RemoteFilter's answer for each probed prefix
// (prefix_answers.txt); formats in tests/compat/compat_fixtures.h. The v1
// fixtures came from this writer as of the commit their README names.
// Deterministic in its keys and values (not in file numbers or Redis
// tokens). Exit status 0 on success; errors go to stderr.

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "redis/client/redis_client.h"
#include "siftdb/db.h"
#include "siftdb/filter_policy.h"
#include "siftdb/options.h"
#include "siftdb/remote_filter.h"
#include "siftdb/slice_transform.h"
#include "tests/compat/compat_fixtures.h"
#include "tests/support/redis_server.h"

namespace siftdb::compat {
namespace {

using Model = std::map<std::string, std::optional<std::string>>;

// Values of 9..20 bytes, compressible (a repeated filler).
std::string ValueFor(int i, int version) {
  std::string v = absl::StrFormat("v%d-%06d-", version, i);
  v.append(std::string((i * 7) % 12, static_cast<char>('a' + i % 3)));
  return v;
}
std::string KeyFor(int i) { return absl::StrFormat("key%06d", i); }

// Keys never written: half inside the tables' ranges, half outside.
std::vector<std::string> NeverWrittenKeys() {
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; i++) {
    keys.push_back(i % 2 == 0 ? absl::StrFormat("key%06d~", i)
                              : absl::StrFormat("z%05d", i));
  }
  return keys;
}

class Writer {
 public:
  Writer(std::string dir, Model* model) : dir_(std::move(dir)), model_(model) {}

  absl::Status Open(const Options& options) {
    auto db = DB::Open(options, dir_);
    if (!db.ok()) return db.status();
    db_ = std::move(*db);
    return absl::OkStatus();
  }
  void Close() { db_.reset(); }
  DB* db() { return db_.get(); }

  absl::Status Put(const std::string& k, const std::string& v) {
    (*model_)[k] = v;
    return db_->Put(WriteOptions(), k, v);
  }
  absl::Status Delete(const std::string& k) {
    (*model_)[k] = std::nullopt;
    return db_->Delete(WriteOptions(), k);
  }
  // Puts (and deletes, when del(i)) as batches of 10.
  template <typename PutFn, typename DelFn>
  absl::Status Batches(int from, int to, PutFn put_value, DelFn del) {
    WriteBatch batch;
    for (int i = from; i < to; i++) {
      const std::string k = KeyFor(i);
      if (del(i)) {
        batch.Delete(k);
        (*model_)[k] = std::nullopt;
      } else if (std::optional<std::string> v = put_value(i)) {
        batch.Put(k, *v);
        (*model_)[k] = *v;
      }
      if (batch.Count() >= 10 || i + 1 == to) {
        if (absl::Status s = db_->Write(WriteOptions(), &batch); !s.ok()) {
          return s;
        }
        batch.Clear();
      }
    }
    return absl::OkStatus();
  }

  std::string Levels() {
    std::string out;
    for (int level = 0; level < 7; level++) {
      std::string n;
      db_->GetProperty(absl::StrCat("siftdb.num-files-at-level", level), &n);
      absl::StrAppend(&out, level == 0 ? "" : ",", n);
    }
    return out;
  }

 private:
  std::string dir_;
  Model* model_;
  std::unique_ptr<DB> db_;
};

// Until the mirror is trusted with nothing queued (bounded).
absl::Status WaitMirrorSettled(DB* db) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::string state;
  while (absl::Now() < deadline) {
    db->GetProperty("siftdb.remote-filter", &state);
    if (absl::StrContains(state, "state=trusted") &&
        absl::StrContains(state, "queued=0 ")) {
      return absl::OkStatus();
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("mirror did not settle: ", state));
}

absl::StatusOr<std::vector<DumpedKey>> DumpMirror(RedisClient* redis,
                                                  const std::string& name) {
  auto keys = redis->Command({"KEYS", absl::StrCat("siftdb:{", name, "}:*")});
  if (!keys.ok()) return keys.status();
  if (!keys->is_array()) return absl::InternalError("KEYS: not an array");
  std::vector<std::string> names;
  for (const RedisReply& k : keys->elements()) names.push_back(k.str());
  std::sort(names.begin(), names.end());
  std::vector<DumpedKey> out;
  for (const std::string& k : names) {
    auto r = redis->Pipeline({RedisArgs{"TYPE", k}, RedisArgs{"PTTL", k},
                              RedisArgs{"GET", k}, RedisArgs{"HGETALL", k}});
    if (!r.ok()) return r.status();
    DumpedKey d;
    d.key = k;
    d.pttl = (*r)[1].integer();
    const std::string type = (*r)[0].str();
    if (type == "string") {
      d.value = (*r)[2].str();
    } else if (type == "hash") {
      d.is_hash = true;
      const auto& e = (*r)[3].elements();
      for (size_t i = 0; i + 1 < e.size(); i += 2) {
        d.fields.emplace_back(e[i].str(), e[i + 1].str());
      }
      std::sort(d.fields.begin(), d.fields.end());
    } else {
      return absl::InternalError(absl::StrCat(k, ": unexpected type ", type));
    }
    out.push_back(std::move(d));
  }
  return out;
}

absl::Status WriteFile(const std::string& path, const std::string& header,
                       const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << header;
  for (const std::string& l : lines) out << l << '\n';
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// The fixture version this writer produces (tests/testdata/compat/vN/).
constexpr int kFixtureVersion = 2;

// The options of a variant's database: small buffers and tables (so a few
// thousand keys make several levels), the variant's filters and phase-1
// compression, and the mirror in sync mode on `endpoint` under `name`.
Options FixtureOptions(const std::string& variant, const std::string& endpoint,
                       const std::string& name) {
  Options o;
  o.create_if_missing = true;
  o.error_if_exists = true;
  o.write_buffer_size = 8 << 10;
  o.target_file_size_base = 8 << 10;
  o.max_bytes_for_level_base = 32 << 10;
  o.block_size = 1024;
  SetFilterOptions(variant, &o);
  const PhaseCompression c = Phase1Compression(variant);
  o.compression = c.type;
  o.compression_opts.max_dict_bytes = c.max_dict_bytes;
  o.remote_filter.mode = RemoteFilterOptions::Mode::kSync;
  o.remote_filter.endpoints = {endpoint};
  o.remote_filter.name = name;
  o.remote_filter.delete_grace_ms = 200;
  return o;
}

// Value i of version 1, for every key Batches writes.
std::optional<std::string> Version1Value(int i) {
  return std::optional<std::string>(ValueFor(i, 1));
}
bool NeverDelete(int) { return false; }

// Phase 1 (Phase1Compression): 1200 keys; a snapshot keeps old versions through
// a full compaction; overwrites and deletions; then level-0 tables. Opens the
// DB with `o` (creating it) and closes it.
absl::Status WritePhase1(const Options& o, const std::string& variant,
                         Writer* w) {
  if (absl::Status s = w->Open(o); !s.ok()) return s;
  for (const std::string& k :
       {std::string(), std::string("\x00", 1), std::string("\x00\x01", 2),
        std::string("\xff\xfe\xff"), std::string("key000100\x00", 10)}) {
    if (absl::Status s = w->Put(k, "special:" + Blob(k)); !s.ok()) return s;
  }
  if (absl::Status s = w->Put("empty-value", ""); !s.ok()) return s;
  if (absl::Status s = w->Batches(0, 1200, Version1Value, NeverDelete);
      !s.ok()) {
    return s;
  }
  const Snapshot* snap = w->db()->GetSnapshot();
  auto v2 = [](int i) {
    return i % 3 == 0 ? std::optional<std::string>(ValueFor(i, 2))
                      : std::nullopt;
  };
  auto del7 = [](int i) { return i % 7 == 0; };
  if (absl::Status s = w->Batches(0, 1200, v2, del7); !s.ok()) return s;
  if (absl::Status s = w->db()->CompactRange(nullptr, nullptr); !s.ok()) {
    return s;
  }
  w->db()->ReleaseSnapshot(snap);
  auto v3 = [](int i) {
    return i % 5 == 0 ? std::optional<std::string>(ValueFor(i, 3))
                      : std::nullopt;
  };
  if (absl::Status s = w->Batches(0, 1200, v3, NeverDelete); !s.ok()) {
    return s;
  }
  std::fprintf(stderr, "%s: phase 1 levels %s\n", variant.c_str(),
               w->Levels().c_str());
  w->Close();
  return absl::OkStatus();
}

// Phase 2 (Phase2Compression, a large MemTable): 400 new keys, deletions; a
// CompactRange of one key flushes them (to level 1); then unflushed
// writes stay in the WAL. Reopens the DB of phase 1 (`phase1_options`
// otherwise) and leaves it open.
absl::Status WritePhase2(const Options& phase1_options,
                         const std::string& variant, Writer* w) {
  Options o = phase1_options;
  o.create_if_missing = false;
  o.error_if_exists = false;
  const PhaseCompression c = Phase2Compression(variant);
  o.compression = c.type;
  o.compression_opts.max_dict_bytes = c.max_dict_bytes;
  o.write_buffer_size = 64 << 10;  // nothing flushes but the CompactRange
  if (absl::Status s = w->Open(o); !s.ok()) return s;
  auto del11 = [](int i) { return i % 11 == 0; };
  if (absl::Status s = w->Batches(1200, 1600, Version1Value, del11); !s.ok()) {
    return s;
  }
  const std::string flush_key = KeyFor(1599);
  const std::string_view fk = flush_key;
  if (absl::Status s = w->db()->CompactRange(&fk, &fk); !s.ok()) return s;
  auto v4 = [](int i) {
    return i % 41 == 0 ? std::optional<std::string>(ValueFor(i, 4))
                       : std::nullopt;
  };
  auto del43 = [](int i) { return i % 43 == 1; };
  if (absl::Status s = w->Batches(0, 1600, v4, del43); !s.ok()) return s;
  if (absl::Status s = w->Batches(1600, 1640, Version1Value, NeverDelete);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = w->Delete(std::string("\x00", 1)); !s.ok()) return s;
  std::fprintf(stderr, "%s: phase 2 levels %s\n", variant.c_str(),
               w->Levels().c_str());
  return absl::OkStatus();
}

// Settles the mirror past the delete grace, so only listed keys remain,
// and prints its state.
absl::Status SettleMirror(DB* db, const std::string& variant) {
  if (absl::Status s = WaitMirrorSettled(db); !s.ok()) return s;
  absl::SleepFor(absl::Milliseconds(1000));
  if (absl::Status s = WaitMirrorSettled(db); !s.ok()) return s;
  std::string state;
  db->GetProperty("siftdb.remote-filter", &state);
  std::fprintf(stderr, "%s: mirror %s\n", variant.c_str(), state.c_str());
  return absl::OkStatus();
}

// Every key the answers cover, sorted: the written ones and
// NeverWrittenKeys().
std::vector<std::string> AnswerKeys(const Model& model) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : model) keys.push_back(k);
  for (const std::string& k : NeverWrittenKeys()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// DB::Get's answer for `key` with the remote reader's `remote_maybe`.
// Internal when the DB disagrees with the model or the remote filter says
// "no" for a key the DB holds.
absl::StatusOr<Answer> AnswerFor(DB* db, const Model& model,
                                 const std::string& key, bool remote_maybe) {
  Answer a;
  a.key = key;
  std::string value;
  absl::Status s = db->Get(ReadOptions(), key, &value);
  if (s.ok()) {
    a.value = value;
  } else if (!absl::IsNotFound(s)) {
    return s;
  }
  auto it = model.find(key);
  const std::optional<std::string> expected =
      it == model.end() ? std::nullopt : it->second;
  if (a.value != expected) {
    return absl::InternalError(
        absl::StrCat("DB disagrees with the model on ", Blob(key)));
  }
  a.remote_maybe = remote_maybe;
  if (a.value && !a.remote_maybe) {
    return absl::InternalError(
        absl::StrCat("remote \"no\" for a held key ", Blob(key)));
  }
  return a;
}

// The lines of answers.txt and their counts.
struct AnswerTable {
  std::vector<std::string> lines;  // FormatAnswer of each key, in order
  size_t present = 0;              // keys the DB holds
  size_t no = 0;                   // keys the remote reader excludes
};

// AnswerFor every one of `keys`; maybe[i] is the remote reader's answer
// for keys[i]. The first error ends it.
absl::StatusOr<AnswerTable> CollectAnswers(DB* db, const Model& model,
                                           const std::vector<std::string>& keys,
                                           const std::vector<bool>& maybe) {
  AnswerTable table;
  for (size_t i = 0; i < keys.size(); i++) {
    absl::StatusOr<Answer> a = AnswerFor(db, model, keys[i], maybe[i]);
    if (!a.ok()) return a.status();
    table.no += a->remote_maybe ? 0 : 1;
    table.present += a->value ? 1 : 0;
    table.lines.push_back(FormatAnswer(*a));
  }
  return table;
}

// Removes the info logs from the closed DB at db_dir and prints the size
// of every file left.
void RemoveLogsAndListFiles(const std::string& db_dir,
                            const std::string& variant) {
  std::vector<std::filesystem::path> logs;
  for (const auto& f : std::filesystem::directory_iterator(db_dir)) {
    const std::string name = f.path().filename().string();
    if (name == "LOG" || name.starts_with("LOG.old")) logs.push_back(f.path());
  }
  for (const auto& p : logs) std::filesystem::remove(p);
  for (const auto& f : std::filesystem::directory_iterator(db_dir)) {
    std::fprintf(stderr, "%s: %s %ju bytes\n", variant.c_str(),
                 f.path().filename().c_str(),
                 static_cast<uintmax_t>(f.file_size()));
  }
}

// Writes dir/answers.txt and dir/mirror.txt (formats in
// tests/compat/compat_fixtures.h).
absl::Status WriteFixtureFiles(const std::string& dir,
                               const std::string& variant,
                               const std::string& name, size_t num_keys,
                               const AnswerTable& answers,
                               const std::string& levels,
                               const std::vector<DumpedKey>& dump) {
  std::vector<std::string> dump_lines;
  for (const DumpedKey& d : dump) dump_lines.push_back(FormatDumpedKey(d));
  if (absl::Status s = WriteFile(
          dir + "/answers.txt",
          absl::StrFormat("# siftdb compat v%d (%s): x<key> x<value>|absent "
                          "maybe|no (tests/compat/compat_fixtures.h)\n"
                          "# %d keys, %d present, %d remote no; levels %s\n",
                          kFixtureVersion, variant, num_keys, answers.present,
                          answers.no, levels),
          answers.lines);
      !s.ok()) {
    return s;
  }
  return WriteFile(
      dir + "/mirror.txt",
      absl::StrFormat("# siftdb compat v%d (%s): Redis keys of mirror %s "
                      "(tests/compat/compat_fixtures.h)\n",
                      kFixtureVersion, variant, name),
      dump_lines);
}

// With the extractor of `o` (none: nothing to do), writes
// dir/prefix_answers.txt: the remote reader's answer for every
// ProbedPrefixes of `keys`. Internal when it says "no" for the prefix of
// a key the model holds.
absl::Status WritePrefixAnswers(const std::string& dir, const Options& o,
                                const std::string& endpoint,
                                const std::string& name, const Model& model,
                                const std::vector<std::string>& keys) {
  if (o.prefix_extractor == nullptr) return absl::OkStatus();
  const SliceTransform& x = *o.prefix_extractor;
  const std::vector<std::string> prefixes = ProbedPrefixes(x, keys);
  RemoteFilterReaderOptions ro;
  ro.endpoints = {endpoint};
  ro.prefix_extractor = x.Name();
  auto remote = RemoteFilter::Open(ro, name);
  if (!remote.ok()) return remote.status();
  std::vector<std::string_view> views(prefixes.begin(), prefixes.end());
  std::vector<bool> maybe;
  if (absl::Status s = (*remote)->MayContainPrefixMany(views, &maybe);
      !s.ok()) {
    return s;
  }
  std::set<std::string> held;
  for (const auto& [k, v] : model) {
    if (v && x.InDomain(k)) held.emplace(x.Transform(k));
  }
  std::vector<std::string> lines;
  size_t no = 0;
  for (size_t i = 0; i < prefixes.size(); i++) {
    if (!maybe[i] && held.count(prefixes[i])) {
      return absl::InternalError(
          absl::StrCat("remote \"no\" for a held prefix ", Blob(prefixes[i])));
    }
    no += maybe[i] ? 0 : 1;
    lines.push_back(FormatPrefixAnswer({prefixes[i], maybe[i]}));
  }
  std::fprintf(stderr, "%s: %zu prefixes (%s), %zu held, %zu remote no\n",
               name.c_str(), prefixes.size(), x.Name(), held.size(), no);
  return WriteFile(
      dir + "/prefix_answers.txt",
      absl::StrFormat("# siftdb compat v%d (%s): x<prefix> maybe|no "
                      "(tests/compat/compat_fixtures.h)\n"
                      "# %d prefixes of %s, %d held, %d remote no\n",
                      kFixtureVersion, name, prefixes.size(), x.Name(),
                      held.size(), no),
      lines);
}

absl::Status MakeVariant(const std::string& out_dir, const std::string& variant,
                         test::RedisServer* server, RedisClient* redis) {
  const std::string dir = out_dir + "/" + variant;
  std::filesystem::create_directories(dir);
  const std::string db_dir = dir + "/db";
  const std::string name = MirrorName(variant, kFixtureVersion);
  const Options o = FixtureOptions(variant, server->endpoint(), name);

  Model model;
  Writer w(db_dir, &model);
  if (absl::Status s = WritePhase1(o, variant, &w); !s.ok()) return s;
  if (absl::Status s = WritePhase2(o, variant, &w); !s.ok()) return s;
  if (absl::Status s = SettleMirror(w.db(), variant); !s.ok()) return s;

  // Answers: the DB's and the remote reader's, for every key.
  const std::vector<std::string> keys = AnswerKeys(model);
  auto remote = RemoteFilter::Open(server->endpoint(), name);
  if (!remote.ok()) return remote.status();
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<bool> maybe;
  if (absl::Status s = (*remote)->MayContainMany(views, &maybe); !s.ok()) {
    return s;
  }
  auto dump = DumpMirror(redis, name);
  if (!dump.ok()) return dump.status();
  absl::StatusOr<AnswerTable> answers =
      CollectAnswers(w.db(), model, keys, maybe);
  if (!answers.ok()) return answers.status();
  if (absl::Status s =
          WritePrefixAnswers(dir, o, server->endpoint(), name, model, keys);
      !s.ok()) {
    return s;
  }
  std::string levels = w.Levels();
  w.Close();
  RemoveLogsAndListFiles(db_dir, variant);

  if (absl::Status s = WriteFixtureFiles(dir, variant, name, keys.size(),
                                         *answers, levels, *dump);
      !s.ok()) {
    return s;
  }
  std::fprintf(stderr,
               "%s: %zu keys, %zu present, %zu remote no, %zu redis "
               "keys, levels %s\n",
               variant.c_str(), keys.size(), answers->present, answers->no,
               dump->size(), levels.c_str());
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR (must not exist)\n", argv[0]);
    return 2;
  }
  const std::string out_dir = argv[1];
  if (std::filesystem::exists(out_dir)) {
    std::fprintf(stderr, "%s exists: fixtures are never regenerated in place\n",
                 out_dir.c_str());
    return 2;
  }
  auto server = test::RedisServer::Start();
  if (!server.ok()) {
    std::fprintf(stderr, "redis-server: %s\n",
                 server.status().ToString().c_str());
    return 1;
  }
  RedisClientOptions ro;
  ro.endpoint = (*server)->endpoint();
  auto redis = RedisClient::Connect(ro);
  if (!redis.ok()) {
    std::fprintf(stderr, "%s\n", redis.status().ToString().c_str());
    return 1;
  }
  std::filesystem::create_directories(out_dir);
  for (const char* variant : kV2Variants) {
    absl::Status s = MakeVariant(out_dir, variant, server->get(), redis->get());
    if (!s.ok()) {
      std::fprintf(stderr, "%s: %s\n", variant, s.ToString().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace siftdb::compat

int main(int argc, char** argv) { return siftdb::compat::Main(argc, argv); }
