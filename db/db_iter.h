// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// NewDBIterator: turns an iterator over internal keys (a merge of the
// MemTables and tables) into the user-visible iterator: user keys only, the
// newest entry visible at `sequence` for each, deleted keys hidden, and
// only keys inside options' iterate bounds [lower, upper) (compared with
// user_comparator). A bounded scan stops at the first internal entry past
// its bound, hidden ones included; lower >= upper is an empty iterator.
// The internal iterator may hold keys outside the bounds (a table's
// bounded iterator returns whole blocks); they are never returned.
//
// When sampler is set, the iterator calls it with the internal key it is
// at about once per MiB of keys and values it reads (at random points, a
// mean period of kReadSampleBytes), so that scans can ask for compactions
// (Version::RecordReadSample). sample_seed picks the sample points: give
// each iterator its own (DBImpl counts them), or iterators that the
// allocator places at one address would all sample at the same offsets,
// and repeated short scans would then be sampled always or never.
//
// Thread safety: one thread at a time. Ownership: takes the internal
// iterator; the comparator, the bound bytes and whatever the sampler uses
// must outlive the result.

#ifndef SIFTDB_DB_DB_ITER_H_
#define SIFTDB_DB_DB_ITER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "siftdb/comparator.h"
#include "siftdb/iterator.h"
#include "siftdb/options.h"
#include "table/internal_key.h"

namespace siftdb {

// Called with an internal key the iterator read; see NewDBIterator.
using ReadSampler = std::function<void(std::string_view internal_key)>;

// LevelDB's figure for the same mechanism: about one sample per MiB read.
inline constexpr uint32_t kReadSampleBytes = 1 << 20;

std::unique_ptr<Iterator> NewDBIterator(const Comparator* user_comparator,
                                        std::unique_ptr<Iterator> internal,
                                        SequenceNumber sequence,
                                        const ReadOptions& options,
                                        ReadSampler sampler = nullptr,
                                        uint64_t sample_seed = 0);

}  // namespace siftdb

#endif  // SIFTDB_DB_DB_ITER_H_
