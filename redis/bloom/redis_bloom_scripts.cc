// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Lua sources of the Redis-backed Bloom filters. Conventions shared by all:
//   KEYS[1]  the meta hash, "<prefix>{NAME}:meta"; the other keys of the
//            filter are derived from it by replacing the trailing "meta", so
//            they share the {NAME} hash tag (same cluster slot).
//   Item i   1-based in Lua; its probe r (0-based) in plan link j sits at
//            ARGV[base[j] + (i - 1 - start[j]) * hashes[j] + r], as a
//            decimal Redis bit offset computed by the client.
// BITFIELD/BITFIELD_RO are called with at most ~8000 arguments per call
// (Lua 5.1's unpack limit) and one call per probe round or batch segment,
// never one call per bit.

#include "redis/bloom/redis_bloom_scripts.h"

#include <string>

namespace siftdb::redis_bloom {

namespace {

// Shared helpers.
//   check_link(key, k, base, start, cand, present): for the 1-based item
//   indices in `cand`, tests probe 0, then probe 1 of the survivors, ... and
//   sets present[i] = true for items whose k bits are all set.
const char kPrelude[] = R"lua(
local argv, unpack = ARGV, unpack
local meta = KEYS[1]
local prefix = string.sub(meta, 1, -5)
local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local function ktype(k) return redis.call('TYPE', k)['ok'] end
local function token()
  local cur = redis.call('HMGET', meta, 'id', 'version')
  return tostring(cur[1]) .. ':' .. tostring(cur[2])
end
-- Argument tables are reused: the constant words stay in place and only the
-- offsets are written per probe.
local get_args, get_filled = {}, 0
local function get_template(probes)
  for i = get_filled, probes - 1 do
    get_args[3 * i + 1] = 'GET'
    get_args[3 * i + 2] = 'u1'
  end
  if probes > get_filled then get_filled = probes end
  return get_args
end
local set_args, set_filled = {}, 0
local function set_template(probes)
  for i = set_filled, probes - 1 do
    set_args[4 * i + 1] = 'SET'
    set_args[4 * i + 2] = 'u1'
    set_args[4 * i + 4] = '1'
  end
  if probes > set_filled then set_filled = probes end
  return set_args
end
local function check_link(key, k, base, start, cand, present)
  for r = 0, k - 1 do
    local m = #cand
    if m == 0 then return end
    local keep, nk, s = {}, 0, 1
    while s <= m do
      local e = s + 2663
      if e > m then e = m end
      local args = get_template(e - s + 1)
      local a = 3
      for q = s, e do
        args[a] = argv[base + (cand[q] - 1 - start) * k + r]
        a = a + 3
      end
      local got = redis.call('BITFIELD_RO', key, unpack(args, 1, a - 3))
      for q = s, e do
        if got[q - s + 1] == 1 then
          nk = nk + 1
          keep[nk] = cand[q]
        end
      end
      s = e + 1
    end
    cand = keep
  end
  for q = 1, #cand do present[cand[q]] = true end
end
-- check_bulk(key, k, probes, cand, present): the same test from a copy of
-- the whole bit array; `probes` holds 4-byte records (see the exists script).
-- A byte past the end of the string reads as 0, as BITFIELD_RO reads it.
local function check_bulk(key, k, probes, cand, present)
  local bytes = redis.call('GETRANGE', key, 0, -1)
  local sb = string.byte
  local rec = 4 * k
  for q = 1, #cand do
    local i = cand[q]
    local p = (i - 1) * rec + 1
    local all = true
    for r = 1, k do
      local b0, b1, b2, m = sb(probes, p, p + 3)
      local v = sb(bytes, b0 + 256 * b1 + 65536 * b2 + 1)
      if v == nil or v % (m + m) < m then
        all = false
        break
      end
      p = p + 4
    end
    if all then present[i] = true end
  end
end
local function create_link(j, f, items)
  local p = 'link:' .. j .. ':'
  redis.call('HSET', meta, p .. 'capacity', ARGV[f], p .. 'error', ARGV[f + 1],
    p .. 'bpe', ARGV[f + 2], p .. 'bits', ARGV[f + 3], p .. 'bytes', ARGV[f + 4],
    p .. 'hashes', ARGV[f + 5], p .. 'n2', ARGV[f + 6], p .. 'items', items,
    'hash_count', ARGV[f + 5], 'filters', j + 1)
  redis.call('HINCRBY', meta, 'capacity', ARGV[f])
  redis.call('HINCRBY', meta, 'bitmap_size', ARGV[f + 4])
  redis.call('HINCRBY', meta, 'version', 1)
  local key = prefix .. 'bitmap:' .. j
  redis.call('DEL', key)
  redis.call('SETRANGE', key, tonumber(ARGV[f + 4]) - 1, '\0')
  -- A sub-filter added to a filter with an expiry expires with it: time
  -- stands still inside a script, so the same PTTL is the same instant.
  local ttl = redis.call('PTTL', meta)
  if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
end
local function create_meta(id, error_rate, expansion, options, items)
  redis.call('HSET', meta, 'format', '1', 'id', id, 'version', '0',
    'error_rate', error_rate, 'expansion', expansion, 'options', options,
    'inserted_count', items, 'capacity', '0', 'bitmap_size', '0',
    'filters', '0', 'hash_count', '0')
end
)lua";

// Reserve / add / insert.
// ARGV[1] mode: 'reserve' (create, error if it exists), 'add' (create with
//         the given parameters when missing), 'nocreate' (ERR not found when
//         missing).
// ARGV[2] expected token "<id>:<version>", or '' when the client believes
//         the filter does not exist.
// ARGV[3] assumed room: the client planned future sub-filters as if the
//         newest one had at most this many free slots; the script refuses
//         (STALE) when it has fewer.
// ARGV[4] n items, ARGV[5] P plan links (existing + possible new ones).
// ARGV[6..9] creation: id, error_rate, expansion, options.
// ARGV[10..] per plan link 10 fields: capacity, error, bpe, bits, bytes,
//         hashes, n2, start (first 0-based item that may reach it), too_big,
//         probe mode ('f' or 'b', as in the exists script below).
// Then the probes, link after link: mode 'f' the decimal Redis bit offsets
// of items start..n-1, hashes each; mode 'b' one packed block of 4-byte
// records for items 0..n-1 (see the exists script). 'b' is only allowed for
// existing sub-filters older than the newest (start 0): they are only read.
// Reply: {'OK', results, token, items_in_newest, links} where results has
// one char per item processed: '1' added, '0' maybe present, and a final
// 'E' (non-scaling filter full) or 'X' (a new sub-filter would be too large)
// when processing stopped; or {'STALE'}; or an error reply.
const char kAddBody[] = R"lua(
local mode = ARGV[1]
local expected = ARGV[2]
local assumed_room = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
local P = tonumber(ARGV[5])
local LF = 10
local cap, hashes, start, toobig, base, field, bulk = {}, {}, {}, {}, {}, {}, {}
local off = LF + P * 10
for j = 0, P - 1 do
  local f = LF + j * 10
  field[j] = f
  cap[j] = tonumber(ARGV[f])
  hashes[j] = tonumber(ARGV[f + 5])
  start[j] = tonumber(ARGV[f + 7])
  toobig[j] = ARGV[f + 8] == '1'
  bulk[j] = ARGV[f + 9] == 'b'
  base[j] = off
  if bulk[j] then
    if start[j] ~= 0 or #ARGV[off] ~= 4 * n * hashes[j] then
      return redis.error_reply('ERR siftdb add script: probe block ' .. j .. ' has a bad length')
    end
    off = off + 1
  elseif not toobig[j] then
    off = off + (n - start[j]) * hashes[j]
  end
end

local t = ktype(meta)
local L, options
if t == 'none' then
  if mode == 'nocreate' then return redis.error_reply('ERR not found') end
  if expected ~= '' then return {'STALE'} end
  create_meta(ARGV[6], ARGV[7], ARGV[8], ARGV[9], '0')
  create_link(0, field[0], '0')
  L = 1
  options = tonumber(ARGV[9])
  if mode == 'reserve' then return {'OK', '', token(), 0, 1} end
elseif t ~= 'hash' then
  return redis.error_reply(WRONGTYPE)
else
  if mode == 'reserve' then return redis.error_reply('ERR item exists') end
  local cur = redis.call('HMGET', meta, 'id', 'version', 'filters', 'options')
  if expected ~= tostring(cur[1]) .. ':' .. tostring(cur[2]) then
    return {'STALE'}
  end
  L = tonumber(cur[3])
  options = tonumber(cur[4])
  if L == nil or options == nil or L < 1 or L > P then return {'STALE'} end
end
local nonscaling = (options % 16) >= 8

local newest = L - 1
for j = newest, P - 1 do
  if bulk[j] then
    return redis.error_reply('ERR siftdb add script: bulk probes for sub-filter ' .. j .. ', which may change')
  end
end
local nitems = tonumber(redis.call('HGET', meta, 'link:' .. newest .. ':items'))
local ncap = cap[newest]
if not nonscaling and ncap - nitems < assumed_room then return {'STALE'} end

local present, res = {}, {}
if L > 1 then
  local cand = {}
  for i = 1, n do cand[i] = i end
  for j = L - 2, 0, -1 do
    local c2, m = {}, 0
    for q = 1, #cand do
      if not present[cand[q]] then
        m = m + 1
        c2[m] = cand[q]
      end
    end
    cand = c2
    if bulk[j] then
      check_bulk(prefix .. 'bitmap:' .. j, hashes[j], ARGV[base[j]], cand, present)
    else
      check_link(prefix .. 'bitmap:' .. j, hashes[j], base[j], start[j], cand, present)
    end
  end
end

local function set_link(j, seg, changed)
  local key = prefix .. 'bitmap:' .. j
  local k, b, st = hashes[j], base[j], start[j]
  local per = math.floor(1998 / k)
  if per < 1 then per = 1 end
  local m, s = #seg, 1
  while s <= m do
    local e = s + per - 1
    if e > m then e = m end
    local args = set_template((e - s + 1) * k)
    local a = 3
    for q = s, e do
      local idx = b + (seg[q] - 1 - st) * k
      for r = 0, k - 1 do
        args[a] = argv[idx + r]
        a = a + 4
      end
    end
    a = a - 3
    local got = redis.call('BITFIELD', key, unpack(args, 1, a))
    local g = 1
    for q = s, e do
      local c = false
      for r = 1, k do
        if got[g] == 0 then c = true end
        g = g + 1
      end
      if c then changed[seg[q]] = true end
    end
    s = e + 1
  end
end

local i, stop = 1, ''
while i <= n do
  if present[i] then
    res[i] = '0'
    i = i + 1
  elseif nitems >= ncap then
    -- The newest sub-filter is full, so it will not change again: test the
    -- remaining items against it before growing.
    local cand, m = {}, 0
    for q = i, n do
      if not present[q] then
        m = m + 1
        cand[m] = q
      end
    end
    check_link(prefix .. 'bitmap:' .. newest, hashes[newest], base[newest],
      start[newest], cand, present)
    while i <= n and present[i] do
      res[i] = '0'
      i = i + 1
    end
    if i <= n then
      if nonscaling then
        stop = 'E'
        break
      end
      local nj = newest + 1
      if nj >= P or toobig[nj] then
        stop = 'X'
        break
      end
      create_link(nj, field[nj], '0')
      newest = nj
      nitems = 0
      ncap = cap[nj]
    end
  else
    local room = ncap - nitems
    local seg, m, q = {}, 0, i
    while q <= n and m < room do
      if not present[q] then
        m = m + 1
        seg[m] = q
      end
      q = q + 1
    end
    local changed = {}
    set_link(newest, seg, changed)
    local delta = 0
    for s = i, q - 1 do
      if changed[s] then
        res[s] = '1'
        delta = delta + 1
      else
        res[s] = '0'
      end
    end
    if delta > 0 then
      nitems = nitems + delta
      redis.call('HINCRBY', meta, 'link:' .. newest .. ':items', delta)
      redis.call('HINCRBY', meta, 'inserted_count', delta)
    end
    i = q
  end
end
return {'OK', table.concat(res, '', 1, i - 1) .. stop, token(), nitems, newest + 1}
)lua";

