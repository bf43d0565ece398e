// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// SnapshotImpl / SnapshotList: the live snapshots of a DB, oldest first.
// REQUIRES: the DB mutex for every operation on the list.

#ifndef SIFTDB_DB_SNAPSHOT_H_
#define SIFTDB_DB_SNAPSHOT_H_

#include <cassert>

#include "siftdb/db.h"
#include "table/internal_key.h"

namespace siftdb {

class SnapshotImpl : public Snapshot {
 public:
  explicit SnapshotImpl(SequenceNumber sequence) : sequence_(sequence) {}
  SequenceNumber sequence() const { return sequence_; }

 private:
  friend class SnapshotList;
  const SequenceNumber sequence_;
  SnapshotImpl* prev_ = nullptr;
  SnapshotImpl* next_ = nullptr;
};

class SnapshotList {
 public:
  SnapshotList() : head_(0) {
    head_.prev_ = &head_;
    head_.next_ = &head_;
  }
  SnapshotList(const SnapshotList&) = delete;
  SnapshotList& operator=(const SnapshotList&) = delete;

  bool empty() const { return head_.next_ == &head_; }
  SnapshotImpl* oldest() const {
    assert(!empty());
    return head_.next_;
  }

  // REQUIRES: sequence >= the newest snapshot's sequence.
  SnapshotImpl* New(SequenceNumber sequence) {
    SnapshotImpl* s = new SnapshotImpl(sequence);
    s->next_ = &head_;
    s->prev_ = head_.prev_;
    s->prev_->next_ = s;
    s->next_->prev_ = s;
    return s;
  }

  void Delete(const SnapshotImpl* s) {
    s->prev_->next_ = s->next_;
    s->next_->prev_ = s->prev_;
    delete s;
  }

 private:
  SnapshotImpl head_;  // dummy head of a circular list
};

}  // namespace siftdb

#endif  // SIFTDB_DB_SNAPSHOT_H_
