// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Level-0 tables under a DB iterator are merge children whose table
// iterator is built only when first positioned (TableCache::
// NewLazyIterator): a seek whose target a table's filter rules out never
// builds it. Every seek and step, in both directions, must still answer
// as a std::map does, with the ruled-out tables positioned once the merge
// moves on past the target; and a lazy iterator alone must yield its
// table's entries exactly as the eager one does.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/table_cache.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/filter_policy.h"
#include "table/internal_key.h"
#include "tests/support/temp_dir.h"
#include "util/random.h"

namespace siftdb {
namespace lazy_level0_test {

using test::TempDir;

std::string Key(uint32_t i) { return absl::StrFormat("key%06u", i); }

class LazyLevel0Test : public testing::Test {
 protected:
  // Five level-0 tables of overlapping random keys (some overwritten, some
  // deleted), and more in the MemTable.
  void SetUp() override {
    Options o;
    o.create_if_missing = true;
    o.disable_auto_compactions = true;
    o.filter_policy = NewBloomFilterPolicy(10);
    auto db = DB::Open(o, dir_.Join("db"));
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
    Random rnd(301);
    for (int table = 0; table <= 5; table++) {
      for (int i = 0; i < 400; i++) {
        const std::string key = Key(rnd.Uniform(4000));
        if (rnd.OneIn(6)) {
          ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
          model_.erase(key);
        } else {
          const std::string value = absl::StrFormat("v%d-%d", table, i);
          ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
          model_[key] = value;
        }
      }
      if (table < 5) {
        ASSERT_TRUE(static_cast<DBImpl*>(db_.get())->FlushMemTable().ok());
      }
    }
    std::string files;
    ASSERT_TRUE(db_->GetProperty("siftdb.num-files-at-level0", &files));
    ASSERT_EQ(files, "5");
  }

  TempDir dir_;
  std::unique_ptr<DB> db_;
  std::map<std::string, std::string> model_;
};

TEST_F(LazyLevel0Test, SeeksAndStepsMatchTheModel) {
  Random rnd(17);
  for (int round = 0; round < 1500; round++) {
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    // Present, absent and between keys.
    const std::string target =
        Key(rnd.Uniform(4100)) + (rnd.OneIn(4) ? "!" : "");
    it->Seek(target);
    auto m = model_.lower_bound(target);
    for (int step = 0; step < 6; step++) {
      if (m == model_.end()) {
        ASSERT_FALSE(it->Valid()) << target << " step " << step;
        break;
      }
      ASSERT_TRUE(it->Valid()) << target << " step " << step;
      ASSERT_EQ(it->key(), m->first);
      ASSERT_EQ(it->value(), m->second);
      if (rnd.OneIn(3) && m != model_.begin()) {
        it->Prev();
        --m;
      } else {
        it->Next();
        ++m;
      }
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
  }
  // Whole scans from either end.
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  auto m = model_.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
    ASSERT_NE(m, model_.end());
    ASSERT_EQ(it->key(), m->first);
  }
  ASSERT_EQ(m, model_.end());
  auto r = model_.rbegin();
  for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
    ASSERT_NE(r, model_.rend());
    ASSERT_EQ(it->key(), r->first);
  }
  ASSERT_EQ(r, model_.rend());
}

// One table read through TableCache: the lazy iterator is not Valid and
// OK before its first positioning, then the eager one's twin; a table
// that cannot be opened gives the same error either way.
TEST(LazyTableIteratorTest, YieldsWhatTheEagerIteratorYields) {
  TempDir dir;
  Options o;
  o.create_if_missing = true;
  o.disable_auto_compactions = true;
  const std::string dbname = dir.Join("db");
  {
    auto db = DB::Open(o, dbname);
    ASSERT_TRUE(db.ok()) << db.status();
    for (uint32_t i = 0; i < 3000; i += 3) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "v" + Key(i)).ok());
    }
    ASSERT_TRUE(static_cast<DBImpl*>(db->get())->FlushMemTable().ok());
  }
  auto children = Env::Default()->GetChildren(dbname);
  ASSERT_TRUE(children.ok()) << children.status();
  uint64_t number = 0;
  for (const std::string& name : *children) {
    uint64_t n = 0;
    FileType type;
    if (ParseFileName(name, &n, &type) && type == FileType::kTableFile)
      number = n;
  }
  ASSERT_NE(number, 0u);
  auto size = Env::Default()->GetFileSize(TableFileName(dbname, number));
  ASSERT_TRUE(size.ok()) << size.status();

  TableCache cache(dbname, Env::Default(), TableOptions(), 16);
  const Table* table = nullptr;
  auto lazy = cache.NewLazyIterator(ReadOptions(), number, *size, &table);
  ASSERT_NE(table, nullptr);
  EXPECT_FALSE(lazy->Valid());
  EXPECT_TRUE(lazy->status().ok());
  auto eager = cache.NewIterator(ReadOptions(), number, *size);
  for (eager->SeekToFirst(), lazy->SeekToFirst(); eager->Valid();
       eager->Next(), lazy->Next()) {
    ASSERT_TRUE(lazy->Valid());
    ASSERT_EQ(lazy->key(), eager->key());
    ASSERT_EQ(lazy->value(), eager->value());
  }
  EXPECT_FALSE(lazy->Valid());
  for (const char* first : {"seek", "last"}) {
    auto fresh = cache.NewLazyIterator(ReadOptions(), number, *size);
    if (std::string(first) == "seek") {
      std::string target;
      AppendInternalKey(&target, Key(1501), kMaxSequenceNumber,
                        kValueTypeForSeek);
      fresh->Seek(target);
      eager->Seek(target);
    } else {
      fresh->SeekToLast();
      eager->SeekToLast();
    }
    for (int step = 0; step < 5; step++, fresh->Prev(), eager->Prev()) {
      ASSERT_TRUE(fresh->Valid()) << first;
      ASSERT_EQ(fresh->key(), eager->key()) << first;
    }
  }

  const Table* missing_table = table;
  auto missing = cache.NewLazyIterator(ReadOptions(), number + 1000, *size,
                                       &missing_table);
  EXPECT_EQ(missing_table, nullptr);
  missing->SeekToFirst();
  EXPECT_FALSE(missing->Valid());
  EXPECT_FALSE(missing->status().ok());
}

}  // namespace lazy_level0_test
}  // namespace siftdb