// Membership. ARGV[1] expected token, ARGV[2] n, ARGV[3] L links, then per
// link j (0-based) two fields: ARGV[4 + 2j] hashes k_j, ARGV[5 + 2j] mode;
// then each link's probes in link order, by mode:
//   'f' (field) n * k_j arguments, item-major: decimal Redis bit offsets,
//       tested with one BITFIELD_RO per probe round (check_link).
//   'b' (bulk)  ONE argument of n * k_j 4-byte records, item-major: bytes
//       1..3 the index of the probed byte in the bit array (24-bit little
//       endian, 0-based), byte 4 the bit's mask in that byte (1 << (x & 7)
//       for RedisBloom bit x). The script reads the whole bit array with one
//       GETRANGE and tests the bits in Lua, item by item, stopping at an
//       item's first zero bit (check_bulk). The client picks it for small
//       bit arrays: copying bytes into Lua costs about 1.4 ns a byte (Redis's
//       Lua hashes every byte of a new string), a BITFIELD probe ~300 ns.
// Reply {'OK', one '0'/'1' per item}, {'STALE'}, or {'NONE'} when the meta
// key is missing or not a hash (BF.EXISTS answers 0).
const char kExistsBody[] = R"lua(
if ktype(meta) ~= 'hash' then return {'NONE'} end
if ARGV[1] ~= token() then return {'STALE'} end
local n = tonumber(ARGV[2])
local L = tonumber(ARGV[3])
local k, mode, base, off = {}, {}, {}, 4 + 2 * L
for j = 0, L - 1 do
  k[j] = tonumber(ARGV[4 + 2 * j])
  mode[j] = ARGV[5 + 2 * j]
  base[j] = off
  if mode[j] == 'b' then
    if #ARGV[off] ~= 4 * n * k[j] then
      return redis.error_reply('ERR siftdb exists script: probe block ' .. j .. ' has a bad length')
    end
    off = off + 1
  else
    off = off + n * k[j]
  end
