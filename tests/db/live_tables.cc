// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tests/db/live_tables.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "siftdb/env.h"
#include "util/absl_compat.h"

namespace siftdb {

std::vector<OpenedLiveTable> OpenLiveTables(DB* db, const std::string& path) {
  std::string sstables;
  EXPECT_TRUE(db->GetProperty("siftdb.sstables", &sstables));
  std::vector<OpenedLiveTable> out;
  int level = -1;
  for (absl::string_view line : absl::StrSplit(AsAbsl(sstables), '\n')) {
    int l;
    if (absl::StartsWith(line, "--- level ") &&
        absl::SimpleAtoi(line.substr(10, 1), &l)) {
      level = l;
      continue;
    }
    line = absl::StripLeadingAsciiWhitespace(line);
    if (line.empty()) continue;
    const std::string name(line.substr(0, line.find(' ')));
    const std::string file = path + "/" + name;
    Env* env = Env::Default();
    auto size = env->GetFileSize(file);
    auto f = env->NewRandomAccessFile(file);
    EXPECT_TRUE(size.ok() && f.ok()) << file;
    if (!size.ok() || !f.ok()) continue;
    auto table = Table::Open(TableOptions(), name, std::move(*f), *size);
    EXPECT_TRUE(table.ok()) << table.status();
    if (!table.ok()) continue;
    out.push_back({level, file, *size, std::move(*table)});
  }
  return out;
}

}  // namespace siftdb
