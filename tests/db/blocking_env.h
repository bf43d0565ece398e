// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// BlockingTableEnv: an Env whose creation of table files (.sst) can be held
// up, so that a test can freeze a flush or a compaction at its first output
// and look at the DB meanwhile.
//
// Thread safety: every method is safe from any thread; Release() wakes
// every held creation. (std::mutex, not absl::Mutex: Debian's libabsl is
// not built for ThreadSanitizer, which would not see its locking.)

#ifndef SIFTDB_TESTS_DB_BLOCKING_ENV_H_
#define SIFTDB_TESTS_DB_BLOCKING_ENV_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "tests/support/forwarding_env.h"

namespace siftdb::test {

class BlockingTableEnv : public ForwardingEnv {
 public:
  // Tables created from now on, beyond the next `allowed`, wait until
  // Release().
  void BlockTablesAfter(int allowed) {
    std::lock_guard<std::mutex> l(mu_);
    allowed_ = allowed;
    blocking_ = true;
  }
  void Release() {
    {
      std::lock_guard<std::mutex> l(mu_);
      blocking_ = false;
    }
    released_.notify_all();
  }
  // Tables creations waiting now.
  int waiting() {
    std::lock_guard<std::mutex> l(mu_);
    return waiting_;
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    if (f.size() > 4 && f.substr(f.size() - 4) == ".sst") {
      std::unique_lock<std::mutex> l(mu_);
      if (blocking_ && allowed_-- <= 0) {
        waiting_++;
        released_.wait(l, [this] { return !blocking_; });
        waiting_--;
      }
    }
    return ForwardingEnv::NewWritableFile(f);
  }

 private:
  std::mutex mu_;
  std::condition_variable released_;
  bool blocking_ = false;  // guarded by mu_
  int allowed_ = 0;        // guarded by mu_
  int waiting_ = 0;        // guarded by mu_
};

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_DB_BLOCKING_ENV_H_
