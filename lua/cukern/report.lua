-- cukern.report: results JSON -> SVG charts, a static index.html and the README's results section.
--
-- Pure Lua with no dependency and no C module, so reports build anywhere (CI, a laptop) from the JSON
-- committed by GPU runs. A results file is {meta=bench.meta(), ladder="matmul"|..., rows={...}}; a row is
-- one (variant, case) measurement. The fields read here, all optional but `variant`:
--   variant (or name), id (0 = library reference), ms, q1, q3, tflops, gbps, pct (% of the reference;
--   computed from the rates when absent), reference=true, ok=false / error="..." (failed validation:
--   listed, never plotted), note, dtype, group (line-chart grouping override), headline=true,
--   matmul: m, n, k     reduce: fn, shape, dim     transpose: shape     elementwise: op, shape (or n), layout
-- A file may also name `headline` (a case key or label) and `reference` (a variant name).
--
-- Every plotted number is also in the SVG as data-value="..." (shortest round-trip decimal of the value
-- plotted) and in a <title> tooltip, so specs and readers can check the picture against the JSON.
--
--   report.svg_bar(title, items, opts)     -> svg string   items = {{label=, value=, text=, tooltip=, color=}}
--   report.svg_lines(title, series, opts)  -> svg string   series = {{name=, color=, dashed=, points={{x=,y=}}}}
--   report.analyse(doc)                    -> cases, headline, variants, groups (what the charts show)
--   report.load(results_dir)               -> list of {path=, base=, doc=}
--   report.build(results_dir [, out_dir])  -> list of written files (SVGs and index.html)
--   report.markdown(results_dir [, opts])  -> README section (markdown)
--   report.update_readme(readme_path, results_dir [, opts]) rewrites only the text between the markers

local json = require "cukern.json"

local report = {}

report.BEGIN = "<!-- results:begin -->"
report.END = "<!-- results:end -->"

local LADDER_ORDER = { matmul = 1, reduce = 2, transpose = 3, elementwise = 4 }

local PALETTE = {
  "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
  "#9c755f", "#2f4b7c", "#a05195", "#d45087", "#665191", "#ffa600", "#003f5c", "#7a9e3a",
}
local REF_COLOR = "#333333"
local FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"

-- ---------------------------------------------------------------------------------------------------
-- small helpers

