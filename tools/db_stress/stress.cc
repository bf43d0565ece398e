// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/db_stress/stress.h"

#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "util/absl_compat.h"
#include "util/random.h"

namespace siftdb::stress {

std::string KeyFor(uint32_t k) { return absl::StrFormat("key%08d", k); }

std::string ValueFor(uint32_t k, uint32_t id) {
  // Variable length, so tables see a mix of sizes; the filler is derived
  // from (k, id) so a torn or misplaced value is detectable.
  std::string v = absl::StrFormat("v|%d|%d|", k, id);
  const size_t filler = (k * 31u + id * 7u) % 120u;
  v.append(filler, static_cast<char>('a' + (k + id) % 26));
  return v;
}

bool ParseValue(uint32_t k, std::string_view value, uint32_t* id) {
  // "v|<k>|<id>|" + filler
  if (value.substr(0, 2) != "v|") return false;
  std::string_view rest = value.substr(2);
  const size_t bar1 = rest.find('|');
  if (bar1 == std::string_view::npos) return false;
  const size_t bar2 = rest.find('|', bar1 + 1);
  if (bar2 == std::string_view::npos) return false;
  uint32_t key, parsed_id;
  if (!absl::SimpleAtoi(AsAbsl(rest.substr(0, bar1)), &key) ||
      !absl::SimpleAtoi(AsAbsl(rest.substr(bar1 + 1, bar2 - bar1 - 1)),
                        &parsed_id) ||
      key != k || parsed_id == 0 || (parsed_id & kDeleteBit)) {
    return false;
  }
  if (ValueFor(k, parsed_id) != value) return false;
  *id = parsed_id;
  return true;
}

namespace {

// The id the DB holds for k: 0 when absent. Error when the value is not one
// the workload writes for k.
absl::StatusOr<uint32_t> ReadId(DB* db, uint32_t k) {
  std::string value;
  absl::Status s = db->Get(ReadOptions(), KeyFor(k), &value);
  if (absl::IsNotFound(s)) return 0u;
  if (!s.ok()) return s;
  uint32_t id;
  if (!ParseValue(k, value, &id)) {
    return absl::DataLossError(absl::StrFormat(
        "key %s holds a value never written: '%s'", KeyFor(k), value));
  }
  return id;
}

bool SameState(uint32_t expected, uint32_t found) {
  if (IsAbsent(expected)) return found == 0;
  return expected == found;
}

absl::Status ThreadBody(DB* db, ExpectedState* state,
                        const StressConfig& config, int t,
                        std::atomic<bool>* stop, bool tolerate_write_errors,
                        WriteObserver* observer) {
  Random rnd(config.seed * 1000003 + t);
  const uint32_t per_thread =
      (config.num_keys - t + config.threads - 1) / config.threads;
  if (per_thread == 0) return absl::OkStatus();
  auto own_key = [&] {
    return static_cast<uint32_t>(rnd.Uniform(per_thread) * config.threads + t);
  };
  for (uint64_t op = 0;
       !stop->load(std::memory_order_relaxed) &&
       (config.ops_per_thread == 0 || op < config.ops_per_thread);
       op++) {
    const uint32_t dice = rnd.Uniform(100);
    WriteOptions wo;
    wo.sync = rnd.Uniform(10000) < config.sync_fraction * 10000;
    if (dice < 60 || (dice >= 75 && dice < 85)) {
      // A put or a delete of one key.
      const uint32_t k = own_key();
      uint32_t id = state->NextId(k);
      const bool del = dice >= 75;
      if (del) id |= kDeleteBit;
      state->SetPending(k, id);
      const uint64_t ticket = observer != nullptr ? observer->Begin() : 0;
      absl::Status s = del ? db->Delete(wo, KeyFor(k))
                           : db->Put(wo, KeyFor(k), ValueFor(k, id));
      if (!s.ok()) {
        if (tolerate_write_errors) return absl::OkStatus();
        return s;
      }
      state->Ack(k, id);
      if (observer != nullptr) observer->Acked(k, id, wo.sync, ticket);
    } else if (dice < 75) {
      // A batch over a few distinct own keys.
      WriteBatch batch;
      std::vector<std::pair<uint32_t, uint32_t>> writes;
      const int n = 2 + rnd.Uniform(4);
      for (int i = 0; i < n; i++) {
        const uint32_t k = own_key();
        bool dup = false;
        for (const auto& w : writes) dup |= w.first == k;
        if (dup) continue;
        uint32_t id = state->NextId(k);
        if (rnd.OneIn(4)) {
          id |= kDeleteBit;
          batch.Delete(KeyFor(k));
        } else {
          batch.Put(KeyFor(k), ValueFor(k, id));
        }
        state->SetPending(k, id);
        writes.emplace_back(k, id);
      }
      const uint64_t ticket = observer != nullptr ? observer->Begin() : 0;
      absl::Status s = db->Write(wo, &batch);
      if (!s.ok()) {
        if (tolerate_write_errors) return absl::OkStatus();
        return s;
      }
      for (const auto& [k, id] : writes) {
        state->Ack(k, id);
        if (observer != nullptr) observer->Acked(k, id, wo.sync, ticket);
      }
    } else if (dice < 98) {
      // Read back an own key: no write of it is in flight.
      const uint32_t k = own_key();
      absl::StatusOr<uint32_t> found = ReadId(db, k);
      if (!found.ok()) return found.status();
      if (!SameState(state->acked(k), *found)) {
        return absl::DataLossError(
            absl::StrFormat("live read of %s found id %d, expected %d",
                            KeyFor(k), *found, state->acked(k)));
      }
    } else if (t == 0 && rnd.OneIn(20)) {
      const std::string a = KeyFor(rnd.Uniform(config.num_keys));
      const std::string b = KeyFor(rnd.Uniform(config.num_keys));
      std::string_view begin(a < b ? a : b), end(a < b ? b : a);
      absl::Status s = db->CompactRange(&begin, &end);
      if (!s.ok() && !tolerate_write_errors) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunWorkload(DB* db, ExpectedState* state,
                         const StressConfig& config, std::atomic<bool>* stop,
                         bool tolerate_write_errors, WriteObserver* observer) {
  std::vector<std::thread> threads;
  std::vector<absl::Status> results(config.threads);
  for (int t = 0; t < config.threads; t++) {
    threads.emplace_back([&, t] {
      results[t] = ThreadBody(db, state, config, t, stop, tolerate_write_errors,
                              observer);
      if (!results[t].ok()) stop->store(true);
    });
  }
  for (auto& th : threads) th.join();
  for (const absl::Status& s : results) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<VerifyResult> Verify(DB* db, ExpectedState* state,
                                    const Acceptable& acceptable) {
  VerifyResult result;
  std::vector<uint32_t> found(state->num_keys());
  for (uint32_t k = 0; k < state->num_keys(); k++) {
    absl::StatusOr<uint32_t> id = ReadId(db, k);
    if (!id.ok()) return id.status();
    found[k] = *id;
    const uint32_t acked = state->acked(k);
    const uint32_t pending = state->pending(k);
    bool ok;
    if (acceptable) {
      ok = acceptable(k, *id);
    } else {
      ok = SameState(acked, *id) || (pending != 0 && SameState(pending, *id));
    }
    if (!ok) {
      return absl::DataLossError(
          absl::StrFormat("key %s: found id %d; acknowledged %d, in flight %d",
                          KeyFor(k), *id, acked, pending));
    }
    if (*id != 0) result.keys_present++;
    if (pending != 0) {
      if (SameState(pending, *id) && !SameState(acked, *id)) {
        result.keys_in_flight_applied++;
      } else {
        result.keys_in_flight_lost++;
      }
    }
  }

  // Iteration agrees with the point reads, both ways.
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  uint64_t forward = 0;
  std::string last;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string key(it->key());
    uint32_t k, id;
    if (key.size() != 11 || key.substr(0, 3) != "key" ||
        !absl::SimpleAtoi(AsAbsl(std::string_view(key).substr(3)), &k) ||
        k >= state->num_keys() || !ParseValue(k, it->value(), &id)) {
      return absl::DataLossError("iteration met a foreign entry: " + key);
    }
    if (!last.empty() && key <= last) {
      return absl::DataLossError("iteration out of order at " + key);
    }
    if (found[k] != id) {
      return absl::DataLossError(absl::StrFormat(
          "iteration gives %s id %d, point read gave %d", key, id, found[k]));
    }
    last = key;
    forward++;
  }
  if (!it->status().ok()) return it->status();
  if (forward != result.keys_present) {
    return absl::DataLossError(absl::StrFormat(
        "iteration saw %d keys, point reads %d", forward, result.keys_present));
  }
  uint64_t backward = 0;
  for (it->SeekToLast(); it->Valid(); it->Prev()) backward++;
  if (!it->status().ok()) return it->status();
  if (backward != forward) {
    return absl::DataLossError(absl::StrFormat(
        "backward iteration saw %d keys, forward %d", backward, forward));
  }

  // Adopt what was found: the next run continues from it.
  // Ids stay increasing per key, so an id always names one write.
  for (uint32_t k = 0; k < state->num_keys(); k++) {
    const uint32_t max_id = state->NextId(k) - 1;
    state->Ack(k, found[k] != 0 ? found[k]
                                : (max_id == 0 ? 0 : (max_id | kDeleteBit)));
  }
  return result;
}

}  // namespace siftdb::stress
