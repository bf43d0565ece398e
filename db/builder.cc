// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/builder.h"

#include <utility>

#include "db/filename.h"
#include "db/table_cache.h"
#include "table/table_builder.h"

namespace siftdb {

absl::Status BuildTable(const std::string& dbname, Env* env,
                        const TableOptions& options, TableCache* table_cache,
                        Iterator* iter, FileMetaData* meta,
                        std::vector<uint64_t> input_files) {
  meta->file_size = 0;
  iter->SeekToFirst();
  const std::string fname = TableFileName(dbname, meta->number);
  absl::Status s;
  if (iter->Valid()) {
    auto file = env->NewWritableFile(fname);
    if (!file.ok()) return file.status();
    TableBuilder builder(options, file->get());
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
      s = (*file)->Sync();
    }
    if (s.ok()) s = (*file)->Close();
    file->reset();
    if (s.ok()) {
      // Make the directory entry durable too: the MANIFEST will name it.
      s = env->SyncDir(dbname);
    }
    if (s.ok()) {
      // Check that the table is usable before the MANIFEST refers to it.
      s = table_cache->WithTable(meta->number, meta->file_size,
                                 [](const Table&) {});
    }
  }
  if (!s.ok() || meta->file_size == 0) {
    env->RemoveFile(fname).IgnoreError();
    if (!s.ok()) meta->file_size = 0;
  }
  return s;
}

}  // namespace siftdb
