// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Per-level filter sizes (Options::filter_bits_per_key_per_level and
// optimize_filters_for_memory_budget, db/filter_budget.h):
// - AllocateFilterBits: the bits spent equal the budget, each run's
//   false-positive rate is proportional to its keys, the largest runs get
//   no filter when the budget is too small, one run (or equal runs) gets
//   the average;
// - OutputFilterBitsPerKey follows the options' shape; Open refuses bad
//   values naming the option (and a level without a filter with the mirror);
// - tables written by flushes and compactions record the bits/key of their
//   level (table property and filter size);
// - a DB written under uniform, per-level, budget and Ribbon settings in
//   turn, reopened between them, agrees with a std::map model: no false
//   negatives over every key.

#include "db/filter_budget.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "db/db_impl.h"
#include "db/output_compression.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "siftdb/filter_policy.h"
#include "table/table.h"
#include "tests/db/live_tables.h"
#include "tests/support/temp_dir.h"
#include "util/absl_compat.h"

namespace siftdb {
namespace filter_budget_test {

constexpr double kLn2Squared = 0.4804530139182014;

double Fp(double bits) { return std::exp(-bits * kLn2Squared); }

double Spent(const std::vector<FilterRunGroup>& g,
             const std::vector<double>& bits) {
  double total = 0;
  for (size_t i = 0; i < g.size(); i++)
    total += g[i].count * g[i].size * bits[i];
  return total;
}

double Keys(const std::vector<FilterRunGroup>& g) {
  double total = 0;
  for (const FilterRunGroup& x : g) total += x.count * x.size;
  return total;
}

TEST(AllocateFilterBitsTest, SpendsTheBudgetWithRatesProportionalToKeys) {
  // Four level-0 runs of 4 MiB, then 10 MiB, 100 MiB, 1 GiB.
  const std::vector<FilterRunGroup> g = {{4, 4}, {10, 1}, {100, 1}, {1000, 1}};
  for (double avg : {4.0, 6.0, 10.0, 16.0}) {
    SCOPED_TRACE(avg);
    const std::vector<double> bits = AllocateFilterBits(g, avg);
    ASSERT_EQ(bits.size(), g.size());
    EXPECT_NEAR(Spent(g, bits), avg * Keys(g), 1e-9 * avg * Keys(g));
    for (size_t i = 0; i < g.size(); i++) {
      ASSERT_GT(bits[i], 0);
      // p_i / N_i is the same for every run.
      EXPECT_NEAR(Fp(bits[i]) / g[i].size, Fp(bits[0]) / g[0].size,
                  1e-9 * Fp(bits[0]) / g[0].size);
    }
    // Each level 10x larger gets ln(10) / ln^2 2 = 4.79 bits/key fewer.
    EXPECT_NEAR(bits[2] - bits[3], std::log(10) / kLn2Squared, 1e-9);
    EXPECT_GT(bits[0], bits[1]);
    EXPECT_LT(bits[3], avg);
    // Better than uniform: fewer expected wasted reads.
    double optimised = 0, uniform = 0;
    for (size_t i = 0; i < g.size(); i++) {
      optimised += g[i].count * Fp(bits[i]);
      uniform += g[i].count * Fp(avg);
    }
    EXPECT_LT(optimised, uniform);
  }
}

TEST(AllocateFilterBitsTest, LargestRunsGoWithoutWhenTheBudgetIsSmall) {
  const std::vector<FilterRunGroup> g = {{1, 1}, {10, 1}, {100, 1}, {1000, 1}};
  const std::vector<double> bits = AllocateFilterBits(g, 0.5);
  EXPECT_EQ(bits[3], 0);  // p would be >= 1
  EXPECT_GT(bits[0], 0);
  EXPECT_NEAR(Spent(g, bits), 0.5 * Keys(g), 1e-9 * Keys(g));
  // The runs that keep a filter still have p proportional to N.
  for (size_t i = 0; i < 3; i++) {
    if (bits[i] == 0) continue;
    EXPECT_NEAR(Fp(bits[i]) / g[i].size, Fp(bits[0]) / g[0].size, 1e-9);
  }
  // A vanishing budget: only the smallest run keeps a filter.
  const std::vector<double> tiny = AllocateFilterBits(g, 0.001);
  EXPECT_GT(tiny[0], 0);
  EXPECT_EQ(tiny[1] + tiny[2] + tiny[3], 0);
  EXPECT_NEAR(Spent(g, tiny), 0.001 * Keys(g), 1e-9 * Keys(g));
}

TEST(AllocateFilterBitsTest, UniformForOneLevelOrEqualRuns) {
  EXPECT_EQ(AllocateFilterBits(std::vector<FilterRunGroup>{{5, 1}}, 10),
            std::vector<double>{10});
  const std::vector<double> eq =
      AllocateFilterBits(std::vector<FilterRunGroup>{{3, 4}, {3, 1}}, 7.5);
  EXPECT_NEAR(eq[0], 7.5, 1e-9);
  EXPECT_NEAR(eq[1], 7.5, 1e-9);
  // Nothing to spend, or nothing to spend it on.
  EXPECT_EQ(AllocateFilterBits(std::vector<FilterRunGroup>{{5, 1}}, 0),
            std::vector<double>{0});
  EXPECT_EQ(AllocateFilterBits(std::vector<FilterRunGroup>{{5, 1}},
                               std::numeric_limits<double>::quiet_NaN()),
            std::vector<double>{0});
  const std::vector<double> with_empty =
      AllocateFilterBits(std::vector<FilterRunGroup>{{0, 1}, {5, 2}}, 9);
  EXPECT_EQ(with_empty[0], 0);
  EXPECT_NEAR(with_empty[1], 9, 1e-9);
}

TEST(OutputFilterBitsTest, PerLevelListAndBudgetShape) {
  Options o;
  o.filter_bits_per_key = 10;
  for (int level = 0; level < kNumLevels; level++) {
    EXPECT_EQ(OutputFilterBitsPerKey(o, level, 3), 10);  // uniform
  }
  o.filter_bits_per_key_per_level = {14, 12, 0, 6};
  EXPECT_EQ(OutputFilterBitsPerKey(o, 0, 0), 14);
  EXPECT_EQ(OutputFilterBitsPerKey(o, 1, 5), 12);
  EXPECT_EQ(OutputFilterBitsPerKey(o, 2, 5), 0);
  EXPECT_EQ(OutputFilterBitsPerKey(o, 3, 5), 6);
  EXPECT_EQ(OutputFilterBitsPerKey(o, 6, 6), 6);  // the last repeats

  o.filter_bits_per_key_per_level.clear();
  o.optimize_filters_for_memory_budget = true;
  // Only level 0: its runs are equal, so they get the average.
  EXPECT_NEAR(OutputFilterBitsPerKey(o, 0, 0), 10, 1e-9);
  // Levels 0..3 from the targets: the same numbers as AllocateFilterBits.
  const double w = static_cast<double>(o.write_buffer_size);
  const double base = static_cast<double>(o.max_bytes_for_level_base);
  const double m = o.max_bytes_for_level_multiplier;
  const std::vector<FilterRunGroup> g = {
      {w, o.level0_file_num_compaction_trigger},
      {base, 1},
      {base * m, 1},
      {base * m * m, 1}};
  const std::vector<double> want = AllocateFilterBits(g, 10);
  for (int level = 0; level <= 3; level++) {
    EXPECT_NEAR(OutputFilterBitsPerKey(o, level, 3), want[level], 1e-9);
    // The level written counts when it is deeper than the tree.
    EXPECT_NEAR(OutputFilterBitsPerKey(o, level, level == 3 ? 1 : 3),
                want[level], 1e-9);
  }
  EXPECT_GT(OutputFilterBitsPerKey(o, 1, 3), OutputFilterBitsPerKey(o, 2, 3));
  EXPECT_GT(OutputFilterBitsPerKey(o, 2, 3), OutputFilterBitsPerKey(o, 3, 3));
  // The policy's own size is the average when a policy is given.
  o.filter_policy = NewRibbonFilterPolicy(6);
  EXPECT_NEAR(OutputFilterBitsPerKey(o, 0, 0), 6, 1e-9);
  auto p = OutputFilterPolicy(o.filter_policy, o, 3, 3);
  ASSERT_NE(p, nullptr);
  EXPECT_STREQ(p->Name(), o.filter_policy->Name());
  EXPECT_NEAR(p->BitsPerKey(), OutputFilterBitsPerKey(o, 3, 3), 1e-9);
}

TEST(OutputFilterBitsTest, OutputTableOptionsResizesThePolicy) {
  TableOptions base;
  base.filter_policy = NewBloomFilterPolicy(10);
  Options o;
  // Uniform: the DB's own policy object.
  EXPECT_EQ(OutputTableOptions(base, o, 2, 2, false).filter_policy,
            base.filter_policy);
  o.filter_bits_per_key_per_level = {10, 8, 0};
  EXPECT_EQ(OutputTableOptions(base, o, 0, 2, false).filter_policy,
            base.filter_policy);
  auto l1 = OutputTableOptions(base, o, 1, 2, false).filter_policy;
  ASSERT_NE(l1, nullptr);
  EXPECT_EQ(l1->BitsPerKey(), 8);
  EXPECT_EQ(OutputTableOptions(base, o, 2, 2, false).filter_policy, nullptr);
  // optimize_filters_for_hits still empties the bottom.
  o.filter_bits_per_key_per_level = {10, 8};
  o.optimize_filters_for_hits = true;
  EXPECT_EQ(OutputTableOptions(base, o, 3, 3, true).filter_policy, nullptr);
}

absl::Status OpenWith(const Options& o) {
  test::TempDir dir;
  return DB::Open(o, dir.Join("db")).status();
}

void ExpectRefused(const Options& o, const std::string& needle) {
  absl::Status s = OpenWith(o);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), needle)) << s;
}

