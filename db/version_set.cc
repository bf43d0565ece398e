// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/version_set.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "db/table_cache.h"
#include "siftdb/comparator.h"
#include "util/absl_compat.h"
#include "wal/log_reader.h"

namespace siftdb {

// Accumulates edits on top of a base Version and produces a new Version.
class VersionBuilder {
 public:
  VersionBuilder(VersionSet* vset, Version* base) : vset_(vset), base_(base) {
    base_->Ref();
  }
  VersionBuilder(const VersionBuilder&) = delete;
  VersionBuilder& operator=(const VersionBuilder&) = delete;
  ~VersionBuilder() {
    for (auto& level : added_) {
      for (auto& [number, f] : level) {
        if (--f->refs <= 0) delete f;
      }
    }
    base_->Unref();
  }

  void Apply(const VersionEdit& edit) {
    for (const auto& [level, key] : edit.compact_pointers_) {
      vset_->compact_pointer_[level] = key;
    }
    for (const auto& [level, number] : edit.deleted_files_) {
      deleted_[level].insert(number);
      auto it = added_[level].find(number);
      if (it != added_[level].end()) {
        if (--it->second->refs <= 0) delete it->second;
        added_[level].erase(it);
      }
    }
    for (const auto& [level, meta] : edit.new_files_) {
      FileMetaData* f = new FileMetaData(meta);
      f->refs = 1;
      deleted_[level].erase(f->number);
      auto [it, inserted] = added_[level].emplace(f->number, f);
      if (!inserted) {  // the same file added twice: keep the latest
        if (--it->second->refs <= 0) delete it->second;
        it->second = f;
      }
    }
  }

  // Fills v (empty) with base + edits.
  void SaveTo(Version* v) {
    const InternalKeyComparator* icmp = vset_->icmp();
    for (int level = 0; level < kNumLevels; level++) {
      std::vector<FileMetaData*>& files = v->files_[level];
      for (FileMetaData* f : base_->files_[level]) {
        if (!deleted_[level].contains(f->number) &&
            !added_[level].contains(f->number)) {
          files.push_back(f);
        }
      }
      for (auto& [number, f] : added_[level]) files.push_back(f);
      if (level == 0) {
        std::sort(files.begin(), files.end(),
                  [](FileMetaData* a, FileMetaData* b) {
                    return a->number < b->number;
                  });
      } else {
        std::sort(files.begin(), files.end(),
                  [icmp](FileMetaData* a, FileMetaData* b) {
                    const int r = icmp->Compare(a->smallest, b->smallest);
                    return r != 0 ? r < 0 : a->number < b->number;
                  });
      }
      for (FileMetaData* f : files) f->refs++;
    }
  }

