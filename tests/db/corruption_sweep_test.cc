// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The corruption sweep: whatever bytes of a table file change on disk, the
// engine and its tools never answer with wrong data. A small DB of three
// overlapping tables on levels 0, 1 and 2 (older versions and deletions
// shadowed by newer ones) is built once per compression setting (raw and
// Snappy); each trial copies it, flips bytes of one table in one part of
// its layout (data blocks, filter, index, properties, metaindex, footer:
// found by parsing the table with the table layer's own footer and handle
// code) and checks, on fresh copies:
//   - Get of every key (default ReadOptions) gives the right value, or
//     NotFound for a deleted or never-written key, or DataLoss naming the
//     damaged file; never a wrong (e.g. shadowed) value, and never NotFound
//     for a present key (a damaged filter must not make a key "absent");
//   - a full scan and Seeks yield only right entries, in order, as a
//     prefix of the whole answer, and stop early only with DataLoss;
//   - CompactRange(nullptr, nullptr) succeeds with every key still right,
//     or fails with DataLoss; then, and again after a reopen, every table
//     in the directory is the damaged file untouched, an original
//     untouched, an intact new table (sst_dump check passes) holding only
//     entries of the originals, or the unfinished output of the failed
//     compaction, which the DB does not use: damage is never rewritten as
//     good data;
//   - `ldb --db=D scan`, `ldb --db=D get KEY` (a key whose answer the
//     damaged table holds), `sst_dump --file=F --command=check` and
//     `--command=scan` exit 0 with exactly the right output, or exit 1
//     naming the damaged file after printing only a prefix of the right
//     output; never by a signal.
// Each random trial is one seed (which table, offsets and bit masks); a
// failure prints the seed and the flipped bytes to replay it.
// SIFTDB_SWEEP_TRIALS (default 8 per compression and part, 4 under a
// sanitizer) and SIFTDB_SWEEP_SEED widen the sweep. FooterRedirectTest adds
// the damage no CRC can see: a footer naming other intact blocks as index
// or metaindex.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "table/block.h"
#include "table/format.h"
#include "table/internal_key.h"
#include "table/table.h"
#include "tests/db/corruption_sweep_base.h"
#include "tests/db/parallel_compaction_test_util.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"
#include "tests/tools/tool_runner.h"

namespace siftdb::sweep {
namespace corruption_sweep_test {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// One trial: which table, which bytes, which masks.

struct Trial {
  uint64_t seed = 0;
  Part part = Part::kData;
  std::string table;
  std::vector<std::pair<uint64_t, uint8_t>> flips;  // offset, xor mask
  std::string get_key;  // the key `ldb get` asks for
  std::string note;     // what a crafted trial does

  std::string Describe() const {
    std::vector<std::string> f;
    for (const auto& [offset, mask] : flips) {
      f.push_back(absl::StrFormat("%d^0x%02x", offset, mask));
    }
    return absl::StrFormat("seed %d: %s of %s, bytes %s%s", seed,
                           PartName(part), table, absl::StrJoin(f, ","),
                           note.empty() ? "" : " (" + note + ")");
  }
};

// What the trials of one test saw, printed at its end: shows which
// outcomes (damage reported or not, tools failing or not) the sweep
// reached.
struct Tally {
  int trials = 0;
  int reported = 0;  // trials where some engine read reported DataLoss
  int compaction_failed = 0;
  int ldb_scan_failed = 0;
  int ldb_get_failed = 0;
  int sst_check_failed = 0;
  int sst_scan_failed = 0;

  std::string ToString() const {
    return absl::StrFormat(
        "%d trials: damage reported by the engine in %d, compaction failed "
        "in %d; non-zero exits: ldb scan %d, ldb get %d, sst_dump check %d, "
        "sst_dump scan %d",
        trials, reported, compaction_failed, ldb_scan_failed, ldb_get_failed,
        sst_check_failed, sst_scan_failed);
  }
};

class Sweeper {
 public:
  Sweeper(const BaseDb& base, CompressionType compression)
      : base_(base), compression_(compression) {}