TEST(FilterBudgetOptionsTest, OpenRefusesBadValuesNamingTheOption) {
  Options o;
  o.create_if_missing = true;
  o.filter_bits_per_key_per_level = {10, -1};
  ExpectRefused(o, "filter_bits_per_key_per_level[1] = -1");
  o.filter_bits_per_key_per_level = {std::nan("")};
  ExpectRefused(o, "filter_bits_per_key_per_level[0] = nan");
  o.filter_bits_per_key_per_level = {10, 101};
  ExpectRefused(o, "filter_bits_per_key_per_level[1] = 101");
  o.filter_bits_per_key_per_level = {10, 5};
  o.optimize_filters_for_memory_budget = true;
  ExpectRefused(o, "choose one");
  o.filter_bits_per_key_per_level.clear();
  o.filter_bits_per_key = std::nan("");
  ExpectRefused(o, "filter_bits_per_key = nan");
  o.filter_bits_per_key = -2;
  ExpectRefused(o, "filter_bits_per_key = -2");
  o.filter_bits_per_key = 10;
  EXPECT_TRUE(OpenWith(o).ok());
  o.optimize_filters_for_memory_budget = false;
  o.filter_bits_per_key_per_level = {12, 0};
  EXPECT_TRUE(OpenWith(o).ok());
}

