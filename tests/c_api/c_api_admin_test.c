// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// c_api_test, second part: the administrative calls (properties,
// approximate sizes, compaction, flush, checkpoints, live files, file
// deletions), comparators written in C, repair of a damaged database and
// destroy. main() is in c_api_test.c.

#define _XOPEN_SOURCE 700

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "siftdb/c.h"
#include "tests/c_api/c_api_test.h"

void TestAdmin(siftdb_t* db) {
  char* err = NULL;
  char checkpoint[4200];
  siftdb_flushoptions_t* fo = siftdb_flushoptions_create();
  siftdb_flushoptions_set_wait(fo, 1);
  siftdb_flush(db, fo, &err);
  CHECK_OK(err);
  siftdb_flush(db, NULL, &err);
  CHECK_OK(err);
  siftdb_flush(NULL, fo, &err);
  CHECK_ERR(err, "db is NULL");
  siftdb_flushoptions_destroy(fo);

  {
    size_t len = 0;
    char* v = siftdb_property_value(db, "siftdb.stats", &len);
    CHECK(v != NULL && len > 0 && strlen(v) == len);
    siftdb_free(v);
    CHECK(siftdb_property_value(db, "siftdb.no-such-property", &len) == NULL);
    CHECK(len == 0);
    CHECK(siftdb_property_value(db, NULL, NULL) == NULL);
    CHECK(siftdb_property_value(NULL, "siftdb.stats", NULL) == NULL);
    v = siftdb_property_value(db, "siftdb.background-error", NULL);
    CHECK(v != NULL && strcmp(v, "OK") == 0);
    siftdb_free(v);
  }
  {
    const char* starts[2] = {"a", "x"};
    const char* limits[2] = {"z", "x"};
    size_t start_lens[2] = {1, 1};
    size_t limit_lens[2] = {1, 1};
    uint64_t sizes[2] = {7, 7};
    siftdb_approximate_sizes(db, 2, starts, start_lens, limits, limit_lens,
                             sizes);
    CHECK(sizes[0] > 0);
    CHECK(sizes[1] == 0);  // [x, x) is empty
    siftdb_approximate_sizes(NULL, 2, starts, start_lens, limits, limit_lens,
                             sizes);
    CHECK(sizes[0] == 0 && sizes[1] == 0);
    siftdb_approximate_sizes(db, 0, NULL, NULL, NULL, NULL, NULL);
  }
  siftdb_compact_range(db, NULL, 0, NULL, 0, &err);
  CHECK_OK(err);
  siftdb_compact_range(db, "a", 1, "z", 1, &err);
  CHECK_OK(err);
  siftdb_compact_range(NULL, NULL, 0, NULL, 0, &err);
  CHECK_ERR(err, "db is NULL");
  {
    char* level1 =
        siftdb_property_value(db, "siftdb.num-files-at-level0", NULL);
    CHECK(level1 != NULL);
    siftdb_free(level1);
  }

  siftdb_disable_file_deletions(db, &err);
  CHECK_OK(err);
  {
    size_t count = 0, i;
    uint64_t manifest_size = 0;
    int saw_current = 0;
    char** files = siftdb_live_files(db, 1, &count, &manifest_size, &err);
    CHECK_OK(err);
    CHECK(files != NULL && count >= 2 && manifest_size > 0);
    for (i = 0; i < count; i++) {
      if (strcmp(files[i], "/CURRENT") == 0) saw_current = 1;
    }
    CHECK(files[count] == NULL);
    CHECK(saw_current);
    siftdb_free(files);
    CHECK(siftdb_live_files(NULL, 0, &count, NULL, &err) == NULL);
    CHECK_ERR(err, "db is NULL");
    CHECK(count == 0);
  }
  siftdb_enable_file_deletions(db, 1, &err);
  CHECK_OK(err);
  siftdb_disable_file_deletions(NULL, &err);
  CHECK_ERR(err, "db is NULL");
  siftdb_enable_file_deletions(NULL, 0, &err);
  CHECK_ERR(err, "db is NULL");

  Path(checkpoint, sizeof(checkpoint), "checkpoint");
  siftdb_create_checkpoint(db, checkpoint, &err);
  CHECK_OK(err);
  siftdb_create_checkpoint(db, checkpoint, &err);  // exists now
  CHECK(err != NULL);
  siftdb_free(err);
  err = NULL;
  siftdb_create_checkpoint(db, NULL, &err);
  CHECK_ERR(err, "dir is NULL");
  siftdb_create_checkpoint(NULL, checkpoint, &err);
  CHECK_ERR(err, "db is NULL");
  {
    // The copy opens, read-only, and holds the data; writes fail there.
    siftdb_t* copy = siftdb_open_for_read_only(NULL, checkpoint, &err);
    CHECK_OK(err);
    CheckGet(copy, NULL, "banana", "yellow");
    siftdb_put(copy, NULL, "k", 1, "v", 1, &err);
    CHECK_ERR(err, "FAILED_PRECONDITION");
    siftdb_close(copy, &err);
    CHECK_OK(err);
  }
}