  Trial MakeTrial(Part part, uint64_t seed, int index) const {
    std::mt19937_64 rng(seed);
    Trial t;
    t.seed = seed;
    t.part = part;
    t.table = base_.tables[rng() % base_.tables.size()];
    const std::vector<Region>& regions =
        base_.layouts.at(t.table).parts.at(part);
    const Region r = regions[rng() % regions.size()];
    uint64_t first;
    if (index == 0) {
      first = regions.front().begin;  // the part's first byte
    } else if (index == 1) {
      first = regions.back().end - 1;  // its last (a CRC or magic byte)
    } else {
      first = r.begin + rng() % (r.end - r.begin);
    }
    // Mostly one byte; sometimes a short burst of nearby bytes.
    const int n = rng() % 4 == 0 ? 2 + static_cast<int>(rng() % 3) : 1;
    std::set<uint64_t> offsets = {first};
    for (int i = 1; i < n; i++) {
      const uint64_t o = first + rng() % 8;
      if (o < r.end && o >= r.begin) offsets.insert(o);
    }
    for (uint64_t o : offsets) {
      t.flips.emplace_back(o, static_cast<uint8_t>(1 + rng() % 255));
    }
    // For damage in a data block, `ldb get` asks for one of its keys.
    std::vector<std::string> block_keys;
    if (part == Part::kData) {
      for (size_t b = 0; b < regions.size(); b++) {
        if (regions[b].begin <= first && first < regions[b].end) {
          block_keys = base_.layouts.at(t.table).data_block_keys[b];
        }
      }
    }
    t.get_key = PickGetKey(t.table, block_keys, rng());
    return t;
  }

  // The key `ldb get` asks for: a present key whose value `table` holds
  // (so the lookup must read it), from `candidates` when one qualifies,
  // else from the whole table; `pick` chooses among them.
  std::string PickGetKey(const std::string& table,
                         const std::vector<std::string>& candidates,
                         uint64_t pick) const {
    const auto& held = base_.table_keys.at(table);
    for (bool whole_table : {false, true}) {
      std::vector<std::string> keys;
      auto consider = [&](const std::string& k) {
        const auto& want = base_.model.at(k);
        if (want.has_value() && held.at(k) == want) keys.push_back(k);
      };
      if (whole_table) {
        for (const auto& [k, v] : held) consider(k);
      } else {
        for (const std::string& k : candidates) consider(k);
      }
      if (!keys.empty()) return keys[pick % keys.size()];
    }
    return base_.model.begin()->first;
  }

  // A footer of `table` naming other blocks, each intact with its CRC, as
  // metaindex and index: damage no checksum can see.
  Trial MakeFooterTrial(const std::string& table, const Region& metaindex,
                        const Region& index, std::string note) const {
    auto handle = [](const Region& r) {
      return BlockHandle(r.begin, r.end - r.begin - kBlockTrailerSize);
    };
    Footer footer;
    footer.metaindex_handle = handle(metaindex);
    footer.index_handle = handle(index);
    std::string encoded;
    footer.EncodeTo(&encoded);
    const std::string& bytes = base_.bytes.at(table);
    const uint64_t at = bytes.size() - kFooterSize;
    Trial t;
    t.part = Part::kFooter;
    t.table = table;
    t.note = std::move(note);
    for (size_t i = 0; i < kFooterSize; i++) {
      const uint8_t mask = static_cast<uint8_t>(bytes[at + i] ^ encoded[i]);
      if (mask != 0) t.flips.emplace_back(at + i, mask);
    }
    t.get_key = PickGetKey(table, {}, 0);
    return t;
  }

  // Copies the base DB to `dir` and applies the trial's flips; returns the
  // damaged table's bytes.
  std::string MakeDamagedCopy(const Trial& t, const std::string& dir) const {
    fs::remove_all(dir);
    fs::copy(base_.path, dir, fs::copy_options::recursive);
    std::string bytes = base_.bytes.at(t.table);
    for (const auto& [offset, mask] : t.flips) {
      bytes[offset] = static_cast<char>(bytes[offset] ^ mask);
    }
    WriteBytes(dir + "/" + t.table, bytes);
    return bytes;
  }

  // A non-OK status must be DataLoss and name the damaged file.
  void ExpectDamageReport(const absl::Status& s, const Trial& t,
                          std::string_view what) const {
    reported_ = true;
    EXPECT_EQ(absl::StatusCode::kDataLoss, s.code()) << what << ": " << s;
    EXPECT_NE(std::string::npos, s.message().find(t.table))
        << what << " does not name the damaged file: " << s;
  }

