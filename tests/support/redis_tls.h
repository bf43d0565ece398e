// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// TLS test fixtures: a throwaway CA with a server and a client certificate,
// made by the `openssl` command line in a directory (each step bounded by
// `timeout`), and a redis-server listening for TLS beside its plain port.
//
//   * MakeTestTlsFiles(dir): ca.crt (CA "siftdb test CA"), server.crt/key
//     (names localhost and 127.0.0.1), client.crt/key (signed by the CA),
//     other-ca.crt (an unrelated CA, for "wrong CA" tests). EC P-256 keys,
//     valid for two days.
//   * StartTlsRedisServer: a RedisServer started with --tls-port P (P free)
//     and the server certificate, through RedisServerOptions::extra_args;
//     the plain port stays, so the fixture's PING, Call and Stop work as for
//     any other server. `auth_clients` is redis-server's --tls-auth-clients
//     ("no", "optional", "yes").
//   * SIFTDB_REQUIRE_REDIS_TLS(): skips the test (with the reason) when
//     redis-server or openssl is missing, or redis-server was built without
//     TLS.
//
// Thread safety: plain functions; use from the test thread.

#ifndef SIFTDB_TESTS_SUPPORT_REDIS_TLS_H_
#define SIFTDB_TESTS_SUPPORT_REDIS_TLS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/support/redis_server.h"

namespace siftdb::test {

struct TestTlsFiles {
  std::string ca_cert;
  std::string server_cert;
  std::string server_key;
  std::string client_cert;
  std::string client_key;
  std::string other_ca_cert;
};

// Empty when TLS tests can run here, else why not.
std::string RedisTlsUnsupportedReason();

absl::StatusOr<TestTlsFiles> MakeTestTlsFiles(const std::string& dir);

// The TLS flags for redis-server (also for a Sentinel).
std::vector<std::string> RedisTlsServerArgs(const TestTlsFiles& files,
                                            int tls_port,
                                            const std::string& auth_clients);

struct TlsRedisServer {
  std::unique_ptr<RedisServer> server;
  int tls_port = 0;
  // "127.0.0.1:<tls_port>"
  std::string tls_endpoint() const;
};

absl::StatusOr<TlsRedisServer> StartTlsRedisServer(
    const TestTlsFiles& files, const std::string& auth_clients = "optional",
    std::vector<std::string> extra_args = {});

// The server's process id (INFO server), for SIGSTOP/SIGCONT tests.
absl::StatusOr<int> RedisServerPid(RedisServer* server);

}  // namespace siftdb::test

#define SIFTDB_REQUIRE_REDIS_TLS()                                            \
  do {                                                                        \
    std::string siftdb_tls_why = ::siftdb::test::RedisTlsUnsupportedReason(); \
    if (!siftdb_tls_why.empty()) GTEST_SKIP() << siftdb_tls_why;              \
  } while (0)

#endif  // SIFTDB_TESTS_SUPPORT_REDIS_TLS_H_
