// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tests/support/redis_tls.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace siftdb::test {

namespace {

std::string FindOpenssl() {
  for (const char* p : {"/usr/bin/openssl", "/usr/local/bin/openssl"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return "";
}

// Runs one openssl command in `dir`, bounded by `timeout 60`; its output
// goes to dir/openssl.log, whose tail is quoted on failure.
absl::Status Openssl(const std::string& dir, const std::string& args) {
  const std::string log = dir + "/openssl.log";
  const std::string cmd =
      absl::StrFormat("cd '%s' && timeout 60 %s %s >>openssl.log 2>&1", dir,
                      FindOpenssl(), args);
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    if (text.size() > 600) text = text.substr(text.size() - 600);
    return absl::InternalError(
        absl::StrFormat("openssl %s: exit %d: %s", args, rc, text));
  }
  return absl::OkStatus();
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) return absl::InternalError("cannot write " + path);
  return absl::OkStatus();
}

// A key and a certificate for `name`, signed by ca.crt/ca.key.
absl::Status MakeSigned(const std::string& dir, const std::string& name,
                        const std::string& subject, const std::string& ext) {
  absl::Status s = WriteFile(dir + "/" + name + ".ext", ext);
  if (!s.ok()) return s;
  s = Openssl(dir,
              absl::StrFormat(
                  "req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1"
                  " -nodes -keyout %s.key -out %s.csr -subj '%s'",
                  name, name, subject));
  if (!s.ok()) return s;
  return Openssl(dir, absl::StrFormat(
                          "x509 -req -in %s.csr -CA ca.crt -CAkey ca.key "
                          "-CAcreateserial -days 2 -out %s.crt -extfile %s.ext",
                          name, name, name));
}

}  // namespace

std::string RedisTlsUnsupportedReason() {
  const std::string redis = RedisServer::FindBinary();
  if (redis.empty()) return "redis-server not found; install redis-server";
  if (FindOpenssl().empty()) {
    return "the openssl command is missing (scripts/setup.sh installs it)";
  }
  // A redis-server built with TLS links OpenSSL, so names its functions.
  std::ifstream in(redis, std::ios::binary);
  std::string bin((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  if (bin.find("SSL_CTX_new") == std::string::npos) {
    return redis + " was built without TLS (BUILD_TLS)";
  }
  return "";
}

absl::StatusOr<TestTlsFiles> MakeTestTlsFiles(const std::string& dir) {
  const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1";
  absl::Status s =
      Openssl(dir, absl::StrCat("req -x509 ", ec,
                                " -nodes -keyout ca.key -out ca.crt -days 2 "
                                "-subj '/CN=siftdb test CA'"));
  if (!s.ok()) return s;
  s = Openssl(dir, absl::StrCat("req -x509 ", ec,
                                " -nodes -keyout other-ca.key -out "
                                "other-ca.crt -days 2 -subj '/CN=other CA'"));
  if (!s.ok()) return s;
  s = MakeSigned(dir, "server", "/CN=localhost",
                 "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                 "extendedKeyUsage=serverAuth,clientAuth\n");
  if (!s.ok()) return s;
  s = MakeSigned(dir, "client", "/CN=siftdb test client",
                 "extendedKeyUsage=clientAuth\n");
  if (!s.ok()) return s;
  TestTlsFiles f;
  f.ca_cert = dir + "/ca.crt";
  f.server_cert = dir + "/server.crt";
  f.server_key = dir + "/server.key";
  f.client_cert = dir + "/client.crt";
  f.client_key = dir + "/client.key";
  f.other_ca_cert = dir + "/other-ca.crt";
  return f;
}

std::vector<std::string> RedisTlsServerArgs(const TestTlsFiles& files,
                                            int tls_port,
                                            const std::string& auth_clients) {
  return {"--tls-port",         absl::StrCat(tls_port), "--tls-cert-file",
          files.server_cert,    "--tls-key-file",       files.server_key,
          "--tls-ca-cert-file", files.ca_cert,          "--tls-auth-clients",
          auth_clients};
}

std::string TlsRedisServer::tls_endpoint() const {
  return absl::StrCat("127.0.0.1:", tls_port);
}

absl::StatusOr<TlsRedisServer> StartTlsRedisServer(
    const TestTlsFiles& files, const std::string& auth_clients,
    std::vector<std::string> extra_args) {
  absl::Status last;
  // The TLS port was free a moment ago; another process may take it first.
  for (int attempt = 0; attempt < 3; attempt++) {
    TlsRedisServer t;
    t.tls_port = RedisServer::PickFreePort();
    if (t.tls_port <= 0) return absl::InternalError("no free port");
    RedisServerOptions o;
    o.extra_args = RedisTlsServerArgs(files, t.tls_port, auth_clients);
    o.extra_args.insert(o.extra_args.end(), extra_args.begin(),
                        extra_args.end());
    absl::StatusOr<std::unique_ptr<RedisServer>> s = RedisServer::Start(o);
    if (s.ok()) {
      t.server = std::move(*s);
      return t;
    }
    last = s.status();
  }
  return last;
}

absl::StatusOr<int> RedisServerPid(RedisServer* server) {
  absl::StatusOr<std::string> info = server->Call({"INFO", "server"});
  if (!info.ok()) return info.status();
  for (absl::string_view line : absl::StrSplit(*info, '\n')) {
    if (absl::ConsumePrefix(&line, "process_id:")) {
      line = absl::StripAsciiWhitespace(line);
      int pid = 0;
      if (absl::SimpleAtoi(line, &pid) && pid > 0) return pid;
    }
  }
  return absl::InternalError("INFO server has no process_id");
}

}  // namespace siftdb::test
