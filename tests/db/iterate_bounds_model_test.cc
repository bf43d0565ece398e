// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Iterators with ReadOptions::iterate_lower_bound / iterate_upper_bound,
// checked against a std::map model: random puts and deletes (also runs of
// deletes) spread over the MemTable, the MemTable being flushed, level 0
// and deeper levels (small buffers and tables, Flush, CompactRange),
// snapshots, random bounds (absent, one only, equal, lower > upper, inside
// and outside the key space), and random walks of Seek / SeekToFirst /
// SeekToLast / Next / Prev compared with the model after every step. Over
// several seeds and key-space sizes, with the bytewise comparator (whose
// index separators are shortened) and a reversing one; at the end the same
// checks run on a read-only open of the DB.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/comparator.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"
#include "util/random.h"

namespace siftdb {
namespace iterate_bounds_model_test {

// Bytewise order reversed; no key shortening.
class ReverseComparator final : public Comparator {
 public:
  int Compare(std::string_view a, std::string_view b) const override {
    return b.compare(a);
  }
  const char* Name() const override { return "siftdb.test.Reverse"; }
  void FindShortestSeparator(std::string*, std::string_view) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

struct CmpLess {
  const Comparator* cmp;
  bool operator()(const std::string& a, const std::string& b) const {
    return cmp->Compare(a, b) < 0;
  }
};
using Model = std::map<std::string, std::string, CmpLess>;

struct Bounds {
  std::optional<std::string> lower, upper;
};

std::string Describe(const Bounds& b) {
  return absl::StrFormat("lower=%s upper=%s",
                         b.lower ? "'" + *b.lower + "'" : "none",
                         b.upper ? "'" + *b.upper + "'" : "none");
}

// Params: seed, number of distinct keys, reverse comparator.
class IterateBoundsModelTest
    : public ::testing::TestWithParam<std::tuple<int, int, bool>> {
 protected:
  IterateBoundsModelTest()
      : rnd_(std::get<0>(GetParam()) * 104729 + 17),
        key_space_(std::get<1>(GetParam())),
        cmp_(std::get<2>(GetParam()) ? static_cast<const Comparator*>(&reverse_)
                                     : BytewiseComparator()) {}

  void SetUp() override {
    options_.create_if_missing = true;
    options_.comparator = cmp_;
    // Small buffers, tables and blocks: a short run makes many of each.
    options_.write_buffer_size = 8 << 10;
    options_.max_file_size = 6 << 10;
    options_.max_bytes_for_level_base = 24 << 10;
    options_.block_size = 256;
    path_ = dir_.Join("db");
    auto db = DB::Open(options_, path_);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }

  std::string Key(uint32_t i) { return absl::StrFormat("k%05d", i); }
  std::string RandomKey() { return Key(rnd_.Uniform(key_space_)); }

  // A bound or seek target: a key of the key space, or a string between
  // or beyond them.
  std::string RandomTarget() {
    switch (rnd_.Uniform(6)) {
      case 0:
        return "";
      case 1:
        return RandomKey() + "5";  // just after a key
      case 2:
        return absl::StrFormat("k%d", rnd_.Uniform(10));  // short prefix
      case 3:
        return rnd_.OneIn(2) ? "a" : "z";  // outside the key space
      default:
        return RandomKey();
    }
  }

  Bounds RandomBounds() {
    Bounds b;
    const int kind = rnd_.Uniform(10);
    if (kind == 0) return b;  // none
    if (kind <= 2) {
      b.lower = RandomTarget();
    } else if (kind <= 4) {
      b.upper = RandomTarget();
    } else if (kind == 5) {
      b.lower = RandomTarget();
      b.upper = b.lower;  // empty range
    } else {
      b.lower = RandomTarget();
      b.upper = RandomTarget();
      // Mostly an ordered pair with a short range (the interesting case);
      // sometimes left reversed (an empty iterator).
      if (cmp_->Compare(*b.lower, *b.upper) > 0 && !rnd_.OneIn(4)) {
        std::swap(b.lower, b.upper);
      }
      if (rnd_.OneIn(2) && b.lower->size() == 6 && b.upper->size() == 6 &&
          !rnd_.OneIn(3)) {
        // A narrow range: a few keys above lower.
        const int first = std::stoi(b.lower->substr(1));
        const int width = 1 + rnd_.Uniform(40);
        const int last =
            cmp_ == BytewiseComparator() ? first + width : first - width;
        if (last >= 0) b.upper = Key(last);
      }
    }
    return b;
  }

  void Put(const std::string& k, Model* model) {
    const std::string v = absl::StrFormat("%s-%d-%s", k, step_,
                                          std::string(rnd_.Uniform(90), 'v'));
    ASSERT_TRUE(db_->Put(WriteOptions(), k, v).ok());
    (*model)[k] = v;
  }
  void Delete(const std::string& k, Model* model) {
    ASSERT_TRUE(db_->Delete(WriteOptions(), k).ok());
    model->erase(k);
  }

  // Runs one random walk of an iterator with bounds `b` against `model`.
  void CheckWalk(DB* db, const Model& model, const Snapshot* snap,
                 const Bounds& b) {
    SCOPED_TRACE(Describe(b));
    // The bytes of the bounds live in `b` for the iterator's life.
    ReadOptions ro;
    ro.snapshot = snap;
    if (b.lower) ro.iterate_lower_bound = *b.lower;
    if (b.upper) ro.iterate_upper_bound = *b.upper;
    std::unique_ptr<Iterator> it = db->NewIterator(ro);

    auto in_view = [&](Model::const_iterator p) {
      if (p == model.end()) return false;
      if (b.lower && cmp_->Compare(p->first, *b.lower) < 0) return false;
      if (b.upper && cmp_->Compare(p->first, *b.upper) >= 0) return false;
      return true;
    };
    Model::const_iterator pos = model.end();  // end: invalid
    const int steps = 1 + rnd_.Uniform(40);
    for (int step = 0; step < steps; step++) {
      std::string op;
      const int r = rnd_.Uniform(100);
      if (r < 12) {
        op = "SeekToFirst";
        it->SeekToFirst();
        pos = b.lower ? model.lower_bound(*b.lower) : model.begin();
      } else if (r < 24) {
        op = "SeekToLast";
        it->SeekToLast();
        pos = b.upper ? model.lower_bound(*b.upper) : model.end();
        pos = pos == model.begin() ? model.end() : std::prev(pos);
      } else if (r < 40) {
        const std::string t = RandomTarget();
        op = "Seek('" + t + "')";
        it->Seek(t);
        pos = model.lower_bound(t);
        if (b.lower && cmp_->Compare(t, *b.lower) < 0) {
          pos = model.lower_bound(*b.lower);
        }
      } else if (r < 72) {
        op = "Next";
        it->Next();
        if (pos != model.end()) ++pos;
      } else {
        op = "Prev";
        it->Prev();
        if (pos != model.end()) {
          pos = pos == model.begin() ? model.end() : std::prev(pos);
        }
      }
      if (!in_view(pos)) pos = model.end();
      SCOPED_TRACE(absl::StrFormat("step %d: %s", step, op));
      ASSERT_TRUE(it->status().ok()) << it->status();
      if (pos == model.end()) {
        ASSERT_FALSE(it->Valid()) << "extra key '" << it->key() << "'";
      } else {
        ASSERT_TRUE(it->Valid()) << "missing key '" << pos->first << "'";
        ASSERT_EQ(pos->first, it->key());
        ASSERT_EQ(pos->second, it->value());
      }
    }
  }

  // Full scans both ways plus random walks, for several random bounds.
  void Check(DB* db, const Model& model, const Snapshot* snap, int rounds) {
    for (int i = 0; i < rounds; i++) {
      const Bounds b = RandomBounds();
      ASSERT_NO_FATAL_FAILURE(CheckWalk(db, model, snap, b));
      if (i % 4 != 0) continue;
      // A whole scan in each direction (every key of the range, in order).
      SCOPED_TRACE(Describe(b));
      ReadOptions ro;
      ro.snapshot = snap;
      if (b.lower) ro.iterate_lower_bound = *b.lower;
      if (b.upper) ro.iterate_upper_bound = *b.upper;
      std::vector<std::string> expect;
      for (const auto& [k, v] : model) {
        if (b.lower && cmp_->Compare(k, *b.lower) < 0) continue;
        if (b.upper && cmp_->Compare(k, *b.upper) >= 0) continue;
        expect.push_back(k);
      }
      std::unique_ptr<Iterator> it = db->NewIterator(ro);
      std::vector<std::string> got;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        got.emplace_back(it->key());
      }
      ASSERT_TRUE(it->status().ok()) << it->status();
      ASSERT_EQ(expect, got);
      got.clear();
      for (it->SeekToLast(); it->Valid(); it->Prev()) {
        got.emplace_back(it->key());
      }
      ASSERT_TRUE(it->status().ok()) << it->status();
      ASSERT_EQ(std::vector<std::string>(expect.rbegin(), expect.rend()), got);
    }
  }

