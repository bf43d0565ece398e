// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// sst_dump's commands, one function per command, each over one table file.
// Output goes to `out`; problems are returned as a Status whose message
// names the file (and the offset, for damage). The caller (main.cc) prints
// errors to stderr and turns them into the exit code.
//
// Thread safety: single-threaded tool code.

#ifndef SIFTDB_TOOLS_SST_DUMP_SST_DUMP_H_
#define SIFTDB_TOOLS_SST_DUMP_SST_DUMP_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "siftdb/env.h"
#include "table/compression_dict.h"
#include "table/format.h"

namespace siftdb::sst_dump {

struct DumpOptions {
  bool output_hex = false;
  bool show_properties = false;
  bool show_filter = false;
  // User-key range for scan: [from, to); unset means unbounded.
  std::optional<std::string> from;
  std::optional<std::string> to;
  // scan: only user keys that start with this.
  std::optional<std::string> prefix;
  // Stop a scan after this many entries (0: no limit).
  uint64_t limit = 0;
  // scan: verify each block's CRC as it is read.
  bool verify_checksum = true;
};

// scan: every entry in [from, to) as 'key' @ seq : put|del => 'value'.
absl::Status Scan(Env* env, const std::string& path, const DumpOptions& opts,
                  std::FILE* out);
// verify: reads every block, verifies its CRC and structure, and checks that
// the blocks tile the file.
absl::Status Verify(Env* env, const std::string& path, std::FILE* out);
// check: verify, then opens the table and reads every entry: keys parse
// and strictly increase, counts and key range match the properties, and
// the filter answers "may match" for every user key. Prints nothing when
// the table is sound.
absl::Status Check(Env* env, const std::string& path, std::FILE* out);
// raw: every block (offset, size, type, contents), in file order.
absl::Status Raw(Env* env, const std::string& path, const DumpOptions& opts,
                 std::FILE* out);
// identify: whether the file is a siftdb table.
absl::Status Identify(Env* env, const std::string& path, std::FILE* out);
// recompress: the data blocks' size with each compression siftdb has
// (none, snappy, lz4, zstd), and the file size that would give; writes nothing.
absl::Status Recompress(Env* env, const std::string& path, std::FILE* out);
// --show_properties / --show_filter.
absl::Status ShowProperties(Env* env, const std::string& path, std::FILE* out);
absl::Status ShowFilter(Env* env, const std::string& path, std::FILE* out);

// The file's block map: footer, metaindex entries and data block handles.
struct TableLayout {
  uint64_t file_size = 0;
  Footer footer;
  // Metaindex entries (name -> handle), in stored order.
  std::vector<std::pair<std::string, BlockHandle>> meta;
  // Index entries (separator internal key -> data block handle).
  std::vector<std::pair<std::string, BlockHandle>> data;
  // The table's zstd dictionary (its "compression_dict" meta block); null
  // when it has none.
  std::shared_ptr<const ZstdDictionary> dictionary;
};

// Opens `path` for reading; *size gets its size.
absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenFile(
    Env* env, const std::string& path, uint64_t* size);

// Reads the footer, metaindex and index blocks and the compression
// dictionary, if any (CRC verified).
absl::StatusOr<TableLayout> ReadLayout(const RandomAccessFile& file,
                                       const std::string& name,
                                       uint64_t file_size);

}  // namespace siftdb::sst_dump

#endif  // SIFTDB_TOOLS_SST_DUMP_SST_DUMP_H_
