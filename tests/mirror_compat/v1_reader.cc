// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The frozen v1 mirror reader (v1_reader.h): format 1 of docs/redis_mirror.md
// (as of 2026-11-25; the document now describes format 2), §4 steps
// 1-7 without caching, and the filter encodings of docs/filter_format.md
// §1-§3, decoded here from the bytes. Every length is checked before use;
// whatever fails a check answers "maybe".

#include "tests/mirror_compat/v1_reader.h"

#include <xxhash.h>

#include <cstdint>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/crc32c.h"

namespace siftdb::compat {
namespace {

struct TableEntry {
  uint64_t id = 0;
  uint64_t size = 0;
  uint32_t crc = 0;
  std::string policy, smallest, largest;
};
struct SubFilter {
  uint64_t blocks = 0;
  uint32_t k = 0;
};
struct LiveEntry {
  uint64_t id = 0;
  std::vector<SubFilter> subs;
};
struct Manifest {
  std::string generation, version, comparator, mode;
  std::vector<TableEntry> tables;
  std::vector<LiveEntry> lives;
};

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); i++) {
    if (i == text.size() || text[i] == sep) {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Decimal without sign or leading zeros, below 2^63.
bool ParseDecimal(std::string_view s, uint64_t* v) {
  if (s.empty() || s.size() > 18 || (s.size() > 1 && s[0] == '0')) {
    return false;
  }
  *v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    *v = *v * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Lowercase hex bytes; "-" is the empty key.
bool ParseHexKey(std::string_view s, std::string* out) {
  out->clear();
  if (s == "-") return true;
  if (s.empty() || s.size() % 2 != 0) return false;
  for (size_t i = 0; i < s.size(); i += 2) {
    const int hi = HexDigit(s[i]), lo = HexDigit(s[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

bool ParseCrc(std::string_view s, uint32_t* crc) {
  if (s.size() != 8) return false;
  *crc = 0;
  for (char c : s) {
    const int d = HexDigit(c);
    if (d < 0) return false;
    *crc = *crc * 16 + static_cast<uint32_t>(d);
  }
  return true;
}

// "<level> <bytes> <crc32c> <policy> <smallest> <largest>".
bool ParseTable(std::string_view value, TableEntry* t) {
  std::vector<std::string_view> f = Split(value, ' ');
  uint64_t level;
  if (f.size() != 6 || !ParseDecimal(f[0], &level) ||
      !ParseDecimal(f[1], &t->size) || !ParseCrc(f[2], &t->crc) ||
      f[3].empty() || !ParseHexKey(f[4], &t->smallest) ||
      !ParseHexKey(f[5], &t->largest)) {
    return false;
  }
  t->policy = std::string(f[3]);
  return true;
}

// "<N0>:<k0> <N1>:<k1> ...".
bool ParseLive(std::string_view value, LiveEntry* e) {
  for (std::string_view sub : Split(value, ' ')) {
    std::vector<std::string_view> nk = Split(sub, ':');
    SubFilter s;
    uint64_t k;
    if (nk.size() != 2 || !ParseDecimal(nk[0], &s.blocks) ||
        !ParseDecimal(nk[1], &k) || s.blocks < 1 || s.blocks > 0xffffffffu ||
        k < 1 || k > 30) {
      return false;
    }
    s.k = static_cast<uint32_t>(k);
    e->subs.push_back(s);
  }
  return !e->subs.empty();
}

absl::Status ParseManifest(const RedisReply& r, Manifest* m) {
  if (!r.is_array() || r.elements().empty()) {
    return absl::NotFoundError("no manifest");
  }
  const auto& e = r.elements();
  if (e.size() % 2 != 0) return absl::DataLossError("odd HGETALL reply");
  std::map<std::string, std::string> header;
  for (size_t i = 0; i < e.size(); i += 2) {
    if (!e[i].is_string() || !e[i + 1].is_string()) {
      return absl::DataLossError("HGETALL element not a string");
    }
    const std::string& field = e[i].str();
    const std::string& value = e[i + 1].str();
    uint64_t id;
    if (StartsWith(field, "sst:")) {
      TableEntry t;
      if (!ParseDecimal(field.substr(4), &t.id) || !ParseTable(value, &t)) {
        return absl::DataLossError(absl::StrCat("bad entry ", field));
      }
      m->tables.push_back(std::move(t));
    } else if (StartsWith(field, "mem:")) {
      LiveEntry l;
      if (!ParseDecimal(field.substr(4), &id) || !ParseLive(value, &l)) {
        return absl::DataLossError(absl::StrCat("bad entry ", field));
      }
      l.id = id;
      m->lives.push_back(std::move(l));
    } else {
      header[field] = value;  // unknown fields are ignored
    }
  }
  uint64_t version;
  if (header["format"] != "1") {
    return absl::UnimplementedError(
        absl::StrCat("manifest format \"", header["format"], "\""));
  }
  if (header["generation"].empty() ||
      !ParseDecimal(header["version"], &version)) {
    return absl::DataLossError("manifest without generation or version");
  }
  m->generation = header["generation"];
  m->version = header["version"];
  m->comparator = header["comparator"];
  m->mode = header["mode"];
  return absl::OkStatus();
}

// A decoded serialized filter (docs/filter_format.md §1.2).
struct Filter {
  bool valid = false;
  char kind = 0;
  uint64_t param = 0;  // blocks or bits
  uint32_t k = 0;
  std::string_view bits;
};

Filter DecodeFilter(std::string_view f) {
  Filter out;
  if (f.size() < 8) return out;
  const auto* t =
      reinterpret_cast<const unsigned char*>(f.data()) + f.size() - 8;
  const uint64_t param = uint64_t{t[0]} | uint64_t{t[1]} << 8 |
                         uint64_t{t[2]} << 16 | uint64_t{t[3]} << 24;
  if (t[7] != 0x53 || t[5] != 1 || t[4] < 1 || t[4] > 30) return out;
  if (t[6] == 0x42) {
    if (param < 1 || f.size() != 64 * param + 8) return out;
  } else if (t[6] == 0x43) {
    if (param < 8 || param % 8 != 0 || f.size() != param / 8 + 8) return out;
  } else {
    return out;
  }
  out.valid = true;
  out.kind = static_cast<char>(t[6]);
  out.param = param;
  out.k = t[4];
  out.bits = f.substr(0, f.size() - 8);
  return out;
}

bool BitSet(std::string_view bits, uint64_t i) {
  return (static_cast<unsigned char>(bits[i >> 3]) & (0x80u >> (i & 7))) != 0;
}

// False only when the key of hash h is certainly not in the filter.
bool FilterMayMatch(const Filter& f, uint64_t h) {
  if (!f.valid) return true;
  const uint64_t hi = h >> 32, lo = h & 0xffffffffu;
  if (f.kind == 'B') {
    const uint64_t block = (hi * f.param) >> 32;
    uint32_t x = static_cast<uint32_t>(lo);
    for (uint32_t i = 0; i < f.k; i++) {
      x *= 0x9E3779B9u;
      if (!BitSet(f.bits, block * 512 + (x >> 23))) return false;
    }
    return true;
  }
  for (uint64_t i = 0; i < f.k; i++) {
    if (!BitSet(f.bits, (lo + i * hi) % f.param)) return false;
  }
  return true;
}

// A live sub-filter value: exactly 64 * N + 8 bytes with trailer
// N (LE), k, 0x01, 'B', 'S'.
bool LiveSubFilterOk(const RedisReply& r, const SubFilter& s) {
  if (!r.is_string() || r.str().size() != 64 * s.blocks + 8) return false;
  const std::string_view t = std::string_view(r.str()).substr(64 * s.blocks);
  const char want[8] = {static_cast<char>(s.blocks & 0xff),
                        static_cast<char>((s.blocks >> 8) & 0xff),
                        static_cast<char>((s.blocks >> 16) & 0xff),
                        static_cast<char>((s.blocks >> 24) & 0xff),
                        static_cast<char>(s.k),
                        1,
                        0x42,
                        0x53};
  return t == std::string_view(want, 8);
}

// Step 2's result: for each key, the tables whose filters may answer it.
struct KeyCandidates {
  std::vector<std::vector<size_t>> tables;  // per key: indexes into m.tables
  std::vector<bool> resolved;               // per key: already "maybe"
  std::map<size_t, size_t> fetch;           // table -> reply index
};

// Step 2: the candidate tables of each key (those whose range holds it,
// when the comparator makes ranges meaningful). A key some candidate cannot
// filter (empty or foreign filter) is resolved as "maybe"; the tables of
// the others are to be fetched (reply indexes filled in by step 3).
KeyCandidates FindCandidates(const Manifest& m,
                             std::span<const std::string> keys) {
  const bool ranges = m.comparator == "siftdb.BytewiseComparator";
  KeyCandidates c;
  c.tables.resize(keys.size());
  c.resolved.assign(keys.size(), false);
  for (size_t i = 0; i < keys.size(); i++) {
    const std::string_view key = keys[i];
    for (size_t t = 0; t < m.tables.size(); t++) {
      const TableEntry& e = m.tables[t];
      if (ranges && (key < std::string_view(e.smallest) ||
                     key > std::string_view(e.largest))) {
        continue;
      }
      if (e.size == 0 || !StartsWith(e.policy, "siftdb.")) {
        c.resolved[i] = true;
        break;
      }
      c.tables[i].push_back(t);
    }
    if (!c.resolved[i]) {
      for (size_t t : c.tables[i]) c.fetch.emplace(t, 0);
    }
  }
  return c;
}

// Step 3's commands and where their replies land.
struct ProbePipeline {
  std::vector<RedisArgs> cmds;
  size_t first_live = 0;        // reply index of the first live sub-filter
  std::vector<SubFilter> subs;  // the live sub-filters, in command order
};

// Step 3: one pipeline: lease, manifest version, the table filters of
// *fetch (whose reply indexes it fills in), live sub-filters (whole),
// lease again.
ProbePipeline BuildProbePipeline(const std::string& prefix, const Manifest& m,
                                 std::map<size_t, size_t>* fetch) {
  const std::string lease_key = prefix + "lease";
  const std::string manifest_key = prefix + "manifest";
  ProbePipeline p;
  p.cmds.push_back(RedisArgs{"GET", lease_key});
  p.cmds.push_back(RedisArgs{"HMGET", manifest_key, "generation", "version",
                             "complete_seq", "complete_ms"});
  for (auto& [t, index] : *fetch) {
    index = p.cmds.size();
    p.cmds.push_back(
        RedisArgs{"GET", absl::StrCat(prefix, "sst:", m.tables[t].id)});
  }
  p.first_live = p.cmds.size();
  for (const LiveEntry& l : m.lives) {
    for (size_t j = 0; j < l.subs.size(); j++) {
      p.cmds.push_back(
          RedisArgs{"GET", absl::StrCat(prefix, "mem:", l.id, ":", j)});
      p.subs.push_back(l.subs[j]);
    }
  }
  p.cmds.push_back(RedisArgs{"GET", lease_key});
  return p;
}

// Steps 4 and 5 on the pipeline's replies r: the same lease token before
// and after, and the listing m is still current (else *retry and Aborted).
absl::Status CheckTrusted(const std::vector<RedisReply>& r, const Manifest& m,
                          bool* retry) {
  // 4. Trust: the same lease token before and after.
  const RedisReply& l1 = r.front();
  const RedisReply& l2 = r.back();
  if (!l1.is_string() || !l2.is_string() || l1.str() != l2.str()) {
    return absl::FailedPreconditionError("lease not held");
  }
  // 5. The listing we used is still current.
  const RedisReply& hm = r[1];
  if (!hm.is_array() || hm.elements().size() != 4 ||
      !hm.elements()[0].is_string() || !hm.elements()[1].is_string()) {
    return absl::DataLossError("HMGET manifest: bad reply");
  }
  if (hm.elements()[0].str() != m.generation ||
      hm.elements()[1].str() != m.version) {
    *retry = true;
    return absl::AbortedError("manifest changed");
  }
  return absl::OkStatus();
}

// The watermark of a mirror in `mode` from the HMGET reply hm (checked by
// CheckTrusted); empty when malformed.
V1Watermark ParseWatermark(const RedisReply& hm, const std::string& mode) {
  V1Watermark w;
  w.mode = mode;
  if (!ParseDecimal(hm.elements()[2].str(), &w.complete_seq) ||
      !ParseDecimal(hm.elements()[3].str(), &w.complete_ms)) {
    w = V1Watermark();
  }
  return w;
}

// Step 6 for the table filters: decodes each fetched one whose size and
// CRC match its entry into *filters (invalid: unusable). Returns the first
// problem, or OK.
absl::Status DecodeTableFilters(const std::vector<RedisReply>& r,
                                const Manifest& m,
                                const std::map<size_t, size_t>& fetch,
                                std::map<size_t, Filter>* filters) {
  absl::Status problem;
  for (const auto& [t, index] : fetch) {
    const RedisReply& v = r[index];
    const TableEntry& e = m.tables[t];
    Filter f;
    if (v.is_string() && v.str().size() == e.size &&
        crc32c::Value(v.str().data(), v.str().size()) == e.crc) {
      f = DecodeFilter(v.str());
    }
    if (!f.valid && problem.ok()) {
      problem = absl::DataLossError(
          absl::StrCat("table filter ", e.id, " missing or unusable"));
    }
    (*filters)[t] = f;
  }
  return problem;
}

// Step 6 for the live sub-filters: decodes them into *live; false when any
// is missing or unusable.
bool DecodeLiveFilters(const std::vector<RedisReply>& r, const ProbePipeline& p,
                       std::vector<Filter>* live) {
  for (size_t j = 0; j < p.subs.size(); j++) {
    const RedisReply& v = r[p.first_live + j];
    if (!LiveSubFilterOk(v, p.subs[j])) return false;
    live->push_back(DecodeFilter(v.str()));
  }
  return true;
}

// Step 7: (*maybe)[i] for every unresolved key: whether a candidate table
// filter or any live sub-filter may hold it.
void AnswerKeys(std::span<const std::string> keys, const KeyCandidates& c,
                const std::map<size_t, Filter>& filters,
                const std::vector<Filter>& live, std::vector<bool>* maybe) {
  for (size_t i = 0; i < keys.size(); i++) {
    if (c.resolved[i]) continue;
    const uint64_t h = XXH3_64bits(keys[i].data(), keys[i].size());
    bool may = false;
    for (size_t t : c.tables[i]) {
      // A table without a decoded filter answers "maybe".
      auto f = filters.find(t);
      if (f == filters.end() || FilterMayMatch(f->second, h)) {
        may = true;
        break;
      }
    }
    for (size_t j = 0; !may && j < live.size(); j++) {
      may = FilterMayMatch(live[j], h);
    }
    (*maybe)[i] = may;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<V1Reader>> V1Reader::Connect(
    const std::string& endpoint, const std::string& name) {
  RedisClientOptions o;
  o.endpoint = endpoint;
  o.connect_timeout = absl::Seconds(1);
  o.command_timeout = absl::Seconds(2);
  o.retry_deadline = absl::Seconds(2);
  auto redis = RedisClient::Connect(o);
  if (!redis.ok()) return redis.status();
  return std::unique_ptr<V1Reader>(new V1Reader(std::move(*redis), name));
}

absl::Status V1Reader::MayContain(std::span<const std::string> keys,
                                  std::vector<bool>* maybe) {
  for (int attempt = 0; attempt < 3; attempt++) {
    maybe->assign(keys.size(), true);
    bool retry = false;
    absl::Status s = TryOnce(keys, maybe, &retry);
    if (!retry) return s;
  }
  maybe->assign(keys.size(), true);
  return absl::AbortedError("manifest kept changing");
}

absl::Status V1Reader::TryOnce(std::span<const std::string> keys,
                               std::vector<bool>* maybe, bool* retry) {
  const std::string prefix = absl::StrCat("siftdb:{", name_, "}:");
  // 1. The manifest.
  auto got = redis_->Command({"HGETALL", prefix + "manifest"});
  if (!got.ok()) return got.status();
  Manifest m;
  if (absl::Status s = ParseManifest(*got, &m); !s.ok()) return s;

  // 2. Candidate tables of each key.
  KeyCandidates candidates = FindCandidates(m, keys);

  // 3. One pipeline: lease, manifest version, table filters, live
  // sub-filters (whole), lease again.
  const ProbePipeline pipeline =
      BuildProbePipeline(prefix, m, &candidates.fetch);
  auto r = redis_->Pipeline(pipeline.cmds);
  if (!r.ok()) return r.status();
  if (r->size() != pipeline.cmds.size()) {
    return absl::InternalError("short pipeline");
  }

  // 4. Trust and 5. the listing is current.
  if (absl::Status s = CheckTrusted(*r, m, retry); !s.ok()) return s;
  // The watermark (async mirrors: what the answers cover).
  watermark_ = ParseWatermark((*r)[1], m.mode);

  // 6. Checks, then 7. answers.
  std::map<size_t, Filter> filters;  // table -> decoded (invalid: unusable)
  absl::Status problem = DecodeTableFilters(*r, m, candidates.fetch, &filters);
  std::vector<Filter> live;
  const bool live_ok = DecodeLiveFilters(*r, pipeline, &live);
  if (!live_ok && problem.ok()) {
    problem = absl::DataLossError("live sub-filter missing or unusable");
  }
  if (live_ok) AnswerKeys(keys, candidates, filters, live, maybe);
  return problem;
}

}  // namespace siftdb::compat