  // Gets, a full scan and Seeks on an open DB. `clean`: the damage is gone
  // (a compaction read through it and succeeded), so no errors either.
  void CheckReads(DB* db, const Trial& t, bool clean) const {
    for (const auto& [key, want] : base_.model) {
      std::string got;
      const absl::Status s = db->Get(ReadOptions(), key, &got);
      if (s.ok()) {
        ASSERT_TRUE(want.has_value())
            << "Get(" << key << ") of a deleted key returned " << got;
        ASSERT_EQ(*want, got) << "Get(" << key << ") returned a wrong value";
      } else if (absl::IsNotFound(s)) {
        ASSERT_FALSE(want.has_value())
            << "Get(" << key << ") of a present key said NotFound: " << s;
      } else {
        ASSERT_FALSE(clean) << "Get(" << key << "): " << s;
        ExpectDamageReport(s, t, "Get(" + key + ")");
      }
    }
    for (const std::string& key : base_.absent) {
      std::string got;
      const absl::Status s = db->Get(ReadOptions(), key, &got);
      ASSERT_FALSE(s.ok()) << "Get(" << key << ") of an absent key: " << got;
      if (!absl::IsNotFound(s)) {
        ASSERT_FALSE(clean) << s;
        ExpectDamageReport(s, t, "Get(" + key + ")");
      }
    }

    // The whole scan: a prefix of the right answer, complete unless the
    // iterator reports the damage.
    std::vector<std::pair<std::string, std::string>> want;
    for (const auto& [key, value] : base_.model) {
      if (value.has_value()) want.emplace_back(key, *value);
    }
    {
      std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
      size_t n = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
        ASSERT_LT(n, want.size()) << "scan: extra entry " << it->key();
        ASSERT_EQ(want[n].first, it->key()) << "scan: entry " << n;
        ASSERT_EQ(want[n].second, it->value()) << "scan: " << it->key();
      }
      if (it->status().ok()) {
        ASSERT_EQ(want.size(), n) << "scan ended early without an error";
      } else {
        ASSERT_FALSE(clean) << it->status();
        ExpectDamageReport(it->status(), t, "scan");
      }
    }

    // Seeks (the probing merge consults filters first): of the get key,
    // of a deleted key and of a key between two written ones.
    std::vector<std::string> targets = {t.get_key, t.get_key + "!"};
    for (const auto& [key, value] : base_.model) {
      if (!value.has_value() && key >= t.get_key) {
        targets.push_back(key);
        break;
      }
    }
    for (const std::string& target : targets) {
      std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
      it->Seek(target);
      auto next = std::lower_bound(
          want.begin(), want.end(), target,
          [](const auto& e, const std::string& k) { return e.first < k; });
      if (it->Valid()) {
        ASSERT_NE(want.end(), next) << "Seek(" << target << ") found "
                                    << it->key() << " past the last key";
        ASSERT_EQ(next->first, it->key()) << "Seek(" << target << ")";
        ASSERT_EQ(next->second, it->value()) << "Seek(" << target << ")";
      } else if (it->status().ok()) {
        ASSERT_EQ(want.end(), next)
            << "Seek(" << target << ") missed " << next->first;
      } else {
        ASSERT_FALSE(clean) << it->status();
        ExpectDamageReport(it->status(), t, "Seek(" + target + ")");
      }
    }
  }

  // Every table in the directory of the open, idle `db`: the damaged file
  // untouched, an original untouched, a new intact table holding only entries
  // of the originals, or the unfinished output of a failed compaction (no
  // footer yet) that the DB does not use and its next open deletes.
  // `run_tools`: also run sst_dump check on each new table.
  void CheckTablesLeft(DB* db, const std::string& dir, const Trial& t,
                       const std::string& damaged_bytes, bool run_tools) const {
    const std::set<uint64_t> live = test::LiveTableNumbers(db);
    for (const std::string& name : TableNames(dir)) {
      SCOPED_TRACE(name);
      const std::string path = dir + "/" + name;
      const std::string bytes = ReadBytes(path);
      if (name == t.table) {
        // Byte for byte the file the tools were run on (Run()).
        ASSERT_EQ(damaged_bytes, bytes) << "the damaged table was rewritten";
        continue;
      }
      if (base_.bytes.count(name) > 0) {
        ASSERT_EQ(base_.bytes.at(name), bytes) << "an original table changed";
        continue;
      }
      uint64_t number = 0;
      FileType type;
      ASSERT_TRUE(ParseFileName(name, &number, &type));
      auto entries = ReadEntries(path);
      if (!entries.ok()) {
        ASSERT_EQ(0u, live.count(number))
            << "the DB uses an unreadable table: " << entries.status();
        continue;  // an abandoned output
      }
      // A table a compaction wrote: intact, and only original entries.
      if (run_tools && !sst_dump_.empty()) {
        test::ToolResult r = test::RunTool(
            sst_dump_, {"--file=" + path, "--command=check"}, scratch_);
        ASSERT_EQ(0, r.exit_code)
            << "a new table fails sst_dump check: " << r.err;
      }
      for (const auto& [ikey, value] : *entries) {
        ParsedInternalKey parsed;
        ASSERT_TRUE(ParseInternalKey(ikey, &parsed));
        ASSERT_TRUE(base_.original_entries.count({std::string(parsed.user_key),
                                                  static_cast<int>(parsed.type),
                                                  value}))
            << "a new table holds an entry no original held: "
            << InternalKeyDebugString(ikey, false) << " => " << value;
      }
    }
  }

