// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tests/support/temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "gtest/gtest.h"

namespace siftdb::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(base != nullptr ? base : "/tmp") + "/siftdb-test-XXXXXX";
  char* made = mkdtemp(tmpl.data());
  if (made == nullptr) {
    ADD_FAILURE() << "mkdtemp failed for " << tmpl;
    path_ = "/nonexistent";
    return;
  }
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::Join(const std::string& name) const {
  return path_ + "/" + name;
}

}  // namespace siftdb::test
