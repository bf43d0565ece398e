// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The MemTable's entry order (db/memtable.h): under the bytewise user
// comparator the MemTable compares internal keys inline, eight bytes at a
// time; under any other it calls InternalKeyComparator. Either way an
// iteration must list exactly InternalKeyComparator's order: user keys of
// every length (shorter and longer than eight bytes, one a prefix of
// another, bytes above 0x7f and zeros), several versions of each, inserted
// in random order; seeks to every key land where the comparator says; and
// seek targets too short to hold a trailer are ordered as the comparator
// orders them.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "db/memtable.h"
#include "gtest/gtest.h"
#include "siftdb/comparator.h"
#include "table/internal_key.h"
#include "util/random.h"

namespace siftdb {
namespace memtable_order_test {

struct MemTableUnref {
  void operator()(MemTable* m) const { m->Unref(); }
};
using MemTablePtr = std::unique_ptr<MemTable, MemTableUnref>;

// A user comparator that is not BytewiseComparator() but orders alike, so
// both of the MemTable's paths must give the same order.
class OtherBytewise : public Comparator {
 public:
  const char* Name() const override { return "memtable_order_test.bytewise"; }
  int Compare(std::string_view a, std::string_view b) const override {
    return a.compare(b);
  }
  void FindShortestSeparator(std::string*, std::string_view) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

// Random bytes over a small alphabet (so keys share long prefixes), of
// lengths 0..24, with 0x00 and bytes above 0x7f.
std::string RandomUserKey(Random* rnd) {
  static constexpr char kAlphabet[] = {'\0', 'a', 'b', '\x7f', '\x80', '\xff'};
  std::string k(rnd->Uniform(25), ' ');
  for (char& c : k) c = kAlphabet[rnd->Uniform(sizeof(kAlphabet))];
  return k;
}

struct Entry {
  std::string internal_key;
  std::string value;
};

void CheckOrder(const Comparator* user_comparator) {
  const InternalKeyComparator icmp(user_comparator);
  MemTablePtr mem(new MemTable(icmp));
  mem->Ref();
  Random rnd(301);
  std::vector<Entry> entries;
  SequenceNumber seq = 1;
  for (int i = 0; i < 3000; i++) {
    const std::string user_key = RandomUserKey(&rnd);
    const ValueType type = rnd.OneIn(5) ? kTypeDeletion : kTypeValue;
    const std::string value = type == kTypeValue ? std::to_string(i) : "";
    // Sequence numbers jump around so that versions of one key arrive in
    // no particular order.
    const SequenceNumber s = seq + rnd.Uniform(1000) * 4096;
    seq++;
    std::string ikey;
    AppendInternalKey(&ikey, user_key, s, type);
    // The MemTable forbids a repeated (user key, sequence): skip the rare
    // one the random draws make.
    bool repeat = false;
    for (const Entry& e : entries) repeat = repeat || e.internal_key == ikey;
    if (repeat) continue;
    mem->Add(s, type, user_key, value);
    entries.push_back({ikey, value});
  }
  std::sort(entries.begin(), entries.end(),
            [&](const Entry& a, const Entry& b) {
              return icmp.Compare(a.internal_key, b.internal_key) < 0;
            });

  std::unique_ptr<Iterator> it = mem->NewIterator();
  it->SeekToFirst();
  for (const Entry& e : entries) {
    ASSERT_TRUE(it->Valid());
    ASSERT_EQ(e.internal_key, it->key());
    ASSERT_EQ(e.value, it->value());
    it->Next();
  }
  EXPECT_FALSE(it->Valid());

  for (const Entry& e : entries) {
    it->Seek(e.internal_key);
    ASSERT_TRUE(it->Valid());
    ASSERT_EQ(e.internal_key, it->key());
  }

  // Targets without a trailer sort before every well-formed key (see
  // InternalKeyComparator::Compare): a seek to one lands on the first.
  for (const std::string& target :
       {std::string(), std::string("\xff\xff"), std::string(7, '\xff')}) {
    it->Seek(target);
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(entries.front().internal_key, it->key());
  }
}

TEST(MemTableOrderTest, BytewiseMatchesInternalKeyComparator) {
  CheckOrder(BytewiseComparator());
}

TEST(MemTableOrderTest, OtherComparatorMatchesInternalKeyComparator) {
  static const OtherBytewise other;
  CheckOrder(&other);
}

}  // namespace memtable_order_test
}  // namespace siftdb
