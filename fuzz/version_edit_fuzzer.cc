// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: MANIFEST record decoding (db/version_edit.h
// VersionEdit::DecodeFrom). Input: the payload of one MANIFEST record.
//
// Checked besides "no crash, no out-of-bounds read":
// - a rejected record is DataLoss;
// - an accepted one re-encodes to bytes that decode again and re-encode
//   to the same bytes (encode(decode(x)) is a fixed point), and its
//   DebugString does not crash.

#include <cstdint>
#include <string>

#include "db/version_edit.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace siftdb;
  using namespace siftdb::fuzz;
  VersionEdit edit;
  const absl::Status s = edit.DecodeFrom(AsView(data, size));
  if (!s.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(s));
    return 0;
  }
  (void)edit.DebugString();
  std::string first;
  edit.EncodeTo(&first);
  VersionEdit again;
  FUZZ_CHECK(again.DecodeFrom(first).ok());
  std::string second;
  again.EncodeTo(&second);
  FUZZ_CHECK(first == second);
  FUZZ_CHECK(again.DebugString() == edit.DebugString());
  return 0;
}
