// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The corruption sweep's base: table layouts, the base DB and the file
// helpers (see corruption_sweep_base.h).

#include "tests/db/corruption_sweep_base.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "table/block.h"
#include "table/format.h"
#include "table/internal_key.h"
#include "tests/db/parallel_compaction_test_util.h"
#include "tests/support/forwarding_env.h"
#include "tests/tools/tool_runner.h"

namespace siftdb::sweep {

// ---------------------------------------------------------------------------
// Table layout: which byte ranges of a table file hold which part.

const char* PartName(Part part) {
  switch (part) {
    case Part::kData:
      return "data";
    case Part::kFilter:
      return "filter";
    case Part::kIndex:
      return "index";
    case Part::kProperties:
      return "properties";
    case Part::kMetaindex:
      return "metaindex";
    case Part::kFooter:
      return "footer";
  }
  return "?";
}

Region WithTrailer(const BlockHandle& h) {
  return {h.offset(), h.offset() + h.size() + kBlockTrailerSize};
}

absl::StatusOr<std::unique_ptr<Table>> OpenTable(const std::string& path) {
  Env* env = Env::Default();
  auto size = env->GetFileSize(path);
  if (!size.ok()) return size.status();
  auto file = env->NewRandomAccessFile(path);
  if (!file.ok()) return file.status();
  return Table::Open(TableOptions(), path, std::move(*file), *size);
}

// Reads the block at `handle` of the (intact) table at `path`.
absl::StatusOr<BlockContents> ReadRawBlock(const std::string& path,
                                           uint64_t file_size,
                                           const BlockHandle& handle) {
  auto file = Env::Default()->NewRandomAccessFile(path);
  if (!file.ok()) return file.status();
  ReadBlockOptions ro;
  ro.verify_checksum = true;
  ro.file_name = path;
  ro.limit = file_size - kFooterSize;
  return ReadBlock(**file, ro, handle);
}

// Parses the intact table at `path` with the table layer's own code: the
// footer gives the metaindex and index handles, the metaindex the filter
// and properties handles, the index every data block's handle.
absl::StatusOr<TableLayout> ReadLayout(const std::string& path) {
  auto table = OpenTable(path);
  if (!table.ok()) return table.status();
  const uint64_t size = (*table)->file_size();
  const Footer& footer = (*table)->footer();
  TableLayout layout;
  layout.parts[Part::kFooter] = {{size - kFooterSize, size}};
  layout.parts[Part::kIndex] = {WithTrailer(footer.index_handle)};
  layout.parts[Part::kMetaindex] = {WithTrailer(footer.metaindex_handle)};

  auto meta = ReadRawBlock(path, size, footer.metaindex_handle);
  if (!meta.ok()) return meta.status();
  auto meta_block =
      Block::Create(std::move(*meta), footer.metaindex_handle.offset(), path);
  if (!meta_block.ok()) return meta_block.status();
  auto it = (*meta_block)->NewIterator(BytewiseComparator(), path);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view value = it->value();
    BlockHandle handle;
    if (!handle.DecodeFrom(&value)) return absl::DataLossError("metaindex");
    if (it->key() == kPropertiesMetaKey) {
      layout.parts[Part::kProperties].push_back(WithTrailer(handle));
    } else if (it->key().starts_with(kFilterMetaPrefix)) {
      layout.parts[Part::kFilter].push_back(WithTrailer(handle));
    }
  }
  if (!it->status().ok()) return it->status();

  auto index = (*table)->NewIndexIterator();
  for (index->SeekToFirst(); index->Valid(); index->Next()) {
    std::string_view value = index->value();
    BlockHandle handle;
    if (!handle.DecodeFrom(&value)) return absl::DataLossError("index");
    layout.parts[Part::kData].push_back(WithTrailer(handle));
    auto contents = ReadRawBlock(path, size, handle);
    if (!contents.ok()) return contents.status();
    layout.data_blocks++;
    if (contents->stored_type == kSnappyCompression) layout.snappy_blocks++;
    std::vector<std::string>& keys = layout.data_block_keys.emplace_back();
    auto block = (*table)->NewDataBlockIterator(ReadOptions(), index->value());
    for (block->SeekToFirst(); block->Valid(); block->Next()) {
      keys.emplace_back(ExtractUserKey(block->key()));
    }
    if (!block->status().ok()) return block->status();
  }
  if (!index->status().ok()) return index->status();
  auto index_contents = ReadRawBlock(path, size, footer.index_handle);
  if (!index_contents.ok()) return index_contents.status();
  if (index_contents->stored_type == kSnappyCompression) {
    layout.snappy_blocks++;
  }
  return layout;
}

// ---------------------------------------------------------------------------
// The in-process DBs run without fsync: no trial simulates a crash, and the
// syncs of each open and compaction would dominate the sweep's time.

