--- Child of spec/devices_spec.lua: the rules of several devices (issue 31), in a process with
-- CUKERN_HOST_DEVICES=3 (host:0 .. host:2, distinct devices on the host backend), and across cuda:0 / cuda:1 where
-- this machine has two GPUs. One line per check (spec/child_harness.lua).
--   CUKERN_HOST_DEVICES=3 lua5.4 spec/devices_child.lua [seed]
local T = require "spec.child_harness"
local ck = require "cukern"

local SEED = tonumber(arg[1]) or os.time()
ck.seed(SEED)
math.randomseed(SEED)
local check, eq, ok, raises, same = T.check, T.eq, T.ok, T.raises, T.same_values

local NHOST = tonumber(os.getenv("CUKERN_HOST_DEVICES"))
local HOSTS = {"host:0", "host:1", "host:2"}

local function ncuda()
  local n = 0
  for _, d in ipairs(ck.devices()) do if d.backend == "cuda" then n = n + 1 end end
  return n
end
local NCUDA = ncuda()
local DEFAULT0 = ck.default_device()

check("the process has CUKERN_HOST_DEVICES=3 host devices (seed " .. SEED .. ")", function()
  eq(NHOST, 3, "CUKERN_HOST_DEVICES")
  local n = 0
  for _, d in ipairs(ck.devices()) do if d.backend == "host" then n = n + 1 end end
  eq(n, 3, "host devices in ck.devices()")
end)

-- ---------------------------------------------------------------- names

check("device strings parse and normalise: host, cpu, host:N, cpu:N", function()
  ck.default_device("host:0")
  eq(ck.device("host").id, "host:0")
  eq(ck.device("cpu").id, "host:0")
  eq(ck.device("host:2").id, "host:2")
  eq(ck.device("cpu:1").id, "host:1")
  eq(ck.device("host:1").index, 1)
  -- a bare kind is the default device of that kind
  ck.default_device("host:2")
  eq(ck.default_device(), "host:2")
  eq(ck.device("host").id, "host:2")
  eq(ck.device("cpu").id, "host:2")
  eq(ck.zeros(2, {device = "host"}):device(), "host:2")
  eq(ck.zeros(2):device(), "host:2", "an array made without a device")
  ck.default_device("cpu:1")
  eq(ck.default_device(), "host:1", "the default is reported normalised")
  ck.default_device("host")
  eq(ck.default_device(), "host:1", "'host' keeps the default host device")
  ck.default_device("host:0")
  eq(ck.device().id, "host:0")
  ck.default_device(DEFAULT0)
end)

check("nonexistent and malformed devices are errors that list what exists", function()
  for _, bad in ipairs {"host:3", "host:99", "cpu:3"} do
    local e = raises(ck.device, {"does not exist", "3 host devices", "host:0 .. host:2", "CUKERN_HOST_DEVICES"}, bad)
    ok(e:find("host:%d+ does not exist"), e)
  end
  raises(function() return ck.zeros(2, {device = "host:3"}) end, {"host:3 does not exist", "host:0 .. host:2"})
  raises(function() return ck.rand(2):to("host:5") end, {"host:5 does not exist"})
  raises(ck.default_device, {"host:3 does not exist"}, "host:3")
  eq(ck.default_device(), DEFAULT0, "a refused default changes nothing")
  raises(ck.memory, {"host:4 does not exist"}, "host:4")
  raises(ck.sync, {"host:9 does not exist"}, "host:9")
  raises(ck.with_device, {"host:3 does not exist"}, "host:3", function() end)
  for _, bad in ipairs {"tpu", "host:", "host:x", "host:-1", "hostx", "host: 1", "cuda:x", ""} do
    raises(ck.device, {}, bad)
    raises(function() return ck.zeros(1, {device = bad}) end, {})
  end
  if NCUDA == 0 then
    raises(ck.device, {"no CUDA device for cuda:0"}, "cuda:0")
    raises(ck.device, {"no CUDA device"}, "cuda")
    raises(function() return ck.zeros(1, {device = "cuda:1"}) end, {"no CUDA device for cuda:1"})
  else
    raises(ck.device, {"cuda:" .. NCUDA .. " does not exist", ("cuda:0 .. cuda:%d"):format(NCUDA - 1)}, "cuda:" .. NCUDA)
  end
end)

