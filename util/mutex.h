// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Mutex, MutexLock and CondVar for the engine's hot paths: thin wrappers of
// std::mutex / std::condition_variable carrying Abseil's thread-safety
// annotations (ABSL_GUARDED_BY etc. work with them as with absl::Mutex).
//
// Why not absl::Mutex everywhere: Debian 12's Abseil is built with deadlock
// detection on, which makes an uncontended lock/unlock cost ~55 ns against
// ~3 ns for std::mutex (measured on the development machine), and a point
// read takes several locks (DB, table cache, block cache). And Debian's
// libabsl is not built with -fsanitize=thread, so ThreadSanitizer cannot see
// absl::Mutex's happens-before edges; std::mutex it intercepts. All engine
// code therefore uses these classes.
//
// Mutex remembers which thread holds it (one relaxed store per lock and
// unlock), so AssertHeld() can check at run time what a function's
// "REQUIRES: mutex held" contract says; the static analysis
// (-Wthread-safety, scripts/thread_safety.sh) checks the callers it can see.
//
// Thread safety: that of std::mutex. Not recursive. Not copyable.

#ifndef SIFTDB_UTIL_MUTEX_H_
#define SIFTDB_UTIL_MUTEX_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"

namespace siftdb {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    mu_.lock();
    SetHolder();
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    ClearHolder();
    mu_.unlock();
  }
  // Aborts, naming the caller's contract, unless the calling thread holds
  // the lock; tells the static analysis that it does.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {
    if (holder_.load(std::memory_order_relaxed) != std::this_thread::get_id()) {
      std::fputs(
          "siftdb: Mutex::AssertHeld failed: a function that requires "
          "the mutex was called without it\n",
          stderr);
      std::abort();
    }
  }

 private:
  friend class CondVar;
  void SetHolder() {
    holder_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  void ClearHolder() {
    holder_.store(std::thread::id(), std::memory_order_relaxed);
  }

  std::mutex mu_;
  // The thread holding mu_, or the default id. Written only by that thread;
  // only that thread's own reads need to see its value (AssertHeld).
  std::atomic<std::thread::id> holder_{};
};

// Holds a Mutex for its scope.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }

 private:
  Mutex* const mu_;
};

// A condition variable used with a Mutex the waiter holds.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Atomically releases *mu and waits; holds *mu again on return. May wake
  // spuriously: callers re-check their condition in a loop.
  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    mu->ClearHolder();
    cv_.wait(lock);
    mu->SetHolder();
    lock.release();
  }
  // As Wait, giving up after `timeout`. True when woken before it.
  template <typename Rep, typename Period>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    mu->ClearHolder();
    const bool woken =
        cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    mu->SetHolder();
    lock.release();
    return woken;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace siftdb

#endif  // SIFTDB_UTIL_MUTEX_H_
