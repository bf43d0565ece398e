// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/compaction.h"

#include <algorithm>

#include "db/level_iterator.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "table/merging_iterator.h"
#include "util/coding.h"

namespace siftdb {
namespace {

int64_t TotalFileSize(const std::vector<FileMetaData*>& files) {
  int64_t sum = 0;
  for (const FileMetaData* f : files) sum += f->file_size;
  return sum;
}

// Tables written before compactions learned to end outputs only between
// user keys may hold one user key's versions in two neighbouring tables of
// a level: the newer versions in the left one, older in the right one. A
// compaction that moved the left table down without the right one would
// leave older versions above newer ones, and reads would see the older.
// Adds to *inputs (tables of one level >= 1, from `level_files`) each table
// that starts with the user key the inputs end with, repeatedly.
void AddBoundaryInputs(const InternalKeyComparator& icmp,
                       const std::vector<FileMetaData*>& level_files,
                       std::vector<FileMetaData*>* inputs) {
  if (inputs->empty()) return;
  std::string_view largest = (*inputs)[0]->largest;
  for (const FileMetaData* f : *inputs) {
    if (icmp.Compare(f->largest, largest) > 0) largest = f->largest;
  }
  const Comparator* ucmp = icmp.user_comparator();
  while (true) {
    FileMetaData* boundary = nullptr;
    for (FileMetaData* f : level_files) {
      if (icmp.Compare(f->smallest, largest) > 0 &&
          ucmp->Compare(ExtractUserKey(f->smallest), ExtractUserKey(largest)) ==
              0 &&
          (boundary == nullptr ||
           icmp.Compare(f->smallest, boundary->smallest) < 0)) {
        boundary = f;
      }
    }
    if (boundary == nullptr) return;
    inputs->push_back(boundary);
    largest = boundary->largest;
  }
}

}  // namespace

uint64_t TargetFileSize(const Options& options, int level) {
  uint64_t size = options.target_file_size_base;
  for (int l = 2; l <= level; l++) {
    size *= static_cast<uint64_t>(options.target_file_size_multiplier);
  }
  return size;
}

Compaction::Compaction(const Options* options, int level, int output_level,
                       Version* input_version)
    : level_(level),
      output_level_(output_level),
      max_output_file_size_(TargetFileSize(*options, output_level)),
      max_grandparent_overlap_bytes_(
          10 * static_cast<int64_t>(max_output_file_size_)),
      input_version_(input_version) {
  input_version_->Ref();
}

Compaction::~Compaction() { input_version_->Unref(); }

bool Compaction::IsTrivialMove() const {
  // A move with too much grandparent overlap would make a later compaction
  // of the output level very expensive.
  return num_input_files(0) == 1 && num_input_files(1) == 0 &&
         TotalFileSize(grandparents_) <= max_grandparent_overlap_bytes_;
}

bool Compaction::ReleasableBefore(std::string_view user_key,
                                  const ReleaseCursor& cursor,
                                  size_t consumed[2]) const {
  const Comparator* ucmp = icmp_->user_comparator();
  size_t total = 0;
  for (int which = 0; which < 2; which++) {
    consumed[which] = 0;
    if (which == 0 && level_ == 0) continue;  // overlapping tables
    const std::vector<FileMetaData*>& files = inputs_[which];
    size_t i = cursor.next[which];
    while (i < files.size() &&
           ucmp->Compare(ExtractUserKey(files[i]->largest), user_key) < 0) {
      i++;
    }
    // At level() >= 1 one user key may span neighbouring tables (F1 =
    // [... b@100], F2 = [b@50 ...], written by older builds). Such a chain
    // is released whole or not at all: releasing F1 while F2 stays would
    // leave F2's older b@50 above the outputs holding b@100, so reads would
    // find the older version first, and a crash or failed step would make
    // that durable. Back off to before the chain.
    while (which == 0 && i > cursor.next[which] && i < files.size() &&
           ucmp->Compare(ExtractUserKey(files[i]->smallest),
                         ExtractUserKey(files[i - 1]->largest)) <= 0) {
      i--;
    }
    consumed[which] = i - cursor.next[which];
    total += consumed[which];
  }
  if (total == 0) return false;  // the common case: nothing new to free
  // The outputs so far hold keys before user_key. They may join the output
  // level
  // only if no table staying there begins before user_key. Every remaining
  // table is checked, so the answer is safe even if inputs_[1] were not in
  // key order (they are, but this runs once per consumed table only).
  const std::vector<FileMetaData*>& lower = inputs_[1];
  for (size_t i = cursor.next[1] + consumed[1]; i < lower.size(); i++) {
    if (ucmp->Compare(ExtractUserKey(lower[i]->smallest), user_key) < 0) {
      return false;
    }
  }
  return true;
}

bool Compaction::IsBaseLevelForKey(std::string_view user_key,
                                   Cursor* cursor) const {
  const Comparator* ucmp = icmp_->user_comparator();
  for (int lvl = output_level_ + 1; lvl < kNumLevels; lvl++) {
    const std::vector<FileMetaData*>& files = input_version_->files_[lvl];
    size_t& ptr = cursor->level_ptrs[lvl];
    while (ptr < files.size()) {
      FileMetaData* f = files[ptr];
      if (ucmp->Compare(user_key, ExtractUserKey(f->largest)) <= 0) {
        if (ucmp->Compare(user_key, ExtractUserKey(f->smallest)) >= 0) {
          return false;  // the key may live in this deeper table
        }
        break;
      }
      ptr++;  // keys only grow: never look at f again
    }
  }
  return true;
}

bool Compaction::ShouldStopBefore(std::string_view internal_key,
                                  Cursor* cursor) const {
  while (cursor->grandparent_index < grandparents_.size() &&
         icmp_->Compare(internal_key,
                        grandparents_[cursor->grandparent_index]->largest) >
             0) {
    if (cursor->seen_key) {
      cursor->overlapped_bytes +=
          grandparents_[cursor->grandparent_index]->file_size;
    }
    cursor->grandparent_index++;
  }
  cursor->seen_key = true;
  if (cursor->overlapped_bytes > max_grandparent_overlap_bytes_) {
    cursor->overlapped_bytes = 0;
    return true;
  }
  return false;
}

std::vector<std::string> Compaction::SplitPoints(int max_parts) const {
  std::vector<std::string> splits;
  const std::vector<FileMetaData*>& lower = inputs_[1];
  const int64_t total = InputBytes(0) + InputBytes(1);
  const int64_t min_part = static_cast<int64_t>(max_output_file_size_);
  int64_t parts =
      std::min<int64_t>(max_parts, total / std::max<int64_t>(min_part, 1));
  parts = std::min<int64_t>(parts, static_cast<int64_t>(lower.size()));
  if (parts <= 1) return splits;
  // Cut where the output level tables' bytes pass each i/parts of theirs;
  // the level() input is assumed spread like them.
  const int64_t lower_total = InputBytes(1);
  const Comparator* ucmp = icmp_->user_comparator();
  int64_t before = 0;  // bytes of lower[0, j)
  int64_t next_part = 1;
  for (size_t j = 1; j < lower.size() && next_part < parts; j++) {
    before += static_cast<int64_t>(lower[j - 1]->file_size);
    if (before * parts < lower_total * next_part) continue;
    std::string_view cut = ExtractUserKey(lower[j]->smallest);
    if (splits.empty() || ucmp->Compare(cut, splits.back()) > 0) {
      splits.emplace_back(cut);
    }
    next_part++;
  }
  return splits;
}

int64_t Compaction::InputBytes(int which) const {
  return TotalFileSize(inputs_[which]);
}

void VersionSet::GetRange(const std::vector<FileMetaData*>& inputs,
                          std::string* smallest, std::string* largest) {
  smallest->clear();
  largest->clear();
  for (size_t i = 0; i < inputs.size(); i++) {
    FileMetaData* f = inputs[i];
    if (i == 0 || icmp_->Compare(f->smallest, *smallest) < 0) {
      *smallest = f->smallest;
    }
    if (i == 0 || icmp_->Compare(f->largest, *largest) > 0) {
      *largest = f->largest;
    }
  }
}

const char* VersionSet::CompactionReason() const {
  if (current_->compaction_score_ >= 1) {
    return current_->compaction_level_ == 0 ? "level0-files" : "level-size";
  }
  if (current_->seek_compaction_.load(std::memory_order_relaxed) >= 0) {
    return "seek";
  }
  return "";
}

std::unique_ptr<Compaction> VersionSet::PickCompaction() {
  // Size compactions first; then a table lookups keep passing over.
  const int64_t seek =
      current_->seek_compaction_.load(std::memory_order_relaxed);
  const bool by_size = current_->compaction_score_ >= 1;
  if (!by_size && seek < 0) return nullptr;
  const int level =
      by_size ? current_->compaction_level_ : static_cast<int>(seek >> 32);
  if (level >= kNumLevels - 1) {  // a seek charge on the last level
    current_->seek_compaction_.store(-1, std::memory_order_relaxed);
    return nullptr;
  }
  auto c = std::make_unique<Compaction>(options_, level,
                                        current_->OutputLevel(level), current_);
  c->icmp_ = icmp_;

  if (by_size) {
    // The first table after the previous compaction's end key, wrapping.
    for (FileMetaData* f : current_->files_[level]) {
      if (compact_pointer_[level].empty() ||
          icmp_->Compare(f->largest, compact_pointer_[level]) > 0) {
        c->inputs_[0].push_back(f);
        break;
      }
    }
    if (c->inputs_[0].empty()) {
      c->inputs_[0].push_back(current_->files_[level][0]);
    }
  } else {
    const size_t index = static_cast<size_t>(seek & 0xffffffff);
    if (index >= current_->files_[level].size()) {
      current_->seek_compaction_.store(-1, std::memory_order_relaxed);
      return nullptr;
    }
    c->inputs_[0].push_back(current_->files_[level][index]);
  }
  if (level > 0) {
    AddBoundaryInputs(*icmp_, current_->files_[level], &c->inputs_[0]);
  }
  if (level == 0) {
    // Level-0 tables overlap: take every one overlapping the range.
    std::string smallest, largest;
    GetRange(c->inputs_[0], &smallest, &largest);
    std::string_view begin = ExtractUserKey(smallest);
    std::string_view end = ExtractUserKey(largest);
    current_->GetOverlappingInputs(0, &begin, &end, &c->inputs_[0]);
  }
  SetupOtherInputs(c.get());
  return c;
}

void VersionSet::SetupOtherInputs(Compaction* c) {
  const int level = c->level();
  const int output = c->output_level();
  std::string smallest, largest;
  GetRange(c->inputs_[0], &smallest, &largest);
  std::string_view begin = ExtractUserKey(smallest);
  std::string_view end = ExtractUserKey(largest);
  current_->GetOverlappingInputs(output, &begin, &end, &c->inputs_[1]);
  AddBoundaryInputs(*icmp_, current_->files_[output], &c->inputs_[1]);

  // Range of the whole compaction.
  std::vector<FileMetaData*> all = c->inputs_[0];
  all.insert(all.end(), c->inputs_[1].begin(), c->inputs_[1].end());
  std::string all_start, all_limit;
  GetRange(all, &all_start, &all_limit);

  // Grow the level inputs when that adds no output level table and stays
  // small.
  if (!c->inputs_[1].empty()) {
    std::vector<FileMetaData*> expanded0;
    std::string_view all_begin = ExtractUserKey(all_start);
    std::string_view all_end = ExtractUserKey(all_limit);
    current_->GetOverlappingInputs(level, &all_begin, &all_end, &expanded0);
    if (level > 0) {
      AddBoundaryInputs(*icmp_, current_->files_[level], &expanded0);
    }
    const int64_t limit =
        25 * static_cast<int64_t>(TargetFileSize(*options_, output));
    if (expanded0.size() > c->inputs_[0].size() &&
        TotalFileSize(expanded0) + c->InputBytes(1) < limit) {
      std::string new_start, new_limit;
      GetRange(expanded0, &new_start, &new_limit);
      std::string_view nb = ExtractUserKey(new_start);
      std::string_view ne = ExtractUserKey(new_limit);
      std::vector<FileMetaData*> expanded1;
      current_->GetOverlappingInputs(output, &nb, &ne, &expanded1);
      AddBoundaryInputs(*icmp_, current_->files_[output], &expanded1);
      if (expanded1.size() == c->inputs_[1].size()) {
        smallest = new_start;
        largest = new_limit;
        c->inputs_[0] = expanded0;
        c->inputs_[1] = expanded1;
        all = expanded0;
        all.insert(all.end(), expanded1.begin(), expanded1.end());
        GetRange(all, &all_start, &all_limit);
      }
    }
  }

  if (output + 1 < kNumLevels) {
    std::string_view gb = ExtractUserKey(all_start);
    std::string_view ge = ExtractUserKey(all_limit);
    current_->GetOverlappingInputs(output + 1, &gb, &ge, &c->grandparents_);
  }
  // The next compaction of this level starts after this one.
  compact_pointer_[level] = largest;
  c->edit_.SetCompactPointer(level, largest);
}

std::unique_ptr<Compaction> VersionSet::CompactRange(
    int level, const std::string_view* begin, const std::string_view* end) {
  std::vector<FileMetaData*> inputs;
  current_->GetOverlappingInputs(level, begin, end, &inputs);
  if (inputs.empty()) return nullptr;
  // Bound a deeper level's compaction to about one table's worth of
  // overlap per step (level-0 tables overlap, so take them all).
  if (level > 0) {
    const uint64_t limit =
        TargetFileSize(*options_, current_->OutputLevel(level));
    uint64_t total = 0;
    for (size_t i = 0; i < inputs.size(); i++) {
      total += inputs[i]->file_size;
      if (total >= limit) {
        inputs.resize(i + 1);
        break;
      }
    }
    AddBoundaryInputs(*icmp_, current_->files_[level], &inputs);
  }
  auto c = std::make_unique<Compaction>(options_, level,
                                        current_->OutputLevel(level), current_);
  c->icmp_ = icmp_;
  c->inputs_[0] = inputs;
  SetupOtherInputs(c.get());
  return c;
}

std::unique_ptr<Iterator> VersionSet::MakeInputIterator(Compaction* c) {
  ReadOptions options;
  // Every input block is verified: a damaged block stops the compaction
  // with DataLoss (file and offset) instead of being rewritten into a new
  // table with a valid checksum.
  options.verify_checksums = true;
  options.fill_cache = false;  // compaction reads would evict hot blocks
  std::vector<std::unique_ptr<Iterator>> children;
  for (int which = 0; which < 2; which++) {
    if (c->inputs_[which].empty()) continue;
    if (c->level() + which == 0) {
      for (FileMetaData* f : c->inputs_[which]) {
        children.push_back(
            table_cache_->NewIterator(options, f->number, f->file_size));
      }
    } else {
      children.push_back(
          NewLevelIterator(*icmp_, table_cache_, options, &c->inputs_[which]));
    }
  }
  return NewMergingIterator(icmp_, std::move(children));
}

}  // namespace siftdb
