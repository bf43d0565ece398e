// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Helpers for the Redis mirror tests: DB options with the mirror on, key
// names, waiting for a condition (bounded), and reading Redis state through
// the test fixture. Not thread-safe unless stated.

#ifndef SIFTDB_TESTS_MIRROR_MIRROR_TEST_UTIL_H_
#define SIFTDB_TESTS_MIRROR_MIRROR_TEST_UTIL_H_

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "redis/mirror/redis_mirror_format.h"
#include "redis/mirror/redis_mirror_writer.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "siftdb/filter_policy.h"
#include "siftdb/options.h"
#include "siftdb/remote_filter.h"
#include "table/internal_key.h"
#include "table/table.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"

namespace siftdb::test {

// Small MemTables and tables so a few thousand keys make flushes and
// compactions; a short lease and grace so failure tests stay fast.
inline Options MirrorOptions(const std::vector<std::string>& endpoints,
                             const std::string& name,
                             RemoteFilterOptions::Mode mode) {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 64 << 10;
  o.max_file_size = 64 << 10;
  o.max_bytes_for_level_base = 256 << 10;
  o.remote_filter.mode = mode;
  o.remote_filter.endpoints = endpoints;
  o.remote_filter.name = name;
  o.remote_filter.lease_ttl_ms = 1000;
  o.remote_filter.delete_grace_ms = 300;
  o.remote_filter.connect_timeout_ms = 300;
  o.remote_filter.command_timeout_ms = 500;
  return o;
}

inline std::string TestKey(int i) { return absl::StrFormat("key%08d", i); }
inline std::string AbsentKey(int i) { return absl::StrFormat("absent%08d", i); }

// Polls `done` every 10 ms until it holds or `timeout` passes.
inline bool WaitUntil(const std::function<bool()>& done,
                      absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

inline DBImpl* Impl(DB* db) { return static_cast<DBImpl*>(db); }

inline std::string MirrorState(DB* db) {
  std::string v;
  db->GetProperty("siftdb.remote-filter", &v);
  return v;
}

inline bool MirrorTrusted(DB* db) {
  return MirrorState(db).find("state=trusted") != std::string::npos;
}

// Keys matching `pattern` on one server (KEYS; test sizes only).
inline std::vector<std::string> RedisKeys(RedisServer* server,
                                          const std::string& pattern) {
  absl::StatusOr<std::string> r = server->Call({"KEYS", pattern});
  std::vector<std::string> out;
  if (!r.ok() || r->empty()) return out;
  for (absl::string_view k : absl::StrSplit(*r, '\n')) out.emplace_back(k);
  return out;
}

// Every key answered by `filter` as maybe; returns how many were "no" and
// the status of the last batch.
inline size_t CountNo(RemoteFilter* filter,
                      const std::vector<std::string>& keys,
                      absl::Status* status = nullptr) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<bool> answers;
  absl::Status s = filter->MayContainMany(views, &answers);
  if (status != nullptr) *status = s;
  size_t no = 0;
  for (bool a : answers) no += a ? 0 : 1;
  return no;
}

// The manifest Redis holds now (NotFound / DataLoss as DecodeManifest).
inline absl::StatusOr<MirrorManifest> ReadManifest(RedisServer* server,
                                                   const std::string& name) {
  absl::StatusOr<std::string> r =
      server->Call({"HGETALL", MirrorKeys(name).manifest()});
  if (!r.ok()) return r.status();
  std::vector<std::pair<std::string, std::string>> fields;
  if (!r->empty()) {
    std::vector<std::string> lines = absl::StrSplit(*r, '\n');
    for (size_t i = 0; i + 1 < lines.size(); i += 2) {
      fields.emplace_back(lines[i], lines[i + 1]);
    }
  }
  return DecodeManifest(fields);
}

// A table of the DB directory, opened directly from its file.
struct LocalTable {
  uint64_t number = 0;
  std::string smallest, largest;  // user keys
  std::unique_ptr<Table> table;
};

// Every table file in `dir` (after WaitForBackgroundWork these are exactly
// the live ones).
inline std::vector<LocalTable> OpenLocalTables(const std::string& dir) {
  std::vector<LocalTable> out;
  Env* env = Env::Default();
  auto children = env->GetChildren(dir);
  if (!children.ok()) return out;
  TableOptions to;
  to.filter_policy = NewBloomFilterPolicy(10);
  for (const std::string& name : *children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type) || type != FileType::kTableFile) {
      continue;
    }
    const std::string path = dir + "/" + name;
    auto size = env->GetFileSize(path);
    auto file = env->NewRandomAccessFile(path);
    if (!size.ok() || !file.ok()) continue;
    auto table = Table::Open(to, path, std::move(*file), *size);
    if (!table.ok()) continue;
    const TableProperties& props = (*table)->properties();
    if (props.smallest_key.size() < 8 || props.largest_key.size() < 8) {
      ADD_FAILURE() << path << ": table without a key range in its properties";
      continue;
    }
    LocalTable t;
    t.number = number;
    t.smallest =
        std::string(ExtractUserKey((*table)->properties().smallest_key));
    t.largest = std::string(ExtractUserKey((*table)->properties().largest_key));
    t.table = std::move(*table);
    out.push_back(std::move(t));
  }
  return out;
}

// The local answer a remote reader must agree with when no MemTable holds
// keys: some table whose range covers `key` has a filter that says maybe.
inline bool LocalMayContain(const std::vector<LocalTable>& tables,
                            std::string_view key) {
  for (const LocalTable& t : tables) {
    if (key < std::string_view(t.smallest) ||
        key > std::string_view(t.largest)) {
      continue;
    }
    if (t.table->UserKeyMayMatch(key, nullptr)) return true;
  }
  return false;
}

// Waits until the mirror is trusted, has nothing queued, and the Redis
// manifest lists exactly the tables in `dir`.
inline bool WaitMirrorSettled(DB* db, RedisServer* server,
                              const std::string& name, const std::string& dir,
                              absl::Duration timeout = absl::Seconds(20)) {
  return WaitUntil(
      [&] {
        std::string state = MirrorState(db);
        if (state.find("state=trusted") == std::string::npos ||
            state.find("queued=0 ") == std::string::npos) {
          return false;
        }
        auto m = ReadManifest(server, name);
        if (!m.ok()) return false;
        std::set<uint64_t> listed, local;
        for (const auto& e : m->immutables) listed.insert(e.id);
        for (const auto& t : OpenLocalTables(dir)) local.insert(t.number);
        return listed == local;
      },
      timeout);
}

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_MIRROR_MIRROR_TEST_UTIL_H_
