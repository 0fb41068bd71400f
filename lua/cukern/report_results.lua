-- cukern.report_results: the results model. Reads the results files of a directory and knows the ladders:
-- which rate each one reports, how its rows form cases, which variant is the reference, the % of the
-- reference, the headline case and the line-chart groups. No drawing and no markup here.
--
-- A results file is {meta=bench.meta(), ladder="matmul"|..., rows={...}}; a row is one (variant, case)
-- measurement. The fields read here, all optional but `variant`:
--   variant (or name), id (0 = library reference), ms, q1, q3, tflops, gbps, pct (% of the reference;
--   computed from the rates when absent), reference=true, ok=false / error="..." (failed validation:
--   listed, never plotted), note, dtype, group (line-chart grouping override), headline=true,
--   matmul: m, n, k     reduce: fn, shape, dim     transpose: shape     elementwise: op, shape (or n), layout
-- A file may also name `headline` (a case key or label) and `reference` (a variant name).
--
-- GPU and host results never mix: meta.backend (or meta.device) "host" marks a host run. The README's
-- section shows GPU results only; an index.html shows the GPU results of its directory, or its host
-- results where it holds no GPU result (bench/results/host/).
--
--   results.list(dir)                   -> file names: dir/manifest.txt (kept by bench.write_json) and the
--                                          sources the directory's last index.html named (older directories)
--   results.load(dir [, {backend=}])    -> {{path=, base=, doc=}} in ladder order; backend "cuda" keeps GPU
--                                          results, "host" host results, "auto" GPU ones if any else all
--   results.analyse(doc)                -> A: cases, case_order, headline, variants, groups, rate(row), pct(row)
--   results.headline_rows(A)            the headline case's rows (with a bound measured in a case of its own)
--   results.is_host(meta), results.device_label(meta), results.date_of(meta), results.rate_key(ladder)
--   results.variant_name(row), results.failed(row), results.reference_title(A)
--   results.shape_of(row), results.shape_str(shape [, sep]), results.dim_str(row)

local json = require "cukern.json"
local files = require "cukern.report_files"
local svg = require "cukern.report_svg"
local text = require "cukern.report_text"

local results = {}

local num = text.num

-- ---------------------------------------------------------------------------------------------------
-- rows and metadata

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
  if shape and #shape == 1 and shape[1] >= 1e5 then return "n=" .. text.size(shape[1]) end
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
  return type(meta) == "table" and (meta.backend == "host" or meta.device == "host")
end

function results.device_label(meta)
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
        key = "m=" .. text.tick(m or 0)
        label = "m=n=k=" .. text.tick(m or 0)
      else
        key = string.format("m=%s n=%s k=%s", text.tick(m or 0), text.tick(n or 0), text.tick(k or 0))
        label = key
      end
      return key .. dtype_suffix(r), label .. dtype_suffix(r), m
    end,
    group = function(r) return type(r.dtype) == "string" and r.dtype or "" end,
    prefer = function(cs) return cs.size == 4096 end, -- the seeds' reference size, when fully measured
    -- the README's headline tables: f32 on CUDA cores and bf16 on tensor cores, at 8192^3 (where the rungs
    -- that match or beat cuBLAS show; 4096^3 is in the full table)
    headlines = {{dtype = "f32", size = 8192}, {dtype = "bf16", size = 8192}},
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

-- examples/saxpy.lua: every row times the same problem (doc.n elements of f32) another way: one case
LADDERS.saxpy = {
  rate = "gbps", unit = "GB/s",
  case = function(r) return "saxpy" .. dtype_suffix(r), "a*x+y over the file's n" .. dtype_suffix(r), nil end,
  group = function(r) return "saxpy" .. dtype_suffix(r) end,
  xlabel = "elements (log2 scale)",
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
    rate = rate, unit = unit,
    -- the ladder's own case label where its rows carry one (scan, sort, complex, fp8 ...), else the shape
    case = function(r)
      if type(r.case) == "string" then return r.case, r.case, numel(shape_of(r)) end
      return LADDERS.transpose.case(r)
    end,
    group = function(r) return tostring(r.op or r.fn or "") .. dtype_suffix(r) end,
    xlabel = "elements (log2 scale)",
  }
end

