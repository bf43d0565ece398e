// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// SIFTDB_EXPORT marks the public API. The shared library (libsiftdb.so) is
// built with hidden symbols, so only what carries this mark is visible to
// programs that load it; the static library is unaffected. Nothing else in
// include/siftdb needs to know.

#ifndef SIFTDB_INCLUDE_EXPORT_H_
#define SIFTDB_INCLUDE_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define SIFTDB_EXPORT __attribute__((visibility("default")))
#else
#define SIFTDB_EXPORT
#endif

#endif  // SIFTDB_INCLUDE_EXPORT_H_
