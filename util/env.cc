// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Helpers declared in include/siftdb/env.h that work over any Env.

#include "siftdb/env.h"

#include <memory>
#include <string>
#include <string_view>

namespace siftdb {

absl::Status WriteStringToFile(Env* env, std::string_view data,
                               const std::string& fname, bool sync) {
  auto file = env->NewWritableFile(fname);
  if (!file.ok()) return file.status();
  absl::Status s = (*file)->Append(data);
  if (s.ok() && sync) s = (*file)->Sync();
  if (s.ok()) s = (*file)->Close();
  file->reset();  // close before any removal
  if (!s.ok()) env->RemoveFile(fname).IgnoreError();
  return s;
}

absl::StatusOr<std::string> ReadFileToString(Env* env,
                                             const std::string& fname) {
  auto file = env->NewSequentialFile(fname);
  if (!file.ok()) return file.status();
  constexpr size_t kChunk = 8192;
  auto scratch = std::make_unique<char[]>(kChunk);
  std::string data;
  while (true) {
    std::string_view piece;
    absl::Status s = (*file)->Read(kChunk, &piece, scratch.get());
    if (!s.ok()) return s;
    data.append(piece.data(), piece.size());
    if (piece.size() < kChunk) break;  // short read: end of file
  }
  return data;
}

}  // namespace siftdb
