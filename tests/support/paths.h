// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Where tests find things: SourceDir() is the repository root (test data
// lives under tests/testdata/), BinaryDir() the build directory (programs
// such as tools/sst_dump, bench/db_bench). Each is the environment variable
// SIFTDB_SOURCE_DIR / SIFTDB_BINARY_DIR when set, else the directory the
// build was configured with.

#ifndef SIFTDB_TESTS_SUPPORT_PATHS_H_
#define SIFTDB_TESTS_SUPPORT_PATHS_H_

#include <string>

namespace siftdb::test {

std::string SourceDir();
std::string BinaryDir();

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_SUPPORT_PATHS_H_
