// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// NewRateLimitedFile: wraps a WritableFile so that every Append first asks
// a RateLimiter for its bytes (blocking until granted). Flush, Sync and
// Close pass straight through. Used for the table files that flushes and
// compactions write (Options::rate_limiter).
//
// Thread safety: that of WritableFile (one thread at a time). Ownership:
// the wrapper owns `base`; `limiter` is not owned and must outlive it.

#ifndef SIFTDB_UTIL_RATE_LIMITED_FILE_H_
#define SIFTDB_UTIL_RATE_LIMITED_FILE_H_

#include <memory>

#include "siftdb/env.h"
#include "siftdb/rate_limiter.h"

namespace siftdb {

// limiter == nullptr: returns base unchanged.
std::unique_ptr<WritableFile> NewRateLimitedFile(
    std::unique_ptr<WritableFile> base, RateLimiter* limiter);

}  // namespace siftdb

#endif  // SIFTDB_UTIL_RATE_LIMITED_FILE_H_
