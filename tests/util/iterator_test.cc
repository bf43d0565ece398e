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

}  // namespace iterator_test
}  // namespace siftdb
