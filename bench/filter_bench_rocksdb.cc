// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "bench/filter_bench_rocksdb.h"

#include "absl/strings/str_format.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/slice.h"
#include "rocksdb/table.h"
#include "rocksdb/version.h"
#include "table/block_based/filter_policy_internal.h"  // RocksDB's

namespace siftdb::bench {

struct RocksDBFilter::Rep {
  rocksdb::BlockBasedTableOptions table_options;
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
  std::unique_ptr<rocksdb::FilterBitsBuilder> builder;
  std::unique_ptr<const char[]> bytes;
  rocksdb::Slice contents;
  std::unique_ptr<rocksdb::FilterBitsReader> reader;
};

RocksDBFilter::RocksDBFilter(bool ribbon, double bits_per_key)
    : rep_(std::make_unique<Rep>()) {
  rep_->policy.reset(ribbon
                         ? rocksdb::NewRibbonFilterPolicy(bits_per_key)
                         : rocksdb::NewBloomFilterPolicy(bits_per_key, false));
  rep_->table_options.filter_policy = rep_->policy;
  const rocksdb::FilterBuildingContext context(rep_->table_options);
  rep_->builder.reset(rep_->policy->GetBuilderWithContext(context));
}

RocksDBFilter::~RocksDBFilter() = default;

void RocksDBFilter::AddKey(std::string_view key) {
  rep_->builder->AddKey(rocksdb::Slice(key.data(), key.size()));
}

void RocksDBFilter::Finish() {
  rep_->contents = rep_->builder->Finish(&rep_->bytes);
  rep_->reader.reset(rep_->policy->GetFilterBitsReader(rep_->contents));
}

bool RocksDBFilter::MayMatch(std::string_view key) const {
  return rep_->reader->MayMatch(rocksdb::Slice(key.data(), key.size()));
}

size_t RocksDBFilter::size() const { return rep_->contents.size(); }

std::string RocksDBFilterLibrary() {
  return absl::StrFormat("RocksDB %d.%d.%d", ROCKSDB_MAJOR, ROCKSDB_MINOR,
                         ROCKSDB_PATCH);
}

}  // namespace siftdb::bench
