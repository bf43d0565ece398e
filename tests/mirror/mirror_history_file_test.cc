// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// MIRROR-HISTORY (db/mirror/mirror_history.h, docs/redis_mirror.md §9):
// the record's exact bytes, and that every damaged form is refused (the
// engine then holds sync acknowledgements rather than trust it).

#include <string>

#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "db/mirror/mirror_history.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "tests/support/temp_dir.h"
#include "util/crc32c.h"

namespace siftdb::test {
namespace mirror_history_file_test {

MirrorHistory Sample() {
  MirrorHistory h;
  h.mirror_name = "orders";
  h.replid = "0123456789abcdef0123456789abcdef01234567";
  h.settled = true;
  return h;
}

// The format's test vector (also in docs/redis_mirror.md §9).
constexpr char kSampleBytes[] =
    "siftdb-mirror-history 1\n"
    "name 6f7264657273\n"
    "replid 0123456789abcdef0123456789abcdef01234567\n"
    "settled 1\n"
    "crc32c 27847495\n";

TEST(MirrorHistoryFileTest, SampleRecordHasTheDocumentedBytes) {
  EXPECT_EQ(EncodeMirrorHistory(Sample()), kSampleBytes);
  auto h = DecodeMirrorHistory(kSampleBytes);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(*h, Sample());
}

TEST(MirrorHistoryFileTest, RoundTripsEdgeValues) {
  for (const std::string& name :
       {std::string(), std::string("a b\n\0c", 6), std::string(300, '\xff')}) {
    for (const std::string& replid : {std::string(), std::string("ab")}) {
      for (bool settled : {false, true}) {
        MirrorHistory h{name, replid, settled};
        auto back = DecodeMirrorHistory(EncodeMirrorHistory(h));
        ASSERT_TRUE(back.ok()) << back.status();
        EXPECT_EQ(*back, h);
      }
    }
  }
}

TEST(MirrorHistoryFileTest, EveryTruncationIsRefused) {
  const std::string bytes = EncodeMirrorHistory(Sample());
  for (size_t n = 0; n < bytes.size(); n++) {
    auto h = DecodeMirrorHistory(std::string_view(bytes).substr(0, n));
    EXPECT_FALSE(h.ok()) << "prefix of " << n << " bytes decoded";
  }
}

TEST(MirrorHistoryFileTest, EveryFlippedBitIsRefused) {
  const std::string bytes = EncodeMirrorHistory(Sample());
  for (size_t i = 0; i < bytes.size(); i++) {
    for (int bit = 0; bit < 8; bit++) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(damaged[i] ^ (1 << bit));
      auto h = DecodeMirrorHistory(damaged);
      EXPECT_FALSE(h.ok()) << "byte " << i << " bit " << bit;
    }
  }
}

// A later format (or any record whose fields break the rules) is refused
// even with a correct crc32c.
std::string WithCrc(const std::string& body) {
  return body + absl::StrFormat("crc32c %08x\n",
                                crc32c::Value(body.data(), body.size()));
}

TEST(MirrorHistoryFileTest, WellSummedButForeignRecordsAreRefused) {
  const std::string name = "name 6f7264657273\n";
  const std::string replid = "replid 0123\n";
  // The baseline decodes, so each refusal below is the field's doing.
  ASSERT_TRUE(DecodeMirrorHistory(WithCrc("siftdb-mirror-history 1\n" + name +
                                          replid + "settled 0\n"))
                  .ok());
  for (const std::string& body : {
           "siftdb-mirror-history 2\n" + name + replid + "settled 0\n",
           "siftdb-mirror-history 1\n" + name + replid + "settled 2\n",
           "siftdb-mirror-history 1\n" + name + replid + "SETTLED 0\n",
           "siftdb-mirror-history 1\n" + name + "replid XYZ\n" + "settled 0\n",
           "siftdb-mirror-history 1\n" + name + "replid \n" + "settled 0\n",
           "siftdb-mirror-history 1\nname 6f7\n" + replid + "settled 0\n",
           "siftdb-mirror-history 1\nname 6F72\n" + replid + "settled 0\n",
           "siftdb-mirror-history 1\n" + name + replid + "settled 0\nextra 1\n",
           "siftdb-mirror-history 1\n" + name + replid,
       }) {
    EXPECT_FALSE(DecodeMirrorHistory(WithCrc(body)).ok()) << body;
  }
  EXPECT_FALSE(DecodeMirrorHistory(std::string(5000, '\n')).ok());
}

TEST(MirrorHistoryFileTest, FileIsWrittenReadAndOwnedByTheDb) {
  TempDir dir;
  Env* env = Env::Default();
  Options o;
  o.create_if_missing = true;
  {
    auto db = DB::Open(o, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
  }
  auto missing = ReadMirrorHistory(env, dir.path());
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  ASSERT_TRUE(WriteMirrorHistory(env, dir.path(), Sample()).ok());
  auto h = ReadMirrorHistory(env, dir.path());
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(*h, Sample());
  // A damaged file is DataLoss naming it.
  ASSERT_TRUE(WriteStringToFile(env, "garbage\n",
                                MirrorHistoryFileName(dir.path()), false)
                  .ok());
  auto damaged = ReadMirrorHistory(env, dir.path());
  EXPECT_TRUE(absl::IsDataLoss(damaged.status())) << damaged.status();
  EXPECT_NE(damaged.status().message().find("MIRROR-HISTORY"),
            std::string::npos);
  // Reopening and compacting keep it; DestroyDB removes it with the rest.
  {
    auto db = DB::Open(o, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
  }
  EXPECT_TRUE(env->FileExists(MirrorHistoryFileName(dir.path())));
  uint64_t number;
  FileType type;
  ASSERT_TRUE(ParseFileName("MIRROR-HISTORY", &number, &type));
  EXPECT_EQ(type, FileType::kMirrorHistoryFile);
  ASSERT_TRUE(DestroyDB(dir.path(), o).ok());
  EXPECT_FALSE(env->FileExists(dir.path()));
}

}  // namespace mirror_history_file_test
}  // namespace siftdb::test
