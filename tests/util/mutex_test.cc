// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Mutex::AssertHeld checks at run time that the calling thread holds the
// mutex: while locked (directly, through MutexLock, and again after a
// CondVar wait), it passes; unlocked, held by another thread, or released
// by a CondVar wait in progress, it aborts.

#include "util/mutex.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace siftdb {
namespace mutex_test {

TEST(MutexTest, AssertHeldPassesWhileTheCallerHoldsIt) {
  Mutex mu;
  mu.Lock();
  mu.AssertHeld();
  mu.Unlock();
  {
    MutexLock l(&mu);
    mu.AssertHeld();
  }
  CondVar cv;
  MutexLock l(&mu);
  cv.WaitFor(&mu, std::chrono::milliseconds(1));
  mu.AssertHeld();
}

TEST(MutexDeathTest, AssertHeldAbortsWhenUnlocked) {
  Mutex mu;
  EXPECT_DEATH(mu.AssertHeld(), "AssertHeld failed");
  mu.Lock();
  mu.Unlock();
  EXPECT_DEATH(mu.AssertHeld(), "AssertHeld failed");
}

TEST(MutexDeathTest, AssertHeldAbortsWhenAnotherThreadHoldsIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Mutex mu;
  std::atomic<bool> locked{false};
  std::atomic<bool> done{false};
  std::thread holder([&] {
    MutexLock l(&mu);
    locked = true;
    while (!done) std::this_thread::yield();
  });
  while (!locked) std::this_thread::yield();
  EXPECT_DEATH(mu.AssertHeld(), "AssertHeld failed");
  done = true;
  holder.join();
}

// While one thread waits on a CondVar it does not hold the mutex: another
// thread that takes it is the holder, and the waiter is again on return.
TEST(MutexTest, CondVarWaitHandsTheMutexOver) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  std::thread signaller([&] {
    MutexLock l(&mu);
    mu.AssertHeld();
    ready = true;
    cv.Signal();
  });
  {
    MutexLock l(&mu);
    while (!ready) cv.Wait(&mu);
    mu.AssertHeld();
  }
  signaller.join();
}

}  // namespace mutex_test
}  // namespace siftdb
