-- Host time around one op (issue 31/38): on the 4-GPU host of round 3 session 8 the one-GPU rows of
-- examples/scaling_bench.lua (host clock between ck.sync calls) came out 75-150 us slower than PyTorch's and
-- than the same rows at 01bb637, on both the bf16 product and the sum. This times each case two ways on one GPU:
-- the host clock between syncs (multi_gpu.lua's method) and CUDA events (cukern.bench), medians of 15 after 3
-- warm-ups; the difference is what the host adds around the device's time.
--   lua5.4 lab/host_overhead.lua
dofile("examples/paths.lua")
local ck, bench = require "cukern", require "cukern.bench"
local clock = ck.core.clock
local function median(t) table.sort(t); return t[(#t + 1) // 2] end
local function host_ms(f)
  for _ = 1, 3 do f() end
  local t = {}
  for r = 1, 15 do
    ck.sync("all")
    local t0 = clock()
    f()
    ck.sync("all")
    t[r] = (clock() - t0) * 1e3
  end
  return median(t)
end
local A = ck.randn(8, 4096, 4096, {device = "cuda", dtype = "bf16"})
local B = ck.randn(8, 4096, 4096, {device = "cuda", dtype = "bf16"})
local C = ck.matmul(A, B)
local x = ck.rand(math.tointeger(2 ^ 29), {device = "cuda"})
local cases = {
  {"nothing (two syncs)", function() end},
  {"matmul bf16 8x4096^3, result freed", function() ck.matmul(A, B):free() end},
  {"matmul bf16 8x4096^3 into out", function() ck.matmul(A, B, {out = C}) end},
  {"sum f32 2^29", function() ck.sum(x) end},
  {"sum f32 2^29, :item()", function() ck.sum(x):item() end},
  {"empty 256 MiB, freed", function() ck.empty(8, 4096, 4096, {device = "cuda", dtype = "bf16"}):free() end},
}
print(("host overhead on %s"):format(bench.meta{device = "cuda"}.device))
for _, c in ipairs(cases) do
  local h = host_ms(c[2])
  local e = bench.run{fn = c[2], device = "cuda", warmup = 3, reps = 15}.ms
  print(("  %-40s host clock %8.3f ms   CUDA events %8.3f ms   host adds %7.1f us"):format(c[1], h, e, (h - e) * 1e3))
end
local t = {}
for r = 1, 200 do local t0 = clock(); ck.sync("all"); t[r] = (clock() - t0) * 1e6 end
print(("  ck.sync('all') on an idle device: median %.1f us"):format(median(t)))