function results.rate_key(ladder) return (LADDERS[ladder] or { rate = "gbps" }).rate end

local function variant_name(r)
  if r.variant or r.name then return tostring(r.variant or r.name) end
  -- rows that name what they time by op (examples/saxpy.lua: memcpy, map a*x+y, ...), with their layout
  if r.op then return tostring(r.op) .. (type(r.layout) == "string" and (" (" .. r.layout .. ")") or "") end
  -- a peer's row (examples/fp8_bench.lua: PyTorch's timings beside ours, peer = true and no variant)
  if r.peer == true then return "peer (PyTorch)" end
  return "?"
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
function results.analyse(doc)
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
      v.color = svg.REF_COLOR
    else
      k = k + 1
      v.color = svg.PALETTE[(k - 1) % #svg.PALETTE + 1]
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
  -- several headline cases (info.headlines: dtype and size), when the file measured them
  A.headlines = {}
  for _, want_case in ipairs(info.headlines or {}) do
    for _, key in ipairs(A.case_order) do
      local cs = A.cases[key]
      local r1 = cs.rows[1]
      if cs.size == want_case.size and r1 and r1.dtype == want_case.dtype then
        A.headlines[#A.headlines + 1] = key
        break
      end
    end
  end
  if not A.headline and #A.headlines == #(info.headlines or {}) and #A.headlines > 0 then A.headline = A.headlines[1] end
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

function results.reference_title(A)
  return A.reference_name or "reference"
end

-- The headline case's rows, with the bound it is measured against when that lives in a case of its own.
function results.headline_rows(A, key)
  local cs = A.cases[key or A.headline]
  if not cs then return {} end
  local rows = {}
  for i, r in ipairs(cs.rows) do rows[i] = r end
  if cs.shared_ref then table.insert(rows, 1, cs.ref) end
  return rows
end

results.shape_of, results.shape_str, results.dim_str, results.date_of = shape_of, shape_str, dim_str, date_of
results.is_host, results.variant_name, results.failed = is_host, variant_name, failed

-- ---------------------------------------------------------------------------------------------------
-- the files of a results directory

local LADDER_ORDER = { matmul = 1, reduce = 2, transpose = 3, elementwise = 4 }

function results.list(dir)
  local names, seen = {}, {}
  local function add(name)
    if name:match("%.json$") and not name:find("/", 1, true) and not seen[name] then
      seen[name] = true
      names[#names + 1] = name
    end
  end
  for _, name in ipairs(files.manifest(dir)) do add(name) end
  -- A directory written before the manifest existed: the files its last report drew (report_html writes
  -- "source <code>NAME.json</code>" per section).
  local html = files.read(dir .. "/index.html")
  if html then
    for name in html:gmatch("source <code>([^<]+)</code>") do add(name) end
  end
  table.sort(names)
  return names
end

function results.load(dir, opts)
  local want = opts and opts.backend or nil
  local docs, any_gpu = {}, false
  for _, name in ipairs(results.list(dir)) do
    local path = dir .. "/" .. name
    if files.exists(path) then -- a name the last index.html drew may have been removed since
      local doc, err = json.read(path)
      if type(doc) == "table" and type(doc.rows) == "table" and doc.ladder then
        docs[#docs + 1] = { path = path, base = name:gsub("%.json$", ""), doc = doc }
        any_gpu = any_gpu or not is_host(doc.meta)
      elseif doc == nil then
        io.stderr:write("report: skipping ", path, ": ", tostring(err), "\n")
      end
    end
  end
  if want == "auto" then want = any_gpu and "cuda" or nil end
  if want then
    local kept = {}
    for _, d in ipairs(docs) do
      local backend = is_host(d.doc.meta) and "host" or "cuda"
      if backend == want then
        kept[#kept + 1] = d
      else
        io.stderr:write("report: leaving out ", d.path, " (", backend, " results; this report shows ", want, " ones)\n")
      end
    end
    docs = kept
  end
  table.sort(docs, function(a, b)
    local oa, ob = LADDER_ORDER[a.doc.ladder] or 99, LADDER_ORDER[b.doc.ladder] or 99
    if oa ~= ob then return oa < ob end
    return a.base < b.base
  end)
  return docs
end

return results
