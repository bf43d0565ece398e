// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// siftdb_iterator_t: a cursor over a database (created in db.cc). Moves
// that the engine requires a valid position for (next, prev, key, value)
// are no-ops, or return NULL, on an invalid iterator instead.

#include "siftdb/iterator.h"

#include "c/handles.h"
#include "siftdb/c.h"

namespace {

bool IsValid(const siftdb_iterator_t* iter) {
  return iter != nullptr && iter->rep->Valid();
}

}  // namespace

extern "C" {

void siftdb_iter_destroy(siftdb_iterator_t* iter) { delete iter; }

uint8_t siftdb_iter_valid(const siftdb_iterator_t* iter) {
  return IsValid(iter) ? 1 : 0;
}

void siftdb_iter_seek_to_first(siftdb_iterator_t* iter) {
  if (iter != nullptr) iter->rep->SeekToFirst();
}

void siftdb_iter_seek_to_last(siftdb_iterator_t* iter) {
  if (iter != nullptr) iter->rep->SeekToLast();
}

void siftdb_iter_seek(siftdb_iterator_t* iter, const char* k, size_t klen) {
  if (iter == nullptr) return;
  // A NULL target of nonzero length seeks to the first key, as "" would.
  iter->rep->Seek(k == nullptr ? std::string_view()
                               : std::string_view(k, klen));
}

void siftdb_iter_next(siftdb_iterator_t* iter) {
  if (IsValid(iter)) iter->rep->Next();
}

void siftdb_iter_prev(siftdb_iterator_t* iter) {
  if (IsValid(iter)) iter->rep->Prev();
}

const char* siftdb_iter_key(const siftdb_iterator_t* iter, size_t* klen) {
  if (!IsValid(iter)) {
    if (klen != nullptr) *klen = 0;
    return nullptr;
  }
  std::string_view key = iter->rep->key();
  if (klen != nullptr) *klen = key.size();
  return key.data();
}

const char* siftdb_iter_value(const siftdb_iterator_t* iter, size_t* vlen) {
  if (!IsValid(iter)) {
    if (vlen != nullptr) *vlen = 0;
    return nullptr;
  }
  std::string_view value = iter->rep->value();
  if (vlen != nullptr) *vlen = value.size();
  return value.data();
}

void siftdb_iter_get_error(const siftdb_iterator_t* iter, char** errptr) {
  if (iter == nullptr) {
    siftdb::c_api::SaveArgError(errptr, "siftdb_iter_get_error",
                                "iter is NULL");
    return;
  }
  siftdb::c_api::SaveError(errptr, iter->rep->status());
}

}  // extern "C"