// A policy FilterPolicyFromName cannot resize.
class OtherPolicy : public FilterPolicy {
 public:
  const char* Name() const override { return "test.Other"; }
  double BitsPerKey() const override { return 10; }
  std::unique_ptr<FilterBitsBuilder> NewBuilder() const override {
    return inner_->NewBuilder();
  }
  bool KeyMayMatch(std::string_view k, std::string_view f) const override {
    return inner_->KeyMayMatch(k, f);
  }
  uint64_t HashKey(std::string_view k) const override {
    return inner_->HashKey(k);
  }
  bool HashMayMatch(uint64_t h, std::string_view f) const override {
    return inner_->HashMayMatch(h, f);
  }

 private:
  std::shared_ptr<const FilterPolicy> inner_ = NewBloomFilterPolicy(10);
};

TEST(FilterBudgetOptionsTest, OpenRefusesAPolicyItCannotResize) {
  Options o;
  o.create_if_missing = true;
  o.filter_policy = std::make_shared<OtherPolicy>();
  EXPECT_TRUE(OpenWith(o).ok());
  o.optimize_filters_for_memory_budget = true;
  ExpectRefused(o, "test.Other");
  o.optimize_filters_for_memory_budget = false;
  o.filter_bits_per_key_per_level = {10};
  ExpectRefused(o, "test.Other");
}

