// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Test helper: the files a DB directory holds, by type. Listing failures
// are reported as test failures (and read as an empty directory).

#ifndef SIFTDB_TESTS_DB_DB_FILES_H_
#define SIFTDB_TESTS_DB_DB_FILES_H_

#include <cstdint>
#include <string>

#include "db/filename.h"

namespace siftdb::test {

// The largest number of a file of `type` in dir; 0 when there is none.
uint64_t NewestFileNumber(const std::string& dir, FileType type);

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_DB_DB_FILES_H_
