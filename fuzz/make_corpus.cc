// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// fuzz_make_corpus OUT_DIR: writes the seed corpora of the fuzz targets,
// OUT_DIR/<target>/<name>, each a small valid encoding made by the real
// writers (so seeds follow the formats as they are, not as remembered).
// The committed fuzz/corpus/ is this program's output; rerun it after a
// format change:  fuzz_make_corpus fuzz/corpus
// (Tables record their creation time in the properties block, so table
// seeds differ in those bytes from run to run; keep the committed ones
// unless the format changed.)
//
// Thread safety: single-threaded program.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "db/version_edit.h"
#include "db/write_batch_internal.h"
#include "filter/filter_format.h"
#include "fuzz/fuzz_util.h"
#include "redis/mirror/redis_mirror_format.h"
#include "siftdb/filter_policy.h"
#include "table/block_builder.h"
#include "table/compression.h"
#include "table/internal_key.h"
#include "table/table_builder.h"
#include "wal/log_writer.h"

namespace siftdb::fuzz {
namespace {

std::filesystem::path g_out;

void Write(const std::string& target, const std::string& name,
           std::string_view bytes) {
  const std::filesystem::path dir = g_out / target;
  std::filesystem::create_directories(dir);
  std::ofstream f(dir / name, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", (dir / name).c_str());
    std::exit(1);
  }
}

std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%06d", i);
  return buf;
}

std::string Log(const std::vector<std::string>& records) {
  StringSink sink;
  log::Writer writer(&sink);
  for (const std::string& r : records) {
    if (!writer.AddRecord(r).ok()) std::abort();
  }
  return sink.contents();
}

void LogReaderSeeds() {
  Write("log_reader", "empty", "");
  Write("log_reader", "one_record", Log({"hello"}));
  Write("log_reader", "empty_record", Log({""}));
  Write("log_reader", "three_records", Log({"a", std::string(300, 'b'), "c"}));
  // A record of more than one 32 KiB block: first/middle/last fragments.
  Write("log_reader", "spans_blocks", Log({"x", std::string(33000, 'y')}));
  std::string torn = Log({"first", "second record"});
  Write("log_reader", "torn_tail", torn.substr(0, torn.size() - 4));
  std::string damaged = Log({"first", "second", "third"});
  damaged[7 + 5 + 7 + 2] ^= 0x40;  // a payload byte of "second"
  Write("log_reader", "bad_checksum", damaged);
  Write("log_reader", "zero_tail", Log({"data"}) + std::string(64, '\0'));
}

std::string Block(const std::vector<std::pair<std::string, std::string>>& kv,
                  int restart_interval) {
  BlockBuilder builder(restart_interval);
  for (const auto& [k, v] : kv) builder.Add(k, v);
  return std::string(builder.Finish());
}

void BlockSeeds() {
  Write("block", "empty", Block({}, 16));
  Write("block", "one", Block({{"k", "v"}}, 16));
  std::vector<std::pair<std::string, std::string>> kv;
  for (int i = 0; i < 40; ++i) kv.emplace_back(Key(i), "value" + Key(i));
  Write("block", "restart16", Block(kv, 16));
  Write("block", "restart1", Block(kv, 1));
  Write("block", "restart3_shared_prefix", Block(kv, 3));
  std::vector<std::pair<std::string, std::string>> internal;
  for (int i = 0; i < 10; ++i) {
    std::string k;
    AppendInternalKey(&k, Key(i), 100 - i, i % 3 ? kTypeValue : kTypeDeletion);
    internal.emplace_back(k, i % 3 ? "v" : "");
  }
  Write("block", "internal_keys", Block(internal, 4));
}

std::string Table(int n, size_t block_size, CompressionType compression,
                  std::shared_ptr<const FilterPolicy> policy) {
  TableOptions options;
  options.block_size = block_size;
  options.compression = compression;
  options.filter_policy = std::move(policy);
  StringSink sink;
  TableBuilder builder(options, &sink);
  for (int i = 0; i < n; ++i) {
    std::string k;
    AppendInternalKey(&k, Key(i), 1000 + i,
                      i % 7 == 6 ? kTypeDeletion : kTypeValue);
    builder.Add(k, i % 7 == 6 ? "" : std::string(20, 'a' + i % 26));
  }
  if (!builder.Finish().ok()) std::abort();
  return sink.contents();
}

void TableSeeds() {
  Write("table", "empty", Table(0, 4096, kNoCompression, nullptr));
  Write("table", "one_block_blocked_filter",
        Table(10, 4096, kNoCompression, NewBloomFilterPolicy(10)));
  Write("table", "many_blocks_snappy",
        Table(60, 256, kSnappyCompression, NewBloomFilterPolicy(10)));
  Write("table", "classic_filter",
        Table(20, 512, kNoCompression, NewClassicBloomFilterPolicy(8)));
  Write("table", "no_filter", Table(20, 300, kNoCompression, nullptr));
  Write("table", "many_blocks_lz4",
        Table(60, 256, kLZ4Compression, NewBloomFilterPolicy(10)));
  Write("table", "many_blocks_zstd",
        Table(60, 256, kZstdCompression, NewBloomFilterPolicy(10)));
}

// A selector byte (the type) and the stored form of a few blocks.
void CompressionSeeds() {
  std::string text;
  for (int i = 0; i < 40; ++i) text += Key(i) + std::string(i % 13, 'x');
  const std::pair<const char*, CompressionType> types[] = {
      {"none", kNoCompression},
      {"snappy", kSnappyCompression},
      {"lz4", kLZ4Compression},
      {"zstd", kZstdCompression}};
  for (const auto& [name, type] : types) {
    std::string stored = text;
    if (type != kNoCompression &&
        !CompressBlock(type, CompressionOptions::kDefaultCompressionLevel, text,
                       &stored)) {
      std::abort();
    }
    Write("compression", name,
          std::string(1, static_cast<char>(type)) + stored);
  }
}

void FilterSeeds() {
  const std::shared_ptr<const FilterPolicy> policies[] = {
      NewBloomFilterPolicy(10), NewClassicBloomFilterPolicy(10),
      NewRibbonFilterPolicy(10)};
  const char* names[] = {"raw_blocked_", "raw_classic_", "raw_ribbon_"};
  for (int p = 0; p < 3; ++p) {
    for (int n : {0, 1, 20, 200}) {
      std::unique_ptr<FilterBitsBuilder> b = policies[p]->NewBuilder();
      for (int i = 0; i < n; ++i) b->AddKey(Key(i));
      std::string filter(1, '\0');  // mode byte: raw filter bytes
      b->Finish(&filter);
      Write("filter", std::string(names[p]) + std::to_string(n), filter);
    }
  }
  // Keys mode: byte 1, then config (mod 3: blocked, classic, Ribbon; div 3
  // picks bits per key), then length-prefixed keys.
  for (int config : {0, 1, 2, 6, 14}) {
    std::string input = "\x01";
    input.push_back(static_cast<char>(config));
    for (int i = 0; i < 30; ++i) {
      const std::string k = Key(i);
      input.push_back(static_cast<char>(k.size()));
      input += k;
    }
    Write("filter", "keys_config" + std::to_string(config), input);
  }
}

void VersionEditSeeds() {
  VersionEdit empty;
  std::string bytes;
  empty.EncodeTo(&bytes);
  Write("version_edit", "empty", bytes);

  VersionEdit full;
  full.SetComparatorName("siftdb.BytewiseComparator");
  full.SetLogNumber(12);
  full.SetPrevLogNumber(0);
  full.SetNextFile(20);
  full.SetLastSequence(123456);
  std::string a, b;
  AppendInternalKey(&a, "apple", 5, kTypeValue);
  AppendInternalKey(&b, "pear", 9, kTypeDeletion);
  full.SetCompactPointer(1, b);
  full.AddFile(0, 13, 4096, a, b);
  full.AddFile(2, 14, 1 << 20, a, b);
  full.RemoveFile(1, 7);
  bytes.clear();
  full.EncodeTo(&bytes);
  Write("version_edit", "all_fields", bytes);

  VersionEdit flush;
  flush.SetLogNumber(30);
  flush.SetNextFile(32);
  flush.SetLastSequence(999);
  flush.AddFile(0, 31, 2000, a, b);
  bytes.clear();
  flush.EncodeTo(&bytes);
  Write("version_edit", "flush", bytes);
}

void WriteBatchSeeds() {
  WriteBatch empty;
  Write("write_batch", "empty",
        std::string(WriteBatchInternal::Contents(&empty)));
  WriteBatch batch;
  batch.Put("foo", "bar");
  batch.Delete("box");
  batch.Put("baz", "boo");
  batch.Put("foo", "second");
  WriteBatchInternal::SetSequence(&batch, 100);
  Write("write_batch", "mixed",
        std::string(WriteBatchInternal::Contents(&batch)));
  WriteBatch big;
  for (int i = 0; i < 50; ++i) big.Put(Key(i), std::string(i, 'v'));
  WriteBatchInternal::SetSequence(&big, 1);
  Write("write_batch", "fifty_puts",
        std::string(WriteBatchInternal::Contents(&big)));
  WriteBatch deletes;
  deletes.Delete("");
  deletes.Delete("gone");
  Write("write_batch", "deletes",
        std::string(WriteBatchInternal::Contents(&deletes)));
}

std::string ManifestText(const MirrorManifest& m) {
  std::string text;
  for (const auto& [field, value] : EncodeManifest(m)) {
    text += field + "\t" + value + "\n";
  }
  return text;
}

void RedisMirrorSeeds() {
  MirrorManifest m;
  m.generation = "3f2a9c";
  m.version = 7;
  m.mode = "sync";
  m.comparator = "siftdb.BytewiseComparator";
  m.writer = "1764000000000-0123456789abcdef";
  m.lease_ttl_ms = 10000;
  m.grace_ms = 10000;
  m.complete_seq = 1234;
  m.complete_ms = 1700000000000;
  Write("redis_mirror", "header_only", ManifestText(m));
  MirrorImmutableEntry a;
  a.id = 12;
  a.level = 0;
  a.size = 1032;
  a.crc32c = 0xdeadbeef;
  a.policy = "siftdb.BlockedBloom";
  a.smallest = "apple";
  a.largest = "pear";
  MirrorImmutableEntry b = a;
  b.id = 15;
  b.level = 3;
  b.policy = "siftdb.ClassicBloom";
  b.smallest = "";
  b.largest = std::string("\x00\xff", 2);
  m.immutables = {a, b};
  MirrorLiveEntry live;
  live.id = 16;
  live.subfilters = {{32, 7}, {64, 8}};
  m.lives = {live};
  Write("redis_mirror", "tables_and_live", ManifestText(m));
  // Entry extensions (sstx:/memx:): prefixes of an extractor, prefix-only.
  MirrorManifest with_prefixes = m;
  with_prefixes.immutables[0].prefix_extractor = "siftdb.FixedPrefix.4";
  with_prefixes.immutables[1].whole_keys = false;
  with_prefixes.immutables[1].policy = "prefixonly.siftdb.ClassicBloom";
  with_prefixes.immutables[1].prefix_extractor = "siftdb.CappedPrefix.2";
  with_prefixes.lives[0].prefix_extractor = "siftdb.FixedPrefix.4";
  Write("redis_mirror", "entry_extensions", ManifestText(with_prefixes));
  m.mode = "async";
  m.immutables.clear();
  Write("redis_mirror", "async_live_only", ManifestText(m));
  // The shape of the issue-#15 manifest: many entries of the most
  // sub-filters, the most blocks and probes (the reader's caps bound it).
  MirrorManifest hostile = m;
  hostile.lives.clear();
  for (uint64_t id = 1; id <= 8; id++) {
    MirrorLiveEntry e;
    e.id = id;
    e.subfilters.assign(64, MirrorSubFilter{0xffffffffu, kMaxProbes});
    hostile.lives.push_back(e);
  }
  Write("redis_mirror", "hostile_live", ManifestText(hostile));
  // Filter bytes as the reader fetches them (the whole input is also
  // parsed as a filter).
  const std::shared_ptr<const FilterPolicy> policy = NewBloomFilterPolicy(10);
  std::unique_ptr<FilterBitsBuilder> builder = policy->NewBuilder();
  for (int i = 0; i < 50; ++i) builder->AddKey(Key(i));
  std::string filter;
  builder->Finish(&filter);
  Write("redis_mirror", "blocked_filter_bytes", filter);
  std::unique_ptr<FilterBitsBuilder> ribbon =
      NewRibbonFilterPolicy(10)->NewBuilder();
  for (int i = 0; i < 50; ++i) ribbon->AddKey(Key(i));
  std::string ribbon_filter;
  ribbon->Finish(&ribbon_filter);
  Write("redis_mirror", "ribbon_filter_bytes", ribbon_filter);
  Write("redis_mirror", "live_subfilter_bytes",
        EmptySubFilter(MirrorSubFilter{4, 6}));
}

}  // namespace
}  // namespace siftdb::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  siftdb::fuzz::g_out = argv[1];
  siftdb::fuzz::LogReaderSeeds();
  siftdb::fuzz::BlockSeeds();
  siftdb::fuzz::TableSeeds();
  siftdb::fuzz::CompressionSeeds();
  siftdb::fuzz::FilterSeeds();
  siftdb::fuzz::VersionEditSeeds();
  siftdb::fuzz::WriteBatchSeeds();
  siftdb::fuzz::RedisMirrorSeeds();
  return 0;
}
