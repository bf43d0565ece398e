// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/version_edit.h"

#include "db/filename.h"
#include "gtest/gtest.h"

namespace siftdb {
namespace version_edit_test {

std::string Key(std::string_view user, SequenceNumber seq, ValueType t) {
  std::string k;
  AppendInternalKey(&k, user, seq, t);
  return k;
}

void TestEncodeDecode(const VersionEdit& edit) {
  std::string encoded, encoded2;
  edit.EncodeTo(&encoded);
  VersionEdit parsed;
  ASSERT_TRUE(parsed.DecodeFrom(encoded).ok());
  parsed.EncodeTo(&encoded2);
  EXPECT_EQ(encoded, encoded2);
  EXPECT_EQ(edit.DebugString(), parsed.DebugString());
}

TEST(VersionEditTest, EncodeDecode) {
  static const uint64_t kBig = 1ull << 50;
  VersionEdit edit;
  for (int i = 0; i < 4; i++) {
    TestEncodeDecode(edit);
    edit.AddFile(3, kBig + 300 + i, kBig + 400 + i,
                 Key("foo", kBig + 500 + i, kTypeValue),
                 Key("zoo", kBig + 600 + i, kTypeDeletion));
    edit.RemoveFile(4, kBig + 700 + i);
    edit.SetCompactPointer(i, Key("x", kBig + 900 + i, kTypeValue));
  }
  edit.SetComparatorName("foo");
  edit.SetLogNumber(kBig + 100);
  edit.SetNextFile(kBig + 200);
  edit.SetLastSequence(kBig + 1000);
  TestEncodeDecode(edit);
}

TEST(VersionEditTest, DamagedEditsAreRejectedNeverMisread) {
  VersionEdit edit;
  edit.SetComparatorName("siftdb.BytewiseComparator");
  edit.SetLogNumber(5);
  edit.AddFile(1, 7, 1000, Key("a", 1, kTypeValue), Key("b", 2, kTypeValue));
  std::string encoded;
  edit.EncodeTo(&encoded);
  // Every strict prefix that cuts a field is an error naming the field.
  int errors = 0;
  for (size_t len = 0; len < encoded.size(); len++) {
    VersionEdit parsed;
    if (!parsed.DecodeFrom(std::string_view(encoded).substr(0, len)).ok()) {
      errors++;
    }
  }
  EXPECT_GT(errors, 0);
  // An unknown tag is DataLoss.
  std::string bad = encoded;
  bad[0] = 100;
  VersionEdit parsed;
  absl::Status s = parsed.DecodeFrom(bad);
  EXPECT_TRUE(absl::IsDataLoss(s));
  EXPECT_NE(std::string::npos, s.message().find("unknown tag")) << s;
  // A level out of range is DataLoss.
  VersionEdit deep;
  std::string enc;
  deep.RemoveFile(1, 9);
  deep.EncodeTo(&enc);
  enc[1] = kNumLevels;  // the level byte
  EXPECT_TRUE(absl::IsDataLoss(parsed.DecodeFrom(enc)));
}

// File numbers above kMaxFileNumber and sequences above kMaxSequenceNumber
// are not siftdb's: counted in, they would wrap the counters.
TEST(VersionEditTest, NumbersOutOfRangeAreDataLoss) {
  struct Case {
    const char* field;
    void (*set)(VersionEdit*);
  };
  const Case cases[] = {
      {"log number",
       [](VersionEdit* e) { e->SetLogNumber(kMaxFileNumber + 1); }},
      {"previous log number",
       [](VersionEdit* e) { e->SetPrevLogNumber(~uint64_t{0}); }},
      {"next file number",
       [](VersionEdit* e) { e->SetNextFile(kMaxFileNumber + 1); }},
      {"last sequence number",
       [](VersionEdit* e) { e->SetLastSequence(kMaxSequenceNumber + 1); }},
      {"deleted file",
       [](VersionEdit* e) { e->RemoveFile(1, kMaxFileNumber + 1); }},
      {"new-file entry",
       [](VersionEdit* e) {
         e->AddFile(1, ~uint64_t{0}, 10, Key("a", 1, kTypeValue),
                    Key("b", 1, kTypeValue));
       }},
  };
  for (const Case& c : cases) {
    VersionEdit edit;
    c.set(&edit);
    std::string encoded;
    edit.EncodeTo(&encoded);
    VersionEdit parsed;
    absl::Status s = parsed.DecodeFrom(encoded);
    EXPECT_TRUE(absl::IsDataLoss(s)) << c.field << ": " << s;
    EXPECT_NE(s.message().find(c.field), std::string::npos) << s;
  }
  // The largest legal values still decode.
  VersionEdit edge;
  edge.SetNextFile(kMaxFileNumber);
  edge.SetLastSequence(kMaxSequenceNumber);
  TestEncodeDecode(edge);
}

TEST(FileNameTest, Parse) {
  struct {
    const char* name;
    uint64_t number;
    FileType type;
  } cases[] = {
      {"100.log", 100, FileType::kLogFile},
      {"0.log", 0, FileType::kLogFile},
      {"0.sst", 0, FileType::kTableFile},
      {"CURRENT", 0, FileType::kCurrentFile},
      {"LOCK", 0, FileType::kDBLockFile},
      {"MANIFEST-2", 2, FileType::kDescriptorFile},
      {"MANIFEST-7", 7, FileType::kDescriptorFile},
      {"LOG", 0, FileType::kInfoLogFile},
      {"LOG.old", 0, FileType::kInfoLogFile},
      // The largest number siftdb gives a file (kMaxFileNumber = 2^62).
      {"4611686018427387904.log", 4611686018427387904ull, FileType::kLogFile},
      {"000123.dbtmp", 123, FileType::kTempFile},
  };
  for (const auto& c : cases) {
    uint64_t number;
    FileType type;
    ASSERT_TRUE(ParseFileName(c.name, &number, &type)) << c.name;
    EXPECT_EQ(c.number, number) << c.name;
    EXPECT_EQ(c.type, type) << c.name;
  }
  for (const char* bad :
       {"",
        // Above kMaxFileNumber: would wrap the counter.
        "18446744073709551615.log", "4611686018427387905.sst",
        "MANIFEST-18446744073709551615", "foo", "foo-dx-100.log", ".log",
        "manifest", "CURREN", "CURRENTX", "MANIFES", "MANIFEST", "MANIFEST-",
        "XMANIFEST-3", "MANIFEST-3x", "LOC", "LOCKx", "LO", "LOGx",
        "18446744073709551616.log", "184467440737095516150.log", "100", "100.",
        "100.lop"}) {
    uint64_t number;
    FileType type;
    EXPECT_FALSE(ParseFileName(bad, &number, &type)) << bad;
  }
}

TEST(FileNameTest, Construction) {
  EXPECT_EQ("foo/000192.log", LogFileName("foo", 192));
  EXPECT_EQ("foo/000200.sst", TableFileName("foo", 200));
  EXPECT_EQ("foo/MANIFEST-000100", DescriptorFileName("foo", 100));
  EXPECT_EQ("foo/CURRENT", CurrentFileName("foo"));
  EXPECT_EQ("foo/LOCK", LockFileName("foo"));
  EXPECT_EQ("foo/1234567.sst", TableFileName("foo", 1234567));
}

}  // namespace version_edit_test
}  // namespace siftdb
