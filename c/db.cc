// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The C API's database handle: open and close, reads, writes, iterators'
// creation and snapshots. Administration (properties, compaction, flush,
// checkpoints, destroy, repair) is in db_admin.cc.

#include "siftdb/db.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "c/handles.h"
#include "siftdb/c.h"
#include "siftdb/iterator.h"

namespace siftdb::c_api {
namespace {

siftdb_t* OpenWith(bool read_only, const char* function,
                   const siftdb_options_t* options, const char* name,
                   char** errptr) {
  if (name == nullptr) {
    SaveArgError(errptr, function, "name is NULL");
    return nullptr;
  }
  Options engine_options;
  std::shared_ptr<const Comparator> comparator;
  if (options != nullptr) {
    if (!options->BadValue().empty()) {
      SaveError(errptr, absl::InvalidArgumentError(options->BadValue()));
      return nullptr;
    }
    engine_options = options->rep;
    comparator = options->comparator;
  }
  auto db = read_only ? DB::OpenForReadOnly(engine_options, name)
                      : DB::Open(engine_options, name);
  if (SaveError(errptr, db.status())) return nullptr;
  auto state = std::make_shared<DbState>();
  state->comparator = std::move(comparator);
  state->db = *std::move(db);
  return new siftdb_t{std::move(state)};
}

// The ReadOptions for a read of `db`, or an error when its snapshot belongs
// to another DB.
absl::Status ReadOptionsFor(const siftdb_t* db,
                            const siftdb_readoptions_t* options,
                            const char* function, ReadOptions* out) {
  if (options == nullptr) {
    *out = ReadOptions();
    return absl::OkStatus();
  }
  if (options->snapshot != nullptr && options->snapshot->state != db->state) {
    return absl::InvalidArgumentError(
        std::string(function) +
        ": the read options' snapshot belongs to another DB");
  }
  *out = options->rep;
  return absl::OkStatus();
}

WriteOptions WriteOptionsOf(const siftdb_writeoptions_t* options) {
  return options == nullptr ? WriteOptions() : options->rep;
}

}  // namespace
}  // namespace siftdb::c_api

using siftdb::c_api::Bytes;
using siftdb::c_api::SaveArgError;
using siftdb::c_api::SaveError;

