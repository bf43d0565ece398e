// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// CRC32C (Castagnoli, polynomial 0x1EDC6F41, reflected), as in RFC 3720.
// Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at
// run time) and a table-driven portable version otherwise; both give the
// same answers. Thread-safe.

#ifndef SIFTDB_UTIL_CRC32C_H_
#define SIFTDB_UTIL_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace siftdb::crc32c {

// The CRC32C of concat(A, data[0, n)) where init_crc is the CRC32C of A.
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);

// The CRC32C of data[0, n).
inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

// True when Extend uses the hardware instruction.
bool IsHardwareAccelerated();

// A CRC stored next to the data it covers is masked, so that computing a
// CRC over bytes that themselves contain CRCs stays well-behaved.
// Persisted: the mask delta never changes.
inline constexpr uint32_t kMaskDelta = 0xa282ead8u;

inline uint32_t Mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}

inline uint32_t Unmask(uint32_t masked_crc) {
  const uint32_t rot = masked_crc - kMaskDelta;
  return ((rot >> 17) | (rot << 15));
}

}  // namespace siftdb::crc32c

#endif  // SIFTDB_UTIL_CRC32C_H_
