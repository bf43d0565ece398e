// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// CRC32C, reflected polynomial 0x82F63B78 (RFC 3720, section B.4).
//
// Both implementations work on the raw CRC register: Extend() inverts the
// CRC on the way in and out (the standard pre- and post-conditioning), and
// everything in between is a linear function over GF(2). That linearity is
// what lets the hardware path run three independent streams and stitch
// them together: for data A|B with |B| = L bytes,
//   reg(s, A|B) = Shift_L(reg(s, A)) ^ reg(0, B)
// where Shift_L is the effect on the register of feeding it L zero bytes,
// a 32x32 bit matrix applied here with four 256-entry tables.

#include "util/crc32c.h"

#include <array>
#include <cstring>

#include "util/crc32c_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#define SIFTDB_CRC32C_X86 1
#include <nmmintrin.h>
#endif

namespace siftdb::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli

// kTables[k][b]: register contribution of byte b followed by k zero bytes.
using SliceTables = std::array<std::array<uint32_t, 256>, 8>;

constexpr SliceTables MakeSliceTables() {
  SliceTables t{};
  for (uint32_t b = 0; b < 256; b++) {
    uint32_t c = b;
    for (int i = 0; i < 8; i++) c = (c >> 1) ^ ((c & 1) ? kPoly : 0);
    t[0][b] = c;
  }
  for (int k = 1; k < 8; k++) {
    for (uint32_t b = 0; b < 256; b++) {
      const uint32_t prev = t[k - 1][b];
      t[k][b] = (prev >> 8) ^ t[0][prev & 0xff];
    }
  }
  return t;
}

constexpr SliceTables kTables = MakeSliceTables();

inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;  // little-endian host assumed by the x86 and slicing paths below
}

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline uint32_t StepByte(uint32_t reg, uint8_t b) {
  return (reg >> 8) ^ kTables[0][(reg ^ b) & 0xff];
}

bool IsLittleEndian() {
  const uint32_t one = 1;
  uint8_t first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

}  // namespace

uint32_t ExtendPortable(uint32_t init_crc, const char* data, size_t n) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(data);
  const uint8_t* const end = p + n;
  uint32_t reg = ~init_crc;
  static const bool little_endian = IsLittleEndian();
  if (little_endian) {
    while (end - p >= 8) {
      const uint32_t lo = Load32(p) ^ reg;
      const uint32_t hi = Load32(p + 4);
      reg = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^
            kTables[5][(lo >> 16) & 0xff] ^ kTables[4][lo >> 24] ^
            kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
            kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
      p += 8;
    }
  }
  while (p < end) reg = StepByte(reg, *p++);
  return ~reg;
}

#if defined(SIFTDB_CRC32C_X86)
namespace {

// Stripe lengths (bytes per stream) of the three-stream loop. The long one
// amortizes the two Shift() calls per stripe; the short one lets inputs of
// a few hundred bytes use all three streams too.
constexpr size_t kLongStripe = 8192;
constexpr size_t kShortStripe = 256;

// Shift_L as four byte-indexed tables: Shift_L(x) = t[0][x0]^..^t[3][x3].
struct ShiftTable {
  uint32_t t[4][256];

  explicit ShiftTable(size_t zero_bytes) {
    // Image of each single-bit register under L zero bytes...
    uint32_t basis[32];
    for (int bit = 0; bit < 32; bit++) {
      uint32_t reg = uint32_t{1} << bit;
      for (size_t i = 0; i < zero_bytes; i++) reg = StepByte(reg, 0);
      basis[bit] = reg;
    }
    // ...and, by linearity, of every byte value in every position.
    for (int pos = 0; pos < 4; pos++) {
      for (uint32_t v = 0; v < 256; v++) {
        uint32_t image = 0;
        for (int bit = 0; bit < 8; bit++) {
          if (v & (1u << bit)) image ^= basis[pos * 8 + bit];
        }
        t[pos][v] = image;
      }
    }
  }

  uint32_t Apply(uint32_t reg) const {
    return t[0][reg & 0xff] ^ t[1][(reg >> 8) & 0xff] ^
           t[2][(reg >> 16) & 0xff] ^ t[3][reg >> 24];
  }
};

const ShiftTable& LongShift() {
  static const ShiftTable* const table = new ShiftTable(kLongStripe);
  return *table;
}

const ShiftTable& ShortShift() {
  static const ShiftTable* const table = new ShiftTable(kShortStripe);
  return *table;
}

bool DetectHardware() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}

bool HardwareAvailable() {
  static const bool available = DetectHardware();
  return available;
}

// Runs the three-stream loop over as many 3*stripe chunks as fit.
__attribute__((target("sse4.2"))) inline uint64_t ThreeStreams(
    uint64_t reg, const uint8_t** pp, size_t* np, size_t stripe,
    const ShiftTable& shift) {
  const uint8_t* p = *pp;
  size_t n = *np;
  while (n >= 3 * stripe) {
    uint64_t c0 = reg, c1 = 0, c2 = 0;
    const uint8_t* const stop = p + stripe;
    do {
      c0 = _mm_crc32_u64(c0, Load64(p));
      c1 = _mm_crc32_u64(c1, Load64(p + stripe));
      c2 = _mm_crc32_u64(c2, Load64(p + 2 * stripe));
      p += 8;
    } while (p < stop);
    reg = shift.Apply(shift.Apply(static_cast<uint32_t>(c0)) ^
                      static_cast<uint32_t>(c1)) ^
          static_cast<uint32_t>(c2);
    p += 2 * stripe;
    n -= 3 * stripe;
  }
  *pp = p;
  *np = n;
  return reg;
}

}  // namespace

__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t init_crc,
                                                          const char* data,
                                                          size_t n) {
  if (!HardwareAvailable()) return ExtendPortable(init_crc, data, n);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(data);
  uint64_t reg = ~init_crc;
  // Byte steps up to an 8-byte boundary so the wide loads are aligned.
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    reg = _mm_crc32_u8(static_cast<uint32_t>(reg), *p++);
    n--;
  }
  if (n >= 3 * kLongStripe) {
    reg = ThreeStreams(reg, &p, &n, kLongStripe, LongShift());
  }
  if (n >= 3 * kShortStripe) {
    reg = ThreeStreams(reg, &p, &n, kShortStripe, ShortShift());
  }
  while (n >= 8) {
    reg = _mm_crc32_u64(reg, Load64(p));
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    reg = _mm_crc32_u8(static_cast<uint32_t>(reg), *p++);
    n--;
  }
  return ~static_cast<uint32_t>(reg);
}

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
  if (HardwareAvailable()) return ExtendHardware(init_crc, data, n);
  return ExtendPortable(init_crc, data, n);
}

bool IsHardwareAccelerated() { return HardwareAvailable(); }

#else  // !SIFTDB_CRC32C_X86

uint32_t ExtendHardware(uint32_t init_crc, const char* data, size_t n) {
  return ExtendPortable(init_crc, data, n);
}

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
  return ExtendPortable(init_crc, data, n);
}

bool IsHardwareAccelerated() { return false; }

#endif  // SIFTDB_CRC32C_X86

}  // namespace siftdb::crc32c