TEST(FilterBudgetOptionsTest, MirrorNeedsAFilterOnEveryLevel) {
  Options o;
  o.create_if_missing = true;
  o.remote_filter.mode = RemoteFilterOptions::Mode::kAsync;
  o.filter_bits_per_key_per_level = {10, 10, 0};
  ExpectRefused(o,
                "filter_bits_per_key_per_level[2] = 0 with "
                "Options.remote_filter on");
  o.filter_bits_per_key_per_level.clear();
  o.optimize_filters_for_memory_budget = true;
  o.filter_bits_per_key = 1;  // the bottom of a deep tree gets none
  ExpectRefused(o,
                "optimize_filters_for_memory_budget = true with "
                "Options.remote_filter on");
  // Enough bits: every level of every shape keeps a filter.
  o.filter_bits_per_key = 10;
  EXPECT_TRUE(ValidateFilterBudgetOptions(o).ok());
  o.filter_bits_per_key_per_level = {10, 3};
  o.optimize_filters_for_memory_budget = false;
  EXPECT_TRUE(ValidateFilterBudgetOptions(o).ok());
}

std::string Key(int i) { return absl::StrFormat("key%07d", i); }
std::string Value(int i) {
  return absl::StrFormat("value-%07d-", i) + std::string(60, 'a' + i % 7);
}

struct LiveTable {
  int level;
  double bits_per_key;  // the table property
  uint64_t entries;
  size_t filter_bytes;
  std::string policy;
};

// Every live table (from siftdb.sstables) with its level and filter.
std::vector<LiveTable> LiveTables(DB* db, const std::string& path) {
  std::vector<LiveTable> out;
  for (const OpenedLiveTable& t : OpenLiveTables(db, path)) {
    const TableProperties& p = t.table->properties();
    out.push_back({t.level, p.filter_bits_per_key, p.num_entries,
                   t.table->filter_data().size(), p.filter_policy_name});
  }
  return out;
}

// Options that put tables on levels 0, 1 and 2: level 1 holds 8 KiB, so
// automatic compactions push it down into level 2.
Options ThreeLevelOptions() {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 64 << 10;
  o.max_bytes_for_level_base = 8192;
  o.max_bytes_for_level_multiplier = 1000;
  o.target_file_size_base = 16 << 10;
  return o;
}

// Writes keys phase, phase + 4, phase + 8, ... below 4 * n (so that each
// call overlaps every table written before: compactions rewrite rather
// than move tables), flushes and waits for the compactions.
void Fill(DB* db, int phase, int n) {
  for (int i = 0; i < n; i++) {
    const int k = 4 * i + phase;
    ASSERT_TRUE(db->Put(WriteOptions(), Key(k), Value(k)).ok());
  }
  ASSERT_TRUE(db->Flush(FlushOptions()).ok());
  ASSERT_TRUE(static_cast<DBImpl*>(db)->WaitForBackgroundWork().ok());
}

// A blocked Bloom filter of n keys at b bits/key: whole 64-byte blocks
// plus an 8-byte trailer.
size_t BloomBytes(uint64_t n, double bits) {
  const uint64_t blocks =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(n * bits / 512)));
  return blocks * 64 + 8;
}

