-- Linear algebra on the GPU (issue 34): the LU ladder (ck.variants("lu")) and the functions beside torch.linalg.
--
--   lua5.4 examples/linalg_bench.lua [--torch torch.json] [--quick] [--only lu,functions,batched,refine]
--
-- LU ladder: every rung is validated against cuSOLVER's getrf at n = 1024 (same pivots, LU within 1e3 n eps), then
-- ck.lu(A, {packed = true, variant = v}) is timed at n = 1024, 4096, 8192 (f32, f64; unblocked only to 4096), GFLOP/s
-- = 2/3 n^3 / time, pct_of_ref = % of cuSOLVER (id 0) in the same run -> <results>/lu-<device>.json.
-- Functions: solve, inv, lu, cholesky, qr, eigh, svd at n = 1024, 4096, 8192 (eigh, svd to 4096), batched solve, inv
-- and cholesky of 10^4 x 8x8, 16x16, 32x32 and 10^3 x 64x64, each with torch.linalg's time from bench/torch_linalg.py (same machine, same run of
-- lab/issue34-gpu.sh) and the ratio; iterative refinement at 8192 f64 (f16, bf16, tf32): speed-up over the plain f64
-- solve and backward error ||Ax - b|| / (||A|| ||x||) of both -> <results>/linalg-<device>.json.
-- Timing: bench.run{fn = ...} (a sync, then CUDA events around each call; 2-3 warm-ups, median of 3-10).
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")
local ck = require "cukern"
local bench = require "cukern.bench"

local torch_path, quick, only = nil, false, nil
for i = 1, #arg do
  if arg[i] == "--torch" then torch_path = arg[i + 1] end
  if arg[i] == "--quick" then quick = true end
  if arg[i] == "--only" then
    only = {}
    for w in (arg[i + 1] or ""):gmatch("[^,]+") do only[w] = true end
  end
end
-- a section runs unless --only names others
local function section(name) return not only or only[name] end
if not ck.has_cuda() then print("linalg_bench: no GPU here; the host oracle is timed by the specs only"); os.exit(0) end
local torch = torch_path and bench.read_json(torch_path) or nil
local meta = bench.meta()

local function randA(n, dt, batch)
  local A = batch and ck.randn(batch, n, n, {dtype = dt, device = "cuda"}) or ck.randn(n, n, {dtype = dt, device = "cuda"})
  return ck.add(A, ck.mul(ck.eye(n, {dtype = dt, device = "cuda"}), math.sqrt(n)))
end
local function time(fn, reps) return bench.run{fn = fn, warmup = 2, reps = reps or 5, flush = false} end

