-- cukern.json: a small JSON encoder/decoder in pure Lua 5.4 (no C module, no dependency).
--
-- Why hand-written rather than Debian's lua-cjson or lua-dkjson (checked against Debian 12's versions):
--   * Numbers must round-trip. Results files carry measured times and rates, and the report writes the
--     very number it plots into the SVG (data-value) so a spec can compare picture and JSON exactly. Here a
--     float is written with the shortest "%.Ng" (N = 14..17) that reads back as the same double (93.4 stays
--     93.4, 1/3 keeps all 17 digits) and an integral float as an integer (4096, not 4096.0). dkjson 2.6
--     writes tostring(x), i.e. "%.14g": 1/3 becomes 0.33333333333333 and 4096.0 becomes "4096.0";
--     cjson 2.1.0 caps encode_number_precision at 14 digits.
--   * Stable diffs. Results JSON is committed, so object keys are sorted and the layout is fixed (2-space
--     indent, short arrays of scalars on one line). dkjson writes keys in pairs() order unless every
--     caller hands it a key order; cjson has no key order at all.
--   * Where it must run. The ladders write JSON on the GPU host, which cannot install packages: .gpu-lua
--     (shared/gpu/pack-lua.sh) packs Lua 5.4, busted and busted's own dependencies only. cjson is a C
--     module that is not packed; dkjson comes along only as a dependency of busted, i.e. for tests, while
--     the rock (cukern-scm-1.rockspec) and `make report` depend on nothing but Lua 5.4.
-- It is about 300 lines, and spec/bench_spec.lua covers round trips, escapes, errors and layout.
--
-- Lua cannot tell an empty array from an empty object, so decoded tables remember which one they were (a
-- metatable marker) and re-encode the same way; `json.array(t)` / `json.object(t)` mark tables built in
-- Lua. Unmarked empty tables encode as `{}`.
--
--   json.encode(value [, {indent = 2 | false}])  -> string     (NaN and ±inf are written as null)
--   json.decode(text)                            -> value      (null -> json.null)
--   json.read(path) / json.write(path, value)    (write is atomic: a temporary file renamed over path)
--   json.null, json.isnull(v), json.array(t), json.object(t), json.number_string(x)

local files = require "cukern.report_files"

local json = {}

local ARRAY = { __jsontype = "array" }
local OBJECT = { __jsontype = "object" }

json.null = setmetatable({}, {
  __tostring = function() return "null" end,
  __jsontype = "null",
})

function json.isnull(v) return v == json.null end
function json.array(t) return setmetatable(t or {}, ARRAY) end
function json.object(t) return setmetatable(t or {}, OBJECT) end

-- ---------------------------------------------------------------------------------------------------
-- encoding