static int comparator_destroyed = 0;

static int ReverseCompare(void* state, const char* a, size_t alen,
                          const char* b, size_t blen) {
  size_t n = alen < blen ? alen : blen;
  int r = memcmp(a, b, n);
  (void)state;
  if (r == 0) r = alen < blen ? -1 : alen > blen ? 1 : 0;
  return -r;
}

static const char* ReverseName(void* state) {
  (void)state;
  return "c_api_test.Reverse";
}

static void DestroyComparator(void* state) { *(int*)state += 1; }

void TestComparator(void) {
  char* err = NULL;
  char path[4200];
  siftdb_options_t* options = siftdb_options_create();
  siftdb_comparator_t* cmp = siftdb_comparator_create(
      &comparator_destroyed, DestroyComparator, ReverseCompare, ReverseName);
  siftdb_t* db;
  siftdb_iterator_t* it;
  const siftdb_snapshot_t* snap;
  CHECK(siftdb_comparator_create(NULL, NULL, NULL, ReverseName) == NULL);
  Path(path, sizeof(path), "reverse");
  siftdb_options_set_create_if_missing(options, 1);
  siftdb_options_set_comparator(options, cmp);
  siftdb_comparator_destroy(cmp);  // the options keep it
  db = siftdb_open(options, path, &err);
  CHECK_OK(err);
  siftdb_options_destroy(options);  // and the DB keeps it
  CHECK(comparator_destroyed == 0);
  siftdb_put(db, NULL, "a", 1, "1", 1, &err);
  siftdb_put(db, NULL, "b", 1, "2", 1, &err);
  siftdb_put(db, NULL, "c", 1, "3", 1, &err);
  CHECK_OK(err);
  snap = siftdb_create_snapshot(db);
  it = siftdb_create_iterator(db, NULL);
  siftdb_iter_seek_to_first(it);
  CheckIterAt(it, "c", "3");
  siftdb_iter_seek_to_last(it);
  CheckIterAt(it, "a", "1");
  // Closing with an iterator and a snapshot alive: the iterator keeps
  // reading, and the engine (and comparator) go with the last of them.
  siftdb_close(db, &err);
  CHECK_OK(err);
  CHECK(comparator_destroyed == 0);
  siftdb_iter_prev(it);
  CheckIterAt(it, "b", "2");
  siftdb_iter_destroy(it);
  CHECK(comparator_destroyed == 0);   // the snapshot still holds the engine
  siftdb_release_snapshot(db, snap);  // db is closed: not used
  CHECK(comparator_destroyed == 1);

  // Reopening with the default order fails: the comparator is persisted.
  CHECK(siftdb_open(NULL, path, &err) == NULL);
  CHECK_ERR(err, "c_api_test.Reverse");
  siftdb_options_set_comparator(NULL, NULL);
  siftdb_comparator_destroy(NULL);
}

// Garbage in CURRENT: opening fails cleanly; repair rebuilds the database.
void TestCorruptionAndRepair(siftdb_options_t* options) {
  char* err = NULL;
  char current[4300];
  FILE* f;
  siftdb_t* db;
  snprintf(current, sizeof(current), "%s/CURRENT", db_path);
  f = fopen(current, "w");
  CHECK(f != NULL);
  fputs("\x01garbage\n", f);
  fclose(f);
  CHECK(siftdb_open(options, db_path, &err) == NULL);
  CHECK(err != NULL);
  siftdb_free(err);
  err = NULL;

  siftdb_repair_db(options, db_path, &err);
  CHECK_OK(err);
  db = siftdb_open(options, db_path, &err);
  CHECK_OK(err);
  CheckGet(db, NULL, "banana", "yellow");
  siftdb_close(db, &err);
  CHECK_OK(err);
  siftdb_repair_db(options, NULL, &err);
  CHECK_ERR(err, "name is NULL");
}

