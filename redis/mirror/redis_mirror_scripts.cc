// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/mirror/redis_mirror_scripts.h"

namespace siftdb {

namespace {

// Lua numbers are doubles: Unix milliseconds (~2^41) and versions stay
// exact; versions are compared as strings where they come from the hash.
const char kCommit[] = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local not_after = tonumber(ARGV[6])
if not_after > 0 and now > not_after then
  return {'LATE', 0, now, tostring(now - not_after)}
end
for i = 3, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 0 then
    return {'MISSING', 0, now, KEYS[i]}
  end
end
local op = ARGV[1]
local version
if op == 'full' then
  local old = tonumber(redis.call('HGET', KEYS[1], 'version') or '0') or 0
  version = math.max(old, tonumber(ARGV[3])) + 1
else
  local gen = redis.call('HGET', KEYS[1], 'generation')
  local cur = redis.call('HGET', KEYS[1], 'version')
  if gen ~= ARGV[2] or cur ~= ARGV[3] then
    return {'CONFLICT', 0, now,
            'generation/version ' .. tostring(gen) .. '/' .. tostring(cur)}
  end
  if ARGV[8] ~= '' then
    local w = redis.call('HGET', KEYS[1], 'writes')
    if w ~= ARGV[8] then
      return {'CONFLICT', 0, now, 'writes ' .. tostring(w)}
    end
  end
  version = tonumber(cur)
end
local action = ARGV[7]
if action == 'keep' then
  local holder = redis.call('GET', KEYS[2])
  if holder ~= ARGV[4] then
    return {'LEASE', 0, now, tostring(holder)}
  end
end
if op == 'full' then
  redis.call('DEL', KEYS[1])
end
local p = 9
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
  redis.call('HSET', KEYS[1], 'generation', ARGV[2], 'writes', '0')
end
if action == 'acquire' or action == 'keep' then
  redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[5])
end
return {'OK', version, now, ''}
)lua";

}  // namespace

const std::string& MirrorCommitScript() {
  static const std::string* const script = new std::string(kCommit);
  return *script;
}

}  // namespace siftdb
