// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// sift_bf: a redis-cli-like shell for siftdb's Redis-backed Bloom filters.
//
//   sift_bf [-h HOST] [-p PORT] [-a PASSWORD] [--user U] [-n DB]
//           [-u URL] [--password_file FILE]
//           [--redis=HOST:PORT] [--raw | --no-raw] [--retry=SECONDS]
//           [COMMAND [ARG ...]]
//
// redis-cli's options (and siftdb's older --redis, --password, --db), in
// either "-x value", "--name value" or "--name=value" form; options end at
// the first argument that is not one, so command arguments such as -0.01
// pass untouched. Later options override earlier ones (-u then -p 6380
// uses port 6380). Without -a, the password comes from REDISCLI_AUTH, as
// redis-cli does. --help and --version exit 0; an unknown option, a
// missing value or a bad number exits 2 with one line.
//
// With a command: runs it and prints the reply. Without one: an interactive
// prompt with line editing and in-memory history when stdin is a terminal,
// else batch mode reading one command per line from stdin and answering each
// in order. BF.* and CBF.* commands are served by siftdb (RedisBloom's
// syntax and replies, see redis/bloom/redis_bloom_command.h); anything else
// goes to Redis unchanged. Lines are split like redis-cli splits them ("double
// quotes" with \xHH escapes, 'single quotes'); replies print in redis-cli's
// human format when stdout is a terminal (or with --no-raw) and raw
// otherwise (or with --raw). The exit status is 1 when a single command's
// reply is an error, or when Redis cannot be reached; 2 on a bad command
// line.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/bloom/redis_bloom_command.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_url.h"
#include "siftdb/version.h"
#include "tools/sift_bf/line_editor.h"
#include "tools/sift_bf/redis_cli_text.h"
#include "tools/sift_bf/serve.h"

namespace siftdb::sift_bf {
namespace {

const char kUsage[] =
    "usage: sift_bf [OPTIONS] [COMMAND [ARG ...]]\n"
    "  -h HOST           server host (127.0.0.1)\n"
    "  -p PORT           server port (6379)\n"
    "  -a PASSWORD       AUTH password (also --pass, --password; default:\n"
    "                    the REDISCLI_AUTH environment variable)\n"
    "  --user USER       ACL user name, with -a\n"
    "  -n DB             database number (also --db)\n"
    "  --password_file F AUTH password from the first line of file F\n"
    "  -u URL            redis://[[user]:password@]host[:port][/db],\n"
    "                    redis+sentinel://[[user]:password@]host[:port]\n"
    "                    [,host[:port]...]/master[/db][?sentinel_user=U\n"
    "                    &sentinel_password=P], unix:///path[?db=N],\n"
    "                    rediss://..., rediss+sentinel://... (TLS; query\n"
    "                    ca_cert= cert= key= sni= verify=no)\n"
    "  --tls             TLS to -h/-p (as redis-cli; verified by default)\n"
    "  --cacert F        CA bundle (PEM) the server must chain to\n"
    "  --cert F --key F  client certificate and key (PEM)\n"
    "  --sni NAME        server name sent and verified (default: the host)\n"
    "  --insecure        TLS without verifying the server (tests only)\n"
    "  --redis HOST:PORT host and port in one\n"
    "  --raw / --no-raw  raw replies / redis-cli's human format\n"
    "  --retry SECONDS   keep retrying the connection this long (5)\n"
    "  --serve HOST:PORT serve BF.* over RESP on HOST:PORT (PORT alone:\n"
    "                    127.0.0.1:PORT),\n"
    "                    passing other commands to the Redis above; runs\n"
    "                    until SIGINT or SIGTERM (docs/redis_bloom.md)\n"
    "  --serve_threads N worker threads of --serve (4)\n"
    "  --serve_batches N BF.* batches of one user running at once (1)\n"
    "  --help, --version\n"
    "Options end at the first argument that is not one.\n"
    "Exit status: 0 success, 1 an error reply or no connection, 2 bad\n"
    "command line.\n"
    "\n"
    "Bloom filter commands (RedisBloom syntax, served on plain Redis):\n"
    "  BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING]\n"
    "  BF.ADD key item | BF.MADD key item [item ...]\n"
    "  BF.EXISTS key item | BF.MEXISTS key item [item ...]\n"
    "  BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE]\n"
    "            [NONSCALING] ITEMS item [item ...]\n"
    "  BF.INFO key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION] | BF.CARD key\n"
    "  BF.SCANDUMP key iterator | BF.LOADCHUNK key iterator data\n"
    "  BF.DEBUG key | BF.DROP key\n"
    "Counting Bloom filter commands:\n"
    "  CBF.RESERVE key error_rate capacity\n"
    "  CBF.ADD | CBF.DEL | CBF.EXISTS | CBF.COUNT key item [item ...]\n"
    "  CBF.INFO key | CBF.DROP key\n"
    "Other commands go to Redis unchanged. Quote arguments like redis-cli:\n"
    "  \"a b\", \"\\x00\\xff\", 'it\\'s'.\n";

struct Flags {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string user;
  std::optional<std::string> password;  // unset: REDISCLI_AUTH
  // Set by -u with redis+sentinel://, rediss:// or unix:// (credentials
  // and database removed: they live in the fields here).
  std::optional<RedisUrl> server_url;
  // --tls, --cacert, --cert, --key, --sni, --insecure: on top of the URL's.
  bool tls = false;
  bool insecure = false;
  std::string cacert, cert, key, sni;
  int db = 0;
  int raw = -1;  // -1: raw unless stdout is a terminal
  double retry_seconds = 5;
  std::vector<std::string> command;
  std::string serve;  // --serve=HOST:PORT: run the BF.* server
  int serve_threads = 4;
  int serve_batches = 1;

