// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The C API of siftdb: the engine of siftdb/db.h behind opaque handles and
// plain functions, for C programs and for other languages' foreign-function
// interfaces (Python ctypes, Go cgo, Rust bindgen, ...). This header is C99
// and includes only <stddef.h>, <stdint.h> and siftdb/export.h.
//
// Contract
//
// Errors: a function that can fail takes `char** errptr` last. On failure
// it stores a malloc'ed, NUL-terminated message in *errptr (the status
// text, e.g. "INVALID_ARGUMENT: ..."), first freeing any message already
// there; on success it leaves *errptr untouched. So set `char* err = NULL`,
// pass &err, test err != NULL, and free it with siftdb_free (then reset it
// to NULL). errptr may be NULL: the error is then dropped (the result
// still says "failed": NULL, or nothing written). Bad arguments (a NULL
// handle, a NULL key with a nonzero length, an empty path, a snapshot of
// another DB) are reported as errors where errptr exists and ignored where
// it does not; they never crash. Freed or foreign handles, however, cannot
// be detected: using a handle after its destroy/close/release function is
// undefined behavior, as with free().
//
// Ownership of what is returned:
//   - siftdb_open / siftdb_open_for_read_only: a siftdb_t, freed by
//     siftdb_close (exactly once).
//   - siftdb_*_create: the handle, freed by the matching siftdb_*_destroy
//     (siftdb_create_iterator: by siftdb_iter_destroy;
//     siftdb_create_snapshot: by siftdb_release_snapshot).
//   - siftdb_get, siftdb_property_value, siftdb_live_files and every error
//     message: malloc'ed memory the caller frees with siftdb_free (one call
//     frees a whole siftdb_live_files array). Values are NUL-terminated
//     past their length for convenience; they may also contain NUL bytes.
//   - siftdb_iter_key / siftdb_iter_value: owned by the iterator, valid
//     until it next moves or is destroyed. Never free them.
//   - siftdb_version: a static string. Never free it.
// Handles passed in are borrowed: a function never takes ownership of its
// arguments. siftdb_options_t, siftdb_readoptions_t and friends are copied
// (or referenced, for comparators and filter policies, which are counted)
// where they are used, so they may be destroyed as soon as the call
// returns. A DB may be closed while iterators or snapshots made from it
// are still alive: siftdb_close then closes the engine (no more writes),
// and the engine itself, with its open files and the directory's lock, is
// freed when the last of them is destroyed (iterators keep reading).
//
// Thread safety: a siftdb_t may be used by many threads at once, as may a
// siftdb_snapshot_t, a siftdb_comparator_t and a siftdb_filterpolicy_t.
// Every other handle (options, batches, iterators) is used by one thread
// at a time; distinct handles need no locking. The comparator callbacks
// are called from the engine's threads concurrently.
//
// Options arguments (siftdb_options_t, siftdb_readoptions_t,
// siftdb_writeoptions_t, siftdb_flushoptions_t) may be NULL: the defaults.
//
// Keys and values are byte strings given as (pointer, length); a NULL
// pointer with length 0 is the empty string. Booleans are uint8_t (0 false,
// anything else true).
//
// Not in this API yet, because the engine does not have them: iterator
// bounds (lower/upper bound in read options), MultiGet and KeyMayExist.
// Custom Env and Logger objects and the per-table FilterPolicy interface are
// C++ only; C code picks a built-in filter policy by kind or by name.

#ifndef SIFTDB_INCLUDE_C_H_
#define SIFTDB_INCLUDE_C_H_

#include <stddef.h>
#include <stdint.h>

#define SIFTDB_C_API_ONLY_
#include "siftdb/export.h"
#undef SIFTDB_C_API_ONLY_

