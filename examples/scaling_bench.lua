-- Scaling on several GPUs (issue 31): one GPU against every CUDA device of the machine, for three data-parallel
-- workloads written with sharded arrays (lua/cukern/shard.lua), with PyTorch's split of the same work beside each.
--
--   lua5.4 examples/scaling_bench.lua [--torch torch.json] [--out file.json] [--reps R] [--small]
--
--   bf16 batched matmul 16x4096^3   A sharded along the batch, B replicated: each GPU multiplies its 16/N matrices
--   f32 sum 8 GiB                   2^31 elements sharded; local sums, then NCCL reduces the partial sums to GPU 0
--   f32 elementwise chain 2^28      sin(x) * x + 1 on each shard
-- Inputs are placed first (not timed); each rep runs between ck.sync("all") calls on the host clock (3 warm-ups,
-- median of R). speedup = t(1 GPU) / t(N GPUs). --torch: bench/torch_multigpu.py's JSON from the same session; its
-- speedups go beside ours (torch_speedup). Every sharded result is checked against the one-GPU result first.
-- Rows {case, gpus, speedup, torch_speedup, t1_ms, tn_ms} go to --out (default <results>/scaling-<device>.json),
-- which examples/allreduce_ladder.lua --scaling merges into allreduce-<device>.json. --small: tiny sizes (host
-- devices, CUKERN_HOST_DEVICES=N: the flow only, never committed).
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")

local ck = require "cukern"
local bench = require "cukern.bench"
local json = require "cukern.json"

local opt = {reps = 10}
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--torch" then opt.torch = arg[i + 1]; i = i + 1
  elseif a == "--out" then opt.out = arg[i + 1]; i = i + 1
  elseif a == "--reps" then opt.reps = math.tointeger(tonumber(arg[i + 1])); i = i + 1
  elseif a == "--small" then opt.small = true
  else error("scaling_bench: unknown argument " .. a) end
  i = i + 1
end

local mg = dofile((arg[0]:match("^(.*)/") or ".") .. "/multi_gpu.lua")
local devs, on_gpu = mg.devices(opt.small)
if #devs < 2 then
  print("scaling_bench: needs 2 devices (CUDA, or CUKERN_HOST_DEVICES=2 with --small)")
  os.exit(0)
end
local n = #devs
local function time(f) return mg.time(f, opt.reps) end

local torch = {}
if opt.torch then
  local f = io.open(opt.torch)
  if f then
    local ok, t = pcall(json.decode, f:read("a"))
    f:close()
    if ok and type(t) == "table" and t.scaling then
      for _, r in ipairs(t.scaling) do torch[r.case] = r end
    end
  end
end

local rows = {}
local function row(case, t1, tn, check)
  local tr = torch[case]
  rows[#rows + 1] = {case = case, gpus = n, t1_ms = t1, tn_ms = tn, speedup = t1 / tn, check = check,
                     torch_speedup = tr and tr.speedup or nil, torch_t1_ms = tr and tr.t1_ms, torch_tn_ms = tr and tr.tn_ms}
  print(("  %-34s 1 GPU %9.3f ms   %d GPUs %9.3f ms   %.2fx%s"):format(case, t1, n, tn, t1 / tn,
    tr and ("   (PyTorch %.2fx)"):format(tr.speedup) or ""))
end

print(("scaling: %d devices (%s)"):format(n, table.concat(devs, ", ")))
local d0 = devs[1]

-- bf16 batched matmul 16 x 4096^3 (the case name contains "bf16", as the results' readers expect)
do
  local B_, M = 16, on_gpu and 4096 or 64
  ck.seed(1)
  local A = ck.randn(B_, M, M, {device = d0, dtype = "bf16"})
  local B = ck.randn(B_, M, M, {device = d0, dtype = "bf16"})
  local C = ck.matmul(A, B)
  local sA, rB = ck.shard(A, {devices = devs, dim = 1}), ck.replicate(B, devs)
  local sC = sA:matmul(rB)
  local ok = ck.allclose(sC:gather(d0):to("f32"), C:to("f32"), 2e-2, 1e-1)
  -- (results freed at once, as a Python peer's refcounting does: the caching allocators then reuse their blocks)
  local t1 = time(function() ck.matmul(A, B):free() end)
  local tn = time(function() sA:matmul(rB):free() end)
  row(("bf16 batched matmul 16x%d^3"):format(M), t1, tn, ok)
  A:free(); B:free(); C:free(); sA:free(); rB:free(); sC:free()
end

-- f32 sum of 8 GiB
do
  local count = on_gpu and 2 ^ 31 or 2 ^ 20
  count = math.tointeger(count)
  ck.seed(2)
  local x = ck.rand(count, {device = d0})
  local s1 = ck.sum(x):item()
  local sx = ck.shard(x, {devices = devs, dim = 1})
  local sn = ck.sum(sx):item()
  local ok = math.abs(s1 - sn) <= 1e-5 * math.abs(s1)
  local t1 = time(function() ck.sum(x) end)
  local tn = time(function() ck.sum(sx) end)
  row(on_gpu and "f32 sum 8 GiB" or "f32 sum 4 MiB", t1, tn, ok)
  x:free(); sx:free()
end

-- f32 elementwise chain sin(x) * x + 1
do
  local count = math.tointeger(on_gpu and 2 ^ 28 or 2 ^ 18)
  ck.seed(3)
  local x = ck.randn(count, {device = d0})
  local function chain(p) -- one result buffer, updated in place (no temporaries left to the collector)
    local y = ck.sin(p)
    y:mul_(p)
    return y:add_(1)
  end
  local y1 = chain(x)
  local sx = ck.shard(x, {devices = devs, dim = 1})
  local ok = ck.allclose(sx:map(chain):gather(d0), y1)
  local t1 = time(function() chain(x):free() end)
  local tn = time(function() sx:map(chain):free() end)
  row(on_gpu and "f32 elementwise chain 2^28" or "f32 elementwise chain 2^18", t1, tn, ok)
  x:free(); sx:free(); y1:free()
end

local meta = bench.meta {device = on_gpu and "cuda" or "host"}
meta.gpus = n
meta.devices = devs
local path = opt.out or bench.results_path("scaling", meta)
bench.write_json(path, {meta = meta, rows = rows})
local bad = 0
for _, r in ipairs(rows) do if not r.check then bad = bad + 1; print("  NOT OK: " .. r.case .. " differs from one GPU") end end
print(("scaling -> %s"):format(path))
if bad > 0 then os.exit(1) end
