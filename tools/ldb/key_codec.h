// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// How ldb reads keys and values from the command line and prints them.
//
// Input: text as given (also when it starts with "0x": "0x6b" is the
// four-byte key "0x6b"), or hex when --hex (--key_hex, --value_hex) is set,
// with or without a leading "0x" ("0x6b6579" and "6b6579" are both "key").
// Output: with hex, "0x" followed by lowercase hex digits; otherwise the
// bytes themselves, except that bytes outside printable ASCII and the
// backslash are written as "\xNN" so every line of output is unambiguous.
//
// Thread safety: pure functions.

#ifndef SIFTDB_TOOLS_LDB_KEY_CODEC_H_
#define SIFTDB_TOOLS_LDB_KEY_CODEC_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace siftdb::ldb {

// Decodes a command-line key or value. InvalidArgument naming `what` (e.g.
// "key") for bad hex (odd length or a non-hex digit).
absl::StatusOr<std::string> DecodeArg(std::string_view arg, bool hex,
                                      std::string_view what);

// Formats bytes for output (see above).
std::string EncodeForOutput(std::string_view bytes, bool hex);

}  // namespace siftdb::ldb

#endif  // SIFTDB_TOOLS_LDB_KEY_CODEC_H_
