// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Debian 12's Abseil (20220623) is built with its own absl::string_view
// (ABSL_OPTION_USE_STD_STRING_VIEW == 0), which does not convert implicitly
// from std::string_view. siftdb's APIs use std::string_view; convert at the
// boundary with AsAbsl(). absl::StrFormat("%s", std::string_view) works as is.

#ifndef SIFTDB_UTIL_ABSL_COMPAT_H_
#define SIFTDB_UTIL_ABSL_COMPAT_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace siftdb {

inline absl::string_view AsAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

inline std::string_view AsStd(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

}  // namespace siftdb

#endif  // SIFTDB_UTIL_ABSL_COMPAT_H_
