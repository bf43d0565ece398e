// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// BlockingTableEnv: an Env whose creation of table files (.sst) can be held
// up, so that a test can freeze a flush or a compaction at its first output
// and look at the DB meanwhile.
//
// Thread safety: every method is safe from any thread; Release() wakes
// every held creation.

#ifndef SIFTDB_TESTS_DB_BLOCKING_ENV_H_
#define SIFTDB_TESTS_DB_BLOCKING_ENV_H_

#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "tests/support/forwarding_env.h"

namespace siftdb::test {

class BlockingTableEnv : public ForwardingEnv {
 public:
  // Tables created from now on, beyond the next `allowed`, wait until
  // Release().
  void BlockTablesAfter(int allowed) {
    absl::MutexLock l(&mu_);
    allowed_ = allowed;
    blocking_ = true;
  }
  void Release() {
    absl::MutexLock l(&mu_);
    blocking_ = false;
  }
  // Tables creations waiting now.
  int waiting() {
    absl::MutexLock l(&mu_);
    return waiting_;
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    if (f.size() > 4 && f.substr(f.size() - 4) == ".sst") {
      absl::MutexLock l(&mu_);
      if (blocking_ && allowed_-- <= 0) {
        waiting_++;
        mu_.Await(absl::Condition(
            +[](bool* blocking) { return !*blocking; }, &blocking_));
        waiting_--;
      }
    }
    return ForwardingEnv::NewWritableFile(f);
  }

 private:
  absl::Mutex mu_;
  bool blocking_ ABSL_GUARDED_BY(mu_) = false;
  int allowed_ ABSL_GUARDED_BY(mu_) = 0;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_DB_BLOCKING_ENV_H_