 private:
  VersionSet* const vset_;
  Version* const base_;
  std::set<uint64_t> deleted_[kNumLevels];
  std::map<uint64_t, FileMetaData*> added_[kNumLevels];
};

VersionSet::VersionSet(std::string dbname, const Options* options,
                       TableCache* table_cache,
                       const InternalKeyComparator* icmp)
    : env_(options->env),
      dbname_(std::move(dbname)),
      options_(options),
      table_cache_(table_cache),
      icmp_(icmp),
      dummy_versions_(icmp, table_cache) {
  AppendVersion(new Version(icmp_, table_cache_));
}

VersionSet::~VersionSet() {
  current_->Unref();
  // Every other version must have been released by now.
}

void VersionSet::AppendVersion(Version* v) {
  if (current_ != nullptr) current_->Unref();
  current_ = v;
  v->Ref();
  // Link at the end of the list.
  v->prev_ = dummy_versions_.prev_;
  v->next_ = &dummy_versions_;
  v->prev_->next_ = v;
  v->next_->prev_ = v;
}

absl::Status VersionSet::WriteSnapshot(log::Writer* log) {
  VersionEdit edit;
  edit.SetComparatorName(icmp_->user_comparator()->Name());
  for (int level = 0; level < kNumLevels; level++) {
    if (!compact_pointer_[level].empty()) {
      edit.SetCompactPointer(level, compact_pointer_[level]);
    }
    for (const FileMetaData* f : current_->files_[level]) {
      edit.AddFile(level, f->number, f->file_size, f->smallest, f->largest);
    }
  }
  std::string record;
  edit.EncodeTo(&record);
  return log->AddRecord(record);
}

absl::Status VersionSet::LogAndApply(VersionEdit* edit, Mutex* mu) {
  mu->AssertHeld();
  if (edit->has_log_number_) {
    if (edit->log_number_ < log_number_ ||
        edit->log_number_ >= next_file_number_) {
      return absl::InternalError(
          absl::StrFormat("version edit: log number %d outside [%d, %d)",
                          edit->log_number_, log_number_, next_file_number_));
    }
  } else {
    edit->SetLogNumber(log_number_);
  }
  if (!edit->has_prev_log_number_) edit->SetPrevLogNumber(prev_log_number_);
  edit->SetNextFile(next_file_number_);
  edit->SetLastSequence(last_sequence_);

  Version* v = new Version(icmp_, table_cache_);
  {
    VersionBuilder builder(this, current_);
    builder.Apply(*edit);
    builder.SaveTo(v);
  }
  Finalize(v);

  // First call after Open: start a new MANIFEST holding a full snapshot.
  std::string new_manifest;
  uint64_t manifest_size = 0;
  absl::Status s;
  if (descriptor_log_ == nullptr) {
    new_manifest = DescriptorFileName(dbname_, manifest_file_number_);
    auto file = env_->NewWritableFile(new_manifest);
    s = file.status();
    if (s.ok()) {
      descriptor_file_ = std::move(*file);
      descriptor_log_ = std::make_unique<log::Writer>(descriptor_file_.get());
      s = WriteSnapshot(descriptor_log_.get());
    }
  }

  // Write the edit without holding the mutex: only one LogAndApply runs at
  // a time, and the in-memory state changes only after it succeeds.
  {
    mu->Unlock();
    if (s.ok()) {
      std::string record;
      edit->EncodeTo(&record);
      s = descriptor_log_->AddRecord(record);
      if (s.ok()) s = descriptor_file_->Sync();
    }
    if (s.ok()) {
      auto size =
          env_->GetFileSize(DescriptorFileName(dbname_, manifest_file_number_));
      s = size.status();
      if (s.ok()) manifest_size = *size;
    }
    if (s.ok() && !new_manifest.empty()) {
      s = SetCurrentFile(env_, dbname_, manifest_file_number_);
      // Whether or not it failed, CURRENT may now name the new MANIFEST.
      if (!s.ok()) new_manifest.clear();  // so it is kept
    }
    mu->Lock();
  }

  if (s.ok()) {
    AppendVersion(v);
    live_manifest_floor_ = manifest_file_number_;
    manifest_file_size_ = manifest_size;
    log_number_ = edit->log_number_;
    prev_log_number_ = edit->prev_log_number_;
  } else {
    delete v;
    // The MANIFEST may now end in a partial record; never append to it
    // again. The next LogAndApply starts a fresh one. A new MANIFEST that
    // CURRENT cannot name is removed; the live ones stay (see
    // OldestLiveManifestNumber).
    descriptor_log_.reset();
    descriptor_file_.reset();
    if (!new_manifest.empty()) env_->RemoveFile(new_manifest).IgnoreError();
    manifest_file_number_ = NewFileNumber();
    manifest_file_size_ = 0;
  }
  return s;
}

namespace {

struct ManifestReporter : public log::Reader::Reporter {
  absl::Status* status;
  void Corruption(size_t bytes, absl::Status s) override {
    if (status->ok()) *status = s;
  }
};

// Reads CURRENT: *name gets the live MANIFEST's file name (no directory)
// and *manifest_number its number. DataLoss when CURRENT is malformed.
absl::Status ReadCurrentManifestName(Env* env, const std::string& dbname,
                                     std::string* name,
                                     uint64_t* manifest_number) {
  auto current = ReadFileToString(env, CurrentFileName(dbname));
  if (!current.ok()) return current.status();
  *name = *current;
  if (name->empty() || name->back() != '\n') {
    return absl::DataLossError(absl::StrFormat(
        "%s: CURRENT does not end with a newline", CurrentFileName(dbname)));
  }
  name->pop_back();
  FileType type;
  if (!ParseFileName(*name, manifest_number, &type) ||
      type != FileType::kDescriptorFile) {
    return absl::DataLossError(
        absl::StrFormat("%s: names '%s', which is not a MANIFEST",
                        CurrentFileName(dbname), *name));
  }
  return absl::OkStatus();
}

// Opens `manifest`, the MANIFEST CURRENT names; DataLoss when it is
// missing.
absl::StatusOr<std::unique_ptr<SequentialFile>> OpenManifestNamedByCurrent(
    Env* env, const std::string& dbname, const std::string& manifest) {
  auto file = env->NewSequentialFile(manifest);
  if (!file.ok() && absl::IsNotFound(file.status())) {
    return absl::DataLossError(
        absl::StrFormat("%s: CURRENT names %s, which does not exist",
                        CurrentFileName(dbname), manifest));
  }
  return file;
}

// s, a failed recovery of `manifest`; a DataLoss error that does not name
// the MANIFEST gets it as a prefix.
absl::Status NameManifestInError(const std::string& manifest,
                                 const absl::Status& s) {
  if (absl::IsDataLoss(s) &&
      s.message().find(manifest) == std::string_view::npos) {
    return absl::DataLossError(
        absl::StrFormat("%s: %s", manifest, s.message()));
  }
  return s;
}

}  // namespace

struct VersionSet::RecoveredCounters {
  bool have_log_number = false, have_prev_log_number = false;
  bool have_next_file = false, have_last_sequence = false;
  uint64_t next_file = 0, last_sequence = 0, log_number = 0,
           prev_log_number = 0;

