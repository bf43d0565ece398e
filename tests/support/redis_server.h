// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisServer: a real redis-server child process for tests, on a free
// 127.0.0.1 port, in its own temporary directory, with persistence off
// (--save "" --appendonly no). Start() waits (bounded) until PING answers.
// The destructor SIGKILLs the child and removes the directory; children also
// die with the test process (PR_SET_PDEATHSIG).
//
// RedisSentinelGroup (tests/support/redis_sentinel.h): a master, replicas
// and Sentinels, for failover tests.
//
// RedisCluster: N cluster-enabled masters joined with
// `redis-cli --cluster create ... --cluster-yes`, waiting until every node
// reports cluster_state:ok.
//
// Tests that need Redis should begin with SIFTDB_REQUIRE_REDIS() which skips
// the test (with the reason) when no redis-server binary exists.
//
// Thread safety: not thread-safe; control a server from one thread (the
// server itself may of course be used by many client threads).

#ifndef SIFTDB_TESTS_SUPPORT_REDIS_SERVER_H_
#define SIFTDB_TESTS_SUPPORT_REDIS_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace siftdb::test {

struct RedisServerOptions {
  // Appended to the command line, e.g. {"--requirepass", "secret"}.
  std::vector<std::string> extra_args;
  // Port to use; 0 picks a free one.
  int port = 0;
  // How long Start()/Restart() wait for PING.
  absl::Duration start_timeout = absl::Seconds(10);
  // Non-empty: run as a Sentinel (redis-server sentinel.conf --sentinel),
  // these lines making sentinel.conf (which Sentinel then rewrites).
  std::vector<std::string> sentinel_config;
};

class RedisServer {
 public:
  // The redis-server binary (PATH, then /usr/bin, /usr/local/bin), or "".
  static std::string FindBinary();
  // redis-cli next to it, or "".
  static std::string FindCli();
  // A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0).
  // With `with_bus`, port + 10000 (the cluster bus) is free as well.
  static int PickFreePort(bool with_bus = false);

  static absl::StatusOr<std::unique_ptr<RedisServer>> Start(
      RedisServerOptions options = {});

  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  ~RedisServer();

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1"; }
  std::string endpoint() const;  // "127.0.0.1:<port>"
  const std::string& dir() const { return dir_; }
  bool running() const { return pid_ > 0; }

  // SHUTDOWN (SAVE when save is true, else NOSAVE) and wait for the exit.
  absl::Status Stop(bool save = false);
  // SIGKILL and wait.
  absl::Status Kill();
  // Stop (saving the dataset when keep_data) and start again on the same
  // port and directory, so a kept dataset is reloaded from dump.rdb.
  absl::Status Restart(bool keep_data = false);
  // Starts a stopped or killed server again (same port and directory).
  absl::Status StartAgain();

  // Runs one command through a fresh connection; returns the reply rendered
  // as text (integers and strings as is, errors as "ERR ...").
  absl::StatusOr<std::string> Call(const std::vector<std::string>& argv);
  // Several commands, in order, on one connection; one rendered reply each.
  absl::StatusOr<std::vector<std::string>> CallAll(
      const std::vector<std::vector<std::string>>& commands);
  absl::Status FlushAll();

  // Starts another server replicating from this one (REPLICAOF) and waits
  // until its master link is up.
  absl::StatusOr<std::unique_ptr<RedisServer>> StartReplica();
  // Polls until WAIT counts every connected replica (at least one): from
  // then on writes reach them and WAIT can succeed.
  absl::Status WaitForReplicas(absl::Duration timeout);
  // OK once `replicas` replicas hold everything written to this server so
  // far, by any client (a fence write and WAIT on one connection);
  // DeadlineExceeded naming the count if not within `timeout`.
  absl::Status ReplicateAll(int replicas, absl::Duration timeout);

 private:
  RedisServer(RedisServerOptions options, int port, std::string dir,
              bool owns_dir);
  absl::Status Spawn();
  absl::Status WaitForPing();
  absl::Status WaitForExit(absl::Duration timeout);

  RedisServerOptions options_;
  int port_;
  std::string dir_;
  bool owns_dir_;
  pid_t pid_ = -1;
};

class RedisCluster {
 public:
  // Starts `masters` cluster-enabled servers (no replicas) and creates the
  // cluster; fails with a clear status when redis-cli is missing.
  static absl::StatusOr<std::unique_ptr<RedisCluster>> Start(int masters = 3);

  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;
  ~RedisCluster() = default;

  const std::vector<std::unique_ptr<RedisServer>>& nodes() const {
    return nodes_;
  }
  std::vector<std::string> endpoints() const;

  // Moves `slot` from node `from` to node `to` as redis-cli --cluster
  // reshard does: SETSLOT IMPORTING / MIGRATING, MIGRATE of up to
  // `keys_per_step` keys at a time with `pause` after each step (so that
  // clients meet the half-moved slot and its ASK redirects), then SETSLOT
  // NODE on every node. Internal naming the step that failed.
  absl::Status MoveSlot(int slot, RedisServer* from, RedisServer* to,
                        int keys_per_step = 5,
                        absl::Duration pause = absl::Milliseconds(20));

 private:
  RedisCluster() = default;
  std::vector<std::unique_ptr<RedisServer>> nodes_;
};

}  // namespace siftdb::test

// Skips the current test when redis-server is not installed.
#define SIFTDB_REQUIRE_REDIS()                                            \
  do {                                                                    \
    if (::siftdb::test::RedisServer::FindBinary().empty()) {              \
      GTEST_SKIP() << "redis-server not found in PATH, /usr/bin or "      \
                      "/usr/local/bin; install redis-server to run this " \
                      "test";                                             \
    }                                                                     \
  } while (0)

#endif  // SIFTDB_TESTS_SUPPORT_REDIS_SERVER_H_