check("ck.devices() lists cuda:0.. then host:0..host:2 as records like ck.device(d)'s", function()
  local list = ck.devices()
  eq(#list, NCUDA + 3, "number of devices")
  for i, d in ipairs(list) do
    local want = i <= NCUDA and ("cuda:" .. (i - 1)) or ("host:" .. (i - NCUDA - 1))
    eq(d.id, want, "entry " .. i)
    eq(d.backend, i <= NCUDA and "cuda" or "host", want .. " backend")
    eq(d.index, i <= NCUDA and i - 1 or i - NCUDA - 1, want .. " index")
    ok(type(d.name) == "string" and #d.name > 0, want .. ": no name")
    eq(ck.device(d.id).id, d.id, "ck.device(" .. d.id .. ")")
    eq(ck.device(d.id).name, d.name, "ck.device(" .. d.id .. ").name")
  end
  ok(tostring(list[#list]):find("host:2", 1, true), "the record prints its fields: " .. tostring(list[#list]))
end)

check("a:device() is where the array lives, for every creation function and for views and results", function()
  for _, d in ipairs(HOSTS) do
    local o = {device = d}
    for name, a in pairs {
      empty = ck.empty(2, o), zeros = ck.zeros(2, 3, o), ones = ck.ones({2}, o), full = ck.full({2}, 7, o),
      eye = ck.eye(3, o), arange = ck.arange(5, o), linspace = ck.linspace(0, 1, 4, o), rand = ck.rand(3, o),
      randn = ck.randn(3, o), randint = ck.randint(0, 9, {3}, o), array = ck.array({{1, 2}, {3, 4}}, o),
      scalar = ck.scalar(2, o), f16 = ck.rand(2, {device = d, dtype = "f16"}),
    } do
      eq(a:device(), d, name)
    end
    local a = ck.rand(4, 5, o)
    eq(a:t():device(), d, "a view")
    eq(a:narrow(1, 2, 2):device(), d, "narrow")
    eq((a + 1):device(), d, "a + 1")
    eq(ck.matmul(a, a:t()):device(), d, "matmul")
    eq(a:sum():device(), d, "sum")
    eq(ck.map("x * 2 + y", {x = a, y = a}):device(), d, "ck.map")
    eq(a:clone():device(), d, "clone")
    eq(a:to("f64"):device(), d, "a dtype cast stays")
    ok(tostring(a):find(d, 1, true), "tostring names the device")
  end
end)

check("ops on host:1 give the values host:0 gives for the same inputs", function()
  local a0, b0 = ck.randn(6, 7, {device = "host:0", dtype = "f64"}), ck.randn(7, 5, {device = "host:0", dtype = "f64"})
  local a1, b1 = a0:to("host:1"), b0:to("host:1")
  same(ck.matmul(a1, b1), ck.matmul(a0, b0), "matmul")
  same(a1:sum(1), a0:sum(1), "sum")
  same((a1 * 3 - a1:exp()), (a0 * 3 - a0:exp()), "elementwise")
  same(ck.map("x * x + 1", {x = a1}), ck.map("x * x + 1", {x = a0}), "map")
end)

-- ---------------------------------------------------------------- with_device

check("ck.with_device(d, fn, ...) runs fn there, returns its results and restores the default", function()
  ck.default_device("host:0")
  local d, x, y = ck.with_device("host:2", function(p, q)
    eq(ck.default_device(), "host:2")
    return ck.zeros(1):device(), p, q
  end, 7, "eight")
  eq(d, "host:2"); eq(x, 7); eq(y, "eight")
  eq(ck.default_device(), "host:0", "restored")
  -- nested
  ck.with_device("host:1", function()
    ck.with_device("host:2", function() eq(ck.rand(1):device(), "host:2") end)
    eq(ck.rand(1):device(), "host:1", "inner restored to outer")
  end)
  eq(ck.default_device(), "host:0")
  -- no results, nil results
  eq(select("#", ck.with_device("host:1", function() end)), 0, "no results")
  eq(select("#", ck.with_device("host:1", function() return nil, nil end)), 2, "two nils")
  ck.default_device(DEFAULT0)
end)

check("ck.with_device restores the default after an error inside fn, and re-raises that error", function()
  ck.default_device("host:0")
  local ok_, err = pcall(ck.with_device, "host:1", function() error("boom inside") end)
  ok(not ok_, "the error propagates")
  ok(tostring(err):find("boom inside", 1, true), tostring(err))
  eq(ck.default_device(), "host:0", "restored after an error")
  -- a non-string error object passes through unchanged
  local obj = {}
  local _, e2 = pcall(ck.with_device, "host:2", function() error(obj) end)
  ok(e2 == obj, "the error object is the one raised")
  eq(ck.default_device(), "host:0")
  -- an error from cukern inside fn (a mixed-device op)
  local _, e3 = pcall(ck.with_device, "host:2", function() return ck.zeros(2) + ck.zeros(2, {device = "host:1"}) end)
  ok(tostring(e3):find("different devices", 1, true), tostring(e3))
  eq(ck.default_device(), "host:0")
  ck.default_device(DEFAULT0)
end)

check("local _ <close> = ck.with_device(d) holds for the block, also when the block raises", function()
  ck.default_device("host:0")
  do
    local _ <close> = ck.with_device("host:2")
    eq(ck.default_device(), "host:2")
    eq(ck.ones(3):device(), "host:2")
    do
      local _ <close> = ck.with_device("cpu:1")
      eq(ck.ones(3):device(), "host:1")
    end
    eq(ck.default_device(), "host:2", "inner block restored")
  end
  eq(ck.default_device(), "host:0", "restored at the end of the block")
  local ok_, err = pcall(function()
    local _ <close> = ck.with_device("host:1")
    eq(ck.default_device(), "host:1")
    error("raised in the block")
  end)
  ok(not ok_ and tostring(err):find("raised in the block", 1, true), tostring(err))
  eq(ck.default_device(), "host:0", "restored after the block raised")
  -- closing a guard twice is harmless
  local g = ck.with_device("host:2")
  getmetatable(g).__close(g)
  ck.default_device("host:1")
  getmetatable(g).__close(g)
  eq(ck.default_device(), "host:1", "a second close restores nothing")
  ck.default_device(DEFAULT0)
end)

-- ---------------------------------------------------------------- memory, sync

check("ck.memory('host:1').in_use grows with an allocation there and shrinks after free; other devices unchanged", function()
  collectgarbage(); collectgarbage()
  local m0, o0, z0 = ck.memory("host:1").in_use, ck.memory("host:2").in_use, ck.memory("host:0").in_use
  local a = ck.empty(1 << 16, {device = "host:1"}) -- 256 KiB of f32
  local m1 = ck.memory("host:1").in_use
  ok(m1 >= m0 + 4 * (1 << 16), ("in_use %d -> %d after 256 KiB"):format(m0, m1))
  eq(ck.memory("host:2").in_use, o0, "host:2 in_use")
  eq(ck.memory("host:0").in_use, z0, "host:0 in_use")
  ok(ck.memory("host:1").peak >= m1, "peak >= in_use")
  a:free()
  eq(ck.memory("host:1").in_use, m0, "in_use after free")
  do
    local b <close> = ck.zeros(1000, {device = "host:2", dtype = "f64"})
    ok(ck.memory("host:2").in_use >= o0 + 8000, "host:2 grows")
  end
  eq(ck.memory("host:2").in_use, o0, "host:2 after <close>")
  ok(ck.memory().in_use ~= nil, "ck.memory() without a device")
end)

check("ck.sync(d) and ck.sync('all') return on host devices", function()
  for _, d in ipairs(HOSTS) do ck.sync(d) end
  ck.sync("all")
  ck.sync()
  ck.sync("cpu:2")
end)

-- ---------------------------------------------------------------- mixed devices

local function mixed(f, a_dev, b_dev, what)
  local e = raises(f, {a_dev, b_dev, ':to("'}, nil)
  ok(not e:find("cukern/[%w_]+%.lua"), what .. ": points into cukern's modules: " .. e)
  return e
end

check("ops mixing host:1 and host:2 raise an error naming both devices and the :to that fixes it", function()
  local a, b = ck.rand(3, 3, {device = "host:1"}), ck.rand(3, 3, {device = "host:2"})
  local before = T.flat(a)
  mixed(function() return a + b end, "host:1", "host:2", "a + b")
  mixed(function() return b * a end, "host:1", "host:2", "b * a (matmul operator)")
  mixed(function() return ck.add(a, b) end, "host:1", "host:2", "ck.add")
  mixed(function() return a:sub(b) end, "host:1", "host:2", "a:sub")
  mixed(function() return a:mul_(b) end, "host:1", "host:2", "a:mul_")
  mixed(function() return ck.pow(a, b) end, "host:1", "host:2", "ck.pow")
  mixed(function() return ck.add(a, a, {out = ck.empty(3, 3, {device = "host:2"})}) end, "host:1", "host:2", "out")
  mixed(function() return ck.matmul(a, b) end, "host:1", "host:2", "matmul")
  mixed(function() return ck.matmul(a, a, {out = b}) end, "host:1", "host:2", "matmul out")
  mixed(function() return ck.gemm(a, a, b) end, "host:1", "host:2", "gemm")
  mixed(function() return ck.sum(a, 1, {out = ck.empty(3, {device = "host:2"})}) end, "host:1", "host:2", "sum out")
  mixed(function() return ck.map("x + y", {x = a, y = b}) end, "host:1", "host:2", "ck.map")
  mixed(function() return ck.map("x * 2 + y", {y = b, x = a}) end, "host:1", "host:2", "ck.map (other order)")
  raises(function() return ck.map("x", {x = a}, {out = b}) end, {"host:1", "host:2"})
  raises(function() return ck.reduce_map({map = "x * y", reduce = "a + b", identity = 0}, {x = a, y = b}) end,
    {"host:1", "host:2"})
  raises(function() a[1] = b[1] end, {"host:1", "host:2", ':to("host:1")'})
  same(a, ck.array(before, {device = "host:1"}):reshape(3, 3), "a is unchanged after the refused ops")
  -- and what the message says fixes it
  same(a + b:to("host:1"), a + ck.array(T.flat(b), {device = "host:1"}):reshape(3, 3), "a + b:to('host:1')")
end)

check("host:0 and host:1 are as distinct as host:1 and host:2", function()
  mixed(function() return ck.zeros(2, {device = "host:0"}) + ck.zeros(2, {device = "host:1"}) end, "host:0", "host:1", "+")
end)

-- ---------------------------------------------------------------- copies across devices

check("a:to('host:2') copies values exactly, for every dtype and for strided views", function()
  for _, dt in ipairs {"f32", "f64", "i32", "f16", "bf16"} do
    local base = dt == "i32" and ck.randint(-1000000, 1000000, {6, 9}, {device = "host:1", dtype = "i32"})
      or ck.randn(6, 9, {device = "host:1", dtype = dt})
    for name, v in pairs {whole = base, transposed = base:t(), narrowed = base:narrow(2, 3, 4),
                          stepped = base:t():narrow(1, 2, 5):narrow(2, 2, 3), row = base:select(1, 4)} do
      local c = v:to("host:2")
      eq(c:device(), "host:2", dt .. " " .. name)
      eq(c:dtype(), dt, dt .. " " .. name)
      ok(c:storage_id() ~= v:storage_id(), "a new storage")
      same(c, v, dt .. " " .. name)
      local back = c:to("host:1")
      eq(back:device(), "host:1")
      same(back, v, dt .. " " .. name .. " and back")
    end
    local c64 = base:t():to("host:0", "f64")
    eq(c64:device(), "host:0"); eq(c64:dtype(), "f64")
    same(c64, base:t():to("f64"), dt .. " -> host:0 f64")
  end
end)

check("copy_ across devices: strided source and destination, dtype casts, the rest of the destination untouched", function()
  -- destination: a transposed window of a poisoned f64 array on host:2; source: a narrowed f32 view on host:1
  local parent = ck.full({8, 10}, 0 / 0, {device = "host:2", dtype = "f64"})
  local dst = parent:narrow(1, 2, 6):narrow(2, 3, 6):t() -- [4x5], strided (narrow(dim, first, last))
  local srcp = ck.randn(6, 9, {device = "host:1", dtype = "f32"})
  local src = srcp:narrow(1, 2, 5):narrow(2, 1, 5) -- [4x5], strided
  dst:copy_(src)
  eq(dst:device(), "host:2")
  same(dst, src:to("f64"), "f32 -> f64 across devices") -- (f32 -> f64 is exact)
  local p = parent:totable()
  for i = 1, 8 do
    for j = 1, 10 do
      local inside = i >= 2 and i <= 6 and j >= 3 and j <= 6
      ok(inside == (p[i][j] == p[i][j]), ("parent[%d][%d] = %s: %s"):format(i, j, tostring(p[i][j]),
        inside and "not written" or "written outside the view"))
    end
  end
  -- f64 -> f32 (rounding as a cast on one device), f64 -> i32 (truncation), i32 -> f16, f32 -> bf16
  local x = ck.randn(5, 4, {device = "host:0", dtype = "f64"}) * 100
  local y = ck.empty(4, 5, {device = "host:1", dtype = "f32"})
  y:t():copy_(x)
  same(y:t(), x:to("f32"), "f64 -> f32")
  local z = ck.empty(5, 4, {device = "host:2", dtype = "i32"})
  z:copy_(x)
  same(z, x:to("i32"), "f64 -> i32")
  local w = ck.empty(4, 5, {device = "host:0", dtype = "f16"})
  local iz = ck.randint(-500, 500, {5, 4}, {device = "host:2", dtype = "i32"})
  w:copy_(iz:t())
  same(w, iz:t():to("f16"), "i32 -> f16")
  local bf = ck.empty(5, 4, {device = "host:1", dtype = "bf16"})
  bf:copy_(x:to("host:2", "f32"))
  same(bf, x:to("bf16"), "f32 -> bf16")
  -- broadcast across devices
  local row = ck.randn(4, {device = "host:2", dtype = "f64"})
  local m = ck.zeros(3, 4, {device = "host:0", dtype = "f64"})
  m:copy_(row)
  for i = 1, 3 do same(m:select(1, i), row, "broadcast row " .. i) end
  raises(function() return ck.zeros(2, 2, {device = "host:1"}):copy_(ck.ones(3, {device = "host:2"})) end,
    {"cannot be broadcast"})
end)

-- ---------------------------------------------------------------- GPUs

local function cuda_pending(name)
  T.pending(name, ("needs 2 CUDA devices: this machine has %d (%s)"):format(NCUDA,
    NCUDA == 0 and tostring(ck.device("host").why_host) or ck.device("cuda:0").name))
end

local GPU = {}

GPU[#GPU + 1] = {"cuda:0 and cuda:1: a:device(), ck.memory, ck.sync, with_device", function()
  local a = ck.rand(1000, {device = "cuda:1"})
  eq(a:device(), "cuda:1")
  eq(ck.zeros(2, {device = "gpu:1"}):device(), "cuda:1")
  ck.sync("cuda:1"); ck.sync("cuda:0"); ck.sync("all")
  ck.with_device("cuda:1", function()
    eq(ck.rand(2):device(), "cuda:1")
    eq(ck.device("cuda").id, "cuda:1", "'cuda' is the default cuda device")
  end)
  do
    local _ <close> = ck.with_device("cuda:1")
    eq(ck.ones(2):device(), "cuda:1")
  end
  collectgarbage(); collectgarbage()
  ck.sync("all")
  local m0 = ck.memory("cuda:1").in_use
  local b = ck.empty(1 << 20, {device = "cuda:1"})
  ok(ck.memory("cuda:1").in_use >= m0 + 4 * (1 << 20), "cuda:1 in_use grows")
  b:free()
  eq(ck.memory("cuda:1").in_use, m0, "cuda:1 in_use after free")
end}

GPU[#GPU + 1] = {"cuda:0 / cuda:1 / host mixes raise errors naming both devices and the :to", function()
  local a, b = ck.rand(3, 3, {device = "cuda:0"}), ck.rand(3, 3, {device = "cuda:1"})
  local h = ck.rand(3, 3, {device = "host:1"})
  mixed(function() return a + b end, "cuda:0", "cuda:1", "a + b")
  mixed(function() return ck.matmul(a, b) end, "cuda:0", "cuda:1", "matmul")
  mixed(function() return ck.map("x + y", {x = a, y = b}) end, "cuda:0", "cuda:1", "map")
  mixed(function() return a + h end, "cuda:0", "host:1", "cuda + host")
  mixed(function() return ck.matmul(h, b) end, "host:1", "cuda:1", "host x cuda")
end}

GPU[#GPU + 1] = {"peer copies of strided views, both directions, values exact against the host", function()
  for _, dir in ipairs {{"cuda:0", "cuda:1"}, {"cuda:1", "cuda:0"}} do
    local from, to = dir[1], dir[2]
    for _, dt in ipairs {"f32", "f64", "i32", "f16"} do
      local host = dt == "i32" and ck.randint(-1000, 1000, {300, 257}, {device = "host:0", dtype = dt})
        or ck.randn(300, 257, {device = "host:0", dtype = dt})
      local g = host:to(from)
      for name, pair in pairs {
        whole = {g, host}, transposed = {g:t(), host:t()}, narrowed = {g:narrow(1, 7, 200):narrow(2, 3, 101),
          host:narrow(1, 7, 200):narrow(2, 3, 101)}, both = {g:t():narrow(1, 5, 64), host:t():narrow(1, 5, 64)},
      } do
        local c = pair[1]:to(to)
        eq(c:device(), to)
        same(c, pair[2], ("%s %s %s -> %s"):format(dt, name, from, to))
        -- into a strided destination on the other device, with a cast
        local d = ck.full({pair[2]:size(2), pair[2]:size(1)}, -7, {device = to, dtype = "f64"})
        d:t():copy_(pair[1])
        same(d:t(), pair[2]:to("f64"), ("copy_ %s %s %s -> %s"):format(dt, name, from, to))
      end
    end
  end
end}

GPU[#GPU + 1] = {"an op on cuda:1 right after a peer copy sees the copied values; the source may change after", function()
  local n = 1 << 24
  for _ = 1, 3 do
    local x = ck.full({n}, 3, {device = "cuda:0", dtype = "f64"}) -- (f64: every partial sum is exact)
    x:mul_(2) -- queued on cuda:0: the copy must wait for it
    local y = x:to("cuda:1")
    local s = (y * 0.5):sum():item() -- on cuda:1 right away
    eq(s, 3 * n, "sum on cuda:1 of the copied values")
    local z = ck.empty(n, {device = "cuda:1", dtype = "f64"})
    z:copy_(x)
    x:fill(-1) -- on cuda:0 right after the copy: the copy has read the old values
    eq(z:max():item(), 6, "max after the source was overwritten")
    eq(z:min():item(), 6, "min after the source was overwritten")
    -- and back: cuda:1 -> cuda:0 right after an op on cuda:1
    z:add_(1)
    local back = z:to("cuda:0")
    eq(back:sum():item(), 7 * n, "cuda:1 -> cuda:0 after an op on cuda:1")
  end
end}

GPU[#GPU + 1] = {"matmul and sum on cuda:1 equal cuda:0's for the same inputs", function()
  local same_model = ck.device("cuda:0").name == ck.device("cuda:1").name
  for _, dt in ipairs {"f32", "f64"} do
    local a0, b0 = ck.randn(257, 129, {device = "cuda:0", dtype = dt}), ck.randn(129, 65, {device = "cuda:0", dtype = dt})
    local a1, b1 = a0:to("cuda:1"), b0:to("cuda:1")
    local m0, m1 = ck.matmul(a0, b0), ck.matmul(a1, b1)
    local s0, s1 = a0:sum(1), a1:sum(1)
    eq(m1:device(), "cuda:1"); eq(s1:device(), "cuda:1")
    if same_model then
      same(m1, m0, dt .. " matmul")
      same(s1, s0, dt .. " sum")
    else
      ok(ck.allclose(m1:to("host"), m0:to("host"), 1e-5, 1e-5), dt .. " matmul close")
      ok(ck.allclose(s1:to("host"), s0:to("host"), 1e-5, 1e-5), dt .. " sum close")
    end
    -- and both equal the host's within the usual tolerance
    local mh = ck.matmul(a0:to("host:0", "f64"), b0:to("host:0", "f64"))
    ok(ck.allclose(m1:to("host:0", "f64"), mh, dt == "f32" and 1e-4 or 1e-12, dt == "f32" and 1e-4 or 1e-12), dt .. " vs host")
  end
end}

if NCUDA >= 2 then
  for _, g in ipairs(GPU) do check("GPU: " .. g[1], g[2]) end
else
  for _, g in ipairs(GPU) do cuda_pending("GPU: " .. g[1]) end
end

T.finish()
