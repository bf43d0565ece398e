// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The two CRC32C implementations behind crc32c::Extend, exposed so tests
// and benchmarks can compare them. Both compute exactly what Extend does;
// production code calls Extend.
//
// Thread safety: all functions are safe to call concurrently.

#ifndef SIFTDB_UTIL_CRC32C_INTERNAL_H_
#define SIFTDB_UTIL_CRC32C_INTERNAL_H_

#include <cstddef>
#include <cstdint>

namespace siftdb::crc32c {

// Table-driven (slicing-by-8); works on every CPU.
uint32_t ExtendPortable(uint32_t init_crc, const char* data, size_t n);

// SSE4.2 crc32 instruction, three interleaved streams for long inputs.
// REQUIRES: IsHardwareAccelerated() (otherwise falls back to the portable
// version, so it is always safe to call).
uint32_t ExtendHardware(uint32_t init_crc, const char* data, size_t n);

}  // namespace siftdb::crc32c

#endif  // SIFTDB_UTIL_CRC32C_INTERNAL_H_
