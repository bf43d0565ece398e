// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DBImpl compaction: picking, splitting into parts, output tables,
// installing the result, and manual CompactRange. Merging one part is in
// db_impl_compaction_merge.cc.

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/builder.h"
#include "db/compaction.h"
#include "db/compaction_state.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/output_compression.h"
#include "table/table_builder.h"
#include "util/rate_limited_file.h"

namespace siftdb {
namespace {

// The inputs of c whose every entry this part has merged once its output
// ending at largest_user_key is finished: those lying wholly inside
// [the part's begin, largest_user_key]. (Outputs end between user keys, so
// all entries of largest_user_key are in that output.) An input reaching
// into another part is never named: that part may not have finished.
// Recorded so that RepairDB without a MANIFEST can tell these inputs
// superseded; a name too few only keeps a table repair could have dropped.
std::vector<uint64_t> MergedInputsUpTo(const Comparator* ucmp,
                                       const Compaction& c, bool has_begin,
                                       const std::string& begin,
                                       std::string_view largest_user_key,
                                       std::set<uint64_t>* named) {
  std::vector<uint64_t> out;
  for (int which = 0; which < 2; which++) {
    for (int i = 0; i < c.num_input_files(which); i++) {
      const FileMetaData* f = c.input(which, i);
      if (named->count(f->number) > 0) continue;
      if (has_begin && ucmp->Compare(ExtractUserKey(f->smallest), begin) < 0) {
        continue;
      }
      if (ucmp->Compare(ExtractUserKey(f->largest), largest_user_key) > 0) {
        continue;
      }
      named->insert(f->number);
      out.push_back(f->number);
    }
  }
  return out;
}

}  // namespace

void DBImpl::BackgroundCompaction() {
  mutex_.AssertHeld();
  std::unique_ptr<Compaction> c;
  ManualCompaction* manual = manual_compaction_;
  std::string manual_end;
  const char* reason = "manual";
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
    if (options_.disable_auto_compactions) return;
    reason = versions_->CompactionReason();
    c = versions_->PickCompaction();
    if (c == nullptr) return;
  }
  const int job = ++next_job_id_;
  running_compactions_++;

