// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Options that control a database (Options), a read (ReadOptions) and a
// write (WriteOptions). Plain structs: copy them freely.
//
// Ownership: pointers held in Options (comparator, env, info_log) are not
// owned; they must outlive every DB opened with them. shared_ptr members are
// shared with the DB.

#ifndef SIFTDB_INCLUDE_OPTIONS_H_
#define SIFTDB_INCLUDE_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "siftdb/export.h"

namespace siftdb {

class Cache;
class Comparator;
class Env;
class FilterPolicy;
class Logger;
class RateLimiter;
class SliceTransform;
class Snapshot;

// How a data block is stored. Persisted in every block trailer: never change
// the values (they follow RocksDB's numbering; docs/table_format.md gives
// each one's block layout).
enum CompressionType : uint8_t {
  kNoCompression = 0x0,
  kSnappyCompression = 0x1,
  kLZ4Compression = 0x4,
  kZstdCompression = 0x7,
  // Not a block type (never stored): as Options::bottommost_compression it
  // means "no override, use the level's type" (RocksDB's
  // kDisableCompressionOption).
  kDisableCompressionOption = 0xff,
};

// Tuning of the compressors (RocksDB's CompressionOptions, the part siftdb
// uses). Readers need none of it: a block decodes the same whatever level
// wrote it.
struct CompressionOptions {
  // The library's own default level (zstd 3; LZ4's default fast mode).
  static constexpr int kDefaultCompressionLevel = 32767;
  // zstd: the level passed to ZSTD_compress (negative levels are the fast
  // ones; values past the library's range are clamped by it). LZ4: > 0
  // selects the high-compression coder at that level (LZ4 HC, clamped to
  // its maximum); < 0 the fast coder with acceleration -level; 0 or
  // kDefaultCompressionLevel the default coder. Ignored by Snappy.
  int level = kDefaultCompressionLevel;
  // zstd only (other types ignore both; RocksDB's names): when > 0, each
  // table compressed with zstd gets a dictionary of at most this many bytes
  // (stored in the table, docs/table_format.md), built from its first data
  // blocks, and every data block is compressed against it. Small blocks
  // share little with one another; a dictionary gives each the context of
  // the whole table. Costs: those first blocks wait in memory until the
  // dictionary is built, each open table holds its dictionary, and
  // building one costs CPU in every flush and compaction that writes zstd
  // (docs/compaction.md, "Compression dictionaries", has figures). 0
  // (default): no dictionary. Otherwise 256 to 16 MiB.
  size_t max_dict_bytes = 0;
  // With max_dict_bytes: 0 (default): the dictionary is raw block bytes
  // spread over the first 8 * max_dict_bytes of blocks (cheap). > 0:
  // zstd's trainer picks it from the first this many bytes of blocks
  // (smaller tables, more CPU per table; RocksDB suggests 100 times
  // max_dict_bytes). At most 1 GiB. The held-back blocks count toward the
  // table's size (target_file_size_base) only once written, so a table
  // grows to at least this many bytes of blocks before it is cut.
  size_t zstd_max_train_bytes = 0;
  // Read only in Options::bottommost_compression_opts (RocksDB's meaning):
  // true makes that struct, not compression_opts, the tuning of the tables
  // a compaction writes to the bottommost level. Ignored in
  // compression_opts.
  bool enabled = false;
};

// Limits enforced on every write; larger input is InvalidArgument.
inline constexpr size_t kMaxKeySize = size_t{1} << 20;         // 1 MiB
inline constexpr size_t kMaxValueSize = size_t{64} << 20;      // 64 MiB
inline constexpr size_t kMaxWriteBatchSize = size_t{1} << 30;  // 1 GiB

// Mirroring of the DB's filters into Redis, so that services without the DB
// can pre-check "could key K exist?" (docs/redis_mirror.md).
struct SIFTDB_EXPORT RemoteFilterOptions {
  enum class Mode {
    kOff,    // no mirror (default)
    kAsync,  // the mirror lags writes by a bounded amount; the Redis
             // manifest says up to which sequence and time it is complete
    kSync,   // a write returns only after its keys are in Redis (or the
             // mirror's lease has certainly lapsed, so readers fail open);
             // DB::Open likewise returns only after what recovery found is
             // in Redis (or a previous process's lease has lapsed: with
             // Redis unreachable, Open waits up to lease_ttl_ms)
  };
  Mode mode = Mode::kOff;
  // "host:port", "[ipv6]:port" or "unix:/path/to/socket". Several
  // endpoints: seed nodes of a Redis Cluster. Or one URL: redis://,
  // redis+sentinel:// (a Sentinel-managed master, followed across
  // failovers), unix://, and over TLS rediss:// and rediss+sentinel://
  // (grammar and TLS parameters in docs/redis_client.md); the URL's user,
  // password and database win over the fields below.
  std::vector<std::string> endpoints;
  std::string username;  // ACL user; empty: AUTH with password only
  std::string password;  // empty: no AUTH
  int connect_timeout_ms = 1000;
  int command_timeout_ms = 1000;
  // The DB's name in Redis: every key is under the hash tag {name}.
  std::string name;
  // Readers trust the mirror only while its lease key lives.
  int lease_ttl_ms = 10000;
  // Async mode: the most the mirror may lag behind acknowledged writes.
  int async_max_lag_ms = 100;
  // Sync mode: replicas that must acknowledge (WAIT) before a write
  // returns; 0: do not wait for replication.
  int wait_replicas = 0;
  int wait_timeout_ms = 1000;
  // A filter that the Redis manifest stops listing (a table compacted away,
  // a flushed MemTable) is deleted from Redis this long after, so readers
  // holding the previous manifest finish their probes (docs/redis_mirror.md).
  int delete_grace_ms = 10000;
};

struct SIFTDB_EXPORT Options {
  // Key order; persisted by name. Default: BytewiseComparator().
  const Comparator* comparator = nullptr;
  bool create_if_missing = false;
  bool error_if_exists = false;
  // Stop at the first sign of damage (e.g. a corrupt log record in the
  // middle of a log is DataLoss) instead of skipping it and logging.
  bool paranoid_checks = false;
  // Every table a flush or compaction writes is checked before the
  // MANIFEST names it, so a table damaged on its way to the disk is never
  // installed: it must open, every data block's CRC must match and its
  // entry count must be what was written. With paranoid_file_checks the
  // check also reads every entry back (key order, count, first and last
  // key), at a cost to flush and compaction (docs/benchmarks.md).
  // RocksDB's name and default.
  bool paranoid_file_checks = false;
  // File system; default Env::Default().
  Env* env = nullptr;
  // Where progress and errors are logged (docs/operations.md, "The LOG").
  // Default (null): the DB's own <dbpath>/LOG, rotated as the next two
  // fields say. A logger given here is used as it is: the two fields below
  // do not apply to it. A read-only open writes no LOG of its own.
  Logger* info_log = nullptr;
  // Size at which the DB's own LOG is rotated: once it passes this many
  // bytes it is renamed to LOG.old.<micros> (wall-clock microseconds) and a
  // new LOG begins. 0 (default): no size limit; the LOG is rotated only at
  // Open. Otherwise at least 4 KiB.
  size_t max_log_file_size = 0;
  // Rotated LOGs (LOG.old.*) to keep beside the live LOG; the oldest beyond
  // this are deleted at Open and at each rotation. In [1, 1000000].
  size_t keep_log_file_num = 1000;

