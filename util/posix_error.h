// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// PosixError: the one mapping from errno to absl::Status used by every Env
// in util/ (the POSIX one, and the fault-injection one for its injected
// errors), so callers see the same codes either way:
//   ENOENT -> NotFound, ENOSPC -> ResourceExhausted, anything else ->
//   Internal.
// The message is "<call> <path>: <strerror(err)>", e.g.
//   "open /db/000005.log: No such file or directory".
// Thread-safe (uses strerror_r).

#ifndef SIFTDB_UTIL_POSIX_ERROR_H_
#define SIFTDB_UTIL_POSIX_ERROR_H_

#include <string_view>

#include "absl/status/status.h"

namespace siftdb {

// The status code that stands for errno value err.
absl::StatusCode ErrnoToCode(int err);

// A status for `call` on `path` failing with errno value err.
absl::Status PosixError(std::string_view call, std::string_view path, int err);

// FailedPrecondition "<call> <path>: file already closed", for a call on a
// file object after its Close().
absl::Status ClosedFileError(std::string_view call, std::string_view path);

}  // namespace siftdb

#endif  // SIFTDB_UTIL_POSIX_ERROR_H_
