// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Blocks: BlockBuilder -> Block round trips over many key/value shapes and
// restart intervals, seeks, reverse iteration, and malformed blocks.

#include "table/block.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "table/block_builder.h"
#include "tests/table/table_test_util.h"
#include "util/coding.h"

namespace siftdb {
namespace block_test {

using test::TestRandom;

BlockContents Contents(std::string_view bytes) {
  BlockContents c;
  c.owned = std::make_unique<char[]>(bytes.size());
  if (!bytes.empty()) std::memcpy(c.owned.get(), bytes.data(), bytes.size());
  c.size = bytes.size();
  return c;
}

std::unique_ptr<Block> MustCreate(std::string_view bytes) {
  auto block = Block::Create(Contents(bytes), 0, "test");
  EXPECT_TRUE(block.ok()) << block.status();
  return block.ok() ? std::move(*block) : nullptr;
}

using Model = std::map<std::string, std::string>;

// Checks every way of reading `block` against `model`.
void CheckBlock(const Block& block, const Model& model) {
  const Comparator* cmp = BytewiseComparator();
  auto it = block.NewIterator(cmp, "test");
  // Forward.
  auto m = model.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
    ASSERT_NE(m, model.end());
    ASSERT_EQ(it->key(), m->first);
    ASSERT_EQ(it->value(), m->second);
  }
  ASSERT_EQ(m, model.end());
  ASSERT_TRUE(it->status().ok()) << it->status();
  // Backward.
  auto r = model.rbegin();
  for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
    ASSERT_NE(r, model.rend());
    ASSERT_EQ(it->key(), r->first);
    ASSERT_EQ(it->value(), r->second);
  }
  ASSERT_EQ(r, model.rend());
  // Seek to every key, and to keys just before and after it.
  for (const auto& [k, v] : model) {
    for (const std::string& target :
         {k, k + std::string(1, '\0'),
          k.empty() ? k : k.substr(0, k.size() - 1)}) {
      it->Seek(target);
      auto want = model.lower_bound(target);
      if (want == model.end()) {
        ASSERT_FALSE(it->Valid());
      } else {
        ASSERT_TRUE(it->Valid());
        ASSERT_EQ(it->key(), want->first);
        ASSERT_EQ(it->value(), want->second);
        // One step back from a seek lands on the previous entry.
        it->Prev();
        if (want == model.begin()) {
          ASSERT_FALSE(it->Valid());
        } else {
          ASSERT_TRUE(it->Valid());
          ASSERT_EQ(it->key(), std::prev(want)->first);
        }
      }
    }
  }
  it->Seek(std::string(5000, '\xff'));
  ASSERT_FALSE(it->Valid());
  ASSERT_TRUE(it->status().ok());
}

std::unique_ptr<Block> BuildBlock(const Model& model, int restart_interval,
                                  std::string* bytes) {
  BlockBuilder builder(restart_interval);
  for (const auto& [k, v] : model) builder.Add(k, v);
  EXPECT_EQ(builder.num_entries(), model.size());
  const size_t estimate = builder.CurrentSizeEstimate();
  *bytes = std::string(builder.Finish());
  EXPECT_EQ(estimate, bytes->size());
  return MustCreate(*bytes);
}

TEST(BlockTest, EmptyBlockIsEightBytes) {
  BlockBuilder builder(16);
  EXPECT_TRUE(builder.empty());
  std::string bytes(builder.Finish());
  EXPECT_EQ(bytes.size(), 8u);
  auto block = MustCreate(bytes);
  ASSERT_NE(block, nullptr);
  CheckBlock(*block, {});
}

TEST(BlockTest, SingleEntry) {
  for (int interval : {1, 16}) {
    std::string bytes;
    Model model{{"key", "value"}};
    auto block = BuildBlock(model, interval, &bytes);
    ASSERT_NE(block, nullptr);
    CheckBlock(*block, model);
  }
}

