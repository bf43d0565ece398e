// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Helpers shared by the NewProbingMergingIterator tests
// (probing_merge_test.cc: comparison with the plain merge;
// probing_merge_work_test.cc: which children a Seek positions, and errors).
// Header-only. Icmp() returns a process-lifetime comparator that is never
// freed and is safe to use from any thread; SeekKey is a pure function.

#ifndef SIFTDB_TESTS_TABLE_PROBING_MERGE_TEST_UTIL_H_
#define SIFTDB_TESTS_TABLE_PROBING_MERGE_TEST_UTIL_H_

#include <string>
#include <string_view>

#include "siftdb/comparator.h"
#include "table/internal_key.h"
#include "tests/table/table_test_util.h"

namespace siftdb::test {

// The internal-key comparator over BytewiseComparator() that every child
// and merge in these tests is ordered by.
inline const InternalKeyComparator* Icmp() {
  static const InternalKeyComparator* const icmp =
      new InternalKeyComparator(BytewiseComparator());
  return icmp;
}

// The internal key a DB lookup of user_key at snapshot seq seeks to: it
// sorts before every entry of user_key with sequence number <= seq.
inline std::string SeekKey(std::string_view user_key, SequenceNumber seq) {
  return IKey(user_key, seq, kValueTypeForSeek);
}

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_TABLE_PROBING_MERGE_TEST_UTIL_H_
