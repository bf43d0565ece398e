// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// UserKeyFingerprints, the index blocks' search hint: its fingerprints
// keep the order of user keys, a hinted search finds exactly what an
// unhinted one finds (iterator and one-shot lookup, every restart
// interval, targets inside and outside the keys' shared prefix), and the
// hint does narrow the search.

#include "table/user_key_fingerprints.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "table/internal_key.h"
#include "tests/table/table_test_util.h"

namespace siftdb {
namespace user_key_fingerprints_test {

using test::BlockFromBytes;
using test::BuildBlockBytes;
using test::IKey;
using test::TestRandom;

// A user key: `prefix`, then 0-12 bytes from a small alphabet that
// includes 0x00 and 0xff (padding and "all ones" edge cases).
std::string UserKey(TestRandom* rnd, const std::string& prefix) {
  static const char kAlphabet[] = {'\0', '0', '1', '5', '9', 'a', '\xff'};
  std::string key = prefix;
  const size_t tail = rnd->Uniform(13);
  for (size_t i = 0; i < tail; i++) {
    key.push_back(kAlphabet[rnd->Uniform(sizeof(kAlphabet))]);
  }
  return key;
}

// Index-like entries: n distinct user keys sharing `prefix` (one to two
// versions each), in internal-key order; then, as a table's index ends,
// a short successor that shares nothing with them.
std::vector<std::pair<std::string, std::string>> Entries(
    size_t n, const std::string& prefix, uint64_t seed) {
  TestRandom rnd(seed);
  std::vector<std::pair<std::string, std::string>> entries;
  for (size_t i = 0; i < n; i++) {
    const std::string user = UserKey(&rnd, prefix);
    const int versions = 1 + static_cast<int>(rnd.Uniform(2));
    for (int v = 0; v < versions; v++) {
      entries.emplace_back(IKey(user, 1 + rnd.Uniform(1000), kTypeValue),
                           rnd.Bytes(rnd.Uniform(12)));
    }
  }
  test::SortInternalKeys(&entries);
  entries.emplace_back(IKey("\xff\xff", kMaxSequenceNumber, kTypeValue), "h");
  return entries;
}

// What a search found: the entry's key, nothing, or the error.
std::string Found(const Block& block, const InternalKeyComparator& icmp,
                  std::string_view target, bool iterator) {
  std::string answer = "none";
  if (iterator) {
    auto it = block.NewIterator(&icmp, "000004.sst");
    it->Seek(target);
    if (!it->status().ok()) return std::string(it->status().message());
    if (it->Valid()) answer = std::string(it->key());
    return answer;
  }
  absl::Status s = block.Seek(
      icmp, "000004.sst", target,
      [&](std::string_view k, std::string_view) { answer = std::string(k); });
  return s.ok() ? answer : std::string(s.message());
}

TEST(UserKeyFingerprintsTest, FingerprintsKeepTheOrderOfUserKeys) {
  const InternalKeyComparator icmp(BytewiseComparator());
  for (uint64_t seed = 1; seed <= 20; seed++) {
    const std::string prefix(seed % 5, static_cast<char>('0' + seed % 3));
    auto entries = Entries(40, prefix, seed);
    auto block = BlockFromBytes(BuildBlockBytes(entries, 1));
    ASSERT_NE(block, nullptr);
    auto hint = UserKeyFingerprints::Build(*block);
    ASSERT_NE(hint, nullptr);
    TestRandom rnd(seed + 100);
    std::vector<std::string> keys;
    for (int i = 0; i < 300; i++) {
      // Keys with P, around it, shorter than it, and empty.
      const std::string base = rnd.OneIn(3) ? std::string(hint->shared_prefix())
                                            : prefix.substr(0, rnd.Uniform(4));
      keys.push_back(UserKey(&rnd, base));
    }
    std::sort(keys.begin(), keys.end());
    for (size_t i = 1; i < keys.size(); i++) {
      ASSERT_LE(hint->Fingerprint(keys[i - 1]), hint->Fingerprint(keys[i]))
          << "seed " << seed << " key " << i;
    }
  }
}

TEST(UserKeyFingerprintsTest, HintedSearchesFindWhatUnhintedOnesFind) {
  const InternalKeyComparator icmp(BytewiseComparator());
  for (size_t n : {8, 9, 33, 500}) {
    for (int interval : {1, 3, 16}) {
      for (uint64_t seed = 1; seed <= 6; seed++) {
        const std::string prefix =
            seed % 2 ? "00000000012" : std::string(seed % 4, 'a');
        auto entries = Entries(n, prefix, seed * 31 + n);
        const std::string bytes = BuildBlockBytes(entries, interval);
        auto plain = BlockFromBytes(bytes);
        auto hinted = BlockFromBytes(bytes);
        ASSERT_NE(plain, nullptr);
        auto hint = UserKeyFingerprints::Build(*hinted);
        if (hinted->num_restarts() < UserKeyFingerprints::kMinRestarts) {
          EXPECT_EQ(hint, nullptr);
          continue;
        }
        ASSERT_NE(hint, nullptr);
        hinted->SetSearchHint(std::move(hint));

        TestRandom rnd(seed + n);
        std::vector<std::string> targets;
        for (const auto& [k, v] : entries) {
          targets.push_back(k);
          const std::string user(ExtractUserKey(k));
          targets.push_back(IKey(user, kMaxSequenceNumber, kValueTypeForSeek));
          targets.push_back(IKey(user, 0, kTypeValue));
        }
        for (int i = 0; i < 200; i++) {
          const std::string base =
              rnd.OneIn(2) ? prefix : prefix.substr(0, rnd.Uniform(3));
          targets.push_back(
              IKey(UserKey(&rnd, base), rnd.Uniform(1200), kValueTypeForSeek));
        }
        targets.push_back("");
        targets.push_back("abc");
        targets.push_back(IKey("", 5, kTypeValue));
        targets.push_back(IKey("\xff\xff\xff", 5, kTypeValue));
        for (const std::string& t : targets) {
          for (bool iterator : {true, false}) {
            ASSERT_EQ(Found(*hinted, icmp, t, iterator),
                      Found(*plain, icmp, t, iterator))
                << "n " << n << " interval " << interval << " seed " << seed
                << (iterator ? " iterator" : " one-shot");
          }
        }
      }
    }
  }
}

// Keys like db_bench's (16 zero-padded digits) in one table's range: the
// shared prefix skips the leading zeros although the last index key is a
// short successor, and a search of an existing key is left at most two
// restart points to compare.
TEST(UserKeyFingerprintsTest, NarrowsToTheTargetsNeighbours) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (int i = 0; i < 500; i++) {
    char user[17];
    std::snprintf(user, sizeof(user), "%016d", 1234000 + 7 * i);
    entries.emplace_back(IKey(user, 9, kTypeValue), "handle");
  }
  entries.emplace_back(IKey("1", kMaxSequenceNumber, kTypeValue), "handle");
  auto block = BlockFromBytes(BuildBlockBytes(entries, 1));
  ASSERT_NE(block, nullptr);
  auto hint = UserKeyFingerprints::Build(*block);
  ASSERT_NE(hint, nullptr);
  EXPECT_EQ(hint->shared_prefix(), "000000000123");
  for (size_t i = 0; i < entries.size(); i += 7) {
    uint32_t lo = 0;
    uint32_t hi = static_cast<uint32_t>(entries.size()) - 1;
    hint->Narrow(entries[i].first, &lo, &hi);
    EXPECT_LE(hi - lo, 1u) << i;
    EXPECT_LE(lo, i);
    EXPECT_GE(hi + 1, i);
  }
}

TEST(UserKeyFingerprintsTest, NoHintForSmallOrMalformedBlocks) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (int i = 0; i < 7; i++) {
    entries.emplace_back(IKey(std::string(1, 'a' + i), 1, kTypeValue), "v");
  }
  auto small = BlockFromBytes(BuildBlockBytes(entries, 1));
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(UserKeyFingerprints::Build(*small), nullptr);
  // Keys too short to be internal keys.
  BlockBuilder builder(1);
  for (int i = 0; i < 20; i++) builder.Add(std::string(1, 'a' + i), "v");
  auto short_keys = BlockFromBytes(std::string(builder.Finish()));
  ASSERT_NE(short_keys, nullptr);
  EXPECT_EQ(UserKeyFingerprints::Build(*short_keys), nullptr);
}

