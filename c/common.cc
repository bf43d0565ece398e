// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The C API's shared helpers (errors, malloc'ed copies, byte arguments) and
// its memory and version functions.

#include <cstdlib>
#include <cstring>
#include <string>

#include "c/handles.h"
#include "siftdb/c.h"
#include "siftdb/version.h"

namespace siftdb::c_api {

bool SaveError(char** errptr, const absl::Status& s) {
  if (s.ok()) return false;
  if (errptr != nullptr) {
    std::free(*errptr);
    *errptr = CopyToMalloc(s.ToString(), nullptr);
  }
  return true;
}

bool SaveArgError(char** errptr, const char* function, const char* what) {
  return SaveError(
      errptr, absl::InvalidArgumentError(std::string(function) + ": " + what));
}

char* CopyToMalloc(std::string_view s, size_t* len) {
  char* result = static_cast<char*>(std::malloc(s.size() + 1));
  if (result != nullptr) {
    if (!s.empty()) std::memcpy(result, s.data(), s.size());
    result[s.size()] = '\0';
  }
  if (len != nullptr) *len = result != nullptr ? s.size() : 0;
  return result;
}

std::string_view Bytes(const char* p, size_t n, bool* ok) {
  if (p == nullptr) {
    *ok = n == 0;
    return std::string_view();
  }
  *ok = true;
  return std::string_view(p, n);
}

}  // namespace siftdb::c_api

extern "C" {

void siftdb_free(void* ptr) { std::free(ptr); }

int siftdb_version_major(void) { return SIFTDB_VERSION_MAJOR; }

int siftdb_version_minor(void) { return SIFTDB_VERSION_MINOR; }

int siftdb_version_patch(void) { return SIFTDB_VERSION_PATCH; }

const char* siftdb_version(void) { return siftdb::Version(); }

}  // extern "C"
