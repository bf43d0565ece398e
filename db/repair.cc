// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RepairDB: rebuilds a database from whatever of its logs and tables is
// still readable, when the MANIFEST or some table is damaged.
//
// 1. The newest readable MANIFEST and the tables' recorded inputs decide
//    which logs and tables are superseded (db/repair_plan.h): those are set
//    aside, so repair never brings back a value the database no longer
//    returned (an obsolete table's older version, a deleted key).
// 2. Every other log is replayed (damaged records skipped) into level-0
//    tables.
// 3. Every table is read block by block with checksums verified; a table
//    whose footer or index cannot be read is set aside whole, damaged data
//    blocks are skipped.
// 4. The entries are merged so that, per user key, the one from the
//    newest source wins (lowest rank, then highest sequence: see
//    repair_plan.h), into new tables at level 1, dropping shadowed
//    versions and deletions that have nothing left to hide.
// 5. A new MANIFEST naming just those tables is written and CURRENT is
//    pointed at it; the old files are removed, except damaged and
//    superseded tables, which are moved to <db>/lost/ for inspection.
// What is lost: records in damaged log regions, entries in damaged blocks,
// tables that cannot be opened. Every decision is written to the LOG.

#include <algorithm>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/memtable.h"
#include "db/output_compression.h"
#include "db/repair_plan.h"
#include "db/version_edit.h"
#include "db/write_batch_internal.h"
#include "siftdb/db.h"
#include "table/table.h"
#include "table/table_builder.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace siftdb {
namespace {

// Entries of one table that can still be read: walks the index and skips
// data blocks that fail their checksum or do not parse.
class SalvagingTableIterator : public Iterator {
 public:
  explicit SalvagingTableIterator(const Table* table)
      : table_(table), index_(table->NewIndexIterator()) {}

  bool Valid() const override { return block_ != nullptr && block_->Valid(); }
  void SeekToFirst() override {
    index_->SeekToFirst();
    OpenBlockAndSkipBad();
  }
  void Next() override {
    block_->Next();
    if (!block_->Valid()) {
      if (!block_->status().ok()) damaged_blocks_++;
      index_->Next();
      OpenBlockAndSkipBad();
    }
  }
  // Only forward scans are needed by the repairer.
  void SeekToLast() override { block_.reset(); }
  void Seek(std::string_view) override { block_.reset(); }
  void Prev() override { block_.reset(); }
  std::string_view key() const override { return block_->key(); }
  std::string_view value() const override { return block_->value(); }
  // Damage is absorbed (counted), not reported: the scan goes on.
  absl::Status status() const override { return absl::OkStatus(); }

  int damaged_blocks() const { return damaged_blocks_; }
  bool index_damaged() const { return !index_->status().ok(); }

 private:
  void OpenBlockAndSkipBad() {
    ReadOptions ro;
    ro.verify_checksums = true;
    ro.fill_cache = false;
    block_.reset();
    for (; index_->Valid(); index_->Next()) {
      block_ = table_->NewDataBlockIterator(ro, index_->value());
      block_->SeekToFirst();
      if (block_->Valid()) return;
      if (!block_->status().ok()) damaged_blocks_++;
    }
    block_.reset();
  }

  const Table* const table_;
  std::unique_ptr<Iterator> index_;
  std::unique_ptr<Iterator> block_;
  int damaged_blocks_ = 0;
};

// One table's entries and the rank of the table (repair_plan.h).
struct RankedSource {
  std::unique_ptr<Iterator> it;
  int rank;
};

// Merges sources so that each user key's entries come out newest first:
// by user key, then lowest rank, then highest sequence (internal key
// order). Entries whose key does not parse come out where their bytes
// sort and are skipped by the caller. Forward iteration only.
class RankedMerge {
 public:
  RankedMerge(const Comparator* ucmp, std::vector<RankedSource> sources)
      : icmp_(ucmp), sources_(std::move(sources)), heap_(Later{this}) {}

  void SeekToFirst() {
    for (size_t i = 0; i < sources_.size(); i++) {
      sources_[i].it->SeekToFirst();
      if (sources_[i].it->Valid()) heap_.push(i);
    }
  }
  bool Valid() const { return !heap_.empty(); }
  std::string_view key() const { return sources_[heap_.top()].it->key(); }
  std::string_view value() const { return sources_[heap_.top()].it->value(); }
  void Next() {
    const size_t i = heap_.top();
    heap_.pop();
    sources_[i].it->Next();
    if (sources_[i].it->Valid()) heap_.push(i);
  }

