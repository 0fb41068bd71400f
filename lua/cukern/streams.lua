--- cukern.streams: streams and events, pinned memory, asynchronous copies and NVTX ranges (issue 36).
--   ck.stream([device])             a new stream of a device (default: the default device); s:sync(), s:wait(e),
--                                   s:device(), s:slot(), s:free() (also when collected)
--   ck.with_stream(s, fn, ...)      runs fn(...) with s current on its device (and that device the default one);
--                                   s first waits for the work issued so far on the stream current before (a fork:
--                                   arrays made before the block can be read in it); leaving does not wait (a result
--                                   made in the block is read elsewhere after an event, e:record(s) + s2:wait(e), or
--                                   s:sync(); CUKERN_CHECK_STREAMS=1 reports a read without one)
--   ck.with_stream(s)               the same as a guard: `local _ <close> = ck.with_stream(s)`
--   ck.event([device])              e:record([s]), e:sync(), e:elapsed(e2) (ms), e:device(), e:free()
--   a:pin()                         a pinned (page-locked) host copy of a host array (a itself when it is one)
--   a:is_pinned()
--   a:to(d [, dtype], {async = true}) from pinned memory: does not wait (ordered on the current stream); from
--                                   pageable memory it waits, and ck.last_ran() says so
--   ck.nvtx.range(name, fn, ...), ck.nvtx.push(name), ck.nvtx.pop()
-- On the host backend streams and events exist and run in program order, so the same script runs everywhere.
local core = require "cukern.core"
local errors, args = require "cukern.errors", require "cukern.args"
local raise, call, where_of = errors.raise, errors.call, errors.where_of
local show, check_live = args.show, args.check_live

local S = {}
local type, select, pairs, pcall, error, getmetatable, setmetatable = type, select, pairs, pcall, error, getmetatable, setmetatable
local fmt, pack, unpack = string.format, table.pack, table.unpack

--- fn(...), then leave(), also when fn raises; fn's results (or its error, raised again).
local function around(leave, fn, ...)
  local res = pack(pcall(fn, ...))
  leave()
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, res.n)
end

function S.install(ck)
  local M = core.methods
  local probe = core.stream("host")
  local stream_mt, event_mt = getmetatable(probe), getmetatable(core.event("host"))
  probe:free()
  -- the methods of streams (s:sync, s:wait, ...) and events (e:record, e:elapsed, ...): errors name them and point at
  -- the caller's line
  for prefix, mt in pairs {["s:"] = stream_mt, ["e:"] = event_mt} do
    for k, f in pairs(mt.__index) do
      local where = where_of(prefix .. k)
      mt.__index[k] = function(...) return call(where, f, ...) end
    end
  end

  -- ck.stream([d]) and ck.event([d]): one of d (default: the default device)
  for name, make in pairs {stream = core.stream, event = core.event} do
    local where = where_of("ck." .. name)
    ck[name] = function(...)
      local n, d = select("#", ...), ...
      if n > 1 then raise(fmt("%s: takes at most a device, got %d arguments", where, n)) end
      if d ~= nil and type(d) ~= "string" then raise(fmt("%s: the device must be a string (\"cuda:1\", \"host\"), got %s", where, show(d))) end
      return call(where, make, d)
    end
  end

  do
    local where = where_of("ck.with_stream")
    local GUARD_MT = {__name = "cukern.stream_guard", __close = function(g)
      if g.done then return end
      g.done = true
      core.stream_restore(g.dev, g.prev) -- (the stream current before: its slot, the device's own if it went)
      core.default_device(g.prev_dev)
    end}
    function ck.with_stream(s, fn, ...)
      if getmetatable(s) ~= stream_mt then raise(fmt("%s: argument 1 must be a stream (ck.stream()), got %s", where, show(s))) end
      if fn ~= nil and type(fn) ~= "function" then raise(fmt("%s: argument 2 must be a function, got %s", where, show(fn))) end
      local dev = call(where, s.device, s) -- (a freed stream is an error here)
      local guard = setmetatable({dev = dev, prev_dev = core.default_device(), s = s}, GUARD_MT)
      guard.prev = call(where, core.stream_use, s, true)
      core.default_device(dev)
      if fn == nil then return guard end
      return around(function() GUARD_MT.__close(guard) end, fn, ...)
    end
  end

  do
    local function method(name, f)
      local where = where_of("a:" .. name)
      M[name] = function(a, ...)
        check_live(where, a, "the array")
        if select("#", ...) > 0 then raise(fmt("%s: takes no arguments, got %d", where, select("#", ...))) end
        return call(where, f, a)
      end
    end
    method("pin", core.pin)
    method("is_pinned", core.is_pinned)
  end

  do
    local where = where_of("ck.nvtx.range")
    local pw = where_of("ck.nvtx.push")
    ck.nvtx = {
      push = function(name)
        if type(name) ~= "string" then raise(fmt("%s: the range's name must be a string, got %s", pw, show(name))) end
        core.nvtx_push(name)
      end,
      pop = function(...) -- the depth left (negative: none was open, or no tool counts them)
        if select("#", ...) > 0 then raise(fmt("%s: takes no arguments, got %d", where_of("ck.nvtx.pop"), select("#", ...))) end
        return core.nvtx_pop()
      end,
      range = function(name, fn, ...)
        if type(name) ~= "string" then raise(fmt("%s: the range's name must be a string, got %s", where, show(name))) end
        if type(fn) ~= "function" then raise(fmt("%s: argument 2 must be a function, got %s", where, show(fn))) end
        core.nvtx_push(name)
        return around(core.nvtx_pop, fn, ...)
      end,
    }
  end
end

return S
