// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DBImpl's iterators: a DBIter over the merge of the MemTables and tables
// a read state references; for prefix seeks (prefix_same_as_start), a lazy
// iterator that builds that tree only once a seek passes some source's
// prefix filter (docs/prefix_filters.md).

#include <vector>

#include "db/db_impl.h"
#include "db/db_iter.h"
#include "db/prefix_iterator.h"
#include "siftdb/slice_transform.h"
#include "table/merging_iterator.h"

namespace siftdb {

// Holds the read state from NewIterator on (the iterator reads what the DB
// held then), and probes it before building anything: a seek to a prefix
// that no MemTable or table may hold costs the filter probes alone.
class DBImpl::PrefixSeekIterator final : public PrefixSameAsStartIterator {
 public:
  PrefixSeekIterator(DBImpl* db, const ReadOptions& options,
                     const ReadState& state)
      : PrefixSameAsStartIterator(db->options_.prefix_extractor.get()),
        db_(db),
        options_(WithoutSnapshot(options)),
        state_(state) {}
  ~PrefixSeekIterator() override {
    DropInner();  // it reads what state_ references
    db_->ReleaseReadState(state_);
  }

 protected:
  bool SourcesMayHoldPrefix(std::string_view target,
                            std::string_view prefix) override {
    for (MemTable* mem : {state_.mem, state_.imm}) {
      if (mem != nullptr && mem->PrefixMayMatch(prefix)) return true;
    }
    seek_key_.clear();
    AppendInternalKey(&seek_key_, target, state_.sequence, kValueTypeForSeek);
    return state_.current->MayHoldPrefix(seek_key_, prefix,
                                         db_->options_.prefix_extractor.get());
  }

  std::unique_ptr<Iterator> NewInner() override {
    return NewDBIterator(db_->options_.comparator,
                         db_->NewInternalIterator(options_, state_),
                         state_.sequence, options_, ReadSamplerOf(state_),
                         db_->NextReadSampleSeed());
  }

 private:
  // The snapshot's sequence is in state_: the snapshot may be released
  // before the first seek. The bounds' bytes are the caller's.
  static ReadOptions WithoutSnapshot(ReadOptions o) {
    o.snapshot = nullptr;
    return o;
  }

  DBImpl* const db_;
  const ReadOptions options_;
  const ReadState state_;
  std::string seek_key_;  // the last probed target @ state_.sequence
};

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options) {
  const ReadState state = AcquireReadState(options);
  if (options_.prefix_extractor != nullptr && options.prefix_same_as_start &&
      !options.total_order_seek) {
    return std::make_unique<PrefixSeekIterator>(this, options, state);
  }
  std::unique_ptr<Iterator> internal = NewInternalIterator(options, state);
  // A function-pointer cleanup: one allocation (the state's copy), where a
  // capturing std::function would take two.
  internal->RegisterCleanup(
      [](void* db, void* held) {
        std::unique_ptr<ReadState> held_state(static_cast<ReadState*>(held));
        static_cast<DBImpl*>(db)->ReleaseReadState(*held_state);
      },
      this, new ReadState(state));
  return NewDBIterator(options_.comparator, std::move(internal), state.sequence,
                       options, ReadSamplerOf(state), NextReadSampleSeed());
}

ReadSampler DBImpl::ReadSamplerOf(const ReadState& state) {
  // The iterator holds state (and so its Version) until it is gone. A
  // charge to a Version that a compaction has since replaced is simply
  // lost, as a Get's would be; the background thread looks at the current
  // Version's seek_compaction_ now and then.
  Version* const version = state.current;
  return [version](std::string_view internal_key) {
    version->RecordReadSample(internal_key);
  };
}

