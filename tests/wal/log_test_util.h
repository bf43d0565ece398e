// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// In-memory files and a harness for the log tests: StringSink (a
// WritableFile appending to a std::string), StringSource (a SequentialFile
// over bytes in memory), ReportCollector, and LogHarness, which writes
// records, damages the bytes and reads them back. Not thread-safe.

#ifndef SIFTDB_TESTS_WAL_LOG_TEST_UTIL_H_
#define SIFTDB_TESTS_WAL_LOG_TEST_UTIL_H_

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/env.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/random.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace siftdb::test {

class StringSink final : public WritableFile {
 public:
  absl::Status Append(std::string_view data) override {
    if (fail_appends) return absl::ResourceExhaustedError("sink: no space");
    contents.append(data.data(), data.size());
    return absl::OkStatus();
  }
  absl::Status Flush() override {
    flushes++;
    return absl::OkStatus();
  }
  absl::Status Sync() override { return absl::OkStatus(); }
  absl::Status Close() override { return absl::OkStatus(); }

  std::string contents;
  int flushes = 0;
  bool fail_appends = false;
};

// Reads `contents` (not owned; must outlive the source).
class StringSource final : public SequentialFile {
 public:
  explicit StringSource(std::string_view contents) : contents_(contents) {}

  absl::Status Read(size_t n, std::string_view* result,
                    char* scratch) override {
    if (fail_reads) {
      *result = {};
      return absl::InternalError("read /test/000001.log: Input/output error");
    }
    n = std::min(n, contents_.size());
    std::copy_n(contents_.data(), n, scratch);
    *result = std::string_view(scratch, n);
    contents_.remove_prefix(n);
    return absl::OkStatus();
  }
  absl::Status Skip(uint64_t n) override {
    contents_.remove_prefix(std::min<uint64_t>(n, contents_.size()));
    return absl::OkStatus();
  }

  bool fail_reads = false;

 private:
  std::string_view contents_;
};

class ReportCollector final : public log::Reader::Reporter {
 public:
  void Corruption(size_t bytes, absl::Status status) override {
    dropped_bytes += bytes;
    statuses.push_back(std::move(status));
  }
  std::string Messages() const {
    std::string all;
    for (const auto& s : statuses) {
      absl::StrAppendFormat(&all, "[%s] ", s.ToString());
    }
    return all;
  }

  size_t dropped_bytes = 0;
  std::vector<absl::Status> statuses;
};

// A string of length n made by repeating partial.
inline std::string BigString(std::string_view partial, size_t n) {
  std::string result;
  while (result.size() < n) result.append(partial.data(), partial.size());
  result.resize(n);
  return result;
}

inline std::string NumberString(int n) { return absl::StrFormat("%d.", n); }

// A record of skewed random length (up to 2^17 bytes) and random bytes.
inline std::string RandomRecord(Random* rnd) {
  std::string s(rnd->Skewed(17), '\0');
  for (char& c : s) c = static_cast<char>(' ' + rnd->Uniform(95));
  return s;
}

class LogHarness {
 public:
  LogHarness() : writer_(std::make_unique<log::Writer>(&sink_)) {}

  // Appends a record; returns its expected LastRecordOffset.
  uint64_t Write(std::string_view record) {
    uint64_t start = sink_.contents.size();
    const size_t leftover = log::kBlockSize - start % log::kBlockSize;
    if (leftover < log::kHeaderSize) start += leftover;
    EXPECT_TRUE(writer_->AddRecord(record).ok());
    return start;
  }
  // A new Writer continuing the existing log.
  void ReopenForAppend() {
    writer_ = std::make_unique<log::Writer>(&sink_, sink_.contents.size());
  }

  std::string& contents() { return sink_.contents; }
  size_t WrittenBytes() const { return sink_.contents.size(); }

  // Reading uses a fresh Reader over a snapshot of the contents, created
  // by the first Read after StartReading (or implicitly).
  void StartReading(uint64_t initial_offset = 0, bool checksum = true) {
    snapshot_ = sink_.contents;
    source_ = std::make_unique<StringSource>(snapshot_);
    report_ = ReportCollector();
    reader_ = std::make_unique<log::Reader>(source_.get(), &report_, checksum,
                                            initial_offset);
  }
  // The next record, or "EOF".
  std::string Read() {
    if (reader_ == nullptr) StartReading();
    std::string scratch;
    std::string_view record;
    if (reader_->ReadRecord(&record, &scratch)) return std::string(record);
    return "EOF";
  }
  std::vector<std::string> ReadAll() {
    std::vector<std::string> records;
    for (std::string r = Read(); r != "EOF"; r = Read()) records.push_back(r);
    return records;
  }
  log::Reader* reader() { return reader_.get(); }
  StringSource* source() { return source_.get(); }
  const ReportCollector& report() const { return report_; }
  size_t DroppedBytes() const { return report_.dropped_bytes; }
  std::string ReportMessages() const { return report_.Messages(); }
  size_t ReportCount() const { return report_.statuses.size(); }

  // --- Damage ---
  void IncrementByte(size_t offset, int delta) {
    sink_.contents[offset] = static_cast<char>(sink_.contents[offset] + delta);
  }
  void SetByte(size_t offset, char value) { sink_.contents[offset] = value; }
  void ShrinkSize(size_t bytes) {
    sink_.contents.resize(sink_.contents.size() - bytes);
  }
  // Recomputes the checksum of the physical record whose header is at
  // header_offset and whose payload is len bytes.
  void FixChecksum(size_t header_offset, size_t len) {
    const uint32_t crc =
        crc32c::Value(&sink_.contents[header_offset + 6], 1 + len);
    EncodeFixed32(&sink_.contents[header_offset], crc32c::Mask(crc));
  }
  void SetLength(size_t header_offset, size_t len) {
    sink_.contents[header_offset + 4] = static_cast<char>(len & 0xff);
    sink_.contents[header_offset + 5] = static_cast<char>(len >> 8);
  }

 private:
  StringSink sink_;
  std::unique_ptr<log::Writer> writer_;
  std::string snapshot_;
  std::unique_ptr<StringSource> source_;
  ReportCollector report_;
  std::unique_ptr<log::Reader> reader_;
};

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_WAL_LOG_TEST_UTIL_H_
