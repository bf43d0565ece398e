// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RemoteMirror's entry points in a build without Redis
// (-DSIFTDB_WITH_REDIS=OFF): there is no mirror to create, so any mode but
// kOff is refused before the DB is opened, with a FailedPrecondition that
// names the option and the build setting. Compiled instead of
// remote_mirror.cc and remote_mirror_thread.cc, never beside them.

#include "db/remote_mirror.h"

namespace siftdb {

absl::Status RemoteMirror::ValidateOptions(const RemoteFilterOptions& r) {
  return absl::FailedPreconditionError(
      "Options.remote_filter: this siftdb was built without Redis "
      "(SIFTDB_WITH_REDIS=OFF); leave remote_filter.mode at kOff or rebuild "
      "with -DSIFTDB_WITH_REDIS=ON");
}

absl::StatusOr<std::unique_ptr<RemoteMirror>> RemoteMirror::Create(
    const Options& options, const std::string& dbname, TableCache* table_cache,
    Statistics* statistics, bool db_created) {
  return ValidateOptions(options.remote_filter);
}

}  // namespace siftdb