class NoSyncFile final : public WritableFile {
 public:
  explicit NoSyncFile(std::unique_ptr<WritableFile> file)
      : file_(std::move(file)) {}
  absl::Status Append(std::string_view data) override {
    return file_->Append(data);
  }
  absl::Status Flush() override { return file_->Flush(); }
  absl::Status Sync() override { return file_->Flush(); }
  absl::Status Close() override { return file_->Close(); }

 private:
  std::unique_ptr<WritableFile> file_;
};

class NoSyncEnv final : public test::ForwardingEnv {
 public:
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    return Wrap(base()->NewWritableFile(f));
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& f) override {
    return Wrap(base()->NewAppendableFile(f));
  }
  absl::Status SyncDir(const std::string&) override { return absl::OkStatus(); }

 private:
  static absl::StatusOr<std::unique_ptr<WritableFile>> Wrap(
      absl::StatusOr<std::unique_ptr<WritableFile>> file) {
    if (!file.ok()) return file.status();
    return std::unique_ptr<WritableFile>(new NoSyncFile(std::move(*file)));
  }
};

Env* NoSync() {
  static NoSyncEnv* const env = new NoSyncEnv;
  return env;
}

// ---------------------------------------------------------------------------
// Files and table contents.

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The table files in `dir`, by name ("000005.sst").
std::vector<std::string> TableNames(const std::string& dir) {
  std::vector<std::string> names;
  auto children = Env::Default()->GetChildren(dir);
  EXPECT_TRUE(children.ok()) << children.status();
  if (!children.ok()) return names;
  for (const std::string& name : *children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == FileType::kTableFile) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Every entry of a table as (internal key, value), read with verified
// checksums; an error when the table cannot be read through.

absl::StatusOr<Entries> ReadEntries(const std::string& path) {
  auto table = OpenTable(path);
  if (!table.ok()) return table.status();
  ReadOptions ro;
  ro.fill_cache = false;
  Entries entries;
  auto it = (*table)->NewIterator(ro);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    entries.emplace_back(std::string(it->key()), std::string(it->value()));
  }
  if (!it->status().ok()) return it->status();
  return entries;
}

std::vector<std::string> SplitLines(const std::string& text) {
  return test::Lines(text);
}

bool IsPrefix(const std::vector<std::string>& prefix,
              const std::vector<std::string>& whole) {
  return prefix.size() <= whole.size() &&
         std::equal(prefix.begin(), prefix.end(), whole.begin());
}

// ---------------------------------------------------------------------------
// The DB every trial damages a copy of.

std::string Key(int i) { return absl::StrFormat("key%06d", i); }

// Compressible (a run of one letter), and different in every generation so
// a shadowed older value is a wrong answer.
std::string Value(int gen, int i) {
  return absl::StrFormat("value-g%d-%06d-", gen, i) +
         std::string(20 + i % 13, static_cast<char>('a' + (i + gen) % 26));
}

Options SweepOptions(CompressionType compression) {
  Options o;
  o.create_if_missing = true;
  o.compression = compression;
  o.block_size = 512;  // many data blocks per table
  o.env = NoSync();
  return o;
}

// ---------------------------------------------------------------------------