local function esc(s)
  s = tostring(s):gsub("[%z\1-\8\11\12\14-\31]", "")
  return (s:gsub('[&<>"\']', { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&apos;" }))
end
report.escape = esc

local function isnum(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

local function num(v)
  if isnum(v) then return v end
  if type(v) == "string" then
    local n = tonumber(v)
    if isnum(n) then return n end
  end
  return nil
end

local function numstr(v) return json.number_string(v) end

-- Coordinates: two decimals are plenty and keep files diff-friendly.
local function c(v)
  local s = string.format("%.2f", v):gsub("0+$", ""):gsub("%.$", "")
  if s == "-0" then s = "0" end
  return s
end

local function text_width(s, size)
  return (utf8.len(tostring(s)) or #tostring(s)) * size * 0.58
end

-- Rates and times for people: three significant digits, no exponent for the usual ranges.
function report.fmt(v)
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
local fmt = report.fmt

local function fmt_pct(v)
  v = num(v)
  if not v then return "-" end
  if math.abs(v) >= 1000 then return string.format("%.0f%%", v) end
  return string.format("%.1f%%", v)
end

-- 1 2 2.5 5 steps: axis limits and ticks that a person can read.
local function nice_step(range, nticks)
  if range <= 0 then return 1 end
  local raw = range / nticks
  local p = 10 ^ math.floor(math.log(raw, 10))
  for _, m in ipairs({ 1, 2, 2.5, 5, 10 }) do
    if raw <= m * p * 1.0000001 then return m * p end
  end
  return 10 * p
end

local function tick_label(v)
  if v == math.floor(v) and math.abs(v) < 1e15 then return string.format("%d", math.tointeger(v)) end
  return (string.format("%.6g", v))
end

-- Sizes on a log2 axis: 4096 stays 4096; element counts become 16M, 256M, 1G (binary prefixes).
function report.size_label(x)
  x = num(x) or 0
  if x < 1e5 then return tick_label(x) end
  for _, u in ipairs({ { 2 ^ 30, "G" }, { 2 ^ 20, "M" }, { 2 ^ 10, "K" } }) do
    if x >= u[1] then
      local v = x / u[1]
      if v == math.floor(v) then return string.format("%d%s", math.tointeger(v), u[2]) end
      return string.format("%.3g%s", v, u[2])
    end
  end
  return tick_label(x)
end

local function shape_of(r)
  local s = r.shape
  if type(s) == "table" then
    local out = {}
    for i, d in ipairs(s) do out[i] = math.tointeger(num(d)) or num(d) end
    if #out > 0 then return out end
  elseif type(s) == "string" then
    local out = {}
    for d in s:gmatch("%d+") do out[#out + 1] = math.tointeger(tonumber(d)) end
    if #out > 0 then return out end
  end
  local n = num(r.n) or num(r.numel) or num(r.size)
  if n then return { math.tointeger(n) or n } end
  return nil
end

local function shape_str(shape, sep)
  if not shape then return "?" end
  local p = {}
  for i, d in ipairs(shape) do p[i] = tostring(d) end
  return table.concat(p, sep or "×")
end

-- For titles: 2-D and up as 4096×4096, long 1-D as n=16M.
local function shape_label(shape)
  if shape and #shape == 1 and shape[1] >= 1e5 then return "n=" .. report.size_label(shape[1]) end
  return shape_str(shape)
end

local function numel(shape)
  if not shape then return nil end
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

local function date_of(meta)
  local d = meta and type(meta.date) == "string" and meta.date:match("^(%d%d%d%d%-%d%d%-%d%d)")
  return d or (meta and meta.date) or "undated"
end

local function is_host(meta)
  return meta and (meta.backend == "host" or meta.device == "host")
end

function report.device_label(meta)
  meta = meta or {}
  if is_host(meta) then
    local cpu = meta.host_cpu or (meta.device ~= "host" and meta.device) or nil
    if cpu == json.null or (type(cpu) == "string" and cpu:match("^host")) then cpu = nil end
    return "host CPU backend" .. (cpu and (" (" .. tostring(cpu) .. ")") or "")
  end
  return tostring(meta.device or "unknown device")
end

-- ---------------------------------------------------------------------------------------------------
-- per-ladder knowledge: which rate, how rows form cases, what the x axis of the line chart is

local function dtype_suffix(r)
  if type(r.dtype) == "string" and r.dtype ~= "f32" then return " " .. r.dtype end
  return ""
end

local function dim_str(r)
  local d = r.dim
  if d == nil or d == json.null or d == "all" then return "dim=all" end
  return "dim=" .. tostring(d)
end

local LADDERS = {
  matmul = {
    rate = "tflops", unit = "TFLOP/s",
    case = function(r)
      local m = num(r.m) or num(r.size) or (shape_of(r) or {})[1]
      local n, k = num(r.n) or m, num(r.k) or m
      local key, label
      if m == n and n == k then
        key = "m=" .. tick_label(m or 0)
        label = "m=n=k=" .. tick_label(m or 0)
      else
        key = string.format("m=%s n=%s k=%s", tick_label(m or 0), tick_label(n or 0), tick_label(k or 0))
        label = key
      end
      return key .. dtype_suffix(r), label .. dtype_suffix(r), m
    end,
    group = function(r) return type(r.dtype) == "string" and r.dtype or "" end,
    prefer = function(cs) return cs.size == 4096 end, -- the seeds' reference size, when fully measured
    xlabel = "matrix size m (log2 scale)",
  },
  reduce = {
    rate = "gbps", unit = "GB/s",
    case = function(r)
      local shape = shape_of(r)
      local fn = r.fn and (tostring(r.fn) .. " ") or ""
      local key = fn .. shape_str(shape, "x") .. " " .. dim_str(r) .. dtype_suffix(r)
      local label = fn .. shape_label(shape) .. " " .. dim_str(r) .. dtype_suffix(r)
      return key, label, numel(shape)
    end,
    group = function(r) return (r.fn and (tostring(r.fn) .. " ") or "") .. dim_str(r) .. dtype_suffix(r) end,
    xlabel = "elements (log2 scale)",
  },
  transpose = {
    rate = "gbps", unit = "GB/s",
    case = function(r)
      local shape = shape_of(r)
      return shape_str(shape, "x") .. dtype_suffix(r), shape_label(shape) .. dtype_suffix(r), numel(shape)
    end,
    group = function(r) return type(r.dtype) == "string" and r.dtype or "" end,
    xlabel = "elements (log2 scale)",
  },
  elementwise = {
    rate = "gbps", unit = "GB/s",
    case = function(r)
      local shape = shape_of(r)
      local op = tostring(r.op or r.fn or "?")
      local lay = type(r.layout) == "string" and r.layout ~= "contiguous" and (" (" .. r.layout .. ")") or ""
      return op .. " " .. shape_str(shape, "x") .. lay .. dtype_suffix(r),
          op .. " " .. shape_label(shape) .. lay .. dtype_suffix(r), numel(shape)
    end,
    group = function(r) return tostring(r.op or r.fn or "?") .. dtype_suffix(r) end,
    xlabel = "elements (log2 scale)",
  },
}

local function ladder_info(doc)
  local info = LADDERS[doc.ladder]
  if info then return info end
  -- An unknown ladder: bandwidth if the rows have it, shape-keyed cases.
  local rate, unit = "gbps", "GB/s"
  for _, r in ipairs(doc.rows or {}) do
    if num(r.tflops) and not num(r.gbps) then rate, unit = "tflops", "TFLOP/s" break end
  end
  return {
    rate = rate, unit = unit, case = LADDERS.transpose.case,
    group = function(r) return tostring(r.op or r.fn or "") .. dtype_suffix(r) end,
    xlabel = "elements (log2 scale)",
  }
end

function report.rate_key(ladder) return (LADDERS[ladder] or { rate = "gbps" }).rate end

local function variant_name(r)
  return tostring(r.variant or r.name or "?")
end

local function failed(r)
  return r.ok == false or r.valid == false or r.correct == false or (r.error ~= nil and r.error ~= json.null)
end

local function is_reference(doc, r)
  if r.reference == true then return true end
  if type(doc.reference) == "string" then return variant_name(r) == doc.reference end
  return num(r.id) == 0
end

-- Everything the charts and tables show, derived once from a results document.
--   cases[key] = {key=, label=, size=, rows={...}, ref=row|nil}, case_order = {keys by size},
--   headline = key, variants = {{name=, id=, label=, color=, reference=}}, groups = {{name=, rows=}}
--   rate(row), pct(row): the plotted numbers.
function report.analyse(doc)
  local info = ladder_info(doc)
  local A = { ladder = doc.ladder or "?", rate_key = info.rate, unit = info.unit, info = info,
    meta = doc.meta or {}, cases = {}, case_order = {}, variants = {}, groups = {} }
  local rows = doc.rows or {}

  -- variants, ordered by registry id (the ladder step), then by first appearance
  local vindex, vlist = {}, {}
  for i, r in ipairs(rows) do
    local name = variant_name(r)
    if not vindex[name] then
      local v = { name = name, id = math.tointeger(num(r.id)) or num(r.id), first = i, reference = false }
      vindex[name] = v
      vlist[#vlist + 1] = v
    end
    if is_reference(doc, r) then vindex[name].reference = true end
  end
  table.sort(vlist, function(a, b)
    if a.reference ~= b.reference then return a.reference end
    if a.id and b.id and a.id ~= b.id then return a.id < b.id end
    if (a.id == nil) ~= (b.id == nil) then return a.id ~= nil end
    return a.first < b.first
  end)
  local k = 0
  for _, v in ipairs(vlist) do
    -- ids >= 0 are registry steps ("03 smem"); the host backend (-1) and unnumbered rows keep their name
    if v.id and v.id >= 0 then v.label = string.format("%02d %s", v.id, v.name) else v.label = v.name end
    if v.reference then
      v.color = REF_COLOR
    else
      k = k + 1
      v.color = PALETTE[(k - 1) % #PALETTE + 1]
    end
  end
  A.variants, A.variant = vlist, vindex

  -- cases
  for i, r in ipairs(rows) do
    local key, label, size = info.case(r)
    local cs = A.cases[key]
    if not cs then
      cs = { key = key, label = label, size = size, rows = {}, first = i }
      A.cases[key] = cs
      A.case_order[#A.case_order + 1] = key
    end
    cs.rows[#cs.rows + 1] = r
    if is_reference(doc, r) and not failed(r) and not cs.ref then cs.ref = r end
  end
  table.sort(A.case_order, function(a, b)
    local sa, sb = A.cases[a].size or 0, A.cases[b].size or 0
    if sa ~= sb then return sa < sb end
    return a < b
  end)
  -- A bound measured once (a memcpy row of its own case) serves the cases of its size, or every case when
  -- it is the only one.
  local bounds = {}
  for _, key in ipairs(A.case_order) do
    local cs = A.cases[key]
    local only_refs = true
    for _, r in ipairs(cs.rows) do if not is_reference(doc, r) then only_refs = false end end
    if cs.ref and only_refs then bounds[#bounds + 1] = cs end
  end
  for _, key in ipairs(A.case_order) do
    local cs = A.cases[key]
    if not cs.ref then
      for _, b in ipairs(bounds) do
        if b.size == cs.size then cs.ref, cs.shared_ref = b.ref, true break end
      end
      if not cs.ref and #bounds == 1 then cs.ref, cs.shared_ref = bounds[1].ref, true end
    end
  end

  function A.rate(r)
    if failed(r) then return nil end
    return num(r[info.rate])
  end
  function A.pct(r)
    if failed(r) then return nil end
    local p = num(r.pct) or num(r.pct_of_ref)
    if p then return p end
    local key = info.case(r)
    local ref = A.cases[key] and A.cases[key].ref
    local rr, rv = ref and A.rate(ref), A.rate(r)
    if rr and rv and rr > 0 then return rv / rr * 100 end
    -- no rates: the ratio of times says the same thing
    local rm, vm = ref and num(ref.ms), num(r.ms)
    if rm and vm and vm > 0 then return rm / vm * 100 end
    return nil
  end
  A.reference_name = nil
  for _, v in ipairs(vlist) do
    if v.reference then A.reference_name = v.name break end
  end

  -- headline case: named by the file, flagged on a row, or the case with most valid variants (then largest)
  local want = doc.headline
  if type(want) == "string" then
    for _, key in ipairs(A.case_order) do
      if key == want or A.cases[key].label == want then A.headline = key end
    end
  end
  if not A.headline then
    for _, r in ipairs(rows) do
      if r.headline == true then A.headline = (info.case(r)) break end
    end
  end
  if not A.headline then
    local best, bestn = nil, -1
    for _, key in ipairs(A.case_order) do
      local cs, n = A.cases[key], 0
      -- count measured own variants: a case holding only the bound (memcpy) is never the headline
      for _, r in ipairs(cs.rows) do
        if (A.rate(r) or A.pct(r)) and not is_reference(doc, r) then n = n + 1 end
      end
      local b = best and A.cases[best]
      local pc, pb = info.prefer and info.prefer(cs), b and info.prefer and info.prefer(b)
      if n > bestn or (n == bestn and not pb and (pc or (cs.size or 0) > (b.size or 0) or
          ((cs.size or 0) == (b.size or 0) and cs.first < b.first))) then
        best, bestn = key, n
      end
    end
    A.headline = best
  end

  -- line-chart groups (one chart each), only where there is more than one size to draw
  local gindex = {}
  for _, r in ipairs(rows) do
    local g = r.group and tostring(r.group) or info.group(r)
    if not gindex[g] then
      gindex[g] = { name = g, rows = {}, sizes = {}, nsizes = 0 }
      A.groups[#A.groups + 1] = gindex[g]
    end
    local grp = gindex[g]
    grp.rows[#grp.rows + 1] = r
    local _, _, size = info.case(r)
    if size and A.rate(r) and not grp.sizes[size] then
      grp.sizes[size] = true
      grp.nsizes = grp.nsizes + 1
    end
  end
  return A
end

-- ---------------------------------------------------------------------------------------------------
-- SVG

local function svg_open(w, h, title)
  return {
    string.format('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" ' ..
      'font-family="%s" font-size="13" role="img">', w, h, w, h, esc(FONT)),
    "<title>" .. esc(title) .. "</title>",
    string.format('<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>', w, h),
  }
end

local function svg_heading(out, title, subtitle, w)
  out[#out + 1] = string.format('<text x="%s" y="24" font-size="16" font-weight="bold" fill="#111">%s</text>',
    c(16), esc(title))
  if subtitle and subtitle ~= "" then
    out[#out + 1] = string.format('<text x="%s" y="44" font-size="12.5" fill="#555">%s</text>', c(16), esc(subtitle))
  end
  local _ = w
end

local function attrs_str(attrs)
  if not attrs then return "" end
  local keys = {}
  for k in pairs(attrs) do keys[#keys + 1] = k end
  table.sort(keys)
  local p = {}
  for _, k in ipairs(keys) do
    local v = attrs[k]
    if type(v) == "number" then v = numstr(v) end
    p[#p + 1] = string.format(' %s="%s"', k, esc(v))
  end
  return table.concat(p)
end

-- Horizontal bars, one per item, with a dashed reference line (opts.ref, e.g. 100 %).
-- opts: subtitle, xlabel, unit ("%"), ref, width, value_text(v) -> string
function report.svg_bar(title, items, opts)
  opts = opts or {}
  local W = opts.width or 820
  local unit = opts.unit or "%"
  local value_text = opts.value_text or function(v)
    if unit == "%" then return fmt_pct(v) end
    return fmt(v) .. " " .. unit
  end
  local labelw = 40
  for _, it in ipairs(items) do labelw = math.max(labelw, text_width(it.label or "", 13)) end
  local left = math.floor(math.min(labelw, 320) + 24)
  local right = 40
  for _, it in ipairs(items) do
    local v = num(it.value)
    right = math.max(right, text_width(it.text or (v and value_text(v)) or "n/a", 13) + 16)
  end
  right = math.floor(math.min(right, W * 0.4))
  local top = (opts.subtitle and opts.subtitle ~= "") and 64 or 48
  local rowh, barh = 26, 18
  local ph = math.max(1, #items) * rowh
  local H = top + ph + 56
  local pw = W - left - right

  local vmax = opts.ref or 0
  for _, it in ipairs(items) do
    local v = num(it.value)
    if v and v > vmax then vmax = v end
  end
  if vmax <= 0 then vmax = 1 end
  local step = nice_step(vmax, 5)
  local xmax = math.ceil(vmax / step - 1e-9) * step
  local function X(v) return left + math.max(0, v) / xmax * pw end

  local out = svg_open(W, H, title)
  svg_heading(out, title, opts.subtitle, W)

  -- grid and ticks
  out[#out + 1] = '<g class="axis" font-size="12" fill="#444">'
  local t = 0
  while t <= xmax + step * 1e-6 do
    local x = X(t)
    out[#out + 1] = string.format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e3e3e3"/>', c(x), c(top - 4), c(x),
      c(top + ph))
    out[#out + 1] = string.format('<text x="%s" y="%s" text-anchor="middle">%s</text>', c(x), c(top + ph + 18),
      esc(tick_label(t) .. (unit == "%" and "%" or "")))
    t = t + step
  end
  out[#out + 1] = string.format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>', c(left), c(top - 4), c(left),
    c(top + ph))
  out[#out + 1] = string.format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>', c(left), c(top + ph),
    c(left + pw), c(top + ph))
  if opts.xlabel then
    out[#out + 1] = string.format('<text x="%s" y="%s" text-anchor="middle" font-size="13" fill="#222">%s</text>',
      c(left + pw / 2), c(top + ph + 40), esc(opts.xlabel))
  end
  out[#out + 1] = "</g>"

  if opts.ref then
    local x = X(opts.ref)
    out[#out + 1] = string.format('<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#111" ' ..
      'stroke-width="1.2" stroke-dasharray="5,4"/>', c(x), c(top - 6), c(x), c(top + ph))
  end

  -- bars (value text with a white halo, so it stays readable across the reference line)
  out[#out + 1] = '<g class="bars">'
  for i, it in ipairs(items) do
    local y = top + (i - 1) * rowh + (rowh - barh) / 2
    local v = num(it.value)
    local label = tostring(it.label or "")
    out[#out + 1] = string.format('<text x="%s" y="%s" text-anchor="end" fill="#222">%s</text>', c(left - 8),
      c(y + barh - 4), esc(label))
    if v then
      local tip = it.tooltip or (label .. ": " .. value_text(v))
      local w = X(v) - left
      out[#out + 1] = string.format('<rect class="bar" x="%s" y="%s" width="%s" height="%d" fill="%s" ' ..
        'data-label="%s" data-value="%s"%s><title>%s</title></rect>', c(left), c(y), c(w), barh,
        esc(it.color or PALETTE[1]), esc(label), numstr(v), attrs_str(it.attrs), esc(tip))
      out[#out + 1] = string.format('<text x="%s" y="%s" fill="#222" stroke="#fff" stroke-width="3" ' ..
        'paint-order="stroke">%s</text>', c(left + w + 5), c(y + barh - 4),
        esc(it.text or value_text(v)))
    else
      out[#out + 1] = string.format('<text x="%s" y="%s" fill="#999" font-style="italic">%s</text>', c(left + 5),
        c(y + barh - 4), esc(it.text or "n/a"))
    end
  end
  out[#out + 1] = "</g>"

  out[#out + 1] = "</svg>"
  return table.concat(out, "\n") .. "\n"
end

-- Lines of y vs x, x on a log2 axis (opts.xlog2 ~= false), y linear from 0.
-- opts: subtitle, xlabel, ylabel, width, height, xfmt(x) -> tick text, yunit (tooltip unit)
function report.svg_lines(title, series, opts)
  opts = opts or {}
  local W, H = opts.width or 820, opts.height or 460
  local xlog = opts.xlog2 ~= false
  local xfmt = opts.xfmt or report.size_label
  local yunit = opts.yunit or ""

  local legw = 60
  for _, s in ipairs(series) do legw = math.max(legw, text_width(s.name or "", 12.5) + 34) end
  legw = math.min(legw, 260)
  local top = (opts.subtitle and opts.subtitle ~= "") and 66 or 50
  local left, right, bottom = 72, legw + 20, 58
  local pw, ph = W - left - right, H - top - bottom

  local xs_min, xs_max, ymax = math.huge, -math.huge, 0
  for _, s in ipairs(series) do
    for _, p in ipairs(s.points or {}) do
      local x, y = num(p.x), num(p.y)
      if x and y and (not xlog or x > 0) then
        local xv = xlog and math.log(x, 2) or x
        xs_min, xs_max = math.min(xs_min, xv), math.max(xs_max, xv)
        ymax = math.max(ymax, y)
      end
    end
  end
  if xs_min == math.huge then xs_min, xs_max = 0, 1 end
  if xs_max - xs_min < 1e-9 then xs_min, xs_max = xs_min - 1, xs_max + 1 end
  if ymax <= 0 then ymax = 1 end
  ymax = ymax * 1.04 -- headroom: the top point is not drawn on the frame
  local ystep = nice_step(ymax, 5)
  local ytop = math.ceil(ymax / ystep - 1e-9) * ystep
  local span = xs_max - xs_min
  local pad = span * 0.04
  local x0, x1 = xs_min - pad, xs_max + pad
  local function X(x)
    local xv = xlog and math.log(x, 2) or x
    return left + (xv - x0) / (x1 - x0) * pw
  end
  local function Y(y) return top + ph - y / ytop * ph end

  local out = svg_open(W, H, title)
  svg_heading(out, title, opts.subtitle, W)

  out[#out + 1] = '<g class="axis" font-size="12" fill="#444">'
  local yt = 0
  while yt <= ytop + ystep * 1e-6 do
    local y = Y(yt)
    out[#out + 1] = string.format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e3e3e3"/>', c(left), c(y),
      c(left + pw), c(y))
    out[#out + 1] = string.format('<text x="%s" y="%s" text-anchor="end">%s</text>', c(left - 6), c(y + 4),
      esc(tick_label(yt)))
    yt = yt + ystep
  end
  -- x ticks: every power of two in range, thinned to at most ~10
  if xlog then
    local e0, e1 = math.ceil(xs_min - 1e-9), math.floor(xs_max + 1e-9)
    local every = math.max(1, math.ceil((e1 - e0 + 1) / 10))
    for e = e0, e1 do
      if (e - e0) % every == 0 then
        local x = X(2 ^ e)
        out[#out + 1] = string.format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#efefef"/>', c(x), c(top), c(x),
          c(top + ph))
        out[#out + 1] = string.format('<text x="%s" y="%s" text-anchor="middle">%s</text>', c(x), c(top + ph + 18),
          esc(xfmt(2 ^ e)))
      end
    end
  else
    local xstep = nice_step(xs_max - xs_min, 6)
    local xt = math.ceil(xs_min / xstep) * xstep
    while xt <= xs_max + 1e-9 do
      local x = X(xt)
      out[#out + 1] = string.format('<text x="%s" y="%s" text-anchor="middle">%s</text>', c(x), c(top + ph + 18),
        esc(xfmt(xt)))
      xt = xt + xstep
    end
  end
  out[#out + 1] = string.format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>', c(left), c(top), c(left),
    c(top + ph))
  out[#out + 1] = string.format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>', c(left), c(top + ph),
    c(left + pw), c(top + ph))
  if opts.xlabel then
    out[#out + 1] = string.format('<text x="%s" y="%s" text-anchor="middle" font-size="13" fill="#222">%s</text>',
      c(left + pw / 2), c(H - 14), esc(opts.xlabel))
  end
  if opts.ylabel then
    out[#out + 1] = string.format('<text x="%s" y="%s" text-anchor="middle" font-size="13" fill="#222" ' ..
      'transform="rotate(-90 %s %s)">%s</text>', c(18), c(top + ph / 2), c(18), c(top + ph / 2), esc(opts.ylabel))
  end
  out[#out + 1] = "</g>"

  -- series
  for si, s in ipairs(series) do
    local color = s.color or PALETTE[(si - 1) % #PALETTE + 1]
    local pts = {}
    for _, p in ipairs(s.points or {}) do
      local x, y = num(p.x), num(p.y)
      if x and y and (not xlog or x > 0) then pts[#pts + 1] = { x = x, y = y, tooltip = p.tooltip, attrs = p.attrs } end
    end
    table.sort(pts, function(a, b) return a.x < b.x end)
    out[#out + 1] = string.format('<g class="series" data-series="%s">', esc(s.name or ""))
    if #pts > 1 then
      local coords = {}
      for i, p in ipairs(pts) do coords[i] = c(X(p.x)) .. "," .. c(Y(p.y)) end
      out[#out + 1] = string.format('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>',
        table.concat(coords, " "), esc(color), s.dashed and ' stroke-dasharray="6,4"' or "")
    end
    for _, p in ipairs(pts) do
      local tip = p.tooltip or string.format("%s: %s %s at %s", s.name or "", fmt(p.y), yunit, xfmt(p.x))
      out[#out + 1] = string.format('<circle cx="%s" cy="%s" r="3.5" fill="%s" data-series="%s" data-x="%s" ' ..
        'data-value="%s"%s><title>%s</title></circle>', c(X(p.x)), c(Y(p.y)), esc(color), esc(s.name or ""),
        numstr(p.x), numstr(p.y), attrs_str(p.attrs), esc(tip))
    end
    out[#out + 1] = "</g>"
  end

  -- legend
  out[#out + 1] = '<g class="legend" font-size="12.5" fill="#222">'
  local lx = left + pw + 18
  for si, s in ipairs(series) do
    local ly = top + 6 + (si - 1) * 20
    local color = s.color or PALETTE[(si - 1) % #PALETTE + 1]
    out[#out + 1] = string.format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3"%s/>', c(lx),
      c(ly), c(lx + 20), c(ly), esc(color), s.dashed and ' stroke-dasharray="5,3"' or "")
    out[#out + 1] = string.format('<text x="%s" y="%s">%s</text>', c(lx + 26), c(ly + 4), esc(s.name or ""))
  end
  out[#out + 1] = "</g>"
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n") .. "\n"
end

-- ---------------------------------------------------------------------------------------------------
-- charts of one results document

local function reference_title(A)
  return A.reference_name or "reference"
end

-- Bar items of the headline case: % of the reference per variant.
function report.headline_items(A)
  local cs = A.cases[A.headline]
  local items = {}
  if not cs then return items, nil end
  local byname = {}
  for _, r in ipairs(cs.rows) do
    local name = variant_name(r)
    if not byname[name] or (failed(byname[name]) and not failed(r)) then byname[name] = r end
  end
  if cs.ref and not byname[variant_name(cs.ref)] then byname[variant_name(cs.ref)] = cs.ref end
  for _, v in ipairs(A.variants) do
    local r = byname[v.name]
    if r then
      local p, rate = A.pct(r), A.rate(r)
      local text
      if failed(r) then
        text = "failed validation"
      elseif p then
        text = fmt_pct(p) .. (rate and ("  (" .. fmt(rate) .. " " .. A.unit .. ")") or "")
      end
      local facts = {}
      if failed(r) then facts[#facts + 1] = "failed validation" end
      if p then facts[#facts + 1] = fmt_pct(p) .. " of " .. reference_title(A) end
      if rate then facts[#facts + 1] = fmt(rate) .. " " .. A.unit end
      if num(r.ms) then facts[#facts + 1] = fmt(r.ms) .. " ms" end
      local tip = string.format("%s, %s: %s", v.label, cs.label, table.concat(facts, ", "))
      items[#items + 1] = {
        label = v.label, value = p, text = text, tooltip = tip, color = v.color,
        attrs = { ["data-variant"] = v.name, ["data-rate"] = rate, ["data-ms"] = num(r.ms) },
      }
    end
  end
  return items, cs
end

function report.series(A, group)
  local series = {}
  for _, v in ipairs(A.variants) do
    local pts = {}
    for _, r in ipairs(group.rows) do
      if variant_name(r) == v.name then
        local _, label, size = A.info.case(r)
        local rate = A.rate(r)
        if size and rate then
          pts[#pts + 1] = {
            x = size, y = rate,
            tooltip = string.format("%s, %s: %s %s", v.label, label, fmt(rate), A.unit),
            attrs = { ["data-case"] = label },
          }
        end
      end
    end
    if #pts > 0 then
      series[#series + 1] = { name = v.label, color = v.color, dashed = v.reference, points = pts }
    end
  end
  return series
end

local function titles(A)
  local dev = report.device_label(A.meta)
  local sub = {}
  sub[#sub + 1] = dev
  if A.meta.nvidia_driver then sub[#sub + 1] = "driver " .. tostring(A.meta.nvidia_driver) end
  if A.meta.driver then sub[#sub + 1] = "CUDA driver API " .. tostring(A.meta.driver) end
  if A.meta.runtime then sub[#sub + 1] = "CUDA " .. tostring(A.meta.runtime) end
  sub[#sub + 1] = date_of(A.meta)
  if A.meta.commit then sub[#sub + 1] = "commit " .. tostring(A.meta.commit) end
  return dev, table.concat(sub, " · ")
end

-- The charts of one document as {{name=, svg=, kind="bar"|"lines", title=}}; names come from `base`.
function report.charts(doc, base)
  local A = report.analyse(doc)
  local dev, sub = titles(A)
  local charts = {}
  local items, cs = report.headline_items(A)
  local any_pct = false
  for _, it in ipairs(items) do if it.value then any_pct = true end end
  if cs and #items > 0 and any_pct then
    local title = string.format("%s: %% of %s at %s — %s, %s", A.ladder, reference_title(A), cs.label, dev,
      date_of(A.meta))
    charts[#charts + 1] = {
      kind = "bar", name = base .. "-bar.svg", title = title, measure = "pct",
      svg = report.svg_bar(title, items, {
        subtitle = sub, ref = cs.ref and 100 or nil, unit = "%",
        xlabel = string.format("%% of %s (%s; higher is better)", reference_title(A), A.unit),
      }),
    }
  elseif cs and #items > 0 then
    -- no reference measured (e.g. a host run): the rates themselves
    local any_rate = false
    for _, it in ipairs(items) do
      it.value = it.attrs["data-rate"]
      it.text = nil
      if it.value then any_rate = true end
    end
    if any_rate then
      local title = string.format("%s: %s at %s — %s, %s", A.ladder, A.unit, cs.label, dev, date_of(A.meta))
      charts[#charts + 1] = {
        kind = "bar", name = base .. "-bar.svg", title = title, measure = "rate",
        svg = report.svg_bar(title, items, {
          subtitle = sub, unit = A.unit, xlabel = A.unit .. " (higher is better; no reference in this run)",
        }),
      }
    end
  end
  local multi = 0
  for _, g in ipairs(A.groups) do if g.nsizes > 1 then multi = multi + 1 end end
  for _, g in ipairs(A.groups) do
    if g.nsizes > 1 then
      local series = report.series(A, g)
      if #series > 0 then
        local gname = g.name ~= "" and (" (" .. g.name .. ")") or ""
        local title = string.format("%s: %s vs size%s — %s, %s", A.ladder, A.unit, gname, dev, date_of(A.meta))
        local suffix = multi > 1 and ("-" .. (g.name:lower():gsub("[^%w]+", "-"):gsub("^%-+", ""):gsub("%-+$", ""))) or ""
        if suffix == "-" then suffix = "-" .. #charts end
        charts[#charts + 1] = {
          kind = "lines", name = base .. "-lines" .. suffix .. ".svg", title = title, group = g.name,
          svg = report.svg_lines(title, series, {
            subtitle = sub, xlabel = A.info.xlabel, ylabel = A.unit .. " (higher is better)", yunit = A.unit,
            xfmt = A.ladder == "matmul" and function(x) return tick_label(x) end or report.size_label,
          }),
        }
      end
    end
  end
  return charts, A
end

-- ---------------------------------------------------------------------------------------------------
-- files

local function shell_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function list_json(dir)
  local p = io.popen("ls -1 " .. shell_quote(dir) .. " 2>/dev/null")
  local names = {}
  if p then
    for line in p:lines() do
      if line:match("%.json$") then names[#names + 1] = line end
    end
    p:close()
  end
  table.sort(names)
  return names
end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function write_file(path, text)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then error("report: cannot write " .. path .. ": " .. tostring(err), 0) end
  f:write(text)
  f:close()
  local ok, rerr = os.rename(tmp, path)
  if not ok then os.remove(tmp); error("report: cannot write " .. path .. ": " .. tostring(rerr), 0) end
end

-- Results documents in a directory (not its subdirectories), in ladder order.
function report.load(dir)
  local docs = {}
  for _, name in ipairs(list_json(dir)) do
    local path = dir .. "/" .. name
    local doc, err = json.read(path)
    if type(doc) == "table" and type(doc.rows) == "table" and doc.ladder then
      docs[#docs + 1] = { path = path, base = name:gsub("%.json$", ""), doc = doc }
    elseif doc == nil then
      io.stderr:write("report: skipping ", path, ": ", tostring(err), "\n")
    end
  end
  table.sort(docs, function(a, b)
    local oa, ob = LADDER_ORDER[a.doc.ladder] or 99, LADDER_ORDER[b.doc.ladder] or 99
    if oa ~= ob then return oa < ob end
    return a.base < b.base
  end)
  return docs
end

-- Table columns for the rows of a ladder: the case fields it has, then times, rate, % of reference.
local CASE_FIELDS = { "m", "n", "k", "fn", "op", "shape", "dim", "dtype" }

local function table_columns(A, rows, headline)
  local has = {}
  for _, r in ipairs(rows) do for k in pairs(r) do has[k] = true end end
  local cols = { { title = "variant", get = function(r) return A.variant[variant_name(r)].label end } }
  for _, f in ipairs(headline and {} or CASE_FIELDS) do
    if has[f] and not (f == "n" and A.ladder ~= "matmul" and has.shape) then
      cols[#cols + 1] = {
        title = f,
        get = function(r)
          local v = r[f]
          if f == "shape" then return shape_str(shape_of(r)) end
          if f == "dim" then return dim_str(r) end
          if v == nil or v == json.null then return "" end
          return tostring(v)
        end,
      }
    end
  end
  if has.ms then
    cols[#cols + 1] = { title = "ms (median)", num = true, get = function(r) return fmt(r.ms) end }
  end
  if has.q1 and has.q3 then
    cols[#cols + 1] = { title = "q1–q3 ms", num = true, get = function(r)
      if num(r.q1) and num(r.q3) then return fmt(r.q1) .. "–" .. fmt(r.q3) end
      return "-"
    end }
  end
  cols[#cols + 1] = { title = A.unit, num = true, get = function(r) return fmt(A.rate(r)) end }
  cols[#cols + 1] = { title = "% of " .. reference_title(A), num = true, get = function(r) return fmt_pct(A.pct(r)) end }
  local function note(r)
    local p = {}
    if failed(r) then p[#p + 1] = "FAILED" .. (type(r.error) == "string" and (": " .. r.error) or "") end
    if type(r.ran) == "string" and r.ran ~= variant_name(r) then p[#p + 1] = "ran " .. r.ran end
    if type(r.ran_note) == "string" and r.ran_note ~= "" then p[#p + 1] = r.ran_note end
    if r.note ~= nil and r.note ~= json.null and r.note ~= "" then p[#p + 1] = tostring(r.note) end
    return table.concat(p, "; ")
  end
  local any_note = false
  for _, r in ipairs(rows) do if note(r) ~= "" then any_note = true break end end
  if any_note then cols[#cols + 1] = { title = "note", get = note } end
  return cols
end

-- The headline case's rows, with the bound it is measured against when that lives in a case of its own.
function report.headline_rows(A)
  local cs = A.cases[A.headline]
  if not cs then return {} end
  local rows = {}
  for i, r in ipairs(cs.rows) do rows[i] = r end
  if cs.shared_ref then table.insert(rows, 1, cs.ref) end
  return rows
end

local function sorted_rows(A, rows, headline)
  local pos = {}
  for i, v in ipairs(A.variants) do pos[v.name] = i end
  local cpos = {}
  for i, key in ipairs(A.case_order) do cpos[key] = i end
  local out = {}
  for i, r in ipairs(rows) do out[i] = r end
  local href = headline and A.cases[A.headline] and A.cases[A.headline].ref
  table.sort(out, function(a, b)
    if headline then
      -- one case plus, maybe, its bound from another: the bound first, then ladder order
      if (a == href) ~= (b == href) then return a == href end
    else
      local ca, cb = cpos[(A.info.case(a))], cpos[(A.info.case(b))]
      if ca ~= cb then return ca < cb end
    end
    local pa, pb = pos[variant_name(a)], pos[variant_name(b)]
    if pa ~= pb then return pa < pb end
    return false
  end)
  return out
end

local function html_table(A, rows, headline)
  local cols = table_columns(A, rows, headline)
  local out = { "<table>", "<thead><tr>" }
  for _, col in ipairs(cols) do
    out[#out + 1] = string.format("<th%s>%s</th>", col.num and ' class="num"' or "", esc(col.title))
  end
  out[#out + 1] = "</tr></thead><tbody>"
  for _, r in ipairs(sorted_rows(A, rows, headline)) do
    local cls = failed(r) and ' class="failed"' or (A.variant[variant_name(r)].reference and ' class="ref"' or "")
    local cells = {}
    for _, col in ipairs(cols) do
      cells[#cells + 1] = string.format("<td%s>%s</td>", col.num and ' class="num"' or "", esc(col.get(r)))
    end
    out[#out + 1] = "<tr" .. cls .. ">" .. table.concat(cells) .. "</tr>"
  end
  out[#out + 1] = "</tbody></table>"
  return table.concat(out, "\n")
end

local function md_cell(s) return (tostring(s):gsub("|", "\\|"):gsub("\n", " ")) end

local function md_table(A, rows, headline)
  local cols = table_columns(A, rows, headline)
  local head, rule = {}, {}
  for i, col in ipairs(cols) do
    head[i] = md_cell(col.title)
    rule[i] = col.num and "--:" or "---"
  end
  local out = { "| " .. table.concat(head, " | ") .. " |", "|" .. table.concat(rule, "|") .. "|" }
  for _, r in ipairs(sorted_rows(A, rows, headline)) do
    local cells = {}
    for i, col in ipairs(cols) do cells[i] = md_cell(col.get(r)) end
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return table.concat(out, "\n")
end

local CSS = [[
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { margin-top: 2.2em; border-bottom: 1px solid #ddd; padding-bottom: .2em; }
.meta { color: #555; font-size: .92em; }
img { max-width: 100%; height: auto; display: block; margin: 1em 0; border: 1px solid #eee; }
table { border-collapse: collapse; margin: .8em 0; font-size: .9em; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: left; white-space: nowrap; }
th { background: #f4f4f4; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.ref td { background: #f7f7f7; font-weight: 600; } tr.failed td { color: #b00; }
details { margin: .5em 0 1.5em; } summary { cursor: pointer; color: #245; }
.host { background: #fff4d6; border: 1px solid #e8c46a; padding: .4em .8em; display: inline-block; }
]]

local function meta_line(meta)
  local p = {}
  local function add(k, label)
    local v = meta[k]
    if v ~= nil and v ~= json.null then p[#p + 1] = label .. " " .. tostring(v) end
  end
  add("device", "device")
  add("cc", "cc")
  add("nvidia_driver", "driver")
  add("driver", "CUDA driver API")
  add("runtime", "CUDA runtime")
  add("date", "date")
  add("commit", "commit")
  add("host", "host")
  add("cukern", "cukern")
  return table.concat(p, " · ")
end

-- Top-level scalars of a document without rows (e.g. the launch-overhead file): {{key, text}, ...}.
local function doc_scalars(doc)
  local keys = {}
  for k, v in pairs(doc) do
    if k ~= "meta" and k ~= "rows" and k ~= "ladder" and (type(v) == "number" or type(v) == "string" or
        type(v) == "boolean") then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys)
  local out = {}
  for _, k in ipairs(keys) do
    local v = doc[k]
    out[#out + 1] = { k, type(v) == "number" and fmt(v) or tostring(v) }
  end
  return out
end

-- SVGs next to index.html in out_dir (default: the results directory itself, so they are committed with
-- the JSON). Returns the list of written paths; index.html is the last.
function report.build(results_dir, out_dir)
  results_dir = results_dir or "bench/results"
  out_dir = out_dir or results_dir
  os.execute("mkdir -p " .. shell_quote(out_dir))
  local docs = report.load(results_dir)
  local written = {}
  local html = {
    "<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    "<title>cukern benchmark results</title>", "<style>", CSS, "</style></head><body>",
    "<h1>cukern benchmark results</h1>",
    string.format('<p class="meta">%d results file%s from <code>%s</code>, report built %s.</p>', #docs,
      #docs == 1 and "" or "s", esc(results_dir), esc(os.date("!%Y-%m-%dT%H:%M:%SZ"))),
  }
  if #docs == 0 then
    html[#html + 1] = "<p>No results yet: run <code>make demo</code> (on a GPU host for GPU numbers).</p>"
  else
    html[#html + 1] = "<ul>"
    for _, d in ipairs(docs) do
      html[#html + 1] = string.format('<li><a href="#%s">%s — %s</a></li>', esc(d.base), esc(d.doc.ladder),
        esc(report.device_label(d.doc.meta)))
    end
    html[#html + 1] = "</ul>"
  end
  for _, d in ipairs(docs) do
    local charts, A = report.charts(d.doc, d.base)
    html[#html + 1] = string.format('<section id="%s">', esc(d.base))
    html[#html + 1] = string.format("<h2>%s — %s</h2>", esc(A.ladder), esc(report.device_label(A.meta)))
    if is_host(A.meta) then
      html[#html + 1] = '<p class="host">Host CPU backend at small sizes: a functional run, not GPU performance.</p>'
    end
    html[#html + 1] = string.format('<p class="meta">%s · source <code>%s</code></p>', esc(meta_line(A.meta)),
      esc(d.base .. ".json"))
    for _, ch in ipairs(charts) do
      local path = out_dir .. "/" .. ch.name
      write_file(path, ch.svg)
      written[#written + 1] = path
      html[#html + 1] = string.format('<img src="%s" alt="%s">', esc(ch.name), esc(ch.title))
    end
    local cs = A.cases[A.headline]
    if cs then
      html[#html + 1] = string.format("<h3>%s</h3>", esc(cs.label))
      html[#html + 1] = html_table(A, report.headline_rows(A), true)
    end
    if #d.doc.rows > 0 then
      html[#html + 1] = string.format("<details><summary>all %d rows (%d cases)</summary>", #(d.doc.rows),
        #A.case_order)
      html[#html + 1] = html_table(A, d.doc.rows)
      html[#html + 1] = "</details>"
    else
      html[#html + 1] = "<table><tbody>"
      for _, kv in ipairs(doc_scalars(d.doc)) do
        html[#html + 1] = string.format("<tr><th>%s</th><td>%s</td></tr>", esc(kv[1]), esc(kv[2]))
      end
      html[#html + 1] = "</tbody></table>"
    end
    html[#html + 1] = "</section>"
  end
  html[#html + 1] = "</body></html>"
  local index = out_dir .. "/index.html"
  write_file(index, table.concat(html, "\n") .. "\n")
  written[#written + 1] = index
  return written
end

-- The README section: per results file, the headline table and links to its charts.
-- opts.link_dir: how the README reaches the SVGs (default: results_dir as given).
function report.markdown(results_dir, opts)
  opts = opts or {}
  results_dir = results_dir or "bench/results"
  local link = (opts.link_dir or results_dir):gsub("^%./", ""):gsub("/+$", "")
  local docs = report.load(results_dir)
  if #docs == 0 then
    return "_No GPU results committed yet: run `make demo` on a GPU host, then `make report`._"
  end
  local out = {}
  for _, d in ipairs(docs) do
    local charts, A = report.charts(d.doc, d.base)
    out[#out + 1] = string.format("### %s — %s", A.ladder, report.device_label(A.meta))
    out[#out + 1] = ""
    local cs = A.cases[A.headline]
    local p = {}
    if cs then p[#p + 1] = "Headline case **" .. cs.label .. "**" end
    p[#p + 1] = date_of(A.meta)
    if A.meta.nvidia_driver then p[#p + 1] = "driver " .. tostring(A.meta.nvidia_driver) end
    if A.meta.driver then p[#p + 1] = "CUDA driver API " .. tostring(A.meta.driver) end
    if A.meta.runtime then p[#p + 1] = "CUDA runtime " .. tostring(A.meta.runtime) end
    if A.meta.commit then p[#p + 1] = "commit `" .. tostring(A.meta.commit) .. "`" end
    if #d.doc.rows > 0 then
      p[#p + 1] = string.format("[all %d rows](%s/index.html#%s)", #d.doc.rows, link, d.base)
    end
    out[#out + 1] = table.concat(p, " · ") .. "."
    out[#out + 1] = ""
    if #d.doc.rows == 0 then
      local kv = {}
      for _, e in ipairs(doc_scalars(d.doc)) do kv[#kv + 1] = e[1] .. " = " .. md_cell(e[2]) end
      if #kv > 0 then
        out[#out + 1] = table.concat(kv, " · ")
        out[#out + 1] = ""
      end
    end
    if cs then
      out[#out + 1] = md_table(A, report.headline_rows(A), true)
      out[#out + 1] = ""
    end
    for _, ch in ipairs(charts) do
      out[#out + 1] = string.format("![%s](%s/%s)", (ch.title:gsub("[%[%]]", "")), link, ch.name)
    end
    out[#out + 1] = ""
  end
  return (table.concat(out, "\n"):gsub("%s+$", ""))
end

-- Replace what lies between the markers; nothing else in the file changes. Returns true if it wrote.
function report.update_readme(readme_path, results_dir, opts)
  local text = read_file(readme_path)
  if not text then error("report.update_readme: cannot read " .. tostring(readme_path), 2) end
  local b0, b1 = text:find(report.BEGIN, 1, true)
  if not b0 then error("report.update_readme: no " .. report.BEGIN .. " marker in " .. readme_path, 2) end
  local e0 = text:find(report.END, b1 + 1, true)
  if not e0 then error("report.update_readme: no " .. report.END .. " marker after the begin marker in " ..
    readme_path, 2) end
  local md = report.markdown(results_dir, opts)
  local new = text:sub(1, b1) .. "\n" .. md .. "\n" .. text:sub(e0)
  if new == text then return false end
  write_file(readme_path, new)
  return true
end

return report
