-- LU ladder rung 4 (fused_panel) against cuSOLVER and rung 2 at one size, for a sweep of the panel grid's rows a
-- block and the panel's width (CUKERN_LU_PANEL_ROWS / _COLS, read once per process: lab/round9-*.sh run this once per
-- setting).
--   CUKERN_LU_PANEL_COLS=128 CUKERN_LU_PANEL_ROWS=64 lua5.4 lab/lu_probe.lua [n] [dtype ...]
-- Prints ms (CUDA events, bench.run: 2 warm-ups, median of 5) and % of cuSOLVER in the same process.
dofile("examples/paths.lua")
local ck = require "cukern"
local bench = require "cukern.bench"
local n = tonumber(arg[1]) or 8192
local dts = {table.unpack(arg, 2)}
if #dts == 0 then dts = {"f32", "f64"} end
for _, dt in ipairs(dts) do
  local A = ck.add(ck.randn(n, n, {dtype = dt, device = "cuda"}), ck.mul(ck.eye(n, {dtype = dt, device = "cuda"}), math.sqrt(n)))
  local ref
  for _, v in ipairs {"cusolver", "blocked", "fused_panel"} do
    local r = bench.run{fn = function() ck.lu(A, {packed = true, variant = v}) end, warmup = 2, reps = 5, flush = false}
    ref = ref or r.ms
    print(("cols=%s rows=%s %s n=%d %-12s %9.3f ms %6.1f%% of cuSOLVER"):format(os.getenv("CUKERN_LU_PANEL_COLS") or
      "128", os.getenv("CUKERN_LU_PANEL_ROWS") or "64", dt, n, v, r.ms, 100 * ref / r.ms))
  end
end