// RepairDB writes its merged tables as level 1's bottommost output: with
// per-level filter sizes they get level 1's size (they had the uniform
// filter_bits_per_key), with optimize_filters_for_hits no filter, and the
// repaired DB reads every key.
TEST(FilterBudgetRepairTest, RepairedTablesGetLevelOnesFilter) {
  for (const bool for_hits : {false, true}) {
    SCOPED_TRACE(for_hits ? "optimize_filters_for_hits" : "per-level sizes");
    test::TempDir dir;
    const std::string path = dir.Join("db");
    Options o = ThreeLevelOptions();
    o.filter_bits_per_key_per_level = {16, 5};
    o.optimize_filters_for_hits = for_hits;
    {
      auto db = DB::Open(o, path);
      ASSERT_TRUE(db.ok()) << db.status();
      ASSERT_NO_FATAL_FAILURE(Fill(db->get(), 0, 3000));
    }
    ASSERT_TRUE(RepairDB(path, o).ok());
    // Level 1 holds 8 KiB, so with automatic compactions the reopened DB
    // may already be pushing the repaired tables into level 2 when the
    // test lists them. The test is about what RepairDB wrote.
    o.disable_auto_compactions = true;
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    const std::vector<LiveTable> tables = LiveTables(db->get(), path);
    ASSERT_FALSE(tables.empty());
    for (const LiveTable& t : tables) {
      EXPECT_EQ(t.level, 1);
      if (for_hits) {
        EXPECT_EQ(t.filter_bytes, 0u);
      } else {
        EXPECT_EQ(t.bits_per_key, 5);
        EXPECT_EQ(t.filter_bytes, BloomBytes(t.entries, 5));
      }
    }
    for (int i = 0; i < 3000; i += 7) {
      std::string v;
      ASSERT_TRUE((*db)->Get(ReadOptions(), Key(4 * i), &v).ok()) << i;
      EXPECT_EQ(v, Value(4 * i));
    }
  }
}

TEST(FilterBudgetDbTest, TablesCarryTheirLevelsBitsPerKey) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = ThreeLevelOptions();
  o.filter_bits_per_key_per_level = {16, 9, 4};
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  Fill(db->get(), 0, 3000);
  Fill(db->get(), 1, 3000);
  // The automatic compactions above may or may not have rewritten tables
  // into level 2 (1 run in 20-40 left only tables moved there unchanged,
  // as timing decided); a manual compaction writes the bottom level.
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  // One more flush that stays on level 0.
  o.disable_auto_compactions = true;
  db->reset();
  db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  Fill(db->get(), 2, 500);
  // A table is written with its level's size; one moved down unchanged
  // (no overlap below) keeps the size of the level it was written to.
  std::map<int, int> rewritten;  // by level: tables with the level's size
  for (const LiveTable& t : LiveTables(db->get(), path)) {
    SCOPED_TRACE(absl::StrFormat("level %d", t.level));
    EXPECT_EQ(t.policy, "siftdb.BlockedBloom");
    EXPECT_EQ(t.filter_bytes, BloomBytes(t.entries, t.bits_per_key))
        << t.entries;
    bool from_above = false;
    for (int l = 0; l <= t.level; l++) {
      from_above |= t.bits_per_key == OutputFilterBitsPerKey(o, l, 2);
    }
    EXPECT_TRUE(from_above) << t.bits_per_key;
    if (t.bits_per_key == OutputFilterBitsPerKey(o, t.level, 2)) {
      rewritten[t.level]++;
    }
  }
  EXPECT_GT(rewritten[0], 0);
  EXPECT_GT(rewritten[1] + rewritten[2], 0);
  EXPECT_GT(rewritten[2], 0);
  std::string stats;
  ASSERT_TRUE((*db)->GetProperty("siftdb.stats", &stats));
  EXPECT_TRUE(absl::StrContains(stats, "New(bits/key)")) << stats;
  EXPECT_TRUE(absl::StrContains(stats, "16.00")) << stats;
  for (int i = 0; i < 12000; i += 3) {
    std::string v;
    absl::Status s = (*db)->Get(ReadOptions(), Key(i), &v);
    if (i % 4 == 3 || (i % 4 == 2 && i >= 2000)) {
      ASSERT_TRUE(absl::IsNotFound(s)) << Key(i) << ": " << s;
    } else {
      ASSERT_TRUE(s.ok()) << Key(i) << ": " << s;
      ASSERT_EQ(v, Value(i));
    }
  }
}

