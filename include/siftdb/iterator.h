// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Iterator: an ordered cursor over key/value pairs.
//
// Thread safety: an Iterator may be used by one thread at a time; distinct
// iterators may be used concurrently without locking.
// Lifetime: key() and value() stay valid until the next call that moves the
// iterator. An iterator must be destroyed before the DB that created it.

#ifndef SIFTDB_INCLUDE_ITERATOR_H_
#define SIFTDB_INCLUDE_ITERATOR_H_

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "siftdb/export.h"

namespace siftdb {

class SIFTDB_EXPORT Iterator {
 public:
  Iterator() = default;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;
  // Runs the registered cleanups in registration order.
  virtual ~Iterator();

  // True when positioned at an entry. REQUIRED true for key(), value(),
  // Next() and Prev().
  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  // Positions at the first entry with key >= target.
  virtual void Seek(std::string_view target) = 0;
  virtual void Next() = 0;
  virtual void Prev() = 0;
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  // The first error met, if any; OK otherwise.
  virtual absl::Status status() const = 0;

  // Runs fn when this iterator is destroyed (used to release pinned blocks,
  // tables and versions).
  void RegisterCleanup(std::function<void()> fn);

  // Runs function(arg1, arg2) when this iterator is destroyed. The first
  // cleanup an iterator registers this way costs no allocation (an
  // iterator per table and per block is built for every seek).
  using CleanupFunction = void (*)(void* arg1, void* arg2);
  void RegisterCleanup(CleanupFunction function, void* arg1, void* arg2);

 private:
  struct Cleanup {
    CleanupFunction function = nullptr;  // null: none registered here
    void* arg1 = nullptr;
    void* arg2 = nullptr;
  };
  // Registered before everything in cleanups_, so run first.
  Cleanup first_cleanup_;
  std::vector<std::function<void()>> cleanups_;
};

// An iterator over nothing, carrying `status` (OK by default).
SIFTDB_EXPORT std::unique_ptr<Iterator> NewEmptyIterator();
SIFTDB_EXPORT std::unique_ptr<Iterator> NewErrorIterator(absl::Status status);

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_ITERATOR_H_
