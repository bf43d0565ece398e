// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/testing/fault_injection_env.h"

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace fault_injection_env_test {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

class FaultInjectionEnvTest : public ::testing::Test {
 protected:
  FaultInjectionEnvTest() : env_(Env::Default()) {}

  std::string Path(const std::string& name) { return dir_.Join(name); }

  // Contents as the base Env sees them; "<missing>" when absent.
  std::string Contents(const std::string& name) {
    auto data = ReadFileToString(Env::Default(), Path(name));
    return data.ok() ? *data : "<missing>";
  }

  // Creates name with data, synced and with its directory entry synced.
  void WriteDurable(const std::string& name, const std::string& data) {
    auto f = env_.NewWritableFile(Path(name));
    ASSERT_TRUE(f.ok()) << f.status();
    ASSERT_TRUE((*f)->Append(data).ok());
    ASSERT_TRUE((*f)->Sync().ok());
    ASSERT_TRUE((*f)->Close().ok());
    ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  }

  test::TempDir dir_;
  FaultInjectionEnv env_;
};

TEST_F(FaultInjectionEnvTest, PowerLossDropsExactlyUnsyncedBytes) {
  auto f = env_.NewWritableFile(Path("000005.log"));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE((*f)->Append(std::string(100, 'a')).ok());
  ASSERT_TRUE((*f)->Sync().ok());
  EXPECT_EQ(100u, env_.SyncedSize(Path("000005.log")));
  ASSERT_TRUE((*f)->Append(std::string(50, 'b')).ok());
  ASSERT_TRUE((*f)->Flush().ok());
  EXPECT_EQ(std::string(100, 'a') + std::string(50, 'b'),
            Contents("000005.log"));

  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ(std::string(100, 'a'), Contents("000005.log"));

  // The writer from before is dead.
  absl::Status s = (*f)->Append("x");
  EXPECT_EQ(absl::StatusCode::kFailedPrecondition, s.code());
  EXPECT_THAT(std::string(s.message()), HasSubstr("power loss"));
  EXPECT_FALSE((*f)->Sync().ok());
  EXPECT_EQ(std::string(100, 'a'), Contents("000005.log"));
}

TEST_F(FaultInjectionEnvTest, BufferedButUnflushedBytesAreAlsoLost) {
  auto f = env_.NewWritableFile(Path("a"));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE((*f)->Append("synced").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE((*f)->Append("buffered").ok());  // never flushed
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("synced", Contents("a"));
}

TEST_F(FaultInjectionEnvTest, NeverSyncedFileIsEmptied) {
  auto f = env_.NewWritableFile(Path("a"));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE((*f)->Append("data").ok());
  ASSERT_TRUE((*f)->Close().ok());
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("", Contents("a"));
}

TEST_F(FaultInjectionEnvTest, FileWithoutDirSyncDisappears) {
  auto f = env_.NewWritableFile(Path("000007.sst"));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("table").ok());
  ASSERT_TRUE((*f)->Sync().ok());  // data durable, entry not
  ASSERT_TRUE((*f)->Close().ok());
  WriteDurable("other", "x");  // its SyncDir makes 000007.sst durable too

  auto g = env_.NewWritableFile(Path("000008.sst"));
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE((*g)->Append("table").ok());
  ASSERT_TRUE((*g)->Sync().ok());
  ASSERT_TRUE((*g)->Close().ok());

  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("table", Contents("000007.sst"));
  EXPECT_EQ("<missing>", Contents("000008.sst"));
  auto children = env_.GetChildren(dir_.path());
  ASSERT_TRUE(children.ok());
  EXPECT_THAT(*children, UnorderedElementsAre("000007.sst", "other"));
}

TEST_F(FaultInjectionEnvTest, SyncDirOfAnotherDirectoryDoesNotHelp) {
  const std::string sub = Path("sub");
  ASSERT_TRUE(env_.CreateDir(sub).ok());
  auto f = env_.NewWritableFile(sub + "/f");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path() + "/").ok());  // the parent
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_FALSE(env_.FileExists(sub + "/f"));
  EXPECT_TRUE(env_.IsDirectory(sub));  // CreateDir: durable at once
}

