--- Child of spec/streams_spec.lua (issue 36): stream ordering, the cross-stream hazard check, the allocator across
-- streams, pinned memory and asynchronous copies, on host:0 and (where there is a GPU) cuda:0. It runs with
-- CUKERN_CHECK_STREAMS=1, so a read of an array written on another stream with no event between is an error.
-- One line per check (spec/child_harness.lua).
--   CUKERN_CHECK_STREAMS=1 lua5.4 spec/streams_child.lua [seed]
local T = require "spec.child_harness"
local ck = require "cukern"

local SEED = tonumber(arg[1]) or os.time()
ck.seed(SEED)
local check, eq, ok, raises = T.check, T.eq, T.ok, T.raises

local DEVS = {"host"}
if ck.has_cuda() then DEVS[2] = "cuda" end

local function close(a, b, what)
  local x, y = a:to("host"):flat(), b:to("host"):flat()
  eq(#x, #y, what .. ": sizes")
  for i = 1, #x do
    if math.abs(x[i] - y[i]) > 1e-5 * (1 + math.abs(y[i])) then error(("%s: element %d is %g, expected %g"):format(what, i, x[i], y[i]), 2) end
  end
end

check("CUKERN_CHECK_STREAMS=1 is set (seed " .. SEED .. ")", function() eq(os.getenv("CUKERN_CHECK_STREAMS"), "1") end)

for _, dev in ipairs(DEVS) do
  T.prefix = dev .. ": "
  -- big enough on a GPU that a consumer racing its producer would read unfinished values (CUKERN_STREAMS_N: smaller
  -- under compute-sanitizer)
  local N = dev == "cuda" and (tonumber(os.getenv("CUKERN_STREAMS_N")) or 1 << 22) or 1000
  local x = ck.rand(N, {device = dev})
  local ref = x:to("host") * 3 + 1 -- the oracle, on the host

  check("a producer on one stream, a consumer on another after an event: the consumer sees the values", function()
    local s1, s2, e = ck.stream(dev), ck.stream(dev), ck.event(dev)
    local y = ck.with_stream(s1, function() local r = x * 3; for _ = 1, 3 do r = r * 1 end; e:record(s1); return r end)
    s2:wait(e)
    local z = ck.with_stream(s2, function() return y + 1 end)
    e:record(s2); e:sync()
    close(z, ref, "z")
  end)

  check("a consumer with no event after the producer on another stream is reported (stream hazard)", function()
    local s1, s2 = ck.stream(dev), ck.stream(dev)
    local y = ck.with_stream(s1, function() return x * 3 end)
    raises(function() ck.with_stream(s2, function() return y + 1 end) end, {"stream hazard", "written on stream " .. s1:slot(),
      "used on stream " .. s2:slot(), "streams_child.lua"})
    raises(function() return y + 1 end, {"stream hazard", "used on stream 0"}) -- (the device's own stream)
    s1:sync() -- synchronising the writer orders everything issued after it
    close(ck.with_stream(s2, function() return y + 1 end), ref, "after s1:sync()")
  end)

  check("ck.map's inputs are checked too, and its result is written on its stream", function()
    local s1, s2 = ck.stream(dev), ck.stream(dev)
    local y = ck.with_stream(s1, function() return ck.map("x * 3", {x = x}) end)
    raises(function() ck.with_stream(s2, function() return ck.map("y + 1", {y = y}) end) end, {"stream hazard", "ck.map"})
    s1:sync()
    close(ck.with_stream(s2, function() return ck.map("y + 1", {y = y}) end), ref, "map after s1:sync()")
  end)

  check("entering ck.with_stream orders the block after the work issued before it (a fork)", function()
    local s = ck.stream(dev)
    local w = x * 3
    close(ck.with_stream(s, function() return w + 1 end), ref, "w + 1")
  end)

  check("reading a result synchronises the stream that wrote it (item, totable, to host)", function()
    local s = ck.stream(dev)
    local y = ck.with_stream(s, function() return x * 3 + 1 end)
    close(y:to("host"), ref, "to host") -- on the main stream, no event: the read waits for s itself
    local t = y:flat()
    eq(#t, N, "flat")
    ok(math.abs(y:narrow(1, 1, 1):item() - ref:narrow(1, 1, 1):item()) < 1e-5, "item")
  end)

  check("the guard form restores the stream and the default device, also when the block raises", function()
    local s = ck.stream(dev)
    local before = ck.default_device()
    do
      local _ <close> = ck.with_stream(s)
      eq(ck.core.stream_current(dev), s:slot(), "current stream inside")
    end
    eq(ck.core.stream_current(dev), 0, "current stream after")
    eq(ck.default_device(), before, "default device after")
    ok(not pcall(ck.with_stream, s, function() error("inside") end))
    eq(ck.core.stream_current(dev), 0, "current stream after an error")
  end)

  check("events: record, sync, elapsed >= 0, and errors for unrecorded events", function()
    local a, b = ck.event(dev), ck.event(dev)
    raises(function() return a:elapsed(b) end, "recorded")
    a:record(); local _ = x * 2; b:record(); b:sync()
    ok(a:elapsed(b) >= 0, "elapsed")
  end)

  check("the allocator across streams: a block read on s2 and freed is not overwritten by s1's next array", function()
    local s1, s2, e = ck.stream(dev), ck.stream(dev), ck.event(dev)
    local busy = ck.rand(dev == "cuda" and 4 * N or 10, {device = dev})
    for round = 1, 4 do
      local a = ck.with_stream(s1, function() local r = x * 3; e:record(s1); return r end) -- home stream s1
      s2:wait(e)
      local z = ck.with_stream(s2, function() -- s2 reads a late: it is busy first (on a GPU, ~1 ms)
        for _ = 1, 10 do busy:mul_(1) end
        local r = a + 1
        for _ = 1, 8 do r = r * 1 end
        return r
      end)
      a = nil
      collectgarbage(); collectgarbage()
      -- the same size on s1: a's block, which s1 may reuse only after s2's read (recorded uses join s2 into s1)
      ck.with_stream(s1, function() local b = ck.empty(N, {device = dev}); b:fill(-7); return b end)
      s2:sync()
      close(z, ref, "round " .. round)
    end
  end)

  check("pinned memory: empty/zeros with pinned = true, a:pin(), ck.memory().pinned", function()
    local p = ck.zeros(4, 5, {device = "host", pinned = true})
    eq(p:is_pinned(), ck.has_cuda(), "pinned (only with a GPU)")
    local q = ck.rand(3, 7, {device = "host"}):t():pin()
    eq(q:is_pinned(), ck.has_cuda(), "pin")
    ok(q:is_contiguous(), "contiguous")
    if ck.has_cuda() then ok(ck.memory().pinned >= 80 + 84, "ck.memory().pinned counts them") end
    if ck.has_cuda() then raises(function() return ck.empty(3, {device = "cuda", pinned = true}) end, "pinned memory is host memory") end
  end)

  check("asynchronous copies: from pinned memory the copy keeps the source alive when Lua frees it", function()
    for round = 1, 3 do
      local p = ck.rand(N, {device = "host"}):pin()
      local want = p:clone()
      local d = p:to(dev, {async = true})
      p:free(); p = nil
      collectgarbage(); collectgarbage()
      local junk = ck.rand(N, {device = "host"}):pin() -- may reuse the freed host memory if it was released early
      junk:fill(-1)
      close(d, want, "round " .. round)
    end
    if dev == "cuda" then
      ck.rand(8, {device = "host"}):pin():to("cuda", {async = true})
      eq(ck.last_ran().name, "async", "from pinned")
      ck.rand(8, {device = "host"}):to("cuda", {async = true})
      eq(ck.last_ran().name, "sync", "from pageable")
      ok(ck.last_ran().note:find("pageable"), "the note says pageable: " .. ck.last_ran().note)
      local h = ck.zeros(N, {device = "host", pinned = true})
      local s = ck.stream("cuda")
      ck.with_stream(s, function() h:copy_(x * 3 + 1) end) -- device -> pinned host, on s, asynchronous
      close(h, ref, "host read of a pinned array an asynchronous copy wrote") -- waits for s
    end
  end)

  if dev == "cuda" then
    check("graph capture on a user stream, replayed", function()
      local s = ck.stream("cuda")
      local a = ck.zeros(1000, {device = "cuda"})
      local g = ck.with_stream(s, function() return ck.graph(function() a:add_(1) end) end)
      for _ = 1, 3 do g:replay() end
      ck.sync()
      ok(math.abs(a:sum():item() - 3000) < 1e-3, "three replays")
    end)
    check("the small-op batch is per stream: queued ops run on the stream they were issued on", function()
      local s1, s2, e = ck.stream("cuda"), ck.stream("cuda"), ck.event("cuda")
      local v = ck.with_stream(s1, function() local r = ck.zeros(16, {device = "cuda"}); for _ = 1, 20 do r:add_(1) end; e:record(s1); return r end)
      s2:wait(e)
      local w = ck.with_stream(s2, function() return v * 2 end)
      s2:sync()
      eq(w:sum():item(), 640, "sum")
    end)
  end
end
T.prefix = ""
T.finish()
