// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Uses the installed C++ API as a user would: open, write, read, iterate,
// a comparator of its own (a class derived across the library boundary),
// and the version. Prints "consumer ok <version>" and exits 0 on success.

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "siftdb/db.h"
#include "siftdb/version.h"

namespace {

// Reverse byte order: proves a subclass of a public class links against
// the library (its vtable and typeinfo are exported).
class ReverseComparator : public siftdb::Comparator {
 public:
  int Compare(std::string_view a, std::string_view b) const override {
    return b.compare(a);
  }
  const char* Name() const override { return "consumer.Reverse"; }
  void FindShortestSeparator(std::string*, std::string_view) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

int Fail(const char* what, const absl::Status& s) {
  std::fprintf(stderr, "consumer: %s: %s\n", what, s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  if (std::strcmp(siftdb::Version(), "") == 0) return 1;
  ReverseComparator reverse;
  siftdb::Options options;
  options.create_if_missing = true;
  options.comparator = &reverse;
  auto db = siftdb::DB::Open(options, argv[1]);
  if (!db.ok()) return Fail("open", db.status());
  siftdb::WriteBatch batch;
  batch.Put("a", "1");
  batch.Put("b", "2");
  absl::Status s = (*db)->Write(siftdb::WriteOptions(), &batch);
  if (!s.ok()) return Fail("write", s);
  std::string value;
  s = (*db)->Get(siftdb::ReadOptions(), "b", &value);
  if (!s.ok() || value != "2") return Fail("get", s);
  std::unique_ptr<siftdb::Iterator> it =
      (*db)->NewIterator(siftdb::ReadOptions());
  it->SeekToFirst();
  if (!it->Valid() || it->key() != "b") return Fail("order", it->status());
  it.reset();
  s = (*db)->Close();
  if (!s.ok()) return Fail("close", s);
  std::printf("consumer ok %s\n", siftdb::Version());
  return 0;
}