TEST(FilterBudgetDbTest, BudgetModeGivesDeeperLevelsFewerBits) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = ThreeLevelOptions();
  o.optimize_filters_for_memory_budget = true;
  o.filter_bits_per_key = 10;
  o.max_bytes_for_level_multiplier = 10;
  o.max_bytes_for_level_base = 64 << 10;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < 8; i++) Fill(db->get(), i % 4, 5000);
  // Each table has the size of the level it was written to, for a tree
  // whose bottom was that level or deeper (a table moved down unchanged
  // keeps its size).
  std::map<int, int> rewritten;  // by level
  int deepest = 0;
  for (const LiveTable& t : LiveTables(db->get(), path)) {
    SCOPED_TRACE(absl::StrFormat("level %d", t.level));
    deepest = std::max(deepest, t.level);
    EXPECT_EQ(t.filter_bytes, BloomBytes(t.entries, t.bits_per_key));
    bool matches = false;
    for (int l = 0; l <= t.level; l++) {
      for (int bottom = l; bottom < kNumLevels; bottom++) {
        if (t.bits_per_key == OutputFilterBitsPerKey(o, l, bottom)) {
          matches = true;
          if (l == t.level) rewritten[l]++;
        }
      }
    }
    EXPECT_TRUE(matches) << t.bits_per_key;
  }
  ASSERT_GE(deepest, 2) << "no table reached level 2";
  EXPECT_GT(rewritten[deepest], 0);
  // Deeper levels get fewer bits; the bottom fewer than the average.
  // (Level 1's target is one write buffer here: the same as a level-0
  // run's, so the same bits.)
  EXPECT_GE(OutputFilterBitsPerKey(o, 0, deepest),
            OutputFilterBitsPerKey(o, 1, deepest));
  for (int level = 2; level <= deepest; level++) {
    EXPECT_GT(OutputFilterBitsPerKey(o, level - 1, deepest),
              OutputFilterBitsPerKey(o, level, deepest));
  }
  EXPECT_LT(OutputFilterBitsPerKey(o, deepest, deepest), 10);
}

// Uniform, per-level (with a level of no filter), budget and Ribbon
// settings in turn, reopened between them, writing in every phase: every
// key agrees with the model.
TEST(FilterBudgetDbTest, MixedSettingsAcrossReopensAgreeWithModel) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  std::map<std::string, std::string> model;
  std::mt19937 rng(18);
  constexpr int kKeys = 40000;
  const std::vector<std::function<void(Options*)>> phases = {
      [](Options*) {},
      [](Options* o) {
        o->filter_bits_per_key_per_level = {20, 7, 0, 3};
      },
      [](Options* o) {
        o->optimize_filters_for_memory_budget = true;
        o->filter_bits_per_key = 5;
      },
      [](Options* o) {
        o->filter_policy = NewRibbonFilterPolicy(8);
        o->filter_bits_per_key_per_level = {12, 6};
      },
      [](Options* o) {
        o->filter_policy = NewClassicBloomFilterPolicy(10);
        o->optimize_filters_for_memory_budget = true;
      },
      [](Options* o) { o->filter_bits_per_key = 0; },
  };
  int phase = 0;
  for (const auto& configure : phases) {
    SCOPED_TRACE(phase);
    Options o = ThreeLevelOptions();
    o.max_bytes_for_level_multiplier = 4;
    o.max_bytes_for_level_base = 64 << 10;
    configure(&o);
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    // Check what the previous phases wrote, then write.
    for (int round = 0; round < 2; round++) {
      for (int i = 0; i < kKeys; i++) {
        const std::string k = Key(i);
        std::string v;
        absl::Status s = (*db)->Get(ReadOptions(), k, &v);
        auto it = model.find(k);
        if (it == model.end()) {
          ASSERT_TRUE(absl::IsNotFound(s)) << k << ": " << s;
        } else {
          ASSERT_TRUE(s.ok()) << k << ": " << s;  // no false negative
          ASSERT_EQ(v, it->second) << k;
        }
      }
      if (round == 1) break;
      for (int n = 0; n < 6000; n++) {
        const int i = static_cast<int>(rng() % kKeys);
        const std::string k = Key(i);
        if (rng() % 8 == 0) {
          ASSERT_TRUE((*db)->Delete(WriteOptions(), k).ok());
          model.erase(k);
        } else {
          const std::string v = absl::StrFormat("%d-%d-", phase, n) + Value(i);
          ASSERT_TRUE((*db)->Put(WriteOptions(), k, v).ok());
          model[k] = v;
        }
      }
      ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
      if (phase % 2 == 1) {
        ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
      }
      ASSERT_TRUE(
          static_cast<DBImpl*>(db->get())->WaitForBackgroundWork().ok());
    }
    phase++;
  }
}

}  // namespace filter_budget_test
}  // namespace siftdb
