-- luacheck configuration for Tollgate's Redis Function libraries (scripts/lint runs it).
-- Redis runs Lua 5.1; each library file is joined after Shared/Pipeline/Lua/common.lua (and jobs.lua where it
-- is needed) by RedisFunctionLibrary, so the names those define are read-only globals here.
std = "lua51"
max_line_length = 120
read_globals = {
  "redis", "cjson", "cmsgpack", "unpack",
  "LIBRARY", "PREFIX",
  "fail", "register", "count_at", "pairs_at", "n2s", "hash_table",
  "is_final", "append_with_status", "check_status", "write_status", "acknowledge",
}
-- The shared parts define what the libraries use; not every library uses all of it.
files["Shared/Pipeline/Lua/common.lua"] = { ignore = { "211", "131" } }
files["Shared/Pipeline/Lua/jobs.lua"] = { ignore = { "211" }, read_globals = { "hash_table" } }

-- The ledger library is eight parts joined in order (LedgerFunctions.swift): ledger_events.lua, ledger_records.lua,
-- ledger_transactions.lua, ledger_spend.lua (which registers its own function), ledger.lua, ledger_grants.lua, then
-- ledger_sides.lua, ledger_testers.lua.
-- A later part reads the locals an earlier part defines; each name passed on is listed once here, so any other
-- unused or undefined name is still reported.
local ledger_events = {
  "key_at", "event_id", "side_scope", "emit_user_event", "app_event_json", "json_object", "iso8601", "user_log",
}
local ledger_records = {
  "num", "job_status", "coins_change", "ent_value", "recompute", "refund_key", "refund_fields", "refund", "reverse",
}
local ledger_transactions = { "apply_tx", "reresolve", "unpark", "apply_renewals", "validate", "forward" }
local function passed_on(names)
  local patterns = {}
  for _, name in ipairs(names) do patterns[#patterns + 1] = "211/" .. name end
  return patterns
end
local function joined(...)
  local all = {}
  for _, names in ipairs({ ... }) do
    for _, name in ipairs(names) do all[#all + 1] = name end
  end
  return all
end
files["Shared/Ledger/Lua/ledger_events.lua"] = { ignore = passed_on(ledger_events) }
files["Shared/Ledger/Lua/ledger_records.lua"] = { read_globals = ledger_events, ignore = passed_on(ledger_records) }
files["Shared/Ledger/Lua/ledger_transactions.lua"] = {
  read_globals = joined(ledger_events, ledger_records), ignore = passed_on(ledger_transactions),
}
files["Shared/Ledger/Lua/ledger_spend.lua"] = { read_globals = joined(ledger_events, ledger_records) }
files["Shared/Ledger/Lua/ledger.lua"] = { read_globals = joined(ledger_events, ledger_records, ledger_transactions) }
files["Shared/Ledger/Lua/ledger_grants.lua"] = { read_globals = joined(ledger_events, ledger_records) }
files["Shared/Ledger/Lua/ledger_sides.lua"] = { read_globals = joined(ledger_events, ledger_records) }
files["Shared/Ledger/Lua/ledger_testers.lua"] = { read_globals = ledger_events }
