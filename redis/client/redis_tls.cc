// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/client/redis_tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "redis/client/hiredis_reply.h"

namespace siftdb {

namespace {

// OpenSSL's reason for the first failure queued on this thread (its error
// queue is per thread), emptying the queue; `fallback` when it is empty.
// *code (when given) receives the packed error code, 0 if none.
std::string OpenSslReason(std::string_view fallback,
                          unsigned long* code = nullptr) {  // NOLINT
  unsigned long first = ERR_get_error();  // NOLINT(runtime/int): OpenSSL's
  ERR_clear_error();
  if (code != nullptr) *code = first;
  if (first == 0) return std::string(fallback);
  const char* reason = ERR_reason_error_string(first);
  if (reason != nullptr) return reason;
  char buf[256];
  ERR_error_string_n(first, buf, sizeof(buf));
  return buf;
}

bool IsIpAddress(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 ||
         inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// Alerts by which a server refuses the client's certificate (or its
// absence): a configuration error, not an outage, so not worth retrying.
bool IsCredentialAlert(unsigned long code) {  // NOLINT(runtime/int)
  if (code == 0 || ERR_GET_LIB(code) != ERR_LIB_SSL) return false;
  switch (ERR_GET_REASON(code)) {
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
      return true;
    default:
      return false;
  }
}

// Called by OpenSSL when the server asks for a client certificate and none
// is configured: remember it (for the message if the server then hangs up)
// and go on without one.
int NoteCertificateRequest(SSL* ssl, X509**, EVP_PKEY**) {
  bool* requested = static_cast<bool*>(SSL_get_app_data(ssl));
  if (requested != nullptr) *requested = true;
  return 0;
}

// Never prompt on a terminal for an encrypted key's passphrase: fail.
int NoPassphrase(char*, int, int, void*) { return 0; }

int PollMillis(absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) return -1;
  absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(absl::ToInt64Milliseconds(left)) + 1;
}

absl::Time DeadlineAfter(absl::Duration timeout) {
  return timeout > absl::ZeroDuration() ? absl::Now() + timeout
                                        : absl::InfiniteFuture();
}

// A non-blocking connect to one resolved address, bounded by deadline.
// Returns the socket (blocking mode off), or -1 with *error set.
int ConnectOne(const addrinfo* ai, absl::Time deadline, std::string* error) {
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                  ai->ai_protocol);
  if (fd < 0) {
    *error = std::strerror(errno);
    return -1;
  }
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      *error = std::strerror(errno);
      close(fd);
      return -1;
    }
    pollfd p = {fd, POLLOUT, 0};
    int n;
    do {
      n = poll(&p, 1, PollMillis(deadline));
    } while (n < 0 && errno == EINTR);
    if (n == 0) {
      *error = "Connection timed out";
      close(fd);
      return -1;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
      err = errno;
    }
    if (err != 0) {
      *error = std::strerror(err);
      close(fd);
      return -1;
    }
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  return fd;
}

// Blocks SIGPIPE on this thread while alive, so a write to a socket the
// server closed fails with EPIPE instead of killing the process; a SIGPIPE
// raised meanwhile is consumed before the old mask returns.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    blocked_ = pthread_sigmask(SIG_BLOCK, &pipe_, &old_) == 0;
  }
  ~SigpipeBlock() {
    if (!blocked_) return;
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec zero = {0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_ = false;
  bool blocked_ = false;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const RedisTlsContext>> RedisTlsContext::Create(
    const RedisTlsOptions& options) {
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(
        "redis TLS: a client certificate needs its key and a key its "
        "certificate (give both cert and key, or neither)");
  }
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    return absl::InternalError(
        absl::StrCat("redis TLS: SSL_CTX_new: ", OpenSslReason("failed")));
  }
  std::shared_ptr<const RedisTlsContext> result(
      new RedisTlsContext(options, ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_default_passwd_cb(ctx, NoPassphrase);
  if (options.verify_peer) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    const int ok = options.ca_file.empty()
                       ? SSL_CTX_set_default_verify_paths(ctx)
                       : SSL_CTX_load_verify_locations(
                             ctx, options.ca_file.c_str(), nullptr);
    if (ok != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "redis TLS: CA file '%s': %s",
          options.ca_file.empty() ? "(system default)" : options.ca_file,
          OpenSslReason("cannot be loaded")));
    }
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  }
  if (options.cert_file.empty()) {
    SSL_CTX_set_client_cert_cb(ctx, NoteCertificateRequest);
  } else {
    if (SSL_CTX_use_certificate_chain_file(ctx, options.cert_file.c_str()) !=
        1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "redis TLS: client certificate file '%s': %s", options.cert_file,
          OpenSslReason("cannot be loaded")));
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, options.key_file.c_str(),
                                    SSL_FILETYPE_PEM) != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "redis TLS: client key file '%s': %s (an unencrypted PEM key is "
          "expected)",
          options.key_file, OpenSslReason("cannot be loaded")));
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "redis TLS: client key file '%s' does not match certificate '%s'",
          options.key_file, options.cert_file));
    }
  }
  return result;
}

