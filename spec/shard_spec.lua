-- Sharded and replicated arrays (ck.shard, ck.replicate; lua/cukern/shard.lua, docs/shard.md).
-- The checks need several devices, so they run in a child process (spec/shard_child.lua) started with
-- CUKERN_HOST_DEVICES=3: the host backend as three devices, on which CI tries 1, 2 and 3 of them. Each check is
-- one `it` here; every result is compared with the plain computation on one device (tolerances: the child's
-- header). With two or more GPUs the same checks run again over the CUDA devices (NCCL); elsewhere that part is
-- pending, with the reason. The in-process part checks what needs no second device.
local H = require "spec.helpers"
local ck = H.ck

local LUA = os.getenv("LUA") or "lua5.4"

--- Runs the child over `backend`'s devices; returns the checks in order, their results (true or the message),
-- the count the child reported at its end (nil if it died) and its output.
local function run_child(backend, env)
  local cmd = ("%s LUA_PATH='./lua/?.lua;./lua/?/init.lua;;' LUA_CPATH='./?.so;;' timeout 600 %s spec/shard_child.lua %s %d 2>&1")
    :format(env, LUA, backend, H.seed)
  local p = assert(io.popen(cmd))
  local order, results, done, out = {}, {}, nil, {}
  for line in p:lines() do
    out[#out + 1] = line
    local ok_name = line:match("^ok (.*)$")
    local bad_name, msg = line:match("^FAIL ([^\t]*)\t(.*)$")
    local name = ok_name or bad_name
    if name then
      order[#order + 1] = name
      results[name] = ok_name and true or msg:gsub("\\n", "\n")
    end
    done = done or math.tointeger(tonumber(line:match("^DONE (%d+)$")))
  end
  p:close()
  return order, results, done, out
end

local function describe_child(title, backend, env, min_checks)
  describe(title, function()
    local order, results, done, out = run_child(backend, env)
    it("the child process ran every check", function()
      local tail = table.concat(out, "\n", math.max(1, #out - 15))
      assert(done, "the child died before the end (seed " .. H.seed .. "):\n" .. tail)
      assert(done == #order, ("the child counted %d checks but reported %d"):format(done, #order))
      assert(#order >= min_checks, ("only %d checks ran, expected at least %d:\n%s"):format(#order, min_checks, tail))
    end)
    for _, name in ipairs(order) do
      it(name, function() assert(results[name] == true, results[name]) end)
    end
  end)
end

-- 15 checks per device count (split and gather, elementwise, reductions, matrix products), 4 more once
describe_child("ck.shard and ck.replicate on host:0..2 (CUKERN_HOST_DEVICES=3)", "host", "CUKERN_HOST_DEVICES=3", 49)

local cuda_devices = {}
for _, d in ipairs(ck.devices()) do if d.backend == "cuda" then cuda_devices[#cuda_devices + 1] = d.id end end
if #cuda_devices >= 2 then
  describe_child(("ck.shard and ck.replicate on %d CUDA devices"):format(#cuda_devices), "cuda", "", 15 * math.min(#cuda_devices, 3) + 4)
else
  describe("ck.shard and ck.replicate on CUDA devices", function()
    it("runs the same checks over two or more GPUs", function()
      pending(H.has_cuda and ("only one CUDA device here (" .. cuda_devices[1] .. "); the sharded checks need two " ..
        "or more") or H.no_cuda_reason)
    end)
  end)
end

describe("ck.shard in this process (one device unless CUKERN_HOST_DEVICES is set)", function()
  local home = ck.device().id

  it("splits over one device and gathers back exactly, for every dtype", function()
    for _, dt in ipairs {"f32", "f64", "i32"} do
      local a = H.rand({7, 5}, dt, home)
      local s = ck.shard(a, {devices = {home}, dim = 2})
      assert.equals(1, #s.parts)
      assert.same({7, 5}, s:shape())
      H.assert_equal(s:gather(), a, dt)
      H.assert_equal(ck.replicate(a, {home}):gather(), a, dt)
    end
  end)

  it("leaves the plain-array functions and operators it wraps unchanged", function()
    local a, b = H.rand({4, 3}, "f64", home), H.rand({3, 2}, "f64", home)
    for _, name in ipairs {"sum", "max", "min", "mean", "prod"} do
      H.assert_equal(ck[name](a), a[name](a), "ck." .. name)
      H.assert_equal(ck[name](a, 2), a[name](a, 2), "ck." .. name .. "(a, 2)")
    end
    local v, i = ck.max(a, 1)
    H.assert_equal(i, select(2, a:max(1)), "ck.max indices")
    H.assert_equal(v, (a:max(1)), "ck.max values")
    H.assert_equal(ck.matmul(a, b), a * b, "ck.matmul")
    H.assert_equal(a + a, a * 2, "a + a")
    local ok, e = pcall(function() local _ = ck.sum("x") end)
    assert.is_false(ok)
    assert.matches("shard_spec%.lua:%d+: ck%.sum: argument 1 must be a cukern array", e)
    ok, e = pcall(function() local _ = a + ck.shard(a, {devices = {home}}) end)
    assert.is_false(ok)
    assert.matches("shard_spec%.lua:%d+: s %+ t: the left operand is a plain array", e)
  end)
end)
