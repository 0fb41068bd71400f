-- The sort ladder (issue 33): bitonic, LSD radix with 4-bit digits (ballot ranking) and 8-bit digits (warp
-- multi-split), radix select (topk's rung), Onesweep (one histogram pass, one pass per 8-bit digit with decoupled
-- look-back), against CUB's DeviceRadixSort / DeviceSegmentedSort.
--
--   lua5.4 examples/sort_ladder.lua [--host-small]      (CUKERN_SIZES=small: host-sized cases)
--
-- Cases: ck.sort (values and 1-based i64 indices: key-index pairs) of 2^28 u32 keys and of 2^28 f32 keys;
-- 65536 rows of 1024 f32 along dim 2 (segmented); topk(2^28, 1024) and topk of 65536 rows of 1024 along dim 2,
-- k = 10 (bench/torch_scan_sort.py times torch.topk on both). Each rung is first validated on the same
-- case at a smaller size (at most 2^20 elements) against the host oracle — values and indices identical, the
-- sort being stable — then timed at full size in C with CUDA events (bench.run: 3 warm-ups, 10 reps, L2
-- flushed). Gkeys/s = elements / time; GB/s counts the bytes of keys read and values and indices written.
-- Rows go to <results>/sort-<device>.json with pct_of_ref (% of CUB) and numel.
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")

local ck = require "cukern"
local bench = require "cukern.bench"

local device = bench.target(arg)
local on_gpu = device == "cuda"
local numel, shape_str = bench.numel, bench.shape_str

local cases = {}
local function add(name, dt, shape, dim, k)
  for i, d in ipairs(shape) do shape[i] = math.tointeger(d) end
  cases[#cases + 1] = {name = name, dtype = dt, shape = shape, dim = dim, k = k}
end
local big = on_gpu and 2 ^ 28 or 2 ^ 16
add(("sort u32 n=%d"):format(big), "u32", {big}, 1)
add(("sort f32 n=%d"):format(big), "f32", {big}, 1)
add(on_gpu and "segmented f32 65536x1024" or "segmented f32 64x1024", "f32", {on_gpu and 65536 or 64, 1024}, 2)
add(("topk f32 n=%d k=1024"):format(big), "f32", {big}, 1, 1024)
add(on_gpu and "topk f32 65536x1024 dim 2 k=10" or "topk f32 64x1024 dim 2 k=10", "f32", {on_gpu and 65536 or 64, 1024}, 2, 10)

-- random keys of dt on the host (u32: the full 32-bit range; f32: uniform [-1, 1))
local function keys(dt, shape)
  if dt == "u32" then return (ck.rand(shape, {dtype = "f64", device = "host"}) * 4294967296):floor():to("u32") end
  return ck.rand(shape, {device = "host"}) * 2 - 1
end
local function small_shape(c)
  local s = {}
  for i, d in ipairs(c.shape) do s[i] = d end
  while numel(s) > 2 ^ 20 do s[1] = math.max(1, s[1] // 2) end
  if #s == 1 then s[1] = s[1] + 1 end -- odd
  return s
end

local function run(x, c, variant, out, idx)
  if c.k then return ck.topk(x, c.k, c.dim, {variant = variant, out = out, idx = idx}) end
  return ck.sort(x, c.dim, {variant = variant, out = out, idx = idx})
end

local function validate(c, variant)
  local hx = keys(c.dtype, small_shape(c))
  local rv, ri = run(hx, c)
  local gv, gi = run(hx:to(device), c, variant)
  if on_gpu and ck.last_ran().name ~= variant then return nil end
  local a, b = gv:host():to("f64"):flat(), rv:to("f64"):flat()
  local ia, ib = gi:host():flat(), ri:flat()
  for q = 1, #b do
    if a[q] ~= b[q] or ia[q] ~= ib[q] then
      return false, ("element %d: got (%s, %s), expected (%s, %s)"):format(q, a[q], ia[q], b[q], ib[q])
    end
  end
  return true
end

local variants = {}
if on_gpu then
  for _, v in ipairs(ck.variants("sort")) do variants[#variants + 1] = v end
  table.sort(variants, function(a, b) return (a.id == 0 and 1e9 or a.id) < (b.id == 0 and 1e9 or b.id) end)
else
  variants = {{id = -1, name = "host"}}
end

local rows, tables = {}, {}
local total, step = #cases * #variants, 0
for ci, c in ipairs(cases) do
  ck.seed(777 + ci)
  local x = keys(c.dtype, c.shape):to(device)
  local n = numel(c.shape)
  local kept = c.k and n // c.shape[c.dim] * c.k or n
  local out_shape = {table.unpack(c.shape)}
  if c.k then out_shape[c.dim] = c.k end
  local case_rows = {}
  for _, v in ipairs(variants) do
    step = step + 1
    bench.progress(step, total, c.name .. " " .. v.name)
    local vopt = on_gpu and v.name or nil
    local row = {id = v.id, variant = v.name, op = c.k and "topk" or "sort", dtype = c.dtype, shape = c.shape,
                 dim = c.dim, k = c.k, case = c.name, numel = n}
    local good, msg = validate(c, vopt)
    if good == nil then row = nil
    elseif not good then row.ok, row.correct, row.error = false, false, msg
    else
      row.ok, row.correct = true, true
      local out = ck.empty(out_shape, {dtype = c.dtype, device = device})
      local idx = ck.empty(out_shape, {dtype = "i64", device = device})
      local okrun, err = pcall(run, x, c, vopt, out, idx)
      if not okrun then row.ok, row.error = false, tostring(err)
      else
        local r = bench.run{spec = {op = "sort", x = x, dim = c.dim, k = c.k, descending = c.k ~= nil, variant = vopt,
                                    out = out, idx = idx},
                            warmup = on_gpu and 3 or 1, reps = on_gpu and 10 or 3, bytes = 4 * n + 12 * kept}
        row.ms, row.q1, row.q3, row.gbps = r.ms, r.q1, r.q3, r.gbps
        row.gkeys = n / r.ms / 1e6
        bench.kernel_fields(row, ck.last_ran())
      end
      out:free(); idx:free()
    end
    if row then case_rows[#case_rows + 1] = row end
  end
  x:free()
  for _, r in ipairs(bench.ladder_ratios(case_rows)) do rows[#rows + 1] = r end
  tables[#tables + 1] = {title = c.name, rows = case_rows}
end

local meta = bench.meta{device = device}
local doc = {meta = meta, ladder = "sort", reference = on_gpu and "cub" or nil,
             headline = on_gpu and ("sort u32 n=%d"):format(big) or nil, rows = rows}
local path = bench.results_path("sort", meta)
bench.write_json(path, doc)

print(("\nsort ladder on %s"):format(on_gpu and meta.device or "the HOST CPU backend (small sizes, not GPU performance)"))
local cols = bench.with_kernel_cols({
  {key = "id", title = "#"}, {key = "variant"}, {key = "ms", fmt = "%.3f"}, {key = "gkeys", title = "Gkeys/s", fmt = "%.2f"},
  {key = "gbps", title = "GB/s", fmt = "%.0f"}, {key = "step_speedup", title = "step", fmt = "%.2fx"},
  {key = "cum_speedup", title = "cumulative", fmt = "%.2fx"}, {key = "pct_of_ref", title = "% CUB", fmt = "%.1f"},
  {key = "error", title = "check"},
}, "error")
bench.finish(path, bench.print_tables(tables, cols))