  ReverseComparator reverse_;
  Random rnd_;
  const uint32_t key_space_;
  const Comparator* const cmp_;
  test::TempDir dir_;
  Options options_;
  std::string path_;
  std::unique_ptr<DB> db_;
  int step_ = 0;
};

TEST_P(IterateBoundsModelTest, MatchesStdMap) {
  Model model{CmpLess{cmp_}};
  struct Snap {
    const Snapshot* snapshot;
    Model model;
  };
  std::vector<Snap> snapshots;
  constexpr int kSteps = 1500;
  for (step_ = 0; step_ < kSteps; step_++) {
    const int op = rnd_.Uniform(1000);
    if (op < 560) {
      ASSERT_NO_FATAL_FAILURE(Put(RandomKey(), &model));
    } else if (op < 800) {
      ASSERT_NO_FATAL_FAILURE(Delete(RandomKey(), &model));
    } else if (op < 830) {
      // A run of deletes: a range of tombstones for bounded scans to stop
      // in (or cross).
      const uint32_t first = rnd_.Uniform(key_space_);
      const uint32_t n = 1 + rnd_.Uniform(key_space_ / 4 + 1);
      for (uint32_t i = first; i < first + n && i < key_space_; i++) {
        ASSERT_NO_FATAL_FAILURE(Delete(Key(i), &model));
      }
    } else if (op < 860) {
      // A dense run of puts (many entries in few blocks).
      const uint32_t first = rnd_.Uniform(key_space_);
      const uint32_t n = 1 + rnd_.Uniform(30);
      for (uint32_t i = first; i < first + n && i < key_space_; i++) {
        ASSERT_NO_FATAL_FAILURE(Put(Key(i), &model));
      }
    } else if (op < 880) {
      // Level 0, or (not waiting) a MemTable being flushed while we read.
      FlushOptions fo;
      fo.wait = !rnd_.OneIn(3);
      ASSERT_TRUE(db_->Flush(fo).ok());
    } else if (op < 895) {
      std::string a = RandomKey(), c = RandomKey();
      if (cmp_->Compare(a, c) > 0) std::swap(a, c);
      std::string_view begin(a), end(c);
      ASSERT_TRUE(db_->CompactRange(rnd_.OneIn(3) ? nullptr : &begin,
                                    rnd_.OneIn(3) ? nullptr : &end)
                      .ok());
    } else if (op < 915) {
      if (snapshots.size() < 3) {
        snapshots.push_back({db_->GetSnapshot(), model});
      } else {
        const size_t i = rnd_.Uniform(snapshots.size());
        db_->ReleaseSnapshot(snapshots[i].snapshot);
        snapshots.erase(snapshots.begin() + i);
      }
    } else if (op < 940) {
      ASSERT_NO_FATAL_FAILURE(Check(db_.get(), model, nullptr, 6));
      for (const Snap& s : snapshots) {
        ASSERT_NO_FATAL_FAILURE(Check(db_.get(), s.model, s.snapshot, 3));
      }
    }
  }
  ASSERT_NO_FATAL_FAILURE(Check(db_.get(), model, nullptr, 40));
  for (const Snap& s : snapshots) {
    ASSERT_NO_FATAL_FAILURE(Check(db_.get(), s.model, s.snapshot, 10));
    db_->ReleaseSnapshot(s.snapshot);
  }
  // A read-only open beside the writer (its unflushed writes replayed from
  // the log) honours the bounds too. It sees the state as of its open, so
  // the writer's compactions must be done first: one still running would
  // delete tables the read-only DB needs, which reads as DataLoss by design
  // (docs/operations.md), and made this test fail under load.
  ASSERT_TRUE(static_cast<DBImpl*>(db_.get())->WaitForBackgroundWork().ok());
  {
    auto ro_db = DB::OpenForReadOnly(options_, path_);
    ASSERT_TRUE(ro_db.ok()) << ro_db.status();
    ASSERT_NO_FATAL_FAILURE(Check(ro_db->get(), model, nullptr, 30));
  }
  // Everything compacted down: deeper levels only.
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_NO_FATAL_FAILURE(Check(db_.get(), model, nullptr, 30));
}

INSTANTIATE_TEST_SUITE_P(
    Sweep, IterateBoundsModelTest,
    ::testing::Combine(::testing::Range(0, 4), ::testing::Values(60, 600, 3000),
                       ::testing::Bool()),
    [](const auto& info) {
      return absl::StrFormat("seed%d_keys%d_%s", std::get<0>(info.param),
                             std::get<1>(info.param),
                             std::get<2>(info.param) ? "reverse" : "bytewise");
    });

}  // namespace iterate_bounds_model_test
}  // namespace siftdb
