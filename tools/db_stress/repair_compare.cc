// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/db_stress/repair_compare.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "tools/db_stress/stress.h"
#include "util/absl_compat.h"

namespace siftdb::stress {
namespace {

// A value as the failure message shows it: escaped, at most 48 bytes.
std::string Show(const std::optional<std::string>& value) {
  if (!value.has_value()) return "NotFound";
  constexpr size_t kMax = 48;
  std::string shown =
      "'" + absl::CHexEscape(AsAbsl(std::string_view(*value).substr(0, kMax)));
  if (value->size() > kMax) shown += "...";
  return shown + "'";
}

absl::Status Differ(std::string_view how, std::string_view key,
                    const std::optional<std::string>& reopened,
                    const std::optional<std::string>& repaired) {
  return absl::DataLossError(absl::StrFormat(
      "repair disagrees with reopen (%s) at key '%s': reopen has %s, repair "
      "has %s",
      how, absl::CHexEscape(AsAbsl(key)), Show(reopened), Show(repaired)));
}

// Keeps every line logged.
class CapturingLogger : public Logger {
 public:
  explicit CapturingLogger(std::vector<std::string>* lines) : lines_(lines) {}
  void Log(std::string_view message) override { lines_->emplace_back(message); }

 private:
  std::vector<std::string>* const lines_;
};

// Counts the non-empty logs and the tables in `path`.
void CountFiles(const std::string& path, RepairCompareResult* result) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    const std::string ext = entry.path().extension().string();
    std::error_code size_ec;
    if (ext == ".log" && entry.file_size(size_ec) > 0 && !size_ec) {
      result->logs_in_image++;
    } else if (ext == ".sst") {
      result->tables_in_image++;
    }
  }
}

// Both forward scans, key by key and value by value.
absl::Status CompareScans(DB* reopened, DB* repaired, uint64_t* keys) {
  std::unique_ptr<Iterator> a = reopened->NewIterator(ReadOptions());
  std::unique_ptr<Iterator> b = repaired->NewIterator(ReadOptions());
  a->SeekToFirst();
  b->SeekToFirst();
  while (a->Valid() && b->Valid()) {
    const int c = a->key().compare(b->key());
    if (c < 0) {
      return Differ("scan", a->key(), std::string(a->value()), std::nullopt);
    }
    if (c > 0) {
      return Differ("scan", b->key(), std::nullopt, std::string(b->value()));
    }
    if (a->value() != b->value()) {
      return Differ("scan", a->key(), std::string(a->value()),
                    std::string(b->value()));
    }
    (*keys)++;
    a->Next();
    b->Next();
  }
  if (!a->status().ok()) return a->status();
  if (!b->status().ok()) return b->status();
  if (a->Valid()) {
    return Differ("scan", a->key(), std::string(a->value()), std::nullopt);
  }
  if (b->Valid()) {
    return Differ("scan", b->key(), std::nullopt, std::string(b->value()));
  }
  return absl::OkStatus();
}

// The value of `key` in `db`, nullopt when NotFound.
absl::StatusOr<std::optional<std::string>> PointGet(DB* db,
                                                    const std::string& key) {
  std::string value;
  absl::Status s = db->Get(ReadOptions(), key, &value);
  if (absl::IsNotFound(s)) return std::optional<std::string>();
  if (!s.ok()) return s;
  return std::optional<std::string>(std::move(value));
}

}  // namespace

absl::Status RepairAndCompare(const std::string& reopen_path,
                              const std::string& repair_path,
                              const Options& options, uint32_t num_keys,
                              RepairCompareResult* result) {
  CountFiles(repair_path, result);
  CapturingLogger logger(&result->repair_log);
  Options repair_options = options;
  repair_options.info_log = &logger;
  absl::Status s = RepairDB(repair_path, repair_options);
  if (!s.ok()) {
    return absl::Status(
        s.code(), "RepairDB " + repair_path + ": " + std::string(s.message()));
  }
  Options open_options = options;
  open_options.create_if_missing = false;
  auto reopened = DB::Open(open_options, reopen_path);
  if (!reopened.ok()) return reopened.status();
  auto repaired = DB::Open(open_options, repair_path);
  if (!repaired.ok()) {
    return absl::Status(
        repaired.status().code(),
        "opening the repaired DB: " + std::string(repaired.status().message()));
  }
  s = CompareScans(reopened->get(), repaired->get(), &result->keys_scanned);
  if (!s.ok()) return s;
  for (uint32_t k = 0; k < num_keys; k++) {
    const std::string key = KeyFor(k);
    auto a = PointGet(reopened->get(), key);
    if (!a.ok()) return a.status();
    auto b = PointGet(repaired->get(), key);
    if (!b.ok()) return b.status();
    if (*a != *b) return Differ("Get", key, *a, *b);
    result->keys_got++;
  }
  return absl::OkStatus();
}

}  // namespace siftdb::stress
