// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Comparator: a total order over keys, used by the MemTable, the tables and
// every iterator of a database.
//
// Thread safety: implementations must be safe to call from many threads at
// once (the engine calls them concurrently without locking).
// Persistence: a comparator's Name() is stored in the MANIFEST; a database
// can only be reopened with a comparator of the same name.

#ifndef SIFTDB_INCLUDE_COMPARATOR_H_
#define SIFTDB_INCLUDE_COMPARATOR_H_

#include <string>
#include <string_view>

#include "siftdb/export.h"

namespace siftdb {

class SIFTDB_EXPORT Comparator {
 public:
  virtual ~Comparator() = default;

  // < 0 when a < b, 0 when equal, > 0 when a > b.
  virtual int Compare(std::string_view a, std::string_view b) const = 0;

  // Persisted with the database; change it whenever the order changes.
  virtual const char* Name() const = 0;

  // May shorten *start to any string s with *start <= s < limit. Used to
  // keep index blocks small. A correct no-op is to leave *start alone.
  virtual void FindShortestSeparator(std::string* start,
                                     std::string_view limit) const = 0;

  // May change *key to any string s >= *key. A correct no-op is to leave it.
  virtual void FindShortSuccessor(std::string* key) const = 0;
};

// Lexicographic byte order (unsigned bytes). The result is a singleton that
// lives for the whole process; never delete it.
SIFTDB_EXPORT const Comparator* BytewiseComparator();

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_COMPARATOR_H_
