// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The workloads of db_bench, one per LevelDB benchmark, each run by every
// worker thread (so --threads=4 fillseq writes the sequence four times, as
// LevelDB's does). Semantics follow LevelDB's db_bench: random keys are
// drawn uniformly from [0, num) with repeats, so after fillrandom about
// 1 - 1/e of the keys exist.

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/db_bench/runner.h"

namespace siftdb::bench {

// Uniform in [0, range); 0 for an empty range.
uint64_t Pick(Random* rand, int64_t range) {
  if (range <= 0) return 0;
  if (range <= std::numeric_limits<uint32_t>::max()) {
    return rand->Uniform(static_cast<uint32_t>(range));
  }
  return rand->Next64() % static_cast<uint64_t>(range);
}

void Runner::WriteSeq(ThreadState* t) { DoWrite(t, KeyOrder::kSeq); }
void Runner::WriteRandom(ThreadState* t) { DoWrite(t, KeyOrder::kRandom); }
// RocksDB's filluniquerandom: every key of [0, num) once, in random order.
void Runner::WriteUniqueRandom(ThreadState* t) {
  DoWrite(t, KeyOrder::kUnique);
}

// Writes plan_.num entries (or until --duration's deadline), plan_.batch of
// them per write; each entry counts as one operation, as in LevelDB.
void Runner::DoWrite(ThreadState* t, KeyOrder order) {
  ValueGenerator values(config_.compression_ratio,
                        static_cast<size_t>(plan_.value_size),
                        t->rand.Next64());
  std::vector<uint64_t> order_of;  // kUnique: a shuffled [0, num)
  if (order == KeyOrder::kUnique && plan_.num > 0) {
    order_of.resize(static_cast<size_t>(plan_.num));
    for (size_t i = 0; i < order_of.size(); i++) order_of[i] = i;
    for (size_t i = order_of.size() - 1; i > 0; i--) {
      std::swap(order_of[i], order_of[Pick(&t->rand, i + 1)]);
    }
  }
  const auto key_number = [&](int64_t i) -> uint64_t {
    switch (order) {
      case KeyOrder::kSeq:
        return static_cast<uint64_t>(i);
      case KeyOrder::kUnique:
        return order_of[static_cast<size_t>(i) % order_of.size()];
      case KeyOrder::kRandom:
        break;
    }
    return Pick(&t->rand, plan_.num);
  };
  const size_t value_size = static_cast<size_t>(plan_.value_size);
  std::vector<std::string> keys(static_cast<size_t>(plan_.batch));
  std::vector<BatchEntry> entries;
  t->stats.Start();  // the value pool is not part of the measurement
  for (int64_t i = 0; More(i, plan_.num); i += plan_.batch) {
    absl::Status s;
    size_t bytes = 0;
    if (plan_.batch == 1) {
      std::string_view key = t->keys.Key(key_number(i));
      bytes = key.size() + value_size;
      PaceWrite(bytes);
      s = engine_->Put(plan_.sync, key, values.Generate(value_size));
    } else {
      entries.clear();
      for (size_t j = 0; j < keys.size(); j++) {
        keys[j] = t->keys.Key(key_number(i + static_cast<int64_t>(j)));
        bytes += keys[j].size() + value_size;
        PaceWrite(keys[j].size() + value_size);
        entries.push_back({keys[j], values.Generate(value_size)});
      }
      s = engine_->WriteEntries(plan_.sync, entries);
    }
    if (!s.ok()) {
      t->status = s;
      return;
    }
    t->stats.AddBytes(static_cast<int64_t>(bytes));
    t->stats.FinishedOps(plan_.batch);
  }
}

void Runner::ReadRandom(ThreadState* t) {
  ReadKeys(t, plan_.num, /*missing=*/false);
}

// Keys "k." that sort between stored keys: the index cannot rule them out,
// only a filter can.
void Runner::ReadMissing(ThreadState* t) {
  ReadKeys(t, plan_.num, /*missing=*/true);
}

// Reads within the first 1% of the key space.
void Runner::ReadHot(ThreadState* t) {
  ReadKeys(t, (plan_.num + 99) / 100, /*missing=*/false);
}

void Runner::ReadKeys(ThreadState* t, int64_t range, bool missing) {
  std::string value;
  for (int64_t i = 0; More(i, plan_.reads); i++) {
    const uint64_t k = Pick(&t->rand, range);
    std::string_view key = missing ? t->keys.MissingKey(k) : t->keys.Key(k);
    absl::StatusOr<bool> found = engine_->Get(key, &value);
    if (!found.ok()) {
      t->status = found.status();
      return;
    }
    if (*found) {
      t->found++;
      // Bytes read, as RocksDB's readrandom counts them (LevelDB's prints
      // no MB/s for reads); benchmark.sh reads the MB/s field.
      t->stats.AddBytes(static_cast<int64_t>(key.size() + value.size()));
    }
    t->attempted++;
    t->stats.FinishedOps();
  }
}

void Runner::ReadSequential(ThreadState* t) {
  std::unique_ptr<BenchCursor> cursor = engine_->NewCursor();
  int64_t i = 0;
  for (cursor->SeekToFirst(); i < plan_.reads && cursor->Valid();
       cursor->Next()) {
    t->stats.AddBytes(
        static_cast<int64_t>(cursor->key().size() + cursor->value().size()));
    t->stats.FinishedOps();
    i++;
  }
  t->status = cursor->status();
}

void Runner::ReadReverse(ThreadState* t) {
  std::unique_ptr<BenchCursor> cursor = engine_->NewCursor();
  int64_t i = 0;
  for (cursor->SeekToLast(); i < plan_.reads && cursor->Valid();
       cursor->Prev()) {
    t->stats.AddBytes(
        static_cast<int64_t>(cursor->key().size() + cursor->value().size()));
    t->stats.FinishedOps();
    i++;
  }
  t->status = cursor->status();
}

// Like LevelDB's: a new iterator for every seek, so the cost includes
// creating it. With key groups (--keys_per_prefix): prefix seeks to the
// start of a random group, --absent_prefix_percent of them (half by
// default) to absent (odd) groups, the rest to present (even) ones; a seek
// finds when it lands on a key of its group.
void Runner::SeekRandom(ThreadState* t) {
  if (config_.key_groups > 0) {
    SeekRandomPrefixes(t);
    return;
  }
  for (int64_t i = 0; More(i, plan_.reads); i++) {
    std::unique_ptr<BenchCursor> cursor = engine_->NewCursor();
    std::string_view key = t->keys.Key(Pick(&t->rand, plan_.num));
    cursor->Seek(key);
    if (cursor->Valid() && cursor->key() == key) t->found++;
    t->attempted++;
    if (absl::Status s = cursor->status(); !s.ok()) {
      t->status = s;
      return;
    }
    t->stats.FinishedOps();
  }
}

void Runner::SeekRandomPrefixes(ThreadState* t) {
  std::string prefix;
  for (int64_t i = 0; More(i, plan_.reads); i++) {
    std::unique_ptr<BenchCursor> cursor = engine_->NewCursor();
    const uint64_t group =
        Pick(&t->rand, static_cast<int64_t>(config_.key_groups));
    const bool present = static_cast<int>(t->rand.Next64() % 100) >=
                         config_.absent_prefix_percent;
    prefix.assign(t->keys.GroupPrefix(2 * group + (present ? 0 : 1)));
    cursor->Seek(prefix);
    if (cursor->Valid() && cursor->key().starts_with(prefix)) t->found++;
    t->attempted++;
    if (absl::Status s = cursor->status(); !s.ok()) {
      t->status = s;
      return;
    }
    t->stats.FinishedOps();
  }
}

void Runner::DeleteSeq(ThreadState* t) { DoDelete(t, /*seq=*/true); }
void Runner::DeleteRandom(ThreadState* t) { DoDelete(t, /*seq=*/false); }

void Runner::DoDelete(ThreadState* t, bool seq) {
  for (int64_t i = 0; More(i, plan_.num); i++) {
    const uint64_t k =
        seq ? static_cast<uint64_t>(i) : Pick(&t->rand, plan_.num);
    std::string_view key = t->keys.Key(k);
    PaceWrite(key.size());
    absl::Status s = engine_->Delete(plan_.sync, key);
    if (!s.ok()) {
      t->status = s;
      return;
    }
    t->stats.FinishedOps();
  }
}

// Threads 0..threads-1 read random keys; one more thread overwrites random
// keys until every reader is done. Only the readers are measured.
void Runner::ReadWhileWriting(ThreadState* t) {
  if (t->tid < config_.threads) {
    ReadRandom(t);
    readers_done_.fetch_add(1);
    return;
  }
  ValueGenerator values(config_.compression_ratio,
                        static_cast<size_t>(plan_.value_size),
                        t->rand.Next64());
  const size_t value_size = static_cast<size_t>(plan_.value_size);
  while (readers_done_.load() < config_.threads) {
    std::string_view key = t->keys.Key(Pick(&t->rand, plan_.num));
    PaceWrite(key.size() + value_size);
    absl::Status s = engine_->Put(false, key, values.Generate(value_size));
    if (!s.ok()) {
      t->status = s;
      return;
    }
    t->writes++;
  }
}

void Runner::Compact(ThreadState* t) {
  t->status = engine_->CompactAll();
  t->stats.FinishedOps();
}

}  // namespace siftdb::bench
