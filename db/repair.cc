// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RepairDB: rebuilds a database from whatever of its logs and tables is
// still readable, when the MANIFEST or some table is damaged.
//
// 1. Every log is replayed (damaged records skipped) into level-0 tables.
// 2. Every table is read block by block with checksums verified; a table
//    whose footer or index cannot be read is set aside whole, damaged data
//    blocks are skipped.
// 3. All readable entries are merged in internal-key order (so the newest
//    version of each key wins, whatever file it was in) into new tables at
//    level 1, dropping versions that are shadowed and deletions that have
//    nothing left to hide.
// 4. A new MANIFEST naming just those tables is written and CURRENT is
//    pointed at it; the old files are removed, except damaged ones, which
//    are moved to <db>/lost/ for inspection.
// What is lost: records in damaged log regions, entries in damaged blocks,
// tables that cannot be opened. Nothing readable is dropped.

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/memtable.h"
#include "db/version_edit.h"
#include "db/write_batch_internal.h"
#include "siftdb/db.h"
#include "table/merging_iterator.h"
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
    table_options_.compression = options.compression;
    table_options_.filter_policy =
        options.filter_policy != nullptr ? options.filter_policy
        : options.filter_bits_per_key > 0
            ? NewBloomFilterPolicy(options.filter_bits_per_key)
            : nullptr;
  }

  absl::Status Run() {
    auto lock = env_->LockFile(LockFileName(dbname_));
    if (!lock.ok()) return lock.status();
    absl::Status s = FindFiles();
    if (!s.ok()) return s;
    for (uint64_t log : logs_) {
      s = ConvertLogToTable(log);
      if (!s.ok()) return s;
    }
    s = MergeTables();
    if (!s.ok()) return s;
    s = WriteDescriptor();
    if (!s.ok()) return s;
    RemoveOldFiles();
    Log(absl::StrFormat(
        "repair of %s: %d logs (%d bytes of damage skipped), %d tables "
        "(%d unreadable, %d damaged blocks skipped) -> %d tables, %d "
        "entries",
        dbname_, logs_.size(), log_bytes_dropped_, tables_.size(),
        lost_tables_.size(), damaged_blocks_, outputs_.size(),
        entries_written_));
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
      if (s.ok()) tables_.push_back(number);
    }
    it.reset();
    mem->Unref();
    return s;
  }

  absl::Status MergeTables() {
    std::vector<std::unique_ptr<Table>> open;
    std::vector<SalvagingTableIterator*> salvagers;
    std::vector<std::unique_ptr<Iterator>> children;
    for (uint64_t number : tables_) {
      const std::string fname = TableFileName(dbname_, number);
      auto size = env_->GetFileSize(fname);
      absl::StatusOr<std::unique_ptr<RandomAccessFile>> file =
          size.ok() ? env_->NewRandomAccessFile(fname)
                    : absl::StatusOr<std::unique_ptr<RandomAccessFile>>(
                          size.status());
      absl::StatusOr<std::unique_ptr<Table>> table =
          file.ok()
              ? Table::Open(table_options_, fname, std::move(*file), *size)
              : absl::StatusOr<std::unique_ptr<Table>>(file.status());
      if (!table.ok()) {
        Log(table.status().ToString());
        lost_tables_.push_back(number);
        continue;
      }
      auto it = std::make_unique<SalvagingTableIterator>(table->get());
      salvagers.push_back(it.get());
      children.push_back(std::move(it));
      open.push_back(std::move(*table));
    }
    std::unique_ptr<Iterator> merged =
        NewMergingIterator(&icmp_, std::move(children));

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
    for (merged->SeekToFirst(); merged->Valid() && s.ok(); merged->Next()) {
      std::string_view key = merged->key();
      ParsedInternalKey ikey;
      if (!ParseInternalKey(key, &ikey)) continue;  // unreadable entry
      max_sequence_ = std::max(max_sequence_, ikey.sequence);
      // Keep only the newest version of each user key; drop it too when it
      // is a deletion (nothing older survives below it).
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
        builder = std::make_unique<TableBuilder>(table_options_, out.get());
        outputs_.push_back({number, 0, std::string(key), ""});
      }
      builder->Add(key, merged->value());
      outputs_.back().largest = std::string(key);
      entries_written_++;
      if (builder->FileSize() >= options_.max_file_size) s = finish();
    }
    if (s.ok() && builder != nullptr) s = finish();
    for (SalvagingTableIterator* it : salvagers) {
      damaged_blocks_ += it->damaged_blocks();
    }
    merged.reset();
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
