/* Copyright (c) siftdb authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The C API's read paths beyond Get (issue #17): iterator bounds, prefix
 * extractors with prefix seeks, and KeyMayExist. */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "siftdb/c.h"
#include "tests/c_api/c_api_test.h"

static void Put(siftdb_t* db, const char* k, const char* v) {
  char* err = NULL;
  siftdb_put(db, NULL, k, strlen(k), v, strlen(v), &err);
  CHECK_OK(err);
}

static int CountFrom(siftdb_iterator_t* it, const char* target) {
  int n = 0;
  if (target == NULL) {
    siftdb_iter_seek_to_first(it);
  } else {
    siftdb_iter_seek(it, target, strlen(target));
  }
  for (; siftdb_iter_valid(it); siftdb_iter_next(it)) n++;
  return n;
}

static void TestBounds(siftdb_t* db) {
  siftdb_readoptions_t* ro = siftdb_readoptions_create();
  siftdb_iterator_t* it;
  char* err = NULL;
  char lower[2] = {'b', 0}, upper[2] = {'d', 0};
  Put(db, "a", "1");
  Put(db, "b", "2");
  Put(db, "c", "3");
  Put(db, "d", "4");
  siftdb_readoptions_set_iterate_lower_bound(ro, lower, 1);
  siftdb_readoptions_set_iterate_upper_bound(ro, upper, 1);
  it = siftdb_create_iterator(db, ro);
  /* The iterator keeps its own copy: the options and the caller's bytes
   * may change or go away. */
  lower[0] = 'z';
  siftdb_readoptions_destroy(ro);
  siftdb_iter_seek_to_first(it);
  CheckIterAt(it, "b", "2");
  siftdb_iter_next(it);
  CheckIterAt(it, "c", "3");
  siftdb_iter_next(it);
  CHECK(!siftdb_iter_valid(it));
  siftdb_iter_seek_to_last(it);
  CheckIterAt(it, "c", "3");
  siftdb_iter_get_error(it, &err);
  CHECK_OK(err);
  siftdb_iter_destroy(it);

  /* A NULL key clears a bound. */
  ro = siftdb_readoptions_create();
  siftdb_readoptions_set_iterate_upper_bound(ro, "b", 1);
  siftdb_readoptions_set_iterate_upper_bound(ro, NULL, 0);
  it = siftdb_create_iterator(db, ro);
  CHECK(CountFrom(it, NULL) == 4);
  siftdb_iter_destroy(it);
  siftdb_readoptions_destroy(ro);
}

static void TestPrefixSeeksAndKeyMayExist(void) {
  char path[4200];
  char* err = NULL;
  char* value = NULL;
  size_t vallen = 99;
  uint8_t found = 9;
  siftdb_options_t* options = siftdb_options_create();
  siftdb_slicetransform_t* fixed = siftdb_slicetransform_create_fixed_prefix(4);
  siftdb_slicetransform_t* capped =
      siftdb_slicetransform_create_capped_prefix(2);
  siftdb_readoptions_t* ro = siftdb_readoptions_create();
  siftdb_iterator_t* it;
  siftdb_t* db;
  CHECK(strcmp(siftdb_slicetransform_name(fixed), "siftdb.FixedPrefix.4") == 0);
  CHECK(strcmp(siftdb_slicetransform_name(capped), "siftdb.CappedPrefix.2") ==
        0);
  siftdb_slicetransform_destroy(capped);
  siftdb_options_set_create_if_missing(options, 1);
  siftdb_options_set_prefix_extractor(options, fixed);
  siftdb_slicetransform_destroy(fixed); /* the options keep a reference */
  siftdb_options_set_whole_key_filtering(options, 1);
  Path(path, sizeof(path), "prefix_db");
  db = siftdb_open(options, path, &err);
  CHECK_OK(err);
  Put(db, "usr1-a", "1");
  Put(db, "usr1-b", "2");
  Put(db, "usr2-a", "3");

  siftdb_readoptions_set_prefix_same_as_start(ro, 1);
  it = siftdb_create_iterator(db, ro);
  CHECK(CountFrom(it, "usr1") == 2);
  CHECK(CountFrom(it, "usr3") == 0);
  siftdb_iter_destroy(it);
  siftdb_readoptions_set_total_order_seek(ro, 1);
  it = siftdb_create_iterator(db, ro);
  CHECK(CountFrom(it, "usr1") == 3);
  siftdb_iter_destroy(it);
  siftdb_readoptions_destroy(ro);

  /* In the MemTable: the value comes back. */
  CHECK(siftdb_key_may_exist(db, NULL, "usr1-a", 6, &value, &vallen, &found) ==
        1);
  CHECK(found == 1 && vallen == 1 && value != NULL && value[0] == '1');
  siftdb_free(value);
  /* A deleted key certainly does not exist. */
  siftdb_delete(db, NULL, "usr1-b", 6, &err);
  CHECK_OK(err);
  CHECK(siftdb_key_may_exist(db, NULL, "usr1-b", 6, &value, &vallen, &found) ==
        0);
  CHECK(value == NULL && vallen == 0 && found == 0);
  /* In a table: "maybe" without the value; NULL outputs are allowed. */
  siftdb_flush(db, NULL, &err);
  CHECK_OK(err);
  CHECK(siftdb_key_may_exist(db, NULL, "usr2-a", 6, &value, &vallen, &found) ==
        1);
  CHECK(value == NULL && found == 0);
  CHECK(siftdb_key_may_exist(db, NULL, "usr2-a", 6, NULL, NULL, NULL) == 1);
  /* Outside every table's key range: certainly absent. */
  CHECK(siftdb_key_may_exist(db, NULL, "zzz", 3, NULL, NULL, NULL) == 0);
  /* Nothing known without a database or a key. */
  CHECK(siftdb_key_may_exist(NULL, NULL, "k", 1, NULL, NULL, NULL) == 1);
  CHECK(siftdb_key_may_exist(db, NULL, NULL, 1, NULL, NULL, NULL) == 1);
  siftdb_close(db, &err);
  CHECK_OK(err);
  siftdb_options_destroy(options);
}

void TestReadPaths(void) {
  char path[4200];
  char* err = NULL;
  siftdb_options_t* options = siftdb_options_create();
  siftdb_t* db;
  siftdb_options_set_create_if_missing(options, 1);
  Path(path, sizeof(path), "bounds_db");
  db = siftdb_open(options, path, &err);
  CHECK_OK(err);
  TestBounds(db);
  siftdb_close(db, &err);
  CHECK_OK(err);
  siftdb_options_destroy(options);
  TestPrefixSeeksAndKeyMayExist();
}
