// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: WriteBatch decoding (db/write_batch_internal.h SetContents,
// then WriteBatch::Iterate, Validate and InsertInto a MemTable), i.e. what
// recovery does with a log record's payload. Input: one encoded batch.
//
// Checked besides "no crash, no out-of-bounds read":
// - a rejected batch is DataLoss (InvalidArgument from Validate's limits);
// - an accepted batch: Iterate reports exactly Count() updates; rebuilding
//   it with Put/Delete gives a batch that iterates to the same updates;
//   inserted into a MemTable, every key reads back as its last update in
//   the batch (value or deleted) and the MemTable holds Count() entries.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/lookup_key.h"
#include "db/memtable.h"
#include "db/write_batch_internal.h"
#include "fuzz/fuzz_util.h"
#include "siftdb/comparator.h"

namespace siftdb::fuzz {
namespace {

struct Update {
  bool put;
  std::string key, value;
  bool operator==(const Update&) const = default;
};

class Recorder final : public WriteBatch::Handler {
 public:
  void Put(std::string_view key, std::string_view value) override {
    updates.push_back({true, std::string(key), std::string(value)});
  }
  void Delete(std::string_view key) override {
    updates.push_back({false, std::string(key), ""});
  }
  std::vector<Update> updates;
};

}  // namespace
}  // namespace siftdb::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace siftdb;
  using namespace siftdb::fuzz;
  WriteBatch batch;
  absl::Status s = WriteBatchInternal::SetContents(&batch, AsView(data, size));
  if (!s.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(s));
    return 0;
  }
  Recorder recorder;
  s = batch.Iterate(&recorder);
  if (!s.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(s));
    const absl::Status v = WriteBatchInternal::Validate(&batch);
    FUZZ_CHECK(absl::IsDataLoss(v));
    return 0;
  }
  FUZZ_CHECK(recorder.updates.size() ==
             static_cast<size_t>(WriteBatchInternal::Count(&batch)));
  s = WriteBatchInternal::Validate(&batch);
  FUZZ_CHECK(s.ok() || absl::IsInvalidArgument(s));

  // Rebuilt from its updates, the batch means the same thing (the bytes
  // may differ: a decoder accepts non-minimal varints).
  WriteBatch rebuilt;
  for (const Update& u : recorder.updates) {
    if (u.put) {
      rebuilt.Put(u.key, u.value);
    } else {
      rebuilt.Delete(u.key);
    }
  }
  Recorder again;
  FUZZ_CHECK(rebuilt.Iterate(&again).ok());
  FUZZ_CHECK(again.updates == recorder.updates);

  // Into a MemTable, as recovery does. The sequence comes from the bytes;
  // keep it where the updates' sequences fit in 56 bits (the DB assigns
  // sequences itself, below kMaxSequenceNumber).
  const SequenceNumber base =
      WriteBatchInternal::Sequence(&batch) % (kMaxSequenceNumber / 2);
  WriteBatchInternal::SetSequence(&batch, base);
  const InternalKeyComparator cmp(BytewiseComparator());
  MemTable* mem = new MemTable(cmp);
  mem->Ref();
  FUZZ_CHECK(WriteBatchInternal::InsertInto(&batch, mem).ok());
  FUZZ_CHECK(mem->NumEntries() == recorder.updates.size());
  std::map<std::string, std::optional<std::string>> model;
  for (const Update& u : recorder.updates) {
    model[u.key] = u.put ? std::optional<std::string>(u.value) : std::nullopt;
  }
  for (const auto& [key, expected] : model) {
    LookupKey lookup(key, kMaxSequenceNumber);
    std::string value;
    absl::Status status;
    FUZZ_CHECK(mem->Get(lookup, &value, &status));
    if (expected.has_value()) {
      FUZZ_CHECK(status.ok());
      FUZZ_CHECK(value == *expected);
    } else {
      FUZZ_CHECK(absl::IsNotFound(status));
    }
  }
  size_t n = 0;
  std::unique_ptr<Iterator> it = mem->NewIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  FUZZ_CHECK(n == recorder.updates.size());
  it.reset();
  mem->Unref();
  return 0;
}