  // --- Write path ---
  // Append the write-ahead log through a memory mapping (Env::NewWalFile)
  // instead of one write(2) per write group: the same durability (a
  // process crash loses no acknowledged write; a synced write is
  // fdatasync'd before it returns) for less CPU per write. A live or
  // crashed log then ends in up to 1 MiB of preallocated zeros, which
  // readers treat as its end (docs/wal_format.md). Where the file system
  // cannot preallocate, appends are buffered as with false.
  bool wal_mmap_writes = true;
  // MemTable size at which it is frozen and flushed to a level-0 table.
  size_t write_buffer_size = size_t{4} << 20;
  // Size of each MemTable's Bloom filter over its user keys, as a fraction
  // of write_buffer_size (in [0, 0.25]; 0 disables). Lets reads and seeks
  // of keys the MemTable does not hold skip its skiplist. The default
  // (1/16, 256 KiB for a 4 MiB buffer) gives ~80 bits per key for 100-byte
  // entries.
  double memtable_filter_ratio = 0.0625;

  // --- Tables ---
  // Upper bound on open table files (table cache capacity). At least 16.
  int max_open_files = 1000;
  // Tell the OS that tables are read at random offsets (RocksDB's option
  // of this name; its default too). For mapped tables (Env::Default maps
  // them) a page fault then reads only its page instead of the device's
  // read-ahead around it (read_ahead_kb: often 128 KiB, 8 MiB on the
  // benchmark VM), which, once the tables outgrow memory, makes every Get
  // read pages it does not need and evict ones it does. Scans,
  // compactions, table opens and MultiGet hint what they will read
  // (RandomAccessFile::WillRead) either way. false: the OS's read-around
  // on every fault.
  bool advise_random_on_open = true;
  // Cache of uncompressed data blocks, shared with every other DB opened
  // with the same one (NewLRUCache in siftdb/cache.h): one memory budget for
  // all of them. When set, block_cache_size is ignored. The blocks of a
  // closed DB stay in it until evicted.
  std::shared_ptr<Cache> block_cache;
  // Without block_cache: the byte capacity of this DB's own LRU cache of
  // uncompressed data blocks; 0: no block cache.
  size_t block_cache_size = size_t{8} << 20;
  // When true, table filters live in the block cache (block_cache, or this
  // DB's own of block_cache_size) instead of on the heap: charged to it
  // and evicted like data blocks, so filter memory is bounded by the
  // cache's capacity (RocksDB's cache_index_and_filter_blocks, for
  // filters; index blocks stay with their tables). A probe whose filter was
  // evicted reads it again (one read of the filter block); a reload that
  // fails answers "may match" (counter filter.load_errors). Without any
  // block cache filters stay on the heap. siftdb.filter-memory counts the
  // filters in both places. Default false: every open table keeps its
  // filter on the heap, bounded only by max_open_files.
  bool cache_filter_blocks = false;
  // With cache_filter_blocks: the filter of a table read at level 0 stays
  // pinned in the block cache until the table closes (RocksDB's
  // pin_l0_filter_and_index_blocks_in_cache), so the newest, most-probed
  // tables never reload theirs. A table moved down unchanged keeps its pin
  // until the table cache closes it.
  bool pin_l0_filter_blocks_in_cache = true;
  // Partitioned filters (RocksDB's partition_filters): a table whose
  // filter would exceed filter_partition_size bytes gets a filter cut into
  // partitions of about that size over consecutive key ranges, plus a small
  // index (docs/filter_format.md, kind 'P'), so a lookup reads one
  // partition. With cache_filter_blocks each partition is its own block
  // cache entry, loaded on demand, and only the index stays on the heap;
  // without it the whole filter stays on the heap as usual. Only tables
  // under the bytewise comparator, with one of siftdb's filter policies and
  // no prefix extractor or a built-in fixed/capped one, are partitioned;
  // others get the ordinary filter. Readers that predate partitioned
  // filters answer "may match" for these tables. Default false.
  bool partition_filters = false;
  // Target bytes of one filter partition (RocksDB's metadata_block_size).
  // Values below 64 act as 64.
  size_t filter_partition_size = 4096;
  // Approximate uncompressed size of a data block.
  size_t block_size = 4096;
  // Keys between restart points in a block (delta encoding). At least 1.
  int block_restart_interval = 16;
  // Compression tried on each data and index block (a block whose
  // compressed form saves less than 12.5% is stored raw). Overridden per
  // level by compression_per_level and at the bottom by
  // bottommost_compression; docs/operations.md says how to choose.
  CompressionType compression = kSnappyCompression;
  // The type for the tables written to each level: entry i for level i
  // (flushes write level 0; a compaction writes its output level). Levels
  // past the end use the last entry. Empty (default): `compression` for
  // every level.
  std::vector<CompressionType> compression_per_level;
  // The type for compaction outputs on the bottommost level: the output
  // level of a compaction when no deeper level holds any table (so the
  // bulk of a settled DB). kDisableCompressionOption (default): no
  // override. Flushes never count as bottommost (as in RocksDB), and a
  // table moved down unchanged keeps its blocks.
  CompressionType bottommost_compression = kDisableCompressionOption;
  // Compressor level for LZ4 and zstd, and zstd dictionaries (see
  // CompressionOptions).
  CompressionOptions compression_opts;
  // With .enabled: the tuning (level, dictionary) of the bottommost
  // compaction outputs, in place of compression_opts (RocksDB's field), so
  // that e.g. only the bulk of the data, at the bottom, pays for zstd
  // dictionaries or a higher level. Default: disabled (compression_opts
  // everywhere).
  CompressionOptions bottommost_compression_opts;
  // Bloom filter bits per key for every table; 0 disables filters.
  double filter_bits_per_key = 10;
  // When set, overrides the default blocked Bloom policy built from
  // filter_bits_per_key.
  std::shared_ptr<const FilterPolicy> filter_policy;
  // When set, the filter of every table and MemTable written from now on
  // also holds the prefix of each key in the extractor's domain, so a
  // prefix seek (ReadOptions::prefix_same_as_start, or an upper bound
  // inside the target's prefix) skips every table and MemTable whose
  // filter rejects the target's prefix (docs/prefix_filters.md). Its
  // Name() is recorded in each table: tables built under another name (or
  // none) are never used for prefix decisions, so changing the extractor
  // across reopens is safe. null (default): whole keys only.
  std::shared_ptr<const SliceTransform> prefix_extractor;
  // Whether table filters hold whole keys (for Get, MultiGet, KeyMayExist
  // and exact seeks). false keeps only prefixes (smaller filters); a Get
  // then probes the filter with its key's prefix. Only meaningful with a
  // prefix_extractor (without one whole keys are always kept).
  bool whole_key_filtering = true;
  // When true, a compaction whose output level is the bottommost one (no
  // deeper level holds a table) writes its tables without a filter
  // (RocksDB's option and name). The bottom level holds most of the keys,
  // so most of the filter memory goes; a read of a key that is present
  // gains nothing from a filter anyway, but a read of an absent key then
  // reads a data block of each bottom table whose key range covers it.
  // Flushes (level 0) and the other levels keep their filters, and a table
  // moved down unchanged keeps its own. Default false. Refused (Open:
  // InvalidArgument) with remote_filter on: the Redis mirror needs every
  // table's filter.
  bool optimize_filters_for_hits = false;
  // Per-level filter sizes (docs/operations.md). Both apply to the tables
  // written from now on: a flush writes level 0, a compaction its output
  // level; a table moved down unchanged keeps its filter. Each table's
  // filter records its own parameters (the filter bytes carry k and their
  // size), so tables of different sizes coexist and reopening with other
  // settings is safe. They size the policy of filter_policy when it is one
  // of siftdb's (blocked Bloom, classic Bloom, Ribbon: for Ribbon the value
  // is the bits/key-equivalent), else the default blocked Bloom; Open
  // refuses them with a filter_policy of another name.
  //
  // filter_bits_per_key_per_level: entry i is the bits/key of the tables
  // written to level i; levels past the end use the last entry; 0 writes
  // that level without a filter. Empty (default): every level uses
  // filter_bits_per_key (or filter_policy's own). Replaces
  // filter_bits_per_key when set. Open refuses a negative or NaN entry, an
  // entry above 100, and a 0 entry with remote_filter on.
  std::vector<double> filter_bits_per_key_per_level;
  // When true, filter_bits_per_key (or filter_policy's BitsPerKey()) is the
  // average over the whole tree and the bits go where they save the most
  // data-block reads of absent keys (the "Monkey" allocation, Dayan et al.
  // 2017): with N_i keys in sorted run i and a false-positive rate
  // p(b) = exp(-b ln^2 2) at b bits/key, minimising sum_i p_i under
  // sum_i N_i b_i = B gives p_i proportional to N_i, so each level down
  // (10x the keys) gets about 4.8 bits/key fewer; a run for which that
  // would exceed p = 1 gets no filter. N_i comes from the level targets,
  // not the live sizes (so a table's filter never depends on what other
  // compactions happen to be doing): each of level0_file_num_compaction_
  // trigger level-0 runs holds write_buffer_size bytes, level L >= 1 holds
  // max_bytes_for_level_base * max_bytes_for_level_multiplier^(L-1), down
  // to the deepest level holding a table (or the level being written, if
  // deeper). Default false (uniform). Open refuses it together with
  // filter_bits_per_key_per_level, and with remote_filter on when some
  // shape would leave a level without a filter.
  bool optimize_filters_for_memory_budget = false;