 private:
  // True when source a's current entry comes after source b's.
  struct Later {
    const RankedMerge* merge;
    bool operator()(size_t a, size_t b) const {
      const RankedSource& x = merge->sources_[a];
      const RankedSource& y = merge->sources_[b];
      const std::string_view xk = x.it->key(), yk = y.it->key();
      const Comparator* ucmp = merge->icmp_.user_comparator();
      int c;
      if (xk.size() >= kInternalKeyTrailerSize &&
          yk.size() >= kInternalKeyTrailerSize) {
        c = ucmp->Compare(ExtractUserKey(xk), ExtractUserKey(yk));
        if (c != 0) return c > 0;
        if (x.rank != y.rank) return x.rank > y.rank;
        c = merge->icmp_.Compare(xk, yk);
      } else {
        c = xk.compare(yk);  // too short to be an internal key: skipped
      }
      if (c != 0) return c > 0;
      return a > b;
    }
  };

  const InternalKeyComparator icmp_;
  std::vector<RankedSource> sources_;
  std::priority_queue<size_t, std::vector<size_t>, Later> heap_;
};

class Repairer {
 public:
  Repairer(const std::string& dbname, const Options& options)
      : dbname_(dbname),
        options_(options),
        env_(options.env),
        icmp_(options.comparator) {
    table_options_.user_comparator = options.comparator;
    table_options_.block_size = options.block_size;
    table_options_.block_restart_interval = options.block_restart_interval;
    // Tables replayed from logs are written as level-0 tables; the merge
    // writes level 1's (MergeTables).
    table_options_.compression =
        OutputCompression(options, 0, /*bottommost=*/false);
    table_options_.compression_level = options.compression_opts.level;
    table_options_.compression_max_dict_bytes =
        options.compression_opts.max_dict_bytes;
    table_options_.compression_zstd_max_train_bytes =
        options.compression_opts.zstd_max_train_bytes;
    table_options_.filter_policy =
        options.filter_policy != nullptr ? options.filter_policy
        : options.filter_bits_per_key > 0
            ? NewBloomFilterPolicy(options.filter_bits_per_key)
            : nullptr;
    table_options_.prefix_extractor = options.prefix_extractor;
    table_options_.whole_key_filtering = options.whole_key_filtering;
    table_options_.partition_filters = options.partition_filters;
    table_options_.filter_partition_size = options.filter_partition_size;
  }

  absl::Status Run() {
    auto lock = env_->LockFile(LockFileName(dbname_));
    if (!lock.ok()) return lock.status();
    absl::Status s = FindFiles();
    if (!s.ok()) return s;
    const RepairManifest manifest =
        ReadRepairManifest(dbname_, options_, descriptors_);
    Log(manifest.readable
            ? std::string("repair: the MANIFEST reads; it decides what is live")
            : "repair: no MANIFEST reads (" + manifest.error +
                  "); the tables' recorded inputs decide what is superseded");
    std::vector<RepairTableFacts> facts = OpenTables();
    plan_ = PlanRepair(manifest, logs_, facts);
    for (const std::string& note : plan_.notes) Log("repair: " + note);
    for (uint64_t log : logs_) {
      if (plan_.superseded_logs.count(log) > 0) continue;
      s = ConvertLogToTable(log);
      if (!s.ok()) return s;
    }
    s = MergeTables();
    open_.clear();
    if (!s.ok()) return s;
    s = WriteDescriptor();
    if (!s.ok()) return s;
    RemoveOldFiles();
    Log(absl::StrFormat(
        "repair of %s: %d logs (%d superseded, %d bytes of damage skipped), "
        "%d tables (%d superseded, %d unreadable, %d damaged blocks "
        "skipped) -> %d tables, %d entries",
        dbname_, logs_.size(), plan_.superseded_logs.size(), log_bytes_dropped_,
        tables_.size(), plan_.obsolete_tables.size(), lost_tables_.size(),
        damaged_blocks_, outputs_.size(), entries_written_));
    return absl::OkStatus();
  }

 private:
  struct Output {
    uint64_t number;
    uint64_t size;
    std::string smallest, largest;
  };

  void Log(const std::string& msg) {
    if (options_.info_log != nullptr) options_.info_log->Log(msg);
  }

  absl::Status FindFiles() {
    auto children = env_->GetChildren(dbname_);
    if (!children.ok()) return children.status();
    for (const std::string& name : *children) {
      uint64_t number;
      FileType type;
      if (!ParseFileName(name, &number, &type)) continue;
      next_file_number_ = std::max(next_file_number_, number + 1);
      switch (type) {
        case FileType::kLogFile:
          logs_.push_back(number);
          break;
        case FileType::kTableFile:
          tables_.push_back(number);
          break;
        case FileType::kDescriptorFile:
          descriptors_.push_back(number);
          obsolete_.push_back(name);
          break;
        case FileType::kTempFile:
          obsolete_.push_back(name);
          break;
        default:
          break;
      }
    }
    if (logs_.empty() && tables_.empty() && obsolete_.empty()) {
      return absl::NotFoundError(
          absl::StrFormat("repair %s: no siftdb files found", dbname_));
    }
    std::sort(logs_.begin(), logs_.end());
    return absl::OkStatus();
  }