std::unique_ptr<Iterator> DBImpl::NewInternalIterator(
    const ReadOptions& options, const ReadState& state) {
  std::vector<std::unique_ptr<Iterator>> children;
  // Every source's filter, so that a seek to a key that exists reads only
  // the sources that may hold it (see NewProbingMergingIterator).
  std::vector<ChildProbe> probes;
  // Prefix seeks: every source's prefix filter (docs/prefix_filters.md).
  const SliceTransform* extractor = options_.prefix_extractor.get();
  SeekPrefix seek_prefix = PrefixOfSeeks(options);
  std::vector<ChildPrefixProbe> prefix_probes;
  std::vector<ChildPrefixProbe>* prefix_probes_out =
      seek_prefix != nullptr ? &prefix_probes : nullptr;
  // At most: two MemTables, each level-0 table, one per deeper level.
  const size_t most = 2 + state.current->files(0).size() + kNumLevels;
  children.reserve(most);
  probes.reserve(most);
  if (prefix_probes_out != nullptr) prefix_probes.reserve(most);
  // Newest first, so entries of equal internal key (impossible in
  // practice) would favor the newest source. The read state's references
  // keep every MemTable and table the probes use alive.
  for (MemTable* mem : {state.mem, state.imm}) {
    // A MemTable empty now holds nothing this iterator may see: every entry
    // at or below state.sequence was added before the sequence was
    // published. Leaving it out spares a scan one merging layer (when the
    // tables form one sorted run, no merge at all).
    if (mem == nullptr || mem->Empty()) continue;
    children.push_back(mem->NewIterator());
    probes.emplace_back([mem](std::string_view target) {
      return mem->UserKeyMayMatch(ExtractUserKey(target));
    });
    if (prefix_probes_out != nullptr) {
      prefix_probes.emplace_back(
          [mem](std::string_view /*target*/, std::string_view prefix) {
            return mem->PrefixMayMatch(prefix);
          });
    }
  }
  state.current->AddIterators(options, &children, &probes, prefix_probes_out,
                              extractor);
  return NewProbingMergingIterator(&internal_comparator_, std::move(children),
                                   std::move(probes), std::move(seek_prefix),
                                   std::move(prefix_probes));
}

namespace {

// Bytewise order: whether every key k with prefix <= k < upper begins with
// prefix, i.e. upper is at most the prefix's successor (the smallest string
// greater than every string beginning with prefix).
bool UpperBoundWithinPrefix(std::string_view upper, std::string_view prefix) {
  std::string successor(prefix);
  while (!successor.empty() &&
         static_cast<unsigned char>(successor.back()) == 0xff) {
    successor.pop_back();
  }
  // All 0xff: every key >= prefix begins with it.
  if (successor.empty()) return true;
  successor.back() =
      static_cast<char>(static_cast<unsigned char>(successor.back()) + 1);
  return upper.compare(successor) <= 0;
}

}  // namespace

SeekPrefix DBImpl::PrefixOfSeeks(const ReadOptions& options) const {
  const SliceTransform* extractor = options_.prefix_extractor.get();
  if (extractor == nullptr || options.total_order_seek) return nullptr;
  if (options.prefix_same_as_start) {
    return [extractor](
               std::string_view target) -> std::optional<std::string_view> {
      const std::string_view user_key = ExtractUserKey(target);
      if (!extractor->InDomain(user_key)) return std::nullopt;
      return extractor->Transform(user_key);
    };
  }
  if (options.iterate_upper_bound.has_value()) {
    // The iterator never reads at or past the bound: when every key below
    // it, from the target on, has the target's prefix, the seek is a
    // prefix seek.
    const std::string_view upper = *options.iterate_upper_bound;
    const bool bytewise = options_.comparator == BytewiseComparator();
    return [extractor, upper, bytewise](
               std::string_view target) -> std::optional<std::string_view> {
      const std::string_view user_key = ExtractUserKey(target);
      if (!extractor->InDomain(user_key)) return std::nullopt;
      const std::string_view prefix = extractor->Transform(user_key);
      // Keys of one prefix are contiguous: between target and an upper
      // bound of the same prefix lie only keys of that prefix.
      if (extractor->InDomain(upper) && extractor->Transform(upper) == prefix) {
        return prefix;
      }
      if (bytewise && extractor->SameResultWhenAppended(prefix) &&
          UpperBoundWithinPrefix(upper, prefix)) {
        return prefix;
      }
      return std::nullopt;
    };
  }
  return nullptr;
}

}  // namespace siftdb
