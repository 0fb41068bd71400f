-- The reduction ladder: Harris's seven steps, then shuffles + 16-byte loads, one-launch, and the layout
-- variants, against CUB and the device's copy bandwidth.
--
--   lua5.4 examples/reduce_ladder.lua [--host-small]      (CUKERN_SIZES=small: host-sized cases)
--
-- Cases (f32 sums): full sums of 2^22 ... 2^28 elements; row sums of 16384x16384, 1048576x256 and
-- 256x1048576; column sums of 16384x16384. Every variant that supports a case is first validated against
-- the host reference (f64 accumulation; tolerance 4*eps*len + 1e-5 relative, see spec/reduce_spec.lua),
-- then timed in C with CUDA events (bench.run: 5 warm-ups, 20 reps, L2 flushed between reps). GB/s counts
-- the bytes read (the output is negligible). Per case: step and cumulative speedup (Harris's table), % of
-- the memcpy bandwidth measured in this run (read+write bytes of a 1 GiB device-to-device copy) and % of
-- CUB. Rows go to <results>/reduce-<device>.json (bench.results_path: bench/results on the GPU,
-- bench/results/host/ on the host, $CUKERN_RESULTS if set); the tables are printed last.
-- Without a GPU (or with --host-small) the same cases run on the host backend at small sizes, labelled.
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")

local ck = require "cukern"
local bench = require "cukern.bench"

local device = bench.target(arg)
local on_gpu = device == "cuda"

-- ---------------------------------------------------------------- cases

local cases = {}
local function add(kind, shape, dim)
  for i, d in ipairs(shape) do shape[i] = math.tointeger(d) end
  cases[#cases + 1] = {kind = kind, shape = shape, dim = dim}
end
if on_gpu then
  for p = 22, 28 do add("full", {2 ^ p}, nil) end
  add("rows", {16384, 16384}, 2)
  add("rows", {1048576, 256}, 2)
  add("rows", {256, 1048576}, 2)
  add("cols", {16384, 16384}, 1)
else
  for p = 10, 16, 2 do add("full", {2 ^ p}, nil) end
  add("rows", {256, 256}, 2)
  add("rows", {4096, 16}, 2)
  add("rows", {16, 4096}, 2)
  add("cols", {256, 256}, 1)
end

local numel, shape_str = bench.numel, bench.shape_str
local function label(c)
  local s = shape_str(c.shape)
  if c.kind == "full" then return ("full sum n=2^%d"):format(math.floor(math.log(numel(c.shape), 2) + 0.5)) end
  return ("%s sums %s"):format(c.kind == "rows" and "row" or "column", s)
end

-- The variants to run, ladder order (1..12), the library reference (CUB) last.
local variants = {}
if on_gpu then
  for _, v in ipairs(ck.variants("reduce")) do if not v.bench_only and not v.batched then variants[#variants + 1] = v end end
  table.sort(variants, function(a, b)
    local ka, kb = a.id == 0 and 1e9 or a.id, b.id == 0 and 1e9 or b.id
    return ka < kb
  end)
else
  variants = {{id = -1, name = "host"}}
end

-- ---------------------------------------------------------------- validation

local EPS32 = 2 ^ -23
--- got vs ref (host f64 reference, rounded to f32): |got - ref| <= 1e-5*|ref| + 4*eps*len + 1e-6.
local function check(got, ref, len)
  local g, r = got:host():flat(), ref:flat()
  if #g ~= #r then return false, ("%d outputs, expected %d"):format(#g, #r) end
  local atol = 4 * EPS32 * len + 1e-6
  for i = 1, #r do
    local a, b = g[i], r[i]
    if not (a == a and math.abs(a - b) <= atol + 1e-5 * math.abs(b)) then
      return false, ("output %d: got %.9g, expected %.9g"):format(i, a, b)
    end
  end
  return true
end

-- ---------------------------------------------------------------- memcpy bound

local memcpy_gbps
if on_gpu then
  local n = 2 ^ 28 -- 1 GiB of f32
  local src, dst = ck.empty(n, {device = "cuda"}):fill(1), ck.empty(n, {device = "cuda"})
  local r = bench.run{spec = {op = "memcpy", dst = dst, src = src}, warmup = 5, reps = 20, bytes = 2 * 4 * n}
  memcpy_gbps = r.gbps
  src:free(); dst:free()
  io.stderr:write(("memcpy D2D 1 GiB: %.0f GB/s (read+write)\n"):format(memcpy_gbps))
end

-- ---------------------------------------------------------------- runs

local rows, tables = {}, {}
local total = #cases * #variants
local step = 0
for ci, c in ipairs(cases) do
  ck.seed(1234 + ci)
  local x = ck.rand(c.shape, {device = device}) * 2 - 1
  local n = numel(c.shape)
  local len = c.dim and c.shape[c.dim] or n
  local ref = ck.sum(x:host():to("f64"), c.dim):to("f32") -- f64 accumulation
  local out_shape = ref:shape()
  local case_rows = {}
  for _, v in ipairs(variants) do
    step = step + 1
    bench.progress(step, total, label(c) .. " " .. v.name)
    local row = {id = v.id, variant = v.name, op = "sum", fn = "sum", dtype = "f32", shape = c.shape,
                 dim = c.dim or "all", kind = c.kind, case = label(c)}
    local out = ck.empty(out_shape, {device = device}):fill(0 / 0)
    local vopt = on_gpu and v.name or nil
    local okrun, err = pcall(ck.sum, x, c.dim, {variant = vopt, out = out})
    local ran = ck.last_ran()
    if not okrun then
      row.ok, row.correct, row.error = false, false, tostring(err)
    elseif on_gpu and ran.name ~= v.name then
      row = nil -- the variant does not take this layout (its supports() said no): not part of this case
    else
      local good, msg = check(out, ref, len)
      row.ok, row.correct = good, good
      if not good then
        row.error = msg
      else
        local r = bench.run{spec = {op = "reduce", fn = "sum", x = x, dim = c.dim, out = out, variant = vopt},
                            warmup = 5, reps = on_gpu and 20 or 5, bytes = 4 * n}
        row.ms, row.q1, row.q3, row.gbps = r.ms, r.q1, r.q3, r.gbps
        bench.kernel_fields(row, ck.last_ran()) -- regs / smem / occupancy of what was timed
        if memcpy_gbps then row.pct_of_memcpy = 100 * r.gbps / memcpy_gbps end
      end
    end
    if row then case_rows[#case_rows + 1] = row end
    out:free()
  end
  x:free()
  -- speedups (ladder order) and % of CUB
  for _, r in ipairs(bench.ladder_ratios(case_rows)) do rows[#rows + 1] = r end
  tables[#tables + 1] = {title = label(c), rows = case_rows}
end

-- ---------------------------------------------------------------- results

local meta = bench.meta{device = device}
local doc = {meta = meta, ladder = "reduce", reference = on_gpu and "cub" or nil, memcpy_gbps = memcpy_gbps,
             headline = on_gpu and "sum 268435456 dim=all" or nil, rows = rows}
local path = bench.results_path("reduce", meta) -- host runs: under bench/results/host/
bench.write_json(path, doc)

print(("\nreduction ladder on %s%s"):format(on_gpu and meta.device or "the HOST CPU backend",
  on_gpu and ("; memcpy %.0f GB/s (read+write, 1 GiB)"):format(memcpy_gbps) or " (small sizes, not GPU performance)"))
local cols = bench.with_kernel_cols({
  {key = "id", title = "#"}, {key = "variant"}, {key = "ms", fmt = "%.4f"}, {key = "gbps", title = "GB/s", fmt = "%.0f"},
  {key = "step_speedup", title = "step", fmt = "%.2fx"}, {key = "cum_speedup", title = "cumulative", fmt = "%.2fx"},
  {key = "pct_of_memcpy", title = "% memcpy", fmt = "%.1f"}, {key = "pct_of_ref", title = "% CUB", fmt = "%.1f"},
  {key = "error", title = "check"},
}, "error")
bench.finish(path, bench.print_tables(tables, cols))
