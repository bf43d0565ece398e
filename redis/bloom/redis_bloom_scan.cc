// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloomImpl::ScanDump / LoadChunk: BF.SCANDUMP and BF.LOADCHUNK with
// RedisBloom's iterator protocol and header (redis/bloom/redis_bloom_dump.h).
// A dump reads the meta hash, then each chunk with GETRANGE inside
// MULTI/EXEC together with the filter's token, so a filter deleted or
// recreated mid-dump is noticed; a load creates the filter from the header
// in one script and writes chunks with SETRANGE in another.

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/bloom/redis_bloom_dump.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/bloom/redis_bloom_scripts.h"
#include "redis/bloom/redis_bloom_util.h"
#include "redis/client/redis_client.h"
#include "siftdb/redis_bloom.h"
#include "util/absl_compat.h"

namespace siftdb {

using redis_bloom::BloomName;
using redis_bloom::BloomNotFound;
using redis_bloom::BloomScriptError;
using redis_bloom::BloomWrongType;
using redis_bloom::ChainHeader;
using redis_bloom::ChainLink;
using redis_bloom::FormatDouble;
using redis_bloom::IsOkReply;
using redis_bloom::IsStaleReply;
using redis_bloom::kMaxAttempts;
using redis_bloom::LinkSpec;
using redis_bloom::ParseUint;
using redis_bloom::TooContended;
using redis_bloom::UnexpectedReply;
using redis_bloom::WithReply;

absl::StatusOr<BloomDumpChunk> RedisBloomImpl::ScanDump(std::string_view name,
                                                        int64_t iterator) {
  if (iterator == 0) {
    absl::StatusOr<const Layout*> got = Fetch(name);
    if (!got.ok()) return got.status();
    ChainHeader header;
    header.items = (*got)->items;
    header.options = (*got)->options;
    header.growth = (*got)->growth;
    header.links = (*got)->links;
    return BloomDumpChunk{1, redis_bloom::EncodeHeader(header)};
  }
  bool refreshed = false;
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    absl::StatusOr<const Layout*> got = Cached(name);
    if (!got.ok()) return got.status();
    std::vector<uint64_t> sizes;
    for (const ChainLink& l : (*got)->links) sizes.push_back(l.spec.bytes);
    std::optional<redis_bloom::ChunkRef> ref =
        redis_bloom::DumpChunkAt(sizes, iterator);
    if (!ref.has_value()) {
      // Past the end of the layout cached here: the end of the dump, unless
      // the filter grew since it was cached (the dump's header, read by
      // this or another client, may list sub-filters this cache lacks).
      // Only a freshly read layout may end the dump.
      if (refreshed) return BloomDumpChunk{0, ""};
      cache_.erase(std::string(name));
      refreshed = true;
      continue;
    }
    const std::string token = (*got)->token();
    std::vector<RedisArgs> cmds;
    cmds.push_back(RedisArgs{"MULTI"});
    cmds.push_back(RedisArgs{"HMGET", MetaKey(name), "id", "version"});
    RedisArgs range;
    range.Add("GETRANGE")
        .Add(BitmapKey(name, ref->link))
        .AddUint(ref->offset)
        .AddUint(ref->offset + ref->length - 1);
    cmds.push_back(range);
    cmds.push_back(RedisArgs{"EXEC"});
    absl::StatusOr<std::vector<RedisReply>> replies = client_->Pipeline(cmds);
    if (!replies.ok()) return replies.status();
    const RedisReply& exec = replies->back();
    if (!exec.is_array() || exec.elements().size() != 2) {
      return UnexpectedReply(*client_, name, exec);
    }
    const RedisReply& ids = exec.elements()[0];
    if (exec.elements()[0].is_error()) {
      if (ids.str().rfind("WRONGTYPE", 0) == 0)
        return BloomWrongType(*client_, name);
      return client_->ServerErrorStatus("HMGET", ids);
    }
    if (!ids.is_array() || ids.elements().size() != 2 ||
        absl::StrCat(ids.elements()[0].str(), ":", ids.elements()[1].str()) !=
            token) {
      cache_.erase(std::string(name));
      if (ids.is_array() && !ids.elements().empty() &&
          ids.elements()[0].is_nil()) {
        return BloomNotFound(name);
      }
      continue;
    }
    const RedisReply& data = exec.elements()[1];
    if (data.is_error()) return client_->ServerErrorStatus("GETRANGE", data);
    std::string bytes = data.str();
    bytes.resize(ref->length, '\0');  // a short string reads as zeros
    return BloomDumpChunk{ref->next_iterator, std::move(bytes)};
  }
  return TooContended(name);
}