  std::string Endpoint() const {
    return host.find(':') != std::string::npos
               ? absl::StrFormat("[%s]:%d", host, port)
               : absl::StrFormat("%s:%d", host, port);
  }
};

// Exits with 2 after one line naming the problem.
[[noreturn]] void UsageError(const std::string& message) {
  std::fprintf(stderr, "sift_bf: %s (try --help)\n", message.c_str());
  std::exit(2);
}

// The options that take a value: every spelling of each.
enum class Opt {
  kHost,
  kPort,
  kPassword,
  kPasswordFile,
  kUser,
  kDb,
  kUrl,
  kRedis,
  kRetry,
  kCacert,
  kCert,
  kKey,
  kSni,
  kServe,
  kServeThreads,
  kServeBatches
};
struct OptName {
  const char* name;
  Opt opt;
};
constexpr OptName kValueOptions[] = {
    {"-h", Opt::kHost},
    {"--host", Opt::kHost},
    {"-p", Opt::kPort},
    {"--port", Opt::kPort},
    {"-a", Opt::kPassword},
    {"--pass", Opt::kPassword},
    {"--password", Opt::kPassword},
    {"--password_file", Opt::kPasswordFile},
    {"--user", Opt::kUser},
    {"-n", Opt::kDb},
    {"--db", Opt::kDb},
    {"-u", Opt::kUrl},
    {"--redis", Opt::kRedis},
    {"--retry", Opt::kRetry},
    {"--cacert", Opt::kCacert},
    {"--cert", Opt::kCert},
    {"--key", Opt::kKey},
    {"--sni", Opt::kSni},
    {"--serve", Opt::kServe},
    {"--serve_threads", Opt::kServeThreads},
    {"--serve_batches", Opt::kServeBatches},
};

void ApplyUrl(const std::string& text, Flags* f) {
  if (!IsRedisUrl(text)) {
    UsageError(
        "-u expects a URL: redis://, rediss://, redis+sentinel:// or "
        "unix://");
  }
  absl::StatusOr<RedisUrl> url = ParseRedisUrl(text);
  if (!url.ok()) UsageError(std::string(url.status().message()));
  if (url->username.has_value()) f->user = *url->username;
  if (url->password.has_value()) f->password = *url->password;
  if (url->database.has_value()) f->db = *url->database;
  f->server_url.reset();
  if (url->scheme == RedisUrlScheme::kRedis) {
    absl::StatusOr<RedisEndpoint> e = RedisEndpoint::Parse(url->endpoints[0]);
    f->host = e->host;
    f->port = e->port;
  } else {
    // Sentinels, a socket or TLS: kept until a later -h/-p/--redis.
    url->username.reset();
    url->password.reset();
    url->database.reset();
    f->server_url = *url;
  }
}

// The password file's first line (a trailing newline is not a part of it).
void ReadPasswordFile(const std::string& path, Flags* f) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line)) {
    UsageError(absl::StrFormat("cannot read the password file '%s'", path));
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  f->password = line;
}

