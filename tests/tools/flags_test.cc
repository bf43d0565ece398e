// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Unit tests of the tools' flags front end (tools/common/flags.h), with
// flags defined here: only flags from this file belong to the test spec.

#include "tools/common/flags.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(std::string, ft_name, "", "a string flag");
ABSL_FLAG(int32_t, ft_count, 7, "a number flag");
ABSL_FLAG(bool, ft_verbose, false, "a bool flag");

namespace siftdb::tools {
namespace flags_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::SetFlag(&FLAGS_ft_name, "");
    absl::SetFlag(&FLAGS_ft_count, 7);
    absl::SetFlag(&FLAGS_ft_verbose, false);
    spec_.program = "ft";
    spec_.usage = "usage: ft [flags]\n";
    spec_.flag_sources = {"tests/tools/flags_test"};
  }

  // Parses {"ft", args...}; *stderr_text gets what it printed there.
  std::optional<ToolArgs> Parse(std::vector<std::string> args, int* exit_code,
                                std::string* err = nullptr) {
    args.insert(args.begin(), "ft");
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    ::testing::internal::CaptureStderr();
    ::testing::internal::CaptureStdout();
    std::optional<ToolArgs> parsed = ParseToolFlags(
        spec_, static_cast<int>(argv.size()), argv.data(), exit_code);
    out_ = ::testing::internal::GetCapturedStdout();
    const std::string captured = ::testing::internal::GetCapturedStderr();
    if (err != nullptr) *err = captured;
    return parsed;
  }

  ToolFlagsSpec spec_;
  std::string out_;
};

TEST_F(FlagsTest, ParsesEveryForm) {
  int code = -1;
  auto args = Parse({"--ft_name=a", "-ft_count", "-3", "pos", "--ft_verbose",
                     "-1", "--", "--ft_name=b"},
                    &code);
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(absl::GetFlag(FLAGS_ft_name), "a");
  EXPECT_EQ(absl::GetFlag(FLAGS_ft_count), -3);
  EXPECT_TRUE(absl::GetFlag(FLAGS_ft_verbose));
  EXPECT_THAT(args->positional, ElementsAre("pos", "-1", "--ft_name=b"));
  EXPECT_TRUE(args->WasSet("ft_count"));
  EXPECT_FALSE(args->WasSet("ft_other"));
  args = Parse({"--noft_verbose"}, &code);
  ASSERT_TRUE(args.has_value());
  EXPECT_FALSE(absl::GetFlag(FLAGS_ft_verbose));
}

TEST_F(FlagsTest, HelpAndVersionExitZero) {
  int code = -1;
  EXPECT_FALSE(Parse({"--help"}, &code).has_value());
  EXPECT_EQ(code, kExitOk);
  EXPECT_THAT(out_, HasSubstr("usage: ft"));
  EXPECT_THAT(out_, HasSubstr("--ft_count"));
  EXPECT_THAT(out_, ::testing::Not(HasSubstr("--ldb")));
  EXPECT_FALSE(Parse({"--version"}, &code).has_value());
  EXPECT_EQ(code, kExitOk);
  EXPECT_THAT(out_, HasSubstr("ft (siftdb) "));
}

TEST_F(FlagsTest, UsageErrorsExitTwoWithOneLine) {
  const std::vector<std::vector<std::string>> cases = {
      {"--no_such_flag"}, {"--ft_count=abc"},     {"--ft_count=99999999999"},
      {"--ft_count"},     {"--ft_verbose=maybe"},
  };
  for (const auto& c : cases) {
    int code = -1;
    std::string err;
    EXPECT_FALSE(Parse(c, &code, &err).has_value()) << c[0];
    EXPECT_EQ(code, kExitUsage) << c[0];
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_THAT(err, HasSubstr(c[0].substr(2, c[0].find('=') - 2))) << err;
  }
}

TEST_F(FlagsTest, RefusedFlagNamesTheReason) {
  spec_.refused = {{"ttl", "no TTL here"}};
  int code = -1;
  std::string err;
  EXPECT_FALSE(Parse({"--ttl"}, &code, &err).has_value());
  EXPECT_EQ(code, kExitUsage);
  EXPECT_THAT(err, HasSubstr("--ttl is not supported: no TTL here"));
}

TEST_F(FlagsTest, PositionalRefusedWhenNoneTaken) {
  spec_.takes_positional = false;
  int code = -1;
  std::string err;
  EXPECT_FALSE(Parse({"extra"}, &code, &err).has_value());
  EXPECT_EQ(code, kExitUsage);
  EXPECT_THAT(err, HasSubstr("unexpected argument 'extra'"));
}

// Bug: arguments after "--" were taken as positional even by a tool that
// takes none, which then ignored them silently.
TEST_F(FlagsTest, PositionalAfterDoubleDashRefusedWhenNoneTaken) {
  spec_.takes_positional = false;
  int code = -1;
  std::string err;
  EXPECT_FALSE(Parse({"--ft_verbose", "--", "extra"}, &code, &err).has_value());
  EXPECT_EQ(code, kExitUsage);
  EXPECT_THAT(err, HasSubstr("unexpected argument 'extra'"));
  // "--" alone is still fine.
  EXPECT_TRUE(Parse({"--"}, &code).has_value());
}

}  // namespace flags_test
}  // namespace siftdb::tools