absl::Status RedisBloomImpl::LoadChunk(std::string_view name, int64_t iterator,
                                       std::string_view data) {
  if (iterator == 1) {
    absl::StatusOr<ChainHeader> header = redis_bloom::DecodeHeader(data);
    if (!header.ok()) {
      return WithReply(absl::Status(header.status().code(),
                                    absl::StrFormat("%s: %s", BloomName(name),
                                                    header.status().message())),
                       "ERR received bad data");
    }
    const bool nonscaling = (header->options & redis_bloom::kOptNoScaling) != 0;
    double first_error = header->links[0].spec.error;
    RedisArgs args;
    args.Add(NewId())
        .Add(FormatDouble(nonscaling
                              ? first_error
                              : first_error / redis_bloom::kTighteningRatio))
        .AddUint(header->growth)
        .AddUint(header->options)
        .AddUint(header->items)
        .AddUint(header->links.size());
    for (const ChainLink& l : header->links) {
      args.AddUint(l.spec.capacity)
          .Add(FormatDouble(l.spec.error))
          .Add(FormatDouble(l.spec.bpe))
          .AddUint(l.spec.bits)
          .AddUint(l.spec.bytes)
          .AddUint(l.spec.hashes)
          .AddUint(l.spec.n2)
          .AddUint(l.items);
    }
    cache_.erase(std::string(name));
    absl::StatusOr<RedisReply> reply =
        client_->Eval(redis_bloom::LoadHeaderScript(), {MetaKey(name)}, args);
    if (!reply.ok()) return reply.status();
    if (reply->is_error()) {
      if (reply->str() == "ERR received bad data") {
        return WithReply(absl::AlreadyExistsError(
                             BloomName(name) +
                             " already exists; a dump header loads only into "
                             "a missing key"),
                         reply->str());
      }
      return BloomScriptError(*client_, name, *reply);
    }
    if (!IsOkReply(*reply, 2)) return UnexpectedReply(*client_, name, *reply);
    return absl::OkStatus();
  }
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    absl::StatusOr<const Layout*> got = Cached(name);
    if (!got.ok()) return got.status();
    std::vector<uint64_t> sizes;
    for (const ChainLink& l : (*got)->links) sizes.push_back(l.spec.bytes);
    absl::StatusOr<redis_bloom::ChunkRef> ref =
        redis_bloom::LoadChunkTarget(sizes, iterator, data.size());
    if (!ref.ok()) {
      return WithReply(
          absl::InvalidArgumentError(absl::StrFormat(
              "%s: chunk at iterator %d of %d bytes: %s", BloomName(name),
              iterator, data.size(), ref.status().message())),
          absl::StrCat("ERR ", ref.status().message()));
    }
    RedisArgs args;
    args.Add((*got)->token()).AddUint(ref->link).AddUint(ref->offset).Add(data);
    absl::StatusOr<RedisReply> reply =
        client_->Eval(redis_bloom::LoadDataScript(), {MetaKey(name)}, args);
    if (!reply.ok()) return reply.status();
    if (reply->is_error()) {
      cache_.erase(std::string(name));
      return BloomScriptError(*client_, name, *reply);
    }
    if (IsStaleReply(*reply)) {
      cache_.erase(std::string(name));
      continue;
    }
    if (!IsOkReply(*reply, 1)) return UnexpectedReply(*client_, name, *reply);
    return absl::OkStatus();
  }
  return TooContended(name);
}

}  // namespace siftdb
