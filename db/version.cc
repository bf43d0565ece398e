// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/version.h"

#include <algorithm>

#include "absl/container/fixed_array.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "db/level_iterator.h"
#include "db/table_cache.h"
#include "table/table.h"

namespace siftdb {

Version::~Version() {
  // Unlink from the list of live versions.
  prev_->next_ = next_;
  next_->prev_ = prev_;
  for (int level = 0; level < kNumLevels; level++) {
    for (FileMetaData* f : files_[level]) {
      if (--f->refs <= 0) delete f;
    }
  }
}

void Version::Ref() { ++refs_; }

void Version::Unref() {
  if (--refs_ == 0) delete this;
}

int FindFile(const InternalKeyComparator& icmp,
             const std::vector<FileMetaData*>& files, std::string_view key) {
  size_t left = 0, right = files.size();
  while (left < right) {
    const size_t mid = (left + right) / 2;
    if (icmp.Compare(files[mid]->largest, key) < 0) {
      left = mid + 1;  // every file at or before mid ends before key
    } else {
      right = mid;
    }
  }
  return static_cast<int>(right);
}

namespace {

enum class SearchState { kNotFound, kFound, kDeleted, kCorrupt };

struct Searcher {
  const Comparator* ucmp;
  std::string_view user_key;
  std::string* value;
  SearchState state = SearchState::kNotFound;
};

// The first entry at or after a lookup key in one table: decides the
// search when it is for the searched user key.
void NoteEntry(Searcher* searcher, std::string_view found_key,
               std::string_view v) {
  ParsedInternalKey parsed;
  if (!ParseInternalKey(found_key, &parsed)) {
    searcher->state = SearchState::kCorrupt;
    return;
  }
  if (searcher->ucmp->Compare(parsed.user_key, searcher->user_key) != 0) {
    return;  // the table holds no entry for the key
  }
  if (parsed.type == kTypeValue) {
    searcher->state = SearchState::kFound;
    searcher->value->assign(v.data(), v.size());
  } else {
    searcher->state = SearchState::kDeleted;
  }
}

// Counts what a table's filter did for one point read on `level`.
void CountFilterOutcome(Statistics* stats, int level,
                        Table::FilterOutcome outcome) {
  using Event = Statistics::FilterEvent;
  if (stats == nullptr) return;
  switch (outcome) {
    case Table::FilterOutcome::kNotChecked:
      return;
    case Table::FilterOutcome::kNegative:
      stats->RecordLevelFilter(level, Event::kNegative);
      return;
    case Table::FilterOutcome::kTruePositive:
      stats->RecordLevelFilter(level, Event::kTruePositive);
      return;
    case Table::FilterOutcome::kFalsePositive:
      stats->RecordLevelFilter(level, Event::kFalsePositive);
      return;
  }
}

absl::Status MalformedEntryError(uint64_t file_number) {
  return absl::DataLossError(absl::StrFormat(
      "table %06d.sst: entry for a lookup has a malformed internal key",
      file_number));
}

bool AfterFile(const Comparator* ucmp, const std::string_view* user_key,
               const FileMetaData* f) {
  return user_key != nullptr &&
         ucmp->Compare(*user_key, ExtractUserKey(f->largest)) > 0;
}

bool BeforeFile(const Comparator* ucmp, const std::string_view* user_key,
                const FileMetaData* f) {
  return user_key != nullptr &&
         ucmp->Compare(*user_key, ExtractUserKey(f->smallest)) < 0;
}

}  // namespace

absl::Status Version::Get(const ReadOptions& options, const LookupKey& k,
                          const uint64_t* user_key_hash, std::string* value) {
  const InternalKeyComparator& icmp = *icmp_;
  const Comparator* ucmp = icmp.user_comparator();
  const std::string_view ikey = k.internal_key();
  const std::string_view user_key = k.user_key();

  Searcher searcher{ucmp, user_key, value};
  auto found = [&searcher](std::string_view found_key, std::string_view v) {
    NoteEntry(&searcher, found_key, v);
  };

  // Returns true when the search is over (found, deleted or an error).
  // The first table consulted is charged a seek when the search goes on
  // to a second one.
  absl::Status status;
  int first_level = -1;
  size_t first_index = 0;
  bool charged = false;
  auto search_file = [&](FileMetaData* f, int level, size_t index) -> bool {
    if (first_level < 0) {
      first_level = level;
      first_index = index;
    } else if (!charged) {
      ChargeSeek(first_level, first_index);
      charged = true;
    }
    Table::FilterOutcome outcome;
    status = table_cache_->Get(options, f->number, f->file_size, ikey,
                               user_key_hash, found, level, &outcome);
    CountFilterOutcome(table_cache_->statistics(), level, outcome);
    if (!status.ok()) return true;
    if (searcher.state == SearchState::kCorrupt) {
      status = MalformedEntryError(f->number);
      return true;
    }
    return searcher.state != SearchState::kNotFound;
  };

  ForEachTableHoldingKey(k, search_file);

  if (!status.ok()) return status;
  if (searcher.state == SearchState::kFound) return absl::OkStatus();
  return KeyNotFound();
}

void Version::MultiGet(const ReadOptions& options,
                       std::span<MultiGetKey> keys) {
  using State = MultiGetKey::State;
  const Comparator* ucmp = icmp_->user_comparator();
  // Indexes into keys, grouped by table, and the tables: on the stack for
  // batches of up to 32 keys (a heap allocation costs a batch of 8 about
  // as much as one of its keys' filter probes).
  absl::InlinedVector<size_t, 32> members;
  absl::InlinedVector<TableBatch, 32> tables;
  // Level 0: tables may overlap, so one at a time, newest first, with the
  // keys still searching that fall in its range.
  absl::InlinedVector<size_t, 16> level0(files_[0].size());
  for (size_t i = 0; i < level0.size(); i++) level0[i] = i;
  std::sort(level0.begin(), level0.end(), [this](size_t a, size_t b) {
    return files_[0][a]->number > files_[0][b]->number;
  });
  for (size_t i : level0) {
    FileMetaData* f = files_[0][i];
    members.clear();
    for (size_t k = 0; k < keys.size(); k++) {
      const std::string_view user_key = keys[k].key->user_key();
      if (keys[k].state == State::kSearching &&
          !BeforeFile(ucmp, &user_key, f) && !AfterFile(ucmp, &user_key, f)) {
        members.push_back(k);
      }
    }
    if (members.empty()) continue;
    const TableBatch batch{f, i, 0, members.size()};
    MultiGetInTables(options, 0, std::span(&batch, 1), members, keys);
  }
  // Deeper levels: one sorted run each. The keys are sorted too, so each
  // key's table is found from the previous key's onwards, and consecutive
  // keys in one table form one batch.
  for (int level = 1; level < kNumLevels; level++) {
    const std::vector<FileMetaData*>& files = files_[level];
    if (files.empty()) continue;
    members.clear();
    tables.clear();
    auto first = files.begin();
    for (size_t k = 0; k < keys.size(); k++) {
      if (keys[k].state != State::kSearching) continue;
      const std::string_view ikey = keys[k].key->internal_key();
      first = std::partition_point(first, files.end(), [&](FileMetaData* f) {
        return icmp_->Compare(f->largest, ikey) < 0;
      });
      if (first == files.end()) break;  // this key and the rest: past the end
      const std::string_view user_key = keys[k].key->user_key();
      if (BeforeFile(ucmp, &user_key, *first)) continue;
      const size_t index = static_cast<size_t>(first - files.begin());
      if (tables.empty() || tables.back().index != index) {
        tables.push_back(TableBatch{*first, index, members.size(), 0});
      }
      members.push_back(k);
      tables.back().end = members.size();
    }
    if (!tables.empty()) {
      MultiGetInTables(options, level, tables, members, keys);
    }
  }
}

void Version::MultiGetInTables(const ReadOptions& options, int level,
                               std::span<const TableBatch> tables,
                               std::span<const size_t> members,
                               std::span<MultiGetKey> keys) {
  using State = MultiGetKey::State;
  absl::InlinedVector<Table::GetRequest, 32> requests(members.size());
  absl::InlinedVector<Searcher, 32> searchers;
  searchers.reserve(members.size());
  for (const TableBatch& t : tables) {
    for (size_t m = t.begin; m < t.end; m++) {
      MultiGetKey& key = keys[members[m]];
      if (key.first_level < 0) {
        key.first_level = level;
        key.first_index = t.index;
      } else if (!key.charged) {
        ChargeSeek(key.first_level, key.first_index);
        key.charged = true;
      }
      requests[m].internal_key = key.key->internal_key();
      requests[m].user_key_hash = key.user_key_hash;
      searchers.push_back(
          Searcher{icmp_->user_comparator(), key.key->user_key(), key.value});
    }
  }
  absl::InlinedVector<ShardedCache::Handle*, 16> handles(tables.size(),
                                                         nullptr);
  for (const TableBatch& batch : tables) {
    table_cache_->PrefetchTable(batch.file->number);
  }
  for (size_t t = 0; t < tables.size(); t++) {
    const TableBatch& batch = tables[t];
    auto handle =
        table_cache_->Pin(batch.file->number, batch.file->file_size, level);
    if (!handle.ok()) {
      for (size_t m = batch.begin; m < batch.end; m++) {
        requests[m].status = handle.status();
      }
      continue;
    }
    handles[t] = *handle;
    const Table& table = table_cache_->TableOf(*handle);
    for (size_t m = batch.begin; m < batch.end; m++) {
      if (requests[m].user_key_hash != nullptr) {
        table.PrefetchFilter(*requests[m].user_key_hash);
      }
    }
  }
  {
    absl::FixedArray<Table::MultiGetBlocks, 16> blocks(tables.size());
    auto requests_of = [&](const TableBatch& batch) {
      return std::span(requests).subspan(batch.begin, batch.end - batch.begin);
    };
    for (size_t t = 0; t < tables.size(); t++) {
      if (handles[t] == nullptr) continue;
      table_cache_->TableOf(handles[t])
          .MultiGetLocate(requests_of(tables[t]), &blocks[t]);
    }
    for (size_t t = 0; t < tables.size(); t++) {
      if (handles[t] == nullptr) continue;
      table_cache_->TableOf(handles[t])
          .MultiGetPin(requests_of(tables[t]), &blocks[t]);
    }
    for (size_t t = 0; t < tables.size(); t++) {
      if (handles[t] == nullptr) continue;
      const TableBatch& batch = tables[t];
      table_cache_->TableOf(handles[t])
          .MultiGetFinish(
              options, requests_of(batch), &blocks[t],
              [&](size_t j, std::string_view found_key, std::string_view v) {
                NoteEntry(&searchers[batch.begin + j], found_key, v);
              });
    }
  }  // the blocks go before their tables
  for (ShardedCache::Handle* handle : handles) {
    if (handle != nullptr) table_cache_->Unpin(handle);
  }
  for (const TableBatch& batch : tables) {
    for (size_t m = batch.begin; m < batch.end; m++) {
      MultiGetKey& key = keys[members[m]];
      CountFilterOutcome(table_cache_->statistics(), level, requests[m].filter);
      absl::Status status = std::move(requests[m].status);
      if (status.ok() && searchers[m].state == SearchState::kCorrupt) {
        status = MalformedEntryError(batch.file->number);
      }
      if (!status.ok()) {
        key.state = State::kFailed;
        key.status = std::move(status);
      } else if (searchers[m].state == SearchState::kFound) {
        key.state = State::kFound;
      } else if (searchers[m].state == SearchState::kDeleted) {
        key.state = State::kDeleted;
      }
    }
  }
}

bool Version::KeyMayExist(const LookupKey& k, const uint64_t* user_key_hash) {
  bool may_exist = false;
  ForEachTableHoldingKey(k, [&](FileMetaData* f, int, size_t) {
    may_exist = TableMayMatch(*f, [&](const Table& t) {
      return t.UserKeyMayMatch(k.user_key(), user_key_hash);
    });
    return may_exist;
  });
  return may_exist;
}

void Version::ForEachTableHoldingKey(
    const LookupKey& k,
    absl::FunctionRef<bool(FileMetaData* f, int level, size_t index)> fn) {
  const Comparator* ucmp = icmp_->user_comparator();
  const std::string_view user_key = k.user_key();
  // Level 0: tables may overlap; those covering the key, newest first.
  absl::InlinedVector<size_t, 16> level0;  // indexes into files_[0]
  for (size_t i = 0; i < files_[0].size(); i++) {
    FileMetaData* f = files_[0][i];
    if (!BeforeFile(ucmp, &user_key, f) && !AfterFile(ucmp, &user_key, f)) {
      level0.push_back(i);
    }
  }
  std::sort(level0.begin(), level0.end(), [this](size_t a, size_t b) {
    return files_[0][a]->number > files_[0][b]->number;
  });
  for (size_t i : level0) {
    if (fn(files_[0][i], 0, i)) return;
  }
  // Deeper levels: at most one table per level can hold the key.
  for (int level = 1; level < kNumLevels; level++) {
    const std::vector<FileMetaData*>& files = files_[level];
    if (files.empty()) continue;
    const int index = FindFile(*icmp_, files, k.internal_key());
    if (index >= static_cast<int>(files.size())) continue;
    FileMetaData* f = files[index];
    if (BeforeFile(ucmp, &user_key, f)) continue;
    if (fn(f, level, static_cast<size_t>(index))) return;
  }
}

void Version::AddIterators(const ReadOptions& options,
                           std::vector<std::unique_ptr<Iterator>>* iters,
                           std::vector<ChildProbe>* probes,
                           std::vector<ChildPrefixProbe>* prefix_probes,
                           const SliceTransform* extractor) {
  // Level-0 tables overlap: one iterator each. A deeper level is one sorted
  // run: one iterator that opens its tables as it reaches them.
  // With iterate bounds, a level-0 table wholly outside them is left out
  // (not even opened); the level iterators skip such tables themselves.
  const IterateBounds bounds =
      IterateBounds::From(icmp_->user_comparator(), options);
  for (FileMetaData* f : files_[0]) {
    if (bounds.active() && TableOutsideBounds(bounds, *f)) {
      if (Statistics* stats = table_cache_->statistics(); stats != nullptr) {
        stats->Record(Ticker::kBoundsSkippedTables);
      }
      continue;
    }
    // Built lazily: a seek whose target this table's filter rules out
    // never positions it (NewProbingMergingIterator).
    const Table* table = nullptr;
    iters->push_back(table_cache_->NewLazyIterator(options, f->number,
                                                   f->file_size, &table, 0));
    if (probes == nullptr) continue;
    if (table == nullptr) {
      probes->emplace_back();  // an error iterator: always position it
    } else {
      // The iterator keeps the table open, and the probe lives no longer.
      probes->emplace_back([table](std::string_view target) {
        return table->UserKeyMayMatch(ExtractUserKey(target), nullptr);
      });
    }
    if (prefix_probes == nullptr) continue;
    if (table == nullptr) {
      prefix_probes->emplace_back();
    } else {
      prefix_probes->emplace_back(
          [table](std::string_view /*target*/, std::string_view prefix) {
            return table->PrefixMayMatch(prefix);
          });
    }
  }
  // The deepest level holds most keys, so its filter nearly always says
  // "maybe" to a seek for a key that exists, and a "no" saves its seek only
  // when a newer source holds the key: it is positioned without a probe.
  int deepest = kNumLevels - 1;
  while (deepest > 0 && files_[deepest].empty()) deepest--;
  for (int level = 1; level < kNumLevels; level++) {
    if (files_[level].empty()) continue;
    iters->push_back(
        NewLevelIterator(*icmp_, table_cache_, options, &files_[level]));
    if (probes != nullptr && level == deepest) {
      probes->emplace_back();
    } else if (probes != nullptr) {
      probes->emplace_back([this, level](std::string_view target) {
        return LevelMayHoldUserKey(level, target);
      });
    }
    if (prefix_probes != nullptr) {
      prefix_probes->emplace_back(
          [this, level, extractor](std::string_view target,
                                   std::string_view prefix) {
            return LevelMayHoldPrefix(level, target, prefix, extractor);
          });
    }
  }
}

bool Version::LevelMayHoldPrefix(int level, std::string_view target,
                                 std::string_view prefix,
                                 const SliceTransform* extractor) {
  const Comparator* ucmp = icmp_->user_comparator();
  const std::vector<FileMetaData*>& files = files_[level];
  auto of_prefix = [&](std::string_view user_key) {
    return extractor->InDomain(user_key) &&
           extractor->Transform(user_key) == prefix;
  };
  // The prefix's keys form one contiguous range of the key order, and
  // target's user key is in it: from the first table whose largest key
  // reaches target, walk while the range may go on.
  const std::string_view target_user_key = ExtractUserKey(target);
  for (size_t i = FindFile(*icmp_, files, target); i < files.size(); i++) {
    const FileMetaData* f = files[i];
    const std::string_view smallest = ExtractUserKey(f->smallest);
    // A table starting past the prefix's range holds none of it, nor does
    // any later one.
    if (!of_prefix(smallest) && ucmp->Compare(smallest, target_user_key) > 0) {
      return false;
    }
    if (TableMayMatch(
            *f, [&](const Table& t) { return t.PrefixMayMatch(prefix); })) {
      return true;
    }
    // The range ends inside this table: no later table holds any of it.
    if (!of_prefix(ExtractUserKey(f->largest))) return false;
  }
  return false;
}

bool Version::MayHoldPrefix(std::string_view target, std::string_view prefix,
                            const SliceTransform* extractor) {
  const Comparator* ucmp = icmp_->user_comparator();
  const std::string_view target_user_key = ExtractUserKey(target);
  for (const FileMetaData* f : files_[0]) {
    if (f->smallest.size() < kInternalKeyTrailerSize ||
        f->largest.size() < kInternalKeyTrailerSize) {
      return true;  // damaged metadata decides nothing
    }
    // Wholly before target, or starting past the prefix's range: no key of
    // the prefix at or after target, whatever its filter says.
    if (ucmp->Compare(ExtractUserKey(f->largest), target_user_key) < 0) {
      continue;
    }
    const std::string_view smallest = ExtractUserKey(f->smallest);
    if (ucmp->Compare(smallest, target_user_key) > 0 &&
        !(extractor->InDomain(smallest) &&
          extractor->Transform(smallest) == prefix)) {
      continue;
    }
    if (TableMayMatch(
            *f, [&](const Table& t) { return t.PrefixMayMatch(prefix); })) {
      return true;
    }
  }
  for (int level = 1; level < kNumLevels; level++) {
    if (!files_[level].empty() &&
        LevelMayHoldPrefix(level, target, prefix, extractor)) {
      return true;
    }
  }
  return false;
}

bool Version::LevelMayHoldUserKey(int level, std::string_view internal_key) {
  const InternalKeyComparator& icmp = *icmp_;
  const std::vector<FileMetaData*>& files = files_[level];
  const int index = FindFile(icmp, files, internal_key);
  if (index >= static_cast<int>(files.size())) return false;
  const FileMetaData* f = files[index];
  const std::string_view user_key = ExtractUserKey(internal_key);
  if (BeforeFile(icmp.user_comparator(), &user_key, f)) return false;
  return TableMayMatch(
      *f, [&](const Table& t) { return t.UserKeyMayMatch(user_key, nullptr); });
}

bool Version::TableMayMatch(const FileMetaData& f,
                            absl::FunctionRef<bool(const Table&)> probe) {
  // A table that cannot be opened is no evidence of absence: the read that
  // follows reports the error.
  bool may_match = true;
  table_cache_
      ->WithTable(f.number, f.file_size,
                  [&](const Table& t) { may_match = probe(t); })
      .IgnoreError();
  return may_match;
}

void Version::GetOverlappingInputs(int level, const std::string_view* begin,
                                   const std::string_view* end,
                                   std::vector<FileMetaData*>* inputs) {
  inputs->clear();
  const Comparator* ucmp = icmp_->user_comparator();
  std::string user_begin, user_end;
  bool has_begin = begin != nullptr, has_end = end != nullptr;
  if (has_begin) user_begin = std::string(*begin);
  if (has_end) user_end = std::string(*end);
  for (size_t i = 0; i < files_[level].size();) {
    FileMetaData* f = files_[level][i++];
    const std::string_view file_start = ExtractUserKey(f->smallest);
    const std::string_view file_limit = ExtractUserKey(f->largest);
    if (has_begin && ucmp->Compare(file_limit, user_begin) < 0) continue;
    if (has_end && ucmp->Compare(file_start, user_end) > 0) continue;
    inputs->push_back(f);
    if (level == 0) {
      // Level-0 tables overlap each other: widen the range and restart
      // whenever this table extends it.
      if (has_begin && ucmp->Compare(file_start, user_begin) < 0) {
        user_begin = std::string(file_start);
        inputs->clear();
        i = 0;
      } else if (has_end && ucmp->Compare(file_limit, user_end) > 0) {
        user_end = std::string(file_limit);
        inputs->clear();
        i = 0;
      }
    }
  }
}

bool Version::OverlapInLevel(int level,
                             const std::string_view* smallest_user_key,
                             const std::string_view* largest_user_key) {
  const Comparator* ucmp = icmp_->user_comparator();
  const std::vector<FileMetaData*>& files = files_[level];
  if (level == 0) {
    for (FileMetaData* f : files) {
      if (!AfterFile(ucmp, smallest_user_key, f) &&
          !BeforeFile(ucmp, largest_user_key, f)) {
        return true;
      }
    }
    return false;
  }
  int index = 0;
  if (smallest_user_key != nullptr) {
    std::string small_key;
    AppendInternalKey(&small_key, *smallest_user_key, kMaxSequenceNumber,
                      kValueTypeForSeek);
    index = FindFile(*icmp_, files, small_key);
  }
  if (index >= static_cast<int>(files.size())) return false;
  return !BeforeFile(ucmp, largest_user_key, files[index]);
}

std::string Version::DebugString() const {
  std::string r;
  for (int level = 0; level < kNumLevels; level++) {
    absl::StrAppendFormat(&r, "--- level %d ---\n", level);
    for (const FileMetaData* f : files_[level]) {
      absl::StrAppendFormat(&r, " %06d.sst %d bytes [%s .. %s]\n", f->number,
                            f->file_size,
                            InternalKeyDebugString(f->smallest, false),
                            InternalKeyDebugString(f->largest, false));
    }
  }
  return r;
}

}  // namespace siftdb
