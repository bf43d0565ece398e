// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// siftdb_writebatch_t: an ordered group of updates for siftdb_write.
// Functions without an error out-parameter ignore bad arguments (a NULL
// batch, a NULL key of nonzero length) rather than crash.

#include "siftdb/write_batch.h"

#include <string_view>

#include "c/handles.h"
#include "siftdb/c.h"

namespace {

// Forwards a batch's updates to C callbacks.
class CallbackHandler : public siftdb::WriteBatch::Handler {
 public:
  using PutFn = void (*)(void*, const char*, size_t, const char*, size_t);
  using DeleteFn = void (*)(void*, const char*, size_t);
  CallbackHandler(void* state, PutFn put, DeleteFn deleted)
      : state_(state), put_(put), deleted_(deleted) {}

  void Put(std::string_view key, std::string_view value) override {
    if (put_ != nullptr) {
      put_(state_, key.data(), key.size(), value.data(), value.size());
    }
  }
  void Delete(std::string_view key) override {
    if (deleted_ != nullptr) deleted_(state_, key.data(), key.size());
  }

 private:
  void* state_;
  PutFn put_;
  DeleteFn deleted_;
};

}  // namespace

extern "C" {

siftdb_writebatch_t* siftdb_writebatch_create(void) {
  return new siftdb_writebatch_t;
}

void siftdb_writebatch_destroy(siftdb_writebatch_t* batch) { delete batch; }

void siftdb_writebatch_clear(siftdb_writebatch_t* batch) {
  if (batch != nullptr) batch->rep.Clear();
}

void siftdb_writebatch_put(siftdb_writebatch_t* batch, const char* key,
                           size_t klen, const char* val, size_t vlen) {
  bool key_ok, val_ok;
  std::string_view k = siftdb::c_api::Bytes(key, klen, &key_ok);
  std::string_view v = siftdb::c_api::Bytes(val, vlen, &val_ok);
  if (batch != nullptr && key_ok && val_ok) batch->rep.Put(k, v);
}

void siftdb_writebatch_delete(siftdb_writebatch_t* batch, const char* key,
                              size_t klen) {
  bool key_ok;
  std::string_view k = siftdb::c_api::Bytes(key, klen, &key_ok);
  if (batch != nullptr && key_ok) batch->rep.Delete(k);
}

void siftdb_writebatch_append(siftdb_writebatch_t* dst,
                              const siftdb_writebatch_t* source) {
  if (dst == nullptr || source == nullptr) return;
  if (dst == source) {  // appending a batch to itself reads what it grows
    const siftdb::WriteBatch copy = source->rep;
    dst->rep.Append(copy);
    return;
  }
  dst->rep.Append(source->rep);
}

int siftdb_writebatch_count(const siftdb_writebatch_t* batch) {
  return batch == nullptr ? 0 : batch->rep.Count();
}

size_t siftdb_writebatch_approximate_size(const siftdb_writebatch_t* batch) {
  return batch == nullptr ? 0 : batch->rep.ApproximateSize();
}

void siftdb_writebatch_iterate(const siftdb_writebatch_t* batch, void* state,
                               void (*put)(void*, const char*, size_t,
                                           const char*, size_t),
                               void (*deleted)(void*, const char*, size_t),
                               char** errptr) {
  if (batch == nullptr) {
    siftdb::c_api::SaveArgError(errptr, "siftdb_writebatch_iterate",
                                "batch is NULL");
    return;
  }
  CallbackHandler handler(state, put, deleted);
  siftdb::c_api::SaveError(errptr, batch->rep.Iterate(&handler));
}

}  // extern "C"