// A table counts its index block and fingerprints in heap_index_bytes
// while it is open, and takes them back when it closes.
TEST(UserKeyFingerprintsTest, TablesCountTheirIndexMemory) {
  TableOptions options;
  options.compression = kNoCompression;  // index_size: the block in memory
  options.heap_index_bytes = std::make_shared<std::atomic<uint64_t>>(0);
  TableProperties props;
  auto contents =
      test::BuildTable(options, test::MakeEntries(5000, true, 7), &props);
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_GE(props.num_data_blocks, UserKeyFingerprints::kMinRestarts);
  {
    auto table = test::OpenTable(options, *contents);
    ASSERT_TRUE(table.ok()) << table.status();
    const size_t memory = (*table)->index_memory();
    // The index block, and 8 bytes a data block (and the samples) beside.
    EXPECT_GE(memory, props.index_size + 8 * props.num_data_blocks);
    EXPECT_LE(memory, props.index_size + 10 * props.num_data_blocks + 256);
    EXPECT_EQ(options.heap_index_bytes->load(), memory);
    auto second = test::OpenTable(options, *contents, "000002.sst");
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(options.heap_index_bytes->load(), 2 * memory);
  }
  EXPECT_EQ(options.heap_index_bytes->load(), 0u);
}

}  // namespace user_key_fingerprints_test
}  // namespace siftdb
