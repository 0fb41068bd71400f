-- lab/scan_delay.lua — issue 33: the single-pass scans' look-back sleeps (kernels/scan/single_pass.cuh's Delay) as
-- the library runs them, one setting a process (the knobs are read from the environment at each launch):
--   CUKERN_SCAN_DELAY=2200 CUKERN_SCAN_POLL=688 lua5.4 lab/scan_delay.lua            (rung 6, lookback, 1-D)
--   CUKERN_SCAN_COLS_DELAY=.. CUKERN_SCAN_COLS_POLL=.. lua5.4 lab/scan_delay.lua     (rung 10 along dim 1)
-- Prints one line per case: the rung's median ms (C-timed with CUDA events, L2 flushed: bench.run over a time_op
-- spec, as examples/scan_ladder.lua times it), % of a memcpy of the same bytes in the same process, and the
-- settings. The result is checked against rung 0 (CUB) first (integers -3..3: every f32 partial sum is exact).
local ck = require "cukern"
local bench = require "cukern.bench"
local env = function(k) return os.getenv(k) or "default" end
local function memcpy_ms(n)
  local a, b = ck.empty({n}, {device = "cuda"}), ck.empty({n}, {device = "cuda"})
  local r = bench.run{spec = {op = "memcpy", dst = b, src = a}, warmup = 5, reps = 20}
  a:free(); b:free()
  return r.ms
end
local cases = {
  {"cumsum 2^28 (lookback)", {2^28}, 1, "lookback"},
  {"cumsum 16384^2 dim 1 (cols_lookback)", {16384, 16384}, 1, "cols_lookback"},
}
for _, c in ipairs(cases) do
  local shape = {}
  for i, v in ipairs(c[2]) do shape[i] = math.tointeger(v) end
  local x = ck.randint(-3, 3, shape, {device = "cuda", dtype = "f32"})
  local n = x:numel()
  local out = ck.empty(shape, {device = "cuda"})
  local ref = ck.cumsum(x, c[3], {variant = "cub"})
  if c[4] == "cols_lookback" then ref = ck.cumsum(x, c[3], {variant = "cols"}) end
  ck.cumsum(x, c[3], {variant = c[4], out = out})
  local ok = ck.equal(out, ref)
  local r = bench.run{spec = {op = "scan", fn = "cumsum", x = x, dim = c[3], out = out, variant = c[4]}, warmup = 5,
                      reps = 20}
  local m = memcpy_ms(n)
  print(("%-40s %8.4f ms  %5.1f%% of memcpy (%.4f ms)  exact %s   DELAY %s POLL %s COLS_DELAY %s COLS_POLL %s"):format(
    c[1], r.ms, 100 * m / r.ms, m, tostring(ok), env("CUKERN_SCAN_DELAY"), env("CUKERN_SCAN_POLL"),
    env("CUKERN_SCAN_COLS_DELAY"), env("CUKERN_SCAN_COLS_POLL")))
  x:free(); out:free(); ref:free()
end