extern "C" {

siftdb_t* siftdb_open(const siftdb_options_t* options, const char* name,
                      char** errptr) {
  return siftdb::c_api::OpenWith(false, "siftdb_open", options, name, errptr);
}

siftdb_t* siftdb_open_for_read_only(const siftdb_options_t* options,
                                    const char* name, char** errptr) {
  return siftdb::c_api::OpenWith(true, "siftdb_open_for_read_only", options,
                                 name, errptr);
}

void siftdb_close(siftdb_t* db, char** errptr) {
  if (db == nullptr) return;
  SaveError(errptr, db->state->db->Close());
  delete db;  // the engine goes with the last iterator or snapshot
}

void siftdb_put(siftdb_t* db, const siftdb_writeoptions_t* options,
                const char* key, size_t keylen, const char* val, size_t vallen,
                char** errptr) {
  bool key_ok, val_ok;
  std::string_view k = Bytes(key, keylen, &key_ok);
  std::string_view v = Bytes(val, vallen, &val_ok);
  if (db == nullptr) {
    SaveArgError(errptr, "siftdb_put", "db is NULL");
  } else if (!key_ok || !val_ok) {
    SaveArgError(
        errptr, "siftdb_put",
        key_ok ? "val is NULL but vallen > 0" : "key is NULL but keylen > 0");
  } else {
    SaveError(errptr,
              db->state->db->Put(siftdb::c_api::WriteOptionsOf(options), k, v));
  }
}

void siftdb_delete(siftdb_t* db, const siftdb_writeoptions_t* options,
                   const char* key, size_t keylen, char** errptr) {
  bool key_ok;
  std::string_view k = Bytes(key, keylen, &key_ok);
  if (db == nullptr) {
    SaveArgError(errptr, "siftdb_delete", "db is NULL");
  } else if (!key_ok) {
    SaveArgError(errptr, "siftdb_delete", "key is NULL but keylen > 0");
  } else {
    SaveError(errptr,
              db->state->db->Delete(siftdb::c_api::WriteOptionsOf(options), k));
  }
}

void siftdb_write(siftdb_t* db, const siftdb_writeoptions_t* options,
                  siftdb_writebatch_t* batch, char** errptr) {
  if (db == nullptr || batch == nullptr) {
    SaveArgError(errptr, "siftdb_write",
                 db == nullptr ? "db is NULL" : "batch is NULL");
    return;
  }
  SaveError(errptr, db->state->db->Write(siftdb::c_api::WriteOptionsOf(options),
                                         &batch->rep));
}

char* siftdb_get(siftdb_t* db, const siftdb_readoptions_t* options,
                 const char* key, size_t keylen, size_t* vallen,
                 char** errptr) {
  if (vallen != nullptr) *vallen = 0;
  bool key_ok;
  std::string_view k = Bytes(key, keylen, &key_ok);
  if (db == nullptr || !key_ok) {
    SaveArgError(errptr, "siftdb_get",
                 db == nullptr ? "db is NULL" : "key is NULL but keylen > 0");
    return nullptr;
  }
  siftdb::ReadOptions read_options;
  absl::Status s =
      siftdb::c_api::ReadOptionsFor(db, options, "siftdb_get", &read_options);
  std::string value;
  if (s.ok()) s = db->state->db->Get(read_options, k, &value);
  if (absl::IsNotFound(s)) return nullptr;
  if (SaveError(errptr, s)) return nullptr;
  char* result = siftdb::c_api::CopyToMalloc(value, vallen);
  if (result == nullptr) {
    SaveError(errptr, absl::ResourceExhaustedError(
                          "siftdb_get: out of memory for the value"));
  }
  return result;
}

void siftdb_multi_get(siftdb_t* db, const siftdb_readoptions_t* options,
                      size_t num_keys, const char* const* keys,
                      const size_t* key_lens, char** values, size_t* value_lens,
                      char** errs) {
  if (errs == nullptr) return;
  for (size_t i = 0; i < num_keys; ++i) errs[i] = nullptr;
  if (db == nullptr || keys == nullptr || key_lens == nullptr ||
      values == nullptr || value_lens == nullptr) {
    for (size_t i = 0; i < num_keys; ++i) {
      SaveArgError(&errs[i], "siftdb_multi_get",
                   db == nullptr ? "db is NULL" : "an array is NULL");
    }
    return;
  }
  std::vector<std::string_view> views(num_keys);
  bool all_ok = true;
  for (size_t i = 0; i < num_keys; ++i) {
    values[i] = nullptr;
    value_lens[i] = 0;
    bool key_ok;
    views[i] = Bytes(keys[i], key_lens[i], &key_ok);
    if (!key_ok) {
      SaveArgError(&errs[i], "siftdb_multi_get", "key is NULL but keylen > 0");
      all_ok = false;
    }
  }
  siftdb::ReadOptions read_options;
  absl::Status s = siftdb::c_api::ReadOptionsFor(
      db, options, "siftdb_multi_get", &read_options);
  if (!s.ok() || !all_ok) {
    for (size_t i = 0; i < num_keys; ++i) {
      if (errs[i] == nullptr) {
        SaveError(&errs[i], s.ok() ? absl::AbortedError(
                                         "siftdb_multi_get: another key of "
                                         "the batch is NULL; nothing read")
                                   : s);
      }
    }
    return;
  }
  std::vector<std::string> found;
  std::vector<absl::Status> statuses =
      db->state->db->MultiGet(read_options, views, &found);
  for (size_t i = 0; i < num_keys; ++i) {
    if (absl::IsNotFound(statuses[i]) || SaveError(&errs[i], statuses[i])) {
      continue;
    }
    values[i] = siftdb::c_api::CopyToMalloc(found[i], &value_lens[i]);
    if (values[i] == nullptr) {
      SaveError(&errs[i], absl::ResourceExhaustedError(
                              "siftdb_multi_get: out of memory for a value"));
    }
  }
}

uint8_t siftdb_key_may_exist(siftdb_t* db, const siftdb_readoptions_t* options,
                             const char* key, size_t keylen, char** value,
                             size_t* vallen, uint8_t* value_found) {
  if (value != nullptr) *value = nullptr;
  if (vallen != nullptr) *vallen = 0;
  if (value_found != nullptr) *value_found = 0;
  bool key_ok;
  const std::string_view k = Bytes(key, keylen, &key_ok);
  // Without a database or a key nothing is known: "may exist".
  if (db == nullptr || !key_ok) return 1;
  siftdb::ReadOptions read_options;
  if (!siftdb::c_api::ReadOptionsFor(db, options, "siftdb_key_may_exist",
                                     &read_options)
           .ok()) {
    return 1;
  }
  std::string found_value;
  bool found = false;
  const bool may_exist = db->state->db->KeyMayExist(
      read_options, k, value != nullptr ? &found_value : nullptr,
      value != nullptr ? &found : nullptr);
  if (may_exist && found) {
    size_t len = 0;
    char* copy = siftdb::c_api::CopyToMalloc(found_value, &len);
    if (copy != nullptr) {
      *value = copy;
      if (vallen != nullptr) *vallen = len;
      if (value_found != nullptr) *value_found = 1;
    }
  }
  return may_exist ? 1 : 0;
}

siftdb_iterator_t* siftdb_create_iterator(siftdb_t* db,
                                          const siftdb_readoptions_t* options) {
  if (db == nullptr) return nullptr;
  siftdb::ReadOptions read_options;
  absl::Status s = siftdb::c_api::ReadOptionsFor(
      db, options, "siftdb_create_iterator", &read_options);
  auto* result = new siftdb_iterator_t;
  result->state = db->state;
  if (options != nullptr) {
    result->lower_bound = options->lower_bound;
    result->upper_bound = options->upper_bound;
  }
  read_options.iterate_lower_bound = result->lower_bound;
  read_options.iterate_upper_bound = result->upper_bound;
  result->rep = s.ok() ? db->state->db->NewIterator(read_options)
                       : siftdb::NewErrorIterator(s);
  return result;
}

const siftdb_snapshot_t* siftdb_create_snapshot(siftdb_t* db) {
  if (db == nullptr) return nullptr;
  return new siftdb_snapshot_t{db->state, db->state->db->GetSnapshot()};
}

void siftdb_release_snapshot(siftdb_t* db, const siftdb_snapshot_t* snapshot) {
  if (snapshot == nullptr) return;
  snapshot->state->db->ReleaseSnapshot(snapshot->rep);
  delete snapshot;
}

}  // extern "C"
