// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/db_stress/remote_check.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "siftdb/remote_filter.h"
#include "tools/db_stress/stress.h"

namespace siftdb::stress {
namespace {

// Asks the mirror about `keys`; DataLoss for the first key of `present`
// answered "no". *trusted: the answers rested on a trusted mirror.
absl::Status Probe(RemoteFilter* filter, const std::vector<std::string>& keys,
                   const std::set<std::string>& present, bool* trusted,
                   uint64_t* absent_said_no, const char* when) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<bool> answers;
  absl::Status s = filter->MayContainMany(views, &answers);
  *trusted = s.ok();
  if (answers.size() != keys.size()) {
    return absl::InternalError(
        absl::StrFormat("remote filter %s: %d answers for %d keys", when,
                        answers.size(), keys.size()));
  }
  for (size_t i = 0; i < keys.size(); i++) {
    if (answers[i]) continue;
    if (present.contains(keys[i])) {
      return absl::DataLossError(absl::StrFormat(
          "remote filter %s: says no for %s, which the DB holds (mirror "
          "status: %s)",
          when, keys[i], s.ToString()));
    }
    (*absent_said_no)++;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RemoteCheckResult> CheckRemoteFilter(DB* db,
                                                    const std::string& endpoint,
                                                    uint32_t num_keys,
                                                    int trust_wait_ms) {
  RemoteCheckResult result;
  std::set<std::string> present;
  {
    std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      present.emplace(it->key());
    }
    if (!it->status().ok()) return it->status();
  }
  result.present_keys = present.size();
  std::vector<std::string> keys;
  keys.reserve(num_keys);
  for (uint32_t k = 0; k < num_keys; k++) keys.push_back(KeyFor(k));
  result.absent_probed = keys.size() - present.size();

  auto filter = RemoteFilter::Open(endpoint, kMirrorName);
  if (!filter.ok()) return filter.status();
  uint64_t ignored = 0;
  absl::Status s = Probe(filter->get(), keys, present, &result.trusted_at_open,
                         &ignored, "right after Open");
  if (!s.ok()) return s;

  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(trust_wait_ms);
  while (true) {
    uint64_t said_no = 0;
    s = Probe(filter->get(), keys, present, &result.trusted_later, &said_no,
              "after republication");
    if (!s.ok()) return s;
    if (result.trusted_later) {
      result.absent_said_no = said_no;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return result;
}

absl::StatusOr<uint64_t> ProbeBeforeReopen(const std::string& endpoint,
                                           uint32_t num_keys,
                                           const std::string& no_file,
                                           bool* trusted) {
  *trusted = false;
  std::remove(no_file.c_str());
  auto filter = RemoteFilter::Open(endpoint, kMirrorName);
  // A reader that cannot reach Redis (down, or paused past its timeouts)
  // answers "maybe" for everything: nothing to check.
  if (absl::IsUnavailable(filter.status())) return 0;
  if (!filter.ok()) return filter.status();
  std::vector<std::string> keys;
  keys.reserve(num_keys);
  for (uint32_t k = 0; k < num_keys; k++) keys.push_back(KeyFor(k));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<bool> answers;
  *trusted = (*filter)->MayContainMany(views, &answers).ok();
  std::ofstream out(no_file, std::ios::trunc);
  uint64_t no = 0;
  for (uint32_t k = 0; k < answers.size(); k++) {
    if (answers[k]) continue;
    out << k << "\n";
    no++;
  }
  out.close();
  if (!out) {
    return absl::InternalError(absl::StrFormat("cannot write %s", no_file));
  }
  return no;
}

absl::Status CheckKeysAnsweredNo(DB* db, const ExpectedState& state,
                                 const std::string& no_file,
                                 uint64_t* checked) {
  *checked = 0;
  std::ifstream in(no_file);
  if (!in) return absl::OkStatus();
  uint32_t k;
  while (in >> k) {
    if (k >= state.num_keys()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: key index %d out of range", no_file, k));
    }
    (*checked)++;
    const uint32_t acked = state.acked(k);
    if (acked == 0 || (acked & kDeleteBit) != 0) continue;
    std::string value;
    absl::Status s = db->Get(ReadOptions(), KeyFor(k), &value);
    if (s.ok()) {
      return absl::DataLossError(absl::StrFormat(
          "remote filter said no for %s before the reopen (%s), which was "
          "acknowledged and the recovered DB holds",
          KeyFor(k), no_file));
    }
    if (!absl::IsNotFound(s)) return s;
  }
  in.close();
  std::remove(no_file.c_str());
  return absl::OkStatus();
}

}  // namespace siftdb::stress
