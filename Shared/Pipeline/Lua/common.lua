-- Shared by every Tollgate function library. `RedisFunctionLibrary` (Shared/Redis) joins it after the
-- `#!lua name=…` line and the two names it defines for the library: LIBRARY (`tollgate_<name>_v<n>`) and
-- PREFIX (`<name>_v<n>_`, the start of every function name: function names are global across libraries).

-- Raises a Redis error naming the library. A function's writes are not rolled back on error, so every
-- function checks its input before its first write.
local function fail(message)
  return error({ err = 'ERR ' .. LIBRARY .. ': ' .. message })
end

-- Registers `fn` as PREFIX .. name.
local function register(name, fn)
  redis.register_function(PREFIX .. name, fn)
end

-- The whole, non-negative number at ARGV[i], or fail.
local function count_at(argv, i, what)
  local n = tonumber(argv[i])
  if n == nil or n < 0 or n ~= math.floor(n) then
    fail('bad ' .. (what or 'number') .. ' at ARGV[' .. i .. ']')
  end
  return n
end

-- "n, (name value)×n" at ARGV[i]: the flat list of names and values, and the index after it.
local function pairs_at(argv, i)
  local n = count_at(argv, i, 'count')
  if i + 2 * n > #argv then fail('bad count at ARGV[' .. i .. ']') end
  local out = {}
  for j = 1, 2 * n do out[j] = argv[i + j] end
  return out, i + 2 * n + 1
end

-- A number as a command argument: an integer string, never an exponent.
local function n2s(x)
  return string.format('%.0f', x)
end

-- A flat name/value list (HGETALL, a stream entry's fields) as a table.
local function hash_table(flat)
  local t = {}
  for i = 1, #flat, 2 do t[flat[i]] = flat[i + 1] end
  return t
end
