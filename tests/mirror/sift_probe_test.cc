// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// sift_probe, black box: keys as arguments and on stdin (answered in input
// order), the summary on stderr, and its exit codes.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "siftdb/slice_transform.h"
#include "siftdb/write_batch.h"
#include "tests/mirror/mirror_test_util.h"
#include "tests/support/paths.h"

namespace siftdb::test {
namespace sift_probe_test {

std::string SiftProbeBinary() {
  const std::string bin = BinaryDir() + "/tools/sift_probe";
  return access(bin.c_str(), X_OK) == 0 ? bin : "";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct ProbeRun {
  int exit_code = -1;
  std::string out, err;
};

ProbeRun RunProbe(const TempDir& dir, const std::string& args,
                  const std::string& stdin_text = "") {
  const std::string in = dir.Join("in.txt"), out = dir.Join("out.txt"),
                    err = dir.Join("err.txt");
  std::ofstream(in) << stdin_text;
  const std::string cmd =
      SiftProbeBinary() + " " + args + " < " + in + " > " + out + " 2> " + err;
  int status = std::system(cmd.c_str());
  ProbeRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

TEST(SiftProbeTest, AnswersKeysFromArgumentsAndStdin) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_FALSE(SiftProbeBinary().empty())
      << "sift_probe is not built under " << BinaryDir();
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  TempDir dbdir, io;
  Options o = MirrorOptions({(*server)->endpoint()}, "probe",
                            RemoteFilterOptions::Mode::kSync);
  auto db = DB::Open(o, dbdir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  WriteBatch b;
  for (int i = 0; i < 2000; i++) b.Put(TestKey(i), "v");
  ASSERT_TRUE((*db)->Write(WriteOptions(), &b).ok());
  ASSERT_TRUE(Impl(db->get())->FlushMemTable().ok());
  ASSERT_TRUE(Impl(db->get())->WaitForBackgroundWork().ok());

  const std::string flags =
      absl::StrFormat("--redis=%s --name=probe", (*server)->endpoint());
  ProbeRun r = RunProbe(io, flags + " " + TestKey(7) + " " + TestKey(1999));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            absl::StrFormat("maybe %s\nmaybe %s\n", TestKey(7), TestKey(1999)));
  EXPECT_NE(r.err.find("2 keys: 2 maybe, 0 no"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("status: OK"), std::string::npos) << r.err;

  // stdin: answered in order, in batches.
  std::string input, expected_present;
  std::vector<std::string> order;
  for (int i = 0; i < 1500; i++) {
    std::string k = i % 2 == 0 ? TestKey(i) : AbsentKey(i);
    input += k + "\n";
    order.push_back(k);
  }
  r = RunProbe(io, flags + " --batch=100", input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n');
  ASSERT_EQ(lines.size(), order.size() + 1);  // trailing newline
  size_t no = 0;
  for (size_t i = 0; i < order.size(); i++) {
    if (i % 2 == 0) {
      EXPECT_EQ(lines[i], "maybe " + order[i]);
    } else {
      EXPECT_TRUE(lines[i] == "maybe " + order[i] ||
                  lines[i] == "no " + order[i])
          << lines[i];
      no += lines[i] == "no " + order[i] ? 1 : 0;
    }
  }
  EXPECT_GT(no, 700u);
  EXPECT_NE(r.err.find("1500 keys"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("15 batches"), std::string::npos) << r.err;

  // Exit codes: bad usage 2, unreachable Redis 1.
  r = RunProbe(io, "--redis=127.0.0.1:1");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = RunProbe(io, "--bogus");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = RunProbe(io, absl::StrFormat("--redis=127.0.0.1:%d --name=probe k",
                                   RedisServer::PickFreePort()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("UNAVAILABLE"), std::string::npos) << r.err;
}

// --prefix: the inputs are prefixes of the DB's extractor; --extractor
// names it (another name: "maybe" with the reason); --extractor alone is a
// usage error.
TEST(SiftProbeTest, AnswersPrefixes) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_FALSE(SiftProbeBinary().empty());
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  TempDir dbdir, io;
  Options o = MirrorOptions({(*server)->endpoint()}, "probepfx",
                            RemoteFilterOptions::Mode::kSync);
  o.prefix_extractor = NewFixedPrefixTransform(7);  // "key0001": 10^4 keys
  auto db = DB::Open(o, dbdir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  WriteBatch b;
  for (int i = 0; i < 30000; i += 7) b.Put(TestKey(i), "v");
  ASSERT_TRUE((*db)->Write(WriteOptions(), &b).ok());
  ASSERT_TRUE(Impl(db->get())->FlushMemTable().ok());
  ASSERT_TRUE(Impl(db->get())->WaitForBackgroundWork().ok());

  const std::string flags = absl::StrFormat(
      "--redis=%s --name=probepfx --prefix", (*server)->endpoint());
  // key0000..key0002 present; zzz0001 beyond every table and not in the
  // (empty) MemTable.
  ProbeRun r = RunProbe(io, flags + " --extractor=siftdb.FixedPrefix.7",
                        "key0000\nkey0002\nzzz0001\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "maybe key0000\nmaybe key0002\nno zzz0001\n");
  EXPECT_NE(r.err.find("3 prefixes: 2 maybe, 1 no"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("status: OK"), std::string::npos) << r.err;
  r = RunProbe(io, flags + " --extractor=siftdb.FixedPrefix.3 key0003");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "maybe key0003\n");
  EXPECT_NE(r.err.find("not of siftdb.FixedPrefix.3"), std::string::npos)
      << r.err;
  r = RunProbe(io, absl::StrFormat("--redis=%s --name=probepfx "
                                   "--extractor=siftdb.FixedPrefix.7 k",
                                   (*server)->endpoint()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

}  // namespace sift_probe_test
}  // namespace siftdb::test