// Applies one option's value to *f (exits with 2 on a bad value).
void Apply(Opt opt, const std::string& name, const std::string& v, Flags* f) {
  switch (opt) {
    case Opt::kHost:
      f->host = v;
      f->server_url.reset();
      break;
    case Opt::kPasswordFile:
      ReadPasswordFile(v, f);
      break;
    case Opt::kPort:
      f->server_url.reset();
      if (!absl::SimpleAtoi(v, &f->port) || f->port < 1 || f->port > 65535) {
        UsageError(absl::StrFormat("bad port '%s' for %s", v, name));
      }
      break;
    case Opt::kPassword:
      f->password = v;
      break;
    case Opt::kUser:
      f->user = v;
      break;
    case Opt::kDb:
      if (!absl::SimpleAtoi(v, &f->db) || f->db < 0) {
        UsageError(absl::StrFormat("bad database number '%s' for %s", v, name));
      }
      break;
    case Opt::kUrl:
      ApplyUrl(v, f);
      break;
    case Opt::kRedis: {
      absl::StatusOr<RedisEndpoint> e = RedisEndpoint::Parse(v);
      if (!e.ok() || e->host.empty()) {
        UsageError(absl::StrFormat("bad HOST:PORT '%s' for %s", v, name));
      }
      f->host = e->host;
      f->port = e->port;
      f->server_url.reset();
      break;
    }
    case Opt::kCacert:
      f->cacert = v;
      break;
    case Opt::kCert:
      f->cert = v;
      break;
    case Opt::kKey:
      f->key = v;
      break;
    case Opt::kSni:
      f->sni = v;
      break;
    case Opt::kServe:
      f->serve = v;
      break;
    case Opt::kServeBatches:
      if (!absl::SimpleAtoi(v, &f->serve_batches) || f->serve_batches < 1 ||
          f->serve_batches > 64) {
        UsageError(absl::StrFormat("bad batch count '%s' for %s", v, name));
      }
      break;
    case Opt::kServeThreads:
      if (!absl::SimpleAtoi(v, &f->serve_threads) || f->serve_threads < 1 ||
          f->serve_threads > 64) {
        UsageError(absl::StrFormat("bad thread count '%s' for %s", v, name));
      }
      break;
    case Opt::kRetry:
      if (!absl::SimpleAtod(v, &f->retry_seconds) || !(f->retry_seconds >= 0) ||
          f->retry_seconds > 86400) {
        UsageError(absl::StrFormat("bad seconds '%s' for %s", v, name));
      }
      break;
  }
}

// Handles argv[*i] when it is an option that takes a value ("-p 6380",
// "--port=6380"); false when it is not one.
bool TakeValueOption(int* i, int argc, char** argv, Flags* f) {
  const std::string arg = argv[*i];
  for (const OptName& o : kValueOptions) {
    const std::string name = o.name;
    if (arg == name) {
      if (*i + 1 >= argc) UsageError(name + " needs a value");
      Apply(o.opt, name, argv[++*i], f);
      return true;
    }
    if (name.size() > 2 && arg.rfind(name + "=", 0) == 0) {
      Apply(o.opt, name, arg.substr(name.size() + 1), f);
      return true;
    }
  }
  return false;
}