// Builds the base DB: three tables on levels 0, 1 and 2, the newer ones
// overwriting and deleting keys of the older ones, so a damaged newer table
// skipped by a read would surface a stale value or a deleted key. The
// deeper levels are reached by moves, not merges: an oldest table compacted
// to level 1, moved on to level 2 by a level-1 target smaller than it, then
// a second table flushed and moved to level 1 by a level-0 trigger of one.
void BuildBase(CompressionType compression, BaseDb* base) {
  base->path = base->dir.Join("base");
  std::unique_ptr<DB> db;
  auto open = [&](const Options& options) {
    db.reset();
    auto opened = DB::Open(options, base->path);
    ASSERT_TRUE(opened.ok()) << opened.status();
    db = std::move(*opened);
  };
  auto put = [&](const std::string& k, const std::string& v) {
    ASSERT_TRUE(db->Put(WriteOptions(), k, v).ok());
    base->model[k] = v;
  };
  auto del = [&](const std::string& k) {
    ASSERT_TRUE(db->Delete(WriteOptions(), k).ok());
    base->model[k] = std::nullopt;
  };
  auto flush = [&] {
    ASSERT_TRUE(static_cast<DBImpl*>(db.get())->FlushMemTable().ok());
    ASSERT_TRUE(test::WaitIdle(db.get()).ok());
  };
  const Options options = SweepOptions(compression);
  ASSERT_NO_FATAL_FAILURE(open(options));
  for (int i = 0; i < kKeys; i++) put(Key(i), Value(1, i));
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());  // to level 1
  {
    auto levels = test::LiveTables(db.get());
    ASSERT_EQ(1u, levels[1].size());
    Options move_down = options;
    move_down.max_bytes_for_level_base = levels[1][0].size - 1;
    ASSERT_NO_FATAL_FAILURE(open(move_down));
    ASSERT_TRUE(test::WaitIdle(db.get()).ok());  // to level 2
  }
  Options move_l0 = options;
  move_l0.level0_file_num_compaction_trigger = 1;
  ASSERT_NO_FATAL_FAILURE(open(move_l0));
  for (int i = 0; i < kKeys; i++) {
    if (i % 3 == 0) put(Key(i), Value(2, i));
    if (i % 5 == 1) del(Key(i));
  }
  ASSERT_NO_FATAL_FAILURE(flush());  // and moved to level 1
  ASSERT_NO_FATAL_FAILURE(open(options));
  for (int i = 0; i < kKeys; i++) {
    if (i % 4 == 2) put(Key(i), Value(3, i));
  }
  for (int i = kKeys; i < kKeys + kLateKeys; i++) put(Key(i), Value(3, i));
  ASSERT_NO_FATAL_FAILURE(flush());
  {
    auto levels = test::LiveTables(db.get());
    for (int level = 0; level < 3; level++) {
      ASSERT_EQ(1u, levels[level].size())
          << "level " << level << ": " << levels[level].size() << " tables";
    }
  }
  db.reset();
  base->absent = {"a", Key(7) + "x", Key(kKeys + kLateKeys), "zzz"};

  base->tables = TableNames(base->path);
  ASSERT_EQ(3u, base->tables.size());
  for (const std::string& name : base->tables) {
    const std::string path = base->path + "/" + name;
    base->bytes[name] = ReadBytes(path);
    auto layout = ReadLayout(path);
    ASSERT_TRUE(layout.ok()) << layout.status();
    // The parts tile the file: a flip anywhere lands in one of them.
    std::vector<Region> all;
    for (const auto& [part, regions] : layout->parts) {
      ASSERT_FALSE(regions.empty()) << PartName(part);
      all.insert(all.end(), regions.begin(), regions.end());
    }
    std::sort(all.begin(), all.end(), [](const Region& a, const Region& b) {
      return a.begin < b.begin;
    });
    uint64_t at = 0;
    for (const Region& r : all) {
      ASSERT_EQ(at, r.begin) << name << ": parts do not tile the file";
      at = r.end;
    }
    ASSERT_EQ(base->bytes[name].size(), at);
    ASSERT_GE(layout->data_blocks, 4) << name;
    if (compression == kSnappyCompression) {
      ASSERT_GT(layout->snappy_blocks, 0) << name << ": nothing compressed";
    } else {
      ASSERT_EQ(0, layout->snappy_blocks) << name;
    }
    base->layouts[name] = std::move(*layout);
    auto entries = ReadEntries(path);
    ASSERT_TRUE(entries.ok()) << entries.status();
    for (const auto& [ikey, value] : *entries) {
      ParsedInternalKey parsed;
      ASSERT_TRUE(ParseInternalKey(ikey, &parsed));
      base->table_keys[name][std::string(parsed.user_key)] =
          parsed.type == kTypeValue ? std::optional<std::string>(value)
                                    : std::nullopt;
      base->original_entries.insert(
          {std::string(parsed.user_key), static_cast<int>(parsed.type), value});
    }
  }
}

// The base DB of each compression setting, with the tools' view of it,
// built once per process and shared by the tests below (nullptr after a
// fatal failure while building it).
BaseDb* Base(CompressionType compression) {
  // Destroyed at exit, which removes the base DBs' directories.
  static std::map<CompressionType, std::unique_ptr<BaseDb>> bases;
  auto it = bases.find(compression);
  if (it != bases.end()) return it->second.get();
  auto base = std::make_unique<BaseDb>();
  BuildBase(compression, base.get());
  if (::testing::Test::HasFatalFailure()) return nullptr;
  const std::string ldb = test::FindTool("tools/ldb");
  const std::string sst_dump = test::FindTool("tools/sst_dump");
  EXPECT_FALSE(ldb.empty() || sst_dump.empty()) << "tools not built";
  if (ldb.empty() || sst_dump.empty()) return nullptr;
  test::ToolResult r =
      test::RunTool(ldb, {"--db=" + base->path, "scan"}, base->dir.path());
  EXPECT_EQ(0, r.exit_code) << r.err;
  if (r.exit_code != 0) return nullptr;
  base->ldb_scan = r.out;
  for (const std::string& name : base->tables) {
    r = test::RunTool(sst_dump,
                      {"--file=" + base->path + "/" + name, "--command=scan"},
                      base->dir.path());
    EXPECT_EQ(0, r.exit_code) << r.err;
    if (r.exit_code != 0) return nullptr;
    base->sst_scan[name] = r.out;
  }
  return (bases[compression] = std::move(base)).get();
}

}  // namespace siftdb::sweep