  // --- Compaction (leveled) ---
  // Target size of each table a compaction writes into level L >= 1:
  // target_file_size_base * target_file_size_multiplier^(L-1) (RocksDB's
  // names and meaning). Flushes write one level-0 table per MemTable, and
  // repair cuts its tables at target_file_size_base. A table may end a
  // little past its target (it ends at a block boundary) or well before it
  // (to bound its overlap with the level below). Open refuses a base below
  // 4 KiB, a multiplier outside [1, 100], and a level-6 target above 1 TiB.
  uint64_t target_file_size_base = uint64_t{2} << 20;
  int target_file_size_multiplier = 1;
  // The former name of target_file_size_base, kept as an alias for one
  // release: non-zero sets target_file_size_base. Open refuses the two set
  // to different values. 0 (default): unset.
  size_t max_file_size = 0;
  int level0_file_num_compaction_trigger = 4;
  // Write control (RocksDB's names and meaning). When compaction falls
  // behind, writes are slowed, then stopped: from level0_slowdown_writes_
  // trigger level-0 files, or soft_pending_compaction_bytes_limit estimated
  // pending compaction bytes ("siftdb.estimate-pending-compaction-bytes"),
  // writes proceed at delayed_write_rate bytes/s, falling smoothly toward a
  // sixteenth of it as the debt nears level0_stop_writes_trigger or
  // hard_pending_compaction_bytes_limit, where a write that needs a new
  // MemTable waits for compactions. A byte limit of 0 is off. Open refuses
  // soft > hard when both are on. delayed_write_rate 0 means 16 MiB/s.
  // Nothing is slowed with disable_auto_compactions. docs/compaction.md.
  int level0_slowdown_writes_trigger = 8;
  int level0_stop_writes_trigger = 12;
  uint64_t soft_pending_compaction_bytes_limit = uint64_t{64} << 30;
  uint64_t hard_pending_compaction_bytes_limit = uint64_t{256} << 30;
  uint64_t delayed_write_rate = uint64_t{16} << 20;
  // Caps the bytes per second that flushes and compactions (every part of
  // a split one too) write to table files, so that background writes leave
  // disk bandwidth to reads (NewGenericRateLimiter in siftdb/rate_limiter.h;
  // RocksDB's option and meaning). The WAL and the MANIFEST are not
  // limited. May be shared by several DBs, which then share its rate. null
  // (default): unlimited. Open refuses a limiter whose rate or refill
  // period is <= 0. docs/compaction.md, "Rate limiter".
  std::shared_ptr<RateLimiter> rate_limiter;
  // Level 1 target size; level L targets base * multiplier^(L-1).
  uint64_t max_bytes_for_level_base = uint64_t{10} << 20;
  double max_bytes_for_level_multiplier = 10;
  // RocksDB's option of the same name. When true the targets are set from
  // the bottom: the largest level's size, divided by the multiplier once
  // per level up, gives each level's target, so about (multiplier - 1) /
  // multiplier of the data lives in the last level whatever the DB's size
  // (with static targets a DB just past a level's target keeps a large
  // share of its data, and of its obsolete versions, higher up). Level 0
  // compacts into the base level, the shallowest level whose target is at
  // least max_bytes_for_level_base / multiplier; the levels between 0 and
  // the base level stay empty, and no target is below
  // max_bytes_for_level_base. compression_per_level[1] then applies to the
  // base level. Safe to switch either way on an existing DB: the targets
  // follow the sizes found, and the base level never lies below the first
  // non-empty level. docs/compaction.md. Default false.
  bool level_compaction_dynamic_level_bytes = false;
  // Threads that may merge one compaction, each over its own key range (in
  // [1, 64]; 1 merges on the background thread alone, as LevelDB does and
  // as RocksDB's default does). A compaction is split only where the next
  // level's tables begin, and only into parts of at least max_file_size of
  // input, so small compactions stay on one thread. RocksDB calls this
  // max_subcompactions. With 2 or more, level-0 -> level-1 merges (which
  // rewrite all of level 1 under random writes) finish sooner, so writers
  // stall less; while a split compaction runs, every part holds unfinished
  // output on disk at once, and a split compaction does not free its
  // inputs early. Default 2: on 2 cores it made random writes 1.2-1.3x
  // faster at 10M keys and no slower at 1M (docs/compaction.md, "Parallel
  // parts").
  int max_subcompactions = 2;
  // When true, a compaction frees disk as it goes: each time its merge
  // passes the last key of an input table of the next level (and of the
  // compacted level, for level >= 1), it installs the output tables
  // finished so far and deletes the input tables it has fully merged,
  // instead of holding every input and every output until its end. The
  // directory then needs about one output table of room per running
  // compaction rather than the whole output. Each such step costs one
  // MANIFEST record, and outputs are cut where input tables end (never
  // below half of max_file_size). Level-0 tables, which overlap, are always
  // kept until the end. Applies to compactions merged by one thread (see
  // max_subcompactions). docs/compaction.md, "Freeing inputs early".
  bool free_compaction_inputs_early = true;
  // When true, no compaction starts on its own: only CompactRange (and
  // ldb compact) merge tables, so a bulk load can write many level-0
  // tables and merge them once at its end (RocksDB's option and name).
  // Writes then never slow down or stop for level-0 file counts (nothing
  // would ever lower them); they still wait for a full MemTable's flush.
  // Reads get slower as level 0 grows. Default false.
  bool disable_auto_compactions = false;

