// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tests/support/paths.h"

#include <cstdlib>

namespace siftdb::test {
namespace {

std::string FromEnv(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

std::string SourceDir() {
  return FromEnv("SIFTDB_SOURCE_DIR", SIFTDB_SOURCE_DIR_DEFAULT);
}

std::string BinaryDir() {
  return FromEnv("SIFTDB_BINARY_DIR", SIFTDB_BINARY_DIR_DEFAULT);
}

}  // namespace siftdb::test
