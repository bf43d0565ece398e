// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The workloads added for LevelDB 1.23's remaining benchmarks (seekordered,
// open, crc32c, snappycomp, snappyuncomp) and for RocksDB's that siftdb can
// run (fillseqdeterministic, readrandomwriterandom, updaterandom,
// newiterator, flush). docs/db_bench.md says how each maps.

#include <snappy.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "bench/db_bench/runner.h"
#include "util/crc32c.h"

namespace siftdb::bench {

// One cursor, seeking to keys that grow by a random step under 100 (and wrap
// at num), as LevelDB's.
void Runner::SeekOrdered(ThreadState* t) {
  std::unique_ptr<BenchCursor> cursor = engine_->NewCursor();
  uint64_t k = 0;
  for (int64_t i = 0; More(i, plan_.reads); i++) {
    k = plan_.num > 0 ? (k + Pick(&t->rand, 100)) % plan_.num : 0;
    std::string_view key = t->keys.Key(k);
    cursor->Seek(key);
    if (cursor->Valid() && cursor->key() == key) t->found++;
    t->attempted++;
    t->stats.FinishedOps();
  }
  t->status = cursor->status();
}

// LevelDB's open: closes and reopens the database num / 10000 times (at
// least once); each reopen is one operation.
void Runner::OpenBench(ThreadState* t) {
  for (int64_t i = 0; i < plan_.num; i++) {
    engine_->Close();
    absl::Status s = engine_->Open(config_.engine, db_path_);
    if (!s.ok()) {
      open_ = false;
      t->status = s;
      return;
    }
    t->stats.FinishedOps();
  }
}

// CRC32C of a 4 KiB buffer until 500 MiB are done (LevelDB's crc32c), with
// siftdb's implementation.
void Runner::Crc32c(ThreadState* t) {
  constexpr size_t kSize = 4096;
  const std::string data(kSize, 'x');
  uint32_t crc = 0;
  int64_t bytes = 0;
  while (bytes < int64_t{500} << 20) {
    crc = crc32c::Extend(crc, data.data(), data.size());
    bytes += kSize;
    t->stats.FinishedOps();
  }
  t->stats.AddBytes(bytes);
  t->found = crc;  // keeps the loop's result alive
}

// Snappy of one block of values (--block_size bytes compressing to about
// --compression_ratio), 1 GiB in all, as LevelDB's snappycomp.
void Runner::SnappyCompress(ThreadState* t) {
  const size_t size = config_.engine.block_size;
  ValueGenerator values(config_.compression_ratio, size, t->rand.Next64());
  const std::string input(values.Generate(size));
  std::string compressed;
  int64_t bytes = 0, produced = 0;
  while (bytes < int64_t{1} << 30) {
    produced += static_cast<int64_t>(
        snappy::Compress(input.data(), input.size(), &compressed));
    bytes += static_cast<int64_t>(size);
    t->stats.FinishedOps();
  }
  t->stats.AddBytes(bytes);
  t->message = absl::StrFormat(
      "(output: %.1f%%)",
      100.0 * static_cast<double>(produced) / static_cast<double>(bytes));
}

void Runner::SnappyUncompress(ThreadState* t) {
  const size_t size = config_.engine.block_size;
  ValueGenerator values(config_.compression_ratio, size, t->rand.Next64());
  const std::string input(values.Generate(size));
  std::string compressed;
  snappy::Compress(input.data(), input.size(), &compressed);
  std::string output(size, '\0');
  int64_t bytes = 0;
  while (bytes < int64_t{1} << 30) {
    if (!snappy::RawUncompress(compressed.data(), compressed.size(),
                               output.data())) {
      t->status = absl::DataLossError("snappy failed to uncompress");
      return;
    }
    bytes += static_cast<int64_t>(size);
    t->stats.FinishedOps();
  }
  t->stats.AddBytes(bytes);
}

// RocksDB's fillseqdeterministic builds a chosen LSM shape by hand; siftdb
// cannot place tables by level, so this writes the keys in order and then
// compacts everything once: the same input always gives the same shape.
// The time includes the compaction.
void Runner::FillSeqDeterministic(ThreadState* t) {
  WriteSeq(t);
  if (!t->status.ok()) return;
  t->status = engine_->CompactAll();
  t->message = "(fillseq, then one full compaction)";
}

// RocksDB's readrandomwriterandom: each operation reads a random key with
// probability --readwritepercent, else overwrites one.
void Runner::ReadRandomWriteRandom(ThreadState* t) {
  ValueGenerator values(config_.compression_ratio,
                        static_cast<size_t>(plan_.value_size),
                        t->rand.Next64());
  const size_t value_size = static_cast<size_t>(plan_.value_size);
  std::string value;
  for (int64_t i = 0; More(i, plan_.reads); i++) {
    std::string_view key = t->keys.Key(Pick(&t->rand, plan_.num));
    if (static_cast<int>(Pick(&t->rand, 100)) < config_.readwritepercent) {
      absl::StatusOr<bool> found = engine_->Get(key, &value);
      if (!found.ok()) {
        t->status = found.status();
        return;
      }
      if (*found) t->found++;
      t->attempted++;
    } else {
      PaceWrite(key.size() + value_size);
      absl::Status s =
          engine_->Put(plan_.sync, key, values.Generate(value_size));
      if (!s.ok()) {
        t->status = s;
        return;
      }
      t->writes++;
    }
    t->stats.FinishedOps();
  }
}

// RocksDB's updaterandom: read a random key, then write a new value for it
// (whether or not it was found); one operation each.
void Runner::UpdateRandom(ThreadState* t) {
  ValueGenerator values(config_.compression_ratio,
                        static_cast<size_t>(plan_.value_size),
                        t->rand.Next64());
  const size_t value_size = static_cast<size_t>(plan_.value_size);
  std::string value;
  for (int64_t i = 0; More(i, plan_.reads); i++) {
    std::string_view key = t->keys.Key(Pick(&t->rand, plan_.num));
    absl::StatusOr<bool> found = engine_->Get(key, &value);
    if (!found.ok()) {
      t->status = found.status();
      return;
    }
    if (*found) t->found++;
    t->attempted++;
    PaceWrite(key.size() + value_size);
    absl::Status s = engine_->Put(plan_.sync, key, values.Generate(value_size));
    if (!s.ok()) {
      t->status = s;
      return;
    }
    t->writes++;
    t->stats.AddBytes(static_cast<int64_t>(key.size() + value_size));
    t->stats.FinishedOps();
  }
}

// RocksDB's multireadrandom: random keys read --batch_size at a time
// through MultiGet; one operation per key, as RocksDB counts them.
void Runner::MultiReadRandom(ThreadState* t) {
  const int64_t batch = std::max<int64_t>(1, plan_.batch);
  std::vector<std::string> keys;
  std::vector<std::string_view> views;
  std::vector<std::string> values;
  std::vector<bool> found;
  // The key strings are written over batch after batch, as RocksDB's
  // db_bench reuses its key buffers: a fresh 16-byte string per key would
  // put a heap allocation in every batched read that a loop of Gets, with
  // its one reused key, does not pay.
  keys.resize(static_cast<size_t>(batch));
  for (int64_t i = 0; More(i, plan_.reads); i += batch) {
    for (std::string& key : keys) {
      key.assign(t->keys.Key(Pick(&t->rand, plan_.num)));
    }
    views.assign(keys.begin(), keys.end());
    if (absl::Status s = engine_->MultiGet(views, &values, &found); !s.ok()) {
      t->status = s;
      return;
    }
    for (size_t j = 0; j < keys.size(); j++) {
      if (found[j]) {
        t->found++;
        t->stats.AddBytes(
            static_cast<int64_t>(keys[j].size() + values[j].size()));
      }
      t->attempted++;
    }
    t->stats.FinishedOps(batch);
  }
}

// RocksDB's newiterator: the cost of creating and destroying an iterator.
void Runner::NewIteratorBench(ThreadState* t) {
  for (int64_t i = 0; More(i, plan_.reads); i++) {
    std::unique_ptr<BenchCursor> cursor = engine_->NewCursor();
    if (absl::Status s = cursor->status(); !s.ok()) {
      t->status = s;
      return;
    }
    t->stats.FinishedOps();
  }
}

// RocksDB's flush: the MemTable to a table, once.
void Runner::FlushBench(ThreadState* t) {
  t->status = engine_->Flush();
  t->stats.FinishedOps();
}

}  // namespace siftdb::bench
