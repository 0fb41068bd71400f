-- The histogram and searchsorted rungs (issue 33) against their library references (CUB's HistogramEven,
-- thrust's vectorised bounds), in the form of the other ladders.
--
--   lua5.4 examples/histogram_ladder.lua [--host-small]
--
-- Cases: histc of 2^28 f32 (uniform in [-1, 1)) into 1024 bins and into 16 bins (contended counters);
-- searchsorted of 2^24 f32 values in 2^20 sorted f32. Each rung's result is first checked against the host
-- oracle at 2^20 elements (identical counts and positions), then timed at full size (bench.run: CUDA events, 5
-- warm-ups, 20 reps, L2 flushed). GB/s counts the input bytes read. Rows go to
-- <results>/histogram-<device>.json with pct_of_ref (% of the library) and numel.
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")

local ck = require "cukern"
local bench = require "cukern.bench"

local device = bench.target(arg)
local on_gpu = device == "cuda"
local big = on_gpu and 2 ^ 28 or 2 ^ 16

local cases = {
  {name = ("histc f32 n=%d bins=1024"):format(big), ladder = "histogram", n = big, bins = 1024},
  {name = ("histc f32 n=%d bins=16"):format(big), ladder = "histogram", n = big, bins = 16},
  {name = ("searchsorted f32 %d values in %d"):format(big // 16, 2 ^ 20), ladder = "searchsorted", n = big // 16},
}

local function data(c, n)
  local x = ck.rand({n}, {device = "host"}) * 2 - 1
  if c.ladder == "histogram" then return {x = x} end
  return {sorted = ck.sort(ck.rand({2 ^ 20}, {device = "host"}) * 2 - 1), values = x}
end
local function run(c, d, variant)
  if c.ladder == "histogram" then return ck.histc(d.x, c.bins, -1, 1, {variant = variant}) end
  return ck.searchsorted(d.sorted, d.values, {variant = variant})
end
local function on(d) local r = {} for k, v in pairs(d) do r[k] = v:to(device) end return r end

local rows, tables = {}, {}
for ci, c in ipairs(cases) do
  ck.seed(99 + ci)
  local small = data(c, 2 ^ 20 + 1)
  local ref = run(c, small):flat()
  local full = on(data(c, c.n))
  local case_rows = {}
  for _, v in ipairs(on_gpu and ck.variants(c.ladder) or {{id = -1, name = "host"}}) do
    local vopt = on_gpu and v.name or nil
    local row = {id = v.id, variant = v.name, op = c.ladder, dtype = "f32", case = c.name, numel = c.n}
    local got = run(c, on(small), vopt):host():flat()
    local good = #got == #ref
    for q = 1, #ref do if got[q] ~= ref[q] then good = false; break end end
    if not good then row.ok, row.error = false, "differs from the host oracle"
    else
      row.ok = true
      local spec = c.ladder == "histogram" and {op = "histc", x = full.x, bins = c.bins, lo = -1, hi = 1, variant = vopt}
        or {op = "searchsorted", sorted = full.sorted, values = full.values, variant = vopt}
      local r = bench.run{spec = spec, warmup = 5, reps = on_gpu and 20 or 3, bytes = 4 * c.n}
      row.ms, row.q1, row.q3, row.gbps = r.ms, r.q1, r.q3, r.gbps
      bench.kernel_fields(row, ck.last_ran())
    end
    case_rows[#case_rows + 1] = row
  end
  for _, r in ipairs(bench.ladder_ratios(case_rows)) do rows[#rows + 1] = r end
  tables[#tables + 1] = {title = c.name, rows = case_rows}
end

local meta = bench.meta{device = device}
local path = bench.results_path("histogram", meta)
bench.write_json(path, {meta = meta, ladder = "histogram", reference = on_gpu and "cub" or nil, rows = rows})
print(("\nhistogram and searchsorted on %s"):format(on_gpu and meta.device or "the HOST CPU backend (small sizes)"))
local cols = bench.with_kernel_cols({
  {key = "id", title = "#"}, {key = "variant"}, {key = "ms", fmt = "%.4f"}, {key = "gbps", title = "GB/s", fmt = "%.0f"},
  {key = "pct_of_ref", title = "% library", fmt = "%.1f"}, {key = "error", title = "check"},
}, "error")
bench.finish(path, bench.print_tables(tables, cols))
