-- What the several-GPU examples share (allreduce_ladder.lua, scaling_bench.lua): the devices to use, and timing
-- work that spans devices on the host clock between ck.sync("all") calls (a CUDA event pair on one device cannot
-- see the others finish).
local ck = require "cukern"
local M = {}

--- The CUDA devices when there are at least two (unless host_only), else the host devices (CUKERN_HOST_DEVICES);
-- returns the list of device ids and whether it is the GPUs.
function M.devices(host_only)
  local cuda, host = {}, {}
  for _, d in ipairs(ck.devices()) do
    if d.backend == "cuda" then cuda[#cuda + 1] = d.id else host[#host + 1] = d.id end
  end
  local on_gpu = #cuda >= 2 and not host_only
  return on_gpu and cuda or host, on_gpu
end

function M.median(t)
  table.sort(t)
  local m = #t // 2
  return #t % 2 == 1 and t[m + 1] or (t[m] + t[m + 1]) / 2
end

--- The median of `reps` runs of f, in ms, each between ck.sync("all") calls. A full collection first: arrays an
-- earlier case left to the collector (a check's temporaries) are freed before the clock starts, not by a collection
-- step inside a timed run. Then the warm-up: at least `warmup` runs (3) and at least 100 ms of them, each synced,
-- so that every device in use has left its idle clocks (three runs of a sub-millisecond product on GPUs that sat
-- idle through the one-GPU timing did not: round 3 session 12's 4-GPU run timed the split 11% slower in the
-- scaling table than in lab/split_probe.lua, whose devices had just run products). bench/torch_multigpu.py warms
-- PyTorch's side the same way.
function M.time(f, reps, warmup)
  collectgarbage("collect")
  local w0, n = ck.core.clock(), 0
  repeat
    f()
    ck.sync("all")
    n = n + 1
  until n >= (warmup or 3) and ck.core.clock() - w0 >= 0.1
  local times = {}
  for r = 1, reps do
    ck.sync("all")
    local t0 = ck.core.clock()
    f()
    ck.sync("all")
    times[r] = (ck.core.clock() - t0) * 1e3
  end
  return M.median(times)
end

return M
