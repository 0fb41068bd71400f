-- Issue 34's "host time per call below theirs at small sizes", our side (lab/linalg_host.py is PyTorch's, same cases,
-- same method): per case, the host clock around one call with no synchronisation (issue: what the caller waits before
-- it can go on; ck.solve's default check = true reads info back, so it is timed both ways) and around call + sync
-- (wall), medians of 50 after 5 warm-ups, in microseconds.
--   lua5.4 lab/linalg_host.lua
dofile("examples/paths.lua")
local ck = require "cukern"
local clock = ck.core.clock
local function med(f, sync)
  for _ = 1, 5 do f() end
  ck.sync()
  local t = {}
  for r = 1, 50 do
    ck.sync()
    local t0 = clock()
    f()
    if sync then ck.sync() end
    t[r] = (clock() - t0) * 1e6
  end
  table.sort(t)
  return (t[25] + t[26]) / 2
end
print("cukern on " .. ck.device().name)
ck.seed(34)
for _, dt in ipairs {"f32", "f64"} do
  for _, c in ipairs {{10000, 8}, {1000, 64}, {1, 64}, {1, 512}, {2, 512}, {100, 128}} do
    local b, n = c[1], c[2]
    local I = ck.eye(n, {dtype = dt, device = "cuda"})
    local A = ck.add(ck.randn(b, n, n, {dtype = dt, device = "cuda"}), ck.mul(I, n))
    local B = ck.randn(b, n, 1, {dtype = dt, device = "cuda"})
    local S = ck.add(ck.matmul(A, A:transpose(2, 3)), ck.mul(I, n))
    for _, case in ipairs {
      {"solve", function() ck.solve(A, B):free() end},
      {"solve check=false", function() ck.solve(A, B, {check = false}):free() end},
      {"inv", function() ck.inv(A):free() end},
      {"cholesky", function() ck.cholesky(S):free() end},
    } do
      print(("ck    %-17s %s %dx%dx%-5d issue %9.1f us   wall %9.1f us"):format(case[1], dt, b, n, n,
        med(case[2], false), med(case[2], true)))
    end
  end
end
