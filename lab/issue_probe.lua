-- Host time to issue one op on one GPU, and what the caching allocator did meanwhile (round 3 session 9: on a 4-GPU
-- host ck.sum of 2^31 f32 took 94-111 us to issue at 42e4ccf against 20-26 us at 01bb637, both running CUB; the
-- sharded sum issues four of them one after another). Per case: 3 warm-ups, then 15 calls each between syncs; the
-- median issue time (host clock around the call, no sync inside) and the allocator's cudaMalloc calls and cache hits
-- per call (ck.memory).
--   lua5.4 lab/issue_probe.lua
-- With PROBE_WIN=file, each timed call's window (label, start and end on CLOCK_MONOTONIC, as lab/calltime_inject.c
-- logs the CUDA calls) goes to that file for lab/calltime_report.py.
dofile("examples/paths.lua")
local ck = require "cukern"
local clock = ck.core.clock
local dev = "cuda:0"
local win = os.getenv("PROBE_WIN") and assert(io.open(os.getenv("PROBE_WIN"), "w"))
local function median(t) table.sort(t); return t[(#t + 1) // 2] end
local function case(label, f)
  for _ = 1, 3 do f() end
  ck.sync("all")
  local m0 = ck.memory(dev)
  local t = {}
  for r = 1, 15 do
    ck.sync("all")
    local t0 = clock()
    f()
    local t1 = clock()
    t[r] = (t1 - t0) * 1e6
    if win then win:write(("%s\t%.9f\t%.9f\n"):format(label, t0, t1)) end
  end
  ck.sync("all")
  local m1 = ck.memory(dev)
  local lr = ck.last_ran()
  print(("%-44s issue %8.1f us (min %6.1f)   cudaMalloc/call %5.2f   cache hits/call %5.2f   ran %s"):format(label,
    median(t), math.min(table.unpack(t)), ((m1.cuda_mallocs or 0) - (m0.cuda_mallocs or 0)) / 15,
    ((m1.cache_hits or 0) - (m0.cache_hits or 0)) / 15, lr and lr.name or "?"))
end
local x31 = ck.rand(math.tointeger(2 ^ 31), {device = dev})
local x29 = ck.rand(math.tointeger(2 ^ 29), {device = dev})
local x10 = ck.rand(1024, {device = dev})
case("sum 2^31 f32", function() ck.sum(x31) end)
case("sum 2^29 f32", function() ck.sum(x29) end)
case("sum 2^10 f32", function() ck.sum(x10) end)
case("sum 2^29 f32, result freed", function() ck.sum(x29):free() end)
for _, v in ipairs {"cub", "single_pass", "shuffle_vec"} do
  case("sum 2^29 f32 variant " .. v, function() ck.sum(x29, {variant = v}) end)
end
case("x29 + 1, result freed", function() ck.add(x29, 1):free() end)
case("empty 256 MiB + free", function() ck.empty(8, 4096, 4096, {device = dev, dtype = "bf16"}):free() end)
local A = ck.randn(8, 4096, 4096, {device = dev, dtype = "bf16"})
local B = ck.randn(8, 4096, 4096, {device = dev, dtype = "bf16"})
local C = ck.matmul(A, B)
case("matmul bf16 8x4096^3, result freed", function() ck.matmul(A, B):free() end)
case("matmul bf16 8x4096^3 into out", function() ck.matmul(A, B, {out = C}) end)
local t = {}
for r = 1, 50 do local t0 = clock(); ck.sync("all"); t[r] = (clock() - t0) * 1e6 end
print(("ck.sync('all') on an idle device: median %.1f us"):format(median(t)))
print(("memory: %s"):format((function() local m = ck.memory(dev); return ("in_use %d cached %d cuda_mallocs %d cache_hits %d allocations %d"):format(m.in_use, m.cached, m.cuda_mallocs, m.cache_hits, m.allocations) end)()))
if win then win:close() end
