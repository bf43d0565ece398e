// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/iterate_bounds.h"

#include "table/internal_key.h"

namespace siftdb {

std::string SmallestInternalKeyOf(std::string_view user_key) {
  std::string key;
  key.reserve(user_key.size() + kInternalKeyTrailerSize);
  key.append(user_key.data(), user_key.size());
  // Trailers sort descending: the largest one sorts first.
  key.append(kInternalKeyTrailerSize, '\xff');
  return key;
}

}  // namespace siftdb
