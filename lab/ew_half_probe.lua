-- lab/ew_half_probe.lua — issue 32's tiled rung in f16 against bf16, for ncu: c = a + b:t() at 16384^2 in one dtype
-- (argument 1: f16 or bf16), three calls (ncu: --launch-skip 2 --launch-count 1 -k regex:ew_wide). In session 13 the
-- rung ran f16 at 66.7% of memcpy and bf16 at 91.9% in one run on an H200, while f16 with both operands contiguous
-- reached 93.8%: the conversions are not the whole story; ncu's warp states and instruction mix are to say what is.
--   ncu --clock-control none -k regex:ew_wide --launch-skip 2 --launch-count 1 lua5.4 lab/ew_half_probe.lua f16
dofile("examples/paths.lua")
local ck = require "cukern"
local dt = arg[1] or "f16"
local n = 16384
local a = ck.rand(n, n, {device = "cuda"}):to(dt)
local b = ck.rand(n, n, {device = "cuda"}):to(dt)
local c = ck.empty(n, n, {dtype = dt, device = "cuda"})
for _ = 1, 3 do ck.add(a, b:t(), {out = c}) end
ck.sync()
print(dt .. ": ran " .. ck.last_ran().name)
