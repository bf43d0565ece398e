// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: the write-ahead log reader (wal/log_reader.h) over arbitrary
// file bytes. Input: the bytes of one log file.
//
// Checked besides "no crash, no out-of-bounds read":
// - every record returned, and every drop reported, fits in the file;
//   damage is reported as DataLoss naming an offset;
// - with initial_offset, no record returned starts before it;
// - re-encoding the records read (log::Writer) and reading them back gives
//   the same records with no damage reported.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace siftdb::fuzz {
namespace {

class CheckingReporter final : public log::Reader::Reporter {
 public:
  explicit CheckingReporter(size_t file_size) : file_size_(file_size) {}
  void Corruption(size_t bytes_dropped, absl::Status status) override {
    FUZZ_CHECK(bytes_dropped <= file_size_);
    FUZZ_CHECK(absl::IsDataLoss(status));
    FUZZ_CHECK(status.message().find("offset") != std::string_view::npos);
    ++reports;
  }
  int reports = 0;

 private:
  const size_t file_size_;
};

std::vector<std::string> ReadAll(std::string_view log, bool checksum,
                                 uint64_t initial_offset, int* reports) {
  StringSource source(log);
  CheckingReporter reporter(log.size());
  log::Reader reader(&source, &reporter, checksum, initial_offset);
  std::vector<std::string> records;
  std::string scratch;
  std::string_view record;
  while (reader.ReadRecord(&record, &scratch)) {
    FUZZ_CHECK(record.size() <= log.size());
    FUZZ_CHECK(reader.LastRecordOffset() < log.size());
    FUZZ_CHECK(reader.LastRecordOffset() >= initial_offset);
    // Each record costs at least one header: a bound on the count.
    FUZZ_CHECK(records.size() < log.size() / log::kHeaderSize + 1);
    records.emplace_back(record);
  }
  if (reports != nullptr) *reports = reporter.reports;
  return records;
}

}  // namespace
}  // namespace siftdb::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace siftdb;
  using namespace siftdb::fuzz;
  const std::string_view log = AsView(data, size);

  const std::vector<std::string> records = ReadAll(log, true, 0, nullptr);
  ReadAll(log, false, 0, nullptr);
  ReadAll(log, true, size / 2, nullptr);

  // What was read intact survives a rewrite unchanged.
  StringSink sink;
  log::Writer writer(&sink);
  for (const std::string& r : records) FUZZ_CHECK(writer.AddRecord(r).ok());
  int reports = 0;
  const std::vector<std::string> reread =
      ReadAll(sink.contents(), true, 0, &reports);
  FUZZ_CHECK(reports == 0);
  FUZZ_CHECK(reread == records);
  return 0;
}
