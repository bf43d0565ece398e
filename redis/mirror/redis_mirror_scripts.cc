// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/mirror/redis_mirror_scripts.h"

namespace siftdb {

namespace {

// Lua numbers are doubles: Unix milliseconds (~2^41) and versions stay
// exact; versions are compared as strings where they come from the hash.
// Writer tokens have a fixed width, so string order is open-time order.
const char kCommit[] = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local op = ARGV[1]
local action = ARGV[8]
-- The server's identity, read only when the lease is written (INFO costs
-- more than the rest of a commit); a check compares the lease with the
-- replid the writer last saw, and a replica refuses the commit's writes.
local replid = ARGV[14]
if action == 'acquire' or action == 'renew' then
  local info = redis.call('INFO', 'replication')
  local role = string.match(info, 'role:(%a+)')
  replid = string.match(info, 'master_replid:(%x+)') or ''
  if role ~= 'master' then
    return {'ROLE', 0, now, tostring(role), replid}
  end
end
local writer = ARGV[4]
-- Something other than a hash at the manifest key is no manifest (a full
-- publication replaces it; a change finds a conflict).
local mtype = redis.call('TYPE', KEYS[1])['ok']
if mtype ~= 'hash' and mtype ~= 'none' then
  if op == 'change' then
    return {'CONFLICT', 0, now, 'manifest key holds a ' .. mtype, replid}
  end
  if op == 'full' then
    redis.call('DEL', KEYS[1])
  end
end
local current = nil
if mtype == 'hash' then
  current = redis.call('HGET', KEYS[1], 'writer')
end
if current and #current == #writer and
   string.match(current, '^%d+%-%x+$') and current > writer then
  return {'FENCED', 0, now, current, replid}
end
local not_after = tonumber(ARGV[7])
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
  local old = tonumber(redis.call('HGET', KEYS[1], 'version') or '0') or 0
  version = math.max(old, tonumber(ARGV[3])) + 1
else
  if current ~= writer then
    return {'CONFLICT', 0, now, 'writer ' .. tostring(current), replid}
  end
  local gen = redis.call('HGET', KEYS[1], 'generation')
  local cur = redis.call('HGET', KEYS[1], 'version')
  if gen ~= ARGV[2] or cur ~= ARGV[3] then
    return {'CONFLICT', 0, now,
            'generation/version ' .. tostring(gen) .. '/' .. tostring(cur),
            replid}
  end
  if ARGV[9] ~= '' then
    local w = redis.call('HGET', KEYS[1], 'writes')
    if w ~= ARGV[9] then
      return {'CONFLICT', 0, now, 'writes ' .. tostring(w), replid}
    end
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
if op == 'full' then
  redis.call('DEL', KEYS[1])
end
local p = 15
local nd = tonumber(ARGV[p])
p = p + 1
for i = 1, nd do
  redis.call('HDEL', KEYS[1], ARGV[p])
  p = p + 1
end
local ns = tonumber(ARGV[p])
p = p + 1
if op == 'change' and (nd > 0 or ns > 0) then
  version = version + 1
end
for i = 1, ns do
  redis.call('HSET', KEYS[1], ARGV[p], ARGV[p + 1])
  p = p + 2
end
redis.call('HSET', KEYS[1], 'version', tostring(version))
if op == 'full' then
  redis.call('HSET', KEYS[1], 'generation', ARGV[2], 'writes', '0',
             'writer', writer)
end
if ARGV[10] == '1' then
  redis.call('HINCRBY', KEYS[1], 'writes', 1)
end
if ARGV[11] ~= '' then
  redis.call('HSET', KEYS[1], 'complete_seq', ARGV[11],
             'complete_ms', ARGV[12])
end
for i = 3 + ne, #KEYS do
  redis.call('UNLINK', KEYS[i])
end
if action == 'acquire' or action == 'renew' then
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
