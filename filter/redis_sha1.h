// Copyright (c) siftdb authors.
//
// SHA-1 (FIPS 180-4), only to name Lua scripts the way Redis does: EVALSHA
// takes the lower-case hex SHA-1 of the script source, so a client that can
// compute it calls EVALSHA first and sends the source only on NOSCRIPT.
// Not for anything security-related.
//
// Thread safety: a pure function.

#ifndef SIFTDB_FILTER_REDIS_SHA1_H_
#define SIFTDB_FILTER_REDIS_SHA1_H_

#include <string>
#include <string_view>

namespace siftdb {

// 40 lower-case hex digits.
std::string Sha1Hex(std::string_view data);

}  // namespace siftdb

#endif  // SIFTDB_FILTER_REDIS_SHA1_H_
