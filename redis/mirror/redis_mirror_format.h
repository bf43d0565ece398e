// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Redis mirror of a database's filters, as bytes in Redis: key names,
// the manifest (a Redis hash), the meta hashes, and the fingerprints that let
// a reader check what it fetched. Both the engine's writer
// (redis/mirror/redis_mirror_writer.h) and the remote reader
// (include/siftdb/remote_filter.h) use only these definitions; the full
// protocol, for readers in other languages, is docs/redis_mirror.md.
//
// The filter layer knows filters, not tables: an "immutable filter" is a
// serialized filter (docs/filter_format.md) published once under a numeric
// id with a level and a key range (the engine uses a table's number); a
// "live filter" is a growing chain of blocked Bloom sub-filters under a
// numeric id (the engine uses a MemTable's log number).
//
// Keys (every key of one mirror shares the hash tag {name}, so in a Redis
// Cluster all of them live in one slot and one script may touch them all):
//   siftdb:{name}:manifest        hash   the manifest (fields below)
//   siftdb:{name}:lease           string the lease token, with a TTL
//   siftdb:{name}:sst:<id>        string an immutable filter, byte for byte
//   siftdb:{name}:sst:<id>:meta   hash   its meta (MetaFields below)
//   siftdb:{name}:mem:<writer>:<id>:<i>  string sub-filter i of live filter
//                                        <id> of the engine open <writer>
//   siftdb:{name}:mem:<writer>:<id>:meta hash   the live filter's meta
// Live filters are named by the writer (the fencing token of one engine
// open, the manifest's "writer" field), so a stale second engine's raw
// writes can never touch the bits the current writer lists.
//
// Persisted: key names, field names and value encodings never change; a
// change is a new kMirrorFormat. A decoder that meets what it does not
// understand reports an error, and readers then answer "maybe".
//
// Thread safety: plain values and pure functions.

#ifndef SIFTDB_REDIS_MIRROR_REDIS_MIRROR_FORMAT_H_
#define SIFTDB_REDIS_MIRROR_REDIS_MIRROR_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace siftdb {

// Manifest "format" value. Persisted: never change. Format 1 (until
// 2026-11) had no writer, no identity in the lease and unnamespaced live
// keys; this reader answers "maybe" for it (docs/redis_mirror.md §7).
inline constexpr int kMirrorFormat = 2;
inline constexpr int kMirrorFormatV1 = 1;

// Manifest field names. Persisted: never change.
namespace mirror_field {
inline constexpr char kFormat[] = "format";
inline constexpr char kGeneration[] = "generation";
inline constexpr char kVersion[] = "version";
inline constexpr char kMode[] = "mode";
inline constexpr char kComparator[] = "comparator";
inline constexpr char kLeaseTtlMs[] = "lease_ttl_ms";
inline constexpr char kGraceMs[] = "grace_ms";
inline constexpr char kCompleteSeq[] = "complete_seq";
inline constexpr char kCompleteMs[] = "complete_ms";
inline constexpr char kWrites[] = "writes";
// Format 2: the fencing token of the engine open that published
// (WriterToken).
inline constexpr char kWriter[] = "writer";
// Entry fields are "sst:<id>" and "mem:<id>".
inline constexpr char kImmutablePrefix[] = "sst:";
inline constexpr char kLivePrefix[] = "mem:";
// Entry extensions (added 2026-11, still format 2): "sstx:<id>" and
// "memx:<id>" say what else the filter of entry "sst:<id>" / "mem:<id>"
// holds (EncodeEntryExtension). Written only when it differs from "whole
// keys, no prefixes"; readers that predate them skip them as unknown
// fields, which is safe (docs/redis_mirror.md §3.4.1).
inline constexpr char kImmutableExtPrefix[] = "sstx:";
inline constexpr char kLiveExtPrefix[] = "memx:";
}  // namespace mirror_field

// Mirror names: 1..128 bytes of [A-Za-z0-9_.-] (no braces, so the hash tag
// is exactly the name). InvalidArgument naming the option otherwise.
absl::Status ValidateMirrorName(std::string_view name);