  // --- Redis mirror of the filters (off by default) ---
  RemoteFilterOptions remote_filter;
};

struct SIFTDB_EXPORT ReadOptions {
  // Verify the CRC of every block read from a table file (RocksDB's
  // default too). A block that goes into the block cache is verified
  // whatever this says, so the cache never holds unchecked bytes.
  bool verify_checksums = true;
  // Keep blocks read by this call in the block cache.
  bool fill_cache = true;
  // With Options::prefix_extractor: after a Seek to a key in its domain,
  // the iterator returns only keys of the target's prefix (Next and Prev
  // stop at the prefix's ends), and tables and MemTables whose filter
  // rejects the prefix are not read. SeekToFirst and SeekToLast are not
  // limited.
  bool prefix_same_as_start = false;
  // Ignore prefix filters for this iterator, even with
  // prefix_same_as_start or an upper bound inside the target's prefix.
  bool total_order_seek = false;
  // Read as of this snapshot (from DB::GetSnapshot); null: the latest state.
  const Snapshot* snapshot = nullptr;
  // Bounds of an iterator, RocksDB's names: keys < lower are never returned
  // (Seek targets below it move up to it; SeekToFirst seeks to it), keys >=
  // upper never returned (SeekToLast / SeekForPrev-like moves start below
  // it). The bytes must outlive the iterator. lower > upper gives an empty
  // iterator. Ignored by Get.
  std::optional<std::string_view> iterate_lower_bound;
  // Exclusive upper bound; see iterate_lower_bound. Compared, like the
  // lower bound, with Options::comparator.
  std::optional<std::string_view> iterate_upper_bound;
};

struct SIFTDB_EXPORT FlushOptions {
  // Wait until the flushed MemTable is a level-0 table in the MANIFEST.
  // False: return once the MemTable is frozen and queued for flushing.
  bool wait = true;
};

struct SIFTDB_EXPORT WriteOptions {
  // fdatasync the log before the write returns. Without it a write survives
  // a process crash but may be lost in a machine crash.
  bool sync = false;
  // Skip the log: the write goes to the MemTable only (RocksDB's
  // disableWAL). Faster for bulk loads that can be redone, but such a
  // write is lost if the process or machine crashes before its MemTable
  // is flushed, even when later logged writes survive. Close (and the DB's
  // destructor) flush a MemTable holding such writes, so a clean close
  // loses nothing. Write refuses sync together with disable_wal
  // (InvalidArgument). Logged and unlogged writes are never grouped into
  // one log record.
  bool disable_wal = false;
};

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_OPTIONS_H_
