// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The library's version, at compile time (the macros) and at run time
// (Version()). A program built against one release and run with another
// shared library can compare the two.
//
// Compatibility: releases with the same MAJOR keep source and binary
// compatibility of the public API (the shared library's SOVERSION is MAJOR);
// on-disk and on-Redis formats are versioned separately (docs/).
// CMakeLists.txt reads these three lines for the project version.
//
// Thread safety: Version() may be called from any thread at any time.

#ifndef SIFTDB_INCLUDE_VERSION_H_
#define SIFTDB_INCLUDE_VERSION_H_

#include "siftdb/export.h"

#define SIFTDB_VERSION_MAJOR 0
#define SIFTDB_VERSION_MINOR 2
#define SIFTDB_VERSION_PATCH 0

namespace siftdb {

// "MAJOR.MINOR.PATCH" of the library actually linked; a static string.
SIFTDB_EXPORT const char* Version();

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_VERSION_H_
