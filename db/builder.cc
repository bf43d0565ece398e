// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/builder.h"

#include <memory>
#include <utility>

#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "db/table_cache.h"
#include "table/table.h"
#include "table/table_builder.h"
#include "util/rate_limited_file.h"

namespace siftdb {

absl::Status BuildTable(const std::string& dbname, Env* env,
                        const TableOptions& options, TableCache* table_cache,
                        Iterator* iter, FileMetaData* meta,
                        std::vector<uint64_t> input_files,
                        RateLimiter* rate_limiter) {
  meta->file_size = 0;
  iter->SeekToFirst();
  const std::string fname = TableFileName(dbname, meta->number);
  absl::Status s;
  if (iter->Valid()) {
    auto opened = env->NewWritableFile(fname);
    if (!opened.ok()) return opened.status();
    std::unique_ptr<WritableFile> file =
        NewRateLimitedFile(std::move(*opened), rate_limiter);
    TableBuilder builder(options, file.get());
    if (!input_files.empty()) builder.SetInputFiles(std::move(input_files));
    meta->smallest = std::string(iter->key());
    std::string_view last_key;
    for (; iter->Valid(); iter->Next()) {
      last_key = iter->key();
      builder.Add(last_key, iter->value());
    }
    meta->largest = std::string(last_key);
    s = iter->status();
    if (s.ok()) {
      s = builder.Finish();
    } else {
      builder.Abandon();
    }
    if (s.ok()) {
      meta->file_size = builder.FileSize();
      s = file->Sync();
    }
    if (s.ok()) s = file->Close();
    file.reset();
    if (s.ok()) {
      // Make the directory entry durable too: the MANIFEST will name it.
      s = env->SyncDir(dbname);
    }
    if (s.ok()) {
      // Check that the table is usable before the MANIFEST refers to it.
      // Flushes write level 0 (whose filters the cache may pin).
      s = table_cache->WithTable(
          meta->number, meta->file_size, [](const Table&) {}, 0);
    }
  }
  if (!s.ok() || meta->file_size == 0) {
    env->RemoveFile(fname).IgnoreError();
    if (!s.ok()) meta->file_size = 0;
  }
  return s;
}

absl::Status VerifyTableOutput(TableCache* table_cache, const Comparator* icmp,
                               uint64_t number, uint64_t file_size,
                               uint64_t entries, std::string_view smallest,
                               std::string_view largest, bool full) {
  const std::string fname = TableFileName("", number).substr(1);
  absl::Status cheap;
  absl::Status opened =
      table_cache->WithTable(number, file_size, [&](const Table& table) {
        cheap = table.VerifyDataBlockChecksums();
        if (cheap.ok() && table.properties().num_entries != entries) {
          cheap = absl::DataLossError(absl::StrFormat(
              "table %s failed its check after writing: its properties "
              "count %d entries, %d were written",
              fname, table.properties().num_entries, entries));
        }
      });
  if (!opened.ok()) return opened;
  if (!cheap.ok() || !full) return cheap;

  ReadOptions read;
  read.verify_checksums = true;
  read.fill_cache = false;  // a check, not a read the cache should keep
  std::unique_ptr<Iterator> it =
      table_cache->NewIterator(read, number, file_size);
  auto damaged = [&](const std::string& what) {
    return absl::DataLossError(absl::StrFormat(
        "table %s failed its check after writing: %s", fname, what));
  };
  uint64_t count = 0;
  std::string previous;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view key = it->key();
    if (count == 0 && key != smallest) return damaged("first key differs");
    if (count > 0 && icmp->Compare(previous, key) >= 0) {
      return damaged(absl::StrFormat("keys out of order at entry %d", count));
    }
    previous.assign(key.data(), key.size());
    count++;
  }
  if (!it->status().ok()) {
    return absl::Status(it->status().code(),
                        absl::StrFormat("table %s failed its check after "
                                        "writing: %s",
                                        fname, it->status().message()));
  }
  if (count != entries) {
    return damaged(
        absl::StrFormat("%d entries read back, %d written", count, entries));
  }
  if (count > 0 && previous != largest) return damaged("last key differs");
  return absl::OkStatus();
}

}  // namespace siftdb
