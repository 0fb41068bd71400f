-- The transpose ladder: naive (row- and column-wise), shared-memory tile, padding, unrolling, wide tiles,
-- 16-byte accesses, sector-aligned output windows — against cuBLAS geam and the memcpy bound.
--
--   lua5.4 examples/transpose_ladder.lua [--host-small]      (CUKERN_SIZES=small: host-sized cases)
--
-- Cases: f32 4096^2, 8192^2, 16384^2, 4096x16384, 16383x4097 (odd: no row starts on a 32-byte sector) and
-- f64 16384^2. Every variant is first validated against the host reference (the host backend's transpose,
-- copied to the GPU once per case; an exact comparison, poisoned output), then timed in C with CUDA events
-- (bench.run: 5 warm-ups, 20 reps, L2 flushed between reps). Effective bandwidth = 2 * bytes / time (each
-- element read once and written once), reported as % of a device-to-device memcpy of the same bytes timed
-- in the same run (the bound: time_op{op = "memcpy"}, id -2 in every ladder's results). Also timed: contiguous() of permuted
-- 3-D views, which ck_copy runs as a batched tiled transpose. Rows go to <results>/transpose-<device>.json
-- ({id, variant, dtype, shape, ms, gbps, pct_of_ref, correct}, pct_of_ref = % of memcpy); the seed-style
-- tables are printed last. Without a GPU (or with --host-small) small cases run on the host, labelled, and
-- their results go under bench/results/host/.
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")

local ck = require "cukern"
local bench = require "cukern.bench"

local device = bench.target(arg)
local on_gpu = device == "cuda"
local REPS = on_gpu and 20 or 5

-- ---------------------------------------------------------------- cases

local cases
if on_gpu then
  cases = {{"f32", {4096, 4096}}, {"f32", {8192, 8192}}, {"f32", {16384, 16384}}, {"f32", {4096, 16384}},
           {"f32", {16383, 4097}}, {"f64", {16384, 16384}}}
else
  cases = {{"f32", {256, 256}}, {"f32", {512, 512}}, {"f32", {256, 1024}}, {"f32", {255, 257}}, {"f64", {256, 256}}}
end
-- contiguous() of permuted 3-D views: {shape, permutation}
local perms = on_gpu and {{{64, 1024, 1024}, {1, 3, 2}}, {{256, 512, 512}, {3, 1, 2}}, {{512, 512, 256}, {2, 3, 1}},
                          {{1024, 1024, 64}, {3, 2, 1}}}
                      or {{{8, 64, 64}, {1, 3, 2}}, {{32, 32, 16}, {3, 1, 2}}}

local numel, shape_str = bench.numel, bench.shape_str
local ESIZE = {f32 = 4, f64 = 8, i32 = 4}

-- Ladder order 1..8, the library reference (geam, id 0) after them; memcpy is timed separately.
local variants = {}
if on_gpu then
  for _, v in ipairs(ck.variants("transpose")) do if not v.bench_only then variants[#variants + 1] = v end end
  table.sort(variants, function(a, b) return (a.id == 0 and 1e9 or a.id) < (b.id == 0 and 1e9 or b.id) end)
else
  variants = {{id = -1, name = "host"}}
end
local memcpy_row = {id = -2, name = "memcpy"} -- the bound, as in every ladder: not a registry row

-- ---------------------------------------------------------------- helpers

--- Count of elements where got ~= ref (NaN counts: the output was poisoned), computed where they live.
local function mismatches(got, ref)
  local ne = ck.ne(got, ref)
  local n = ck.sum(ne:to("f64")):item()
  ne:free()
  return n
end

--- Time a device-to-device (or host) copy of `bytes` between two contiguous arrays: the bound.
local function time_memcpy(dst, src, bytes)
  local ok, r = pcall(bench.run, {spec = {op = "memcpy", dst = dst, src = src}, warmup = 5, reps = REPS, bytes = bytes})
  if not ok then io.stderr:write("memcpy not timed: " .. tostring(r) .. "\n") return nil end
  return r
end

-- ---------------------------------------------------------------- transposes

local rows, tables = {}, {}
local total = #cases * (#variants + 1) + #perms
local step = 0
for ci, c in ipairs(cases) do
  local dt, shape = c[1], c[2]
  local tshape = {shape[2], shape[1]}
  local n = numel(shape)
  local bytes = 2 * n * ESIZE[dt] -- read once + written once
  local label = ("%s %s"):format(dt, shape_str(shape))
  ck.seed(4321 + ci)
  local x = ck.rand(shape, {dtype = dt, device = device}) * 2 - 1
  local ref = ck.transpose(x:host()) -- the host reference
  if on_gpu then ref = ref:cuda() end
  local out = ck.empty(tshape, {dtype = dt, device = device})
  local case_rows = {}

  step = step + 1
  bench.progress(step, total, label .. " memcpy")
  local mc = time_memcpy(out:reshape(shape), x, bytes) -- same bytes; memcpy wants equal shapes
  if mc then
    case_rows[#case_rows + 1] = {id = memcpy_row.id, variant = "memcpy", dtype = dt, shape = shape, case = label,
                                 ms = mc.ms, q1 = mc.q1, q3 = mc.q3, gbps = mc.gbps, pct_of_ref = 100, bound = true}
  end

  for _, v in ipairs(variants) do
    step = step + 1
    bench.progress(step, total, label .. " " .. v.name)
    local row = {id = v.id, variant = v.name, dtype = dt, shape = shape, case = label}
    local vopt = on_gpu and v.name or nil
    out:fill(0 / 0)
    local okrun, err = pcall(ck.transpose, x, {out = out, variant = vopt})
    local ran = ck.last_ran()
    if not okrun then
      row.correct, row.error = false, tostring(err)
    elseif on_gpu and ran.name ~= v.name then
      row.correct, row.error = nil, "not run: " .. tostring(ran.note) -- supports() said no; fell back
    else
      local bad = mismatches(out, ref)
      row.correct = bad == 0
      if bad ~= 0 then
        row.error = ("%d of %d elements differ from the host reference"):format(math.tointeger(bad) or bad, n)
      else
        local r = bench.run{spec = {op = "transpose", x = x, out = out, variant = vopt}, warmup = 5, reps = REPS,
                            bytes = bytes}
        row.ms, row.q1, row.q3, row.gbps = r.ms, r.q1, r.q3, r.gbps
        bench.kernel_fields(row, ck.last_ran()) -- regs / smem / occupancy of what was timed
        if mc then row.pct_of_ref = 100 * mc.ms / r.ms end
      end
    end
    case_rows[#case_rows + 1] = row
  end
  x:free(); out:free(); ref:free()
  for _, r in ipairs(case_rows) do rows[#rows + 1] = r end
  tables[#tables + 1] = {title = label, rows = case_rows}
end

-- ---------------------------------------------------------------- contiguous() of permuted views

local perm_rows = {}
for pi, p in ipairs(perms) do
  local shape, perm = p[1], p[2]
  local n = numel(shape)
  local bytes = 2 * n * 4
  local label = ("f32 %s permute(%s)"):format(shape_str(shape), table.concat(perm, ","))
  step = step + 1
  bench.progress(step, total, label)
  ck.seed(99 + pi)
  local x = ck.rand(shape, {device = device}) * 2 - 1
  local view = x:permute(table.unpack(perm))
  local dst = ck.empty(view:shape(), {device = device})
  local row = {id = -3, variant = "contiguous", dtype = "f32", shape = shape, perm = perm, case = label}
  dst:fill(0 / 0)
  dst:copy_(view)
  local bad = mismatches(dst, view:host():contiguous():to(device))
  row.correct = bad == 0
  if bad == 0 then
    local r = bench.run{spec = {op = "copy", dst = dst, src = view}, warmup = 5, reps = REPS, bytes = bytes}
    local mc = time_memcpy(dst:reshape(shape), x, bytes)
    row.ms, row.gbps = r.ms, r.gbps
    if mc then row.pct_of_ref = 100 * mc.ms / r.ms; row.memcpy_ms = mc.ms end
  else
    row.error = ("%d of %d elements differ"):format(math.tointeger(bad) or bad, n)
  end
  perm_rows[#perm_rows + 1] = row
  rows[#rows + 1] = row
  x:free(); dst:free()
end

-- ---------------------------------------------------------------- results

local meta = bench.meta{device = device}
local doc = {meta = meta, ladder = "transpose", reference = "memcpy", host_small = not on_gpu or nil,
             headline = on_gpu and "f32 16384x16384" or nil, rows = rows}
local path = bench.results_path("transpose", meta)
bench.write_json(path, doc)

print(("\ntranspose ladder on %s"):format(on_gpu and meta.device or "the HOST CPU backend (small sizes, not GPU performance)"))
print("effective bandwidth = 2 x bytes / time; % = of a memcpy of the same bytes in this run")
local cols = bench.with_kernel_cols({
  {key = "id", title = "#"}, {key = "variant", title = "kernel"}, {key = "ms", title = "elapsed ms", fmt = "%.4f"},
  {key = "gbps", title = "effective GB/s", fmt = "%.0f"}, {key = "pct_of_ref", title = "% memcpy", fmt = "%.1f"},
  {key = "error", title = "check"},
}, "error")
local failures = bench.print_tables(tables, cols)
failures = failures + bench.print_tables({{title = "contiguous() of permuted views (ck_copy's tiled-transpose path)",
  rows = perm_rows}}, {{key = "case"}, {key = "ms", title = "elapsed ms", fmt = "%.4f"},
  {key = "gbps", title = "effective GB/s", fmt = "%.0f"}, {key = "pct_of_ref", title = "% memcpy", fmt = "%.1f"},
  {key = "error", title = "check"}})
bench.finish(path, failures)
