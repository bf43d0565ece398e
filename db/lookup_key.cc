// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/lookup_key.h"

#include <cstring>

#include "util/coding.h"

namespace siftdb {

LookupKey::LookupKey(std::string_view user_key, SequenceNumber s)
    : heap_(nullptr) {
  const size_t usize = user_key.size();
  const size_t needed = usize + kMaxVarint32Bytes + kInternalKeyTrailerSize;
  char* dst = space_;
  if (needed > sizeof(space_)) {
    heap_ = new char[needed];
    dst = heap_;
  }
  start_ = dst;
  dst = EncodeVarint32(dst,
                       static_cast<uint32_t>(usize + kInternalKeyTrailerSize));
  kstart_ = dst;
  if (usize > 0)
    std::memcpy(dst, user_key.data(), usize);  // data() may be null
  dst += usize;
  EncodeFixed64(dst, PackSequenceAndType(s, kValueTypeForSeek));
  dst += kInternalKeyTrailerSize;
  end_ = dst;
}

LookupKey::~LookupKey() { delete[] heap_; }

}  // namespace siftdb