end
local present, cand = {}, {}
for i = 1, n do cand[i] = i end
for j = L - 1, 0, -1 do
  local key = prefix .. 'bitmap:' .. j
  if mode[j] == 'b' then
    check_bulk(key, k[j], ARGV[base[j]], cand, present)
  else
    check_link(key, k[j], base[j], 0, cand, present)
  end
  local c2, m = {}, 0
  for q = 1, #cand do
    if not present[cand[q]] then
      m = m + 1
      c2[m] = cand[q]
    end
  end
  cand = c2
  if m == 0 then break end
end
local res = {}
for i = 1, n do res[i] = present[i] and '1' or '0' end
return {'OK', table.concat(res)}
)lua";

// BF.LOADCHUNK key 1 <header>. ARGV: id, error_rate, expansion, options,
// inserted_count, L, then per link 8 fields: capacity, error, bpe, bits,
// bytes, hashes, n2, items. Refuses an existing key like RedisBloom.
const char kLoadHeaderBody[] = R"lua(
local t = ktype(meta)
if t == 'hash' then return redis.error_reply('ERR received bad data') end
if t ~= 'none' then return redis.error_reply(WRONGTYPE) end
create_meta(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
local L = tonumber(ARGV[6])
for j = 0, L - 1 do
  local f = 7 + j * 8
  create_link(j, f, ARGV[f + 7])
end
return {'OK', token()}
)lua";

