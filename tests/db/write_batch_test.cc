// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "siftdb/write_batch.h"

#include <string>

#include "db/memtable.h"
#include "db/write_batch_internal.h"
#include "gtest/gtest.h"
#include "siftdb/comparator.h"
#include "siftdb/options.h"

namespace siftdb {
namespace write_batch_test {

// Renders a batch as applied to a MemTable: "Put(k, v)@seq" in key order.
std::string PrintContents(const WriteBatch* b) {
  InternalKeyComparator cmp(BytewiseComparator());
  MemTable* mem = new MemTable(cmp);
  mem->Ref();
  std::string state;
  absl::Status s = WriteBatchInternal::InsertInto(b, mem);
  auto iter = mem->NewIterator();
  for (iter->SeekToFirst(); iter->Valid(); iter->Next()) {
    ParsedInternalKey ikey;
    EXPECT_TRUE(ParseInternalKey(iter->key(), &ikey));
    if (ikey.type == kTypeValue) {
      state += "Put(" + std::string(ikey.user_key) + ", " +
               std::string(iter->value()) + ")";
    } else {
      state += "Delete(" + std::string(ikey.user_key) + ")";
    }
    state += "@" + std::to_string(ikey.sequence);
  }
  iter.reset();
  mem->Unref();
  if (!s.ok()) state += "ParseError()";
  return state;
}

TEST(WriteBatchTest, Empty) {
  WriteBatch batch;
  EXPECT_EQ("", PrintContents(&batch));
  EXPECT_EQ(0, batch.Count());
  EXPECT_EQ(12u, batch.ApproximateSize());
}

TEST(WriteBatchTest, Multiple) {
  WriteBatch batch;
  batch.Put("foo", "bar");
  batch.Delete("box");
  batch.Put("baz", "boo");
  WriteBatchInternal::SetSequence(&batch, 100);
  EXPECT_EQ(100u, WriteBatchInternal::Sequence(&batch));
  EXPECT_EQ(3, batch.Count());
  EXPECT_EQ("Put(baz, boo)@102Delete(box)@101Put(foo, bar)@100",
            PrintContents(&batch));
}

TEST(WriteBatchTest, CorruptionIsDetected) {
  WriteBatch batch;
  batch.Put("foo", "bar");
  batch.Delete("box");
  WriteBatchInternal::SetSequence(&batch, 200);
  std::string_view contents = WriteBatchInternal::Contents(&batch);
  // Every truncation either decodes to a prefix with a count mismatch or
  // fails; none crashes.
  for (size_t len = 12; len < contents.size(); len++) {
    WriteBatch b;
    ASSERT_TRUE(
        WriteBatchInternal::SetContents(&b, contents.substr(0, len)).ok());
    EXPECT_FALSE(WriteBatchInternal::Validate(&b).ok()) << len;
  }
  WriteBatch tooshort;
  EXPECT_TRUE(absl::IsDataLoss(
      WriteBatchInternal::SetContents(&tooshort, contents.substr(0, 5))));
  // An unknown tag.
  std::string bad(contents);
  bad[12] = 0x7f;
  WriteBatch b;
  ASSERT_TRUE(WriteBatchInternal::SetContents(&b, bad).ok());
  absl::Status s = WriteBatchInternal::Validate(&b);
  EXPECT_TRUE(absl::IsDataLoss(s));
  EXPECT_NE(std::string::npos, s.message().find("unknown tag"));
}

TEST(WriteBatchTest, Append) {
  WriteBatch b1, b2;
  WriteBatchInternal::SetSequence(&b1, 200);
  WriteBatchInternal::SetSequence(&b2, 300);
  b1.Append(b2);
  EXPECT_EQ("", PrintContents(&b1));
  b2.Put("a", "va");
  b1.Append(b2);
  EXPECT_EQ("Put(a, va)@200", PrintContents(&b1));
  b2.Clear();
  b2.Put("b", "vb");
  b1.Append(b2);
  EXPECT_EQ("Put(a, va)@200Put(b, vb)@201", PrintContents(&b1));
  b2.Delete("foo");
  b1.Append(b2);
  EXPECT_EQ("Put(a, va)@200Put(b, vb)@202Put(b, vb)@201Delete(foo)@203",
            PrintContents(&b1));
}

TEST(WriteBatchTest, ApproximateSizeGrows) {
  WriteBatch batch;
  const size_t empty = batch.ApproximateSize();
  batch.Put("foo", "bar");
  const size_t one = batch.ApproximateSize();
  EXPECT_LT(empty, one);
  batch.Delete("box");
  EXPECT_LT(one, batch.ApproximateSize());
}

TEST(WriteBatchTest, LimitsAreEnforced) {
  WriteBatch batch;
  batch.Put(std::string(kMaxKeySize + 1, 'k'), "v");
  absl::Status s = WriteBatchInternal::Validate(&batch);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(std::string::npos, s.message().find("kMaxKeySize"));
  batch.Clear();
  batch.Put("k", std::string(kMaxValueSize + 1, 'v'));
  s = WriteBatchInternal::Validate(&batch);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(std::string::npos, s.message().find("kMaxValueSize"));
}

struct Recorder : public WriteBatch::Handler {
  std::string seen;
  void Put(std::string_view k, std::string_view v) override {
    seen += "P:" + std::string(k) + "=" + std::string(v) + ";";
  }
  void Delete(std::string_view k) override {
    seen += "D:" + std::string(k) + ";";
  }
};

TEST(WriteBatchTest, IterateVisitsInOrderWithBinaryData) {
  WriteBatch batch;
  const std::string bin("\0\xff\x01", 3);
  batch.Put(bin, "");
  batch.Delete("");
  batch.Put("z", bin);
  Recorder r;
  ASSERT_TRUE(batch.Iterate(&r).ok());
  EXPECT_EQ("P:" + bin + "=;D:;P:z=" + bin + ";", r.seen);
}

}  // namespace write_batch_test
}  // namespace siftdb
