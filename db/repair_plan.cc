// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/repair_plan.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "db/table_cache.h"
#include "db/version.h"
#include "db/version_set.h"
#include "table/internal_key.h"
#include "table/table_options.h"
#include "util/mutex.h"

namespace siftdb {

namespace {

// Recovers the MANIFEST CURRENT names into *out; false when it fails.
bool TryRecover(const std::string& dbname, const Options& options,
                RepairManifest* out) {
  InternalKeyComparator icmp(options.comparator);
  TableOptions table_options;
  table_options.user_comparator = options.comparator;
  TableCache cache(dbname, options.env, table_options, 16);
  VersionSet versions(dbname, &options, &cache, &icmp);
  bool save_manifest = false;
  absl::Status s = versions.Recover(&save_manifest);
  if (!s.ok()) {
    out->error = s.ToString();
    return false;
  }
  out->readable = true;
  out->log_number = versions.LogNumber();
  out->prev_log_number = versions.PrevLogNumber();
  // Recover sets the recorded next-file number aside for the MANIFEST a
  // reopen would write and hands out the numbers after it, so
  // NewFileNumber() is one past the number the crashed process used first
  // after its last record. A table with that very number (a flush that had
  // not installed its table yet, after a compaction installed its outputs)
  // is not obsolete.
  out->next_file_number = versions.NewFileNumber() - 1;
  for (int level = 0; level < kNumLevels; level++) {
    for (const FileMetaData* f : versions.current()->files(level)) {
      out->live_tables[f->number] = level;
    }
  }
  return true;
}

// With a readable MANIFEST it is the authority on tables: live ones rank
// by level, older unlisted ones are obsolete. A table written after its
// last record is a flush output (it names a log: newest), or else the
// output of a compaction not yet installed, whose data its still-live
// inputs hold too: it ranks last and may only add keys.
void PlanWithManifest(const RepairManifest& manifest,
                      const std::vector<uint64_t>& logs,
                      const RepairTableFacts& t, RepairPlan* plan) {
  auto live = manifest.live_tables.find(t.number);
  if (live != manifest.live_tables.end()) {
    plan->table_rank[t.number] = 1 + live->second;
    return;
  }
  if (t.number < manifest.next_file_number) {
    plan->obsolete_tables.insert(t.number);
    plan->notes.push_back(absl::StrFormat(
        "table %06d: obsolete (not live in the MANIFEST); set aside",
        t.number));
    return;
  }
  int rank = kRepairRankLast;
  for (uint64_t input : t.input_files) {
    if (std::find(logs.begin(), logs.end(), input) != logs.end()) {
      rank = 0;  // a flush of a log the MANIFEST does not cover
    }
  }
  plan->table_rank[t.number] = rank;
}

}  // namespace

RepairManifest ReadRepairManifest(const std::string& dbname,
                                  const Options& options,
                                  std::vector<uint64_t> descriptors) {
  RepairManifest m;
  if (TryRecover(dbname, options, &m)) return m;
  const std::string current_error = m.error;
  // CURRENT is missing or names a MANIFEST that does not read: the newest
  // one that reads is the best account of what is live.
  std::sort(descriptors.begin(), descriptors.end(), std::greater<>());
  for (uint64_t number : descriptors) {
    if (!SetCurrentFile(options.env, dbname, number).ok()) continue;
    if (TryRecover(dbname, options, &m)) {
      m.manifest_number = number;
      return m;
    }
  }
  m.error = current_error;
  return m;
}

RepairPlan PlanRepair(const RepairManifest& manifest,
                      const std::vector<uint64_t>& logs,
                      const std::vector<RepairTableFacts>& tables) {
  RepairPlan plan;
  // A file some readable table names as an input is superseded by it;
  // with a readable MANIFEST, only by a table that is merged: a log that a
  // reopen would replay is never dropped for a table set aside.
  std::set<uint64_t> named;
  for (const RepairTableFacts& t : tables) {
    if (manifest.readable && !manifest.live_tables.contains(t.number) &&
        t.number < manifest.next_file_number) {
      continue;  // obsolete (PlanWithManifest): it supersedes nothing
    }
    named.insert(t.input_files.begin(), t.input_files.end());
  }
  for (uint64_t log : logs) {
    if (named.count(log) > 0) {
      plan.superseded_logs.insert(log);
      plan.notes.push_back(absl::StrFormat(
          "log %06d: a table holds all of it; not replayed", log));
    } else if (manifest.readable && log < manifest.log_number &&
               log != manifest.prev_log_number) {
      plan.superseded_logs.insert(log);
      plan.notes.push_back(absl::StrFormat(
          "log %06d: below the MANIFEST's log number %d; not replayed", log,
          manifest.log_number));
    }
  }
  for (const RepairTableFacts& t : tables) {
    if (manifest.readable) {
      PlanWithManifest(manifest, logs, t, &plan);
    } else if (named.count(t.number) > 0) {
      plan.obsolete_tables.insert(t.number);
      plan.notes.push_back(absl::StrFormat(
          "table %06d: a newer table names it as an input; set aside",
          t.number));
    } else {
      plan.table_rank[t.number] = 0;
      if (!t.has_input_files) {
        plan.notes.push_back(absl::StrFormat(
            "table %06d: written before tables recorded their inputs and no "
            "MANIFEST reads: if it was obsolete, older values of its keys "
            "may come back",
            t.number));
      }
    }
  }
  return plan;
}

}  // namespace siftdb
