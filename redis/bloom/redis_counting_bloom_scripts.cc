// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Lua scripts of the counting Bloom filter (RedisCountingBloom): reserve,
// add / remove, and exists / count, each one atomic server-side step over
// the filter's two keys. They share the prelude of redis_bloom_scripts.cc
// (MakeScript). Argument layouts are documented beside each script and in
// docs/redis_bloom.md.

#include "redis/bloom/redis_bloom_scripts.h"

namespace siftdb::redis_bloom {
namespace {

// Counting filter: KEYS[1] = "<prefix>{NAME}:meta"; counters live in
// "<prefix>{NAME}:counters" as 4-bit BITFIELD u4 cells (#i = cell i).
// Reserve. ARGV: mode ('reserve' errors on an existing key, 'ensure' keeps
// it), id, error_rate, capacity, counters, hashes, bytes.
const char kCountingReserveBody[] = R"lua(
local t = ktype(meta)
if t == 'hash' then
  if ARGV[1] == 'reserve' then return redis.error_reply('ERR item exists') end
  return {'OK', tostring(redis.call('HGET', meta, 'id'))}
end
if t ~= 'none' then return redis.error_reply(WRONGTYPE) end
redis.call('HSET', meta, 'format', '1', 'id', ARGV[2], 'error_rate', ARGV[3],
  'capacity', ARGV[4], 'counters', ARGV[5], 'hashes', ARGV[6], 'bytes', ARGV[7],
  'counter_bits', '4', 'items', '0')
local key = prefix .. 'counters'
redis.call('DEL', key)
redis.call('SETRANGE', key, tonumber(ARGV[7]) - 1, '\0')
return {'OK', ARGV[2]}
)lua";

// Add / remove. ARGV: mode ('add' | 'remove'), expected id, n, then n
// per-item cell counts c_i, then the distinct cells of each item.
// Reply {'OK', one char per item}: add '1' when some cell was 0 before (the
// item was absent), remove '1' when the item was present and was removed;
// or {'STALE'}; or ERR not found.
const char kCountingUpdateBody[] = R"lua(
local t = ktype(meta)
if t == 'none' then return redis.error_reply('ERR not found') end
if t ~= 'hash' then return redis.error_reply(WRONGTYPE) end
if tostring(redis.call('HGET', meta, 'id')) ~= ARGV[2] then return {'STALE'} end
local key = prefix .. 'counters'
local n = tonumber(ARGV[3])
local first, cnt = {}, {}
local off = 4 + n
for i = 1, n do
  cnt[i] = tonumber(ARGV[3 + i])
  first[i] = off
  off = off + cnt[i]
end
local res = {}
if ARGV[1] == 'add' then
  -- One BITFIELD per slice of items; INCRBY returns the new value, so a cell
  -- now at 1 was 0 before this increment (items are applied in order).
  local i = 1
  while i <= n do
    local args, a, e = {'OVERFLOW', 'SAT'}, 2, i
    while e <= n and a + 4 * cnt[e] <= 7990 do
      for c = 0, cnt[e] - 1 do
        args[a + 1] = 'INCRBY'
        args[a + 2] = 'u4'
        args[a + 3] = '#' .. ARGV[first[e] + c]
        args[a + 4] = '1'
        a = a + 4
      end
      e = e + 1
    end
    local got = redis.call('BITFIELD', key, unpack(args, 1, a))
    local g = 1
    for q = i, e - 1 do
      local was_absent = false
      for c = 1, cnt[q] do
        if got[g] == 1 then was_absent = true end
        g = g + 1
      end
      res[q] = was_absent and '1' or '0'
    end
    i = e
  end
  redis.call('HINCRBY', meta, 'items', n)
else
  local removed = 0
  for i = 1, n do
    local args, a = {}, 0
    for c = 0, cnt[i] - 1 do
      args[a + 1] = 'GET'
      args[a + 2] = 'u4'
      args[a + 3] = '#' .. ARGV[first[i] + c]
      a = a + 3
    end
    local got = redis.call('BITFIELD_RO', key, unpack(args, 1, a))
    local ok = true
    for c = 1, cnt[i] do
      if got[c] == 0 then ok = false end
    end
    if ok then
      -- A saturated cell (15) has lost count of its items: leave it alone.
      local dec, d = {'OVERFLOW', 'SAT'}, 2
      for c = 1, cnt[i] do
        if got[c] < 15 then
          dec[d + 1] = 'INCRBY'
          dec[d + 2] = 'u4'
          dec[d + 3] = '#' .. ARGV[first[i] + c - 1]
          dec[d + 4] = '-1'
          d = d + 4
        end
      end
      if d > 2 then redis.call('BITFIELD', key, unpack(dec, 1, d)) end
      removed = removed + 1
      res[i] = '1'
    else
      res[i] = '0'
    end
  end
  if removed > 0 then redis.call('HINCRBY', meta, 'items', -removed) end
end
return {'OK', table.concat(res)}
)lua";

// Exists / count. ARGV: expected id, n, per-item cell counts, cells.
// Reply {'OK', {min cell of each item}}, {'STALE'}, or {'NONE'}.
const char kCountingReadBody[] = R"lua(
if ktype(meta) ~= 'hash' then return {'NONE'} end
if tostring(redis.call('HGET', meta, 'id')) ~= ARGV[1] then return {'STALE'} end
local key = prefix .. 'counters'
local n = tonumber(ARGV[2])
local cnt, first, off = {}, {}, 3 + n
for i = 1, n do
  cnt[i] = tonumber(ARGV[2 + i])
  first[i] = off
  off = off + cnt[i]
end
local res = {}
local i = 1
while i <= n do
  local args, a, e = {}, 0, i
  while e <= n and a + 3 * cnt[e] <= 7990 do
    for c = 0, cnt[e] - 1 do
      args[a + 1] = 'GET'
      args[a + 2] = 'u4'
      args[a + 3] = '#' .. ARGV[first[e] + c]
      a = a + 3
    end
    e = e + 1
  end
  local got = redis.call('BITFIELD_RO', key, unpack(args, 1, a))
  local g = 1
  for q = i, e - 1 do
    local mn = 15
    for c = 1, cnt[q] do
      if got[g] < mn then mn = got[g] end
      g = g + 1
    end
    res[q] = mn
  end
  i = e
end
return {'OK', res}
)lua";

}  // namespace

const RedisScript& CountingReserveScript() {
  static const RedisScript& s = MakeScript(kCountingReserveBody);
  return s;
}
const RedisScript& CountingUpdateScript() {
  static const RedisScript& s = MakeScript(kCountingUpdateBody);
  return s;
}
const RedisScript& CountingReadScript() {
  static const RedisScript& s = MakeScript(kCountingReadBody);
  return s;
}

}  // namespace siftdb::redis_bloom
