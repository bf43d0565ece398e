// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/server/bloom_batch.h"

#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace siftdb {

namespace {

// Server error codes RedisClient quotes in its statuses ("redis HOST: CMD:
// NOPERM ..."): the reply a client of Redis itself would have seen.
constexpr std::string_view kServerCodes[] = {
    "NOPERM ", "NOAUTH ", "WRONGPASS ", "WRONGTYPE ", "OOM ", "READONLY "};

// The server's own error in a reply text "ERR redis HOST: CMD: CODE ...".
RedisReply UnwrapServerError(RedisReply reply) {
  if (!reply.is_error() || !absl::StartsWith(reply.str(), "ERR redis ")) {
    return reply;
  }
  for (std::string_view code : kServerCodes) {
    const size_t at = reply.str().find(code);
    if (at != std::string::npos) {
      return RedisReply::Error(reply.str().substr(at));
    }
  }
  return reply;
}

// Requests of one kind on one filter, in batch order.
struct Group {
  std::string filter;
  std::vector<size_t> members;  // indexes into the batch
};

std::vector<Group> GroupByFilter(
    const std::vector<const std::vector<std::string>*>& requests,
    BloomRequestKind kind) {
  std::vector<Group> groups;
  absl::flat_hash_map<std::string_view, size_t> index;
  for (size_t i = 0; i < requests.size(); i++) {
    const std::vector<std::string>& argv = *requests[i];
    if (ClassifyBloomRequest(argv) != kind) continue;
    auto [it, fresh] = index.emplace(argv[1], groups.size());
    if (fresh) groups.push_back(Group{argv[1], {}});
    groups[it->second].members.push_back(i);
  }
  return groups;
}

// Items of a group, concatenated in order.
std::vector<std::string_view> GroupItems(
    const Group& g,
    const std::vector<const std::vector<std::string>*>& requests) {
  std::vector<std::string_view> items;
  for (size_t m : g.members) {
    const std::vector<std::string>& argv = *requests[m];
    items.insert(items.end(), argv.begin() + 2, argv.end());
  }
  return items;
}

bool IsSingle(const std::vector<std::string>& argv) {
  return absl::EqualsIgnoreCase(argv[0], "BF.ADD") ||
         absl::EqualsIgnoreCase(argv[0], "BF.EXISTS");
}

// One reply per member from per-item flags; items past `flags.size()`
// were not processed and get `stopped` (BF.ADD: as its error reply; an
// M-command: as the last element of its array, as RedisBloom does).
void SliceReplies(const Group& g,
                  const std::vector<const std::vector<std::string>*>& requests,
                  const std::vector<bool>& flags, const absl::Status& stopped,
                  std::vector<RedisReply>* out) {
  size_t at = 0;
  for (size_t m : g.members) {
    const std::vector<std::string>& argv = *requests[m];
    const size_t n = argv.size() - 2;
    if (IsSingle(argv)) {
      (*out)[m] = at < flags.size() ? RedisReply::Integer(flags[at] ? 1 : 0)
                                    : BloomErrorReply(stopped);
    } else {
      std::vector<RedisReply> elements;
      for (size_t i = at; i < at + n && i < flags.size(); i++) {
        elements.push_back(RedisReply::Integer(flags[i] ? 1 : 0));
      }
      if (at + n > flags.size()) elements.push_back(BloomErrorReply(stopped));
      (*out)[m] = RedisReply::Array(std::move(elements));
    }
    at += n;
  }
}

void RunAddGroup(BloomSession* s, const Group& g,
                 const std::vector<const std::vector<std::string>*>& requests,
                 std::vector<RedisReply>* out) {
  absl::StatusOr<BloomAddResults> r =
      s->bloom()->MAdd(g.filter, GroupItems(g, requests));
  if (!r.ok()) {
    for (size_t m : g.members) (*out)[m] = BloomErrorReply(r.status());
    return;
  }
  SliceReplies(g, requests, r->added, r->stopped, out);
}

void RunExistsGroup(
    BloomSession* s, const Group& g,
    const std::vector<const std::vector<std::string>*>& requests,
    std::vector<RedisReply>* out) {
  absl::StatusOr<std::vector<bool>> r =
      s->bloom()->MExists(g.filter, GroupItems(g, requests));
  if (!r.ok()) {
    for (size_t m : g.members) (*out)[m] = BloomErrorReply(r.status());
    return;
  }
  SliceReplies(g, requests, *r, absl::OkStatus(), out);
}

}  // namespace

absl::StatusOr<std::unique_ptr<BloomSession>> BloomSession::Open(
    const RedisClientOptions& options) {
  absl::StatusOr<std::unique_ptr<RedisClient>> client =
      RedisClient::Connect(options);
  if (!client.ok()) return client.status();
  std::unique_ptr<BloomSession> s(new BloomSession());
  s->client_ = std::move(*client);
  s->commands_ = std::make_unique<RedisBloomCommands>(s->client_.get());
  s->bloom_ = std::make_unique<RedisBloomImpl>(s->client_.get());
  return s;
}

BloomRequestKind ClassifyBloomRequest(const std::vector<std::string>& argv) {
  if (argv.size() < 3) return BloomRequestKind::kOther;
  const std::string& c = argv[0];
  if (absl::EqualsIgnoreCase(c, "BF.ADD")) {
    return argv.size() == 3 ? BloomRequestKind::kAdd : BloomRequestKind::kOther;
  }
  if (absl::EqualsIgnoreCase(c, "BF.MADD")) return BloomRequestKind::kAdd;
  if (absl::EqualsIgnoreCase(c, "BF.EXISTS")) {
    return argv.size() == 3 ? BloomRequestKind::kExists
                            : BloomRequestKind::kOther;
  }
  if (absl::EqualsIgnoreCase(c, "BF.MEXISTS")) return BloomRequestKind::kExists;
  return BloomRequestKind::kOther;
}

std::vector<RedisReply> ExecuteBloomBatch(
    BloomSession* session,
    const std::vector<const std::vector<std::string>*>& requests) {
  std::vector<RedisReply> out(requests.size());
  for (const Group& g : GroupByFilter(requests, BloomRequestKind::kAdd)) {
    if (g.members.size() == 1) {
      out[g.members[0]] = session->commands()->Execute(*requests[g.members[0]]);
    } else {
      RunAddGroup(session, g, requests, &out);
    }
  }
  for (const Group& g : GroupByFilter(requests, BloomRequestKind::kExists)) {
    if (g.members.size() == 1) {
      out[g.members[0]] = session->commands()->Execute(*requests[g.members[0]]);
    } else {
      RunExistsGroup(session, g, requests, &out);
    }
  }
  for (size_t i = 0; i < requests.size(); i++) {
    if (ClassifyBloomRequest(*requests[i]) == BloomRequestKind::kOther) {
      RedisBloomCommands fresh(session->client());
      out[i] = fresh.Execute(*requests[i]);
    }
    out[i] = UnwrapServerError(std::move(out[i]));
  }
  return out;
}

RedisReply BloomErrorReply(const absl::Status& status) {
  return UnwrapServerError(StatusReply(status));
}

}  // namespace siftdb