// A writer (fencing) token: "<13-digit Unix ms of the open>-<16 hex
// random>". Tokens order by open time as strings: the later open wins, an
// earlier one is fenced. NewWriterToken draws one; IsWriterToken checks the
// shape.
std::string NewWriterToken();
bool IsWriterToken(std::string_view token);

// The lease value (format 2): "<token> <replid>", where token is unique per
// acquisition and replid is the master_replid of the server the commit ran
// on (a restart, a failover, a replica promoted all change it).
struct MirrorLease {
  std::string token;
  std::string replid;
};
std::string EncodeLease(const MirrorLease& lease);
bool DecodeLease(std::string_view value, MirrorLease* lease);

// What a reader needs from INFO replication: role ("master" or "slave"),
// master_replid, and for a replica master_link_status ("up" / "down");
// and from INFO server, uptime_in_seconds (-1 when absent).
struct RedisIdentity {
  std::string role;
  std::string replid;
  std::string link_status;
  int64_t uptime_s = -1;
};
// False when the text lacks role or master_replid.
bool ParseRedisIdentity(std::string_view info, RedisIdentity* out);

class MirrorKeys {
 public:
  explicit MirrorKeys(std::string_view name);

  const std::string& name() const { return name_; }
  // "siftdb:{name}:"; also the routing key of every pipeline.
  const std::string& prefix() const { return prefix_; }
  std::string manifest() const { return prefix_ + "manifest"; }
  std::string lease() const { return prefix_ + "lease"; }
  std::string immutable(uint64_t id) const;
  std::string immutable_meta(uint64_t id) const;
  std::string live(std::string_view writer, uint64_t id, int subfilter) const;
  std::string live_meta(std::string_view writer, uint64_t id) const;

 private:
  std::string name_;
  std::string prefix_;
};

// A published immutable filter as the manifest lists it.
struct MirrorImmutableEntry {
  uint64_t id = 0;
  int level = 0;
  uint64_t size = 0;    // bytes of the filter (0: the table has no filter)
  uint32_t crc32c = 0;  // crc32c::Value of the bytes (unmasked)
  // FilterPolicy name, or "?" when it is not a plain token.
  std::string policy;
  // Inclusive user-key range of the keys the filter covers.
  std::string smallest;
  std::string largest;
  // From the "sstx:<id>" extension (defaults when there is none): whether
  // the filter holds the whole keys, and the SliceTransform name whose
  // prefixes it also holds ("" when none; "?" when the name is not a
  // token, which no reader can match).
  bool whole_keys = true;
  std::string prefix_extractor;

  bool operator==(const MirrorImmutableEntry&) const = default;
};

// One blocked Bloom sub-filter of a live filter: num_blocks 64-byte blocks,
// k probes; stored as the standard serialized blocked filter
// (docs/filter_format.md), num_blocks * 64 + 8 bytes.
struct MirrorSubFilter {
  uint32_t num_blocks = 0;
  int k = 0;
  bool operator==(const MirrorSubFilter&) const = default;
  uint64_t bytes() const { return uint64_t{num_blocks} * 64 + 8; }
};

struct MirrorLiveEntry {
  uint64_t id = 0;
  std::vector<MirrorSubFilter> subfilters;
  // From the "memx:<id>" extension, as for MirrorImmutableEntry.
  bool whole_keys = true;
  std::string prefix_extractor;
  bool operator==(const MirrorLiveEntry&) const = default;
};

struct MirrorManifest {
  int format = kMirrorFormat;
  std::string generation;  // changes with every full (re)publication
  uint64_t version = 0;    // bumped atomically with every listing change
  std::string mode;        // "sync" or "async"
  std::string comparator;  // the DB's comparator name (ranges' order)
  std::string writer;      // fencing token of the publishing engine open
  int64_t lease_ttl_ms = 0;
  int64_t grace_ms = 0;
  // Async mode: every write acknowledged before complete_ms (Unix ms) is in
  // the mirror, and so is every sequence number <= complete_seq. Sync mode
  // keeps them current too.
  uint64_t complete_seq = 0;
  int64_t complete_ms = 0;
  std::vector<MirrorImmutableEntry> immutables;  // sorted by id
  std::vector<MirrorLiveEntry> lives;            // sorted by id