  // DataLoss naming `manifest` when a counter every MANIFEST records is
  // missing.
  absl::Status CheckComplete(const std::string& manifest) const {
    if (!have_next_file) {
      return absl::DataLossError(manifest + ": no next-file-number entry");
    }
    if (!have_log_number) {
      return absl::DataLossError(manifest + ": no log-number entry");
    }
    if (!have_last_sequence) {
      return absl::DataLossError(manifest + ": no last-sequence entry");
    }
    return absl::OkStatus();
  }
};

absl::Status VersionSet::ApplyManifestRecord(std::string_view record,
                                             VersionBuilder* builder,
                                             RecoveredCounters* counters) {
  VersionEdit edit;
  absl::Status s = edit.DecodeFrom(record);
  if (s.ok() && edit.has_comparator_ &&
      edit.comparator_ != icmp_->user_comparator()->Name()) {
    s = absl::InvalidArgumentError(absl::StrFormat(
        "%s: comparator mismatch: the database was created with '%s' "
        "but is opened with '%s'",
        dbname_, edit.comparator_, icmp_->user_comparator()->Name()));
  }
  if (s.ok()) builder->Apply(edit);
  if (edit.has_log_number_) {
    counters->log_number = edit.log_number_;
    counters->have_log_number = true;
  }
  if (edit.has_prev_log_number_) {
    counters->prev_log_number = edit.prev_log_number_;
    counters->have_prev_log_number = true;
  }
  if (edit.has_next_file_number_) {
    counters->next_file = edit.next_file_number_;
    counters->have_next_file = true;
  }
  if (edit.has_last_sequence_) {
    counters->last_sequence = edit.last_sequence_;
    counters->have_last_sequence = true;
  }
  return s;
}

absl::Status VersionSet::ReplayManifest(SequentialFile* file,
                                        VersionBuilder* builder,
                                        RecoveredCounters* counters) {
  absl::Status s;
  ManifestReporter reporter;
  reporter.status = &s;
  log::Reader reader(file, &reporter, /*checksum=*/true,
                     /*initial_offset=*/0);
  std::string_view record;
  std::string scratch;
  while (s.ok() && reader.ReadRecord(&record, &scratch)) {
    s = ApplyManifestRecord(record, builder, counters);
  }
  return s;
}

void VersionSet::InstallRecoveredState(VersionBuilder* builder,
                                       const RecoveredCounters& counters,
                                       uint64_t manifest_number) {
  const uint64_t prev_log_number =
      counters.have_prev_log_number ? counters.prev_log_number : 0;

  Version* v = new Version(icmp_, table_cache_);
  builder->SaveTo(v);
  Finalize(v);
  AppendVersion(v);
  // The next number must lie above every number the MANIFEST names, or a
  // new table, log or MANIFEST would replace a live file. A MANIFEST whose
  // next-file entry says otherwise was written by a buggy or foreign tool.
  uint64_t next_file = counters.next_file;
  auto above = [&next_file](uint64_t number) {
    if (number >= next_file) next_file = number + 1;
  };
  above(prev_log_number);
  above(counters.log_number);
  above(manifest_number);
  for (int level = 0; level < kNumLevels; level++) {
    for (const FileMetaData* f : v->files_[level]) above(f->number);
  }
  manifest_file_number_ = next_file;
  live_manifest_floor_ = manifest_number;
  next_file_number_ = next_file + 1;
  last_sequence_ = counters.last_sequence;
  log_number_ = counters.log_number;
  prev_log_number_ = prev_log_number;
}

absl::Status VersionSet::Recover(bool* save_manifest) {
  std::string name;
  uint64_t manifest_number;
  absl::Status s =
      ReadCurrentManifestName(env_, dbname_, &name, &manifest_number);
  if (!s.ok()) return s;
  const std::string manifest = dbname_ + "/" + name;
  auto file = OpenManifestNamedByCurrent(env_, dbname_, manifest);
  if (!file.ok()) return file.status();

  RecoveredCounters counters;
  VersionBuilder builder(this, current_);
  s = ReplayManifest(file->get(), &builder, &counters);
  if (s.ok()) s = counters.CheckComplete(manifest);
  if (!s.ok()) return NameManifestInError(manifest, s);

  InstallRecoveredState(&builder, counters, manifest_number);
  // Always start a new MANIFEST: appending to one that may end in a torn
  // record is not safe.
  *save_manifest = true;
  return absl::OkStatus();
}

void VersionSet::Finalize(Version* v) {
  SetLevelTargets(v);
  int best_level = -1;
  double best_score = -1;
  for (int level = 0; level < kNumLevels - 1; level++) {
    double score;
    if (level == 0) {
      // By file count: each level-0 table costs every read a probe, and a
      // small write buffer should not trigger constant compactions.
      score = v->files_[0].size() /
              static_cast<double>(options_->level0_file_num_compaction_trigger);
    } else {
      int64_t bytes = 0;
      for (const FileMetaData* f : v->files_[level]) bytes += f->file_size;
      const double target = v->level_target_bytes_[level];
      // A level above the base level is empty (it has no target).
      score = target > 0 ? static_cast<double>(bytes) / target : 0;
    }
    if (score > best_score) {
      best_level = level;
      best_score = score;
    }
  }
  v->compaction_level_ = best_level;
  v->compaction_score_ = best_score;
  v->pending_compaction_bytes_ = EstimatePendingCompactionBytes(*v);

  // Seek budgets, as LevelDB sets them: one seek costs about as much as
  // compacting 16 KiB (a lookup's I/O against the compaction's), so a table
  // may be passed over size / 16 KiB times (at least 100) before merging it
  // down pays for itself. A table this Version shares with an earlier one
  // keeps what is left of its budget; one whose budget is already spent
  // (a size compaction went first) is due at once.
  for (int level = 0; level < kNumLevels - 1; level++) {
    const std::vector<FileMetaData*>& files = v->files_[level];
    for (size_t i = 0; i < files.size(); i++) {
      std::atomic<int32_t>& seeks = files[i]->seek_budget.seeks;
      if (seeks.load(std::memory_order_relaxed) ==
          FileMetaData::SeekBudget::kUnset) {
        const uint64_t budget =
            std::max<uint64_t>(100, files[i]->file_size / 16384);
        seeks.store(static_cast<int32_t>(std::min<uint64_t>(budget, INT32_MAX)),
                    std::memory_order_relaxed);
      } else if (seeks.load(std::memory_order_relaxed) <= 0 &&
                 v->seek_compaction_.load(std::memory_order_relaxed) < 0) {
        v->seek_compaction_.store(
            (int64_t{level} << 32) | static_cast<int64_t>(i),
            std::memory_order_relaxed);
      }
    }
  }
}

int VersionSet::NumLevelFiles(int level) const {
  return current_->NumFiles(level);
}

int64_t VersionSet::NumLevelBytes(int level) const {
  int64_t sum = 0;
  for (const FileMetaData* f : current_->files_[level]) sum += f->file_size;
  return sum;
}

void VersionSet::AddLiveFiles(std::set<uint64_t>* live,
                              const Version* compaction_version,
                              const std::set<uint64_t>* released) const {
  for (Version* v = dummy_versions_.next_; v != &dummy_versions_;
       v = v->next_) {
    // The compaction's own reference is the only one: nobody else reads v.
    const bool skip_released =
        v == compaction_version && released != nullptr && v->refs_ == 1;
    for (int level = 0; level < kNumLevels; level++) {
      for (const FileMetaData* f : v->files_[level]) {
        if (skip_released && released->contains(f->number)) continue;
        live->insert(f->number);
      }
    }
  }
}

uint64_t VersionSet::ApproximateOffsetOf(Version* v, std::string_view ikey) {
  uint64_t result = 0;
  for (int level = 0; level < kNumLevels; level++) {
    for (const FileMetaData* f : v->files_[level]) {
      if (icmp_->Compare(f->largest, ikey) <= 0) {
        result += f->file_size;  // entirely before ikey
      } else if (icmp_->Compare(f->smallest, ikey) > 0) {
        // Entirely after ikey; deeper levels are sorted, so stop there.
        if (level > 0) break;
      } else {
        table_cache_
            ->WithTable(
                f->number, f->file_size,
                [&](const Table& t) { result += t.ApproximateOffsetOf(ikey); })
            .IgnoreError();
      }
    }
  }
  return result;
}

std::string VersionSet::LevelSummary() const {
  std::string r = "files[";
  for (int level = 0; level < kNumLevels; level++) {
    absl::StrAppendFormat(&r, " %d", current_->files_[level].size());
  }
  r += " ]";
  return r;
}

}  // namespace siftdb