// BF.LOADCHUNK key it <data>. ARGV: expected token, link, byte offset, data.
const char kLoadDataBody[] = R"lua(
local t = ktype(meta)
if t == 'none' then return redis.error_reply('ERR not found') end
if t ~= 'hash' then return redis.error_reply(WRONGTYPE) end
if ARGV[1] ~= token() then return {'STALE'} end
redis.call('SETRANGE', prefix .. 'bitmap:' .. ARGV[2], ARGV[3], ARGV[4])
return {'OK'}
)lua";

const char kDeleteBody[] = R"lua(
local t = ktype(meta)
if t == 'none' then return 0 end
if t ~= 'hash' then return redis.error_reply(WRONGTYPE) end
local L = tonumber(redis.call('HGET', meta, 'filters')) or 0
for j = 0, L - 1 do redis.call('DEL', prefix .. 'bitmap:' .. j) end
redis.call('DEL', meta)
return 1
)lua";

// The filter as one object: every key of the filter (the meta hash and
// each sub-filter) in one step, so they all expire at the same instant.
// ARGV[1] 'pexpire' (ARGV[2] milliseconds from now; <= 0 deletes, as
// PEXPIRE does), 'pexpireat' (ARGV[2] Unix time in milliseconds) or
// 'persist'; ARGV[3] a condition as PEXPIRE's options: '' always, 'NX'
// only without an expiry, 'XX' only with one, 'GT' / 'LT' only when the
// new expiry is later / sooner than the current one (none counts as
// infinitely late). Reply: 0 when the filter does not exist or the
// condition refused; 1 when applied ('persist': when an expiry was
// removed).
const char kExpireBody[] = R"lua(
local t = ktype(meta)
if t == 'none' then return 0 end
if t ~= 'hash' then return redis.error_reply(WRONGTYPE) end
local L = tonumber(redis.call('HGET', meta, 'filters')) or 0
if ARGV[1] == 'persist' then
  for j = 0, L - 1 do redis.call('PERSIST', prefix .. 'bitmap:' .. j) end
  return redis.call('PERSIST', meta)