TEST_F(FaultInjectionEnvTest, AppendableFileKeepsExistingContents) {
  WriteDurable("log", "old");
  auto f = env_.NewAppendableFile(Path("log"));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("+new").ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ("old+new", Contents("log"));
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("old", Contents("log"));
}

TEST_F(FaultInjectionEnvTest, RewrittenFileLosesOldContents) {
  WriteDurable("CURRENT", "MANIFEST-000001\n");
  auto f = env_.NewWritableFile(Path("CURRENT"));  // truncates
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("MANIFEST-000002\n").ok());
  ASSERT_TRUE((*f)->Close().ok());
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("", Contents("CURRENT"));  // one legal outcome of a crash
}

TEST_F(FaultInjectionEnvTest, RenameWithoutDirSyncIsUndone) {
  WriteDurable("CURRENT", "MANIFEST-000001\n");
  auto f = env_.NewWritableFile(Path("CURRENT.dbtmp"));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("MANIFEST-000002\n").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE((*f)->Close().ok());
  ASSERT_TRUE(env_.RenameFile(Path("CURRENT.dbtmp"), Path("CURRENT")).ok());
  EXPECT_EQ("MANIFEST-000002\n", Contents("CURRENT"));

  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  // The old CURRENT is back; the temp file, never durable, is gone.
  EXPECT_EQ("MANIFEST-000001\n", Contents("CURRENT"));
  EXPECT_EQ("<missing>", Contents("CURRENT.dbtmp"));
}

