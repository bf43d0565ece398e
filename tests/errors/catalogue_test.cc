// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// docs/errors.md and this suite must agree: every catalogue row names a
// test of this program (`Suite.Name` in the row's first column), and every
// test of the Errors* suites has a row. A build without Redis
// (SIFTDB_WITH_REDIS=OFF) does not build the ErrorsRedis suite, so its rows
// are not looked for there.

#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/paths.h"

namespace siftdb::test {
namespace catalogue_test {

TEST(ErrorsCatalogue, DocRowsAndTestsAgree) {
  const std::string doc = SourceDir() + "/docs/errors.md";
  std::ifstream in(doc);
  ASSERT_TRUE(in) << "cannot read " << doc;
  std::set<std::string> rows;
  const std::regex row(R"(^\| `(Errors[A-Za-z]+\.[A-Za-z0-9_]+)` \|)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) {
      if (!SIFTDB_WITH_REDIS && m[1].str().rfind("ErrorsRedis.", 0) == 0) {
        continue;
      }
      EXPECT_TRUE(rows.insert(m[1]).second) << "row twice: " << m[1];
    }
  }
  std::set<std::string> tests;
  const ::testing::UnitTest* unit = ::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit->total_test_suite_count(); i++) {
    const ::testing::TestSuite* suite = unit->GetTestSuite(i);
    const std::string name = suite->name();
    if (name.rfind("Errors", 0) != 0 || name == "ErrorsCatalogue") continue;
    for (int j = 0; j < suite->total_test_count(); j++) {
      tests.insert(name + "." + suite->GetTestInfo(j)->name());
    }
  }
  for (const std::string& r : rows) {
    EXPECT_TRUE(tests.count(r)) << doc << " has a row without a test: " << r;
  }
  for (const std::string& t : tests) {
    EXPECT_TRUE(rows.count(t)) << "test without a row in " << doc << ": " << t;
  }
  EXPECT_GE(rows.size(), SIFTDB_WITH_REDIS ? 50u : 40u);
}

}  // namespace catalogue_test
}  // namespace siftdb::test