end
local cmd, ms, cur, c = 'PEXPIRE', tonumber(ARGV[2]), redis.call('PTTL', meta), ARGV[3]
if ARGV[1] == 'pexpireat' then
  cmd = 'PEXPIREAT'
  local now = redis.call('TIME')
  ms = ms - (tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
end
if (c == 'NX' and cur >= 0) or (c == 'XX' and cur < 0) or
   (c == 'GT' and (cur < 0 or ms <= cur)) or
   (c == 'LT' and cur >= 0 and ms >= cur) then
  return 0
end
for j = 0, L - 1 do redis.call(cmd, prefix .. 'bitmap:' .. j, ARGV[2]) end
redis.call(cmd, meta, ARGV[2])
return 1
)lua";

}  // namespace

const RedisScript& MakeScript(const char* body) {
  return *new RedisScript(std::string(kPrelude) + body);
}

const RedisScript& AddScript() {
  static const RedisScript& s = MakeScript(kAddBody);
  return s;
}
const RedisScript& ExistsScript() {
  static const RedisScript& s = MakeScript(kExistsBody);
  return s;
}
const RedisScript& LoadHeaderScript() {
  static const RedisScript& s = MakeScript(kLoadHeaderBody);
  return s;
}
const RedisScript& LoadDataScript() {
  static const RedisScript& s = MakeScript(kLoadDataBody);
  return s;
}
const RedisScript& DeleteScript() {
  static const RedisScript& s = MakeScript(kDeleteBody);
  return s;
}
const RedisScript& ExpireScript() {
  static const RedisScript& s = MakeScript(kExpireBody);
  return s;
}
}  // namespace siftdb::redis_bloom
