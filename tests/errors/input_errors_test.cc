// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// docs/errors.md, "Keys, values and comparators": what a caller passes to
// an open database. Each refused call leaves the database unchanged and
// working; the comparator case reopens with the right comparator and finds
// the data.

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/errors/errors_util.h"
#include "tests/support/temp_dir.h"

namespace siftdb::test {
namespace input_errors_test {

constexpr int kEntries = 20;

class ReverseComparator final : public Comparator {
 public:
  int Compare(std::string_view a, std::string_view b) const override {
    return BytewiseComparator()->Compare(b, a);
  }
  const char* Name() const override { return "catalogue.Reverse"; }
  void FindShortestSeparator(std::string*, std::string_view) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

class ErrorsInput : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/false));
    auto db = DB::Open(CatalogueOptions(false), path_);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }
  // The refused call changed nothing: the data reads back after a reopen.
  void ExpectUnchanged() {
    db_.reset();
    ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
  }

  TempDir dir_;
  const std::string path_ = dir_.Join("db");
  std::unique_ptr<DB> db_;
};

TEST_F(ErrorsInput, KeyTooLarge) {
  const std::string key(kMaxKeySize + 1, 'k');
  EXPECT_TRUE(HasError(db_->Put(WriteOptions(), key, "v"),
                       absl::StatusCode::kInvalidArgument,
                       {"key of 1048577 bytes", "kMaxKeySize"}));
  EXPECT_TRUE(HasError(db_->Delete(WriteOptions(), key),
                       absl::StatusCode::kInvalidArgument,
                       {"key of 1048577 bytes", "kMaxKeySize"}));
  // A key of exactly the limit is fine.
  EXPECT_TRUE(db_->Delete(WriteOptions(), key.substr(1)).ok());
  ExpectUnchanged();
}

TEST_F(ErrorsInput, ValueTooLarge) {
  const std::string value(kMaxValueSize + 1, 'v');
  EXPECT_TRUE(HasError(db_->Put(WriteOptions(), "k", value),
                       absl::StatusCode::kInvalidArgument,
                       {"value of 67108865 bytes", "kMaxValueSize"}));
  ExpectUnchanged();
}

TEST_F(ErrorsInput, BatchWithOneOversizedKey) {
  WriteBatch batch;
  batch.Put("fine", "value");
  batch.Put(std::string(kMaxKeySize + 1, 'k'), "v");
  EXPECT_TRUE(HasError(db_->Write(WriteOptions(), &batch),
                       absl::StatusCode::kInvalidArgument, {"kMaxKeySize"}));
  std::string value;
  // Atomic: the good half of the batch was not applied either.
  EXPECT_TRUE(absl::IsNotFound(db_->Get(ReadOptions(), "fine", &value)));
  ExpectUnchanged();
}

TEST_F(ErrorsInput, GetWithOversizedKey) {
  std::string value;
  const absl::Status s =
      db_->Get(ReadOptions(), std::string(kMaxKeySize + 1, 'k'), &value);
  EXPECT_TRUE(HasError(s, absl::StatusCode::kInvalidArgument,
                       {"key of 1048577 bytes", "kMaxKeySize"}));
  ExpectUnchanged();
}

TEST_F(ErrorsInput, ComparatorMismatch) {
  db_.reset();
  static const ReverseComparator reverse;
  Options o = CatalogueOptions(false);
  o.comparator = &reverse;
  auto db = DB::Open(o, path_);
  EXPECT_TRUE(HasError(db.status(), absl::StatusCode::kInvalidArgument,
                       {path_, "comparator mismatch",
                        "siftdb.BytewiseComparator", "catalogue.Reverse"}));
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

}  // namespace input_errors_test
}  // namespace siftdb::test
