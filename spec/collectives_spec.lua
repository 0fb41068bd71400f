--- Collectives over arrays on several devices of one process (issue 31: ck.nccl.all_reduce, all_gather,
-- reduce_scatter, broadcast, reduce, wait, info, variants).
-- In a child process with CUKERN_HOST_DEVICES=4 (spec/collectives_child.lua): the host oracle, every collective x
-- op x dtype x 1..4 devices x awkward shapes x packed/strided-in-place, against a reference computed in Lua from
-- the inputs; the error cases. Its GPU part (NCCL and each rung of the all-reduce ladder on cuda:0..N-1, against
-- the host oracle; sizes 1, odd and a few MiB) runs where the machine has two GPUs and is pending elsewhere.
local H = require "spec.helpers"
local ck = H.ck

local LUA = os.getenv("LUA") or "lua5.4"
local CHILD = H.child_checks(("env CUKERN_HOST_DEVICES=4 %s spec/collectives_child.lua %d"):format(LUA, H.seed), 600)

describe("collectives (child process, CUKERN_HOST_DEVICES=4, seed " .. H.seed .. ")", function()
  H.child_its(_ENV, CHILD, "spec/collectives_child.lua")
end)

describe("collectives in this process", function()
  it("a list of one array is its own collective (n = 1 on host:0)", function()
    local a = H.rand({3, 4}, "f64", "host")
    local want = a:clone()
    ck.nccl.all_reduce({a}, "sum")
    H.assert_equal(a, want, "all_reduce of one")
    local g = ck.nccl.all_gather({a})
    H.assert_equal(g[1], want, "all_gather of one")
    local r = ck.nccl.reduce_scatter({a}, "max")
    H.assert_equal(r[1], want, "reduce_scatter of one")
    ck.nccl.broadcast({a}, 1)
    ck.nccl.reduce({a}, "avg", 1)
    H.assert_equal(a, want, "broadcast and reduce of one")
  end)

  it("every function of ck.nccl is documented here and nothing else is in the table", function()
    local names = {}
    for k, v in pairs(ck.nccl) do if type(v) == "function" then names[#names + 1] = k end end
    table.sort(names)
    assert.same({"all_gather", "all_reduce", "broadcast", "info", "reduce", "reduce_scatter", "variants", "wait"}, names)
  end)
end)