#ifdef __cplusplus
extern "C" {
#endif

// ---- Opaque types ----

typedef struct siftdb_t siftdb_t;
typedef struct siftdb_options_t siftdb_options_t;
typedef struct siftdb_readoptions_t siftdb_readoptions_t;
typedef struct siftdb_writeoptions_t siftdb_writeoptions_t;
typedef struct siftdb_flushoptions_t siftdb_flushoptions_t;
typedef struct siftdb_writebatch_t siftdb_writebatch_t;
typedef struct siftdb_iterator_t siftdb_iterator_t;
typedef struct siftdb_snapshot_t siftdb_snapshot_t;
typedef struct siftdb_comparator_t siftdb_comparator_t;
typedef struct siftdb_filterpolicy_t siftdb_filterpolicy_t;
typedef struct siftdb_slicetransform_t siftdb_slicetransform_t;
typedef struct siftdb_cache_t siftdb_cache_t;
typedef struct siftdb_ratelimiter_t siftdb_ratelimiter_t;

// ---- Opening and closing ----

// Opens (with create_if_missing: creates) the database in directory
// `name`. NULL on error.
SIFTDB_EXPORT siftdb_t* siftdb_open(const siftdb_options_t* options,
                                    const char* name, char** errptr);

// Opens the database in `name` for reading only: takes no lock and writes
// nothing; writes, flush, compact_range and checkpoint then fail.
SIFTDB_EXPORT siftdb_t* siftdb_open_for_read_only(
    const siftdb_options_t* options, const char* name, char** errptr);

// Closes the database (waits for background work, syncs the log) and frees
// the handle, in every case; reports the first error of closing. NULL db
// is a no-op.
SIFTDB_EXPORT void siftdb_close(siftdb_t* db, char** errptr);

// ---- Reads and writes ----

SIFTDB_EXPORT void siftdb_put(siftdb_t* db,
                              const siftdb_writeoptions_t* options,
                              const char* key, size_t keylen, const char* val,
                              size_t vallen, char** errptr);

SIFTDB_EXPORT void siftdb_delete(siftdb_t* db,
                                 const siftdb_writeoptions_t* options,
                                 const char* key, size_t keylen, char** errptr);

// Applies every update of `batch` atomically. The batch is left as it
// was.
SIFTDB_EXPORT void siftdb_write(siftdb_t* db,
                                const siftdb_writeoptions_t* options,
                                siftdb_writebatch_t* batch, char** errptr);

// The value of `key`, malloc'ed (free with siftdb_free), its length in
// *vallen (vallen may be NULL). An absent key is NULL with *vallen = 0 and no
// error; an error is NULL with *errptr set.
SIFTDB_EXPORT char* siftdb_get(siftdb_t* db,
                               const siftdb_readoptions_t* options,
                               const char* key, size_t keylen, size_t* vallen,
                               char** errptr);

// Reads num_keys keys at one point in time (DB::MultiGet). For each i:
// values[i] is the malloc'ed value (length in value_lens[i]) or NULL when
// the key is absent or its read failed; errs[i] is NULL, or a malloc'ed
// error for that key alone (free both with siftdb_free). values, value_lens
// and errs must each hold num_keys entries; what they held is overwritten,
// not freed. A NULL db, array or key (with a nonzero length) fails every key
// through errs and reads nothing; with errs NULL nothing is read at all.
SIFTDB_EXPORT void siftdb_multi_get(siftdb_t* db,
                                    const siftdb_readoptions_t* options,
                                    size_t num_keys, const char* const* keys,
                                    const size_t* key_lens, char** values,
                                    size_t* value_lens, char** errs);

// DB::KeyMayExist: 0 only when `key` certainly does not exist (from the
// MemTables and the table filters; no data-block read). When the value was
// found in a MemTable and `value` is non-NULL, *value is its malloc'ed copy
// (free with siftdb_free), *vallen its length and *value_found 1; otherwise
// *value is NULL and *value_found 0 (value, vallen and value_found may each
// be NULL). A NULL db or key (with a nonzero length), or read options whose
// snapshot belongs to another DB, answer 1: nothing is known.
SIFTDB_EXPORT uint8_t siftdb_key_may_exist(siftdb_t* db,
                                           const siftdb_readoptions_t* options,
                                           const char* key, size_t keylen,
                                           char** value, size_t* vallen,
                                           uint8_t* value_found);

// A new iterator over the database (as of options' snapshot, if any), not
// yet positioned. Never NULL for a valid db: a problem with the options is
// reported by siftdb_iter_get_error. NULL only when db is NULL.
SIFTDB_EXPORT siftdb_iterator_t* siftdb_create_iterator(
    siftdb_t* db, const siftdb_readoptions_t* options);

// A consistent view of the database as it is now; release it with
// siftdb_release_snapshot. NULL when db is NULL.
SIFTDB_EXPORT const siftdb_snapshot_t* siftdb_create_snapshot(siftdb_t* db);

// Releases a snapshot of `db` (db is not used: it may already be
// closed).
SIFTDB_EXPORT void siftdb_release_snapshot(siftdb_t* db,
                                           const siftdb_snapshot_t* snapshot);

// ---- Administration ----

// The value of a property ("siftdb.stats", "siftdb.num-files-at-level0",
// "siftdb.sstables", "siftdb.approximate-memory-usage",
// "siftdb.filter-memory",
// "siftdb.background-error", "siftdb.counter.<name>"; see siftdb/db.h),
// malloc'ed and NUL-terminated, its length in *vallen (vallen may be
// NULL). NULL for an unknown name.
SIFTDB_EXPORT char* siftdb_property_value(siftdb_t* db, const char* propname,
                                          size_t* vallen);

// For each of num_ranges ranges [start, limit), the approximate bytes of
// files its keys use, in sizes[i].
SIFTDB_EXPORT void siftdb_approximate_sizes(siftdb_t* db, int num_ranges,
                                            const char* const* range_start_key,
                                            const size_t* range_start_key_len,
                                            const char* const* range_limit_key,
                                            const size_t* range_limit_key_len,
                                            uint64_t* sizes);

// Compacts the keys in [start, limit] down the tree. A NULL start (limit)
// means from the first key (to the last).
SIFTDB_EXPORT void siftdb_compact_range(siftdb_t* db, const char* start_key,
                                        size_t start_key_len,
                                        const char* limit_key,
                                        size_t limit_key_len, char** errptr);

// Writes the MemTable to a table. options may be NULL (defaults: wait).
SIFTDB_EXPORT void siftdb_flush(siftdb_t* db,
                                const siftdb_flushoptions_t* options,
                                char** errptr);

// Makes an openable copy of the live database in directory `dir`, which
// must not exist (its parent must).
SIFTDB_EXPORT void siftdb_create_checkpoint(siftdb_t* db, const char* dir,
                                            char** errptr);

// The live files (names relative to the DB directory, like "/CURRENT"), as
// a NULL-terminated array of strings in ONE malloc'ed block: free the
// array alone with siftdb_free. *count gets the number of names and
// *manifest_file_size the MANIFEST prefix to copy (either may be NULL).
// With flush_memtable, the tables hold every write made before the call.
// Disable file deletions first so the files stay. NULL on error.
SIFTDB_EXPORT char** siftdb_live_files(siftdb_t* db, uint8_t flush_memtable,
                                       size_t* count,
                                       uint64_t* manifest_file_size,
                                       char** errptr);

// Keeps obsolete files until enable has been called as often as disable
// (or once with force).
SIFTDB_EXPORT void siftdb_disable_file_deletions(siftdb_t* db, char** errptr);
SIFTDB_EXPORT void siftdb_enable_file_deletions(siftdb_t* db, uint8_t force,
                                                char** errptr);

// Removes the database in `name` and its files (no error when absent).
SIFTDB_EXPORT void siftdb_destroy_db(const siftdb_options_t* options,
                                     const char* name, char** errptr);

// Rebuilds a damaged database from what is readable (it must not be open).
SIFTDB_EXPORT void siftdb_repair_db(const siftdb_options_t* options,
                                    const char* name, char** errptr);

// ---- Iterators ----

SIFTDB_EXPORT void siftdb_iter_destroy(siftdb_iterator_t* iter);
SIFTDB_EXPORT uint8_t siftdb_iter_valid(const siftdb_iterator_t* iter);
SIFTDB_EXPORT void siftdb_iter_seek_to_first(siftdb_iterator_t* iter);
SIFTDB_EXPORT void siftdb_iter_seek_to_last(siftdb_iterator_t* iter);
// Positions at the first key >= k.
SIFTDB_EXPORT void siftdb_iter_seek(siftdb_iterator_t* iter, const char* k,
                                    size_t klen);
// next and prev do nothing when the iterator is not valid.
SIFTDB_EXPORT void siftdb_iter_next(siftdb_iterator_t* iter);
SIFTDB_EXPORT void siftdb_iter_prev(siftdb_iterator_t* iter);
// The current key (value) and its length; NULL and 0 when not valid.
SIFTDB_EXPORT const char* siftdb_iter_key(const siftdb_iterator_t* iter,
                                          size_t* klen);
SIFTDB_EXPORT const char* siftdb_iter_value(const siftdb_iterator_t* iter,
                                            size_t* vlen);
// Stores the first error the iterator met, if any.
SIFTDB_EXPORT void siftdb_iter_get_error(const siftdb_iterator_t* iter,
                                         char** errptr);

// ---- Write batches ----

SIFTDB_EXPORT siftdb_writebatch_t* siftdb_writebatch_create(void);
SIFTDB_EXPORT void siftdb_writebatch_destroy(siftdb_writebatch_t* batch);
SIFTDB_EXPORT void siftdb_writebatch_clear(siftdb_writebatch_t* batch);
// Keys or values beyond the engine's limits are accepted here and rejected
// by siftdb_write.
SIFTDB_EXPORT void siftdb_writebatch_put(siftdb_writebatch_t* batch,
                                         const char* key, size_t klen,
                                         const char* val, size_t vlen);
SIFTDB_EXPORT void siftdb_writebatch_delete(siftdb_writebatch_t* batch,
                                            const char* key, size_t klen);
// Appends every update of source after dst's own.
SIFTDB_EXPORT void siftdb_writebatch_append(siftdb_writebatch_t* dst,
                                            const siftdb_writebatch_t* source);
// Number of updates.
SIFTDB_EXPORT int siftdb_writebatch_count(const siftdb_writebatch_t* batch);
// Bytes of the encoded batch.
SIFTDB_EXPORT size_t
siftdb_writebatch_approximate_size(const siftdb_writebatch_t* batch);
// Calls put or deleted for each update in order, with `state` first. The
// pointers passed are valid during the call only. A NULL callback skips
// its kind of update.
SIFTDB_EXPORT void siftdb_writebatch_iterate(
    const siftdb_writebatch_t* batch, void* state,
    void (*put)(void* state, const char* k, size_t klen, const char* v,
                size_t vlen),
    void (*deleted)(void* state, const char* k, size_t klen), char** errptr);

// ---- Options ----

// Defaults as in siftdb/options.h (create_if_missing off).
SIFTDB_EXPORT siftdb_options_t* siftdb_options_create(void);
SIFTDB_EXPORT void siftdb_options_destroy(siftdb_options_t* options);
// NULL: the bytewise order. The options keep a reference.
SIFTDB_EXPORT void siftdb_options_set_comparator(
    siftdb_options_t* options, const siftdb_comparator_t* comparator);
SIFTDB_EXPORT void siftdb_options_set_create_if_missing(
    siftdb_options_t* options, uint8_t v);
SIFTDB_EXPORT void siftdb_options_set_error_if_exists(siftdb_options_t* options,
                                                      uint8_t v);
SIFTDB_EXPORT void siftdb_options_set_paranoid_checks(siftdb_options_t* options,
                                                      uint8_t v);
SIFTDB_EXPORT void siftdb_options_set_paranoid_file_checks(
    siftdb_options_t* options, uint8_t v);
// Nonzero (default): the write-ahead log is appended through a memory
// mapping (Options::wal_mmap_writes).
SIFTDB_EXPORT void siftdb_options_set_wal_mmap_writes(siftdb_options_t* options,
                                                      uint8_t v);
SIFTDB_EXPORT void siftdb_options_set_write_buffer_size(
    siftdb_options_t* options, size_t bytes);
// In [0, 0.25]; 0 disables the MemTable filter.
SIFTDB_EXPORT void siftdb_options_set_memtable_filter_ratio(
    siftdb_options_t* options, double ratio);
SIFTDB_EXPORT void siftdb_options_set_max_open_files(siftdb_options_t* options,
                                                     int n);
// Nonzero (default): tables are advised for random reads, so a page fault
// reads only its page (Options::advise_random_on_open).
SIFTDB_EXPORT void siftdb_options_set_advise_random_on_open(
    siftdb_options_t* options, uint8_t v);
SIFTDB_EXPORT void siftdb_options_set_block_cache_size(
    siftdb_options_t* options, size_t bytes);
// A block cache several databases share (Options::block_cache); when set,
// block_cache_size is ignored. NULL goes back to a private cache. The
// options and every database opened with them hold their own reference, so
// the cache handle may be destroyed at any time.
SIFTDB_EXPORT void siftdb_options_set_cache(siftdb_options_t* options,
                                            siftdb_cache_t* cache);
// Caps the bytes per second flushes and compactions write to table files
// (Options::rate_limiter; the WAL is not limited). NULL: unlimited. The
// options and every database opened with them hold their own reference, so
// the limiter handle may be destroyed at any time.
SIFTDB_EXPORT void siftdb_options_set_ratelimiter(
    siftdb_options_t* options, siftdb_ratelimiter_t* limiter);
// The LOG's rotation (Options::max_log_file_size, 0: no limit, else at
// least 4096; keep_log_file_num in [1, 1000000]); siftdb_open reports a
// value out of range.
SIFTDB_EXPORT void siftdb_options_set_max_log_file_size(
    siftdb_options_t* options, size_t bytes);
SIFTDB_EXPORT void siftdb_options_set_keep_log_file_num(
    siftdb_options_t* options, size_t n);
SIFTDB_EXPORT void siftdb_options_set_block_size(siftdb_options_t* options,
                                                 size_t bytes);
SIFTDB_EXPORT void siftdb_options_set_block_restart_interval(
    siftdb_options_t* options, int n);

// Values of siftdb_options_set_compression; persisted in every block (the
// C++ CompressionType values). siftdb_disable_compression_option is for
// siftdb_options_set_bottommost_compression only.
enum {
  siftdb_no_compression = 0,
  siftdb_snappy_compression = 1,
  siftdb_lz4_compression = 4,
  siftdb_zstd_compression = 7,
  siftdb_disable_compression_option = 0xff
};
// Another value makes siftdb_open fail with an error naming it, until a
// valid value is set (the same for the two setters below).
SIFTDB_EXPORT void siftdb_options_set_compression(siftdb_options_t* options,
                                                  int compression);
// Options::compression_per_level: types[i] for level i, the last one for
// deeper levels; n = 0 (types may be NULL): `compression` everywhere.
SIFTDB_EXPORT void siftdb_options_set_compression_per_level(
    siftdb_options_t* options, const int* types, size_t n);
// Options::bottommost_compression; siftdb_disable_compression_option (the
// default): the level's own type.
SIFTDB_EXPORT void siftdb_options_set_bottommost_compression(
    siftdb_options_t* options, int compression);
// Options::compression_opts.level for lz4 and zstd;
// siftdb_default_compression_level: the library's default.
enum { siftdb_default_compression_level = 32767 };
SIFTDB_EXPORT void siftdb_options_set_compression_level(
    siftdb_options_t* options, int level);
// Options::compression_opts.max_dict_bytes (zstd dictionaries; 0, the
// default: none; else 256 to 16 MiB, checked by siftdb_open) and
// zstd_max_train_bytes (0: raw samples; else zstd's trainer over that many
// bytes of blocks).
SIFTDB_EXPORT void siftdb_options_set_compression_max_dict_bytes(
    siftdb_options_t* options, size_t max_dict_bytes);
SIFTDB_EXPORT void siftdb_options_set_compression_zstd_max_train_bytes(
    siftdb_options_t* options, size_t zstd_max_train_bytes);
// Options::bottommost_compression_opts: with enabled != 0, the level,
// dictionary size and training bytes (as the three setters above) of the
// tables compactions write to the bottommost level, in place of
// compression_opts; enabled = 0 (the default): compression_opts there too.
SIFTDB_EXPORT void siftdb_options_set_bottommost_compression_options(
    siftdb_options_t* options, int level, size_t max_dict_bytes,
    size_t zstd_max_train_bytes, unsigned char enabled);
// Bits per key of the default Bloom filter; 0 disables table filters.
SIFTDB_EXPORT void siftdb_options_set_filter_bits_per_key(
    siftdb_options_t* options, double bits_per_key);
// Overrides the policy built from filter_bits_per_key; NULL restores it.
// The options keep a reference.
SIFTDB_EXPORT void siftdb_options_set_filter_policy(
    siftdb_options_t* options, const siftdb_filterpolicy_t* policy);
// Puts key prefixes into the filters too (docs/prefix_filters.md); NULL:
// none. The options keep a reference.
SIFTDB_EXPORT void siftdb_options_set_prefix_extractor(
    siftdb_options_t* options, const siftdb_slicetransform_t* transform);
// 0: table filters hold prefixes only (with a prefix extractor).
SIFTDB_EXPORT void siftdb_options_set_whole_key_filtering(
    siftdb_options_t* options, uint8_t v);
// Nonzero: compaction outputs on the bottommost level get no filter
// (Options::optimize_filters_for_hits; open refuses it with the mirror on).
SIFTDB_EXPORT void siftdb_options_set_optimize_filters_for_hits(
    siftdb_options_t* options, uint8_t v);
// Per-level filter sizes (Options::filter_bits_per_key_per_level): entry i
// is the bits/key of tables written to level i (levels past the end use the
// last; 0: no filter). bits may be null or levels 0: every level uses
// filter_bits_per_key. The values are copied; open refuses bad ones.
SIFTDB_EXPORT void siftdb_options_set_filter_bits_per_key_per_level(
    siftdb_options_t* options, const double* bits, size_t levels);
// Nonzero: filter_bits_per_key is the tree's average and the bits go where
// they save the most reads of absent keys
// (Options::optimize_filters_for_memory_budget).
SIFTDB_EXPORT void siftdb_options_set_optimize_filters_for_memory_budget(
    siftdb_options_t* options, uint8_t v);
// Nonzero: table filters live in the block cache, charged and evicted
// there (Options::cache_filter_blocks).
SIFTDB_EXPORT void siftdb_options_set_cache_filter_blocks(
    siftdb_options_t* options, uint8_t v);
// With cache_filter_blocks: nonzero (default) keeps level-0 tables' filters
// pinned in the cache (Options::pin_l0_filter_blocks_in_cache).
SIFTDB_EXPORT void siftdb_options_set_pin_l0_filter_blocks_in_cache(
    siftdb_options_t* options, uint8_t v);
// Nonzero: large tables' filters are cut into partitions of about
// filter_partition_size bytes plus an index, so a lookup reads one
// (Options::partition_filters, filter_partition_size; default 0, 4096).
SIFTDB_EXPORT void siftdb_options_set_partition_filters(
    siftdb_options_t* options, uint8_t v);
SIFTDB_EXPORT void siftdb_options_set_filter_partition_size(
    siftdb_options_t* options, size_t bytes);
// Level-1 table size and its growth per level (target_file_size_base,
// target_file_size_multiplier).
SIFTDB_EXPORT void siftdb_options_set_target_file_size_base(
    siftdb_options_t* options, uint64_t bytes);
SIFTDB_EXPORT void siftdb_options_set_target_file_size_multiplier(
    siftdb_options_t* options, int multiplier);
// The old name of siftdb_options_set_target_file_size_base.
SIFTDB_EXPORT void siftdb_options_set_max_file_size(siftdb_options_t* options,
                                                    size_t bytes);
SIFTDB_EXPORT void siftdb_options_set_level0_file_num_compaction_trigger(
    siftdb_options_t* options, int n);
SIFTDB_EXPORT void siftdb_options_set_level0_slowdown_writes_trigger(
    siftdb_options_t* options, int n);
SIFTDB_EXPORT void siftdb_options_set_level0_stop_writes_trigger(
    siftdb_options_t* options, int n);
SIFTDB_EXPORT void siftdb_options_set_soft_pending_compaction_bytes_limit(
    siftdb_options_t* options, uint64_t bytes);
SIFTDB_EXPORT void siftdb_options_set_hard_pending_compaction_bytes_limit(
    siftdb_options_t* options, uint64_t bytes);
SIFTDB_EXPORT void siftdb_options_set_delayed_write_rate(
    siftdb_options_t* options, uint64_t bytes_per_second);
SIFTDB_EXPORT void siftdb_options_set_max_bytes_for_level_base(
    siftdb_options_t* options, uint64_t bytes);
SIFTDB_EXPORT void siftdb_options_set_max_bytes_for_level_multiplier(
    siftdb_options_t* options, double multiplier);
// Options::level_compaction_dynamic_level_bytes (0 or 1).
SIFTDB_EXPORT void siftdb_options_set_level_compaction_dynamic_level_bytes(
    siftdb_options_t* options, unsigned char on);
// In [1, 64]; default 2 (Options::max_subcompactions).
SIFTDB_EXPORT void siftdb_options_set_max_subcompactions(
    siftdb_options_t* options, int n);
SIFTDB_EXPORT void siftdb_options_set_free_compaction_inputs_early(
    siftdb_options_t* options, uint8_t v);
// Nonzero: only siftdb_compact_range merges tables (and level 0 never
// slows writes down).
SIFTDB_EXPORT void siftdb_options_set_disable_auto_compactions(
    siftdb_options_t* options, uint8_t v);

// The Redis mirror of the filters (docs/redis_mirror.md); off by default.
// Values of siftdb_options_set_remote_filter_mode:
enum {
  siftdb_remote_filter_off = 0,
  siftdb_remote_filter_async = 1,
  siftdb_remote_filter_sync = 2
};
// Another mode value makes siftdb_open fail with an error naming it, until
// a valid mode is set.
SIFTDB_EXPORT void siftdb_options_set_remote_filter_mode(
    siftdb_options_t* options, int mode);
// Adds "host:port", "[ipv6]:port" or "unix:/path" to the endpoints, or
// one URL (redis://, redis+sentinel://, unix://; see Options). A NULL
// endpoint makes siftdb_open fail until the endpoints are cleared.
SIFTDB_EXPORT void siftdb_options_add_remote_filter_endpoint(
    siftdb_options_t* options, const char* endpoint);
SIFTDB_EXPORT void siftdb_options_clear_remote_filter_endpoints(
    siftdb_options_t* options);
// NULL is the empty string.
SIFTDB_EXPORT void siftdb_options_set_remote_filter_name(
    siftdb_options_t* options, const char* name);
SIFTDB_EXPORT void siftdb_options_set_remote_filter_auth(
    siftdb_options_t* options, const char* username, const char* password);
SIFTDB_EXPORT void siftdb_options_set_remote_filter_timeouts_ms(
    siftdb_options_t* options, int connect_timeout_ms, int command_timeout_ms);
SIFTDB_EXPORT void siftdb_options_set_remote_filter_lease_ttl_ms(
    siftdb_options_t* options, int ms);
SIFTDB_EXPORT void siftdb_options_set_remote_filter_async_max_lag_ms(
    siftdb_options_t* options, int ms);
SIFTDB_EXPORT void siftdb_options_set_remote_filter_wait(
    siftdb_options_t* options, int replicas, int timeout_ms);
SIFTDB_EXPORT void siftdb_options_set_remote_filter_delete_grace_ms(
    siftdb_options_t* options, int ms);

// ---- Read, write and flush options ----

SIFTDB_EXPORT siftdb_readoptions_t* siftdb_readoptions_create(void);
SIFTDB_EXPORT void siftdb_readoptions_destroy(siftdb_readoptions_t* options);
SIFTDB_EXPORT void siftdb_readoptions_set_verify_checksums(
    siftdb_readoptions_t* options, uint8_t v);
SIFTDB_EXPORT void siftdb_readoptions_set_fill_cache(
    siftdb_readoptions_t* options, uint8_t v);
// Reads as of `snapshot` (NULL: the latest state). The snapshot must stay
// unreleased while these options are used, and belong to the DB read.
SIFTDB_EXPORT void siftdb_readoptions_set_snapshot(
    siftdb_readoptions_t* options, const siftdb_snapshot_t* snapshot);
// Iterator bounds: keys below lower and at or above upper are never
// returned. The options keep a copy of the bytes, and each iterator made
// from them its own; a NULL key clears the bound.
SIFTDB_EXPORT void siftdb_readoptions_set_iterate_lower_bound(
    siftdb_readoptions_t* options, const char* key, size_t keylen);
SIFTDB_EXPORT void siftdb_readoptions_set_iterate_upper_bound(
    siftdb_readoptions_t* options, const char* key, size_t keylen);
// With a prefix extractor: after a Seek, only keys of the target's prefix,
// and tables whose prefix filter rejects it are skipped.
SIFTDB_EXPORT void siftdb_readoptions_set_prefix_same_as_start(
    siftdb_readoptions_t* options, uint8_t v);
// Ignore prefix filters and the prefix limit.
SIFTDB_EXPORT void siftdb_readoptions_set_total_order_seek(
    siftdb_readoptions_t* options, uint8_t v);

SIFTDB_EXPORT siftdb_writeoptions_t* siftdb_writeoptions_create(void);
SIFTDB_EXPORT void siftdb_writeoptions_destroy(siftdb_writeoptions_t* options);
// fdatasync the log before the write returns.
SIFTDB_EXPORT void siftdb_writeoptions_set_sync(siftdb_writeoptions_t* options,
                                                uint8_t v);
// Skip the log (WriteOptions::disable_wal): such a write is lost by a crash
// before its MemTable is flushed; siftdb_close flushes it. Together with
// sync the write fails with an error naming both.
SIFTDB_EXPORT void siftdb_writeoptions_set_disable_wal(
    siftdb_writeoptions_t* options, uint8_t v);

SIFTDB_EXPORT siftdb_flushoptions_t* siftdb_flushoptions_create(void);
SIFTDB_EXPORT void siftdb_flushoptions_destroy(siftdb_flushoptions_t* options);
// Wait until the flushed table is installed (default); 0: return once the
// MemTable is queued.
SIFTDB_EXPORT void siftdb_flushoptions_set_wait(siftdb_flushoptions_t* options,
                                                uint8_t v);

// ---- Comparators ----

// A key order from callbacks: compare returns < 0, 0 or > 0; name returns a
// static string, persisted with the database. Both are called from many
// threads at once. destructor (may be NULL) is called with state once the
// last user (options, DB, iterator) lets go. NULL when compare or name is
// NULL.
SIFTDB_EXPORT siftdb_comparator_t* siftdb_comparator_create(
    void* state, void (*destructor)(void* state),
    int (*compare)(void* state, const char* a, size_t alen, const char* b,
                   size_t blen),
    const char* (*name)(void* state));
SIFTDB_EXPORT void siftdb_comparator_destroy(siftdb_comparator_t* comparator);

// ---- Filter policies ----

// The default cache-line-blocked Bloom filter ("siftdb.BlockedBloom").
SIFTDB_EXPORT siftdb_filterpolicy_t* siftdb_filterpolicy_create_bloom(
    double bits_per_key);
// A classic Bloom filter ("siftdb.ClassicBloom").
SIFTDB_EXPORT siftdb_filterpolicy_t* siftdb_filterpolicy_create_classic_bloom(
    double bits_per_key);
// A Standard Ribbon filter ("siftdb.Ribbon"): the blocked Bloom filter's
// false-positive rate at bits_per_key_equivalent in about 0.71 times the
// bits, slower to build and query (siftdb/filter_policy.h).
SIFTDB_EXPORT siftdb_filterpolicy_t* siftdb_filterpolicy_create_ribbon(
    double bits_per_key_equivalent);
// The built-in policy called `name`; NULL and an error for an unknown
// name.
SIFTDB_EXPORT siftdb_filterpolicy_t* siftdb_filterpolicy_create_from_name(
    const char* name, double bits_per_key, char** errptr);
// The policy's persisted name; valid while the handle lives.
SIFTDB_EXPORT const char* siftdb_filterpolicy_name(
    const siftdb_filterpolicy_t* policy);
SIFTDB_EXPORT void siftdb_filterpolicy_destroy(siftdb_filterpolicy_t* policy);

// ---- Prefix extractors (siftdb/slice_transform.h) ----

// The first n bytes; shorter keys are not prefix-filtered.
SIFTDB_EXPORT siftdb_slicetransform_t*
siftdb_slicetransform_create_fixed_prefix(size_t n);
// The first min(n, keylen) bytes.
SIFTDB_EXPORT siftdb_slicetransform_t*
siftdb_slicetransform_create_capped_prefix(size_t n);
// The persisted name; valid while the handle lives.
SIFTDB_EXPORT const char* siftdb_slicetransform_name(
    const siftdb_slicetransform_t* transform);
SIFTDB_EXPORT void siftdb_slicetransform_destroy(
    siftdb_slicetransform_t* transform);

// ---- Memory and version ----

// Frees memory this API returned (values, property values, live file
// lists, error messages). NULL is a no-op.
SIFTDB_EXPORT void siftdb_free(void* ptr);

// The version of the library actually loaded (see siftdb/version.h).
SIFTDB_EXPORT int siftdb_version_major(void);
SIFTDB_EXPORT int siftdb_version_minor(void);
SIFTDB_EXPORT int siftdb_version_patch(void);
// "MAJOR.MINOR.PATCH"; a static string.
SIFTDB_EXPORT const char* siftdb_version(void);

// An LRU block cache of capacity bytes (NewLRUCache), thread-safe; NULL
// only when memory runs out. Destroy with siftdb_cache_destroy.
SIFTDB_EXPORT siftdb_cache_t* siftdb_cache_create_lru(size_t capacity);
SIFTDB_EXPORT void siftdb_cache_destroy(siftdb_cache_t* cache);
// Bytes held now and the capacity; 0 for a NULL cache.
SIFTDB_EXPORT size_t siftdb_cache_get_usage(const siftdb_cache_t* cache);
SIFTDB_EXPORT size_t siftdb_cache_get_capacity(const siftdb_cache_t* cache);

// A token-bucket rate limiter of rate_bytes_per_sec, refilled every 100 ms
// (NewGenericRateLimiter with its defaults), thread-safe, shareable by
// several databases. A rate <= 0 makes siftdb_open fail naming
// rate_limiter. NULL only when memory runs out. Destroy with
// siftdb_ratelimiter_destroy.
SIFTDB_EXPORT siftdb_ratelimiter_t* siftdb_ratelimiter_create(
    int64_t rate_bytes_per_sec);
SIFTDB_EXPORT void siftdb_ratelimiter_destroy(siftdb_ratelimiter_t* limiter);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // SIFTDB_INCLUDE_C_H_
