// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Byte formatting for siftdb's tools: hex, C-style escaping, hex dumps.
// Thread safety: pure functions.

#ifndef SIFTDB_TOOLS_COMMON_HEX_H_
#define SIFTDB_TOOLS_COMMON_HEX_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace siftdb::tools {

// Lower-case hex, two digits per byte ("" for empty input).
std::string ToHex(std::string_view bytes);

// Parses hex (either case; an optional leading "0x"). InvalidArgument on an
// odd length or a non-hex digit.
absl::StatusOr<std::string> FromHex(std::string_view hex);

// Printable ASCII kept, everything else C-escaped (\n, \x01, \\, \', \").
std::string Escape(std::string_view bytes);

// ToHex(bytes) when hex, else Escape(bytes).
std::string FormatBytes(std::string_view bytes, bool hex);

// Classic hex dump: 16 bytes per line as
// "00001000  6b 65 79 ...  |key...|", offsets starting at base_offset.
std::string HexDump(std::string_view bytes, uint64_t base_offset = 0);

}  // namespace siftdb::tools

#endif  // SIFTDB_TOOLS_COMMON_HEX_H_
