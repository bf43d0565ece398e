// Copyright (c) siftdb authors.
//
// DBImpl compaction: picking, merging inputs into new tables (dropping
// entries that no snapshot can see), installing the result, and manual
// CompactRange.

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/compaction.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "table/table_builder.h"

namespace siftdb {

struct DBImpl::CompactionState {
  struct Output {
    uint64_t number;
    uint64_t file_size;
    std::string smallest, largest;
  };
  explicit CompactionState(std::unique_ptr<Compaction> c)
      : compaction(std::move(c)) {}

  std::unique_ptr<Compaction> compaction;
  // Entries at or below this sequence are visible to no snapshot other
  // than the newest state, so older versions beneath them can be dropped.
  SequenceNumber smallest_snapshot = 0;
  std::vector<Output> outputs;
  std::unique_ptr<WritableFile> outfile;
  std::unique_ptr<TableBuilder> builder;
  uint64_t total_bytes = 0;

  Output* current_output() { return &outputs.back(); }
};

void DBImpl::BackgroundCompaction() {
  std::unique_ptr<Compaction> c;
  ManualCompaction* manual = manual_compaction_;
  std::string manual_end;
  if (manual != nullptr && !manual->done) {
    std::string_view begin(manual->begin), end(manual->end);
    c = versions_->CompactRange(manual->level,
                                manual->has_begin ? &begin : nullptr,
                                manual->has_end ? &end : nullptr);
    if (c == nullptr) {
      manual->done = true;
      return;
    }
    // Where this step ended: the next step starts after it.
    std::string_view last_user_key =
        ExtractUserKey(c->input(0, c->num_input_files(0) - 1)->largest);
    manual_end = std::string(last_user_key);
    manual->in_progress = true;
  } else {
    manual = nullptr;  // an automatic compaction
    c = versions_->PickCompaction();
    if (c == nullptr) return;
  }

  absl::Status status;
  if (manual == nullptr && c->IsTrivialMove()) {
    // Move the table down a level; no data is rewritten.
    FileMetaData* f = c->input(0, 0);
    c->edit()->RemoveFile(c->level(), f->number);
    c->edit()->AddFile(c->level() + 1, f->number, f->file_size, f->smallest,
                       f->largest);
    status = versions_->LogAndApply(c->edit(), &mutex_);
    if (status.ok() && mirror_ != nullptr) {
      mirror_->VersionInstalled(LiveTablesForMirror(), {});
    }
    LogMessage(absl::StrFormat("moved %06d.sst to level %d: %s", f->number,
                               c->level() + 1, status.ToString()));
    c.reset();
  } else {
    CompactionState compact(std::move(c));
    status = DoCompactionWork(&compact);
    CleanupCompaction(&compact);
    // After a failure nobody knows whether the MANIFEST holds the outputs
    // (a failed sync may still have written the record): delete nothing.
    if (status.ok()) RemoveObsoleteFiles();
  }
  if (!status.ok() && !shutting_down_) RecordBackgroundError(status);

  if (manual != nullptr && manual->in_progress) {
    manual->in_progress = false;
    if (!status.ok()) {
      manual->done = true;
    } else {
      // Continue after the range this step covered.
      manual->has_begin = true;
      manual->begin = manual_end;
      if (manual->has_end &&
          options_.comparator->Compare(manual->begin, manual->end) >= 0) {
        manual->done = true;
      }
      // The step compacted every remaining table of a level-0 range.
      if (manual->level == 0) manual->done = true;
    }
  }
}

absl::Status DBImpl::OpenCompactionOutputFile(CompactionState* compact) {
  uint64_t number;
  {
    MutexLock l(&mutex_);
    number = versions_->NewFileNumber();
    pending_outputs_.insert(number);
  }
  compact->outputs.push_back({number, 0, "", ""});
  auto file = env_->NewWritableFile(TableFileName(dbname_, number));
  if (!file.ok()) return file.status();
  compact->outfile = std::move(*file);
  compact->builder =
      std::make_unique<TableBuilder>(table_options_, compact->outfile.get());
  return absl::OkStatus();
}

absl::Status DBImpl::FinishCompactionOutputFile(CompactionState* compact,
                                                Iterator* input) {
  CompactionState::Output* out = compact->current_output();
  absl::Status s = input->status();
  if (s.ok()) {
    s = compact->builder->Finish();
  } else {
    compact->builder->Abandon();
  }
  const uint64_t entries = compact->builder->NumEntries();
  out->file_size = compact->builder->FileSize();
  compact->total_bytes += out->file_size;
  compact->builder.reset();
  if (s.ok()) s = compact->outfile->Sync();
  if (s.ok()) s = compact->outfile->Close();
  compact->outfile.reset();
  if (s.ok() && entries > 0) {
    // Check the table opens before the MANIFEST refers to it.
    s = table_cache_->WithTable(out->number, out->file_size,
                                [](const Table&) {});
  }
  return s;
}

absl::Status DBImpl::InstallCompactionResults(CompactionState* compact) {
  Compaction* c = compact->compaction.get();
  // The outputs' directory entries must be durable before the MANIFEST
  // names them.
  absl::Status s = env_->SyncDir(dbname_);
  if (!s.ok()) return s;
  c->AddInputDeletions(c->edit());
  for (const CompactionState::Output& out : compact->outputs) {
    c->edit()->AddFile(c->level() + 1, out.number, out.file_size, out.smallest,
                       out.largest);
  }
  s = versions_->LogAndApply(c->edit(), &mutex_);
  if (s.ok() && mirror_ != nullptr) {
    mirror_->VersionInstalled(LiveTablesForMirror(), {});
  }
  return s;
}

void DBImpl::CleanupCompaction(CompactionState* compact) {
  if (compact->builder != nullptr) {
    compact->builder->Abandon();
    compact->builder.reset();
  }
  compact->outfile.reset();
  for (const CompactionState::Output& out : compact->outputs) {
    pending_outputs_.erase(out.number);
  }
  compact->compaction.reset();  // releases the input version (needs mutex)
}

absl::Status DBImpl::DoCompactionWork(CompactionState* compact) {
  const uint64_t start_micros = env_->NowMicros();
  int64_t imm_micros = 0;  // time spent flushing MemTables meanwhile
  Compaction* c = compact->compaction.get();
  LogMessage(absl::StrFormat("compacting %d@%d + %d@%d tables",
                             c->num_input_files(0), c->level(),
                             c->num_input_files(1), c->level() + 1));
  compact->smallest_snapshot = snapshots_.empty()
                                   ? versions_->LastSequence()
                                   : snapshots_.oldest()->sequence();
  std::unique_ptr<Iterator> input = versions_->MakeInputIterator(c);

  mutex_.Unlock();
  input->SeekToFirst();
  absl::Status status;
  const Comparator* ucmp = options_.comparator;
  std::string current_user_key;
  bool has_current_user_key = false;
  SequenceNumber last_sequence_for_key = kMaxSequenceNumber;
  std::string zeroed_key;  // the output key when its sequence is zeroed
  while (input->Valid()) {
    if (has_imm_.load(std::memory_order_acquire)) {
      // A full MemTable waits to be flushed: writers stall until it is.
      const uint64_t imm_start = env_->NowMicros();
      mutex_.Lock();
      if (imm_ != nullptr) {
        CompactMemTable();
        background_done_cv_.SignalAll();
      }
      mutex_.Unlock();
      imm_micros += env_->NowMicros() - imm_start;
    }
    {
      MutexLock l(&mutex_);
      if (shutting_down_) {
        status = absl::AbortedError("DB closing during compaction");
      }
    }
    if (!status.ok()) break;

    std::string_view key = input->key();
    if (compact->builder != nullptr && c->ShouldStopBefore(key)) {
      status = FinishCompactionOutputFile(compact, input.get());
      if (!status.ok()) break;
    }

    bool drop = false;
    ParsedInternalKey ikey;
    if (!ParseInternalKey(key, &ikey)) {
      // Keep what we do not understand; never hide data silently.
      has_current_user_key = false;
      last_sequence_for_key = kMaxSequenceNumber;
    } else {
      if (!has_current_user_key ||
          ucmp->Compare(ikey.user_key, current_user_key) != 0) {
        current_user_key.assign(ikey.user_key.data(), ikey.user_key.size());
        has_current_user_key = true;
        last_sequence_for_key = kMaxSequenceNumber;
      }
      if (last_sequence_for_key <= compact->smallest_snapshot) {
        // A newer entry for this key is visible to every snapshot.
        drop = true;
      } else if (ikey.type == kTypeDeletion &&
                 ikey.sequence <= compact->smallest_snapshot &&
                 c->IsBaseLevelForKey(ikey.user_key)) {
        // Nothing older exists below, and every snapshot sees the deletion:
        // the tombstone has nothing left to hide.
        drop = true;
      }
      last_sequence_for_key = ikey.sequence;
      if (!drop && ikey.type == kTypeValue && ikey.sequence != 0 &&
          ikey.sequence <= compact->smallest_snapshot &&
          c->IsBaseLevelForKey(ikey.user_key)) {
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
      if (compact->builder == nullptr) {
        status = OpenCompactionOutputFile(compact);
        if (!status.ok()) break;
      }
      if (compact->builder->NumEntries() == 0) {
        compact->current_output()->smallest = std::string(key);
      }
      compact->current_output()->largest = std::string(key);
      compact->builder->Add(key, input->value());
      if (compact->builder->FileSize() >= c->MaxOutputFileSize()) {
        status = FinishCompactionOutputFile(compact, input.get());
        if (!status.ok()) break;
      }
    }
    input->Next();
  }
  if (status.ok() && compact->builder != nullptr) {
    status = FinishCompactionOutputFile(compact, input.get());
  }
  if (status.ok()) status = input->status();
  input.reset();

  mutex_.Lock();
  LevelStats& stats = level_stats_[c->level() + 1];
  stats.micros +=
      static_cast<int64_t>(env_->NowMicros() - start_micros) - imm_micros;
  stats.bytes_read += c->InputBytes(0) + c->InputBytes(1);
  stats.bytes_written += compact->total_bytes;
  stats.count++;
  stats_.Record(Ticker::kBytesWritten, compact->total_bytes);
  if (status.ok()) status = InstallCompactionResults(compact);
  LogMessage(absl::StrFormat("compacted to %s: %d bytes: %s",
                             versions_->LevelSummary(), compact->total_bytes,
                             status.ToString()));
  return status;
}

absl::Status DBImpl::ManualCompactLevel(int level,
                                        const std::string_view* begin,
                                        const std::string_view* end) {
  ManualCompaction manual;
  manual.level = level;
  if (begin != nullptr) {
    manual.has_begin = true;
    manual.begin = std::string(*begin);
  }
  if (end != nullptr) {
    manual.has_end = true;
    manual.end = std::string(*end);
  }
  MutexLock l(&mutex_);
  // One manual compaction at a time.
  while (manual_compaction_ != nullptr && !shutting_down_) {
    background_done_cv_.Wait(&mutex_);
  }
  manual_compaction_ = &manual;
  background_work_cv_.Signal();
  while ((!manual.done && bg_error_.ok() && !shutting_down_) ||
         manual.in_progress) {
    background_done_cv_.Wait(&mutex_);
  }
  manual_compaction_ = nullptr;
  background_done_cv_.SignalAll();
  return bg_error_;
}

absl::Status DBImpl::CompactRange(const std::string_view* begin,
                                  const std::string_view* end) {
  absl::Status s = FlushMemTable();
  if (!s.ok()) return s;
  int max_level_with_files = 1;
  {
    MutexLock l(&mutex_);
    Version* base = versions_->current();
    for (int level = 1; level < kNumLevels; level++) {
      if (base->OverlapInLevel(level, begin, end)) {
        max_level_with_files = level;
      }
    }
  }
  for (int level = 0; level < max_level_with_files && s.ok(); level++) {
    s = ManualCompactLevel(level, begin, end);
  }
  return s;
}

}  // namespace siftdb
