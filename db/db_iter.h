// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// NewDBIterator: turns an iterator over internal keys (a merge of the
// MemTables and tables) into the user-visible iterator: user keys only, the
// newest entry visible at `sequence` for each, deleted keys hidden.
//
// Thread safety: one thread at a time. Ownership: takes the internal
// iterator; the comparator must outlive the result.

#ifndef SIFTDB_DB_DB_ITER_H_
#define SIFTDB_DB_DB_ITER_H_

#include <memory>

#include "siftdb/comparator.h"
#include "siftdb/iterator.h"
#include "table/internal_key.h"

namespace siftdb {

std::unique_ptr<Iterator> NewDBIterator(const Comparator* user_comparator,
                                        std::unique_ptr<Iterator> internal,
                                        SequenceNumber sequence);

}  // namespace siftdb

#endif  // SIFTDB_DB_DB_ITER_H_
