--- Streams, events, pinned memory and asynchronous copies (issue 36). The ordering rules run in a child process with
-- CUKERN_CHECK_STREAMS=1 (spec/streams_child.lua: host:0 always, cuda:0 where there is a GPU). In this process, with
-- the check off: a missing event is the user's duty (documented in docs/api.md), and the script still runs.
local H = require "spec.helpers"
local ck = H.ck

local LUA = os.getenv("LUA") or "lua5.4"
local CHILD = H.child_checks(("env CUKERN_CHECK_STREAMS=1 %s spec/streams_child.lua %d"):format(LUA, H.seed), 300)

describe("streams (child process, CUKERN_CHECK_STREAMS=1, seed " .. H.seed .. ")", function()
  H.child_its(_ENV, CHILD, "spec/streams_child.lua")
end)

describe("streams without the check (this process)", function()
  it("a consumer with no event is not reported without CUKERN_CHECK_STREAMS (the user's duty)", function()
    if os.getenv("CUKERN_CHECK_STREAMS") then return pending("CUKERN_CHECK_STREAMS is set in this run") end
    local s1, s2 = ck.stream("host"), ck.stream("host")
    local x = H.rand({50}, "f32", "host")
    local y = ck.with_stream(s1, function() return x * 2 end)
    local z = ck.with_stream(s2, function() return y + 1 end) -- would race on a GPU; the host runs it in order
    H.assert_close(z, x:to("host") * 2 + 1)
  end)

  it("ck.nvtx.range returns the function's results and pops also when it raises", function()
    assert.same({3, 4}, {ck.nvtx.range("r", function(a) return a, a + 1 end, 3)})
    assert.is_false(pcall(ck.nvtx.range, "r", function() error("x") end))
    assert.is_true(ck.nvtx.pop() < 0) -- nothing left open (without a tool attached NVTX counts nothing: negative)
  end)
end)
