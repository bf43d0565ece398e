// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// redis-cli text conventions (tools/sift_bf/redis_cli_text.h) and the sift_bf
// tool end to end (batch mode on stdin, when the binary has been built).

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/redis_bloom/redis_bloom_test_util.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"
#include "tools/sift_bf/redis_cli_text.h"

namespace siftdb {
namespace cli_text_test {

std::vector<std::string> Split(std::string_view line) {
  absl::StatusOr<std::vector<std::string>> r = SplitRedisCliArgs(line);
  EXPECT_TRUE(r.ok()) << line;
  return r.ok() ? *r : std::vector<std::string>{};
}

TEST(RedisCliText, SplitsLikeRedisCli) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Split(""), V{});
  EXPECT_EQ(Split("   \t "), V{});
  EXPECT_EQ(Split("BF.ADD users alice"), (V{"BF.ADD", "users", "alice"}));
  EXPECT_EQ(Split("  set  \"a b\"   'c d' "), (V{"set", "a b", "c d"}));
  EXPECT_EQ(Split(R"(x "\x00\xff\x4A" "\n\r\t\b\a\"\\\q")"),
            (V{"x", std::string("\0\xff\x4a", 3), "\n\r\t\b\a\"\\q"}));
  EXPECT_EQ(Split(R"('it\'s' 'a\nb')"), (V{"it's", "a\\nb"}));
  EXPECT_EQ(Split(R"("" '')"), (V{"", ""}));
  EXPECT_EQ(Split(R"(a"b c")"), (V{"ab c"}));
  EXPECT_EQ(Split(R"("\x4")"), (V{"x4"}));  // not two hex digits: \x -> x
  for (std::string_view bad :
       {R"("abc)", R"('abc)", R"("abc"d)", R"('a'b)", R"(x "a\)"}) {
    absl::StatusOr<std::vector<std::string>> r = SplitRedisCliArgs(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(), "Invalid argument(s)");
  }
}

TEST(RedisCliText, FormatsLikeRedisCli) {
  EXPECT_EQ(FormatReplyTty(RedisReply::Integer(1)), "(integer) 1\n");
  EXPECT_EQ(FormatReplyTty(RedisReply::Nil()), "(nil)\n");
  EXPECT_EQ(FormatReplyTty(RedisReply::Status("OK")), "OK\n");
  EXPECT_EQ(FormatReplyTty(RedisReply::Error("ERR not found")),
            "(error) ERR not found\n");
  EXPECT_EQ(FormatReplyTty(RedisReply::String(std::string("a\x01\xff\"\n", 5))),
            "\"a\\x01\\xff\\\"\\n\"\n");
  EXPECT_EQ(FormatReplyTty(RedisReply::Array({})), "(empty array)\n");
  RedisReply nested = RedisReply::Array(
      {RedisReply::Integer(1),
       RedisReply::Array({RedisReply::Integer(2),
                          RedisReply::Array({RedisReply::Integer(3),
                                             RedisReply::Integer(4)})}),
       RedisReply::String("x"), RedisReply::Array({})});
  EXPECT_EQ(FormatReplyTty(nested),
            "1) (integer) 1\n"
            "2) 1) (integer) 2\n"
            "   2) 1) (integer) 3\n"
            "      2) (integer) 4\n"
            "3) \"x\"\n"
            "4) (empty array)\n");
  std::vector<RedisReply> eleven;
  for (int i = 1; i <= 11; i++) eleven.push_back(RedisReply::Integer(i));
  std::string tty = FormatReplyTty(RedisReply::Array(eleven));
  EXPECT_EQ(tty.substr(0, 15), " 1) (integer) 1");
  EXPECT_NE(tty.find("\n11) (integer) 11\n"), std::string::npos);
  EXPECT_EQ(FormatReplyRaw(nested), "1\n2\n3\n4\nx\n\n");
  EXPECT_EQ(FormatReplyRaw(RedisReply::Nil()), "\n");
  EXPECT_EQ(FormatReplyRaw(RedisReply::Error("ERR x")), "ERR x\n\n");
}

TEST(RedisCliText, PrintedBinaryStringsCanBeTypedBack) {
  std::mt19937 rng(1);
  for (int round = 0; round < 200; round++) {
    std::string s(rng() % 40, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    std::string shown = FormatReplyTty(RedisReply::String(s));
    shown.pop_back();  // newline
    std::vector<std::string> back = Split("BF.LOADCHUNK k 1 " + shown);
    ASSERT_EQ(back.size(), 4u) << shown;
    EXPECT_EQ(back[3], s);
  }
}

class SiftBfTool : public test::RedisTest {};

TEST_F(SiftBfTool, BatchModeAnswersEachLineInOrder) {
  const std::string tool = test::BinaryDir() + "/tools/sift_bf";
  ASSERT_EQ(0, access(tool.c_str(), X_OK)) << "sift_bf not built at " << tool;
  test::TempDir dir;
  std::ofstream(dir.Join("in.txt")) << "BF.RESERVE f 0.1 10 NONSCALING\n"
                                    << "\n"
                                    << "BF.MADD f a b \"c d\"\n"
                                    << "BF.EXISTS f \"c d\"\n"
                                    << "BF.ADD f \"unbalanced\n"
                                    << "BF.INFO f EXPANSION\n"
                                    << "BF.RESERVE f 0.1 10\n"
                                    << "SET plain \"x\\x00y\"\n"
                                    << "GET plain\n";
  std::string cmd =
      absl::StrCat(tool, " --redis=", server_->endpoint(), " --no-raw < ",
                   dir.Join("in.txt"), " > ", dir.Join("out.txt"));
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(dir.Join("out.txt"));
  std::string out((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  EXPECT_EQ(out,
            "OK\n"
            "1) (integer) 1\n2) (integer) 1\n3) (integer) 1\n"
            "(integer) 1\n"
            "Invalid argument(s)\n"
            "1) (nil)\n"
            "(error) ERR item exists\n"
            "OK\n"
            "\"x\\x00y\"\n");
  // One command from the command line; an error reply exits with 1.
  std::string one = absl::StrCat(tool, " --redis=", server_->endpoint(),
                                 " --raw BF.CARD f > ", dir.Join("one.txt"));
  EXPECT_EQ(std::system(one.c_str()), 0);
  std::ifstream one_in(dir.Join("one.txt"));
  std::string one_out((std::istreambuf_iterator<char>(one_in)),
                      std::istreambuf_iterator<char>());
  EXPECT_EQ(one_out, "3\n");
  std::string bad = absl::StrCat(tool, " --redis=", server_->endpoint(),
                                 " BF.INFO nokey > /dev/null");
  EXPECT_NE(std::system(bad.c_str()), 0);
}

}  // namespace cli_text_test
}  // namespace siftdb