TEST_F(FaultInjectionEnvTest, RenameFollowedByDirSyncSurvives) {
  WriteDurable("CURRENT", "MANIFEST-000001\n");
  auto f = env_.NewWritableFile(Path("CURRENT.dbtmp"));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("MANIFEST-000002\n").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE((*f)->Close().ok());
  ASSERT_TRUE(env_.RenameFile(Path("CURRENT.dbtmp"), Path("CURRENT")).ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("MANIFEST-000002\n", Contents("CURRENT"));
  EXPECT_EQ("<missing>", Contents("CURRENT.dbtmp"));
}

TEST_F(FaultInjectionEnvTest, RenameToNewNameIsUndone) {
  WriteDurable("a", "contents");
  ASSERT_TRUE(env_.RenameFile(Path("a"), Path("b")).ok());
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("contents", Contents("a"));
  EXPECT_EQ("<missing>", Contents("b"));
}

TEST_F(FaultInjectionEnvTest, SyncAfterRenameFollowsTheFile) {
  auto f = env_.NewWritableFile(Path("a"));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE((*f)->Append("12345").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE(env_.RenameFile(Path("a"), Path("b")).ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  EXPECT_EQ(5u, env_.SyncedSize(Path("b")));
  EXPECT_EQ(std::nullopt, env_.SyncedSize(Path("a")));
  ASSERT_TRUE((*f)->Append("678").ok());
  ASSERT_TRUE((*f)->Close().ok());
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("12345", Contents("b"));
}

TEST_F(FaultInjectionEnvTest, SecondPowerLossChangesNothing) {
  WriteDurable("a", "abc");
  auto f = env_.NewAppendableFile(Path("a"));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("def").ok());
  ASSERT_TRUE((*f)->Flush().ok());
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("abc", Contents("a"));
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("abc", Contents("a"));
  // Files opened afterwards are tracked afresh.
  auto g = env_.NewAppendableFile(Path("a"));
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE((*g)->Append("ghi").ok());
  ASSERT_TRUE((*g)->Sync().ok());
  ASSERT_TRUE((*g)->Append("jkl").ok());
  ASSERT_TRUE((*g)->Close().ok());
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("abcghi", Contents("a"));
}

TEST_F(FaultInjectionEnvTest, RemovedFilesStayRemoved) {
  WriteDurable("a", "x");
  ASSERT_TRUE(env_.RemoveFile(Path("a")).ok());
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("<missing>", Contents("a"));
}

TEST_F(FaultInjectionEnvTest, InjectedAppendErrorWritesNothing) {
  auto f = env_.NewWritableFile(Path("000005.log"));
  ASSERT_TRUE(f.ok());
  env_.InjectNoSpace(FaultOp::kAppend, ".log");
  absl::Status s = (*f)->Append("lost");
  EXPECT_EQ(absl::StatusCode::kResourceExhausted, s.code());
  EXPECT_EQ("injected ENOSPC: append " + Path("000005.log"), s.message());
  EXPECT_EQ(1u, env_.InjectedErrorCount());
  env_.ClearErrors();
  ASSERT_TRUE((*f)->Append("kept").ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ("kept", Contents("000005.log"));
}

TEST_F(FaultInjectionEnvTest, SkipAndTimes) {
  auto f = env_.NewWritableFile(Path("f"));
  ASSERT_TRUE(f.ok());
  env_.InjectIoError(FaultOp::kSync, "f", /*skip_first_n=*/2, /*times=*/3);
  std::vector<bool> ok;
  for (int i = 0; i < 8; i++) ok.push_back((*f)->Sync().ok());
  EXPECT_EQ(
      (std::vector<bool>{true, true, false, false, false, true, true, true}),
      ok);
  EXPECT_EQ(3u, env_.InjectedErrorCount());
}

TEST_F(FaultInjectionEnvTest, InjectedSyncLeavesDataUnsynced) {
  auto f = env_.NewWritableFile(Path("f"));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE((*f)->Append("abc").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE((*f)->Append("def").ok());
  env_.InjectIoError(FaultOp::kSync, "f");
  absl::Status s = (*f)->Sync();
  EXPECT_EQ(absl::StatusCode::kInternal, s.code());
  EXPECT_EQ("injected EIO: sync " + Path("f"), s.message());
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  EXPECT_EQ("abc", Contents("f"));
}

TEST_F(FaultInjectionEnvTest, EveryOperationClassCanFail) {
  WriteDurable("r", "readable");
  env_.InjectIoError(FaultOp::kAll, dir_.path());

  EXPECT_FALSE(env_.NewWritableFile(Path("w")).ok());
  EXPECT_FALSE(env_.NewAppendableFile(Path("w")).ok());
  EXPECT_FALSE(env_.CreateDir(Path("d")).ok());
  EXPECT_FALSE(env_.NewSequentialFile(Path("r")).ok());
  EXPECT_FALSE(env_.NewRandomAccessFile(Path("r")).ok());
  EXPECT_FALSE(env_.RenameFile(Path("r"), Path("s")).ok());
  EXPECT_FALSE(env_.RemoveFile(Path("r")).ok());
  EXPECT_FALSE(env_.SyncDir(dir_.path()).ok());
  EXPECT_FALSE(env_.LockFile(Path("LOCK")).ok());
  EXPECT_EQ(9u, env_.InjectedErrorCount());
  EXPECT_EQ("readable", Contents("r"));  // nothing happened
  EXPECT_FALSE(env_.FileExists(Path("s")));

  // Reads on an already open file.
  env_.ClearErrors();
  auto seq = env_.NewSequentialFile(Path("r"));
  auto ra = env_.NewRandomAccessFile(Path("r"));
  ASSERT_TRUE(seq.ok() && ra.ok());
  env_.InjectIoError(FaultOp::kRead, "/r");
  char scratch[16];
  std::string_view piece;
  absl::Status s = (*seq)->Read(4, &piece, scratch);
  EXPECT_EQ("injected EIO: read " + Path("r"), s.message());
  EXPECT_FALSE((*seq)->Skip(1).ok());
  EXPECT_FALSE((*ra)->Read(0, 4, &piece, scratch).ok());
  env_.ClearErrors();
  ASSERT_TRUE((*ra)->Read(0, 4, &piece, scratch).ok());
  EXPECT_EQ("read", piece);
}

TEST_F(FaultInjectionEnvTest, RulesMatchOnlyTheirOpsAndPaths) {
  env_.InjectNoSpace(FaultOp::kAppend | FaultOp::kSync, "000009");
  auto f = env_.NewWritableFile(Path("000005.log"));
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE((*f)->Append("x").ok());
  EXPECT_TRUE((*f)->Sync().ok());
  auto g = env_.NewWritableFile(Path("000009.sst"));  // create: not listed
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE((*g)->Append("x").ok());
  EXPECT_FALSE((*g)->Flush().ok());  // flush counts as append
  EXPECT_FALSE((*g)->Sync().ok());
  EXPECT_EQ(3u, env_.InjectedErrorCount());
}

TEST_F(FaultInjectionEnvTest, RenameRuleMatchesEitherName) {
  WriteDurable("a", "x");
  env_.InjectIoError(FaultOp::kRename, "/CURRENT", 0, 1);
  absl::Status s = env_.RenameFile(Path("a"), Path("CURRENT"));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("injected EIO: rename " + Path("a") + " -> "));
  EXPECT_TRUE(env_.FileExists(Path("a")));
}

TEST_F(FaultInjectionEnvTest, InactiveFilesystemFailsWritesNotReads) {
  WriteDurable("r", "readable");
  auto f = env_.NewWritableFile(Path("w"));
  ASSERT_TRUE(f.ok());
  env_.SetFilesystemActive(false);
  EXPECT_FALSE(env_.IsFilesystemActive());

  absl::Status s = (*f)->Append("x");
  EXPECT_EQ(absl::StatusCode::kInternal, s.code());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("filesystem inactive (simulated dead disk): append"));
  EXPECT_FALSE((*f)->Flush().ok());
  EXPECT_FALSE((*f)->Sync().ok());
  EXPECT_FALSE(env_.NewWritableFile(Path("w2")).ok());
  EXPECT_FALSE(env_.RenameFile(Path("r"), Path("r2")).ok());
  EXPECT_FALSE(env_.RemoveFile(Path("r")).ok());
  EXPECT_FALSE(env_.SyncDir(dir_.path()).ok());
  EXPECT_FALSE(env_.CreateDir(Path("d")).ok());
  EXPECT_EQ(0u, env_.InjectedErrorCount());

  auto data = ReadFileToString(&env_, Path("r"));
  ASSERT_TRUE(data.ok());
  EXPECT_EQ("readable", *data);
  EXPECT_TRUE(env_.GetChildren(dir_.path()).ok());
  EXPECT_TRUE(env_.LockFile(Path("LOCK")).ok());

  env_.SetFilesystemActive(true);
  EXPECT_TRUE((*f)->Append("y").ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ("y", Contents("w"));
}

TEST_F(FaultInjectionEnvTest, ConcurrentWritersAndPowerLoss) {
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([this, t] {
      auto f = env_.NewWritableFile(Path("f" + std::to_string(t)));
      ASSERT_TRUE(f.ok());
      for (int i = 0; i < 200; i++) {
        ASSERT_TRUE((*f)->Append(std::string(10, 'a' + t)).ok());
        if (i % 10 == 9) {
          ASSERT_TRUE((*f)->Sync().ok());
        }
      }
      ASSERT_TRUE((*f)->Append("tail").ok());
      ASSERT_TRUE((*f)->Close().ok());
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(env_.SimulatePowerLoss().ok());
  for (int t = 0; t < kThreads; t++) {
    EXPECT_EQ(std::string(2000, 'a' + t), Contents("f" + std::to_string(t)));
  }
}

}  // namespace fault_injection_env_test
}  // namespace siftdb