  // `sst_dump --command=check` and `--command=scan` of the damaged table:
  // OK only with the intact table's exact contents, else exit 1 naming it.
  void CheckDamagedTableWithTools(const std::string& path,
                                  const Trial& t) const {
    auto intact = ReadEntries(base_.path + "/" + t.table);
    ASSERT_TRUE(intact.ok()) << intact.status();
    auto entries = ReadEntries(path);
    if (entries.ok()) {
      ASSERT_EQ(*intact, *entries) << "a damaged table reads as other data";
    } else {
      ExpectDamageReport(entries.status(), t, "Table read");
    }
    if (sst_dump_.empty()) return;
    test::ToolResult check = test::RunTool(
        sst_dump_, {"--file=" + path, "--command=check"}, scratch_);
    ASSERT_NE(-1, check.exit_code) << "sst_dump check crashed";
    if (check.exit_code != 0) tally_.sst_check_failed++;
    if (check.exit_code == 0) {
      ASSERT_TRUE(entries.ok())
          << "sst_dump check passes a table the reader rejects: "
          << entries.status();
    } else {
      ASSERT_EQ(1, check.exit_code) << check.err;
      ASSERT_NE(std::string::npos, check.err.find(path)) << check.err;
    }
    test::ToolResult scan = test::RunTool(
        sst_dump_, {"--file=" + path, "--command=scan"}, scratch_);
    ASSERT_NE(-1, scan.exit_code) << "sst_dump scan crashed";
    if (scan.exit_code != 0) tally_.sst_scan_failed++;
    // The intact scan names the base path nowhere: its lines are entries.
    const std::vector<std::string> want =
        SplitLines(base_.sst_scan.at(t.table));
    if (scan.exit_code == 0) {
      ASSERT_EQ(want, SplitLines(scan.out)) << "sst_dump scan printed wrong";
    } else {
      ASSERT_EQ(1, scan.exit_code) << scan.err;
      ASSERT_TRUE(IsPrefix(SplitLines(scan.out), want))
          << "sst_dump scan printed a wrong entry before failing";
      ASSERT_NE(std::string::npos, scan.err.find(path)) << scan.err;
    }
  }

  // The in-process checks on a damaged copy: reads, then a full
  // compaction, then the files it left, then reads after reopening.
  void CheckEngine(const Trial& t, const std::string& dir,
                   const std::string& damaged_bytes) const {
    auto db = DB::Open(SweepOptions(compression_), dir);
    if (!db.ok()) {
      ExpectDamageReport(db.status(), t, "DB::Open");
      return;
    }
    ASSERT_NO_FATAL_FAILURE(CheckReads(db->get(), t, /*clean=*/false));
    const absl::Status s = (*db)->CompactRange(nullptr, nullptr);
    if (s.ok()) {
      ASSERT_NO_FATAL_FAILURE(CheckReads(db->get(), t, /*clean=*/true));
    } else {
      ExpectDamageReport(s, t, "CompactRange");
      tally_.compaction_failed++;
      ASSERT_NO_FATAL_FAILURE(CheckReads(db->get(), t, /*clean=*/false));
    }
    // A failed compaction stops the background work (the error is
    // sticky); a successful one may be followed by more (seek-triggered).
    test::WaitIdle(db->get()).IgnoreError();
    ASSERT_NO_FATAL_FAILURE(
        CheckTablesLeft(db->get(), dir, t, damaged_bytes, /*run_tools=*/true));
    db->reset();
    auto reopened = DB::Open(SweepOptions(compression_), dir);
    if (!reopened.ok()) {
      ExpectDamageReport(reopened.status(), t, "DB::Open after compaction");
      return;
    }
    ASSERT_NO_FATAL_FAILURE(CheckReads(reopened->get(), t, s.ok()));
    test::WaitIdle(reopened->get()).IgnoreError();
    ASSERT_NO_FATAL_FAILURE(CheckTablesLeft(reopened->get(), dir, t,
                                            damaged_bytes,
                                            /*run_tools=*/false));
  }

