// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Helpers shared by the libFuzzer targets in fuzz/: in-memory files over
// the fuzzer's bytes, a sink that collects what a writer appends, and
// FUZZ_CHECK, which aborts (a finding) when an invariant of the code under
// test does not hold.
//
// Ownership: a StringSource / StringFile borrows its bytes; they must
// outlive it. Thread safety: StringFile::Read is safe from many threads (it
// only reads); the others are used by one thread at a time.

#ifndef SIFTDB_FUZZ_FUZZ_UTIL_H_
#define SIFTDB_FUZZ_FUZZ_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "siftdb/env.h"

// An invariant the fuzzed code promises; a violation is a finding.
#define FUZZ_CHECK(cond)                                               \
  do {                                                                 \
    if (!(cond)) {                                                     \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, \
                   __LINE__, #cond);                                   \
      std::abort();                                                    \
    }                                                                  \
  } while (0)

namespace siftdb::fuzz {

inline std::string_view AsView(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// A SequentialFile over borrowed bytes.
class StringSource final : public SequentialFile {
 public:
  explicit StringSource(std::string_view contents) : contents_(contents) {}
  absl::Status Read(size_t n, std::string_view* result,
                    char* scratch) override {
    n = std::min(n, contents_.size());
    std::copy_n(contents_.data(), n, scratch);  // like a real read
    *result = std::string_view(scratch, n);
    contents_.remove_prefix(n);
    return absl::OkStatus();
  }
  absl::Status Skip(uint64_t n) override {
    contents_.remove_prefix(
        static_cast<size_t>(std::min<uint64_t>(n, contents_.size())));
    return absl::OkStatus();
  }

 private:
  std::string_view contents_;
};

// A RandomAccessFile over borrowed bytes. Reads copy into scratch, as a
// file read would, so a reader that keeps a pointer past its buffer's
// lifetime shows up under ASan.
class StringFile final : public RandomAccessFile {
 public:
  explicit StringFile(std::string_view contents) : contents_(contents) {}
  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    if (offset > contents_.size()) {
      *result = std::string_view();
      return absl::OkStatus();  // reading past the end: a short read
    }
    n = static_cast<size_t>(std::min<uint64_t>(n, contents_.size() - offset));
    std::copy_n(contents_.data() + offset, n, scratch);
    *result = std::string_view(scratch, n);
    return absl::OkStatus();
  }

 private:
  std::string_view contents_;
};

// A WritableFile that appends to a string it owns.
class StringSink final : public WritableFile {
 public:
  absl::Status Append(std::string_view data) override {
    contents_.append(data);
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }
  absl::Status Sync() override { return absl::OkStatus(); }
  absl::Status Close() override { return absl::OkStatus(); }
  const std::string& contents() const { return contents_; }

 private:
  std::string contents_;
};

}  // namespace siftdb::fuzz

#endif  // SIFTDB_FUZZ_FUZZ_UTIL_H_
