// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "siftdb/iterator.h"

#include <vector>

#include "gtest/gtest.h"

namespace siftdb {
namespace iterator_test {

TEST(IteratorTest, EmptyIteratorIsNeverValid) {
  auto it = NewEmptyIterator();
  EXPECT_FALSE(it->Valid());
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek("k");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

TEST(IteratorTest, ErrorIteratorCarriesStatus) {
  auto it = NewErrorIterator(absl::DataLossError("table 000007.sst: bad"));
  EXPECT_FALSE(it->Valid());
  it->Seek("x");
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(absl::StatusCode::kDataLoss, it->status().code());
  EXPECT_EQ("table 000007.sst: bad", it->status().message());
}

TEST(IteratorTest, CleanupsRunOnceInRegistrationOrder) {
  std::vector<int> order;
  {
    auto it = NewEmptyIterator();
    it->RegisterCleanup([&] { order.push_back(1); });
    it->RegisterCleanup([&] { order.push_back(2); });
    it->RegisterCleanup([&] { order.push_back(3); });
    EXPECT_TRUE(order.empty());
  }
  EXPECT_EQ((std::vector<int>{1, 2, 3}), order);
}

void PushArg2(void* order, void* value) {
  static_cast<std::vector<int>*>(order)->push_back(
      static_cast<int>(reinterpret_cast<intptr_t>(value)));
}

void* IntArg(int i) {
  return reinterpret_cast<void*>(static_cast<intptr_t>(i));
}

// Function-pointer cleanups use an inline slot only while it keeps the
// registration order; mixed with std::function ones, the order holds.
TEST(IteratorTest, FunctionPointerCleanupsKeepRegistrationOrder) {
  std::vector<int> order;
  {
    auto it = NewEmptyIterator();
    it->RegisterCleanup(&PushArg2, &order, IntArg(1));
    it->RegisterCleanup([&] { order.push_back(2); });
    it->RegisterCleanup(&PushArg2, &order, IntArg(3));
    it->RegisterCleanup(&PushArg2, &order, IntArg(4));
  }
  EXPECT_EQ((std::vector<int>{1, 2, 3, 4}), order);
  order.clear();
  {
    auto it = NewEmptyIterator();
    it->RegisterCleanup([&] { order.push_back(1); });
    it->RegisterCleanup(&PushArg2, &order, IntArg(2));
    it->RegisterCleanup([&] { order.push_back(3); });
  }
  EXPECT_EQ((std::vector<int>{1, 2, 3}), order);
  order.clear();
  {
    auto it = NewEmptyIterator();
    it->RegisterCleanup(&PushArg2, &order, IntArg(7));
  }
  EXPECT_EQ((std::vector<int>{7}), order);
}

}  // namespace iterator_test
}  // namespace siftdb
