// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The state of one running compaction, shared by the files that run it
// (db_impl_compaction.cc: picking, outputs, installing;
// db_impl_compaction_merge.cc: merging one part). Private to db/.
//
// Thread safety: a CompactionPart is touched only by the thread merging
// it until that thread finishes; CompactionState's shared fields say how
// they are guarded.

#ifndef SIFTDB_DB_COMPACTION_STATE_H_
#define SIFTDB_DB_COMPACTION_STATE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "db/compaction.h"
#include "db/db_impl.h"
#include "table/table_builder.h"

namespace siftdb {

// Status message of a part that stopped because another part failed.
inline constexpr char kOtherPartFailed[] =
    "another part of the compaction failed";
inline constexpr char kClosing[] = "DB closing during compaction";

// A part that stopped because another failed or because the DB is
// closing did not fail itself.
inline bool IsStopped(const absl::Status& s) {
  return absl::IsAborted(s) &&
         (s.message() == kOtherPartFailed || s.message() == kClosing);
}

struct DBImpl::CompactionOutput {
  uint64_t number;
  uint64_t file_size;
  std::string smallest, largest;
};

// One user-key range of a compaction, merged by one thread into its own
// output tables. Touched only by that thread until it finishes.
struct DBImpl::CompactionPart {
  bool has_begin = false, has_end = false;
  std::string begin, end;           // user keys: the part holds [begin, end)
  std::unique_ptr<Iterator> input;  // over every input; seeks to begin
  Compaction::Cursor cursor;
  std::vector<CompactionOutput> outputs;
  // outputs[0, installed_outputs) are in the Version already, and the
  // inputs before release.next[which] are out of it (freed early).
  size_t installed_outputs = 0;
  Compaction::ReleaseCursor release;
  std::unique_ptr<WritableFile> outfile;
  std::unique_ptr<TableBuilder> builder;
  // The zstd dictionary the part's first output built (null: none yet, or
  // none): its later outputs compress against it rather than each
  // training its own (docs/compaction.md, "One dictionary per compaction
  // part").
  std::shared_ptr<const ZstdDictionary> dictionary;
  uint64_t total_bytes = 0;
  absl::Status status;
  // Inputs already named in an output's siftdb.input.files.
  std::set<uint64_t> named_inputs;

  CompactionOutput* current_output() { return &outputs.back(); }
};

struct DBImpl::CompactionState {
  explicit CompactionState(std::unique_ptr<Compaction> c)
      : compaction(std::move(c)) {}

  std::unique_ptr<Compaction> compaction;
  // Entries at or below this sequence are visible to no snapshot other
  // than the newest state, so older versions beneath them can be dropped.
  SequenceNumber smallest_snapshot = 0;
  // In key order. Sized before any part starts, so parts never move.
  std::vector<CompactionPart> parts;
  // Options::free_compaction_inputs_early, for a compaction of one part.
  bool release_early = false;
  // Parts still merging on helper threads (guarded by the DB mutex).
  int helpers_running = 0;
  // Set by the first part that fails: the others stop early, since none of
  // the outputs will be installed.
  mutable std::atomic<bool> part_failed{false};
  // Time the background thread spent flushing MemTables meanwhile (only
  // it touches this).
  int64_t imm_micros = 0;
  // For the LOG: the job id and why the compaction runs.
  int job = 0;
  const char* reason = "";
  // The outputs' table options: the compression of the output level.
  TableOptions output_options;
};

}  // namespace siftdb

#endif  // SIFTDB_DB_COMPACTION_STATE_H_
