// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the Redis benches need to measure TLS beside plain TCP in one run:
// a self-signed certificate for 127.0.0.1 made with the `openssl` command
// line, the redis-server flags for a TLS port using it, the rediss:// URL
// that reaches that port with verification on (the alternating rounds and
// their medians: alternating_report.h).
//
// Thread safety: plain functions; call from the bench's main thread.

#ifndef SIFTDB_BENCH_BENCH_TLS_H_
#define SIFTDB_BENCH_BENCH_TLS_H_

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace siftdb::bench {

// Writes dir/tls.crt and dir/tls.key (EC P-256, names 127.0.0.1 and
// localhost, one day). False when openssl fails or is missing.
inline bool MakeSelfSignedCert(const std::string& dir) {
  const std::string cmd = absl::StrCat(
      "cd '", dir,
      "' && timeout 60 openssl req -x509 -newkey ec -pkeyopt "
      "ec_paramgen_curve:prime256v1 -nodes -keyout tls.key -out tls.crt "
      "-days 1 -subj /CN=localhost "
      "-addext subjectAltName=IP:127.0.0.1,DNS:localhost >/dev/null 2>&1");
  return std::system(cmd.c_str()) == 0;
}

inline std::vector<std::string> TlsServerArgs(const std::string& dir,
                                              int tls_port) {
  return {"--tls-port",         absl::StrCat(tls_port),
          "--tls-cert-file",    dir + "/tls.crt",
          "--tls-key-file",     dir + "/tls.key",
          "--tls-ca-cert-file", dir + "/tls.crt",
          "--tls-auth-clients", "no"};
}

// The certificate is its own CA: verification stays on.
inline std::string TlsUrl(const std::string& dir, int tls_port) {
  return absl::StrCat("rediss://127.0.0.1:", tls_port, "?ca_cert=", dir,
                      "/tls.crt");
}

}  // namespace siftdb::bench

#endif  // SIFTDB_BENCH_BENCH_TLS_H_
