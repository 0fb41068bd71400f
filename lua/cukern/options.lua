--- cukern.options: the one options validator of every public function (through args.lua, and io.lua, map.lua).
-- An options table is nil or a table whose keys the function takes, each with a value of the right type:
-- a misspelt option or a wrong type is an error, never silently ignored (issue 18).
--   M.set("dtype", "device")                 the keys a function takes (printed in messages in this order)
--   M.problem(where, opts, allowed [, rules]) nil, or what is wrong (the caller raises it its own way)
--   M.show(v)                                a value as messages show it
local core = require "cukern.core"
local MT = core.array_mt

local M = {}
local fmt, concat, math_type = string.format, table.concat, math.type

local function is_array(x) return getmetatable(x) == MT end
local function live(x) return is_array(x) and not x:is_freed() end

function M.show(x)
  if is_array(x) then return x:is_freed() and "a freed cukern array" or "a cukern array" end
  local t = type(x)
  if t == "number" then return x ~= x and "NaN" or tostring(x) end
  if t == "string" then return fmt("%q", x) end
  return t
end

--- Per key: a test of the value, and what the value must be.
M.RULES = {
  dtype = function(v) return type(v) == "string", "a dtype name (f32, f64, i32, f16, bf16)" end,
  device = function(v) return type(v) == "string", "a device name (cuda, host)" end,
  variant = function(v) return type(v) == "string" or math_type(v) == "integer", "a variant name or id" end,
  out = function(v) return live(v), "a (live) cukern array" end,
  idx = function(v) return live(v), "a (live) i32 cukern array" end,
  keepdim = function(v) return type(v) == "boolean", "true or false" end,
  pinned = function(v) return type(v) == "boolean", "true or false" end,
  async = function(v) return type(v) == "boolean", "true or false" end,
  precision = function(v) return v == "exact" or v == "tf32", '"exact" or "tf32"' end,
  dim = function(v) return math_type(v) == "integer" and v >= -8 and v <= 8 and v ~= 0,
    "a dim (1..ndim, or negative from the end)" end,
  scale = function(v) return type(v) == "number" and v > 0 and v < math.huge, "a finite number > 0" end,
  scale_a = function(v) return type(v) == "number" and v > 0 and v < math.huge, "a finite number > 0" end,
  scale_b = function(v) return type(v) == "number" and v > 0 and v < math.huge, "a finite number > 0" end,
  compress = function(v) return type(v) == "boolean" or (math_type(v) == "integer" and v >= 0 and v <= 9),
    "true, false or a zlib level 0..9" end,
}

--- A shallow copy of an options table with `key` set to `value` (a wrapper that hands a call on with one option
-- changed, e.g. complex creation asking for the parts' dtype): the caller's table is never written.
function M.with(opts, key, value)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o[key] = value
  return o
end

function M.set(...)
  local s, names = {}, {...}
  for _, k in ipairs(names) do s[k] = true end
  s[0] = concat(names, ", ")
  return s
end

--- nil if opts is acceptable for a function `where` that takes the keys in `allowed`; else the message
-- (without "where: " in front). `rules` overrides M.RULES for some keys.
function M.problem(where, opts, allowed, rules)
  if opts == nil then return nil end
  if type(opts) ~= "table" or is_array(opts) then
    return fmt("options must be a table {%s = ...}, got %s", allowed[0]:match("^[%w_]+"), M.show(opts))
  end
  for k, v in pairs(opts) do
    if not allowed[k] then return fmt("unknown option %s (%s takes %s)", M.show(k), where, allowed[0]) end
    local ok, want = ((rules and rules[k]) or M.RULES[k])(v)
    if not ok then return fmt("option %s must be %s, got %s", k, want, M.show(v)) end
  end
  return nil
end

return M
