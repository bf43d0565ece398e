// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// sift_bf: a redis-cli-like shell for siftdb's Redis-backed Bloom filters.
//
//   sift_bf [--redis=HOST:PORT] [--user=U] [--password=P] [--db=N]
//           [--raw | --no-raw] [--retry=SECONDS] [COMMAND [ARG ...]]
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
// reply is an error, or when Redis cannot be reached.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "redis/bloom/redis_bloom_command.h"
#include "redis/client/redis_client.h"
#include "tools/sift_bf/line_editor.h"
#include "tools/sift_bf/redis_cli_text.h"

namespace siftdb::sift_bf {
namespace {

const char kUsage[] =
    "usage: sift_bf [--redis=HOST:PORT] [--user=U] [--password=P] [--db=N]\n"
    "               [--raw | --no-raw] [--retry=SECONDS] [COMMAND [ARG ...]]\n"
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
  std::string endpoint = "127.0.0.1:6379";
  std::string user;
  std::string password;
  int db = 0;
  int raw = -1;  // -1: raw unless stdout is a terminal
  double retry_seconds = 5;
  std::vector<std::string> command;
};

bool TakeValue(const std::string& arg, const std::string& name, int* i,
               int argc, char** argv, std::string* out) {
  if (arg == name) {
    if (*i + 1 >= argc) {
      std::fprintf(stderr, "sift_bf: %s needs a value\n", name.c_str());
      std::exit(2);
    }
    *out = argv[++*i];
    return true;
  }
  if (arg.rfind(name + "=", 0) == 0) {
    *out = arg.substr(name.size() + 1);
    return true;
  }
  return false;
}

// Flags come first; the first other argument starts the command (so that
// command arguments such as -0.01 are never taken for flags).
Flags ParseFlags(int argc, char** argv) {
  Flags f;
  int i = 1;
  for (; i < argc; i++) {
    std::string a = argv[i];
    std::string v;
    if (a == "--") {
      i++;
      break;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (TakeValue(a, "--redis", &i, argc, argv, &v)) {
      f.endpoint = v;
    } else if (TakeValue(a, "--user", &i, argc, argv, &v)) {
      f.user = v;
    } else if (TakeValue(a, "--password", &i, argc, argv, &v)) {
      f.password = v;
    } else if (TakeValue(a, "--db", &i, argc, argv, &v)) {
      if (!absl::SimpleAtoi(v, &f.db)) {
        std::fprintf(stderr, "sift_bf: bad --db %s\n", v.c_str());
        std::exit(2);
      }
    } else if (TakeValue(a, "--retry", &i, argc, argv, &v)) {
      if (!absl::SimpleAtod(v, &f.retry_seconds) || f.retry_seconds < 0) {
        std::fprintf(stderr, "sift_bf: bad --retry %s\n", v.c_str());
        std::exit(2);
      }
    } else if (a == "--raw") {
      f.raw = 1;
    } else if (a == "--no-raw") {
      f.raw = 0;
    } else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "sift_bf: unknown flag %s\n%s", a.c_str(), kUsage);
      std::exit(2);
    } else {
      break;
    }
  }
  for (; i < argc; i++) f.command.push_back(argv[i]);
  return f;
}

void Print(const RedisReply& reply, bool raw) {
  std::string out = raw ? FormatReplyRaw(reply) : FormatReplyTty(reply);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

int Run(int argc, char** argv) {
  Flags flags = ParseFlags(argc, argv);
  RedisClientOptions options;
  options.endpoint = flags.endpoint;
  options.username = flags.user;
  options.password = flags.password;
  options.database = flags.db;
  options.retry_deadline = absl::Seconds(flags.retry_seconds);
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
