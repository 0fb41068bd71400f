-- The matmul ladder: on CUDA cores naive -> coalesced -> shared memory -> 1-D / 2-D register blocking ->
-- float4 -> conflict-free -> warp tiling -> cp.async pipeline, against cuBLAS (SGEMM / DGEMM, no TF32); on
-- tensor cores (f16, bf16, tf32) WMMA -> mma.sync, and on Hopper wgmma + TMA -> warp-specialised ->
-- persistent clusters, against cuBLAS in the same dtype.
--
--   lua5.4 examples/matmul_ladder.lua [sizes...] [--host-small]
--       sizes: square n (m = n = k); default 1024 2048 4096 8192 on the GPU (env CUKERN_MM_SIZES="1024 4096"
--       works too); --host-small or CUKERN_SIZES=small runs small sizes on the host backend, labelled host.
--       On the host backend (no GPU, or one of those) the cases are host-sized: 64 128 256 by default, and
--       sizes above 512 are left out with a note (a host 4096^3 product takes tens of seconds, and a case
--       runs about ten of them), so every case takes well under a few seconds.
--   CUKERN_MM_DTYPES="f32 f64" picks dtypes (default both; each variant runs the dtypes it registers).
--   CUKERN_MM_SHAPES="8192x4096x16384" adds non-square m x n x k cases (GPU default: that one) for the
--   dtypes in CUKERN_MM_SHAPE_DTYPES (default "f16 bf16": the tensor-core rungs).
--
-- Every (size, dtype, variant) is validated before it is timed: at sizes <= 1024 against the host reference
-- (f64 accumulation), above against the cuBLAS result of the same inputs, by the relative Frobenius norm
-- ||C - C_ref|| / ||C_ref|| (f32: <= 1e-5, f64: <= 1e-12; fp32 summation errors give ~6e-7 at 1024). Every
-- rung, like cuBLAS's SIMT kernels at these sizes, forms each result as one FMA chain over p = 0 .. k-1, so
-- against cuBLAS the error is often exactly 0: the same roundings in the same order. Times
-- come from CUDA events in C (bench.run over a time_op spec: warm-up, >= 10 reps, L2 flushed between reps,
-- median), TFLOP/s = 2*m*n*k / time, % of cuBLAS for the same size and dtype (on the GPU, clocks drift over a
-- run at the power limit, so cuBLAS is timed again beside each rung: alternating single launches with it, %
-- = the median of the per-pair ratios (row field pairs = their number), or for rungs slower than ~50 ms a
-- product the medians of back-to-back runs). Variants whose estimated run
-- (from the size below, scaled by n^3) would pass ~20 s are skipped and say so in their row.
-- Also: `a * b` (default dispatch, allocating its result) timed from a Lua loop against the raw cuBLAS time.
-- Rows go to <results>/matmul-<device>.json (bench/results on the GPU, bench/results/host/ on the host,
-- $CUKERN_RESULTS if set); the seed-style ladder tables are printed last.
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")

local ck = require "cukern"
local bench = require "cukern.bench"