  // ldb on a damaged copy: exit 0 with exactly the right output, or exit 1
  // naming the damaged file after printing a prefix of it.
  void CheckLdb(const Trial& t, const std::string& dir) const {
    if (ldb_.empty()) return;
    test::ToolResult scan =
        test::RunTool(ldb_, {"--db=" + dir, "scan"}, scratch_);
    ASSERT_NE(-1, scan.exit_code) << "ldb scan crashed";
    if (scan.exit_code != 0) tally_.ldb_scan_failed++;
    const std::vector<std::string> want = SplitLines(base_.ldb_scan);
    if (scan.exit_code == 0) {
      ASSERT_EQ(want, SplitLines(scan.out)) << "ldb scan printed wrong";
    } else {
      ASSERT_EQ(1, scan.exit_code) << scan.err;
      ASSERT_TRUE(IsPrefix(SplitLines(scan.out), want))
          << "ldb scan printed a wrong entry before failing";
      ASSERT_NE(std::string::npos, scan.err.find(t.table)) << scan.err;
    }
    test::ToolResult get =
        test::RunTool(ldb_, {"--db=" + dir, "get", t.get_key}, scratch_);
    ASSERT_NE(-1, get.exit_code) << "ldb get crashed";
    if (get.exit_code != 0) tally_.ldb_get_failed++;
    const std::optional<std::string>& value = base_.model.at(t.get_key);
    if (get.exit_code == 0) {
      ASSERT_TRUE(value.has_value()) << "ldb get of a deleted key: " << get.out;
      ASSERT_EQ(*value + "\n", get.out) << "ldb get printed a wrong value";
    } else {
      ASSERT_EQ(1, get.exit_code) << get.err;
      ASSERT_EQ(std::string::npos, get.err.find("not found"))
          << "ldb get said a present key is absent: " << get.err;
      ASSERT_NE(std::string::npos, get.err.find(t.table)) << get.err;
    }
  }

  void Run(const Trial& t, const std::string& work) {
    scratch_ = work;
    tally_.trials++;
    reported_ = false;
    const std::string engine_copy = work + "/engine";
    const std::string damaged = MakeDamagedCopy(t, engine_copy);
    ASSERT_NO_FATAL_FAILURE(CheckEngine(t, engine_copy, damaged));
    if (reported_) tally_.reported++;
    const std::string tools_copy = work + "/tools";
    MakeDamagedCopy(t, tools_copy);
    ASSERT_NO_FATAL_FAILURE(CheckLdb(t, tools_copy));
    ASSERT_NO_FATAL_FAILURE(
        CheckDamagedTableWithTools(tools_copy + "/" + t.table, t));
  }

  const Tally& tally() const { return tally_; }

  void set_tools(std::string ldb, std::string sst_dump) {
    ldb_ = std::move(ldb);
    sst_dump_ = std::move(sst_dump);
  }

