// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RepairPlan: which of a damaged database's logs and tables RepairDB may
// use, and in what order their entries win. The rule repair must keep:
// never return a value the database no longer returned before the damage.
// A directory may legitimately hold obsolete files (a reader pinned them
// when the process died, a delete failed, a background error stopped
// deletion), and bottom-level compaction rewrites the newest entry of a
// key with sequence 0, so "highest sequence wins" alone would let an
// obsolete table's older value, or a deleted key, come back.
//
// What decides:
//  1. The newest readable MANIFEST (the one CURRENT names, else the
//     highest-numbered one that reads) is the authority on tables: tables
//     it lists are live and rank by level (a live table at level L ranks
//     1 + L); tables numbered below its next-file number that it does not
//     list are obsolete and set aside; a table written after its last
//     record is a flush output when it names a log (rank 0, newest), else
//     the output of a compaction not yet installed, whose data its
//     still-live inputs hold too (it ranks last: it may only add keys).
//     Logs below its log number, other than its previous log, are already
//     in tables and are not replayed.
//  2. With no readable MANIFEST, the tables' siftdb.input.files property
//     (table/table_properties.h) decides: a file some readable table names
//     as an input is superseded and set aside; every other file ranks 0,
//     so sequences decide. Tables written before the property existed are
//     reported (an obsolete one among them may bring older values back).
// Logs that are replayed rank 0. When several survivors hold one user key,
// the lowest rank wins, and within one rank the highest sequence.
//
// Known limit: when CURRENT's MANIFEST is unreadable and an older one is
// used, tables it lists that later compactions superseded still count as
// live; docs/errors.md says so.
//
// Thread safety: a plain value; ReadRepairManifest must run while repair
// holds the DB lock. May rewrite CURRENT to name the newest readable
// MANIFEST (repair rewrites it at the end anyway).

#ifndef SIFTDB_DB_REPAIR_PLAN_H_
#define SIFTDB_DB_REPAIR_PLAN_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "siftdb/options.h"

namespace siftdb {

// What the newest readable MANIFEST says (readable == false: none reads).
struct RepairManifest {
  bool readable = false;
  uint64_t manifest_number = 0;
  uint64_t next_file_number = 0;
  uint64_t log_number = 0;
  uint64_t prev_log_number = 0;
  std::map<uint64_t, int> live_tables;  // table number -> level
  std::string error;                    // why none reads, when !readable
};

// descriptors: the MANIFEST numbers found in the directory.
RepairManifest ReadRepairManifest(const std::string& dbname,
                                  const Options& options,
                                  std::vector<uint64_t> descriptors);

// One readable table as the planner needs it.
struct RepairTableFacts {
  uint64_t number = 0;
  bool has_input_files = false;
  std::vector<uint64_t> input_files;
};

inline constexpr int kRepairRankLast = 1 << 20;

struct RepairPlan {
  std::set<uint64_t> superseded_logs;  // not replayed
  std::set<uint64_t> obsolete_tables;  // set aside, not merged
  std::map<uint64_t, int> table_rank;  // every table to merge -> its rank
  std::vector<std::string> notes;      // one line per decision, for the LOG
};

// Decides from the MANIFEST (when readable) and the tables' input lists.
// Logs are not planned here beyond superseded_logs: what they hold ranks 0.
RepairPlan PlanRepair(const RepairManifest& manifest,
                      const std::vector<uint64_t>& logs,
                      const std::vector<RepairTableFacts>& tables);

}  // namespace siftdb

#endif  // SIFTDB_DB_REPAIR_PLAN_H_
