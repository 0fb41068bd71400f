-- Matmul rung 17 (dmma) on edge shapes under compute-sanitizer (memcheck, initcheck): partial tiles in m, n and k,
-- rows of odd length (8-byte B copies), a misaligned view, a batch, beta != 0, each against the host product.
--   CUKERN_SYNC=1 compute-sanitizer --tool memcheck lua5.4 lab/dmma_sanitize.lua
dofile("examples/paths.lua")
local ck = require "cukern"
local bad = 0
local function case(label, a, b, beta)
  local c0 = ck.rand(#a:shape() == 3 and {a:shape()[1], a:shape()[2], b:shape()[3]} or {a:shape()[1], b:shape()[2]},
    {dtype = "f64", device = "cuda"})
  local out = c0:clone()
  ck.gemm(out, a, b, 1.5, beta, {variant = "dmma"})
  local ran = ck.last_ran().name
  local want = c0:host():clone()
  ck.gemm(want, a:host(), b:host(), 1.5, beta)
  local d = out:host() - want
  local err = math.sqrt(ck.sum(ck.mul(d, d)):item() / ck.sum(ck.mul(want, want)):item())
  local ok = ran == "dmma" and err < 1e-13
  if not ok then bad = bad + 1 end
  print(("%s %-36s ran %-8s rel err %.2e"):format(ok and "ok " or "BAD", label, ran, err))
end
local function R(...) return ck.randn({...}, {dtype = "f64", device = "cuda"}) end
case("33x65x17", R(33, 17), R(17, 65), 0)
case("129x130x131 beta 0.5", R(129, 131), R(131, 130), 0.5)
case("odd rows 37x41x19", R(37, 19), R(19, 41), -1)
case("misaligned view 70x61x45", R(71, 47):narrow(1, 2, 70):narrow(2, 2, 45), R(46, 63):narrow(1, 2, 45):narrow(2, 2, 61), 0)
case("batch 3x45x77x23", R(3, 45, 23), R(3, 23, 77), 0.25)
case("k = 1: 200x150x1", R(200, 1), R(1, 150), 0)
case("260x300x70 (128 x 128 tiles)", R(260, 70), R(70, 300), 1)
if bad > 0 then error(bad .. " dmma cases failed") end