 private:
  const BaseDb& base_;
  const CompressionType compression_;
  std::string ldb_;
  std::string sst_dump_;
  std::string scratch_;
  mutable Tally tally_;
  mutable bool reported_ = false;
};

// Under a sanitizer every trial starts four sanitized tool processes,
// each mapping its shadow memory: half the trials keep the suite's time
// near the plain build's.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SIFTDB_SWEEP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SIFTDB_SWEEP_SANITIZED 1
#endif
#endif
#ifdef SIFTDB_SWEEP_SANITIZED
constexpr int kDefaultTrials = 4;
#else
constexpr int kDefaultTrials = 8;
#endif

// Trials per (compression, part); SIFTDB_SWEEP_TRIALS overrides, and
// SIFTDB_SWEEP_SEED moves the seeds (to explore beyond the fixed ones).
int TrialsPerPart() {
  const char* env = std::getenv("SIFTDB_SWEEP_TRIALS");
  return env != nullptr ? std::max(1, std::atoi(env)) : kDefaultTrials;
}

uint64_t SeedBase() {
  const char* env = std::getenv("SIFTDB_SWEEP_SEED");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 20261125;
}

// Runs `trials` on `base` (stopping at the first failure) and prints what
// they saw.
void RunTrials(const BaseDb& base, CompressionType compression,
               const std::vector<Trial>& trials) {
  Sweeper sweeper(base, compression);
  sweeper.set_tools(test::FindTool("tools/ldb"),
                    test::FindTool("tools/sst_dump"));
  test::TempDir work;
  for (const Trial& t : trials) {
    SCOPED_TRACE(t.Describe());
    sweeper.Run(t, work.path());
    if (::testing::Test::HasFailure()) break;  // one replayable failure
  }
  ::testing::Test::RecordProperty("outcomes", sweeper.tally().ToString());
  std::printf("%s\n", sweeper.tally().ToString().c_str());
}

class CorruptionSweepTest
    : public ::testing::TestWithParam<std::tuple<CompressionType, Part>> {};

TEST_P(CorruptionSweepTest, DamageIsReportedNeverServed) {
  const auto [compression, part] = GetParam();
  const BaseDb* base = Base(compression);
  ASSERT_NE(nullptr, base);
  Sweeper sweeper(*base, compression);
  std::vector<Trial> trials;
  for (int i = 0; i < TrialsPerPart(); i++) {
    const uint64_t seed = SeedBase() + 1000 * static_cast<uint64_t>(part) +
                          100 * static_cast<uint64_t>(compression) + i;
    trials.push_back(sweeper.MakeTrial(part, seed, i));
  }
  RunTrials(*base, compression, trials);
}

// The footer is the one part of a table no CRC covers: a footer naming
// other intact blocks as its index or metaindex (a data block, the filter,
// the properties, each other) is still reported, never read as an index.
class FooterRedirectTest : public ::testing::TestWithParam<CompressionType> {};

TEST_P(FooterRedirectTest, AFooterNamingTheWrongBlocksIsReported) {
  const CompressionType compression = GetParam();
  const BaseDb* base = Base(compression);
  ASSERT_NE(nullptr, base);
  Sweeper sweeper(*base, compression);
  // The level-1 table (newer versions over level 2) for raw tables, the
  // level-2 one for Snappy.
  const std::string& table =
      base->tables[compression == kNoCompression ? 1 : 0];
  const auto& parts = base->layouts.at(table).parts;
  const Region meta = parts.at(Part::kMetaindex)[0];
  const Region index = parts.at(Part::kIndex)[0];
  const Region props = parts.at(Part::kProperties)[0];
  const Region filter = parts.at(Part::kFilter)[0];
  const Region first_data = parts.at(Part::kData).front();
  const Region last_data = parts.at(Part::kData).back();
  const std::vector<Trial> trials = {
      sweeper.MakeFooterTrial(table, meta, first_data,
                              "index -> first data block"),
      sweeper.MakeFooterTrial(table, meta, last_data,
                              "index -> last data block"),
      sweeper.MakeFooterTrial(table, meta, props, "index -> properties"),
      sweeper.MakeFooterTrial(table, meta, meta, "index -> metaindex"),
      sweeper.MakeFooterTrial(table, meta, filter, "index -> filter"),
      sweeper.MakeFooterTrial(table, index, index, "metaindex -> index"),
      sweeper.MakeFooterTrial(table, props, index, "metaindex -> properties"),
      sweeper.MakeFooterTrial(table, first_data, index,
                              "metaindex -> first data block"),
      sweeper.MakeFooterTrial(table, index, meta, "swapped"),
  };
  RunTrials(*base, compression, trials);
}

INSTANTIATE_TEST_SUITE_P(Compression, FooterRedirectTest,
                         ::testing::Values(kNoCompression, kSnappyCompression),
                         [](const auto& info) {
                           return std::string(
                               info.param == kNoCompression ? "Raw" : "Snappy");
                         });

std::string ParamName(
    const ::testing::TestParamInfo<std::tuple<CompressionType, Part>>& info) {
  const auto [compression, part] = info.param;
  return absl::StrFormat("%s_%s",
                         compression == kNoCompression ? "Raw" : "Snappy",
                         PartName(part));
}

INSTANTIATE_TEST_SUITE_P(
    Parts, CorruptionSweepTest,
    ::testing::Combine(::testing::Values(kNoCompression, kSnappyCompression),
                       ::testing::Values(Part::kData, Part::kFilter,
                                         Part::kIndex, Part::kProperties,
                                         Part::kMetaindex, Part::kFooter)),
    ParamName);

}  // namespace corruption_sweep_test
}  // namespace siftdb::sweep