TEST(BlockTest, EmptyKeyAndValues) {
  Model model{{"", ""}, {"a", ""}, {"ab", ""}, {"b", "x"}};
  std::string bytes;
  auto block = BuildBlock(model, 2, &bytes);
  ASSERT_NE(block, nullptr);
  CheckBlock(*block, model);
}

TEST(BlockTest, ShapesAndRestartIntervals) {
  TestRandom rnd(301);
  for (int interval = 1; interval <= 32; interval++) {
    SCOPED_TRACE(interval);
    // Shared prefixes of assorted lengths.
    Model model;
    const std::string prefix = rnd.Bytes(rnd.Uniform(40));
    for (int i = 0; i < 200; i++) {
      std::string key = prefix + rnd.Bytes(rnd.Uniform(12));
      std::string value =
          rnd.OneIn(4) ? std::string() : rnd.Compressible(rnd.Uniform(100));
      model[key] = value;
    }
    std::string bytes;
    auto block = BuildBlock(model, interval, &bytes);
    ASSERT_NE(block, nullptr);
    CheckBlock(*block, model);
  }
}

TEST(BlockTest, LargeKeysAndValues) {
  TestRandom rnd(17);
  for (size_t size : {0, 1, 127, 128, 255, 256, 4095, 4096}) {
    SCOPED_TRACE(size);
    Model model;
    for (int i = 0; i < 10; i++) {
      model[rnd.Bytes(size) + std::to_string(i)] = rnd.Bytes(size);
    }
    for (int interval : {1, 3, 16}) {
      std::string bytes;
      auto block = BuildBlock(model, interval, &bytes);
      ASSERT_NE(block, nullptr);
      CheckBlock(*block, model);
    }
  }
}

// The entry encoding is persisted (docs/table_format.md): byte for byte,
// varint32 shared, non-shared and value lengths, the key's non-shared
// bytes, the value; then the restart array and its length. Lengths around
// the one-byte varint limit and past the two-byte one.
TEST(BlockTest, BytesMatchTheFormat) {
  TestRandom rnd(5);
  for (size_t size : {0, 1, 127, 128, 16383, 16384, 20000}) {
    SCOPED_TRACE(size);
    const int interval = 2;
    BlockBuilder builder(interval);
    std::string expected;
    std::vector<uint32_t> restarts;
    std::string last_key;
    const std::string prefix = rnd.Bytes(size);
    for (int i = 0; i < 5; i++) {
      const std::string key = prefix + static_cast<char>('a' + i);
      const std::string value = rnd.Bytes(size + i);
      size_t shared = 0;
      if (i % interval == 0) {
        restarts.push_back(static_cast<uint32_t>(expected.size()));
      } else {
        while (shared < last_key.size() && last_key[shared] == key[shared]) {
          shared++;
        }
      }
      PutVarint32(&expected, static_cast<uint32_t>(shared));
      PutVarint32(&expected, static_cast<uint32_t>(key.size() - shared));
      PutVarint32(&expected, static_cast<uint32_t>(value.size()));
      expected.append(key, shared);
      expected.append(value);
      builder.Add(key, value);
      last_key = key;
    }
    for (uint32_t r : restarts) PutFixed32(&expected, r);
    PutFixed32(&expected, static_cast<uint32_t>(restarts.size()));
    EXPECT_EQ(expected, std::string(builder.Finish()));
  }
}

TEST(BlockTest, ResetReusesBuilder) {
  BlockBuilder builder(4);
  builder.Add("zzz", "1");
  builder.Finish();
  builder.Reset();
  Model model{{"a", "1"}, {"b", "2"}};
  for (const auto& [k, v] : model) builder.Add(k, v);
  auto block = MustCreate(std::string(builder.Finish()));
  ASSERT_NE(block, nullptr);
  CheckBlock(*block, model);
}

