// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/db_stress/remote_check.h"

#include <chrono>
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

}  // namespace siftdb::stress
