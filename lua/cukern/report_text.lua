-- cukern.report_text: numbers and names as the report writes them (SVG, HTML and markdown alike).
--
--   text.escape(s)        XML/HTML text and attribute escaping (control characters dropped)
--   text.num(v)           a finite number from a number or numeric string, else nil
--   text.number(x)        shortest decimal that reads back as x (json.number_string): data-value="..."
--   text.fmt(v)           three significant digits for people ("-" when not a number)
--   text.pct(v)           "97.5%"
--   text.tick(v)          axis tick: integers as integers, else %.6g
--   text.size(x)          sizes on a log2 axis: 4096 stays 4096, element counts become 16M, 256M, 1G

local json = require "cukern.json"

local text = {}

local ESCAPES = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&apos;" }

function text.escape(s)
  s = tostring(s):gsub("[%z\1-\8\11\12\14-\31]", "")
  return (s:gsub('[&<>"\']', ESCAPES))
end

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

function text.num(v)
  if finite(v) then return v end
  if type(v) == "string" then
    local n = tonumber(v)
    if finite(n) then return n end
  end
  return nil
end
local num = text.num

text.number = json.number_string

function text.fmt(v)
  v = num(v)
  if not v then return "-" end
  local a = math.abs(v)
  if a == 0 then return "0" end
  if a >= 1000 then return string.format("%.0f", v) end
  if a >= 100 then return string.format("%.1f", v) end
  if a >= 10 then return string.format("%.2f", v) end
  if a >= 0.01 then return string.format("%.3f", v) end
  return string.format("%.3g", v)
end

function text.pct(v)
  v = num(v)
  if not v then return "-" end
  if math.abs(v) >= 1000 then return string.format("%.0f%%", v) end
  return string.format("%.1f%%", v)
end

function text.tick(v)
  if v == math.floor(v) and math.abs(v) < 1e15 then return string.format("%d", math.tointeger(v)) end
  return (string.format("%.6g", v))
end

function text.size(x)
  x = num(x) or 0
  if x < 1e5 then return text.tick(x) end
  for _, u in ipairs({ { 2 ^ 30, "G" }, { 2 ^ 20, "M" }, { 2 ^ 10, "K" } }) do
    if x >= u[1] then
      local v = x / u[1]
      if v == math.floor(v) then return string.format("%d%s", math.tointeger(v), u[2]) end
      return string.format("%.3g%s", v, u[2])
    end
  end
  return text.tick(x)
end

return text
