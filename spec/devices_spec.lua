--- Several devices (issue 31): device names, ck.devices, ck.with_device, ck.memory(d), ck.sync(d), a:device(),
-- a:to(d), copy_ across devices, and the error every op raises for operands on different devices.
-- The rules run in a child process with CUKERN_HOST_DEVICES=3 (host:0 .. host:2: distinct devices on the host
-- backend, so CI runs every rule without a GPU); its GPU part (cuda:0 / cuda:1: peer copies of strided views,
-- ordering across the two streams, results equal on both) runs where the machine has two GPUs and is pending
-- with the reason elsewhere. In this process: the single-device behaviour.
local H = require "spec.helpers"
local ck = H.ck

local LUA = os.getenv("LUA") or "lua5.4"
local CHILD = H.child_checks(("env CUKERN_HOST_DEVICES=3 %s spec/devices_child.lua %d"):format(LUA, H.seed), 300)

describe("several devices (child process, CUKERN_HOST_DEVICES=3, seed " .. H.seed .. ")", function()
  H.child_its(_ENV, CHILD, "spec/devices_child.lua")
end)

describe("one host device (this process)", function()
  local env_set = os.getenv("CUKERN_HOST_DEVICES")

  it("arrays on the host are on host:0, the only host device", function()
    if env_set then return pending("CUKERN_HOST_DEVICES is set in this run's environment") end
    local a = ck.rand(3, {device = "host"})
    assert.equals("host:0", a:device())
    assert.equals("host:0", ck.rand(2, 2, {device = "cpu"}):t():device())
    assert.equals("host:0", a:to("host"):device())
    assert.equals("host:0", (a + 1):device())
    assert.equals("host:0", ck.device("host").id)
    assert.equals("host:0", ck.device("host:0").id)
    local hosts = {}
    for _, d in ipairs(ck.devices()) do if d.backend == "host" then hosts[#hosts + 1] = d.id end end
    assert.same({"host:0"}, hosts)
    if not H.has_cuda then
      assert.equals("host:0", ck.default_device())
      assert.equals("host:0", ck.zeros(1):device())
      assert.equals(1, #ck.devices())
    end
  end)

  it("host:1 does not exist, and the error says how many do and how to make more", function()
    if env_set then return pending("CUKERN_HOST_DEVICES is set in this run's environment") end
    local ok, err = pcall(ck.device, "host:1")
    assert.is_false(ok)
    assert.matches("device host:1 does not exist %(there is 1 host device, host:0 .. host:0; CUKERN_HOST_DEVICES=N", err)
    ok, err = pcall(ck.zeros, 2, {device = "host:1"})
    assert.is_false(ok); assert.matches("host:1 does not exist", err)
    ok, err = pcall(function() return ck.rand(2, {device = "host"}):to("host:1") end)
    assert.is_false(ok); assert.matches("host:1 does not exist", err)
  end)

  it("ck.memory('host:0'), ck.sync('host:0') and ck.sync('all') work with one device", function()
    collectgarbage(); collectgarbage()
    local m0 = ck.memory("host:0").in_use
    local a = ck.empty(4096, {device = "host", dtype = "f64"})
    assert.is_true(ck.memory("host:0").in_use >= m0 + 8 * 4096)
    a:free()
    assert.equals(m0, ck.memory("host:0").in_use)
    ck.sync("host:0"); ck.sync("all"); ck.sync("host")
  end)

  it("with_device('host', fn) on a single-device machine runs fn and restores the default", function()
    local prev = ck.default_device()
    assert.equals("host:0", ck.with_device("host", function() return ck.zeros(1):device() end))
    assert.equals(prev, ck.default_device())
  end)
end)
