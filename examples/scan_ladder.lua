-- The scan ladder (issue 33): Hillis-Steele, Blelloch, warp shuffles, reduce-then-scan, chained and
-- decoupled look-back single passes, and the layout rungs, against CUB's DeviceScan and the copy bandwidth.
--
--   lua5.4 examples/scan_ladder.lua [--host-small]      (CUKERN_SIZES=small: host-sized cases)
--
-- Cases (f32 cumsum): one scan of 2^22 ... 2^28 elements; along dim 2 (rows) and dim 1 (leading dim) of
-- 16384 x 16384 (cols: three passes; cols_lookback: one); along dim 1 of 1024 x 262144 (both one pass). Inputs are small zero-mean integers (-3..3): the partial sums stay far below 2^24, so every
-- f32 partial sum is exact and each rung's output
-- must equal the host oracle's bit for bit (checked on the device with ck.equal against the oracle's result)
-- before it is timed. Timed in C with CUDA events (bench.run: 5 warm-ups, 20 reps, L2 flushed); GB/s counts
-- one read and one write of every element (what a single pass moves). Per case: step and cumulative speedup,
-- % of the memcpy bandwidth measured in this run, % of CUB (pct_of_ref), registers, shared memory,
-- occupancy. Rows go to <results>/scan-<device>.json (bench.results_path).
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")

local ck = require "cukern"
local bench = require "cukern.bench"

local device = bench.target(arg)
local on_gpu = device == "cuda"

local cases = {}
local function add(kind, shape, dim)
  for i, d in ipairs(shape) do shape[i] = math.tointeger(d) end
  cases[#cases + 1] = {kind = kind, shape = shape, dim = dim}
end
if on_gpu then
  for p = 22, 28, 2 do add("full", {2 ^ p}, 1) end
  add("rows", {16384, 16384}, 2)
  add("cols", {16384, 16384}, 1)
  add("cols", {1024, 262144}, 1) -- 2^18 columns: cols runs in one pass too (cols_lookback against it there)
else
  for p = 10, 16, 3 do add("full", {2 ^ p}, 1) end
  add("rows", {256, 256}, 2)
  add("cols", {256, 256}, 1)
end

local numel, shape_str = bench.numel, bench.shape_str
local function label(c)
  if c.kind == "full" then return ("cumsum n=2^%d"):format(math.floor(math.log(numel(c.shape), 2) + 0.5)) end
  return ("cumsum %s dim %d"):format(shape_str(c.shape), c.dim)
end

local variants = {}
if on_gpu then
  for _, v in ipairs(ck.variants("scan")) do variants[#variants + 1] = v end
  table.sort(variants, function(a, b) return (a.id == 0 and 1e9 or a.id) < (b.id == 0 and 1e9 or b.id) end)
else
  variants = {{id = -1, name = "host"}}
end

local memcpy_gbps
if on_gpu then
  local n = 2 ^ 28
  local src, dst = ck.empty(n, {device = "cuda"}):fill(1), ck.empty(n, {device = "cuda"})
  memcpy_gbps = bench.run{spec = {op = "memcpy", dst = dst, src = src}, warmup = 5, reps = 20, bytes = 2 * 4 * n}.gbps
  src:free(); dst:free()
  io.stderr:write(("memcpy D2D 1 GiB: %.0f GB/s (read+write)\n"):format(memcpy_gbps))
end

local rows, tables = {}, {}
local total, step = #cases * #variants, 0
for ci, c in ipairs(cases) do
  ck.seed(4321 + ci)
  -- small zero-mean integers: exact f32 sums (a mean of -1/2, as -4..3 had, drifts past 2^24 by n = 2^26)
  local hx = (ck.rand(c.shape, {device = "host"}) * 7):floor() - 3
  local ref = ck.cumsum(hx, c.dim):to(device)
  local x = hx:to(device)
  local n = numel(c.shape)
  local case_rows = {}
  for _, v in ipairs(variants) do
    step = step + 1
    bench.progress(step, total, label(c) .. " " .. v.name)
    local row = {id = v.id, variant = v.name, op = "cumsum", dtype = "f32", shape = c.shape, dim = c.dim,
                 kind = c.kind, case = label(c), numel = n}
    local out = ck.empty(c.shape, {device = device}):fill(0 / 0)
    local vopt = on_gpu and v.name or nil
    local okrun, err = pcall(ck.cumsum, x, c.dim, {variant = vopt, out = out})
    if not okrun then
      row.ok, row.correct, row.error = false, false, tostring(err)
    elseif on_gpu and ck.last_ran().name ~= v.name then
      row = nil -- its supports() declined this layout: not part of this case
    elseif not ck.equal(out, ref) then
      row.ok, row.correct, row.error = false, false, "differs from the host oracle"
    else
      row.ok, row.correct = true, true
      local r = bench.run{spec = {op = "scan", fn = "cumsum", x = x, dim = c.dim, out = out, variant = vopt},
                          warmup = 5, reps = on_gpu and 20 or 5, bytes = 2 * 4 * n}
      row.ms, row.q1, row.q3, row.gbps = r.ms, r.q1, r.q3, r.gbps
      bench.kernel_fields(row, ck.last_ran())
      if memcpy_gbps then row.pct_of_memcpy = 100 * r.gbps / memcpy_gbps end
    end
    if row then case_rows[#case_rows + 1] = row end
    out:free()
  end
  x:free(); ref:free()
  for _, r in ipairs(bench.ladder_ratios(case_rows)) do rows[#rows + 1] = r end
  tables[#tables + 1] = {title = label(c), rows = case_rows}
end

local meta = bench.meta{device = device}
local doc = {meta = meta, ladder = "scan", reference = on_gpu and "cub" or nil, memcpy_gbps = memcpy_gbps,
             headline = on_gpu and "cumsum 268435456 dim=1" or nil, rows = rows}
local path = bench.results_path("scan", meta)
bench.write_json(path, doc)

print(("\nscan ladder on %s%s"):format(on_gpu and meta.device or "the HOST CPU backend",
  on_gpu and ("; memcpy %.0f GB/s (read+write, 1 GiB)"):format(memcpy_gbps) or " (small sizes, not GPU performance)"))
local cols = bench.with_kernel_cols({
  {key = "id", title = "#"}, {key = "variant"}, {key = "ms", fmt = "%.4f"}, {key = "gbps", title = "GB/s", fmt = "%.0f"},
  {key = "step_speedup", title = "step", fmt = "%.2fx"}, {key = "cum_speedup", title = "cumulative", fmt = "%.2fx"},
  {key = "pct_of_memcpy", title = "% memcpy", fmt = "%.1f"}, {key = "pct_of_ref", title = "% CUB", fmt = "%.1f"},
  {key = "error", title = "check"},
}, "error")
bench.finish(path, bench.print_tables(tables, cols))