local device = bench.target(arg)
local on_gpu = device == "cuda"
local sizes = {}
for _, a in ipairs(arg or {}) do
  if tonumber(a) then sizes[#sizes + 1] = math.tointeger(tonumber(a)) end
end
if #sizes == 0 and os.getenv("CUKERN_MM_SIZES") then
  for s in os.getenv("CUKERN_MM_SIZES"):gmatch("%d+") do sizes[#sizes + 1] = math.tointeger(tonumber(s)) end
end
local HOST_SIZES, HOST_MAX = {64, 128, 256}, 512
if not on_gpu then
  -- host-sized cases only: the host backend's product is a plain loop nest
  local kept, dropped = {}, {}
  for _, n in ipairs(sizes) do
    if n <= HOST_MAX then kept[#kept + 1] = n else dropped[#dropped + 1] = n end
  end
  if #dropped > 0 then
    local instead = #kept == 0 and ("; running " .. table.concat(HOST_SIZES, " ")) or ""
    io.stderr:write(("matmul ladder on the host backend: leaving out %s (GPU sizes; host cases go up to %d)%s\n")
      :format(table.concat(dropped, " "), HOST_MAX, instead))
  end
  sizes = kept
end
if #sizes == 0 then sizes = on_gpu and {1024, 2048, 4096, 8192} or HOST_SIZES end
-- Dtypes: "tf32" is f32 storage with {precision = "tf32"} (the tensor cores' TF32 mode, opt-in); f16 and bf16
-- run on the rungs whose registry row takes them (cuBLAS GemmEx, wmma, mma_sync), when this build has them.
local function dtype_available(dt)
  return dt == "tf32" or pcall(ck.zeros, 1, {dtype = dt, device = "host"})
end
local dtypes = {}
for d in (os.getenv("CUKERN_MM_DTYPES") or (on_gpu and "f32 f64 f16 bf16 tf32" or "f32 f64")):gmatch("%a+%d+") do
  if dtype_available(d) then dtypes[#dtypes + 1] = d
  else io.stderr:write(("matmul ladder: dtype %s is not available in this build; skipped\n"):format(d)) end
end
local function storage(dt) return dt == "tf32" and "f32" or dt end
-- the cases: {m, n, k} per dtype; square sizes for every dtype, non-square shapes for some
local shapes, shape_dtypes = {}, {}
if on_gpu then
  for s in (os.getenv("CUKERN_MM_SHAPES") or "8192x4096x16384"):gmatch("[%dx]+") do
    local m, n, k = s:match("^(%d+)x(%d+)x(%d+)$")
    if m then shapes[#shapes + 1] = {math.tointeger(m), math.tointeger(n), math.tointeger(k)} end
  end
  for d in (os.getenv("CUKERN_MM_SHAPE_DTYPES") or "f16 bf16"):gmatch("%a+%d+") do shape_dtypes[d] = true end
end
local function cases_of(dt)
  local list = {}
  for _, n in ipairs(sizes) do list[#list + 1] = {n, n, n} end
  if shape_dtypes[dt] then for _, s in ipairs(shapes) do list[#list + 1] = s end end
  return list
end
local TF32_RUNGS = {cublas = true, mma_sync = true}

-- Relative (Frobenius) error allowed against the f64 product of the same (rounded) inputs: a few units of
-- the output's roundoff (f16 2^-11, bf16 2^-8; TF32 rounds the inputs to 2^-11).
local TOL = {f32 = 1e-5, f64 = 1e-12, f16 = 2e-3, bf16 = 1.5e-2, tf32 = 3e-3}
-- Dense datasheet peaks of the H100/H200 SXM (TFLOP/s; the H200 has the H100's compute): the "% peak" column.
local PEAK = {f32 = 66.9, f64 = 66.9, tf32 = 494.7, f16 = 989.4, bf16 = 989.4}
local BUDGET_S = 20 -- skip a variant whose timed run is estimated to take longer

-- ---------------------------------------------------------------- variants (ladder order, cuBLAS first)

local variants = {}
if on_gpu then
  for _, v in ipairs(ck.variants("matmul")) do if not v.bench_only and not v.batched then variants[#variants + 1] = v end end
  table.sort(variants, function(a, b) return a.id < b.id end)
else
  variants = {{id = -1, name = "host", dtypes = {"f32", "f64"}}}
end
local function has_dtype(v, dt)
  if dt == "tf32" then return on_gpu and TF32_RUNGS[v.name] or false end
  if dt == "f32" and v.name == "mma_sync" then return false end -- its f32 is TF32 only (the tf32 rows)
  for _, d in ipairs(v.dtypes) do if d == dt then return true end end
  return false
end

-- ---------------------------------------------------------------- helpers

--- ||x - y|| / ||y|| computed on x's device in f64.
local function rel_err(x, y)
  local d = (x:to(x:device(), "f64") - y:to(x:device(), "f64"))
  local num = ck.sum(ck.mul(d, d)):item()
  local y64 = y:to(x:device(), "f64")
  local den = ck.sum(ck.mul(y64, y64)):item()
  if den == 0 then return math.sqrt(num) end
  return math.sqrt(num / den)
end

local function fmt_n(n) return ("%d"):format(n) end

-- ---------------------------------------------------------------- runs

local rows, tables = {}, {}
local meta_device = ck.device().name
local total = 0
for _, dt in ipairs(dtypes) do
  for _, v in ipairs(variants) do if has_dtype(v, dt) then total = total + #cases_of(dt) end end
end
local step = 0
local last_ms = {} -- variant name .. dtype -> {n, ms} from the previous size (to estimate the next)
local dispatch = {}

for _, dt in ipairs(dtypes) do
  for si, case in ipairs(cases_of(dt)) do
    ck.seed(4242 + si)
    local m, n, k = case[1], case[2], case[3]
    local sdt = storage(dt)
    local a = (ck.rand({m, k}, {dtype = "f32", device = device}) * 2 - 1):to(sdt)
    local b = (ck.rand({k, n}, {dtype = "f32", device = device}) * 2 - 1):to(sdt)
    local precision = dt == "tf32" and "tf32" or nil
    local flops = 2.0 * m * n * k
    local size = (m * n * k) ^ (1 / 3) -- the equivalent cube, for the reference choice and time estimates
    -- the reference result: host f64 for small sizes, else cuBLAS on the same inputs (itself checked at
    -- the small sizes)
    local ref
    if not on_gpu or size <= 1024 then
      ref = ck.matmul(a:to("host", "f64"), b:to("host", "f64"))
    else
      ref = ck.matmul(a:to("f64"), b:to("f64"), {variant = "cublas"})
    end
    local case_rows = {}
    for _, v in ipairs(variants) do
      if has_dtype(v, dt) then
        step = step + 1
        bench.progress(step, total, ("%s %dx%dx%d %s"):format(dt, m, n, k, v.name))
        local row = {id = v.id, variant = v.name, dtype = dt, m = m, n = n, k = k, device = device}
        local prev = last_ms[v.name .. dt]
        local est = prev and prev.ms * (size / prev.n) ^ 3 or 0
        local warmup, reps = 5, 20
        if est > 50 then warmup, reps = 1, 10 end -- slow rungs: fewer warm-ups, still >= 10 reps
        if not on_gpu then warmup, reps = 1, 3 end -- host: a functional run, not performance
        if est * (warmup + reps + 1) / 1e3 > BUDGET_S then
          row.correct = nil
          row.skipped = ("skipped: ~%.1f s per product estimated from a %d^3 case (over the %d s budget)")
            :format(est / 1e3, math.floor(prev.n + 0.5), BUDGET_S)
          row.note = row.skipped
        else
          local c = ck.empty({m, n}, {dtype = sdt, device = device}):fill(0 / 0)
          local vopt = on_gpu and v.name or nil
          local okrun, err = pcall(ck.gemm, c, a, b, 1, 0, {variant = vopt, precision = precision})
          local ran = ck.last_ran()
          if not okrun then
            row.correct, row.error = false, tostring(err)
          elseif on_gpu and ran.name ~= v.name then
            row.correct, row.error = false, ("ran %s instead (%s)"):format(ran.name, ran.note)
          else
            local e = rel_err(c, ref)
            row.rel_err = e
            row.correct = e <= TOL[dt]
            if not row.correct then
              row.error = ("relative error %.3g > %.0e"):format(e, TOL[dt])
            else
              local r = bench.run{spec = {op = "matmul", a = a, b = b, out = c, variant = vopt, precision = precision},
                                  warmup = warmup, reps = reps, flops = flops}
              row.ms, row.q1, row.q3, row.tflops, row.reps = r.ms, r.q1, r.q3, r.tflops, r.reps
              bench.kernel_fields(row, ck.last_ran()) -- regs / smem / occupancy of what was timed
              if on_gpu and v.id > 0 then
                -- the reference again, beside the rung: a GPU at its power limit changes clocks over a run.
                -- Fast rungs (~50 ms or less a product) alternate single launches with cuBLAS (rung, cuBLAS, rung,
                -- ...; L2 flushed before each as above) and "% of cuBLAS" is the median of the per-pair ratios;
                -- slower ones compare the medians of back-to-back runs.
                local rspec = {op = "matmul", a = a, b = b, out = c, variant = "cublas", precision = precision}
                if r.ms <= 50 then
                  local vspec = {op = "matmul", a = a, b = b, out = c, variant = vopt, precision = precision}
                  bench.run{spec = rspec, warmup = 2, reps = 1}
                  local ratios, refs = {}, {}
                  for i = 1, reps do
                    local x = bench.run{spec = vspec, warmup = 0, reps = 1}
                    local y = bench.run{spec = rspec, warmup = 0, reps = 1}
                    ratios[i], refs[i] = y.ms / x.ms, y.ms
                  end
                  row.ref_ms, row.pairs = bench.stats(refs).ms, reps
                  row.pct_pairs = 100 * bench.stats(ratios).ms
                else
                  row.ref_ms = bench.run{spec = rspec, warmup = 2, reps = math.max(10, reps // 2), flops = flops}.ms
                end
              end
              if on_gpu and PEAK[dt] and tostring(meta_device):match("H[12]00") then
                row.pct_of_peak = 100 * r.tflops / PEAK[dt]
              end
              last_ms[v.name .. dt] = {n = size, ms = r.ms}
            end
          end
          if c.free then c:free() end
        end
        case_rows[#case_rows + 1] = row
        rows[#rows + 1] = row
      end
    end
    -- % of cuBLAS and step speedups in ladder order
    local blas, prev
    for _, r in ipairs(case_rows) do if r.id == 0 and r.tflops then blas = r end end
    for _, r in ipairs(case_rows) do
      if r.tflops then
        if r.pct_pairs then r.pct_of_ref = r.pct_pairs
        elseif r.ref_ms then r.pct_of_ref = 100 * r.ref_ms / r.ms
        elseif blas then r.pct_of_ref = 100 * r.tflops / blas.tflops end
        if r.id > 0 then
          r.step_speedup = prev and prev.ms / r.ms or nil
          prev = r
        end
        if r.id == 0 then r.reference = true end
      end
    end
    -- `a * b` through the default dispatch from a Lua loop (allocating results) vs raw cuBLAS
    if on_gpu and dt == "f32" and blas then
      local loops = 10
      local r = bench.run{fn = function()
        for _ = 1, loops do local c = a * b; c:free() end
      end, warmup = 2, reps = 10, device = device}
      local per = r.ms / loops
      local d = {size = ("%dx%dx%d"):format(m, n, k), dtype = dt, ms = per, tflops = flops / per / 1e9, cublas_ms = blas.ms,
                 overhead_pct = 100 * (per / blas.ms - 1), ran = ck.last_ran().name}
      dispatch[#dispatch + 1] = d
      rows[#rows + 1] = {id = -2, variant = "a * b (Lua loop, default dispatch)", dtype = dt, m = m, n = n, k = k,
                         ms = per, tflops = d.tflops, pct_of_ref = 100 * blas.ms / per, correct = true,
                         note = ("ran %s; %+.1f%% vs raw cuBLAS time"):format(d.ran, d.overhead_pct)}
    end
    tables[#tables + 1] = {title = ("%s %s x %s x %s"):format(dt, fmt_n(m), fmt_n(n), fmt_n(k)), rows = case_rows}
    a:free(); b:free()
    if ref.free then ref:free() end
  end
end

-- ---------------------------------------------------------------- results

local meta = bench.meta{device = device}
local doc = {meta = meta, ladder = "matmul", reference = on_gpu and "cublas" or nil,
             headline = on_gpu and "f32 4096" or nil, dispatch = dispatch, rows = rows}
local path = bench.results_path("matmul", meta)
bench.write_json(path, doc)

print(("\nmatmul ladder on %s%s"):format(on_gpu and meta.device or "the HOST CPU backend",
  on_gpu and " (f32/f64 on CUDA cores, cuBLAS without TF32; f16/bf16/tf32 on tensor cores; % peak: dense "
    .. "datasheet peak of an H100/H200 SXM)" or " (small sizes, not GPU performance)"))
local cols = bench.with_kernel_cols({
  {key = "id", title = "#"}, {key = "variant"}, {key = "ms", fmt = "%.3f"}, {key = "tflops", title = "TFLOP/s", fmt = "%.2f"},
  {key = "pct_of_ref", title = "% cuBLAS", fmt = "%.1f"}, {key = "pct_of_peak", title = "% peak", fmt = "%.1f"},
  {key = "step_speedup", title = "step", fmt = "%.2fx"},
  {key = "rel_err", title = "rel err", fmt = "%.1e"}, {key = "error", title = "check"}, {key = "skipped", title = "note"},
}, "rel_err")
local failures = bench.print_tables(tables, cols)
if #dispatch > 0 then
  print("\na * b from a Lua loop (default dispatch, result allocated per product) vs raw cuBLAS")
  bench.table(dispatch, {{key = "size"}, {key = "ms", fmt = "%.3f"}, {key = "cublas_ms", title = "cuBLAS ms", fmt = "%.3f"},
                         {key = "overhead_pct", title = "overhead %", fmt = "%+.2f"}, {key = "ran"}})
end
bench.finish(path, failures)
