-- lab/sum_lib.lua — the library path for whole-array f32 sums: ck.sum with variant cub / shuffle_vec /
-- single_pass (what the ladder and users run: dispatcher, workspace allocator, launch record), validated
-- against a host f64 sum, timed with bench.run (time_op in C: CUDA events, 5 warm-ups, 20 reps, L2 flushed
-- between reps). Run by lab/sum.sh after the standalone sweep; prints "LIB" lines.
--   lua5.4 lab/sum_lib.lua [p ...]      (sizes 2^p, default 24 26 28)
arg[0] = "examples/x.lua" -- examples/paths.lua finds this checkout's lua/ and cukern/core.so from it
dofile("examples/paths.lua")
local ck = require "cukern"
local bench = require "cukern.bench"

if bench.target({}) ~= "cuda" then
  print("LIB no GPU: nothing to time")
  return
end
local ps = {}
for i = 1, #arg do ps[#ps + 1] = tonumber(arg[i]) end
if #ps == 0 then ps = {24, 26, 28} end
local names = {"cub", "shuffle_vec", "single_pass"}
for _, p in ipairs(ps) do
  local n = math.tointeger(2 ^ p)
  ck.seed(4321 + p)
  local x = ck.rand({n}, {device = "cuda"}) + 0.5 -- [0.5, 1.5): non-zero, well conditioned
  local ref = ck.sum(x:host():to("f64")):to("f32")
  local r0 = ref:flat()[1]
  local cub
  for _, v in ipairs(names) do
    local out = ck.empty(ref:shape(), {device = "cuda"}):fill(0 / 0)
    ck.sum(x, nil, {variant = v, out = out})
    local ran = ck.last_ran().name
    local g = out:host():flat()[1]
    local ok = math.abs(g - r0) <= 1e-5 * math.abs(r0) and ran == v
    local line = ("LIB %-12s n=2^%d ran %-12s"):format(v, p, ran)
    if ok then
      local r = bench.run{spec = {op = "reduce", fn = "sum", x = x, out = out, variant = v}, warmup = 5, reps = 20,
                          bytes = 4 * n}
      if v == "cub" then cub = r.gbps end
      line = line .. (" %7.1f GB/s  %5.1f%% of cub  (median %.1f us)"):format(r.gbps, 100 * r.gbps / cub, r.ms * 1e3)
    else
      line = line .. (" FAILED: got %.9g want %.9g"):format(g, r0)
    end
    print(line)
    out:free()
  end
  x:free()
end
