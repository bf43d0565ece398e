// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The file wrappers of FaultInjectionEnv (internal to util/; include
// util/testing/fault_injection_env.h to use the Env).
//
// An OpenFile is shared between a writable wrapper and the Env's registry
// of open files, so that SimulatePowerLoss can kill a file its owner still
// holds. Lock order: OpenFile::mu before FaultInjectionEnv's mutex; the Env
// never takes an OpenFile's mutex while holding its own.

#ifndef SIFTDB_UTIL_TESTING_FAULT_INJECTION_FILES_H_
#define SIFTDB_UTIL_TESTING_FAULT_INJECTION_FILES_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "siftdb/env.h"
#include "util/mutex.h"
#include "util/testing/fault_injection_env.h"

namespace siftdb {

struct FaultInjectionEnv::OpenFile {
  OpenFile(std::string name, uint64_t generation, uint64_t initial_size,
           std::unique_ptr<WritableFile> file)
      : fname(std::move(name)),
        gen(generation),
        base(std::move(file)),
        size(initial_size) {}

  // Flushes what the base file buffers to the OS and closes it; every
  // later operation fails.
  void Kill() ABSL_LOCKS_EXCLUDED(mu);

  const std::string fname;
  const uint64_t gen;  // the Env's generation when opened
  Mutex mu;
  // Null once closed or killed.
  std::unique_ptr<WritableFile> base ABSL_GUARDED_BY(mu);
  bool killed ABSL_GUARDED_BY(mu) = false;
  // Bytes in the file as written through this wrapper.
  uint64_t size ABSL_GUARDED_BY(mu);
};

std::unique_ptr<WritableFile> NewFaultWritableFile(
    FaultInjectionEnv* env, std::shared_ptr<FaultInjectionEnv::OpenFile> file);
std::unique_ptr<SequentialFile> NewFaultSequentialFile(
    FaultInjectionEnv* env, std::string fname,
    std::unique_ptr<SequentialFile> base);
std::unique_ptr<RandomAccessFile> NewFaultRandomAccessFile(
    FaultInjectionEnv* env, std::string fname,
    std::unique_ptr<RandomAccessFile> base);

}  // namespace siftdb

#endif  // SIFTDB_UTIL_TESTING_FAULT_INJECTION_FILES_H_
