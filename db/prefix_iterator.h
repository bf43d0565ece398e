// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// NewPrefixSameAsStartIterator: ReadOptions::prefix_same_as_start over a
// user-key iterator. After Seek(target) with target in the extractor's
// domain, the iterator is valid only on keys of target's prefix: Next and
// Prev end (Valid() false, status OK) at the prefix's ends. Seeks outside
// the domain, SeekToFirst and SeekToLast are not limited.
//
// This is what lets the merge below leave out tables and MemTables whose
// prefix filter rejects the prefix (NewProbingMergingIterator): past the
// prefix its order is no longer complete, and this iterator never shows
// that part.
//
// Thread safety: one thread at a time. Ownership: takes `inner`;
// `extractor` must outlive the result.

#ifndef SIFTDB_DB_PREFIX_ITERATOR_H_
#define SIFTDB_DB_PREFIX_ITERATOR_H_

#include <memory>

#include "siftdb/iterator.h"
#include "siftdb/slice_transform.h"

namespace siftdb {

std::unique_ptr<Iterator> NewPrefixSameAsStartIterator(
    const SliceTransform* extractor, std::unique_ptr<Iterator> inner);

}  // namespace siftdb

#endif  // SIFTDB_DB_PREFIX_ITERATOR_H_
