// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The filter mirror and its reader over TLS: the engine publishes through
// rediss:// to a real redis-server listening with --tls-port (a CA made by
// the test), and RemoteFilter reads it back through rediss:// with no false
// negative; a reader given the wrong CA is refused, naming the cause.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mirror/mirror_test_util.h"
#include "tests/support/paths.h"
#include "tests/support/redis_tls.h"
#include "tests/support/temp_dir.h"

namespace siftdb::test {
namespace mirror_tls_test {

// sift_probe with `args`; its exit status, and stdout then stderr.
int RunSiftProbe(const TempDir& io, const std::string& args,
                 std::string* output) {
  const std::string out = io.Join("probe.out");
  const std::string cmd = BinaryDir() + "/tools/sift_probe " + args +
                          " </dev/null >" + out + " 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  *output = ss.str();
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(MirrorTlsTest, EngineAndReaderOverTls) {
  SIFTDB_REQUIRE_REDIS_TLS();
  TempDir certs;
  auto files = MakeTestTlsFiles(certs.path());
  ASSERT_TRUE(files.ok()) << files.status();
  auto tls = StartTlsRedisServer(*files);
  ASSERT_TRUE(tls.ok()) << tls.status();
  const std::string url = absl::StrCat("rediss://", tls->tls_endpoint(),
                                       "?ca_cert=", files->ca_cert);

  TempDir dir;
  Options o = MirrorOptions({url}, "tls", RemoteFilterOptions::Mode::kSync);
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  std::vector<std::string> keys, absent;
  for (int i = 0; i < 3000; i++) {
    keys.push_back(TestKey(i));
    absent.push_back(AbsentKey(i));
    ASSERT_TRUE((*db)->Put(WriteOptions(), keys.back(), "v").ok());
  }
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }))
      << MirrorState(db->get());
  // The mirror really is in this server (read through its plain port).
  EXPECT_FALSE(RedisKeys(tls->server.get(), "*").empty());

  RemoteFilterReaderOptions ro;
  ro.endpoints = {url};
  auto reader = RemoteFilter::Open(ro, "tls");
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_TRUE(WaitUntil([&] { return CountNo(reader->get(), absent) > 0; }));
  absl::Status s;
  EXPECT_EQ(CountNo(reader->get(), keys, &s), 0u);
  EXPECT_TRUE(s.ok()) << s;

  // sift_probe takes the same URL.
  if (access((BinaryDir() + "/tools/sift_probe").c_str(), X_OK) == 0) {
    TempDir io;
    std::string out;
    const int rc = RunSiftProbe(io,
                                absl::StrCat("--redis='", url, "' --name=tls ",
                                             keys[5], " ", keys[2999]),
                                &out);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("maybe " + keys[5]), std::string::npos) << out;
    EXPECT_NE(out.find("status: OK"), std::string::npos) << out;
  }

  // A reader with the wrong CA is refused, and says why.
  ro.endpoints = {absl::StrCat("rediss://", tls->tls_endpoint(),
                               "?ca_cert=", files->other_ca_cert)};
  auto wrong = RemoteFilter::Open(ro, "tls");
  absl::Status ws = wrong.status();
  if (wrong.ok()) {
    std::vector<bool> answers;
    std::vector<std::string_view> one = {keys[0]};
    ws = (*wrong)->MayContainMany(one, &answers);
    // No false negative even then: an unreachable mirror answers "maybe".
    ASSERT_EQ(answers.size(), 1u);
    EXPECT_TRUE(answers[0]);
  }
  EXPECT_FALSE(ws.ok());
  EXPECT_NE(ws.message().find("certificate verify failed"), std::string::npos)
      << ws;
}

}  // namespace mirror_tls_test
}  // namespace siftdb::test
