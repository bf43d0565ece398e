// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Endian-neutral encoding of integers and length-prefixed strings.
// Every persisted integer in siftdb is little-endian, fixed-width (Fixed32,
// Fixed64) or a base-128 varint (low 7 bits first, high bit = "more").
//
// Decoders never read past the input they are given: GetVarint32 and
// friends return false (leaving *input unspecified) on truncated or
// overlong input.

#ifndef SIFTDB_UTIL_CODING_H_
#define SIFTDB_UTIL_CODING_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace siftdb {

inline constexpr int kMaxVarint32Bytes = 5;
inline constexpr int kMaxVarint64Bytes = 10;

// --- Fixed width, little-endian ---
inline void EncodeFixed32(char* dst, uint32_t value) {
  uint8_t* const b = reinterpret_cast<uint8_t*>(dst);
  b[0] = static_cast<uint8_t>(value);
  b[1] = static_cast<uint8_t>(value >> 8);
  b[2] = static_cast<uint8_t>(value >> 16);
  b[3] = static_cast<uint8_t>(value >> 24);
}

inline void EncodeFixed64(char* dst, uint64_t value) {
  EncodeFixed32(dst, static_cast<uint32_t>(value));
  EncodeFixed32(dst + 4, static_cast<uint32_t>(value >> 32));
}

inline uint32_t DecodeFixed32(const char* ptr) {
  const uint8_t* const b = reinterpret_cast<const uint8_t*>(ptr);
  return static_cast<uint32_t>(b[0]) | (static_cast<uint32_t>(b[1]) << 8) |
         (static_cast<uint32_t>(b[2]) << 16) |
         (static_cast<uint32_t>(b[3]) << 24);
}

inline uint64_t DecodeFixed64(const char* ptr) {
  return static_cast<uint64_t>(DecodeFixed32(ptr)) |
         (static_cast<uint64_t>(DecodeFixed32(ptr + 4)) << 32);
}

void PutFixed32(std::string* dst, uint32_t value);
void PutFixed64(std::string* dst, uint64_t value);

// --- Varints ---
// Writes value at dst (which must have room for kMaxVarint*Bytes) and
// returns the byte past the last one written.
char* EncodeVarint32(char* dst, uint32_t value);
char* EncodeVarint64(char* dst, uint64_t value);
void PutVarint32(std::string* dst, uint32_t value);
void PutVarint64(std::string* dst, uint64_t value);
// Bytes the varint encoding of value takes.
int VarintLength(uint64_t value);

// Decode from [p, limit); return the byte past the varint, or nullptr when
// the input is truncated or longer than the type allows.
const char* GetVarint32PtrFallback(const char* p, const char* limit,
                                   uint32_t* value);
inline const char* GetVarint32Ptr(const char* p, const char* limit,
                                  uint32_t* value) {
  // Fast path: lengths below 128 (most keys and values) take one byte.
  if (p < limit) {
    const uint32_t byte = static_cast<uint8_t>(*p);
    if ((byte & 0x80) == 0) {
      *value = byte;
      return p + 1;
    }
  }
  return GetVarint32PtrFallback(p, limit, value);
}
const char* GetVarint64Ptr(const char* p, const char* limit, uint64_t* value);

// Consume from the front of *input; false on malformed input.
bool GetVarint32(std::string_view* input, uint32_t* value);
bool GetVarint64(std::string_view* input, uint64_t* value);
bool GetFixed32(std::string_view* input, uint32_t* value);
bool GetFixed64(std::string_view* input, uint64_t* value);

// --- Length-prefixed strings: varint32 length, then the bytes ---
void PutLengthPrefixedSlice(std::string* dst, std::string_view value);
bool GetLengthPrefixedSlice(std::string_view* input, std::string_view* result);

}  // namespace siftdb

#endif  // SIFTDB_UTIL_CODING_H_