-- ---------------------------------------------------------------- the LU ladder
local sizes = quick and {1024, 4096} or {1024, 4096, 8192}
local lu_rows = {}
for _, dt in ipairs(section("lu") and {"f32", "f64"} or {}) do
  local A0 = randA(1024, dt)
  local LUr, pr = ck.lu(A0, {packed = true, variant = "cusolver"})
  local valid = {}
  for _, v in ipairs(ck.variants("lu")) do
    local LU, p = ck.lu(A0, {packed = true, variant = v.name})
    local err = ck.max(ck.abs(ck.sub(LU, LUr)):contiguous():reshape(-1), 1):item()
    valid[v.name] = ck.equal(p, pr) and err <= 1e3 * 1024 * (dt == "f32" and 2 ^ -23 or 2 ^ -52) * 32
    if not valid[v.name] then print(("lu %s %s: INVALID (max |LU - cuSOLVER| %.3g)"):format(v.name, dt, err)) end
  end
  for _, n in ipairs(sizes) do
    local A = randA(n, dt)
    local ref
    for _, v in ipairs(ck.variants("lu")) do
      if not (v.name == "unblocked" and n > 4096) then
        local r = time(function() ck.lu(A, {packed = true, variant = v.name}) end, n >= 8192 and 3 or 5)
        ref = ref or (v.id == 0 and r.ms)
        local row = {id = v.id, variant = v.name, dtype = dt, shape = {n, n}, numel = n * n, ms = r.ms,
                     gflops = 2 / 3 * n ^ 3 / r.ms / 1e6, correct = valid[v.name], reference = v.id == 0 or nil}
        row.pct_of_ref = ref and 100 * ref / r.ms or nil
        lu_rows[#lu_rows + 1] = row
        print(("lu %-10s %s n=%5d %9.3f ms %8.1f GFLOP/s %6.1f%% of cuSOLVER"):format(v.name, dt, n, r.ms, row.gflops, row.pct_of_ref or 0))
      end
    end
  end
end
if section("lu") then
  local p1 = bench.results_path("lu", meta)
  bench.write_json(p1, {meta = meta, ladder = "lu", reference = "cusolver", rows = lu_rows})
  print("wrote " .. p1)
end

-- ---------------------------------------------------------------- functions beside torch.linalg
local rows = {}
local function add(key, r, extra)
  local row = {key = key, ms = r.ms, torch_ms = torch and torch.ms[key] or nil}
  if row.torch_ms then row.x_torch = row.torch_ms / r.ms end
  for k, v in pairs(extra or {}) do row[k] = v end
  rows[#rows + 1] = row
  print(("%-28s %10.3f ms   torch %s   %s"):format(key, r.ms, row.torch_ms and ("%.3f ms"):format(row.torch_ms) or "-",
    row.x_torch and ("%.2fx"):format(row.x_torch) or ""))
end
for _, dt in ipairs {"f32", "f64"} do
  for _, n in ipairs(section("functions") and sizes or {}) do
    local A, b = randA(n, dt), ck.randn(n, 1, {dtype = dt, device = "cuda"})
    local S = ck.add(ck.matmul(A, A:t()), ck.mul(ck.eye(n, {dtype = dt, device = "cuda"}), n))
    local reps = n >= 8192 and 3 or 5
    add(("solve-%s-%d"):format(dt, n), time(function() ck.solve(A, b) end, reps))
    add(("inv-%s-%d"):format(dt, n), time(function() ck.inv(A) end, reps))
    add(("lu-%s-%d"):format(dt, n), time(function() ck.lu(A, {packed = true}) end, reps))
    add(("cholesky-%s-%d"):format(dt, n), time(function() ck.cholesky(S) end, reps))
    add(("qr-%s-%d"):format(dt, n), time(function() ck.qr(A) end, reps))
    if n <= 4096 then add(("eigh-%s-%d"):format(dt, n), time(function() ck.eigh(S) end, 3)) end
    if n <= 2048 or (n <= 4096 and not quick) then add(("svd-%s-%d"):format(dt, n), time(function() ck.svd(A) end, 3)) end
  end
  for _, bn in ipairs(section("batched") and {{10000, 8}, {10000, 16}, {10000, 32}, {1000, 64}} or {}) do
    local A, b = randA(bn[2], dt, bn[1]), ck.randn(bn[1], bn[2], 1, {dtype = dt, device = "cuda"})
    local S = ck.add(ck.matmul(A, A:transpose(2, 3)), ck.mul(ck.eye(bn[2], {dtype = dt, device = "cuda"}), bn[2]))
    local shape = ("%dx%dx%d"):format(bn[1], bn[2], bn[2])
    add(("solve-%s-%s"):format(dt, shape), time(function() ck.solve(A, b) end, 10))
    add(("inv-%s-%s"):format(dt, shape), time(function() ck.inv(A) end, 10))
    add(("cholesky-%s-%s"):format(dt, shape), time(function() ck.cholesky(S) end, 10))
  end
end
-- iterative refinement at 8192 (4096 with --quick), f64
if section("refine") then
  local n = quick and 4096 or 8192
  local A, b = randA(n, "f64"), ck.randn(n, 1, {dtype = "f64", device = "cuda"})
  local function berr(x) return ck.norm(ck.sub(ck.matmul(A, x), b)):item() / (ck.norm(A):item() * ck.norm(x):item()) end
  local base = time(function() ck.solve(A, b) end, 3)
  local be = berr(ck.solve(A, b))
  add(("solve-f64-%d-plain"):format(n), base, {backward_error = be})
  for _, p in ipairs {"f16", "bf16", "tf32"} do
    local r = time(function() ck.solve(A, b, {refine = p}) end, 3)
    local x, iters = ck.solve(A, b, {refine = p})
    add(("solve-f64-%d-refine-%s"):format(n, p), r, {speedup = base.ms / r.ms, backward_error = berr(x), iters = iters,
      backward_error_f64 = be})
  end
end
local p2 = bench.results_path("linalg", meta)
bench.write_json(p2, {meta = meta, torch = torch and {device = torch.device, version = torch.torch} or nil, rows = rows})
print("wrote " .. p2)
