// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// SIFTDB_EXPORT marks the public API. The shared library (libsiftdb.so) is
// built with hidden symbols, so only what carries this mark is visible to
// programs that load it; the static library is unaffected. Nothing else in
// include/siftdb needs to know.

#ifndef SIFTDB_INCLUDE_EXPORT_H_
#define SIFTDB_INCLUDE_EXPORT_H_

// The C++ API needs C++20 (std::span in its signatures);
// siftdb/c.h, which defines SIFTDB_C_API_ONLY_ before including this file,
// is plain C99 and also compiles as older C++.
#if defined(__cplusplus) && __cplusplus < 202002L && \
    !defined(SIFTDB_C_API_ONLY_)
#error "siftdb's C++ headers need C++20 (-std=c++20); siftdb/c.h does not"
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SIFTDB_EXPORT __attribute__((visibility("default")))
#else
#define SIFTDB_EXPORT
#endif

#endif  // SIFTDB_INCLUDE_EXPORT_H_
