// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tests/errors/errors_util.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/str_format.h"
#include "util/absl_compat.h"

namespace siftdb::test {

Options CatalogueOptions(bool create_if_missing) {
  Options o;
  o.create_if_missing = create_if_missing;
  return o;
}

std::string CatalogueKey(int i) { return absl::StrFormat("key%06d", i); }

std::string CatalogueValue(int i) {
  return absl::StrFormat("value-%d-%s", i, std::string(i % 50, 'v'));
}

void MakeDb(const std::string& path, int n, bool flush) {
  auto db = DB::Open(CatalogueOptions(true), path);
  ASSERT_TRUE(db.ok()) << db.status();
  WriteOptions sync;
  sync.sync = true;
  for (int i = 0; i < n; i++) {
    ASSERT_TRUE((*db)->Put(sync, CatalogueKey(i), CatalogueValue(i)).ok());
  }
  if (flush) {
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  }
}

void ExpectDbHolds(const std::string& path, int n, const Options& options) {
  auto db = DB::Open(options, path);
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < n; i++) {
    std::string value;
    const absl::Status s = (*db)->Get(ReadOptions(), CatalogueKey(i), &value);
    ASSERT_TRUE(s.ok()) << CatalogueKey(i) << ": " << s;
    ASSERT_EQ(value, CatalogueValue(i)) << CatalogueKey(i);
  }
  std::unique_ptr<Iterator> it = (*db)->NewIterator(ReadOptions());
  int seen = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ASSERT_LT(seen, n) << "extra key " << it->key();
    ASSERT_EQ(it->key(), CatalogueKey(seen));
    ASSERT_EQ(it->value(), CatalogueValue(seen));
    seen++;
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  ASSERT_EQ(seen, n);
}

std::vector<std::string> FilesOf(const std::string& dir,
                                 std::string_view suffix) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const bool match = suffix == "MANIFEST"
                           ? name.rfind("MANIFEST-", 0) == 0
                           : name.size() >= suffix.size() &&
                                 name.compare(name.size() - suffix.size(),
                                              suffix.size(), suffix) == 0;
    if (match) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string Slurp(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) ADD_FAILURE() << "cannot read " << file;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Overwrite(const std::string& file, std::string_view contents) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) ADD_FAILURE() << "cannot write " << file;
}

void FlipByte(const std::string& file, uint64_t offset) {
  std::string bytes = Slurp(file);
  if (offset >= bytes.size()) {
    ADD_FAILURE() << file << " has no byte at offset " << offset;
    return;
  }
  bytes[offset] ^= 0x5a;
  Overwrite(file, bytes);
}

void TruncateFile(const std::string& file, uint64_t size) {
  std::error_code ec;
  std::filesystem::resize_file(file, size, ec);
  if (ec) ADD_FAILURE() << "cannot truncate " << file << ": " << ec.message();
}

uint64_t SizeOf(const std::string& file) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(file, ec);
  if (ec) ADD_FAILURE() << "no size for " << file << ": " << ec.message();
  return size;
}

::testing::AssertionResult HasError(
    const absl::Status& status, absl::StatusCode code,
    std::initializer_list<std::string_view> parts) {
  if (status.code() != code) {
    return ::testing::AssertionFailure()
           << "expected " << absl::StatusCodeToString(code) << ", got "
           << status;
  }
  for (std::string_view part : parts) {
    if (AsStd(status.message()).find(part) == std::string_view::npos) {
      return ::testing::AssertionFailure()
             << "message of " << status << " does not name '" << part << "'";
    }
  }
  // The catalogue records every message as produced: print it.
  std::printf("[catalogue] %s\n", status.ToString().c_str());
  return ::testing::AssertionSuccess();
}

}  // namespace siftdb::test