RedisTlsContext::~RedisTlsContext() { SSL_CTX_free(ctx_); }

RedisTlsConnection::RedisTlsConnection(
    std::shared_ptr<const RedisTlsContext> context, int fd, ssl_st* ssl,
    redisReader* reader, std::string endpoint, absl::Duration command_timeout)
    : context_(std::move(context)),
      fd_(fd),
      ssl_(ssl),
      reader_(reader),
      endpoint_(std::move(endpoint)),
      command_timeout_(command_timeout) {}

RedisTlsConnection::~RedisTlsConnection() {
  // No close_notify: the server handles a plain close, and a dead peer
  // must not stall a destructor.
  SSL_free(ssl_);
  close(fd_);
  redisReaderFree(reader_);
}

absl::StatusOr<std::unique_ptr<RedisTlsConnection>> RedisTlsConnection::Connect(
    std::shared_ptr<const RedisTlsContext> context, const std::string& host,
    int port, std::string_view endpoint, absl::Duration connect_timeout,
    absl::Duration command_timeout) {
  SigpipeBlock no_sigpipe;  // the handshake writes
  const absl::Time deadline = DeadlineAfter(connect_timeout);
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port_text = absl::StrCat(port);
  int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &found);
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrFormat("redis %s: connect: cannot resolve host: %s", endpoint,
                        gai_strerror(rc)));
  }
  int fd = -1;
  std::vector<std::string> errors;
  for (addrinfo* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    std::string error;
    fd = ConnectOne(ai, deadline, &error);
    if (fd < 0) errors.push_back(error);
  }
  freeaddrinfo(found);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrFormat(
        "redis %s: connect: %s", endpoint, absl::StrJoin(errors, "; ")));
  }

  ERR_clear_error();
  SSL* ssl = SSL_new(context->ctx());
  redisReader* reader = ssl == nullptr ? nullptr : redisReaderCreate();
  if (reader != nullptr) UseRedisReplyBuilder(reader);
  if (ssl == nullptr || reader == nullptr || SSL_set_fd(ssl, fd) != 1) {
    std::string reason = OpenSslReason("out of memory");
    if (ssl != nullptr) SSL_free(ssl);
    if (reader != nullptr) redisReaderFree(reader);
    close(fd);
    return absl::InternalError(
        absl::StrFormat("redis %s: TLS setup: %s", endpoint, reason));
  }
  std::unique_ptr<RedisTlsConnection> conn(
      new RedisTlsConnection(std::move(context), fd, ssl, reader,
                             std::string(endpoint), command_timeout));
  SSL_set_app_data(ssl, &conn->certificate_requested_);
  const RedisTlsOptions& o = conn->context_->options();
  const std::string& name = o.server_name.empty() ? host : o.server_name;
  const bool ip = IsIpAddress(name);
  // SNI carries host names only (RFC 6066 §3).
  if (!ip && SSL_set_tlsext_host_name(ssl, name.c_str()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("redis %s: TLS server name '%s': %s", endpoint, name,
                        OpenSslReason("rejected")));
  }
  if (o.verify_peer) {
    const int ok =
        ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str())
           : SSL_set1_host(ssl, name.c_str());
    if (ok != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "redis %s: TLS server name '%s' cannot be checked: %s", endpoint,
          name, OpenSslReason("rejected")));
    }
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  }
  while (true) {
    ERR_clear_error();
    const int ret = SSL_connect(ssl);
    if (ret == 1) break;
    const int e = SSL_get_error(ssl, ret);
    absl::Status s = e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE
                         ? conn->WaitFor(e, deadline, "TLS handshake", nullptr)
                         : conn->SslError("TLS handshake", ret, e);
    if (!s.ok()) return s;
  }
  return conn;
}

absl::Status RedisTlsConnection::WaitFor(int ssl_error, absl::Time deadline,
                                         std::string_view what,
                                         bool* timed_out) {
  pollfd p = {
      fd_,
      static_cast<short>(ssl_error == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN),
      0};
  int n;
  do {
    n = poll(&p, 1, PollMillis(deadline));
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    return absl::UnavailableError(absl::StrFormat(
        "redis %s: %s: poll: %s", endpoint_, what, std::strerror(errno)));
  }
  if (n == 0) {
    if (timed_out != nullptr) *timed_out = true;
    return absl::UnavailableError(absl::StrFormat(
        "redis %s: %s: Resource temporarily unavailable (timed out)", endpoint_,
        what));
  }
  return absl::OkStatus();
}