  struct LogReporter : public log::Reader::Reporter {
    uint64_t dropped = 0;
    void Corruption(size_t bytes, absl::Status) override { dropped += bytes; }
  };

  absl::Status ConvertLogToTable(uint64_t log) {
    auto file = env_->NewSequentialFile(LogFileName(dbname_, log));
    if (!file.ok()) return file.status();
    LogReporter reporter;
    log::Reader reader(file->get(), &reporter, /*checksum=*/true, 0);
    MemTable* mem = new MemTable(icmp_);
    mem->Ref();
    std::string scratch;
    std::string_view record;
    WriteBatch batch;
    while (reader.ReadRecord(&record, &scratch)) {
      if (!WriteBatchInternal::SetContents(&batch, record).ok() ||
          !WriteBatchInternal::Validate(&batch).ok()) {
        reporter.dropped += record.size();
        continue;
      }
      WriteBatchInternal::InsertInto(&batch, mem).IgnoreError();
      const SequenceNumber last = WriteBatchInternal::Sequence(&batch) +
                                  WriteBatchInternal::Count(&batch) - 1;
      max_sequence_ = std::max(max_sequence_, last);
    }
    log_bytes_dropped_ += reporter.dropped;
    std::unique_ptr<Iterator> it = mem->NewIterator();
    absl::Status s;
    it->SeekToFirst();
    if (it->Valid()) {
      const uint64_t number = next_file_number_++;
      auto out = env_->NewWritableFile(TableFileName(dbname_, number));
      s = out.status();
      if (s.ok()) {
        TableBuilder builder(table_options_, out->get());
        for (; it->Valid(); it->Next()) builder.Add(it->key(), it->value());
        s = builder.Finish();
        if (s.ok()) s = (*out)->Sync();
        if (s.ok()) s = (*out)->Close();
      }
      if (s.ok()) {
        tables_.push_back(number);
        if (OpenTable(number) != nullptr) plan_.table_rank[number] = 0;
      }
    }
    it.reset();
    mem->Unref();
    return s;
  }

  // Opens table `number` into open_, or records it as lost; null on
  // failure.
  Table* OpenTable(uint64_t number) {
    const std::string fname = TableFileName(dbname_, number);
    auto size = env_->GetFileSize(fname);
    absl::StatusOr<std::unique_ptr<RandomAccessFile>> file =
        size.ok()
            ? env_->NewRandomAccessFile(fname)
            : absl::StatusOr<std::unique_ptr<RandomAccessFile>>(size.status());
    absl::StatusOr<std::unique_ptr<Table>> table =
        file.ok() ? Table::Open(table_options_, fname, std::move(*file), *size)
                  : absl::StatusOr<std::unique_ptr<Table>>(file.status());
    if (!table.ok()) {
      Log(table.status().ToString());
      lost_tables_.push_back(number);
      return nullptr;
    }
    Table* t = table->get();
    open_[number] = std::move(*table);
    return t;
  }

  // Opens every table found and returns what the planner needs of each.
  std::vector<RepairTableFacts> OpenTables() {
    std::vector<RepairTableFacts> facts;
    for (uint64_t number : tables_) {
      Table* t = OpenTable(number);
      if (t == nullptr) continue;
      facts.push_back({number, t->properties().has_input_files,
                       t->properties().input_files});
    }
    return facts;
  }

