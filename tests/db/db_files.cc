// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tests/db/db_files.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"
#include "siftdb/env.h"

namespace siftdb::test {

uint64_t NewestFileNumber(const std::string& dir, FileType want) {
  auto children = Env::Default()->GetChildren(dir);
  EXPECT_TRUE(children.ok()) << children.status();
  if (!children.ok()) return 0;
  uint64_t best = 0;
  for (const std::string& name : *children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == want) {
      best = std::max(best, number);
    }
  }
  return best;
}

}  // namespace siftdb::test
