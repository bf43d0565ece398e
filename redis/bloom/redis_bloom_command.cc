// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/bloom/redis_bloom_command.h"

#include <limits>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/bloom/redis_bloom_util.h"

namespace siftdb {

RedisReply ArityError(const std::string& command) {
  return RedisReply::Error(
      absl::StrFormat("ERR wrong number of arguments for '%s' command",
                      absl::AsciiStrToLower(command)));
}

namespace {

RedisReply Arity(const std::string& command) { return ArityError(command); }

RedisReply Ok() { return RedisReply::Status("OK"); }
RedisReply Int(int64_t v) { return RedisReply::Integer(v); }

std::vector<std::string_view> Items(const std::vector<std::string>& a,
                                    size_t from) {
  return std::vector<std::string_view>(a.begin() + from, a.end());
}

bool EqualsIgnoreCase(const std::string& a, std::string_view b) {
  return absl::EqualsIgnoreCase(a, absl::string_view(b.data(), b.size()));
}

RedisReply AddReplies(const BloomAddResults& r) {
  std::vector<RedisReply> out;
  out.reserve(r.added.size() + 1);
  for (bool added : r.added) out.push_back(Int(added ? 1 : 0));
  if (!r.stopped.ok()) out.push_back(StatusReply(r.stopped));
  return RedisReply::Array(std::move(out));
}

}  // namespace

RedisReply StatusReply(const absl::Status& status) {
  std::optional<std::string> text = RedisBloomReplyText(status);
  if (text.has_value()) return RedisReply::Error(*text);
  return RedisReply::Error(absl::StrCat("ERR ", status.message()));
}

bool ParseRedisInt(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = 0;
  bool negative = false;
  if (s == "0") {
    *out = 0;
    return true;
  }
  if (s[0] == '-') {
    negative = true;
    i = 1;
  }
  if (i >= s.size() || s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  for (; i < s.size(); i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    uint64_t next = v * 10 + static_cast<uint64_t>(s[i] - '0');
    if (next / 10 != v) return false;
    v = next;
  }
  const uint64_t limit =
      negative ? uint64_t{1} << 63
               : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (v > limit) return false;
  *out = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

bool ParseRedisDouble(const std::string& s, double* out) {
  return redis_bloom::ParseDouble(s, out);
}

RedisBloomCommands::RedisBloomCommands(RedisClient* client)
    : client_(client), bloom_(client), counting_(client) {}

RedisReply RedisBloomCommands::Execute(const std::vector<std::string>& argv) {
  if (argv.empty()) return RedisReply::Error("ERR empty command");
  const std::string cmd = absl::AsciiStrToUpper(argv[0]);
  if (cmd == "BF.RESERVE") return Reserve(argv);
  if (cmd == "BF.ADD") return Add(argv);
  if (cmd == "BF.MADD") return MAdd(argv);
  if (cmd == "BF.EXISTS") return Exists(argv);
  if (cmd == "BF.MEXISTS") return MExists(argv);
  if (cmd == "BF.INSERT") return Insert(argv);
  if (cmd == "BF.INFO") return Info(argv);
  if (cmd == "BF.CARD") return Card(argv);
  if (cmd == "BF.DEBUG") return Debug(argv);
  if (cmd == "BF.SCANDUMP") return ScanDump(argv);
  if (cmd == "BF.LOADCHUNK") return LoadChunk(argv);
  if (cmd == "BF.DROP") return Drop(argv);
  if (cmd == "CBF.RESERVE") return CountingReserve(argv);
  if (cmd == "CBF.ADD" || cmd == "CBF.DEL" || cmd == "CBF.EXISTS" ||
      cmd == "CBF.COUNT") {
    return CountingItems(argv, cmd);
  }
  if (cmd == "CBF.INFO") return CountingInfo(argv);
  if (cmd == "CBF.DROP") return CountingDrop(argv);
  if (IsKeyCommand(cmd)) return KeyCommand(argv, cmd);
  return Passthrough(argv);
}

RedisReply RedisBloomCommands::Passthrough(const Argv& a) {
  absl::StatusOr<RedisReply> r = client_->Command(a);
  if (!r.ok()) return StatusReply(r.status());
  return *r;
}

// RedisBloom 2.8.20 BF.RESERVE: fixed positions for error rate and capacity;
// EXPANSION and NONSCALING are looked up anywhere after them, and anything
// else is ignored.
RedisReply RedisBloomCommands::Reserve(const Argv& a) {
  // siftdb's PARTITIONS p (two more arguments) when present.
  int partitions_at = -1;
  for (size_t i = 4; i < a.size() && partitions_at < 0; i++) {
    if (EqualsIgnoreCase(a[i], "PARTITIONS")) {
      partitions_at = static_cast<int>(i);
    }
  }
  if (a.size() < 4 || a.size() > (partitions_at < 0 ? 7u : 9u)) {
    return Arity(a[0]);
  }
  double error_rate;
  if (!ParseRedisDouble(a[2], &error_rate)) {
    return RedisReply::Error("ERR bad error rate");
  }
  if (!(error_rate > 0 && error_rate < 1)) {
    return RedisReply::Error("ERR (0 < error rate range < 1) ");
  }
  int64_t capacity;
  if (!ParseRedisInt(a[3], &capacity)) {
    return RedisReply::Error("ERR bad capacity");
  }
  if (capacity <= 0) {
    return RedisReply::Error("ERR (capacity should be larger than 0)");
  }
  int expansion_at = -1;
  bool nonscaling = false;
  for (size_t i = 4; i < a.size(); i++) {
    if (expansion_at < 0 && EqualsIgnoreCase(a[i], "EXPANSION")) {
      expansion_at = static_cast<int>(i);
    }
    if (EqualsIgnoreCase(a[i], "NONSCALING")) nonscaling = true;
  }
  int64_t expansion = redis_bloom::kDefaultExpansion;
  if (expansion_at >= 0) {
    if (static_cast<size_t>(expansion_at) + 1 == a.size()) {
      return RedisReply::Error("ERR no expansion");
    }
    if (!ParseRedisInt(a[expansion_at + 1], &expansion)) {
      return RedisReply::Error("ERR bad expansion");
    }
    if (expansion < 1) {
      return RedisReply::Error("ERR expansion should be greater or equal to 1");
    }
  }
  if (nonscaling && expansion_at >= 0) {
    return RedisReply::Error("Nonscaling filters cannot expand");
  }
  BloomReserveOptions options;
  options.error_rate = error_rate;
  options.capacity = capacity;
  options.expansion = expansion;
  options.nonscaling = nonscaling;
  if (partitions_at >= 0) {
    if (static_cast<size_t>(partitions_at) + 1 == a.size() ||
        !ParseRedisInt(a[partitions_at + 1], &options.partitions)) {
      return RedisReply::Error("ERR bad partitions");
    }
  }
  absl::Status s = bloom_.Reserve(a[1], options);
  if (!s.ok()) return StatusReply(s);
  return Ok();
}

RedisReply RedisBloomCommands::Add(const Argv& a) {
  if (a.size() != 3) return Arity(a[0]);
  absl::StatusOr<bool> r = bloom_.Add(a[1], a[2]);
  if (!r.ok()) return StatusReply(r.status());
  return Int(*r ? 1 : 0);
}

RedisReply RedisBloomCommands::MAdd(const Argv& a) {
  if (a.size() < 3) return Arity(a[0]);
  absl::StatusOr<BloomAddResults> r = bloom_.MAdd(a[1], Items(a, 2));
  if (!r.ok()) return StatusReply(r.status());
  return AddReplies(*r);
}

RedisReply RedisBloomCommands::Exists(const Argv& a) {
  if (a.size() != 3) return Arity(a[0]);
  absl::StatusOr<bool> r = bloom_.Exists(a[1], a[2]);
  if (!r.ok()) return StatusReply(r.status());
  return Int(*r ? 1 : 0);
}

RedisReply RedisBloomCommands::MExists(const Argv& a) {
  if (a.size() < 3) return Arity(a[0]);
  absl::StatusOr<std::vector<bool>> r = bloom_.MExists(a[1], Items(a, 2));
  if (!r.ok()) return StatusReply(r.status());
  std::vector<RedisReply> out;
  for (bool b : *r) out.push_back(Int(b ? 1 : 0));
  return RedisReply::Array(std::move(out));
}

// RedisBloom 2.8.20 BF.INSERT: options are recognised by their first
// letters (i = ITEMS, er = ERROR, e = EXPANSION, c = CAPACITY, n?c =
// NOCREATE, other n = NONSCALING); values are range-checked after parsing.
RedisReply RedisBloomCommands::Insert(const Argv& a) {
  if (a.size() < 4) return Arity(a[0]);
  BloomInsertOptions opts;
  double error_rate = redis_bloom::kDefaultErrorRate;
  int64_t capacity = redis_bloom::kDefaultCapacity;
  int64_t expansion = redis_bloom::kDefaultExpansion;
  size_t cur = 2;
  size_t items_at = 0;
  while (cur < a.size() && items_at == 0) {
    const std::string arg = absl::AsciiStrToLower(a[cur]);
    const char c0 = arg.empty() ? '\0' : arg[0];
    if (c0 == 'i') {
      items_at = ++cur;
    } else if (c0 == 'e') {
      const bool is_error = arg.size() > 1 && arg[1] == 'r';
      if (++cur == a.size()) return Arity(a[0]);
      if (is_error) {
        if (!ParseRedisDouble(a[cur], &error_rate)) {
          return RedisReply::Error("Bad error rate");
        }
        opts.error_rate = error_rate;
      } else {
        if (!ParseRedisInt(a[cur], &expansion)) {
          return RedisReply::Error("Bad expansion");
        }
        opts.expansion = expansion;
      }
      cur++;
    } else if (c0 == 'c') {
      if (++cur == a.size()) return Arity(a[0]);
      if (!ParseRedisInt(a[cur], &capacity)) {
        return RedisReply::Error("Bad capacity");
      }
      opts.capacity = capacity;
      cur++;
    } else if (c0 == 'n') {
      if (arg.size() > 2 && arg[2] == 'c') {
        opts.nocreate = true;
      } else {
        opts.nonscaling = true;
      }
      cur++;
    } else {
      return RedisReply::Error("Unknown argument received");
    }
  }
  if (items_at == 0 || items_at >= a.size()) return Arity(a[0]);
  if (!(error_rate > 0 && error_rate < 1) || capacity < 1 ||
      static_cast<uint64_t>(capacity) > redis_bloom::kMaxCapacity ||
      expansion < 1 || expansion > redis_bloom::kMaxExpansion) {
    return RedisReply::Error("Bad argument received");
  }
  absl::StatusOr<BloomAddResults> r =
      bloom_.Insert(a[1], Items(a, items_at), opts);
  if (!r.ok()) return StatusReply(r.status());
  return AddReplies(*r);
}

RedisReply RedisBloomCommands::Info(const Argv& a) {
  if (a.size() != 2 && a.size() != 3) return Arity(a[0]);
  absl::StatusOr<BloomInfo> info = bloom_.Info(a[1]);
  if (!info.ok()) return StatusReply(info.status());
  RedisReply expansion =
      info->expansion.has_value() ? Int(*info->expansion) : RedisReply::Nil();
  if (a.size() == 3) {
    const std::string field = absl::AsciiStrToLower(a[2]);
    RedisReply v;
    if (field == "capacity") {
      v = Int(static_cast<int64_t>(info->capacity));
    } else if (field == "size") {
      v = Int(static_cast<int64_t>(info->size));
    } else if (field == "filters") {
      v = Int(static_cast<int64_t>(info->filters));
    } else if (field == "items") {
      v = Int(static_cast<int64_t>(info->items));
    } else if (field == "expansion") {
      v = expansion;
    } else {
      return RedisReply::Error("Invalid information value");
    }
    return RedisReply::Array({v});
  }
  return RedisReply::Array({
      RedisReply::Status("Capacity"),
      Int(static_cast<int64_t>(info->capacity)),
      RedisReply::Status("Size"),
      Int(static_cast<int64_t>(info->size)),
      RedisReply::Status("Number of filters"),
      Int(static_cast<int64_t>(info->filters)),
      RedisReply::Status("Number of items inserted"),
      Int(static_cast<int64_t>(info->items)),
      RedisReply::Status("Expansion rate"),
      expansion,
  });
}

RedisReply RedisBloomCommands::Card(const Argv& a) {
  if (a.size() != 2) return Arity(a[0]);
  absl::StatusOr<int64_t> r = bloom_.Card(a[1]);
  if (!r.ok()) return StatusReply(r.status());
  return Int(*r);
}

RedisReply RedisBloomCommands::Debug(const Argv& a) {
  if (a.size() != 2) return Arity(a[0]);
  absl::StatusOr<BloomInfo> info = bloom_.Info(a[1]);
  if (!info.ok()) return StatusReply(info.status());
  std::vector<RedisReply> out;
  out.push_back(RedisReply::String(absl::StrCat("size:", info->items)));
  for (const BloomSubFilterInfo& s : info->sub_filters) {
    out.push_back(RedisReply::String(absl::StrFormat(
        "bytes:%d bits:%d hashes:%d hashwidth:64 capacity:%d size:%d "
        "ratio:%g",
        s.bytes, s.bits, s.hashes, s.capacity, s.items, s.error_rate)));
  }
  return RedisReply::Array(std::move(out));
}

RedisReply RedisBloomCommands::ScanDump(const Argv& a) {
  if (a.size() != 3) return Arity(a[0]);
  int64_t it;
  if (!ParseRedisInt(a[2], &it)) {
    return RedisReply::Error("Second argument must be numeric");
  }
  absl::StatusOr<BloomDumpChunk> r = bloom_.ScanDump(a[1], it);
  if (!r.ok()) return StatusReply(r.status());
  return RedisReply::Array(
      {Int(r->next_iterator), RedisReply::String(std::move(r->data))});
}

RedisReply RedisBloomCommands::LoadChunk(const Argv& a) {
  if (a.size() != 4) return Arity(a[0]);
  int64_t it;
  if (!ParseRedisInt(a[2], &it)) {
    return RedisReply::Error("ERR Second argument must be numeric");
  }
  absl::Status s = bloom_.LoadChunk(a[1], it, a[3]);
  if (!s.ok()) return StatusReply(s);
  return Ok();
}

RedisReply RedisBloomCommands::Drop(const Argv& a) {
  if (a.size() != 2) return Arity(a[0]);
  absl::StatusOr<bool> r = bloom_.Delete(a[1]);
  if (!r.ok()) return StatusReply(r.status());
  return Int(*r ? 1 : 0);
}

RedisReply RedisBloomCommands::CountingReserve(const Argv& a) {
  if (a.size() != 4) return Arity(a[0]);
  double error_rate;
  if (!ParseRedisDouble(a[2], &error_rate)) {
    return RedisReply::Error("ERR bad error rate");
  }
  int64_t capacity;
  if (!ParseRedisInt(a[3], &capacity)) {
    return RedisReply::Error("ERR bad capacity");
  }
  absl::Status s = counting_.Reserve(a[1], error_rate, capacity);
  if (!s.ok()) return StatusReply(s);
  return Ok();
}

RedisReply RedisBloomCommands::CountingItems(const Argv& a,
                                             const std::string& op) {
  if (a.size() < 3) return Arity(a[0]);
  std::vector<std::string_view> items = Items(a, 2);
  std::vector<int64_t> values;
  absl::Status s;
  if (op == "CBF.COUNT") {
    absl::StatusOr<std::vector<uint32_t>> r = counting_.Count(a[1], items);
    s = r.status();
    if (r.ok()) values.assign(r->begin(), r->end());
  } else {
    absl::StatusOr<std::vector<bool>> r =
        op == "CBF.ADD"   ? counting_.Add(a[1], items)
        : op == "CBF.DEL" ? counting_.Remove(a[1], items)
                          : counting_.Exists(a[1], items);
    s = r.status();
    if (r.ok()) values.assign(r->begin(), r->end());
  }
  if (!s.ok()) return StatusReply(s);
  if (values.size() == 1) return Int(values[0]);
  std::vector<RedisReply> out;
  for (int64_t v : values) out.push_back(Int(v));
  return RedisReply::Array(std::move(out));
}

RedisReply RedisBloomCommands::CountingInfo(const Argv& a) {
  if (a.size() != 2) return Arity(a[0]);
  absl::StatusOr<CountingBloomInfo> info = counting_.Info(a[1]);
  if (!info.ok()) return StatusReply(info.status());
  return RedisReply::Array({
      RedisReply::Status("Capacity"),
      Int(static_cast<int64_t>(info->capacity)),
      RedisReply::Status("Error rate"),
      RedisReply::String(absl::StrFormat("%g", info->error_rate)),
      RedisReply::Status("Counters"),
      Int(static_cast<int64_t>(info->counters)),
      RedisReply::Status("Hashes"),
      Int(info->hashes),
      RedisReply::Status("Size"),
      Int(static_cast<int64_t>(info->bytes)),
      RedisReply::Status("Number of items inserted"),
      Int(info->items),
  });
}

RedisReply RedisBloomCommands::CountingDrop(const Argv& a) {
  if (a.size() != 2) return Arity(a[0]);
  absl::StatusOr<bool> r = counting_.Delete(a[1]);
  if (!r.ok()) return StatusReply(r.status());
  return Int(*r ? 1 : 0);
}

}  // namespace siftdb