  // The keys every listed filter lives at (not meta keys).
  std::vector<std::string> FilterKeys(const MirrorKeys& keys) const;
};

// Entry fields and values.
std::string ImmutableField(uint64_t id);
std::string LiveField(uint64_t id);
// "<level> <size> <crc32c 8 hex> <policy> <smallest hex|-> <largest hex|->"
std::string EncodeImmutableValue(const MirrorImmutableEntry& e);
// "<blocks>:<k>[ <blocks>:<k>...]"
std::string EncodeLiveValue(const MirrorLiveEntry& e);
absl::Status DecodeImmutableValue(std::string_view value,
                                  MirrorImmutableEntry* e);
absl::Status DecodeLiveValue(std::string_view value, MirrorLiveEntry* e);

// Entry extensions: "sstx:<id>" / "memx:<id>" ->
// "<whole keys: 1|0> <prefix extractor name|->", single spaces; a reader
// ignores further space-separated words (room for later additions).
// NeedsExtension: false for whole keys without prefixes (no field then).
std::string ImmutableExtField(uint64_t id);
std::string LiveExtField(uint64_t id);
bool NeedsExtension(bool whole_keys, std::string_view prefix_extractor);
std::string EncodeEntryExtension(bool whole_keys,
                                 std::string_view prefix_extractor);
absl::Status DecodeEntryExtension(std::string_view value, bool* whole_keys,
                                  std::string* prefix_extractor);

// Every entry field of a manifest (entries and their extensions), by field
// name: what EncodeManifest writes after the header, and what a writer
// diffs between two listings.
std::vector<std::pair<std::string, std::string>> EncodeEntryFields(
    const MirrorManifest& m);

// The fields of a whole manifest (header fields and one per entry; the
// complete_* and writes fields included).
std::vector<std::pair<std::string, std::string>> EncodeManifest(
    const MirrorManifest& m);
// From HGETALL's (field, value) pairs. NotFound for an empty hash (no
// manifest); DataLoss naming the field for anything malformed or missing
// (an extension of an entry the manifest does not list included); unknown
// fields are skipped.
absl::StatusOr<MirrorManifest> DecodeManifest(
    const std::vector<std::pair<std::string, std::string>>& fields);

// What a serialized siftdb filter says about itself (from its trailer).
struct FilterBytesInfo {
  bool valid = false;        // decodes as a blocked, classic, Ribbon or
                             // partitioned filter (of those)
  char kind = '?';           // 'B', 'C', 'R' or 'P'
  uint64_t bitmap_bits = 0;  // Ribbon: bits of the solution
  int k = 0;                 // Ribbon: result columns of the lower blocks
  double error_rate = 1;     // expected for num_keys keys
};
FilterBytesInfo DescribeFilterBytes(std::string_view filter, uint64_t num_keys);

// Meta hash contents (field, value), for an immutable filter and for a live
// filter. Field names are persisted.
struct MirrorFilterMeta {
  uint64_t capacity = 0;
  double error_rate = 1;
  uint64_t bitmap_size = 0;  // bits of the bit array(s), trailers excluded
  int hash_count = 0;        // k (of the newest sub-filter for live ones)
  uint64_t inserted_count = 0;
  uint64_t version = 0;  // manifest version that first listed the filter
  int level = -1;        // -1: a live filter (no level)
  std::string smallest, largest;
  std::string kind;     // "immutable" or "live"
  int subfilters = 0;   // live filters
  uint64_t bytes = 0;   // immutable filters: size of the value
  uint32_t crc32c = 0;  // immutable filters: crc32c::Value of the value
};
std::vector<std::pair<std::string, std::string>> MetaFields(
    const MirrorFilterMeta& meta);

// The trailer every sub-filter carries (8 bytes), and a zeroed sub-filter.
std::string SubFilterTrailer(const MirrorSubFilter& s);
std::string EmptySubFilter(const MirrorSubFilter& s);

std::string HexEncode(std::string_view bytes);
bool HexDecode(std::string_view hex, std::string* out);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_MIRROR_REDIS_MIRROR_FORMAT_H_
