// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DBImpl::MergeCompactionPart: one part of a compaction merged into its
// output tables, dropping entries no snapshot can see, zeroing sequence
// numbers at the base level, cutting outputs between user keys, and
// freeing inputs early when the compaction allows it.

#include <string>

#include "db/compaction_state.h"
#include "db/db_impl.h"
#include "table/internal_key.h"

namespace siftdb {

absl::Status DBImpl::MergeCompactionPart(const CompactionState& compact,
                                         CompactionPart* part,
                                         int64_t* imm_micros) {
  const Compaction* c = compact.compaction.get();
  Iterator* input = part->input.get();
  if (part->has_begin) {
    std::string target;
    AppendInternalKey(&target, part->begin, kMaxSequenceNumber,
                      kValueTypeForSeek);
    input->Seek(target);
  } else {
    input->SeekToFirst();
  }
  absl::Status status;
  const Comparator* ucmp = options_.comparator;
  std::string current_user_key;
  bool has_current_user_key = false;
  SequenceNumber last_sequence_for_key = kMaxSequenceNumber;
  std::string zeroed_key;  // the output key when its sequence is zeroed
  // The current output should end, but only before the next user key: all
  // versions of a user key must stay in one table of a level. Otherwise a
  // later compaction could take the table holding the newer versions down a
  // level without its neighbour, and reads would find the older versions
  // first (a table may grow past its target size when snapshots keep many
  // versions of one key).
  bool cut_pending = false;
  while (input->Valid()) {
    if (imm_micros != nullptr && has_imm_.load(std::memory_order_acquire)) {
      // A full MemTable waits to be flushed: writers stall until it is.
      const uint64_t imm_start = env_->NowMicros();
      MutexLock l(&mutex_);
      if (imm_ != nullptr && bg_error_.ok()) {
        CompactMemTable();
        background_done_cv_.SignalAll();
      }
      *imm_micros += env_->NowMicros() - imm_start;
    }
    if (shutting_down_.load(std::memory_order_acquire)) {
      status = absl::AbortedError(kClosing);
      // A write that failed meanwhile is a failure, not a stop.
      if (part->builder != nullptr && !part->builder->status().ok()) {
        status = part->builder->status();
      }
      break;
    }
    if (compact.part_failed.load(std::memory_order_relaxed)) {
      status = absl::AbortedError(kOtherPartFailed);
      break;
    }

    std::string_view key = input->key();
    ParsedInternalKey ikey;
    const bool parsed = ParseInternalKey(key, &ikey);
    if (parsed && part->has_end &&
        ucmp->Compare(ikey.user_key, part->end) >= 0) {
      break;  // the next part's range begins here
    }
    const bool new_user_key =
        !parsed || !has_current_user_key ||
        ucmp->Compare(ikey.user_key, current_user_key) != 0;
    if (compact.release_early && parsed && new_user_key &&
        (part->builder == nullptr ||
         part->builder->FileSize() >= c->MaxOutputFileSize() / 2)) {
      // Every entry before this user key is merged: free the input tables
      // that are done, if the outputs so far can join the output level now.
      size_t consumed[2];
      if (c->ReleasableBefore(ikey.user_key, part->release, consumed)) {
        if (part->builder != nullptr) {
          status = FinishCompactionOutputFile(*c, part, input);
          if (!status.ok()) break;
        }
        cut_pending = false;
        status = ReleaseMergedInputs(compact, part, consumed);
        if (!status.ok()) break;
      }
    }
    if (part->builder != nullptr && c->ShouldStopBefore(key, &part->cursor)) {
      cut_pending = true;
    }
    if (cut_pending && new_user_key && part->builder != nullptr) {
      cut_pending = false;
      status = FinishCompactionOutputFile(*c, part, input);
      if (!status.ok()) break;
    }

    bool drop = false;
    if (!parsed) {
      // Keep what we do not understand; never hide data silently.
      has_current_user_key = false;
      last_sequence_for_key = kMaxSequenceNumber;
    } else {
      if (new_user_key) {
        current_user_key.assign(ikey.user_key.data(), ikey.user_key.size());
        has_current_user_key = true;
        last_sequence_for_key = kMaxSequenceNumber;
      }
      if (last_sequence_for_key <= compact.smallest_snapshot) {
        // A newer entry for this key is visible to every snapshot.
        drop = true;
      } else if (ikey.sequence == last_sequence_for_key) {
        // A second copy of the entry just seen. Sequence numbers are unique
        // per write, so copies arise only when a compaction that freed
        // inputs early then failed: its installed outputs repeat entries of
        // the input tables it had not finished. The rule above already
        // drops them, since a failure stops the DB and every snapshot taken
        // after the reopen is newer than the copies; this one keeps a copy
        // from being written twice should that ever change.
        drop = true;
      } else if (ikey.type == kTypeDeletion &&
                 ikey.sequence <= compact.smallest_snapshot &&
                 c->IsBaseLevelForKey(ikey.user_key, &part->cursor)) {
        // Nothing older exists below, and every snapshot sees the deletion:
        // the tombstone has nothing left to hide.
        drop = true;
      }
      last_sequence_for_key = ikey.sequence;
      if (!drop && ikey.type == kTypeValue && ikey.sequence != 0 &&
          ikey.sequence <= compact.smallest_snapshot &&
          c->IsBaseLevelForKey(ikey.user_key, &part->cursor)) {
        // Every snapshot sees this entry and nothing older exists below:
        // its sequence number no longer orders anything, so store 0 (as
        // RocksDB does at the bottom). Newer entries of the key keep larger
        // numbers, and the zeroed trailers compress to almost nothing
        // (about 4.5 bytes less per entry with snappy).
        zeroed_key.clear();
        AppendInternalKey(&zeroed_key, ikey.user_key, 0, kTypeValue);
        key = zeroed_key;
      }
    }

    if (!drop) {
      if (part->builder == nullptr) {
        status = OpenCompactionOutputFile(compact, part);
        if (!status.ok()) break;
      }
      if (part->builder->NumEntries() == 0) {
        part->current_output()->smallest = std::string(key);
      }
      part->current_output()->largest = std::string(key);
      part->builder->Add(key, input->value());
      if (!part->builder->status().ok()) {
        // A failed write: stop now, not at the end of the output.
        status = part->builder->status();
        break;
      }
      if (part->builder->FileSize() >= c->MaxOutputFileSize()) {
        cut_pending = true;  // at the next user key
      }
    }
    input->Next();
  }
  if (status.ok() && part->builder != nullptr) {
    status = FinishCompactionOutputFile(*c, part, input);
  }
  if (status.ok()) status = input->status();
  if (!status.ok()) {
    compact.part_failed.store(true, std::memory_order_relaxed);
  }
  return status;
}

}  // namespace siftdb
