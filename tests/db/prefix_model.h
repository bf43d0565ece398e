// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Helpers for the prefix-seek tests: what a std::map model says a forward
// prefix seek returns, and what an iterator returned, in one form
// ("key=value" strings) so the two compare with EXPECT_EQ; their key
// format and counter reads. The tests use a 4-byte fixed prefix extractor.

#ifndef SIFTDB_TESTS_DB_PREFIX_MODEL_H_
#define SIFTDB_TESTS_DB_PREFIX_MODEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/iterator.h"

namespace siftdb::prefix_model {

using Model = std::map<std::string, std::string>;

// "u<3 digits>-<4 digits>": the 4-byte prefix is the user. The tests write
// only even users, so odd ones are absent prefixes.
inline std::string UserKey(int user, int item) {
  return absl::StrFormat("u%03d-%04d", user, item);
}

// siftdb.counter.<name>.
inline uint64_t Counter(DB* db, const std::string& name) {
  std::string v;
  EXPECT_TRUE(db->GetProperty("siftdb.counter." + name, &v)) << name;
  return std::stoull(v);
}

// The model's entries of t's 4-byte prefix at or after t.
inline std::vector<std::string> ModelForward(const Model& m,
                                             const std::string& t) {
  std::vector<std::string> out;
  for (auto it = m.lower_bound(t);
       it != m.end() && it->first.compare(0, 4, t, 0, 4) == 0; ++it) {
    out.push_back(it->first + "=" + it->second);
  }
  return out;
}

// Every entry the iterator yields from Seek(t) on; its status must be OK.
inline std::vector<std::string> ScanForward(Iterator* it,
                                            const std::string& t) {
  std::vector<std::string> out;
  for (it->Seek(t); it->Valid(); it->Next()) {
    out.push_back(std::string(it->key()) + "=" + std::string(it->value()));
  }
  EXPECT_TRUE(it->status().ok()) << it->status();
  return out;
}

}  // namespace siftdb::prefix_model

#endif  // SIFTDB_TESTS_DB_PREFIX_MODEL_H_
