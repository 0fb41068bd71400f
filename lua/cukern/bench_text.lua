-- cukern.bench_text: the text output of the experiment scripts (part of cukern.bench, which exports all of it):
-- aligned tables, a ladder's tables, the closing "wrote <path>" line, the progress bar, shape strings.
-- Needs neither the C module nor a GPU.
local json = require "cukern.json"

local T = {}

function T.shape_str(shape)
  local parts = {}
  for i, d in ipairs(shape) do parts[i] = tostring(math.tointeger(d) or d) end
  return table.concat(parts, "x")
end

function T.numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return math.tointeger(n) or n
end

local function cell(v, fmt)
  if v == nil or v == json.null then return "-" end
  if type(fmt) == "function" then return tostring(fmt(v)) end
  if type(v) == "number" then
    if v ~= v then return "nan" end
    if fmt then return string.format(fmt, v) end
    if math.type(v) == "integer" then return tostring(v) end
    return string.format("%.4g", v)
  end
  if type(v) == "table" then return T.shape_str(v) end
  if fmt then return string.format(fmt, v) end
  return tostring(v)
end

-- Seed-style table: header, rule, one line per row; numbers right-aligned, text left-aligned. A column
-- with optional = true is left out when no row has a value for it.
function T.table(rows, cols, out)
  local kept = {}
  for _, c in ipairs(cols) do
    local any = not c.optional
    for _, row in ipairs(rows) do
      if any then break end
      any = row[c.key] ~= nil and row[c.key] ~= json.null
    end
    if any then kept[#kept + 1] = c end
  end
  cols = kept
  local cells, width, numeric = {}, {}, {}
  for j, c in ipairs(cols) do
    width[j] = utf8.len(c.title or c.key) or #(c.title or c.key)
    numeric[j] = true
  end
  for i, row in ipairs(rows) do
    cells[i] = {}
    for j, c in ipairs(cols) do
      local v = row[c.key]
      local s = cell(v, c.fmt)
      cells[i][j] = s
      if v ~= nil and type(v) ~= "number" then numeric[j] = false end
      width[j] = math.max(width[j], utf8.len(s) or #s)
    end
  end
  local function pad(s, w, right)
    local fill = string.rep(" ", w - (utf8.len(s) or #s))
    return right and fill .. s or s .. fill
  end
  local lines = {}
  local head, rule = {}, {}
  for j, c in ipairs(cols) do
    head[j] = pad(c.title or c.key, width[j], numeric[j])
    rule[j] = string.rep("-", width[j])
  end
  lines[1] = (table.concat(head, "  "):gsub("%s+$", ""))
  lines[2] = table.concat(rule, "  ")
  for i = 1, #rows do
    local l = {}
    for j = 1, #cols do l[j] = pad(cells[i][j], width[j], numeric[j]) end
    lines[#lines + 1] = (table.concat(l, "  "):gsub("%s+$", ""))
  end
  local text = table.concat(lines, "\n") .. "\n"
  if out ~= false then (out or io.stdout):write(text) end
  return text
end

-- A ladder's seed-style tables, one per case ({title=, rows=}), each after an empty line and its title.
-- Returns how many rows failed validation (correct == false or ok == false).
function T.print_tables(tables, cols)
  local failures = 0
  for _, t in ipairs(tables) do
    for _, r in ipairs(t.rows) do
      if r.correct == false or r.ok == false then failures = failures + 1 end
    end
    print("\n" .. t.title)
    T.table(t.rows, cols)
  end
  return failures
end

-- The last lines of a ladder script: where its results went, and exit status 1 if a variant failed.
function T.finish(path, failures)
  print("\nwrote " .. path)
  if failures > 0 then
    io.stderr:write(("%d variant(s) failed validation\n"):format(failures))
    os.exit(1)
  end
end

local tty_cache
local function progress_mode()
  local env = os.getenv("CUKERN_PROGRESS")
  if env == "0" then return "off" end
  if env == "1" then return "bar" end
  if tty_cache == nil then
    -- `test -t 2` runs with our stderr, so it tells whether a person is watching.
    local ok = os.execute("test -t 2")
    tty_cache = ok and "bar" or "lines"
  end
  return tty_cache
end

function T.progress(i, n, label)
  local mode = progress_mode()
  if mode == "off" or n <= 0 then return end
  label = label or ""
  local frac = math.max(0, math.min(1, i / n))
  if mode == "bar" then
    local w = 30
    local filled = math.floor(frac * w + 0.5)
    io.stderr:write(string.format("\r[%s%s] %3d%% %d/%d %s\27[K", string.rep("#", filled),
      string.rep(".", w - filled), math.floor(frac * 100 + 0.5), i, n, label))
    if i >= n then io.stderr:write("\n") end
  else
    local step = math.max(1, math.floor(n / 10 + 0.5))
    if i == 1 or i >= n or i % step == 0 then
      io.stderr:write(string.format("  %3d%% %d/%d %s\n", math.floor(frac * 100 + 0.5), i, n, label))
    end
  end
  io.stderr:flush()
end

return T
