// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "siftdb/version.h"

#define SIFTDB_STRINGIFY_(x) #x
#define SIFTDB_STRINGIFY(x) SIFTDB_STRINGIFY_(x)

namespace siftdb {

const char* Version() {
  return SIFTDB_STRINGIFY(SIFTDB_VERSION_MAJOR) "." SIFTDB_STRINGIFY(
      SIFTDB_VERSION_MINOR) "." SIFTDB_STRINGIFY(SIFTDB_VERSION_PATCH);
}

}  // namespace siftdb