absl::Status RedisTlsConnection::SslError(std::string_view what, int ret,
                                          int ssl_error) const {
  std::string detail;
  // The server went away without a TLS alert we could read.
  bool hung_up =
      ssl_error == SSL_ERROR_SYSCALL || ssl_error == SSL_ERROR_ZERO_RETURN;
  const long verify = SSL_get_verify_result(ssl_);  // NOLINT(runtime/int)
  if (context_->options().verify_peer && verify != X509_V_OK) {
    ERR_clear_error();
    detail = absl::StrCat("certificate verify failed: ",
                          X509_verify_cert_error_string(verify));
  } else if (ssl_error == SSL_ERROR_ZERO_RETURN) {
    detail = "connection closed by the server";
  } else if (ssl_error == SSL_ERROR_SYSCALL) {
    const int err = errno;
    detail =
        OpenSslReason(ret == 0 || err == 0 ? "connection closed by the server"
                                           : std::strerror(err));
  } else {
    unsigned long code = 0;  // NOLINT(runtime/int)
    detail = OpenSslReason(absl::StrCat("TLS error ", ssl_error), &code);
    hung_up = ERR_GET_LIB(code) == ERR_LIB_SSL &&
              ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
    if (IsCredentialAlert(code)) {
      return absl::UnauthenticatedError(absl::StrFormat(
          "redis %s: %s: the server refused our credentials: %s", endpoint_,
          what, detail));
    }
  }
  if (certificate_requested_ && !replied_ && hung_up) {
    // TLS 1.3: the server refuses a missing client certificate after the
    // client's side of the handshake is done, and its alert is often lost
    // to the reset our first command causes.
    return absl::UnauthenticatedError(absl::StrFormat(
        "redis %s: %s: %s (the server asked for a client certificate and "
        "none is configured: give cert and key)",
        endpoint_, what, detail));
  }
  std::string msg =
      absl::StrFormat("redis %s: %s: %s", endpoint_, what, detail);
  // A certificate that does not verify will not verify on a retry either.
  if (context_->options().verify_peer && verify != X509_V_OK) {
    return absl::UnauthenticatedError(msg);
  }
  return absl::UnavailableError(msg);
}

absl::Status RedisTlsConnection::Write(std::string_view data,
                                       std::string_view what) {
  const absl::Time deadline = DeadlineAfter(command_timeout_);
  SigpipeBlock no_sigpipe;
  while (!data.empty()) {
    ERR_clear_error();
    const int chunk = static_cast<int>(std::min<size_t>(data.size(), 1 << 30));
    const int ret = SSL_write(ssl_, data.data(), chunk);
    if (ret > 0) {
      data.remove_prefix(static_cast<size_t>(ret));
      continue;
    }
    const int e = SSL_get_error(ssl_, ret);
    absl::Status s = e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE
                         ? WaitFor(e, deadline, what, nullptr)
                         : SslError(what, ret, e);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<RedisReply> RedisTlsConnection::Run(
    const std::vector<std::string>& argv) {
  RedisArgs args;
  for (const std::string& a : argv) args.Add(a);
  absl::Status s = Write(args.Encode(), argv[0]);
  RedisReply reply;
  if (s.ok()) s = ReadReply(&reply, argv[0]);
  if (!s.ok()) return s;
  return reply;
}

absl::Status RedisTlsConnection::ReadReply(RedisReply* out,
                                           std::string_view what) {
  return ReadReplyBy(out, DeadlineAfter(command_timeout_), what, nullptr);
}

absl::StatusOr<bool> RedisTlsConnection::ReadReplyWithin(
    RedisReply* out, absl::Duration wait, std::string_view what) {
  bool timed_out = false;
  absl::Status s = ReadReplyBy(out, absl::Now() + wait, what, &timed_out);
  if (s.ok()) return true;
  if (timed_out) return false;
  return s;
}

void RedisTlsConnection::Shutdown() { shutdown(fd_, SHUT_RDWR); }

absl::Status RedisTlsConnection::ReadReplyBy(RedisReply* out,
                                             absl::Time deadline,
                                             std::string_view what,
                                             bool* timed_out) {
  void* raw = nullptr;
  void** reply = &raw;
  char buf[16 * 1024];
  while (true) {
    if (redisReaderGetReply(reader_, reply) != REDIS_OK) {
      return absl::UnavailableError(
          absl::StrFormat("redis %s: %s: protocol error: %s", endpoint_, what,
                          reader_->errstr));
    }
    if (raw != nullptr) {
      replied_ = true;
      *out = TakeBuiltReply(raw);
      return absl::OkStatus();
    }
    ERR_clear_error();
    const int ret = SSL_read(ssl_, buf, sizeof(buf));
    if (ret > 0) {
      if (redisReaderFeed(reader_, buf, static_cast<size_t>(ret)) != REDIS_OK) {
        return absl::UnavailableError(absl::StrFormat(
            "redis %s: %s: reader: %s", endpoint_, what, reader_->errstr));
      }
      continue;
    }
    const int e = SSL_get_error(ssl_, ret);
    absl::Status s = e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE
                         ? WaitFor(e, deadline, what, timed_out)
                         : SslError(what, ret, e);
    if (!s.ok()) return s;
  }
}

}  // namespace siftdb
