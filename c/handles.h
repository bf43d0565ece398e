// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the opaque handles of include/siftdb/c.h are, and the helpers every
// file of the C API shares (error reporting, malloc'ed copies, argument
// checks). Internal to c/: nothing here is exported.
//
// Lifetimes: a siftdb_t, its iterators and its snapshots share one DbState
// (the engine and the comparator it was opened with), so the engine is
// destroyed only when the last of them goes, whatever order C code frees
// them in. Comparators and filter policies are reference-counted for the
// same reason: options, DBs and iterators keep what they were given.
// Thread safety: as documented in c.h; nothing here adds shared state.

#ifndef SIFTDB_C_HANDLES_H_
#define SIFTDB_C_HANDLES_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "siftdb/c.h"
#include "siftdb/cache.h"
#include "siftdb/db.h"
#include "siftdb/rate_limiter.h"
#include "siftdb/slice_transform.h"

namespace siftdb::c_api {

// A Comparator whose order comes from C callbacks.
class CallbackComparator : public Comparator {
 public:
  using CompareFn = int (*)(void*, const char*, size_t, const char*, size_t);
  using NameFn = const char* (*)(void*);
  CallbackComparator(void* state, void (*destructor)(void*), CompareFn compare,
                     NameFn name)
      : state_(state),
        destructor_(destructor),
        compare_(compare),
        name_(name) {}
  ~CallbackComparator() override;

  int Compare(std::string_view a, std::string_view b) const override;
  const char* Name() const override;
  void FindShortestSeparator(std::string*, std::string_view) const override {}
  void FindShortSuccessor(std::string*) const override {}

 private:
  void* state_;
  void (*destructor_)(void*);
  CompareFn compare_;
  NameFn name_;
};

// The engine and what must outlive it.
struct DbState {
  std::shared_ptr<const Comparator> comparator;  // null: bytewise
  std::unique_ptr<DB> db;  // declared last: destroyed first
};

// Stores `s` (not OK) in *errptr as a malloc'ed string, freeing what was
// there. Returns true when `s` is an error. errptr may be null.
bool SaveError(char** errptr, const absl::Status& s);
// SaveError of InvalidArgument("<function>: <what>").
bool SaveArgError(char** errptr, const char* function, const char* what);
// A malloc'ed copy of `s` with a NUL after it; its length in *len (len may
// be null). Null when malloc fails.
char* CopyToMalloc(std::string_view s, size_t* len);
// The bytes (p, n) as a string_view; ok false when p is null and n > 0.
std::string_view Bytes(const char* p, size_t n, bool* ok);

}  // namespace siftdb::c_api

struct siftdb_t {
  std::shared_ptr<siftdb::c_api::DbState> state;
};

struct siftdb_snapshot_t {
  std::shared_ptr<siftdb::c_api::DbState> state;
  const siftdb::Snapshot* rep;
};

struct siftdb_iterator_t {
  std::shared_ptr<siftdb::c_api::DbState> state;
  // The iterator's own copies of its bounds: the read options that gave
  // them may be destroyed first.
  std::optional<std::string> lower_bound;
  std::optional<std::string> upper_bound;
  std::unique_ptr<siftdb::Iterator> rep;  // declared last: destroyed first
};

struct siftdb_slicetransform_t {
  std::shared_ptr<const siftdb::SliceTransform> rep;
};

struct siftdb_comparator_t {
  std::shared_ptr<const siftdb::c_api::CallbackComparator> rep;
};

struct siftdb_filterpolicy_t {
  std::shared_ptr<const siftdb::FilterPolicy> rep;
};

struct siftdb_cache_t {
  std::shared_ptr<siftdb::Cache> rep;
};

struct siftdb_ratelimiter_t {
  std::shared_ptr<siftdb::RateLimiter> rep;
};

struct siftdb_options_t {
  siftdb::Options rep;
  // Keeps rep.comparator alive.
  std::shared_ptr<const siftdb::Comparator> comparator;
  // Setter values the engine's types cannot hold (an unknown compression
  // or mirror mode, a NULL endpoint), as the message siftdb_open reports;
  // empty: none. A later valid value of the same setting clears its
  // message (siftdb_options_clear_remote_filter_endpoints: the endpoint's).
  std::string bad_compression;
  std::string bad_compression_per_level;
  std::string bad_bottommost_compression;
  std::string bad_remote_filter_mode;
  std::string bad_remote_filter_endpoint;
  // The first message above, or empty.
  const std::string& BadValue() const {
    if (!bad_compression.empty()) return bad_compression;
    if (!bad_compression_per_level.empty()) return bad_compression_per_level;
    if (!bad_bottommost_compression.empty()) {
      return bad_bottommost_compression;
    }
    if (!bad_remote_filter_mode.empty()) return bad_remote_filter_mode;
    return bad_remote_filter_endpoint;
  }
};

struct siftdb_readoptions_t {
  siftdb::ReadOptions rep;
  const siftdb_snapshot_t* snapshot = nullptr;
  // The bounds' bytes (rep's bounds view them; never copy this struct).
  std::optional<std::string> lower_bound;
  std::optional<std::string> upper_bound;
};

struct siftdb_writeoptions_t {
  siftdb::WriteOptions rep;
};

struct siftdb_flushoptions_t {
  siftdb::FlushOptions rep;
};

struct siftdb_writebatch_t {
  siftdb::WriteBatch rep;
};

#endif  // SIFTDB_C_HANDLES_H_
