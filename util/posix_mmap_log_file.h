// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// A write-ahead log file appended through a shared memory mapping (what
// Env::Default()'s NewWalFile returns, Options::wal_mmap_writes).
//
// Why: a log append is small (one record per write group) and must reach
// the OS before the write is acknowledged, so a buffered file makes one
// write(2) per record, and on ext4 each one that extends the file also
// updates the inode. Here the file is preallocated (fallocate(2)) one
// window at a time and mapped; an append is a memcpy into page-cache
// pages, which a process crash does not lose, exactly like bytes handed to
// write(2).
//
// What callers may rely on:
// - Append() copies into the mapping; once it returns OK the bytes are in
//   the OS (Flush() has nothing to do). Sync() = fdatasync(2), which on
//   Linux writes back pages dirtied through the mapping too.
// - While the file is open, and after a crash, it ends in zeros past the
//   last append, up to the end of the current window (kWindowBytes). Log
//   readers treat a zero-filled tail as the end of the log
//   (docs/wal_format.md). Close() truncates the file to the bytes appended.
// - Windows tile the file: a window is mapped once and never again, so no
//   page is ever read back from disk through the mapping.
// - Errors name the file: a failed preallocation (ENOSPC ->
//   ResourceExhausted) fails the Append that needed it, with no byte of the
//   rest of that Append written.
// - One thread at a time, like every WritableFile.

#ifndef SIFTDB_UTIL_POSIX_MMAP_LOG_FILE_H_
#define SIFTDB_UTIL_POSIX_MMAP_LOG_FILE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "siftdb/env.h"

namespace siftdb {

// Bytes preallocated and mapped at a time; a multiple of the page size.
inline constexpr size_t kMmapLogWindowBytes = size_t{1} << 20;

// Creates (or truncates) fname and opens it for mapped appends. Returns
// Unimplemented when the file system cannot preallocate (the caller then
// falls back to a buffered file); other errors as PosixError.
absl::StatusOr<std::unique_ptr<WritableFile>> OpenPosixMmapLogFile(
    const std::string& fname);

}  // namespace siftdb

#endif  // SIFTDB_UTIL_POSIX_MMAP_LOG_FILE_H_
