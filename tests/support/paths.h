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
#include <string_view>

#include "absl/status/statusor.h"

namespace siftdb::test {

std::string SourceDir();
std::string BinaryDir();

// The contents of SourceDir()/relative_path (a doc a test checks against
// the code); NotFound naming the path when it cannot be read.
absl::StatusOr<std::string> ReadSourceFile(std::string_view relative_path);

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_SUPPORT_PATHS_H_