void TestDestroy(siftdb_options_t* options) {
  char* err = NULL;
  siftdb_options_t* strict = siftdb_options_create();
  siftdb_options_set_error_if_exists(strict, 1);
  siftdb_options_set_create_if_missing(strict, 1);
  CHECK(siftdb_open(strict, db_path, &err) == NULL);
  CHECK_ERR(err, db_path);
  siftdb_options_destroy(strict);

  siftdb_destroy_db(options, db_path, &err);
  CHECK_OK(err);
  CHECK(access(db_path, F_OK) != 0);
  siftdb_destroy_db(NULL, db_path, &err);  // absent: no error
  CHECK_OK(err);
  siftdb_destroy_db(options, NULL, &err);
  CHECK_ERR(err, "name is NULL");
  siftdb_options_destroy(NULL);
  siftdb_readoptions_destroy(NULL);
  siftdb_writeoptions_destroy(NULL);
  siftdb_flushoptions_destroy(NULL);
  siftdb_close(NULL, &err);
  CHECK_OK(err);
}

// Two databases share one block cache; the LOG's rotation options are
// checked at open.
void TestSharedCacheAndLogOptions(void) {
  char* err = NULL;
  char path_a[4300], path_b[4300];
  char key[16];
  int i;
  siftdb_t* a;
  siftdb_t* b;
  siftdb_cache_t* cache = siftdb_cache_create_lru(1 << 20);
  siftdb_options_t* o = siftdb_options_create();
  CHECK(cache != NULL);
  CHECK(siftdb_cache_get_capacity(cache) == (1 << 20));
  CHECK(siftdb_cache_get_usage(cache) == 0);
  CHECK(siftdb_cache_get_capacity(NULL) == 0 &&
        siftdb_cache_get_usage(NULL) == 0);
  siftdb_options_set_create_if_missing(o, 1);
  siftdb_options_set_cache(o, cache);
  siftdb_options_set_cache(NULL, cache);
  siftdb_options_set_max_log_file_size(o, 1); /* below 4096: refused */
  Path(path_a, sizeof(path_a), "shared_a");
  Path(path_b, sizeof(path_b), "shared_b");
  CHECK(siftdb_open(o, path_a, &err) == NULL);
  CHECK_ERR(err, "max_log_file_size");
  siftdb_options_set_max_log_file_size(o, 1 << 20);
  siftdb_options_set_keep_log_file_num(o, 0);
  CHECK(siftdb_open(o, path_a, &err) == NULL);
  CHECK_ERR(err, "keep_log_file_num");
  siftdb_options_set_keep_log_file_num(o, 5);
  a = siftdb_open(o, path_a, &err);
  CHECK_OK(err);
  b = siftdb_open(o, path_b, &err);
  CHECK_OK(err);
  siftdb_cache_destroy(cache); /* the options and DBs keep it alive */
  for (i = 0; i < 200; i++) {
    snprintf(key, sizeof(key), "k%04d", i);
    siftdb_put(a, NULL, key, strlen(key), "va", 2, &err);
    CHECK_OK(err);
    siftdb_put(b, NULL, key, strlen(key), "vb", 2, &err);
    CHECK_OK(err);
  }
  siftdb_compact_range(a, NULL, 0, NULL, 0, &err);
  CHECK_OK(err);
  siftdb_compact_range(b, NULL, 0, NULL, 0, &err);
  CHECK_OK(err);
  CheckGet(a, NULL, "k0007", "va");
  CheckGet(b, NULL, "k0007", "vb");
  {
    /* Both see one cache: the same usage, counting both DBs' blocks. */
    char* ua = siftdb_property_value(a, "siftdb.block-cache-usage", NULL);
    char* ub = siftdb_property_value(b, "siftdb.block-cache-usage", NULL);
    char* cap = siftdb_property_value(a, "siftdb.block-cache-capacity", NULL);
    CHECK(ua != NULL && ub != NULL && cap != NULL);
    CHECK(strcmp(ua, ub) == 0);
    CHECK(strcmp(ua, "0") != 0);
    CHECK(strcmp(cap, "1048576") == 0);
    siftdb_free(ua);
    siftdb_free(ub);
    siftdb_free(cap);
  }
  siftdb_close(a, &err);
  CHECK_OK(err);
  siftdb_close(b, &err);
  CHECK_OK(err);
  siftdb_options_set_cache(o, NULL);
  siftdb_options_destroy(o);
}
