// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tests/support/paths.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

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

absl::StatusOr<std::string> ReadSourceFile(std::string_view relative_path) {
  const std::string path = SourceDir() + "/" + std::string(relative_path);
  std::ifstream in(path);
  if (!in.good()) return absl::NotFoundError("cannot read " + path);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace siftdb::test
