// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/posix_error.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace siftdb {

absl::StatusCode ErrnoToCode(int err) {
  switch (err) {
    case ENOENT:
      return absl::StatusCode::kNotFound;
    case ENOSPC:
      return absl::StatusCode::kResourceExhausted;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status PosixError(std::string_view call, std::string_view path, int err) {
  char buf[256];
  // GNU strerror_r may return a static string instead of filling buf.
  const char* text = strerror_r(err, buf, sizeof(buf));
  return absl::Status(ErrnoToCode(err),
                      absl::StrFormat("%s %s: %s", call, path, text));
}

absl::Status ClosedFileError(std::string_view call, std::string_view path) {
  return absl::FailedPreconditionError(
      absl::StrFormat("%s %s: file already closed", call, path));
}

}  // namespace siftdb
