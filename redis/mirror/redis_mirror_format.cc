// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/mirror/redis_mirror_format.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "filter/blocked_bloom.h"
#include "filter/bloom_math.h"
#include "filter/classic_bloom.h"
#include "filter/filter_format.h"
#include "filter/partitioned_filter.h"
#include "filter/ribbon_reader.h"
#include "util/absl_compat.h"

namespace siftdb {

namespace {

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  if (text.empty()) return false;
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool IsToken(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string_view> SplitSpaces(std::string_view s) {
  std::vector<std::string_view> out;
  for (absl::string_view piece : absl::StrSplit(AsAbsl(s), ' ')) {
    out.push_back(AsStd(piece));
  }
  return out;
}

// Hex of a user key, "-" for the empty key.
std::string KeyHex(std::string_view key) {
  return key.empty() ? "-" : HexEncode(key);
}
bool KeyFromHex(std::string_view hex, std::string* out) {
  if (hex == "-") {
    out->clear();
    return true;
  }
  return !hex.empty() && HexDecode(hex, out);
}

absl::Status BadField(std::string_view field, std::string_view value,
                      std::string_view why) {
  return absl::DataLossError(
      absl::StrFormat("mirror manifest field \"%s\" = \"%s\": %s",
                      absl::CHexEscape(AsAbsl(field)),
                      absl::CHexEscape(AsAbsl(value.substr(0, 200))), why));
}

}  // namespace

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.resize(bytes.size() * 2);
  for (size_t i = 0; i < bytes.size(); i++) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = kDigits[c >> 4];
    out[2 * i + 1] = kDigits[c & 15];
  }
  return out;
}

bool HexDecode(std::string_view hex, std::string* out) {
  if (hex.size() % 2 != 0) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  out->clear();
  out->reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

absl::Status ValidateMirrorName(std::string_view name) {
  if (!IsToken(name)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Options.remote_filter.name = \"%s\": must be 1..128 characters of "
        "[A-Za-z0-9_.-]",
        absl::CHexEscape(AsAbsl(name))));
  }
  return absl::OkStatus();
}

MirrorKeys::MirrorKeys(std::string_view name)
    : name_(name), prefix_(absl::StrCat("siftdb:{", AsAbsl(name), "}:")) {}

std::string MirrorKeys::immutable(uint64_t id) const {
  return absl::StrCat(prefix_, "sst:", id);
}
std::string MirrorKeys::immutable_meta(uint64_t id) const {
  return absl::StrCat(prefix_, "sst:", id, ":meta");
}
std::string MirrorKeys::live(std::string_view writer, uint64_t id,
                             int subfilter) const {
  return absl::StrCat(prefix_, "mem:", AsAbsl(writer), ":", id, ":", subfilter);
}
std::string MirrorKeys::live_meta(std::string_view writer, uint64_t id) const {
  return absl::StrCat(prefix_, "mem:", AsAbsl(writer), ":", id, ":meta");
}

std::string NewWriterToken() {
  std::random_device rd;
  const uint64_t r = (uint64_t{rd()} << 32) ^ rd();
  const int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  return absl::StrFormat("%013d-%016x", ms, r);
}

