// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The C API's administration of a database: properties, approximate sizes,
// compaction, flush, checkpoints, live files and file deletions, and the
// functions that work on a closed database (destroy, repair).

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "c/handles.h"
#include "siftdb/c.h"
#include "siftdb/db.h"

namespace siftdb::c_api {
namespace {

// The engine of `db`, or null after storing an error naming `function`.
DB* EngineOf(siftdb_t* db, const char* function, char** errptr) {
  if (db == nullptr) {
    SaveArgError(errptr, function, "db is NULL");
    return nullptr;
  }
  return db->state->db.get();
}

// `names` as a NULL-terminated array of strings in one malloc'ed block
// (the pointers first, then the characters). Null when malloc fails.
char** PackStrings(const std::vector<std::string>& names) {
  size_t bytes = (names.size() + 1) * sizeof(char*);
  for (const std::string& name : names) bytes += name.size() + 1;
  auto** array = static_cast<char**>(std::malloc(bytes));
  if (array == nullptr) return nullptr;
  char* chars = reinterpret_cast<char*>(array + names.size() + 1);
  for (size_t i = 0; i < names.size(); i++) {
    array[i] = chars;
    std::memcpy(chars, names[i].c_str(), names[i].size() + 1);
    chars += names[i].size() + 1;
  }
  array[names.size()] = nullptr;
  return array;
}

// Destroy and repair take a name and options but no DB.
bool CheckPathArgs(const char* function, const char* name, char** errptr) {
  if (name == nullptr) return !SaveArgError(errptr, function, "name is NULL");
  return true;
}

}  // namespace
}  // namespace siftdb::c_api

using siftdb::c_api::Bytes;
using siftdb::c_api::EngineOf;
using siftdb::c_api::SaveArgError;
using siftdb::c_api::SaveError;

extern "C" {

char* siftdb_property_value(siftdb_t* db, const char* propname,
                            size_t* vallen) {
  if (vallen != nullptr) *vallen = 0;
  if (db == nullptr || propname == nullptr) return nullptr;
  std::string value;
  if (!db->state->db->GetProperty(propname, &value)) return nullptr;
  return siftdb::c_api::CopyToMalloc(value, vallen);
}

void siftdb_approximate_sizes(siftdb_t* db, int num_ranges,
                              const char* const* range_start_key,
                              const size_t* range_start_key_len,
                              const char* const* range_limit_key,
                              const size_t* range_limit_key_len,
                              uint64_t* sizes) {
  if (num_ranges <= 0 || sizes == nullptr) return;
  for (int i = 0; i < num_ranges; i++) sizes[i] = 0;
  if (db == nullptr || range_start_key == nullptr ||
      range_start_key_len == nullptr || range_limit_key == nullptr ||
      range_limit_key_len == nullptr) {
    return;
  }
  // A range with a NULL key of nonzero length is left empty (size 0).
  std::vector<siftdb::Range> ranges(num_ranges);
  for (int i = 0; i < num_ranges; i++) {
    bool start_ok, limit_ok;
    std::string_view start =
        Bytes(range_start_key[i], range_start_key_len[i], &start_ok);
    std::string_view limit =
        Bytes(range_limit_key[i], range_limit_key_len[i], &limit_ok);
    if (start_ok && limit_ok) ranges[i] = siftdb::Range{start, limit};
  }
  db->state->db->GetApproximateSizes(ranges.data(), num_ranges, sizes);
}

void siftdb_compact_range(siftdb_t* db, const char* start_key,
                          size_t start_key_len, const char* limit_key,
                          size_t limit_key_len, char** errptr) {
  siftdb::DB* engine = EngineOf(db, "siftdb_compact_range", errptr);
  if (engine == nullptr) return;
  std::string_view start, limit;
  if (start_key != nullptr) start = std::string_view(start_key, start_key_len);
  if (limit_key != nullptr) limit = std::string_view(limit_key, limit_key_len);
  SaveError(errptr,
            engine->CompactRange(start_key != nullptr ? &start : nullptr,
                                 limit_key != nullptr ? &limit : nullptr));
}

void siftdb_flush(siftdb_t* db, const siftdb_flushoptions_t* options,
                  char** errptr) {
  siftdb::DB* engine = EngineOf(db, "siftdb_flush", errptr);
  if (engine == nullptr) return;
  SaveError(errptr, engine->Flush(options == nullptr ? siftdb::FlushOptions()
                                                     : options->rep));
}

void siftdb_create_checkpoint(siftdb_t* db, const char* dir, char** errptr) {
  siftdb::DB* engine = EngineOf(db, "siftdb_create_checkpoint", errptr);
  if (engine == nullptr) return;
  if (dir == nullptr || *dir == '\0') {
    SaveArgError(errptr, "siftdb_create_checkpoint", "dir is NULL or empty");
    return;
  }
  SaveError(errptr, engine->CreateCheckpoint(dir));
}

char** siftdb_live_files(siftdb_t* db, uint8_t flush_memtable, size_t* count,
                         uint64_t* manifest_file_size, char** errptr) {
  if (count != nullptr) *count = 0;
  if (manifest_file_size != nullptr) *manifest_file_size = 0;
  siftdb::DB* engine = EngineOf(db, "siftdb_live_files", errptr);
  if (engine == nullptr) return nullptr;
  std::vector<std::string> files;
  uint64_t size = 0;
  if (SaveError(errptr,
                engine->GetLiveFiles(&files, &size, flush_memtable != 0))) {
    return nullptr;
  }
  char** result = siftdb::c_api::PackStrings(files);
  if (result == nullptr) {
    SaveError(errptr, absl::ResourceExhaustedError(
                          "siftdb_live_files: out of memory for the list"));
    return nullptr;
  }
  if (count != nullptr) *count = files.size();
  if (manifest_file_size != nullptr) *manifest_file_size = size;
  return result;
}

void siftdb_disable_file_deletions(siftdb_t* db, char** errptr) {
  siftdb::DB* engine = EngineOf(db, "siftdb_disable_file_deletions", errptr);
  if (engine != nullptr) SaveError(errptr, engine->DisableFileDeletions());
}

void siftdb_enable_file_deletions(siftdb_t* db, uint8_t force, char** errptr) {
  siftdb::DB* engine = EngineOf(db, "siftdb_enable_file_deletions", errptr);
  if (engine != nullptr) {
    SaveError(errptr, engine->EnableFileDeletions(force != 0));
  }
}

void siftdb_destroy_db(const siftdb_options_t* options, const char* name,
                       char** errptr) {
  if (!siftdb::c_api::CheckPathArgs("siftdb_destroy_db", name, errptr)) return;
  SaveError(errptr,
            siftdb::DestroyDB(
                name, options == nullptr ? siftdb::Options() : options->rep));
}

void siftdb_repair_db(const siftdb_options_t* options, const char* name,
                      char** errptr) {
  if (!siftdb::c_api::CheckPathArgs("siftdb_repair_db", name, errptr)) return;
  SaveError(errptr,
            siftdb::RepairDB(
                name, options == nullptr ? siftdb::Options() : options->rep));
}

}  // extern "C"
