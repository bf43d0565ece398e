// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// c_api_test: calls every function of include/siftdb/c.h from C99, linked
// against the shared library (so it also proves each is exported), and
// checks the results, including the error paths: bad arguments, missing or
// damaged databases, NULL handles. Exits 1 at the first failed check,
// printing it.
//
// Usage: c_api_test [PARENT_DIR]. Works in a fresh directory made under
// PARENT_DIR (default: $TMPDIR, else /tmp) and removes it at the end.

#define _XOPEN_SOURCE 700

#include "tests/c_api/c_api_test.h"

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "siftdb/c.h"

char root[4096];
char db_path[4200];

void Path(char* out, size_t n, const char* leaf) {
  snprintf(out, n, "%s/%s", root, leaf);
}

static int RemoveEntry(const char* path, const struct stat* st, int flag,
                       struct FTW* ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

void CheckGet(siftdb_t* db, const siftdb_readoptions_t* ro, const char* k,
              const char* want) {
  char* err = NULL;
  size_t len = 99;
  char* got = siftdb_get(db, ro, k, strlen(k), &len, &err);
  CHECK_OK(err);
  if (want == NULL) {
    CHECK(got == NULL);
    CHECK(len == 0);
    return;
  }
  CHECK(got != NULL);
  CHECK(len == strlen(want));
  CHECK(memcmp(got, want, len) == 0);
  CHECK(got[len] == '\0');
  siftdb_free(got);
}

void CheckIterAt(const siftdb_iterator_t* it, const char* k, const char* v) {
  size_t klen, vlen;
  const char* key;
  const char* value;
  CHECK(siftdb_iter_valid(it));
  key = siftdb_iter_key(it, &klen);
  value = siftdb_iter_value(it, &vlen);
  CHECK(klen == strlen(k) && memcmp(key, k, klen) == 0);
  CHECK(vlen == strlen(v) && memcmp(value, v, vlen) == 0);
}

static void TestVersion(void) {
  char prefix[32];
  snprintf(prefix, sizeof(prefix), "%d.%d.%d", siftdb_version_major(),
           siftdb_version_minor(), siftdb_version_patch());
  CHECK(siftdb_version_major() >= 0 && siftdb_version_minor() >= 0);
  CHECK(strcmp(siftdb_version(), prefix) == 0);
  siftdb_free(NULL);
}

static void TestOpenErrors(void) {
  char* err = NULL;
  char missing[4200];
  siftdb_options_t* options = siftdb_options_create();
  Path(missing, sizeof(missing), "missing");

  // Missing without create_if_missing: the error names the path.
  CHECK(siftdb_open(options, missing, &err) == NULL);
  CHECK_ERR(err, missing);
  // A NULL errptr drops the error, and does not crash.
  CHECK(siftdb_open(options, missing, NULL) == NULL);
  // A previous message is replaced (freed first: the leak checkers see it).
  err = (char*)malloc(8);
  strcpy(err, "stale");
  CHECK(siftdb_open(options, missing, &err) == NULL);
  CHECK_ERR(err, "create_if_missing");
  CHECK(siftdb_open_for_read_only(options, missing, &err) == NULL);
  CHECK_ERR(err, missing);
  CHECK(siftdb_open(options, NULL, &err) == NULL);
  CHECK_ERR(err, "name is NULL");
  CHECK(siftdb_open(options, "", &err) == NULL);
  CHECK_ERR(err, "empty");

  // Values the engine rejects, and values C cannot even store.
  siftdb_options_set_create_if_missing(options, 1);
  siftdb_options_set_write_buffer_size(options, 1);
  CHECK(siftdb_open(options, missing, &err) == NULL);
  CHECK_ERR(err, "write_buffer_size");
  siftdb_options_set_write_buffer_size(options, 1 << 20);
  siftdb_options_set_compression(options, 9);
  CHECK(siftdb_open(options, missing, &err) == NULL);
  CHECK_ERR(err, "siftdb_options_set_compression: 9");
  siftdb_options_set_compression(options,
                                 siftdb_no_compression);  // valid again
  {
    const int bad_levels[] = {siftdb_no_compression, 2};
    siftdb_options_set_compression_per_level(options, bad_levels, 2);
    CHECK(siftdb_open(options, missing, &err) == NULL);
    CHECK_ERR(err, "siftdb_options_set_compression_per_level: 2");
    siftdb_options_set_compression_per_level(options, NULL, 0);
    siftdb_options_set_bottommost_compression(options, 3);
    CHECK(siftdb_open(options, missing, &err) == NULL);
    CHECK_ERR(err, "siftdb_options_set_bottommost_compression: 3");
    siftdb_options_set_bottommost_compression(
        options, siftdb_disable_compression_option);
  }
  siftdb_options_set_write_buffer_size(options, 1);
  CHECK(siftdb_open(options, missing, &err) == NULL);
  CHECK_ERR(err, "write_buffer_size");  // the engine's check, not ours
  siftdb_options_destroy(options);

  options = siftdb_options_create();
  siftdb_options_set_create_if_missing(options, 1);
  siftdb_options_set_remote_filter_mode(options, 9);
  CHECK(siftdb_open(options, missing, &err) == NULL);
  CHECK_ERR(err, "remote_filter_mode: 9");
  siftdb_options_add_remote_filter_endpoint(options, NULL);
  CHECK(siftdb_open(options, missing, &err) == NULL);
  CHECK_ERR(err, "remote_filter_mode: 9");  // the first bad setting
  // The mirror on with no endpoint: refused by the engine (without Redis
  // support, refused too), before anything is created.
  siftdb_options_set_remote_filter_mode(options, siftdb_remote_filter_async);
  CHECK(siftdb_open(options, missing, &err) == NULL);
  CHECK_ERR(err, "endpoint is NULL");
  siftdb_options_clear_remote_filter_endpoints(options);
  CHECK(siftdb_open(options, missing, &err) == NULL);
  CHECK(err != NULL && strstr(err, "siftdb_options_") == NULL);
  siftdb_free(err);
  err = NULL;
  // No filter at the bottom and the mirror on: refused by the engine,
  // naming the option (with or without Redis support).
  siftdb_options_add_remote_filter_endpoint(options, "127.0.0.1:1");
  siftdb_options_set_optimize_filters_for_hits(options, 1);
  CHECK(siftdb_open(options, missing, &err) == NULL);
  CHECK_ERR(err, "optimize_filters_for_hits");
  CHECK(access(missing, F_OK) != 0);
  // A per-level filter size the engine refuses, named in the error.
  siftdb_options_clear_remote_filter_endpoints(options);
  siftdb_options_set_optimize_filters_for_hits(options, 0);
  {
    const double bits[] = {10, -1};
    siftdb_options_set_filter_bits_per_key_per_level(options, bits, 2);
  }
  CHECK(siftdb_open(options, missing, &err) == NULL);
  CHECK_ERR(err, "filter_bits_per_key_per_level");
  CHECK(access(missing, F_OK) != 0);
  siftdb_options_destroy(options);

  // Defaults (NULL options) do not create a database.
  CHECK(siftdb_open(NULL, missing, &err) == NULL);
  CHECK_ERR(err, missing);
  CHECK(access(missing, F_OK) != 0);
}

// Every options setter, with values the engine accepts.
static siftdb_options_t* FullOptions(void) {
  siftdb_options_t* o = siftdb_options_create();
  siftdb_filterpolicy_t* policy = siftdb_filterpolicy_create_bloom(12);
  siftdb_options_set_create_if_missing(o, 1);
  siftdb_options_set_error_if_exists(o, 0);
  siftdb_options_set_paranoid_checks(o, 1);
  siftdb_options_set_paranoid_file_checks(o, 1);
  siftdb_options_set_write_buffer_size(o, 64 << 10);
  siftdb_options_set_memtable_filter_ratio(o, 0.1);
  siftdb_options_set_max_open_files(o, 100);
  siftdb_options_set_advise_random_on_open(o, 0);
  siftdb_options_set_advise_random_on_open(o, 1);
  siftdb_options_set_block_cache_size(o, 1 << 20);
  siftdb_options_set_block_size(o, 1024);
  siftdb_options_set_block_restart_interval(o, 8);
  siftdb_options_set_compression(o, siftdb_no_compression);
  siftdb_options_set_compression(o, siftdb_lz4_compression);
  siftdb_options_set_compression(o, siftdb_snappy_compression);
  {
    const int levels[] = {siftdb_no_compression, siftdb_lz4_compression,
                          siftdb_snappy_compression};
    siftdb_options_set_compression_per_level(o, levels, 3);
  }
  siftdb_options_set_bottommost_compression(o, siftdb_zstd_compression);
  siftdb_options_set_compression_level(o, 5);
  siftdb_options_set_compression_level(o, siftdb_default_compression_level);
  siftdb_options_set_compression_max_dict_bytes(o, 4096);
  siftdb_options_set_compression_zstd_max_train_bytes(o, 64 << 10);
  siftdb_options_set_bottommost_compression_options(o, 9, 8192, 0, 1);
  siftdb_options_set_filter_bits_per_key(o, 8);
  siftdb_options_set_filter_policy(o, policy);
  siftdb_filterpolicy_destroy(policy);  // the options keep a reference
  siftdb_options_set_max_file_size(o, 32 << 10);
  siftdb_options_set_target_file_size_base(o, 32 << 10);
  siftdb_options_set_target_file_size_multiplier(o, 2);
  siftdb_options_set_level0_file_num_compaction_trigger(o, 2);
  siftdb_options_set_level0_slowdown_writes_trigger(o, 6);
  siftdb_options_set_level0_stop_writes_trigger(o, 10);
  siftdb_options_set_soft_pending_compaction_bytes_limit(o, 64u << 20);
  siftdb_options_set_hard_pending_compaction_bytes_limit(o, 256u << 20);
  siftdb_options_set_delayed_write_rate(o, 8u << 20);
  siftdb_options_set_max_bytes_for_level_base(o, 256 << 10);
  siftdb_options_set_max_bytes_for_level_multiplier(o, 8);
  siftdb_options_set_level_compaction_dynamic_level_bytes(o, 1);
  siftdb_options_set_max_subcompactions(o, 2);
  siftdb_options_set_free_compaction_inputs_early(o, 1);
  siftdb_options_set_disable_auto_compactions(o, 0);
  siftdb_options_set_optimize_filters_for_hits(o, 1);
  siftdb_options_set_optimize_filters_for_memory_budget(o, 1);
  siftdb_options_set_optimize_filters_for_memory_budget(o, 0);
  siftdb_options_set_filter_bits_per_key_per_level(o, NULL, 0);
  {
    const double bits[] = {14, 12, 9};
    siftdb_options_set_filter_bits_per_key_per_level(o, bits, 3);
  }
  siftdb_options_set_cache_filter_blocks(o, 1);
  siftdb_options_set_pin_l0_filter_blocks_in_cache(o, 0);
  siftdb_options_set_pin_l0_filter_blocks_in_cache(o, 1);
  // The mirror's settings, with the mirror left off.
  siftdb_options_add_remote_filter_endpoint(o, "127.0.0.1:1");
  siftdb_options_clear_remote_filter_endpoints(o);
  siftdb_options_set_remote_filter_name(o, "c_api_test");
  siftdb_options_set_remote_filter_name(o, NULL);
  siftdb_options_set_remote_filter_auth(o, "user", NULL);
  siftdb_options_set_remote_filter_timeouts_ms(o, 500, 500);
  siftdb_options_set_remote_filter_lease_ttl_ms(o, 5000);
  siftdb_options_set_remote_filter_async_max_lag_ms(o, 50);
  siftdb_options_set_remote_filter_wait(o, 0, 100);
  siftdb_options_set_remote_filter_delete_grace_ms(o, 1000);
  siftdb_options_set_remote_filter_mode(o, siftdb_remote_filter_off);
  return o;
}

static void TestFilterPolicies(void) {
  char* err = NULL;
  siftdb_filterpolicy_t* p = siftdb_filterpolicy_create_classic_bloom(10);
  CHECK(strcmp(siftdb_filterpolicy_name(p), "siftdb.ClassicBloom") == 0);
  siftdb_filterpolicy_destroy(p);
  p = siftdb_filterpolicy_create_ribbon(10);
  CHECK(strcmp(siftdb_filterpolicy_name(p), "siftdb.Ribbon") == 0);
  siftdb_filterpolicy_destroy(p);
  p = siftdb_filterpolicy_create_from_name("siftdb.Ribbon", 7, &err);
  CHECK_OK(err);
  CHECK(strcmp(siftdb_filterpolicy_name(p), "siftdb.Ribbon") == 0);
  siftdb_filterpolicy_destroy(p);
  p = siftdb_filterpolicy_create_from_name("siftdb.BlockedBloom", 10, &err);
  CHECK_OK(err);
  CHECK(strcmp(siftdb_filterpolicy_name(p), "siftdb.BlockedBloom") == 0);
  siftdb_filterpolicy_destroy(p);
  CHECK(siftdb_filterpolicy_create_from_name("no.such.policy", 10, &err) ==
        NULL);
  CHECK_ERR(err, "no.such.policy");
  CHECK(siftdb_filterpolicy_create_from_name(NULL, 10, &err) == NULL);
  CHECK_ERR(err, "name is NULL");
  CHECK(strcmp(siftdb_filterpolicy_name(NULL), "") == 0);
  siftdb_filterpolicy_destroy(NULL);
}

// A database whose tables have partitioned filters, kept in the block
// cache, and whose log is a buffered file: every key written reads back,
// an absent one does not.
static void TestPartitionedFilters(void) {
  char* err = NULL;
  char path[4200];
  char key[32];
  int i;
  siftdb_options_t* o = siftdb_options_create();
  siftdb_t* db;
  siftdb_options_set_create_if_missing(o, 1);
  siftdb_options_set_partition_filters(o, 1);
  siftdb_options_set_filter_partition_size(o, 64);
  siftdb_options_set_cache_filter_blocks(o, 1);
  siftdb_options_set_wal_mmap_writes(o, 0);
  Path(path, sizeof(path), "partitioned");
  db = siftdb_open(o, path, &err);
  CHECK_OK(err);
  for (i = 0; i < 3000; i += 2) {
    snprintf(key, sizeof(key), "key%06d", i);
    siftdb_put(db, NULL, key, strlen(key), "v", 1, &err);
    CHECK_OK(err);
  }
  siftdb_flush(db, NULL, &err);
  CHECK_OK(err);
  for (i = 0; i < 3000; i++) {
    size_t len = 0;
    char* v;
    snprintf(key, sizeof(key), "key%06d", i);
    v = siftdb_get(db, NULL, key, strlen(key), &len, &err);
    CHECK_OK(err);
    CHECK((v != NULL) == (i % 2 == 0));
    siftdb_free(v);
  }
  siftdb_close(db, &err);
  CHECK_OK(err);
  siftdb_options_set_partition_filters(o, 0);
  siftdb_options_destroy(o);
}

static void TestReadsAndWrites(siftdb_t* db) {
  char* err = NULL;
  siftdb_writeoptions_t* wo = siftdb_writeoptions_create();
  siftdb_readoptions_t* ro = siftdb_readoptions_create();
  siftdb_writeoptions_set_sync(wo, 1);
  siftdb_readoptions_set_verify_checksums(ro, 1);
  siftdb_readoptions_set_fill_cache(ro, 0);

  siftdb_put(db, wo, "apple", 5, "red", 3, &err);
  CHECK_OK(err);
  siftdb_put(db, wo, "banana", 6, "yellow", 6, &err);
  CHECK_OK(err);
  siftdb_put(db, NULL, "", 0, NULL, 0, &err);  // empty key, empty value
  CHECK_OK(err);
  CheckGet(db, ro, "apple", "red");
  CheckGet(db, NULL, "", "");
  CheckGet(db, ro, "cherry", NULL);
  siftdb_delete(db, wo, "", 0, &err);
  CHECK_OK(err);
  CheckGet(db, ro, "", NULL);

  // A value with NUL bytes, read with a NULL length pointer.
  siftdb_put(db, wo, "nul", 3, "a\0b", 3, &err);
  CHECK_OK(err);
  {
    size_t len;
    char* v = siftdb_get(db, ro, "nul", 3, &len, &err);
    CHECK_OK(err);
    CHECK(len == 3 && memcmp(v, "a\0b", 3) == 0);
    siftdb_free(v);
    v = siftdb_get(db, ro, "nul", 3, NULL, &err);
    CHECK(v != NULL);
    siftdb_free(v);
  }
  siftdb_delete(db, wo, "nul", 3, &err);
  CHECK_OK(err);

  // Bad arguments are errors, never crashes.
  siftdb_put(db, wo, NULL, 3, "x", 1, &err);
  CHECK_ERR(err, "key is NULL");
  siftdb_put(db, wo, "k", 1, NULL, 1, &err);
  CHECK_ERR(err, "val is NULL");
  siftdb_put(NULL, wo, "k", 1, "v", 1, &err);
  CHECK_ERR(err, "db is NULL");
  siftdb_put(NULL, wo, "k", 1, "v", 1, NULL);
  siftdb_delete(db, wo, NULL, 1, &err);
  CHECK_ERR(err, "key is NULL");
  siftdb_delete(NULL, wo, "k", 1, &err);
  CHECK_ERR(err, "db is NULL");
  CHECK(siftdb_get(db, ro, NULL, 1, NULL, &err) == NULL);
  CHECK_ERR(err, "key is NULL");
  CHECK(siftdb_get(NULL, ro, "k", 1, NULL, &err) == NULL);
  CHECK_ERR(err, "db is NULL");
  siftdb_write(db, wo, NULL, &err);
  CHECK_ERR(err, "batch is NULL");
  {
    // Over the engine's key limit (1 MiB).
    size_t big = (1u << 20) + 1;
    char* key = (char*)calloc(big, 1);
    CHECK(key != NULL);
    siftdb_put(db, wo, key, big, "v", 1, &err);
    CHECK_ERR(err, "INVALID_ARGUMENT");
    free(key);
  }
  {
    /* MultiGet: found, absent, an empty key; then bad arguments. */
    const char* keys[3] = {"apple", "cherry", "banana"};
    size_t key_lens[3] = {5, 6, 6};
    char* values[3];
    size_t value_lens[3];
    char* errs[3];
    siftdb_multi_get(db, ro, 3, keys, key_lens, values, value_lens, errs);
    CHECK(errs[0] == NULL && errs[1] == NULL && errs[2] == NULL);
    CHECK(value_lens[0] == 3 && memcmp(values[0], "red", 3) == 0);
    CHECK(values[1] == NULL && value_lens[1] == 0);
    CHECK(value_lens[2] == 6 && memcmp(values[2], "yellow", 6) == 0);
    siftdb_free(values[0]);
    siftdb_free(values[2]);
    keys[1] = NULL;
    siftdb_multi_get(db, ro, 3, keys, key_lens, values, value_lens, errs);
    CHECK_ERR(errs[1], "key is NULL");
    CHECK_ERR(errs[0], "nothing read");
    CHECK_ERR(errs[2], "nothing read");
    siftdb_multi_get(NULL, ro, 3, keys, key_lens, values, value_lens, errs);
    CHECK_ERR(errs[0], "db is NULL");
    siftdb_free(errs[1]);
    siftdb_free(errs[2]);
    siftdb_multi_get(db, ro, 3, keys, key_lens, values, value_lens, NULL);
    siftdb_multi_get(db, ro, 0, NULL, NULL, NULL, NULL, NULL);
  }
  {
    /* disable_wal: the write lands; with sync as well it is refused. */
    siftdb_writeoptions_t* unlogged = siftdb_writeoptions_create();
    siftdb_writeoptions_set_disable_wal(unlogged, 1);
    siftdb_put(db, unlogged, "unlogged", 8, "u", 1, &err);
    CHECK_OK(err);
    CheckGet(db, ro, "unlogged", "u");
    siftdb_writeoptions_set_sync(unlogged, 1);
    siftdb_put(db, unlogged, "unlogged", 8, "w", 1, &err);
    CHECK_ERR(err, "disable_wal");
    CheckGet(db, ro, "unlogged", "u");
    siftdb_delete(db, wo, "unlogged", 8, &err);
    CHECK_OK(err);
    siftdb_writeoptions_set_disable_wal(NULL, 1);
    siftdb_writeoptions_destroy(unlogged);
  }
  siftdb_writeoptions_destroy(wo);
  siftdb_readoptions_destroy(ro);
}

struct BatchLog {
  char text[256];
};

static void LogPut(void* state, const char* k, size_t klen, const char* v,
                   size_t vlen) {
  struct BatchLog* log = (struct BatchLog*)state;
  size_t n = strlen(log->text);
  snprintf(log->text + n, sizeof(log->text) - n, "put(%.*s,%.*s);", (int)klen,
           k, (int)vlen, v);
}

static void LogDelete(void* state, const char* k, size_t klen) {
  struct BatchLog* log = (struct BatchLog*)state;
  size_t n = strlen(log->text);
  snprintf(log->text + n, sizeof(log->text) - n, "del(%.*s);", (int)klen, k);
}

static void TestWriteBatch(siftdb_t* db) {
  char* err = NULL;
  struct BatchLog log;
  siftdb_writebatch_t* b = siftdb_writebatch_create();
  siftdb_writebatch_t* other = siftdb_writebatch_create();
  siftdb_writebatch_put(b, "x", 1, "1", 1);
  siftdb_writebatch_put(b, NULL, 4, "ignored", 7);  // bad: ignored
  siftdb_writebatch_delete(b, "apple", 5);
  siftdb_writebatch_delete(b, NULL, 2);  // bad: ignored
  CHECK(siftdb_writebatch_count(b) == 2);
  siftdb_writebatch_put(other, "y", 1, "2", 1);
  siftdb_writebatch_append(b, other);
  CHECK(siftdb_writebatch_count(b) == 3);
  CHECK(siftdb_writebatch_approximate_size(b) > 0);

  log.text[0] = '\0';
  siftdb_writebatch_iterate(b, &log, LogPut, LogDelete, &err);
  CHECK_OK(err);
  CHECK(strcmp(log.text, "put(x,1);del(apple);put(y,2);") == 0);
  log.text[0] = '\0';
  siftdb_writebatch_iterate(b, &log, NULL, LogDelete, &err);  // skip puts
  CHECK_OK(err);
  CHECK(strcmp(log.text, "del(apple);") == 0);
  siftdb_writebatch_iterate(NULL, &log, LogPut, LogDelete, &err);
  CHECK_ERR(err, "batch is NULL");

  siftdb_write(db, NULL, b, &err);
  CHECK_OK(err);
  CHECK(siftdb_writebatch_count(b) == 3);  // unchanged by the write
  CheckGet(db, NULL, "x", "1");
  CheckGet(db, NULL, "y", "2");
  CheckGet(db, NULL, "apple", NULL);

  siftdb_writebatch_append(other, other);  // itself: now two puts
  CHECK(siftdb_writebatch_count(other) == 2);
  siftdb_writebatch_clear(b);
  CHECK(siftdb_writebatch_count(b) == 0);
  CHECK(siftdb_writebatch_count(NULL) == 0);
  CHECK(siftdb_writebatch_approximate_size(NULL) == 0);
  siftdb_writebatch_clear(NULL);
  siftdb_writebatch_destroy(b);
  siftdb_writebatch_destroy(other);
  siftdb_writebatch_destroy(NULL);
}

// Holds banana=yellow, x=1, y=2 here.
static void TestIterator(siftdb_t* db) {
  char* err = NULL;
  siftdb_iterator_t* it = siftdb_create_iterator(db, NULL);
  CHECK(it != NULL);
  CHECK(!siftdb_iter_valid(it));
  siftdb_iter_seek_to_first(it);
  CheckIterAt(it, "banana", "yellow");
  siftdb_iter_next(it);
  CheckIterAt(it, "x", "1");
  siftdb_iter_next(it);
  CheckIterAt(it, "y", "2");
  siftdb_iter_next(it);
  CHECK(!siftdb_iter_valid(it));
  // Moves and reads of an invalid iterator are harmless.
  siftdb_iter_next(it);
  siftdb_iter_prev(it);
  {
    size_t len = 5;
    CHECK(siftdb_iter_key(it, &len) == NULL && len == 0);
    len = 5;
    CHECK(siftdb_iter_value(it, &len) == NULL && len == 0);
  }
  siftdb_iter_seek_to_last(it);
  CheckIterAt(it, "y", "2");
  siftdb_iter_prev(it);
  CheckIterAt(it, "x", "1");
  siftdb_iter_seek(it, "c", 1);
  CheckIterAt(it, "x", "1");
  siftdb_iter_seek(it, NULL, 3);  // a NULL target is ""
  CheckIterAt(it, "banana", "yellow");
  siftdb_iter_seek(it, "z", 1);
  CHECK(!siftdb_iter_valid(it));
  siftdb_iter_get_error(it, &err);
  CHECK_OK(err);
  siftdb_iter_destroy(it);

  // NULL iterators everywhere.
  CHECK(siftdb_create_iterator(NULL, NULL) == NULL);
  CHECK(!siftdb_iter_valid(NULL));
  siftdb_iter_seek_to_first(NULL);
  siftdb_iter_seek_to_last(NULL);
  siftdb_iter_seek(NULL, "a", 1);
  siftdb_iter_next(NULL);
  siftdb_iter_prev(NULL);
  CHECK(siftdb_iter_key(NULL, NULL) == NULL);
  CHECK(siftdb_iter_value(NULL, NULL) == NULL);
  siftdb_iter_get_error(NULL, &err);
  CHECK_ERR(err, "iter is NULL");
  siftdb_iter_destroy(NULL);
}

static void TestSnapshots(siftdb_t* db, siftdb_t* other_db) {
  char* err = NULL;
  siftdb_readoptions_t* ro = siftdb_readoptions_create();
  const siftdb_snapshot_t* snap = siftdb_create_snapshot(db);
  siftdb_iterator_t* it;
  CHECK(snap != NULL);
  siftdb_put(db, NULL, "x", 1, "changed", 7, &err);
  CHECK_OK(err);
  siftdb_readoptions_set_snapshot(ro, snap);
  CheckGet(db, ro, "x", "1");
  it = siftdb_create_iterator(db, ro);
  siftdb_iter_seek(it, "x", 1);
  CheckIterAt(it, "x", "1");
  siftdb_iter_destroy(it);
  siftdb_readoptions_set_snapshot(ro, NULL);
  CheckGet(db, ro, "x", "changed");

  // A snapshot of another DB is an error, for reads and iterators alike.
  siftdb_readoptions_set_snapshot(ro, snap);
  CHECK(siftdb_get(other_db, ro, "x", 1, NULL, &err) == NULL);
  CHECK_ERR(err, "another DB");
  it = siftdb_create_iterator(other_db, ro);
  CHECK(it != NULL);
  siftdb_iter_seek_to_first(it);
  CHECK(!siftdb_iter_valid(it));
  siftdb_iter_get_error(it, &err);
  CHECK_ERR(err, "another DB");
  siftdb_iter_destroy(it);

  siftdb_release_snapshot(db, snap);
  siftdb_release_snapshot(db, NULL);
  CHECK(siftdb_create_snapshot(NULL) == NULL);
  siftdb_readoptions_destroy(ro);
}

// A rate limiter: a bad rate is refused at open; a good one counts the
// table bytes a compaction writes.
static void TestRateLimiter(void) {
  char* err = NULL;
  char path[4300];
  char* through;
  siftdb_t* db;
  siftdb_options_t* o = siftdb_options_create();
  siftdb_ratelimiter_t* bad = siftdb_ratelimiter_create(0);
  siftdb_ratelimiter_t* limiter = siftdb_ratelimiter_create(64 << 20);
  CHECK(bad != NULL && limiter != NULL);
  siftdb_options_set_create_if_missing(o, 1);
  Path(path, sizeof(path), "rate_limited");
  siftdb_options_set_ratelimiter(o, bad);
  CHECK(siftdb_open(o, path, &err) == NULL);
  CHECK_ERR(err, "rate_limiter");
  siftdb_options_set_ratelimiter(NULL, limiter);
  siftdb_options_set_ratelimiter(o, limiter);
  siftdb_ratelimiter_destroy(bad);
  siftdb_ratelimiter_destroy(limiter); /* the options keep it alive */
  siftdb_ratelimiter_destroy(NULL);
  db = siftdb_open(o, path, &err);
  CHECK_OK(err);
  siftdb_put(db, NULL, "k", 1, "v", 1, &err);
  CHECK_OK(err);
  siftdb_compact_range(db, NULL, 0, NULL, 0, &err);
  CHECK_OK(err);
  through = siftdb_property_value(db, "siftdb.rate-limiter-bytes", NULL);
  CHECK(through != NULL && atoi(through) > 0);
  siftdb_free(through);
  siftdb_close(db, &err);
  CHECK_OK(err);
  siftdb_options_set_ratelimiter(o, NULL);
  siftdb_options_destroy(o);
}

int main(int argc, char** argv) {
  const char* parent = argc > 1 ? argv[1] : getenv("TMPDIR");
  char* err = NULL;
  char other_path[4200];
  siftdb_options_t* options;
  siftdb_t* db;
  siftdb_t* other;
  if (parent == NULL || *parent == '\0') parent = "/tmp";
  snprintf(root, sizeof(root), "%s/c_api_test-XXXXXX", parent);
  CHECK(mkdtemp(root) != NULL);
  Path(db_path, sizeof(db_path), "db");
  Path(other_path, sizeof(other_path), "other");

  TestVersion();
  TestOpenErrors();
  TestFilterPolicies();
  TestPartitionedFilters();
  TestReadPaths();
  options = FullOptions();
  db = siftdb_open(options, db_path, &err);
  CHECK_OK(err);
  other = siftdb_open(options, other_path, &err);
  CHECK_OK(err);
  TestReadsAndWrites(db);
  TestWriteBatch(db);
  TestIterator(db);
  TestSnapshots(db, other);
  TestAdmin(db);
  // A second open of a live database fails (it is locked).
  CHECK(siftdb_open(options, db_path, &err) == NULL);
  CHECK(err != NULL);
  siftdb_free(err);
  err = NULL;
  siftdb_close(other, &err);
  CHECK_OK(err);
  siftdb_close(db, &err);
  CHECK_OK(err);
  TestComparator();
  TestCorruptionAndRepair(options);
  TestDestroy(options);
  TestSharedCacheAndLogOptions();
  TestRateLimiter();
  siftdb_options_destroy(options);

  CHECK(nftw(root, RemoveEntry, 16, FTW_DEPTH | FTW_PHYS) == 0);
  printf("c_api_test: ok (siftdb %s)\n", siftdb_version());
  return 0;
}
