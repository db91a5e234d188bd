-- luacheck configuration for Tollgate's Redis Function libraries (scripts/lint runs it).
-- Redis runs Lua 5.1; each library file is joined after Shared/Pipeline/Lua/common.lua (and jobs.lua where it
-- is needed) by RedisFunctionLibrary, so the names those define are read-only globals here.
std = "lua51"
max_line_length = 120
read_globals = {
  "redis", "cjson", "cmsgpack", "unpack",
  "LIBRARY", "PREFIX",
  "fail", "register", "count_at", "pairs_at", "n2s", "hash_table",
  "is_final", "append_with_status",
}
-- The shared parts define what the libraries use; not every library uses all of it.
files["Shared/Pipeline/Lua/common.lua"] = { ignore = { "211", "131" } }
files["Shared/Pipeline/Lua/jobs.lua"] = { ignore = { "211" } }
