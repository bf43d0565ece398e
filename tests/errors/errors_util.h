// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Helpers for the bad-input catalogue suite (tests/errors/, one test per
// row of docs/errors.md): build a small real database, damage its files
// the way a disk or a user would (flip a byte, truncate, rewrite), and
// check what Open / Get / Put answer.
//
// Thread safety: test helpers for one thread.

#ifndef SIFTDB_TESTS_ERRORS_ERRORS_UTIL_H_
#define SIFTDB_TESTS_ERRORS_ERRORS_UTIL_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"

namespace siftdb::test {

// Default options for the catalogue; create_if_missing as given.
Options CatalogueOptions(bool create_if_missing = true);

// The key and value of entry i of the standard data set.
std::string CatalogueKey(int i);
std::string CatalogueValue(int i);

// Creates a DB at `path` holding entries [0, n) written with sync; with
// `flush`, then compacts them into tables (so the logs hold nothing).
// Closes the DB.
void MakeDb(const std::string& path, int n, bool flush);

// Opens `path` and checks that entries [0, n) read back (Get and a full
// scan). Failures are gtest failures naming the key.
void ExpectDbHolds(const std::string& path, int n,
                   const Options& options = CatalogueOptions(false));

// Names (not paths) of the files in `dir` whose name ends with `suffix`
// or, for "MANIFEST", starts with "MANIFEST-"; sorted.
std::vector<std::string> FilesOf(const std::string& dir,
                                 std::string_view suffix);

// File surgery. Each fails the test (ADD_FAILURE) when the file cannot be
// read or written.
void FlipByte(const std::string& file, uint64_t offset);
void TruncateFile(const std::string& file, uint64_t size);
void Overwrite(const std::string& file, std::string_view contents);
std::string Slurp(const std::string& file);
uint64_t SizeOf(const std::string& file);

// Checks the code and that the message contains every one of `parts`.
::testing::AssertionResult HasError(
    const absl::Status& status, absl::StatusCode code,
    std::initializer_list<std::string_view> parts);

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_ERRORS_ERRORS_UTIL_H_
