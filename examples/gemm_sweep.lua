--- examples/gemm_sweep.lua — issue 37's bf16 GEMM across LLM-style shapes: m = 16 ... 16384 against n, k from
-- {4096, 8192, 14336}, with both operands in row-major order ("nn"), B given transposed ("nt": B^T stored [n, k],
-- passed as a view) and A given transposed ("tn"). Per shape: cuBLAS (rung 0), the own Hopper rungs that take it
-- (12 wgmma_tma, 13 warp_specialized, 14 persistent; a rung that declines says why) and the default dispatch (no
-- variant, which may itself pick cuBLAS). Each result is checked against cuBLAS's (relative Frobenius error, f32) before
-- it is timed; each own row and the default are timed in alternating single launches with cuBLAS (median of the
-- pair ratios, L2 flushed: the matmul ladder's method, since clocks follow power over a run). The summary is the
-- issue's: over all shapes, the geometric mean and the worst shape of (a) the best own rung per shape and (b) the
-- default dispatch, as ratios to cuBLAS (time of cuBLAS / time of ours).
-- Why: in session 13's two-GPU run on H200s the default dispatch's rung 14 ran the batched 16 x 4096^3 product at
-- 86% of PyTorch's cuBLAS, where on the H100 it had been at parity; the dispatch is to follow a measured table.
--   lua5.4 examples/gemm_sweep.lua [--quick] [--dtype bf16|f16] [--forms nn,nt,tn] [--reps N]
--   --quick: m in {16, 1024, 16384}, (n, k) in {(4096, 4096), (14336, 4096), (4096, 14336)} (a short call's subset)
--   --dry: print the cases and exit (no GPU needed)
-- Writes <results>/gemm_sweep-<device>.json (rows: m, n, k, form, variant, ms, tflops, ratio, ran, note).
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath

local opt = {dtype = "bf16", forms = "nn,nt,tn", reps = 10}
for i, a in ipairs(arg) do
  if a == "--quick" then opt.quick = true end
  if a == "--dry" then opt.dry = true end
  if a == "--dtype" then opt.dtype = arg[i + 1] end
  if a == "--forms" then opt.forms = arg[i + 1] end
  if a == "--reps" then opt.reps = tonumber(arg[i + 1]) end
end
assert(opt.dtype == "bf16" or opt.dtype == "f16", "gemm_sweep: --dtype bf16 or f16")

local MS = opt.quick and {16, 1024, 16384} or {16, 64, 256, 1024, 4096, 16384}
local NK = {}
if opt.quick then
  NK = {{4096, 4096}, {14336, 4096}, {4096, 14336}}
else
  for _, n in ipairs {4096, 8192, 14336} do for _, k in ipairs {4096, 8192, 14336} do NK[#NK + 1] = {n, k} end end
end
local FORMS = {}
for f in opt.forms:gmatch("[^,]+") do
  assert(f == "nn" or f == "nt" or f == "tn", "gemm_sweep: forms are nn, nt, tn")
  FORMS[#FORMS + 1] = f
end
local cases = {}
for _, f in ipairs(FORMS) do
  for _, nk in ipairs(NK) do
    for _, m in ipairs(MS) do cases[#cases + 1] = {m = m, n = nk[1], k = nk[2], form = f} end
  end
end
if opt.dry then
  for _, c in ipairs(cases) do print(("%s m=%d n=%d k=%d"):format(c.form, c.m, c.n, c.k)) end
  print(#cases .. " cases")
  return
end

local ck = require "cukern"
local bench = require "cukern.bench"
if bench.target(arg) ~= "cuda" then
  print("gemm_sweep: needs a GPU (the own rungs are Hopper kernels); nothing written (--dry lists the cases)")
  return
end
local OWN = {"wgmma_tma", "warp_specialized", "persistent"}
local dt = opt.dtype

-- relative Frobenius error of c against ref, in f32
local function rel_err(c, ref)
  local d = ck.sub(c:to("f32"), ref:to("f32"))
  local num = ck.sum(ck.mul(d, d)):item()
  local r32 = ref:to("f32")
  local den = ck.sum(ck.mul(r32, r32)):item()
  return math.sqrt(num / math.max(den, 1e-30))
end
-- bf16 keeps 8 bits, f16 11: a product rounded once to the output dtype differs from another by about one unit in
-- the last place per element, so a relative Frobenius error of 2^-7 (bf16) / 2^-10 (f16) bounds an honest pair
local TOL = {bf16 = 2 ^ -7, f16 = 2 ^ -10}

-- median of alternating single launches: spec, then cuBLAS's spec; -> ratio (cuBLAS / ours), our ms, cuBLAS ms
local function pairs_ratio(spec, ref)
  bench.run{spec = ref, warmup = 2, reps = 1}
  bench.run{spec = spec, warmup = 2, reps = 1}
  local ratios, mine, theirs = {}, {}, {}
  for i = 1, opt.reps do
    local x = bench.run{spec = spec, warmup = 0, reps = 1}
    local y = bench.run{spec = ref, warmup = 0, reps = 1}
    ratios[i], mine[i], theirs[i] = y.ms / x.ms, x.ms, y.ms
  end
  return bench.stats(ratios).ms, bench.stats(mine).ms, bench.stats(theirs).ms
end

ck.seed(37)
local rows, summary = {}, {}
for ci, c in ipairs(cases) do
  bench.progress(ci, #cases, ("%s %dx%dx%d"):format(c.form, c.m, c.n, c.k))
  local m, n, k = c.m, c.n, c.k
  local a = c.form == "tn" and ck.rand(k, m, {device = "cuda"}):to(dt):t() or ck.rand(m, k, {device = "cuda"}):to(dt)
  local b = c.form == "nt" and ck.rand(n, k, {device = "cuda"}):to(dt):t() or ck.rand(k, n, {device = "cuda"}):to(dt)
  local out = ck.empty(m, n, {dtype = dt, device = "cuda"})
  local ref = ck.matmul(a, b, {variant = "cublas"})
  local flops = 2 * m * n * k
  local ref_spec = {op = "matmul", a = a, b = b, out = out, variant = "cublas"}
  local base = bench.run{spec = ref_spec, warmup = 3, reps = opt.reps, flops = flops}
  rows[#rows + 1] = {m = m, n = n, k = k, form = c.form, variant = "cublas", ms = base.ms, tflops = base.tflops,
                     ratio = 1, ran = "cublas"}
  local best, best_name, default_ratio, default_ran
  local function try(name) -- name nil: the default dispatch
    local row = {m = m, n = n, k = k, form = c.form, variant = name or "default"}
    local ok, res = pcall(ck.matmul, a, b, {variant = name, out = out})
    local ran = ck.last_ran()
    row.ran = ran and ran.name
    if not ok then
      row.note = "error: " .. tostring(res)
    elseif name and row.ran ~= name then
      row.note = "declined: " .. tostring(ran and ran.note or "another rung ran")
    else
      local e = rel_err(out, ref)
      row.rel_err = e
      if e > TOL[dt] then
        row.note = ("wrong: relative error %.3g > %.3g"):format(e, TOL[dt])
      else
        local spec = {op = "matmul", a = a, b = b, out = out, variant = name}
        row.ratio, row.ms, row.ref_ms = pairs_ratio(spec, ref_spec)
        row.tflops = flops / row.ms / 1e9
      end
    end
    rows[#rows + 1] = row
    return row
  end
  for _, v in ipairs(OWN) do
    local r = try(v)
    if r.ratio and (not best or r.ratio > best) then best, best_name = r.ratio, v end
  end
  local d = try(nil)
  default_ratio, default_ran = d.ratio, d.ran
  summary[#summary + 1] = {m = m, n = n, k = k, form = c.form, cublas_tflops = base.tflops, best = best,
                           best_rung = best_name, default = default_ratio, default_ran = default_ran}
  a, b, out, ref = nil, nil, nil, nil
  collectgarbage()
  ck.empty_cache()
end

local function geo(key)
  local s, nn, worst, wcase = 0, 0, nil, nil
  for _, r in ipairs(summary) do
    local v = r[key]
    if v then
      s, nn = s + math.log(v), nn + 1
      if not worst or v < worst then worst, wcase = v, ("%s %dx%dx%d"):format(r.form, r.m, r.n, r.k) end
    end
  end
  return nn > 0 and math.exp(s / nn) or nil, worst, wcase, nn
end

print(("\n%s GEMM sweep on %s: ratio = cuBLAS time / ours, median of %d alternating pairs"):format(dt,
  bench.meta().device, opt.reps))
bench.table(summary, {
  {key = "form", title = "form"}, {key = "m", title = "m"}, {key = "n", title = "n"}, {key = "k", title = "k"},
  {key = "cublas_tflops", title = "cuBLAS TFLOP/s", fmt = "%.0f"}, {key = "best_rung", title = "best own rung"},
  {key = "best", title = "best own", fmt = "%.3f"}, {key = "default_ran", title = "default ran"},
  {key = "default", title = "default", fmt = "%.3f"},
})
local gb, wb, wbc, nb = geo("best")
local gd, wd, wdc, nd = geo("default")
local doc_summary = {}
if gb then
  print(("own best rung: geometric mean %.3f over %d shapes, worst %.3f (%s); the issue asks >= 0.95"):format(gb, nb, wb, wbc))
  doc_summary.best = {geomean = gb, worst = wb, worst_case = wbc, shapes = nb}
end
if gd then
  print(("default dispatch: geometric mean %.3f over %d shapes, worst %.3f (%s); the issue asks > 1.0 and no shape below 0.97")
    :format(gd, nd, wd, wdc))
  doc_summary.default = {geomean = gd, worst = wd, worst_case = wdc, shapes = nd}
end

local meta = bench.meta()
local path = bench.results_path("gemm_sweep", meta)
bench.mkdir(path:match("^(.*)/"))
bench.write_json(path, {meta = meta, ladder = "gemm_sweep", reference = "cublas", dtype = dt, reps = opt.reps,
                        rows = rows, shapes = summary, summary = doc_summary})
print("wrote " .. path)