bool IsWriterToken(std::string_view t) {
  if (t.size() != 30 || t[13] != '-') return false;
  for (size_t i = 0; i < t.size(); i++) {
    if (i == 13) continue;
    const char c = t[i];
    const bool digit = c >= '0' && c <= '9';
    if (i < 13 ? !digit : !(digit || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string EncodeLease(const MirrorLease& lease) {
  return absl::StrCat(lease.token, " ", lease.replid);
}

bool DecodeLease(std::string_view value, MirrorLease* lease) {
  const size_t space = value.find(' ');
  if (space == std::string_view::npos || space == 0 ||
      space + 1 >= value.size() ||
      value.find(' ', space + 1) != std::string_view::npos) {
    return false;
  }
  lease->token = std::string(value.substr(0, space));
  lease->replid = std::string(value.substr(space + 1));
  return true;
}

bool ParseRedisIdentity(std::string_view info, RedisIdentity* out) {
  *out = RedisIdentity();
  for (absl::string_view line : absl::StrSplit(AsAbsl(info), '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view name = line.substr(0, colon);
    const std::string value(line.substr(colon + 1));
    if (name == "role") {
      out->role = value;
    } else if (name == "master_replid") {
      out->replid = value;
    } else if (name == "master_link_status") {
      out->link_status = value;
    } else if (name == "uptime_in_seconds") {
      if (!absl::SimpleAtoi(value, &out->uptime_s)) out->uptime_s = -1;
    }
  }
  return !out->role.empty() && !out->replid.empty();
}

std::vector<std::string> MirrorManifest::FilterKeys(
    const MirrorKeys& keys) const {
  std::vector<std::string> out;
  for (const MirrorImmutableEntry& e : immutables) {
    if (e.size > 0) out.push_back(keys.immutable(e.id));
  }
  for (const MirrorLiveEntry& e : lives) {
    for (size_t i = 0; i < e.subfilters.size(); i++) {
      out.push_back(keys.live(writer, e.id, static_cast<int>(i)));
    }
  }
  return out;
}

std::string ImmutableField(uint64_t id) {
  return absl::StrCat(mirror_field::kImmutablePrefix, id);
}
std::string LiveField(uint64_t id) {
  return absl::StrCat(mirror_field::kLivePrefix, id);
}

std::string EncodeImmutableValue(const MirrorImmutableEntry& e) {
  return absl::StrFormat("%d %d %08x %s %s %s", e.level, e.size, e.crc32c,
                         IsToken(e.policy) ? e.policy : std::string("?"),
                         KeyHex(e.smallest), KeyHex(e.largest));
}

std::string EncodeLiveValue(const MirrorLiveEntry& e) {
  std::string out;
  for (const MirrorSubFilter& s : e.subfilters) {
    if (!out.empty()) out += ' ';
    absl::StrAppend(&out, s.num_blocks, ":", s.k);
  }
  return out;
}

absl::Status DecodeImmutableValue(std::string_view value,
                                  MirrorImmutableEntry* e) {
  std::vector<std::string_view> f = SplitSpaces(value);
  uint32_t crc = 0;
  if (f.size() != 6 || !ParseNumber(f[0], &e->level) || e->level < 0 ||
      e->level > 100 || !ParseNumber(f[1], &e->size) || f[2].size() != 8 ||
      !absl::SimpleHexAtoi(AsAbsl(f[2]), &crc) || f[3].empty() ||
      !KeyFromHex(f[4], &e->smallest) || !KeyFromHex(f[5], &e->largest)) {
    return absl::DataLossError("malformed immutable filter entry");
  }
  e->crc32c = crc;
  e->policy = std::string(f[3]);
  return absl::OkStatus();
}

absl::Status DecodeLiveValue(std::string_view value, MirrorLiveEntry* e) {
  e->subfilters.clear();
  if (value.empty())
    return absl::DataLossError("live filter without sub-filters");
  for (std::string_view piece : SplitSpaces(value)) {
    size_t colon = piece.find(':');
    MirrorSubFilter s;
    if (colon == std::string_view::npos ||
        !ParseNumber(piece.substr(0, colon), &s.num_blocks) ||
        s.num_blocks == 0 || !ParseNumber(piece.substr(colon + 1), &s.k) ||
        s.k < 1 || s.k > kMaxProbes) {
      return absl::DataLossError("malformed live sub-filter");
    }
    e->subfilters.push_back(s);
  }
  if (e->subfilters.size() > 64) {
    return absl::DataLossError("too many live sub-filters");
  }
  return absl::OkStatus();
}

std::string ImmutableExtField(uint64_t id) {
  return absl::StrCat(mirror_field::kImmutableExtPrefix, id);
}
std::string LiveExtField(uint64_t id) {
  return absl::StrCat(mirror_field::kLiveExtPrefix, id);
}

bool NeedsExtension(bool whole_keys, std::string_view prefix_extractor) {
  return !whole_keys || !prefix_extractor.empty();
}

std::string EncodeEntryExtension(bool whole_keys,
                                 std::string_view prefix_extractor) {
  std::string name = "-";
  if (!prefix_extractor.empty()) {
    name = IsToken(prefix_extractor) ? std::string(prefix_extractor) : "?";
  }
  return absl::StrCat(whole_keys ? "1" : "0", " ", name);
}

absl::Status DecodeEntryExtension(std::string_view value, bool* whole_keys,
                                  std::string* prefix_extractor) {
  std::vector<std::string_view> f = SplitSpaces(value);
  // Words after the second are later additions: ignored.
  if (f.size() < 2 || (f[0] != "0" && f[0] != "1") || f[1].empty() ||
      (f[1] != "-" && f[1] != "?" && !IsToken(f[1]))) {
    return absl::DataLossError("malformed filter entry extension");
  }
  *whole_keys = f[0] == "1";
  *prefix_extractor = f[1] == "-" ? std::string() : std::string(f[1]);
  return absl::OkStatus();
}

std::vector<std::pair<std::string, std::string>> EncodeEntryFields(
    const MirrorManifest& m) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const MirrorImmutableEntry& e : m.immutables) {
    out.emplace_back(ImmutableField(e.id), EncodeImmutableValue(e));
    if (NeedsExtension(e.whole_keys, e.prefix_extractor)) {
      out.emplace_back(ImmutableExtField(e.id),
                       EncodeEntryExtension(e.whole_keys, e.prefix_extractor));
    }
  }
  for (const MirrorLiveEntry& e : m.lives) {
    out.emplace_back(LiveField(e.id), EncodeLiveValue(e));
    if (NeedsExtension(e.whole_keys, e.prefix_extractor)) {
      out.emplace_back(LiveExtField(e.id),
                       EncodeEntryExtension(e.whole_keys, e.prefix_extractor));
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> EncodeManifest(
    const MirrorManifest& m) {
  namespace f = mirror_field;
  std::vector<std::pair<std::string, std::string>> out = {
      {f::kFormat, absl::StrCat(m.format)},
      {f::kGeneration, m.generation},
      {f::kVersion, absl::StrCat(m.version)},
      {f::kMode, m.mode},
      {f::kComparator, m.comparator},
      {f::kWriter, m.writer},
      {f::kLeaseTtlMs, absl::StrCat(m.lease_ttl_ms)},
      {f::kGraceMs, absl::StrCat(m.grace_ms)},
      {f::kCompleteSeq, absl::StrCat(m.complete_seq)},
      {f::kCompleteMs, absl::StrCat(m.complete_ms)},
  };
  for (auto& f : EncodeEntryFields(m)) out.push_back(std::move(f));
  return out;
}

absl::StatusOr<MirrorManifest> DecodeManifest(
    const std::vector<std::pair<std::string, std::string>>& fields) {
  namespace f = mirror_field;
  if (fields.empty()) return absl::NotFoundError("no mirror manifest");
  MirrorManifest m;
  bool have_format = false, have_generation = false, have_version = false;
  bool have_writer = false;
  // Extensions, applied to their entries once all entries are known.
  struct Extension {
    uint64_t id;
    bool whole_keys;
    std::string prefix_extractor;
  };
  std::vector<Extension> imm_ext, live_ext;
  for (const auto& [field, value] : fields) {
    std::string_view name = field;
    if (name == f::kFormat) {
      if (!ParseNumber(value, &m.format)) {
        return BadField(field, value, "not a number");
      }
      if (m.format == kMirrorFormatV1) {
        return BadField(field, value,
                        "format 1, published by an engine older than this "
                        "reader (no writer fencing, no Redis identity in the "
                        "lease): upgrade the engine (docs/redis_mirror.md §7)");
      }
      if (m.format != kMirrorFormat) {
        return BadField(field, value,
                        absl::StrFormat("unknown format (this reader knows %d)",
                                        kMirrorFormat));
      }
      have_format = true;
    } else if (name == f::kGeneration) {
      if (value.empty()) return BadField(field, value, "empty");
      m.generation = value;
      have_generation = true;
    } else if (name == f::kVersion) {
      if (!ParseNumber(value, &m.version)) {
        return BadField(field, value, "not a number");
      }
      have_version = true;
    } else if (name == f::kMode) {
      m.mode = value;
    } else if (name == f::kComparator) {
      m.comparator = value;
    } else if (name == f::kWriter) {
      if (!IsWriterToken(value))
        return BadField(field, value, "not a writer token");
      m.writer = value;
      have_writer = true;
    } else if (name == f::kLeaseTtlMs || name == f::kGraceMs ||
               name == f::kCompleteMs) {
      int64_t v;
      if (!ParseNumber(value, &v))
        return BadField(field, value, "not a number");
      if (name == f::kLeaseTtlMs) m.lease_ttl_ms = v;
      if (name == f::kGraceMs) m.grace_ms = v;
      if (name == f::kCompleteMs) m.complete_ms = v;
    } else if (name == f::kCompleteSeq) {
      if (!ParseNumber(value, &m.complete_seq)) {
        return BadField(field, value, "not a number");
      }
    } else if (name.starts_with(f::kImmutablePrefix)) {
      MirrorImmutableEntry e;
      if (!ParseNumber(name.substr(4), &e.id)) {
        return BadField(field, value, "bad id");
      }
      absl::Status s = DecodeImmutableValue(value, &e);
      if (!s.ok()) return BadField(field, value, AsStd(s.message()));
      m.immutables.push_back(std::move(e));
    } else if (name.starts_with(f::kLivePrefix)) {
      MirrorLiveEntry e;
      if (!ParseNumber(name.substr(4), &e.id)) {
        return BadField(field, value, "bad id");
      }
      absl::Status s = DecodeLiveValue(value, &e);
      if (!s.ok()) return BadField(field, value, AsStd(s.message()));
      m.lives.push_back(std::move(e));
    } else if (name.starts_with(f::kImmutableExtPrefix) ||
               name.starts_with(f::kLiveExtPrefix)) {
      const bool live = name.starts_with(f::kLiveExtPrefix);
      Extension x;
      if (!ParseNumber(name.substr(5), &x.id)) {
        return BadField(field, value, "bad id");
      }
      absl::Status s =
          DecodeEntryExtension(value, &x.whole_keys, &x.prefix_extractor);
      if (!s.ok()) return BadField(field, value, AsStd(s.message()));
      (live ? live_ext : imm_ext).push_back(std::move(x));
    }
    // Anything else (e.g. "writes", fields of later formats): skipped.
  }
  if (!have_format || !have_generation || !have_version || !have_writer) {
    return absl::DataLossError(absl::StrFormat(
        "mirror manifest incomplete: missing%s%s%s%s (a partial write, or "
        "Redis lost data)",
        have_format ? "" : " format", have_generation ? "" : " generation",
        have_version ? "" : " version", have_writer ? "" : " writer"));
  }
  std::sort(m.immutables.begin(), m.immutables.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  std::sort(m.lives.begin(), m.lives.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  // "mem:16" and "mem:016" are distinct fields naming one filter: refuse
  // rather than guess which one is meant (readers then fail open).
  for (size_t i = 1; i < m.immutables.size(); i++) {
    if (m.immutables[i].id == m.immutables[i - 1].id) {
      return absl::DataLossError(absl::StrFormat(
          "mirror manifest lists table %d twice", m.immutables[i].id));
    }
  }
  for (size_t i = 1; i < m.lives.size(); i++) {
    if (m.lives[i].id == m.lives[i - 1].id) {
      return absl::DataLossError(absl::StrFormat(
          "mirror manifest lists MemTable filter %d twice", m.lives[i].id));
    }
  }
  // An extension belongs to a listed entry; one for an entry that is not
  // listed, or two for one entry, is refused rather than guessed at.
  auto apply = [](auto& entries, std::vector<Extension>& ext,
                  const char* what) -> absl::Status {
    std::sort(ext.begin(), ext.end(),
              [](const auto& a, const auto& b) { return a.id < b.id; });
    for (size_t i = 0; i < ext.size(); i++) {
      if (i > 0 && ext[i].id == ext[i - 1].id) {
        return absl::DataLossError(absl::StrFormat(
            "mirror manifest extends %s filter %d twice", what, ext[i].id));
      }
      auto it = std::lower_bound(
          entries.begin(), entries.end(), ext[i].id,
          [](const auto& e, uint64_t id) { return e.id < id; });
      if (it == entries.end() || it->id != ext[i].id) {
        return absl::DataLossError(absl::StrFormat(
            "mirror manifest extends %s filter %d, which it does not list",
            what, ext[i].id));
      }
      it->whole_keys = ext[i].whole_keys;
      it->prefix_extractor = std::move(ext[i].prefix_extractor);
    }
    return absl::OkStatus();
  };
  absl::Status s = apply(m.immutables, imm_ext, "table");
  if (s.ok()) s = apply(m.lives, live_ext, "MemTable");
  if (!s.ok()) return s;
  return m;
}

namespace {

// A partitioned filter: its partitions' bits, the first one's k, and the
// error rate averaged over the partitions, each given a share of num_keys
// in proportion to its bytes.
FilterBytesInfo DescribePartitionedFilter(std::string_view filter,
                                          uint64_t num_keys) {
  FilterBytesInfo info;
  FilterPartitionIndex index;
  if (!FilterPartitionIndex::Parse(filter, &index)) return info;
  uint64_t total = 0;
  for (size_t i = 0; i < index.size(); i++) total += index.entry(i).size;
  double rate = 0;
  for (size_t i = 0; i < index.size(); i++) {
    const FilterPartitionIndex::Entry& e = index.entry(i);
    const double share =
        total == 0 ? 0
                   : static_cast<double>(e.size) / static_cast<double>(total);
    const std::string_view inner = filter.substr(e.offset, e.size);
    // Partitions are never partitioned (and no recursion on crafted bytes).
    if (IsPartitionedFilter(inner)) return FilterBytesInfo();
    const FilterBytesInfo p = DescribeFilterBytes(
        inner, static_cast<uint64_t>(std::llround(share * num_keys)));
    if (!p.valid) return FilterBytesInfo();
    info.bitmap_bits += p.bitmap_bits;
    if (i == 0) info.k = p.k;
    rate += share * p.error_rate;
  }
  info.kind = 'P';
  info.error_rate = num_keys == 0 ? 0 : rate;
  info.valid = true;
  return info;
}

}  // namespace

FilterBytesInfo DescribeFilterBytes(std::string_view filter,
                                    uint64_t num_keys) {
  FilterBytesInfo info;
  FilterTrailer t;
  if (!DecodeFilterTrailer(filter, &t)) return info;
  if (t.kind == FilterKind::kPartitioned) {
    return DescribePartitionedFilter(filter, num_keys);
  }
  if (t.kind == FilterKind::kBlocked) {
    ParsedBlockedBloom p(filter);
    if (!p.valid()) return info;
    info.kind = 'B';
    info.bitmap_bits = uint64_t{p.num_blocks()} * kBlockBits;
    info.k = p.k();
    info.error_rate =
        num_keys == 0 ? 0
                      : BlockedFpRate(static_cast<double>(info.bitmap_bits) /
                                          static_cast<double>(num_keys),
                                      p.k());
  } else if (t.kind == FilterKind::kClassic) {
    ParsedClassicBloom p(filter);
    if (!p.valid()) return info;
    info.kind = 'C';
    info.bitmap_bits = p.num_bits();
    info.k = p.k();
    info.error_rate =
        num_keys == 0 ? 0 : ClassicFpRateExact(p.num_bits(), num_keys, p.k());
  } else if (t.kind == FilterKind::kRibbon) {
    ParsedRibbon p(filter);
    if (!p.valid()) return info;
    const RibbonLayout& l = p.layout();
    info.kind = 'R';
    info.bitmap_bits = l.WordsBefore(l.num_blocks) * kRibbonWordBytes * 8;
    info.k = l.lower_columns;
    // Keys start uniformly among the start rows; those in the upper blocks
    // are checked on one more column.
    const double starts = static_cast<double>(l.NumStarts());
    const double upper = std::clamp(
        (starts - static_cast<double>(l.upper_start) * kRibbonWidth) / starts,
        0.0, 1.0);
    const double low = std::ldexp(1.0, -l.lower_columns);
    info.error_rate = num_keys == 0 ? 0 : (1 - upper) * low + upper * low / 2;
  } else {
    return info;
  }
  info.valid = true;
  return info;
}

std::vector<std::pair<std::string, std::string>> MetaFields(
    const MirrorFilterMeta& meta) {
  std::vector<std::pair<std::string, std::string>> out = {
      {"kind", meta.kind},
      {"capacity", absl::StrCat(meta.capacity)},
      {"error_rate", absl::StrFormat("%.6g", meta.error_rate)},
      {"bitmap_size", absl::StrCat(meta.bitmap_size)},
      {"hash_count", absl::StrCat(meta.hash_count)},
      {"inserted_count", absl::StrCat(meta.inserted_count)},
      {"version", absl::StrCat(meta.version)},
  };
  if (meta.level >= 0) {
    out.emplace_back("level", absl::StrCat(meta.level));
    out.emplace_back("smallest", meta.smallest);
    out.emplace_back("largest", meta.largest);
    out.emplace_back("bytes", absl::StrCat(meta.bytes));
    out.emplace_back("crc32c", absl::StrFormat("%08x", meta.crc32c));
  } else {
    out.emplace_back("subfilters", absl::StrCat(meta.subfilters));
  }
  return out;
}

std::string SubFilterTrailer(const MirrorSubFilter& s) {
  std::string out(kFilterTrailerSize, '\0');
  FilterTrailer t;
  t.param = s.num_blocks;
  t.k = static_cast<uint8_t>(s.k);
  t.kind = FilterKind::kBlocked;
  EncodeFilterTrailer(t, out.data());
  return out;
}

std::string EmptySubFilter(const MirrorSubFilter& s) {
  std::string out(size_t{s.num_blocks} * kBlockBytes, '\0');
  out += SubFilterTrailer(s);
  return out;
}

}  // namespace siftdb
