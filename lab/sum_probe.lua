-- Where the sharded 8 GiB sum of examples/scaling_bench.lua spends its time on several GPUs (round 3 session 9: this
-- tree's four-GPU row ran 35-110 us slower than 01bb637's on one host). Runs in either tree (APIs of 01bb637):
-- each part's ck.sum alone (host clock between syncs of its device, and its issue time), the four part sums issued
-- back to back, ck.nccl.reduce of the four scalars alone, and the whole ck.sum(sx). Medians of 15 after 3 warm-ups.
--   lua5.4 lab/sum_probe.lua            (a host with two or more GPUs)
local ck = require "cukern"
local mg = dofile("examples/multi_gpu.lua")
local devs = mg.devices()
local clock = ck.core.clock
local function median(t) table.sort(t); return t[(#t + 1) // 2] end
local function host(f, sync_all) -- {issue us, total us}
  for _ = 1, 3 do f(); ck.sync("all") end
  local iss, tot = {}, {}
  for r = 1, 15 do
    ck.sync("all")
    local t0 = clock()
    f()
    iss[r] = (clock() - t0) * 1e6
    ck.sync("all")
    tot[r] = (clock() - t0) * 1e6
  end
  return median(iss), median(tot)
end
local x = ck.rand(math.tointeger(2 ^ 31), {device = devs[1]})
local sx = ck.shard(x, {devices = devs, dim = 1})
local parts = rawget(sx, "parts")
local function row(label, f)
  local i, t = host(f)
  print(("%-40s issue %8.1f us   total %9.1f us"):format(label, i, t))
end
for i, p in ipairs(parts) do row(("sum of part %d (%s, 2^%d)"):format(i, devs[i], math.floor(math.log(p:numel(), 2) + 0.5)),
  function() ck.sum(p) end) end
row("the part sums back to back", function() for _, p in ipairs(parts) do ck.sum(p) end end)
local v = {}
for i, p in ipairs(parts) do v[i] = ck.sum(p) end
row("ck.nccl.reduce of the scalars", function() ck.nccl.reduce(v, "sum", 1) end)
row("part sums + reduce (by hand)", function()
  local w = {}
  for i, p in ipairs(parts) do w[i] = ck.sum(p) end
  ck.nccl.reduce(w, "sum", 1)
end)
row("ck.sum(sx)", function() ck.sum(sx) end)
row("ck.sum(x) on one GPU", function() ck.sum(x) end)
print("ran " .. tostring(ck.last_ran() and ck.last_ran().name))
