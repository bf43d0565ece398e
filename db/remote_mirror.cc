// Copyright (c) siftdb authors.
//
// Placeholder until the Redis mirror lands (issue "Mirror the engine's
// filters into Redis"): asking for a mirror is a clear error.

#include "db/remote_mirror.h"

namespace siftdb {

absl::StatusOr<std::unique_ptr<RemoteMirror>> RemoteMirror::Create(
    const Options& options, const std::string& dbname, TableCache* table_cache,
    Statistics* statistics) {
  return absl::UnimplementedError(
      "Options.remote_filter: the Redis mirror is not available in this "
      "build");
}

}  // namespace siftdb
