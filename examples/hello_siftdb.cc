// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// hello_siftdb: the smallest useful siftdb program. Opens a database in a
// fresh temporary directory, writes 100,000 keys, reads them back (and as
// many absent keys, which the Bloom filters answer), and says how fast.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_format.h"
#include "siftdb/db.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string Key(int i) { return absl::StrFormat("key%012d", i); }

}  // namespace

int main() {
  constexpr int kKeys = 100000;
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "hello_siftdb-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string path = tmpl;

  siftdb::Options options;
  options.create_if_missing = true;
  auto db = siftdb::DB::Open(options, path);
  if (!db.ok()) {
    absl::FPrintF(stderr, "open %s: %s\n", path, db.status().ToString());
    return 1;
  }

  auto start = std::chrono::steady_clock::now();
  const std::string value(100, 'v');
  for (int i = 0; i < kKeys; i++) {
    absl::Status s = (*db)->Put(siftdb::WriteOptions(), Key(i), value);
    if (!s.ok()) {
      absl::FPrintF(stderr, "put: %s\n", s.ToString());
      return 1;
    }
  }
  const double write_secs = Seconds(start);

  start = std::chrono::steady_clock::now();
  std::string got;
  int found = 0;
  for (int i = 0; i < kKeys; i++) {
    if ((*db)->Get(siftdb::ReadOptions(), Key(i), &got).ok() && got == value) {
      found++;
    }
  }
  const double read_secs = Seconds(start);

  start = std::chrono::steady_clock::now();
  int missing_found = 0;
  for (int i = 0; i < kKeys; i++) {
    if ((*db)->Get(siftdb::ReadOptions(), Key(i) + ".", &got).ok()) {
      missing_found++;
    }
  }
  const double missing_secs = Seconds(start);

  std::string negatives;
  (*db)->GetProperty("siftdb.counter.filter.negatives", &negatives);
  absl::PrintF("siftdb: database at %s\n", path);
  absl::PrintF("wrote   %d keys (100-byte values) in %.3f s: %.2f micros/op\n",
               kKeys, write_secs, write_secs * 1e6 / kKeys);
  absl::PrintF("read    %d keys back, %d found, in %.3f s: %.2f micros/op\n",
               kKeys, found, read_secs, read_secs * 1e6 / kKeys);
  absl::PrintF(
      "missing %d absent keys, %d found, in %.3f s: %.2f micros/op "
      "(filters saved %s data-block reads)\n",
      kKeys, missing_found, missing_secs, missing_secs * 1e6 / kKeys,
      negatives);

  db->reset();
  absl::Status s = siftdb::DestroyDB(path, options);
  if (!s.ok()) absl::FPrintF(stderr, "destroy: %s\n", s.ToString());
  return found == kKeys && missing_found == 0 ? 0 : 1;
}