// Options come first; the first other argument starts the command (so that
// command arguments such as -0.01 are never taken for options).
Flags ParseFlags(int argc, char** argv) {
  Flags f;
  int i = 1;
  for (; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--") {
      i++;
      break;
    } else if (a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--version" || a == "-v") {
      std::printf("sift_bf (siftdb) %s\n", Version());
      std::exit(0);
    } else if (TakeValueOption(&i, argc, argv, &f)) {
    } else if (a == "--tls") {
      f.tls = true;
    } else if (a == "--insecure") {
      f.insecure = true;
    } else if (a == "--raw") {
      f.raw = 1;
    } else if (a == "--no-raw") {
      f.raw = 0;
    } else if (a.size() > 1 && a[0] == '-') {
      UsageError("unknown option " + a);
    } else {
      break;
    }
  }
  for (; i < argc; i++) f.command.push_back(argv[i]);
  if (!f.password.has_value()) {
    if (const char* env = std::getenv("REDISCLI_AUTH"); env != nullptr) {
      f.password = env;
    }
  }
  return f;
}

// The TLS flags, over what a rediss:// URL said.
void ApplyTlsFlags(const Flags& f, RedisClientOptions* options) {
  if (f.tls) options->tls = true;
  RedisTlsOptions& t = options->tls_options;
  if (!f.cacert.empty()) t.ca_file = f.cacert;
  if (!f.cert.empty()) t.cert_file = f.cert;
  if (!f.key.empty()) t.key_file = f.key;
  if (!f.sni.empty()) t.server_name = f.sni;
  if (f.insecure) t.verify_peer = false;
  if (!options->tls && (f.insecure || !f.cacert.empty() || !f.cert.empty() ||
                        !f.key.empty() || !f.sni.empty())) {
    UsageError(
        "--cacert, --cert, --key, --sni and --insecure need --tls or "
        "a rediss:// URL");
  }
}

void Print(const RedisReply& reply, bool raw) {
  std::string out = raw ? FormatReplyRaw(reply) : FormatReplyTty(reply);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

int Run(int argc, char** argv) {
  Flags flags = ParseFlags(argc, argv);
  RedisClientOptions options;
  options.endpoint = flags.Endpoint();
  if (flags.server_url.has_value()) ApplyRedisUrl(*flags.server_url, &options);
  options.username = flags.user;
  options.password = flags.password.value_or("");
  options.database = flags.db;
  options.retry_deadline = absl::Seconds(flags.retry_seconds);
  ApplyTlsFlags(flags, &options);
  if (!flags.serve.empty()) {
    if (!flags.command.empty()) UsageError("--serve takes no command");
    return Serve(flags.serve, flags.serve_threads, flags.serve_batches,
                 options);
  }
  absl::StatusOr<std::unique_ptr<RedisClient>> client =
      RedisClient::Connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "sift_bf: %s\n",
                 std::string(client.status().message()).c_str());
    return 1;
  }
  RedisBloomCommands commands(client->get());
  const bool raw = flags.raw == -1 ? !isatty(STDOUT_FILENO) : flags.raw == 1;

  if (!flags.command.empty()) {
    RedisReply reply = commands.Execute(flags.command);
    Print(reply, raw);
    return reply.is_error() ? 1 : 0;
  }

  const bool interactive = isatty(STDIN_FILENO);
  LineEditor editor(STDIN_FILENO, STDOUT_FILENO);
  const std::string prompt = (*client)->endpoint() + "> ";
  while (true) {
    std::optional<std::string> line;
    if (interactive) {
      line = editor.ReadLine(prompt);
    } else {
      std::string l;
      if (std::getline(std::cin, l)) line = l;
    }
    if (!line.has_value()) break;
    absl::StatusOr<std::vector<std::string>> args = SplitRedisCliArgs(*line);
    if (!args.ok()) {
      std::printf("%s\n", std::string(args.status().message()).c_str());
      std::fflush(stdout);
      continue;
    }
    if (args->empty()) continue;
    if (interactive) {
      editor.AddHistory(*line);
      const std::string word = absl::AsciiStrToLower((*args)[0]);
      if (word == "quit" || word == "exit") break;
      if (word == "help") {
        std::fputs(kUsage, stdout);
        continue;
      }
    }
    Print(commands.Execute(*args), raw);
  }
  return 0;
}

}  // namespace
}  // namespace siftdb::sift_bf

int main(int argc, char** argv) { return siftdb::sift_bf::Run(argc, argv); }