TEST(BlockTest, MalformedRestartArrays) {
  auto create = [](std::string bytes) {
    return Block::Create(Contents(bytes), 4096, "000007.sst").status();
  };
  // Too short.
  for (size_t n = 0; n < 4; n++) {
    absl::Status s = create(std::string(n, '\0'));
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(s.message().find("000007.sst: block at offset 4096"),
              std::string_view::npos)
        << s;
  }
  // Restart count larger than the block.
  std::string bytes;
  PutFixed32(&bytes, 0);
  PutFixed32(&bytes, 1000);
  EXPECT_EQ(create(bytes).code(), absl::StatusCode::kDataLoss);
  // Restart offset out of range.
  bytes.clear();
  bytes.append(
      "\x00\x01\x01"
      "ab",
      5);
  PutFixed32(&bytes, 0);
  PutFixed32(&bytes, 99);
  PutFixed32(&bytes, 2);
  EXPECT_EQ(create(bytes).code(), absl::StatusCode::kDataLoss);
  // First restart not at 0.
  bytes.clear();
  bytes.append(
      "\x00\x01\x01"
      "ab",
      5);
  PutFixed32(&bytes, 1);
  PutFixed32(&bytes, 1);
  EXPECT_EQ(create(bytes).code(), absl::StatusCode::kDataLoss);
}

// Reads everything from a block, every which way; returns whether any
// iterator reported an error. Must never crash or read out of bounds.
bool ExerciseBlock(const Block& block) {
  const Comparator* cmp = BytewiseComparator();
  auto it = block.NewIterator(cmp, "x");
  int steps = 0;
  for (it->SeekToFirst(); it->Valid() && steps < 10000; it->Next()) steps++;
  bool error = !it->status().ok();
  auto it2 = block.NewIterator(cmp, "x");
  steps = 0;
  for (it2->SeekToLast(); it2->Valid() && steps < 10000; it2->Prev()) steps++;
  error |= !it2->status().ok();
  auto it3 = block.NewIterator(cmp, "x");
  it3->Seek("k05");
  if (it3->Valid()) it3->Prev();
  error |= !it3->status().ok();
  return error;
}

TEST(BlockTest, EveryTruncationAndBitFlipIsSafe) {
  Model model;
  for (int i = 0; i < 40; i++) {
    model["k" + std::to_string(i / 10) + std::to_string(i % 10)] =
        std::string(i % 7, 'v');
  }
  std::string good;
  BuildBlock(model, 4, &good);
  int rejected = 0, errors = 0;
  for (size_t n = 0; n < good.size(); n++) {
    auto block = Block::Create(Contents(good.substr(0, n)), 0, "x");
    if (!block.ok()) {
      EXPECT_EQ(block.status().code(), absl::StatusCode::kDataLoss);
      rejected++;
      continue;
    }
    errors += ExerciseBlock(**block);
  }
  for (size_t i = 0; i < good.size(); i++) {
    for (int bit = 0; bit < 8; bit++) {
      std::string bad = good;
      bad[i] ^= static_cast<char>(1 << bit);
      auto block = Block::Create(Contents(bad), 0, "x");
      if (!block.ok()) {
        rejected++;
        continue;
      }
      errors += ExerciseBlock(**block);
    }
  }
  // Most damage is noticed (the rest changes keys or values: that is what
  // the block CRC is for).
  EXPECT_GT(rejected + errors, 0);
}

TEST(BlockTest, CorruptEntryReportsDataLoss) {
  // One entry whose value length runs past the block.
  std::string bytes;
  PutVarint32(&bytes, 0);
  PutVarint32(&bytes, 1);
  PutVarint32(&bytes, 100);
  bytes += "k";
  PutFixed32(&bytes, 0);
  PutFixed32(&bytes, 1);
  auto block = Block::Create(Contents(bytes), 8192, "000009.sst");
  ASSERT_TRUE(block.ok()) << block.status();
  auto it = (*block)->NewIterator(BytewiseComparator(), "000009.sst");
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(it->status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(it->status().message().find("000009.sst: block at offset 8192"),
            std::string_view::npos)
      << it->status();
}

}  // namespace block_test
}  // namespace siftdb