  absl::Status status;
  if (manual == nullptr && c->IsTrivialMove()) {
    // Move the table down a level; no data is rewritten.
    FileMetaData* f = c->input(0, 0);
    c->edit()->RemoveFile(c->level(), f->number);
    c->edit()->AddFile(c->output_level(), f->number, f->file_size, f->smallest,
                       f->largest);
    status = versions_->LogAndApply(c->edit(), &mutex_);
    if (status.ok() && mirror_ != nullptr) {
      mirror_->VersionInstalled(LiveTablesForMirror(), {});
    }
    LogMessage(absl::StrFormat(
        "[job %d] compaction (%s): moved %06d.sst (%d bytes) from level %d "
        "to %d without rewriting: %s; levels: %s",
        job, reason, f->number, f->file_size, c->level(), c->output_level(),
        status.ToString(), LevelSummary()));
    c.reset();
  } else {
    CompactionState compact(std::move(c));
    compact.job = job;
    compact.reason = reason;
    const Compaction& cc = *compact.compaction;
    compact.output_options = OutputTableOptions(
        table_options_, options_, cc.output_level(),
        DeepestNonEmptyLevel(*cc.input_version()),
        IsBottommostOutput(*cc.input_version(), cc.output_level()),
        cc.input_version()->base_level());
    status = DoCompactionWork(&compact);
    CleanupCompaction(&compact);
    // After a failure nobody knows whether the MANIFEST holds the outputs
    // (a failed sync may still have written the record): delete nothing.
    if (status.ok()) RemoveObsoleteFiles();
  }
  // Stopping for Close is no error, but a compaction that failed while
  // the DB closes did fail: Close reports it as the background error.
  if (!status.ok() &&
      !(absl::IsAborted(status) && status.message() == kClosing)) {
    RecordBackgroundError(status);
  }
  running_compactions_--;

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

absl::Status DBImpl::OpenCompactionOutputFile(const CompactionState& compact,
                                              CompactionPart* part) {
  uint64_t number;
  {
    MutexLock l(&mutex_);
    number = versions_->NewFileNumber();
    pending_outputs_.insert(number);
  }
  part->outputs.push_back({number, 0, "", ""});
  auto file = env_->NewWritableFile(TableFileName(dbname_, number));
  if (!file.ok()) return file.status();
  part->outfile =
      NewRateLimitedFile(std::move(*file), options_.rate_limiter.get());
  part->builder = std::make_unique<TableBuilder>(compact.output_options,
                                                 part->outfile.get());
  part->builder->ReuseDictionary(part->dictionary);
  return absl::OkStatus();
}

absl::Status DBImpl::FinishCompactionOutputFile(const Compaction& c,
                                                CompactionPart* part,
                                                Iterator* input) {
  CompactionOutput* out = part->current_output();
  absl::Status s = input->status();
  if (s.ok()) {
    if (!out->largest.empty()) {
      part->builder->SetInputFiles(MergedInputsUpTo(
          internal_comparator_.user_comparator(), c, part->has_begin,
          part->begin, ExtractUserKey(out->largest), &part->named_inputs));
    }
    s = part->builder->Finish();
    if (s.ok() && part->dictionary == nullptr) {
      part->dictionary = part->builder->dictionary();
    }
  } else {
    part->builder->Abandon();
  }
  const uint64_t entries = part->builder->NumEntries();
  out->file_size = part->builder->FileSize();
  part->total_bytes += out->file_size;
  part->builder.reset();
  if (s.ok()) s = part->outfile->Sync();
  if (s.ok()) s = part->outfile->Close();
  part->outfile.reset();
  if (s.ok() && entries > 0) {
    // Check the table before the MANIFEST refers to it.
    s = VerifyTableOutput(table_cache_.get(), &internal_comparator_,
                          out->number, out->file_size, entries, out->smallest,
                          out->largest, options_.paranoid_file_checks);
  }
  return s;
}

absl::Status DBImpl::InstallCompactionResults(CompactionState* compact) {
  mutex_.AssertHeld();
  Compaction* c = compact->compaction.get();
  // The outputs' directory entries must be durable before the MANIFEST
  // names them.
  absl::Status s = env_->SyncDir(dbname_);
  if (!s.ok()) return s;
  // Inputs and outputs that early release already moved stay as they are.
  for (int which = 0; which < 2; which++) {
    for (int i = static_cast<int>(compact->parts[0].release.next[which]);
         i < c->num_input_files(which); i++) {
      c->edit()->RemoveFile(which == 0 ? c->level() : c->output_level(),
                            c->input(which, i)->number);
    }
  }
  for (const CompactionPart& part : compact->parts) {
    for (size_t i = part.installed_outputs; i < part.outputs.size(); i++) {
      const CompactionOutput& out = part.outputs[i];
      c->edit()->AddFile(c->output_level(), out.number, out.file_size,
                         out.smallest, out.largest);
    }
  }
  s = versions_->LogAndApply(c->edit(), &mutex_);
  if (s.ok() && mirror_ != nullptr) {
    mirror_->VersionInstalled(LiveTablesForMirror(), {});
  }
  return s;
}

void DBImpl::CleanupCompaction(CompactionState* compact) {
  mutex_.AssertHeld();
  for (CompactionPart& part : compact->parts) {
    if (part.builder != nullptr) {
      part.builder->Abandon();
      part.builder.reset();
    }
    part.outfile.reset();
    part.input.reset();
    for (const CompactionOutput& out : part.outputs) {
      pending_outputs_.erase(out.number);
    }
  }
  early_release_version_ = nullptr;
  early_released_.clear();      // RemoveObsoleteFiles deletes what is left
  compact->compaction.reset();  // releases the input version (needs mutex)
}

absl::Status DBImpl::ReleaseMergedInputs(const CompactionState& compact,
                                         CompactionPart* part,
                                         const size_t consumed[2]) {
  const Compaction* c = compact.compaction.get();
  const uint64_t start_micros = env_->NowMicros();
  // New outputs' directory entries must be durable before the MANIFEST
  // names them (a step that only removes inputs needs no sync).
  absl::Status s;
  if (part->installed_outputs < part->outputs.size()) {
    s = env_->SyncDir(dbname_);
    if (!s.ok()) return s;
  }
  VersionEdit edit;
  for (size_t i = part->installed_outputs; i < part->outputs.size(); i++) {
    const CompactionOutput& out = part->outputs[i];
    edit.AddFile(c->output_level(), out.number, out.file_size, out.smallest,
                 out.largest);
  }
  std::vector<uint64_t> released;
  uint64_t released_bytes = 0;
  for (int which = 0; which < 2; which++) {
    const size_t begin = part->release.next[which];
    for (size_t i = begin; i < begin + consumed[which]; i++) {
      const FileMetaData* f = c->input(which, static_cast<int>(i));
      edit.RemoveFile(which == 0 ? c->level() : c->output_level(), f->number);
      released.push_back(f->number);
      released_bytes += f->file_size;
    }
  }
  MutexLock l(&mutex_);
  s = versions_->LogAndApply(&edit, &mutex_);
  if (!s.ok()) return s;
  part->installed_outputs = part->outputs.size();
  for (int which = 0; which < 2; which++) {
    part->release.next[which] += consumed[which];
  }
  early_released_.insert(released.begin(), released.end());
  early_release_steps_++;
  early_released_tables_ += released.size();
  early_released_bytes_ += released_bytes;
  if (mirror_ != nullptr) {
    mirror_->VersionInstalled(LiveTablesForMirror(), {});
  }
  RemoveObsoleteFiles();
  early_release_micros_ += env_->NowMicros() - start_micros;
  return absl::OkStatus();
}

absl::Status DBImpl::DoCompactionWork(CompactionState* compact) {
  const uint64_t start_micros = env_->NowMicros();
  Compaction* c = compact->compaction.get();
  compact->smallest_snapshot = snapshots_.empty()
                                   ? versions_->LastSequence()
                                   : snapshots_.oldest()->sequence();
  const std::vector<std::string> splits =
      c->SplitPoints(options_.max_subcompactions);
  compact->parts.resize(splits.size() + 1);
  for (size_t i = 0; i < compact->parts.size(); i++) {
    CompactionPart& part = compact->parts[i];
    if (i > 0) {
      part.has_begin = true;
      part.begin = splits[i - 1];
    }
    if (i < splits.size()) {
      part.has_end = true;
      part.end = splits[i];
    }
    part.input = versions_->MakeInputIterator(c);
  }
  compact->release_early =
      options_.free_compaction_inputs_early && compact->parts.size() == 1;
  if (compact->release_early) early_release_version_ = c->input_version();
  LogCompactionStart(compact->job, compact->reason, *c, compact->parts.size());

  // Parts 1.. run on helper threads; part 0 on this one, which also keeps
  // flushing full MemTables so that writers never wait on a compaction.
  compact->helpers_running = static_cast<int>(compact->parts.size()) - 1;
  mutex_.Unlock();
  std::vector<std::thread> helpers;
  for (size_t i = 1; i < compact->parts.size(); i++) {
    helpers.emplace_back([this, compact, i] {
      CompactionPart* part = &compact->parts[i];
      part->status = MergeCompactionPart(*compact, part, nullptr);
      MutexLock l(&mutex_);
      compact->helpers_running--;
      background_work_cv_.SignalAll();
    });
  }
  compact->parts[0].status =
      MergeCompactionPart(*compact, &compact->parts[0], &compact->imm_micros);
  mutex_.Lock();
  while (compact->helpers_running > 0) {
    if (imm_ != nullptr && bg_error_.ok()) {
      const uint64_t imm_start = env_->NowMicros();
      CompactMemTable();
      background_done_cv_.SignalAll();
      compact->imm_micros += env_->NowMicros() - imm_start;
    } else {
      background_work_cv_.Wait(&mutex_);
    }
  }
  mutex_.Unlock();
  for (std::thread& t : helpers) t.join();
  mutex_.Lock();

  // Report the failure that stopped the others, not their stopping; a
  // real failure wins over stopping for Close.
  absl::Status status;
  uint64_t total_bytes = 0;
  for (CompactionPart& part : compact->parts) {
    if (status.ok() ||
        (IsStopped(status) && !part.status.ok() &&
         (!IsStopped(part.status) || status.message() == kOtherPartFailed))) {
      status = part.status;
    }
    total_bytes += part.total_bytes;
    part.input.reset();
  }
  LevelStats& stats = level_stats_[c->output_level()];
  stats.micros += static_cast<int64_t>(env_->NowMicros() - start_micros) -
                  compact->imm_micros;
  stats.bytes_read += c->InputBytes(0) + c->InputBytes(1);
  stats.bytes_written += total_bytes;
  stats.count++;
  stats_.Record(Ticker::kBytesWritten, total_bytes);
  if (status.ok()) status = InstallCompactionResults(compact);
  if (compact->parts.size() > 1) {
    split_compactions_++;
    split_compaction_parts_ += compact->parts.size();
    if (!status.ok()) split_compactions_failed_++;
  }
  std::string outputs;
  for (const CompactionPart& part : compact->parts) {
    for (const CompactionOutput& out : part.outputs) {
      absl::StrAppendFormat(&outputs, "%s%06d(%d)", outputs.empty() ? "" : " ",
                            out.number, out.file_size);
    }
  }
  LogMessage(absl::StrFormat(
      "[job %d] compaction finished: outputs level %d [%s]; read %d bytes, "
      "wrote %d bytes, %.3f sec: %s; levels: %s",
      compact->job, c->output_level(), outputs,
      c->InputBytes(0) + c->InputBytes(1), total_bytes,
      (env_->NowMicros() - start_micros) / 1e6, status.ToString(),
      LevelSummary()));
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
  {
    MutexLock l(&mutex_);
    absl::Status writable = CheckWritable("CompactRange");
    if (!writable.ok()) return writable;
  }
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
