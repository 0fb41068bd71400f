-- Where the time of a batched small solve goes (issue 34's 10^4 x 8x8 target): CUDA events around ck.solve with
-- check on (one read of info) and off (no read), and the host clock of issuing it without a sync; n = 8, 16, 32.
--   lua5.4 lab/solve_small_probe.lua
dofile("examples/paths.lua")
local ck, bench = require "cukern", require "cukern.bench"
local clock = ck.core.clock
local function median(t) table.sort(t); return t[(#t + 1) // 2] end
for _, dt in ipairs {"f32", "f64"} do
  for _, n in ipairs {8, 16, 32} do
    local A = ck.add(ck.randn(10000, n, n, {dtype = dt, device = "cuda"}), ck.mul(ck.eye(n, {dtype = dt, device = "cuda"}), n))
    local b = ck.randn(10000, n, 1, {dtype = dt, device = "cuda"})
    local on = bench.run{fn = function() ck.solve(A, b) end, warmup = 3, reps = 15, flush = false}.ms
    local off = bench.run{fn = function() ck.solve(A, b, {check = false}) end, warmup = 3, reps = 15, flush = false}.ms
    local t = {}
    for r = 1, 15 do
      ck.sync()
      local t0 = clock()
      ck.solve(A, b, {check = false})
      t[r] = (clock() - t0) * 1e6
    end
    ck.sync()
    print(("%s 10^4 x %2dx%-2d  check on %7.1f us   check off %7.1f us   host issue (check off) %7.1f us   ran %s"):format(
      dt, n, n, on * 1e3, off * 1e3, median(t), tostring(ck.last_ran() and ck.last_ran().name)))
  end
end