  absl::Status MergeTables() {
    std::vector<RankedSource> sources;
    std::vector<SalvagingTableIterator*> salvagers;
    for (const auto& [number, table] : open_) {
      auto rank = plan_.table_rank.find(number);
      if (rank == plan_.table_rank.end()) continue;  // superseded
      auto it = std::make_unique<SalvagingTableIterator>(table.get());
      salvagers.push_back(it.get());
      sources.push_back({std::move(it), rank->second});
    }
    RankedMerge merged(options_.comparator, std::move(sources));
    // The merged tables are the repaired DB's only level, 1: written as a
    // compaction writes its bottommost output there (that level's
    // compression and filter size, no filter under
    // optimize_filters_for_hits).
    const TableOptions output_options =
        OutputTableOptions(table_options_, options_, 1, 1, /*bottommost=*/true);

    const Comparator* ucmp = options_.comparator;
    std::string current_user_key;
    bool has_current = false;
    std::unique_ptr<WritableFile> out;
    std::unique_ptr<TableBuilder> builder;
    absl::Status s;
    auto finish = [&]() -> absl::Status {
      absl::Status fs = builder->Finish();
      outputs_.back().size = builder->FileSize();
      builder.reset();
      if (fs.ok()) fs = out->Sync();
      if (fs.ok()) fs = out->Close();
      out.reset();
      return fs;
    };
    for (merged.SeekToFirst(); merged.Valid() && s.ok(); merged.Next()) {
      std::string_view key = merged.key();
      ParsedInternalKey ikey;
      if (!ParseInternalKey(key, &ikey)) continue;  // unreadable entry
      max_sequence_ = std::max(max_sequence_, ikey.sequence);
      // Keep only the newest version of each user key (the first the
      // ranked merge yields); drop it too when it is a deletion (nothing
      // older survives below it).
      if (has_current && ucmp->Compare(ikey.user_key, current_user_key) == 0) {
        continue;
      }
      current_user_key.assign(ikey.user_key.data(), ikey.user_key.size());
      has_current = true;
      if (ikey.type == kTypeDeletion) continue;
      if (builder == nullptr) {
        const uint64_t number = next_file_number_++;
        auto file = env_->NewWritableFile(TableFileName(dbname_, number));
        if (!file.ok()) return file.status();
        out = std::move(*file);
        builder = std::make_unique<TableBuilder>(output_options, out.get());
        outputs_.push_back({number, 0, std::string(key), ""});
      }
      builder->Add(key, merged.value());
      outputs_.back().largest = std::string(key);
      entries_written_++;
      if (builder->FileSize() >= options_.target_file_size_base) s = finish();
    }
    if (s.ok() && builder != nullptr) s = finish();
    for (SalvagingTableIterator* it : salvagers) {
      damaged_blocks_ += it->damaged_blocks();
    }
    return s;
  }

  absl::Status WriteDescriptor() {
    const uint64_t manifest_number = next_file_number_++;
    VersionEdit edit;
    edit.SetComparatorName(options_.comparator->Name());
    edit.SetLogNumber(0);
    edit.SetNextFile(next_file_number_);
    edit.SetLastSequence(max_sequence_);
    for (const Output& o : outputs_) {
      edit.AddFile(1, o.number, o.size, o.smallest, o.largest);
    }
    const std::string fname = DescriptorFileName(dbname_, manifest_number);
    auto file = env_->NewWritableFile(fname);
    if (!file.ok()) return file.status();
    std::string record;
    edit.EncodeTo(&record);
    absl::Status s;
    {
      log::Writer writer(file->get());
      s = writer.AddRecord(record);
    }
    if (s.ok()) s = (*file)->Sync();
    if (s.ok()) s = (*file)->Close();
    if (s.ok()) s = env_->SyncDir(dbname_);
    if (s.ok()) s = SetCurrentFile(env_, dbname_, manifest_number);
    if (!s.ok()) env_->RemoveFile(fname).IgnoreError();
    return s;
  }

  void RemoveOldFiles() {
    std::set<uint64_t> lost(lost_tables_.begin(), lost_tables_.end());
    lost.insert(plan_.obsolete_tables.begin(), plan_.obsolete_tables.end());
    const std::string lost_dir = dbname_ + "/lost";
    for (uint64_t number : tables_) {
      const std::string fname = TableFileName(dbname_, number);
      if (lost.contains(number)) {
        env_->CreateDir(lost_dir).IgnoreError();
        env_->RenameFile(fname,
                         absl::StrFormat("%s/%06d.sst", lost_dir, number))
            .IgnoreError();
      } else {
        env_->RemoveFile(fname).IgnoreError();
      }
    }
    for (uint64_t log : logs_) {
      env_->RemoveFile(LogFileName(dbname_, log)).IgnoreError();
    }
    for (const std::string& name : obsolete_) {
      env_->RemoveFile(dbname_ + "/" + name).IgnoreError();
    }
    env_->SyncDir(dbname_).IgnoreError();
  }

  const std::string dbname_;
  const Options options_;
  Env* const env_;
  const InternalKeyComparator icmp_;
  TableOptions table_options_;
  uint64_t next_file_number_ = 1;
  SequenceNumber max_sequence_ = 0;
  std::vector<uint64_t> logs_;
  std::vector<uint64_t> tables_;
  std::vector<uint64_t> descriptors_;                // MANIFEST numbers found
  std::map<uint64_t, std::unique_ptr<Table>> open_;  // readable tables
  RepairPlan plan_;
  std::vector<std::string> obsolete_;  // old MANIFESTs and temp files
  std::vector<uint64_t> lost_tables_;
  std::vector<Output> outputs_;
  uint64_t log_bytes_dropped_ = 0;
  int damaged_blocks_ = 0;
  uint64_t entries_written_ = 0;
};

}  // namespace

absl::Status RepairDB(const std::string& dbname, const Options& options) {
  auto sanitized = SanitizeOptions(options);
  if (!sanitized.ok()) return sanitized.status();
  if (!sanitized->env->IsDirectory(dbname)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("repair %s: not a directory", dbname));
  }
  return Repairer(dbname, *sanitized).Run();
}

}  // namespace siftdb
