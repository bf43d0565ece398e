// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The smallest write buffer Options accepts (4 KiB) works: an empty
// MemTable's own overhead passes 4 KiB, and the writer used to switch it
// for another empty one forever (a hang, with a stream of empty flushes).
// The writes run on a thread with a deadline so a regression fails instead
// of hanging the suite.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace small_write_buffer_test {

TEST(SmallWriteBufferTest, FourKiBWriteBufferTakesWrites) {
  test::TempDir dir;
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 4096;
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  std::future<absl::Status> writes = std::async(std::launch::async, [&] {
    for (int i = 0; i < 500; ++i) {
      absl::Status s = (*db)->Put(WriteOptions(), absl::StrFormat("k%05d", i),
                                  std::string(100, 'v'));
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  });
  if (writes.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "500 writes into a 4 KiB write buffer hang\n");
    std::_Exit(1);  // the writer thread cannot be stopped
  }
  ASSERT_TRUE(writes.get().ok());
  std::string value;
  ASSERT_TRUE((*db)->Get(ReadOptions(), "k00499", &value).ok());
  EXPECT_EQ(value, std::string(100, 'v'));
  ASSERT_TRUE((*db)->Close().ok());
}

}  // namespace small_write_buffer_test
}  // namespace siftdb
