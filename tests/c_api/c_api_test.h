// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the two files of c_api_test share: the CHECK macros, the test's
// directory, and helpers that read through the C API.

#ifndef SIFTDB_TESTS_C_API_C_API_TEST_H_
#define SIFTDB_TESTS_C_API_C_API_TEST_H_

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siftdb/c.h"

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

// No error: prints it otherwise.
#define CHECK_OK(err)                                                      \
  do {                                                                     \
    if ((err) != NULL) {                                                   \
      fprintf(stderr, "%s:%d: unexpected error: %s\n", __FILE__, __LINE__, \
              (err));                                                      \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

// An error whose text contains `needle`; frees it and resets err.
#define CHECK_ERR(err, needle)                                        \
  do {                                                                \
    CHECK((err) != NULL);                                             \
    if (strstr((err), (needle)) == NULL) {                            \
      fprintf(stderr, "%s:%d: error \"%s\" lacks \"%s\"\n", __FILE__, \
              __LINE__, (err), (needle));                             \
      exit(1);                                                        \
    }                                                                 \
    siftdb_free(err);                                                 \
    (err) = NULL;                                                     \
  } while (0)

// The test's own directory (made by main) and its database's path.
extern char root[4096];
extern char db_path[4200];

// root + "/" + leaf into out.
void Path(char* out, size_t n, const char* leaf);
// The value of key k, checked against want (NULL: absent).
void CheckGet(siftdb_t* db, const siftdb_readoptions_t* ro, const char* k,
              const char* want);
// The iterator is valid at (k, v).
void CheckIterAt(const siftdb_iterator_t* it, const char* k, const char* v);

// c_api_admin_test.c: properties, sizes, compaction, checkpoints, live
// files, comparators from C, repair of a damaged DB, destroy.
void TestAdmin(siftdb_t* db);
void TestComparator(void);
void TestCorruptionAndRepair(siftdb_options_t* options);
void TestDestroy(siftdb_options_t* options);
void TestSharedCacheAndLogOptions(void);

// c_api_read_paths_test.c: iterator bounds, prefix seeks, KeyMayExist.
void TestReadPaths(void);

#endif  // SIFTDB_TESTS_C_API_C_API_TEST_H_
