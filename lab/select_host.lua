-- Issue 32: how much of the select bench's time per call (examples/select_bench.lua, CUDA events around the call as a
-- script makes it) is the host's. Per case of that bench (the same shapes): the host clock around one call with no
-- synchronisation, after a sync (issue: until the launch is queued, with the device idle; for the compactions this
-- includes their count's read-back), beside the bench's own measure (CUDA events around each call, the stop event
-- waited for), medians of 30 after warm-ups, in microseconds: when issue is a good part of events, the host is. cat of 64 and stack of 16 sat at 84-90% of
-- a memcpy of their bytes while 1.03-1.09x PyTorch's (round 3 session 13, 2x H200): this says whether the host is the
-- gap.
--   lua5.4 lab/select_host.lua
dofile("examples/paths.lua")
local ck = require "cukern"
local clock = ck.core.clock
local function med(f)
  for _ = 1, 5 do local r = f(); if r then r:free() end end
  ck.sync()
  local t = {}
  for k = 1, 30 do
    ck.sync()
    local t0 = clock()
    local r = f()
    t[k] = (clock() - t0) * 1e6
    ck.sync()
    if r then r:free() end
  end
  table.sort(t)
  return (t[15] + t[16]) / 2
end
local function events(f) -- the select bench's timing: CUDA events around each call
  local tm = ck.core.timer()
  for _ = 1, 3 do local r = f(); if r then r:free() end end
  ck.sync()
  local ms = {}
  for k = 1, 30 do
    tm:start()
    local r = f()
    ms[k] = tm:stop() * 1e3
    if r then r:free() end
  end
  table.sort(ms)
  return (ms[15] + ms[16]) / 2
end
print("cukern on " .. ck.device().name .. " (us: host issue time / events around each call)")
ck.seed(32)
local R, C = 8192, 8192
for _, k in ipairs {2, 8, 64} do
  local l2, l1 = {}, {}
  for i = 1, k do l2[i] = ck.rand(R, C // k, {device = "cuda"}); l1[i] = ck.rand(R // k, C, {device = "cuda"}) end
  for _, c in ipairs {{"cat" .. k .. "_dim2", function() return ck.cat(l2, 2) end},
                      {"cat" .. k .. "_dim1", function() return ck.cat(l1, 1) end}} do
    print(("%-20s issue %8.1f   events %8.1f"):format(c[1], med(c[2]), events(c[2])))
  end
end
local l = {}
for i = 1, 16 do l[i] = ck.rand(R // 16, C, {device = "cuda"}) end
print(("%-20s issue %8.1f   events %8.1f"):format("stack16", med(function() return ck.stack(l, 1) end),
  events(function() return ck.stack(l, 1) end)))
local N = 1 << 27
local x, y, m = ck.rand(N, {device = "cuda"}), ck.rand(N, {device = "cuda"}), ck.rand(N, {device = "cuda"}):lt(0.5)
print(("%-20s issue %8.1f   events %8.1f"):format("where", med(function() return ck.where(m, x, y) end),
  events(function() return ck.where(m, x, y) end)))
local A, ix = ck.rand(65536, 2048, {device = "cuda"}), ck.randint(1, 65536, {65536}, {dtype = "i64", device = "cuda"})
print(("%-20s issue %8.1f   events %8.1f"):format("index_select_rows", med(function() return ck.index_select(A, 1, ix) end),
  events(function() return ck.index_select(A, 1, ix) end)))
local ms = ck.rand(1 << 26, {device = "cuda"}):lt(0.01)
print(("%-20s issue %8.1f   events %8.1f"):format("nonzero_1d_sparse", med(function() return ck.nonzero(ms) end),
  events(function() return ck.nonzero(ms) end)))
