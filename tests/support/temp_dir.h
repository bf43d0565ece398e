// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with all its
// contents when the object is destroyed. Not thread-safe; one per test.

#ifndef SIFTDB_TESTS_SUPPORT_TEMP_DIR_H_
#define SIFTDB_TESTS_SUPPORT_TEMP_DIR_H_

#include <string>

namespace siftdb::test {

class TempDir {
 public:
  TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string Join(const std::string& name) const;

 private:
  std::string path_;
};

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_SUPPORT_TEMP_DIR_H_
