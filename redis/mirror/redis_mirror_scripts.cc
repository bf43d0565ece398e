// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/mirror/redis_mirror_scripts.h"

namespace siftdb {

namespace {

// Lua numbers are doubles: Unix milliseconds (~2^41) and versions stay
// exact; versions are compared as strings where they come from the hash.
// Writer tokens have a fixed width, so string order is open-time order.
const char kCommit[] = R"lua(
local op = ARGV[1]
local action = ARGV[8]
local writer = ARGV[4]
local not_after = tonumber(ARGV[7])
local extends = action == 'acquire' or action == 'renew'
-- Each redis.call costs; a per-write-group check makes three (HMGET, GET,
-- HSET). TIME only when there is a deadline; the server's identity (INFO)
-- only when the lease is written -- a check compares the lease with the
-- replid the writer last saw, and a replica refuses the commit's writes.
local now = 0
if not_after > 0 or extends then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local replid = ARGV[14]
if extends then
  local info = redis.call('INFO', 'replication')
  local role = string.match(info, 'role:(%a+)')
  replid = string.match(info, 'master_replid:(%x+)') or ''
  if role ~= 'master' then
    return {'ROLE', 0, now, tostring(role), replid}
  end
end
-- The manifest's header in one read; something other than a hash at the
-- manifest key is no manifest (a full publication replaces it).
local h = redis.pcall('HMGET', KEYS[1], 'writer', 'generation', 'version',
                      'writes')
local current, gen, cur, w = false, false, false, false
if h['err'] then
  if op == 'change' then
    return {'CONFLICT', 0, now, 'manifest key holds another type', replid}
  end
  if op == 'full' then
    redis.call('DEL', KEYS[1])
  end
else
  current, gen, cur, w = h[1], h[2], h[3], h[4]
end
if current and #current == #writer and
   string.match(current, '^%d+%-%x+$') and current > writer then
  return {'FENCED', 0, now, current, replid}
end
if not_after > 0 and now > not_after then
  return {'LATE', 0, now, tostring(now - not_after), replid}
end
if op == 'revoke' then
  redis.call('DEL', KEYS[2])
  return {'OK', 0, now, '', replid}
end
local ne = tonumber(ARGV[13])
for i = 3, 2 + ne do
  if redis.call('EXISTS', KEYS[i]) == 0 then
    return {'MISSING', 0, now, KEYS[i], replid}
  end
end
local version
if op == 'full' then
  version = math.max(tonumber(cur or '0') or 0, tonumber(ARGV[3])) + 1
else
  if current ~= writer then
    return {'CONFLICT', 0, now, 'writer ' .. tostring(current), replid}
  end
  if gen ~= ARGV[2] or cur ~= ARGV[3] then
    return {'CONFLICT', 0, now,
            'generation/version ' .. tostring(gen) .. '/' .. tostring(cur),
            replid}
  end
  if ARGV[9] ~= '' and w ~= ARGV[9] then
    return {'CONFLICT', 0, now, 'writes ' .. tostring(w), replid}
  end
  version = tonumber(cur)
end
local lease = ARGV[5] .. ' ' .. replid
if action == 'renew' or action == 'check' then
  local holder = redis.call('GET', KEYS[2])
  if holder ~= lease then
    return {'LEASE', 0, now, tostring(holder), replid}
  end
end
-- Every check passed: the changes, in as few calls as the stack allows.
local function call_chunked(cmd, key, args)
  for i = 1, #args, 2000 do
    local part = {}
    for j = i, math.min(#args, i + 1999) do part[#part + 1] = args[j] end
    if key then
      redis.call(cmd, key, unpack(part))
    else
      redis.call(cmd, unpack(part))
    end
  end
end
if op == 'full' then
  redis.call('DEL', KEYS[1])
end
local p = 15
local nd = tonumber(ARGV[p])
p = p + 1
local dels = {}
for i = 1, nd do
  dels[#dels + 1] = ARGV[p]
  p = p + 1
end
if #dels > 0 then call_chunked('HDEL', KEYS[1], dels) end
local ns = tonumber(ARGV[p])
p = p + 1
local sets = {}
for i = 1, ns do
  sets[#sets + 1] = ARGV[p]
  sets[#sets + 1] = ARGV[p + 1]
  p = p + 2
end
if op == 'full' or nd > 0 or ns > 0 then
  if op == 'change' then
    version = version + 1
  end
  sets[#sets + 1] = 'version'
  sets[#sets + 1] = tostring(version)
end
if op == 'full' then
  for _, v in ipairs({'generation', ARGV[2], 'writes', '0', 'writer', writer})
  do
    sets[#sets + 1] = v
  end
elseif ARGV[10] == '1' then
  sets[#sets + 1] = 'writes'
  sets[#sets + 1] = tostring((tonumber(w) or 0) + 1)
end
if ARGV[11] ~= '' then
  sets[#sets + 1] = 'complete_seq'
  sets[#sets + 1] = ARGV[11]
  sets[#sets + 1] = 'complete_ms'
  sets[#sets + 1] = ARGV[12]
end
if #sets > 0 then call_chunked('HSET', KEYS[1], sets) end
if #KEYS >= 3 + ne then
  local unlink = {}
  for i = 3 + ne, #KEYS do unlink[#unlink + 1] = KEYS[i] end
  call_chunked('UNLINK', nil, unlink)
end
if extends then
  redis.call('SET', KEYS[2], lease, 'PX', ARGV[6])
end
return {'OK', version, now, '', replid}
)lua";

}  // namespace

const std::string& MirrorCommitScript() {
  static const std::string* const script = new std::string(kCommit);
  return *script;
}

}  // namespace siftdb