-- Shortest "%.Ng" that reads back as the same double: 93.4 stays 93.4 rather than 93.400000000000006.
function json.number_string(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  if x ~= x or x == math.huge or x == -math.huge then return "null" end
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return string.format("%d", math.tointeger(x)) end
  for p = 14, 17 do
    local s = string.format("%." .. p .. "g", x)
    if tonumber(s) == x then return s end
  end
  return string.format("%.17g", x)
end

local escapes = {
  ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t",
}

local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return escapes[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

-- "array" when the keys are exactly 1..n (n > 0) or the table is marked as an array.
local function kind(t)
  local mt = getmetatable(t)
  local marked = mt and mt.__jsontype
  if marked == "array" or marked == "object" then return marked end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  if n == 0 then return "object" end
  for i = 1, n do
    if t[i] == nil then return "object" end
  end
  return "array"
end

local function is_scalar(v)
  local tv = type(v)
  return tv ~= "table" or v == json.null
end

local encode_value

local function encode_table(t, indent, depth, seen)
  if seen[t] then error("json.encode: cycle in table", 0) end
  seen[t] = true
  local k = kind(t)
  local pad = indent and ("\n" .. string.rep(" ", indent * (depth + 1))) or ""
  local close = indent and ("\n" .. string.rep(" ", indent * depth)) or ""
  local out
  if k == "array" then
    local parts, flat = {}, true
    for i = 1, #t do
      parts[i] = encode_value(t[i], indent, depth + 1, seen)
      if not is_scalar(t[i]) then flat = false end
    end
    if #parts == 0 then
      out = "[]"
    elseif not indent then
      out = "[" .. table.concat(parts, ",") .. "]"
    else
      local one = "[" .. table.concat(parts, ", ") .. "]"
      if flat and #one + indent * depth <= 100 then
        out = one
      else
        out = "[" .. pad .. table.concat(parts, "," .. pad) .. close .. "]"
      end
    end
  else
    local keys = {}
    for key in pairs(t) do
      local tk = type(key)
      if tk == "number" then
        key = json.number_string(key)
      elseif tk ~= "string" then
        error("json.encode: object key of type " .. tk, 0)
      end
      keys[#keys + 1] = key
    end
    table.sort(keys)
    if #keys == 0 then
      out = "{}"
    else
      local parts = {}
      for i, key in ipairs(keys) do
        local v = t[key]
        if v == nil then v = t[tonumber(key)] end
        parts[i] = encode_string(key) .. (indent and ": " or ":") .. encode_value(v, indent, depth + 1, seen)
      end
      out = "{" .. pad .. table.concat(parts, "," .. pad) .. close .. "}"
    end
  end
  seen[t] = nil
  return out
end

encode_value = function(v, indent, depth, seen)
  local tv = type(v)
  if v == nil or v == json.null then
    return "null"
  elseif tv == "boolean" then
    return v and "true" or "false"
  elseif tv == "number" then
    return json.number_string(v)
  elseif tv == "string" then
    return encode_string(v)
  elseif tv == "table" then
    return encode_table(v, indent, depth, seen)
  end
  error("json.encode: cannot encode a " .. tv, 0)
end

function json.encode(value, opts)
  local indent = 2
  if opts and opts.indent ~= nil then indent = opts.indent end
  if indent == 0 then indent = false end
  return encode_value(value, indent, 0, {})
end

-- ---------------------------------------------------------------------------------------------------
-- decoding

local function decode_error(s, pos, what)
  local line, col = 1, 1
  for i = 1, math.min(pos, #s + 1) - 1 do
    if s:byte(i) == 10 then line, col = line + 1, 1 else col = col + 1 end
  end
  error(string.format("json.decode: %s at line %d column %d", what, line, col), 0)
end

local function skip(s, pos)
  return s:find("[^ \t\r\n]", pos) or #s + 1
end

local unescape = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }

local function decode_string(s, pos)
  -- pos is at the opening quote
  local buf, i = {}, pos + 1
  while true do
    local j = s:find('["\\%c]', i)
    if not j then decode_error(s, pos, "unterminated string") end
    buf[#buf + 1] = s:sub(i, j - 1)
    local c = s:sub(j, j)
    if c == '"' then return table.concat(buf), j + 1 end
    if c ~= "\\" then decode_error(s, j, "control character in string") end
    local e = s:sub(j + 1, j + 1)
    if unescape[e] then
      buf[#buf + 1] = unescape[e]
      i = j + 2
    elseif e == "u" then
      local hex = s:match("^%x%x%x%x", j + 2)
      if not hex then decode_error(s, j, "bad \\u escape") end
      local cp = tonumber(hex, 16)
      i = j + 6
      if cp >= 0xD800 and cp <= 0xDBFF then
        local lo = s:match("^\\u(%x%x%x%x)", i)
        local lcp = lo and tonumber(lo, 16)
        if lcp and lcp >= 0xDC00 and lcp <= 0xDFFF then
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lcp - 0xDC00)
          i = i + 6
        else
          cp = 0xFFFD -- lone high surrogate
        end
      elseif cp >= 0xDC00 and cp <= 0xDFFF then
        cp = 0xFFFD -- lone low surrogate
      end
      buf[#buf + 1] = utf8.char(cp)
    else
      decode_error(s, j, "bad escape \\" .. e)
    end
  end
end

local decode_value

-- The items of an array or object whose opening bracket is at pos: item(p) reads one item starting at p
-- and returns the position after it. Returns the position after the closing bracket.
local function decode_items(s, pos, close, item)
  pos = skip(s, pos + 1)
  if s:sub(pos, pos) == close then return pos + 1 end
  while true do
    pos = skip(s, item(pos))
    local c = s:sub(pos, pos)
    if c == close then return pos + 1 end
    if c ~= "," then decode_error(s, pos, "expected ',' or '" .. close .. "'") end
    pos = skip(s, pos + 1)
  end
end

local function decode_array(s, pos)
  local t = setmetatable({}, ARRAY)
  return t, decode_items(s, pos, "]", function(p)
    local v
    v, p = decode_value(s, p)
    t[#t + 1] = v
    return p
  end)
end

local function decode_object(s, pos)
  local t = setmetatable({}, OBJECT)
  return t, decode_items(s, pos, "}", function(p)
    if s:sub(p, p) ~= '"' then decode_error(s, p, "expected a string key") end
    local k, v
    k, p = decode_string(s, p)
    p = skip(s, p)
    if s:sub(p, p) ~= ":" then decode_error(s, p, "expected ':'") end
    v, p = decode_value(s, skip(s, p + 1))
    t[k] = v
    return p
  end)
end

decode_value = function(s, pos)
  pos = skip(s, pos)
  local c = s:sub(pos, pos)
  if c == "{" then return decode_object(s, pos) end
  if c == "[" then return decode_array(s, pos) end
  if c == '"' then return decode_string(s, pos) end
  if s:find("^true", pos) then return true, pos + 4 end
  if s:find("^false", pos) then return false, pos + 5 end
  if s:find("^null", pos) then return json.null, pos + 4 end
  local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
  if num and #num > 0 then
    local v = tonumber(num)
    if v == nil then decode_error(s, pos, "bad number '" .. num .. "'") end
    return v, pos + #num
  end
  if c == "" then decode_error(s, pos, "unexpected end of input") end
  decode_error(s, pos, "unexpected character '" .. c .. "'")
end

function json.decode(s)
  if type(s) ~= "string" then error("json.decode: expected a string, got " .. type(s), 2) end
  local v, pos = decode_value(s, 1)
  pos = skip(s, pos)
  if pos <= #s then decode_error(s, pos, "trailing characters") end
  return v
end

-- ---------------------------------------------------------------------------------------------------
-- files

function json.read(path)
  local text, err = files.read(path)
  if not text then return nil, err end
  local ok, v = pcall(json.decode, text)
  if not ok then return nil, path .. ": " .. v end
  return v
end

function json.write(path, value)
  return files.write(path, json.encode(value) .. "\n")
end

return json
