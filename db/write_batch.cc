// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "siftdb/write_batch.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "db/memtable.h"
#include "db/write_batch_internal.h"
#include "siftdb/options.h"
#include "util/coding.h"

namespace siftdb {

WriteBatch::WriteBatch() { Clear(); }

void WriteBatch::Clear() {
  rep_.clear();
  rep_.resize(WriteBatchInternal::kHeader);
}

size_t WriteBatch::ApproximateSize() const { return rep_.size(); }

int WriteBatch::Count() const { return WriteBatchInternal::Count(this); }

absl::Status WriteBatch::Iterate(Handler* handler) const {
  std::string_view input(rep_);
  if (input.size() < WriteBatchInternal::kHeader) {
    return absl::DataLossError("write batch: shorter than its 12-byte header");
  }
  input.remove_prefix(WriteBatchInternal::kHeader);
  int found = 0;
  while (!input.empty()) {
    const char tag = input[0];
    input.remove_prefix(1);
    std::string_view key, value;
    switch (tag) {
      case kTypeValue:
        if (!GetLengthPrefixedSlice(&input, &key) ||
            !GetLengthPrefixedSlice(&input, &value)) {
          return absl::DataLossError(absl::StrFormat(
              "write batch: put record %d is truncated", found));
        }
        handler->Put(key, value);
        break;
      case kTypeDeletion:
        if (!GetLengthPrefixedSlice(&input, &key)) {
          return absl::DataLossError(absl::StrFormat(
              "write batch: delete record %d is truncated", found));
        }
        handler->Delete(key);
        break;
      default:
        return absl::DataLossError(
            absl::StrFormat("write batch: record %d has unknown tag 0x%02x",
                            found, static_cast<uint8_t>(tag)));
    }
    found++;
  }
  if (found != WriteBatchInternal::Count(this)) {
    return absl::DataLossError(
        absl::StrFormat("write batch: header says %d records, found %d",
                        WriteBatchInternal::Count(this), found));
  }
  return absl::OkStatus();
}

int WriteBatchInternal::Count(const WriteBatch* b) {
  return static_cast<int>(DecodeFixed32(b->rep_.data() + 8));
}

void WriteBatchInternal::SetCount(WriteBatch* b, int n) {
  EncodeFixed32(&b->rep_[8], static_cast<uint32_t>(n));
}

SequenceNumber WriteBatchInternal::Sequence(const WriteBatch* b) {
  return DecodeFixed64(b->rep_.data());
}

void WriteBatchInternal::SetSequence(WriteBatch* b, SequenceNumber seq) {
  EncodeFixed64(&b->rep_[0], seq);
}

void WriteBatch::Put(std::string_view key, std::string_view value) {
  WriteBatchInternal::SetCount(this, WriteBatchInternal::Count(this) + 1);
  // One allocation for the record, not one per append (a one-entry batch
  // would otherwise grow three times); doubling keeps a long batch linear.
  const size_t needed = rep_.size() + 1 + VarintLength(key.size()) +
                        key.size() + VarintLength(value.size()) + value.size();
  if (needed > rep_.capacity()) {
    rep_.reserve(std::max(needed, 2 * rep_.capacity()));
  }
  rep_.push_back(static_cast<char>(kTypeValue));
  PutLengthPrefixedSlice(&rep_, key);
  PutLengthPrefixedSlice(&rep_, value);
}

void WriteBatch::Delete(std::string_view key) {
  WriteBatchInternal::SetCount(this, WriteBatchInternal::Count(this) + 1);
  rep_.push_back(static_cast<char>(kTypeDeletion));
  PutLengthPrefixedSlice(&rep_, key);
}

void WriteBatch::Append(const WriteBatch& source) {
  WriteBatchInternal::SetCount(this, Count() + source.Count());
  rep_.append(source.rep_.data() + WriteBatchInternal::kHeader,
              source.rep_.size() - WriteBatchInternal::kHeader);
}

absl::Status WriteBatchInternal::SetContents(WriteBatch* b,
                                             std::string_view contents) {
  if (contents.size() < kHeader) {
    return absl::DataLossError(absl::StrFormat(
        "write batch: %d bytes, shorter than its 12-byte header",
        contents.size()));
  }
  b->rep_.assign(contents.data(), contents.size());
  return absl::OkStatus();
}

namespace {

class MemTableInserter : public WriteBatch::Handler {
 public:
  MemTableInserter(SequenceNumber seq, MemTable* mem)
      : sequence_(seq), mem_(mem) {}
  void Put(std::string_view key, std::string_view value) override {
    mem_->Add(sequence_++, kTypeValue, key, value);
  }
  void Delete(std::string_view key) override {
    mem_->Add(sequence_++, kTypeDeletion, key, std::string_view());
  }

 private:
  SequenceNumber sequence_;
  MemTable* mem_;
};

class LimitChecker : public WriteBatch::Handler {
 public:
  void Put(std::string_view key, std::string_view value) override {
    CheckKey(key);
    if (status.ok() && value.size() > kMaxValueSize) {
      status = absl::InvalidArgumentError(absl::StrFormat(
          "value of %d bytes exceeds the limit of %d bytes (kMaxValueSize)",
          value.size(), kMaxValueSize));
    }
  }
  void Delete(std::string_view key) override { CheckKey(key); }
  absl::Status status;

 private:
  void CheckKey(std::string_view key) {
    if (status.ok() && key.size() > kMaxKeySize) {
      status = absl::InvalidArgumentError(absl::StrFormat(
          "key of %d bytes exceeds the limit of %d bytes (kMaxKeySize)",
          key.size(), kMaxKeySize));
    }
  }
};

}  // namespace

absl::Status WriteBatchInternal::InsertInto(const WriteBatch* b,
                                            MemTable* memtable) {
  MemTableInserter inserter(Sequence(b), memtable);
  return b->Iterate(&inserter);
}

absl::Status WriteBatchInternal::Validate(const WriteBatch* b) {
  if (b->rep_.size() > kMaxWriteBatchSize) {
    return absl::InvalidArgumentError(
        absl::StrFormat("write batch of %d bytes exceeds the limit of %d bytes",
                        b->rep_.size(), kMaxWriteBatchSize));
  }
  LimitChecker checker;
  absl::Status s = b->Iterate(&checker);
  return s.ok() ? checker.status : s;
}

}  // namespace siftdb
