-- The foundation: loading, devices, creation, dtypes, tables, views, copies, display, memory and errors,
-- on every backend present (host everywhere; cuda on the GPU host).
local H = require "spec.helpers"
local ck = H.ck

local function shape(a) return table.concat(a:shape(), "x") end

describe("module", function()
  it("loads and describes the device", function()
    local d = ck.device()
    assert.is_table(d)
    assert.is_true(d.backend == "cuda" or d.backend == "host")
    assert.is_string(d.name)
    assert.is_string(d.runtime)
    if d.backend == "cuda" then
      assert.is_true(d.sm_count > 0 and d.total_mem > 0)
      assert.matches("^%d+%.%d+$", d.cc)
    else
      assert.is_string(d.why_host)
    end
    assert.equals(H.has_cuda and "cuda:0" or "host:0", d.default) -- "cuda:N"/"host:N" since issue 31
    assert.equals(d.default, d.id)
  end)

  it("lists variants from the registry for every ladder", function()
    for _, op in ipairs {"matmul", "reduce", "transpose", "elementwise", "sum", "add"} do
      local vs = ck.variants(op)
      assert.is_true(#vs > 0, op)
      local ids = {}
      for _, v in ipairs(vs) do
        assert.is_number(v.id); assert.is_string(v.name); assert.is_string(v.summary)
        assert.is_table(v.dtypes)
        assert.is_nil(ids[v.id], op .. ": duplicate id " .. v.id)
        ids[v.id] = true
      end
    end
    assert.has_error(function() ck.variants("nope") end)
  end)
end)

for _, dev in ipairs(H.devices()) do
  describe("arrays on " .. dev, function()
    local O = function(dt) return {device = dev, dtype = dt} end

    it("creates zeros, ones, full, eye, arange, linspace with the right values", function()
      for _, dt in ipairs {"f32", "f64", "i32"} do
        local z = ck.zeros(2, 3, O(dt))
        assert.equals("2x3", shape(z)); assert.equals(dt, z:dtype()); assert.equals(dev .. ":0", z:device())
        assert.same({{0, 0, 0}, {0, 0, 0}}, z:totable())
        assert.same({{1, 1}, {1, 1}}, ck.ones({2, 2}, O(dt)):totable())
        assert.same({7, 7, 7}, ck.full({3}, 7, O(dt)):totable())
        assert.same({{1, 0, 0}, {0, 1, 0}}, ck.eye(2, 3, O(dt)):totable())
        assert.same({0, 1, 2, 3, 4}, ck.arange(5, O(dt)):totable())
        assert.same({2, 5, 8}, ck.arange(2, 10, 3, O(dt)):totable())
      end
      assert.same({0, 0.25, 0.5, 0.75, 1}, ck.linspace(0, 1, 5, O("f64")):totable())
      assert.same({10, 8, 6}, ck.arange(10, 5, -2, O("i32")):totable())
      assert.equals(0, ck.arange(0, O()):numel())
    end)

    it("counts integer aranges exactly and ends linspace at stop exactly (issue 29)", function()
      -- near -2^63 the difference of the bounds has no double: counted in integers
      for _, dt in ipairs {"f32", "f64"} do
        local r = ck.arange(math.mininteger, math.mininteger + 3, O(dt))
        assert.equals(3, r:numel())
        for _, v in ipairs(r:totable()) do assert.equals(-2.0 ^ 63, v) end -- (each rounds to -2^63 in the dtype)
        assert.equals(1, ck.arange(math.maxinteger - 1, math.maxinteger, 1, O(dt)):numel()) -- (half-open)
        assert.equals(4, ck.arange(math.maxinteger, math.maxinteger - 7, -2, O(dt)):numel())
      end
      -- NumPy: the first point is start and the last is stop, exactly, whatever the rounding between
      for _ = 1, 20 do
        local a, b = math.random() * 20 - 10, math.random() * 20 - 10
        local n = math.random(2, 40)
        local t = ck.linspace(a, b, n, O("f64")):totable()
        assert.equals(a, t[1]); assert.equals(b, t[n])
        local f = ck.linspace(a, b, n, O("f32")):totable()
        assert.equals(string.unpack("f", string.pack("f", b)), f[n])
      end
      local t = ck.linspace(-3.3, 8.1, 13, O("f64")):totable()
      assert.equals(8.1, t[13])
      assert.same({7}, ck.linspace(7, 9, 1, O("f64")):totable())
    end)

    it("draws rand in [0,1) and randn with mean ~0, var ~1, reproducibly from a seed", function()
      local n = 20000
      ck.seed(1234)
      local u = ck.rand(n, O("f64")):flat()
      local lo, hi, sum = 1, 0, 0
      for _, v in ipairs(u) do lo = math.min(lo, v); hi = math.max(hi, v); sum = sum + v end
      assert.is_true(lo >= 0 and hi < 1)
      assert.is_true(math.abs(sum / n - 0.5) < 0.02)
      local g = ck.randn(n, O("f64")):flat()
      local m, m2 = 0, 0
      for _, v in ipairs(g) do m = m + v; m2 = m2 + v * v end
      m = m / n
      assert.is_true(math.abs(m) < 0.03, "mean " .. m)
      assert.is_true(math.abs(m2 / n - 1) < 0.05, "var " .. m2 / n)
      ck.seed(1234)
      assert.same(u, ck.rand(n, O("f64")):flat())
      ck.seed(H.seed)
    end)

    it("round-trips nested tables, items and 0-d arrays", function()
      local t = {{{1, 2}, {3, 4}, {5, 6}}, {{7, 8}, {9, 10}, {11, 12}}}
      local a = ck.array(t, O("f64"))
      assert.equals("2x3x2", shape(a)); assert.equals(12, a:numel()); assert.equals(3, a:ndim())
      assert.same(t, a:totable())
      assert.same({6, 2, 1}, a:strides())
      assert.equals(2, #a)
      local s = ck.array(2.5, O("f64"))
      assert.equals(0, s:ndim()); assert.equals(1, s:numel()); assert.equals(2.5, s:item()); assert.equals(2.5, s:totable())
      assert.equals(-3, ck.array({-3.7}, O("i32")):item())
      assert.equals(0, ck.array({}, O()):numel())
      -- booleans are not numbers (no bool dtype yet): mixed or not, they are refused (issue 29)
      assert.has_error(function() ck.array({true, false}, O("i32")) end)
      assert.has_error(function() ck.array({1, true, false}, O()) end)
      assert.has_error(function() ck.array({1, 2}, O()):item() end, nil)
    end)

    it("rejects ragged and malformed tables with a message that says where", function()
      local ok, err = pcall(ck.array, {{1, 2}, {3}}, O())
      assert.is_false(ok); assert.matches("ragged", err); assert.matches("%[2%]", err)
      ok, err = pcall(ck.array, {{1, 2}, 3}, O())
      assert.is_false(ok); assert.matches("ragged", err)
      ok, err = pcall(ck.array, {1, "x"}, O())
      assert.is_false(ok); assert.matches("not a number", err)
    end)

    it("copies between dtypes and devices (clone, to, cuda/host)", function()
      local a = H.rand({5, 7}, "f64", dev)
      local b = a:clone()
      assert.are_not.equal(a:storage_id(), b:storage_id())
      H.assert_equal(b, a)
      local f = a:to("f32")
      assert.equals("f32", f:dtype())
      H.assert_close(f:to("f64"), a, {rtol = 1e-7, atol = 1e-7})
      local i = ck.array({{1.9, -1.9}, {2.5, -0.2}}, O("f64")):to("i32")
      assert.same({{1, -1}, {2, 0}}, i:totable()) -- truncation toward zero
      local h = a:to("host")
      assert.equals("host:0", h:device())
      H.assert_equal(h, a:host())
      if H.has_cuda then
        local g = a:to("cuda", "f32")
        assert.equals("cuda:0", g:device()); assert.equals("f32", g:dtype())
        H.assert_equal(g:to("host"), a:to("f32"))
        -- a strided view crossing devices keeps its logical order
        H.assert_equal(a:t():cuda():host(), a:t():contiguous())
      end
    end)

    it("makes views that share storage: t, transpose, permute, narrow, sub, select, reshape, expand", function()
      local a = ck.arange(24, O("f64")):reshape(2, 3, 4)
      local id = a:storage_id()
      local t = a:transpose(1, 3)
      assert.equals("4x3x2", shape(t)); assert.equals(id, t:storage_id()); assert.is_false(t:is_contiguous())
      assert.equals(13, t:totable()[2][1][2])
      local p = a:permute(3, 1, 2)
      assert.equals("4x2x3", shape(p)); assert.same({1, 12, 4}, p:strides())
      assert.same(p:totable(), a:permute{3, 1, 2}:totable())
      local n = a:narrow(3, 2, 3)
      assert.equals("2x3x2", shape(n)); assert.equals(1, n:offset())
      assert.same({{{1, 2}, {5, 6}, {9, 10}}, {{13, 14}, {17, 18}, {21, 22}}}, n:totable())
      local s = a:slice{{2, 2}, {}, {4, 4}}
      assert.same({{{15}, {19}, {23}}}, s:totable())
      assert.same({4, 5, 6, 7}, a:select(1, 1):select(1, 2):totable())
      assert.same({20, 21, 22, 23}, a:select(2, -1):select(1, 2):totable())
      local r = a:reshape(4, -1)
      assert.equals("4x6", shape(r)); assert.equals(id, r:storage_id())
      assert.same({0, 1, 2, 3, 4, 5}, a:view{4, 6}:totable()[1])
      local e = ck.array({{1}, {2}}, O()):expand(2, 3)
      assert.same({{1, 1, 1}, {2, 2, 2}}, e:totable()); assert.same({1, 0}, e:strides())
      assert.same({{1, 1}, {2, 2}}, ck.array({{1}, {2}}, O()):expand(-1, 2):totable())
      -- writing through a view changes the parent
      local m = ck.zeros(3, 4, O("f64"))
      m:narrow(2, 2, 3):fill(5)
      m:t():narrow(1, 1, 1):fill(-1)
      assert.same({{-1, 5, 5, 0}, {-1, 5, 5, 0}, {-1, 5, 5, 0}}, m:totable())
      -- reshape refuses non-contiguous views; contiguous() copies them
      assert.has_error(function() a:t() end)
      assert.has_error(function() a:transpose(1, 2):reshape(24) end)
      assert.equals(12, a:transpose(1, 2):contiguous():reshape(24):totable()[5])
    end)

    it("keeps a view's storage alive after its parent is collected", function()
      local v
      do
        local parent = ck.arange(100, O("f64")):reshape(10, 10)
        v = parent:narrow(1, 3, 4):t()
        collectgarbage(); collectgarbage() -- the intermediate views
        local _, refs = v:storage_id()
        assert.equals(2, refs) -- parent and v
        parent = nil
      end
      collectgarbage(); collectgarbage()
      local _, refs = v:storage_id()
      assert.equals(1, refs)
      assert.same({20, 30}, v:totable()[1]); assert.same({29, 39}, v:totable()[10])
    end)

    it("copy_ broadcasts and casts into an existing array and its views", function()
      local a = ck.zeros(3, 4, O("f64"))
      a:copy_(ck.array({1, 2, 3, 4}, O("i32")))
      assert.same({1, 2, 3, 4}, a:totable()[3])
      a:t():copy_(ck.arange(12, O("f32")):reshape(4, 3))
      assert.same({{0, 3, 6, 9}, {1, 4, 7, 10}, {2, 5, 8, 11}}, a:totable())
      assert.has_error(function() a:copy_(ck.zeros(2, 2, O())) end)
    end)

    it("copies between overlapping views as if through a snapshot, and refuses expanded destinations", function()
      local a = ck.array({1, 2, 3, 4, 5}, O("f64"))
      a:narrow(1, 2, 5):copy_(a:narrow(1, 1, 4))
      assert.same({1, 1, 2, 3, 4}, a:totable())
      local m = ck.arange(9, O("f64")):reshape(3, 3)
      m:copy_(m:t())
      assert.same({{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}, m:totable())
      if dev == "cuda" then -- big enough for the tiled transpose and for a vectorised copy
        local n = 1000
        local g = H.rand({n, n}, "f32", dev)
        local want = g:t():contiguous()
        g:copy_(g:t())
        H.assert_equal(g, want, "in-place transpose through copy_")
        local v = H.rand({1 << 20}, "f32", dev)
        local shifted = v:narrow(1, 1, (1 << 20) - 1):clone()
        v:narrow(1, 2, 1 << 20):copy_(v:narrow(1, 1, (1 << 20) - 1))
        H.assert_equal(v:narrow(1, 2, 1 << 20), shifted, "shift by one")
      end
      local ok, err = pcall(function() ck.zeros(1, 3, O()):expand(4, 3):copy_(ck.ones(4, 3, O())) end)
      assert.is_false(ok); assert.matches("expanded view", err)
      ok, err = pcall(function() ck.zeros(2, 2, O()):copy_(ck.ones(3, O())) end)
      assert.is_false(ok); assert.matches("copy_: source %[3%] cannot be broadcast to the destination %[2x2%]", err)
    end)

    it("prints a header and Octave-style values, eliding the middle of large arrays", function()
      local s = tostring(ck.arange(6, O("i32")):reshape(2, 3))
      assert.matches("i32 %[2x3%]", s)
      assert.matches("strides {3,1}", s)
      assert.matches(dev, s)
      assert.matches("0%s+1%s+2\n%s+3%s+4%s+5", s)
      local big = tostring(ck.arange(10000, O("f64")):reshape(100, 100))
      assert.matches("%.%.%.", big)
      assert.matches("9999", big)
      assert.is_true(#big < 2000)
      local many = tostring(ck.zeros(7, 7, 7, 7, 7, 7, O("i32"))) -- no long dim, but many elements
      assert.is_true(#many < 20000, "printed " .. #many .. " bytes")
      assert.matches("not contiguous", tostring(ck.zeros(3, 4, O()):t()))
      assert.matches("NaN", tostring(H.poison(ck.zeros(2, O()))))
      local x = ck.zeros(2, O())
      x:free()
      assert.matches("freed", tostring(x))
    end)

    it("frees explicitly and with <close>; use after free is an error", function()
      collectgarbage(); collectgarbage() -- so that no finaliser runs between the two readings
      local before = ck.memory()
      do
        local a <close> = ck.zeros(1000, O())
        assert.equals(1000, a:numel())
      end
      local b = ck.zeros(1000, O())
      b:free(); b:free() -- idempotent
      local ok, err = pcall(function() return b:numel() end)
      assert.is_false(ok); assert.matches("freed", err)
      ok, err = pcall(ck.matmul, b, b)
      assert.is_false(ok); assert.matches("freed", err)
      local after = ck.memory()
      if dev == "cuda" then assert.equals(before.in_use, after.in_use)
      else assert.equals(before.host_in_use, after.host_in_use) end
    end)

    it("gives clear errors for bad arguments", function()
      local function err(f, ...)
        local ok, e = pcall(f, ...)
        assert.is_false(ok, "expected an error")
        return e
      end
      assert.matches("cukern array", err(ck.matmul, 1, 2))
      assert.matches("not an integer", err(ck.zeros, {2, 1.5}, O()))
      assert.matches("integer", err(ck.zeros, 2, 1.5))
      assert.matches("negative", err(ck.zeros, {2, -3}, O()))
      assert.matches("overflow", err(ck.zeros, {2 ^ 31, 2 ^ 31, 8}, O()))
      assert.matches("unknown dtype 'f17'", err(ck.zeros, 2, {dtype = "f17", device = dev}))
      assert.matches("unknown device 'tpu'", err(ck.zeros, 2, {device = "tpu"}))
      assert.matches("unknown option", err(ck.zeros, 2, {dvice = "host"}))
      local a = ck.zeros(2, 3, O())
      assert.matches("dim out of range", err(a.narrow, a, 3, 1, 1))
      assert.matches("out of bounds", err(a.narrow, a, 2, 2, 4))
      assert.matches("out of bounds", err(a.select, a, 1, 3))
      assert.matches("cannot view", err(a.reshape, a, 4, 2))
      assert.matches("cannot expand", err(a.expand, a, 4, 3))
      assert.matches("repeated", err(a.permute, a, 1, 1))
      assert.matches("at most 8", err(ck.zeros, {1, 1, 1, 1, 1, 1, 1, 1, 1}, O()))
      -- the message points at the caller's line, not inside cukern
      assert.matches("core_spec.lua:%d+:", err(function() return a:reshape(5) end))
    end)
  end)
end

describe("GPU specifics", function()
  it("refuses to mix host and GPU operands", H.gpu(function()
    local a, b = ck.zeros(2, 2, {device = "host"}), ck.zeros(2, 2, {device = "cuda"})
    local ok, err = pcall(function() return a + b end)
    assert.is_false(ok); assert.matches("different devices", err)
    ok, err = pcall(ck.matmul, a, b)
    assert.is_false(ok); assert.matches("device", err)
  end))

  it("gives the same random values on host and GPU for one seed", H.gpu(function()
    for _, dt in ipairs {"f32", "f64"} do
      ck.seed(99)
      local h = ck.rand(1000, {device = "host", dtype = dt})
      ck.seed(99)
      local g = ck.rand(1000, {device = "cuda", dtype = dt})
      H.assert_equal(g:host(), h, "rand " .. dt)
      ck.seed(7)
      local hn = ck.randn(1000, {device = "host", dtype = dt})
      ck.seed(7)
      local gn = ck.randn(1000, {device = "cuda", dtype = dt})
      H.assert_close(gn:host(), hn, {rtol = 1e-6, atol = 1e-6}, "randn " .. dt)
    end
    ck.seed(H.seed)
  end))

  it("reports out-of-memory as a Lua error with the CUDA message and keeps working", H.gpu(function()
    local free = ck.device("cuda").free_mem
    local ok, err = pcall(ck.empty, math.floor(free / 4) * 4, {dtype = "f32", device = "cuda"}) -- 4x what is free
    assert.is_false(ok)
    assert.matches("out of device memory", err)
    assert.matches("out of memory", err) -- cudaGetErrorString(cudaErrorMemoryAllocation)
    assert.is_true(ck.memory("cuda").oom_retries >= 1)
    local a = ck.ones(1000, {device = "cuda"})
    assert.equals(1000, ck.sum(a):item())
  end))

  it("survives a second require of the module: live arrays keep working", function()
    local a = ck.ones(3)
    package.loaded["cukern.core"], package.loaded.cukern = nil, nil
    local ck2 = require "cukern"
    collectgarbage(); collectgarbage()
    assert.equals(3, (a + ck2.ones(3)):sum():item() / 2)
    a = nil
    collectgarbage(); collectgarbage()
    assert.equals(2, ck2.ones(2):sum():item())
  end)

  it("caches device memory: a freed block is reused without cudaMalloc", H.gpu(function()
    ck.empty_cache()
    local m0 = ck.memory("cuda")
    for _ = 1, 50 do local a <close> = ck.empty(1 << 20, {device = "cuda"}) end
    local m1 = ck.memory("cuda")
    assert.is_true(m1.cuda_mallocs - m0.cuda_mallocs <= 1)
    assert.is_true(m1.cache_hits - m0.cache_hits >= 49)
    assert.is_true(m1.cached > 0 and m1.peak >= m1.in_use)
    ck.empty_cache()
    -- what stays cached is only free small blocks in segments that other live arrays still use (not this 4 MiB one)
    local m2 = ck.memory("cuda")
    assert.is_true(m2.cached <= m2.segments and m2.cached < 4 << 20, ("cached %d, segments %d"):format(m2.cached, m2.segments))
  end))

  it("carves small blocks from 2 MiB segments: thousands of small arrays, one cudaMalloc, no two overlapping", H.gpu(function()
    collectgarbage(); collectgarbage()
    ck.empty_cache()
    local m0 = ck.memory("cuda")
    -- sizes across the small classes (512 B .. 64 KiB), each array filled with its own number
    local sizes, arrays = {1, 100, 129, 1000, 4096, 16384}, {}
    for i = 1, 600 do
      local n = sizes[i % #sizes + 1]
      arrays[i] = ck.full(n, i, {dtype = "f32", device = "cuda"})
    end
    local m1 = ck.memory("cuda")
    local bytes = 0
    for i = 1, 600 do bytes = bytes + 4 * sizes[i % #sizes + 1] end
    local segs = (m1.segments - m0.segments) / (2 << 20)
    assert.is_true(m1.cuda_mallocs - m0.cuda_mallocs == segs and segs <= bytes // (2 << 20) + 2,
      ("%d cudaMalloc calls, %d new segments for %d bytes"):format(m1.cuda_mallocs - m0.cuda_mallocs, segs, bytes))
    for i = 1, 600 do -- an overlap would have overwritten some array's numbers
      local a = arrays[i]
      assert.equals(i, ck.max(a):item(), "array " .. i)
      assert.equals(i, ck.min(a):item(), "array " .. i)
    end
    arrays = nil
    collectgarbage(); collectgarbage()
    ck.empty_cache()
    local m2 = ck.memory("cuda")
    assert.is_true(m2.segments <= m0.segments, ("segments %d after, %d before"):format(m2.segments, m0.segments))
    -- a freed small block is reused: the same class again takes no new cudaMalloc
    local m3 = ck.memory("cuda")
    for _ = 1, 20 do local x <close> = ck.ones(100, {device = "cuda"}) end
    assert.is_true(ck.memory("cuda").cuda_mallocs - m3.cuda_mallocs <= 1)
  end))

  it("collects dropped arrays before device memory runs out (device bytes count for the GC)", H.gpu(function()
    -- 40 x 1 GiB without freeing by hand: only works if the GC sees the device bytes or the OOM retry runs
    for _ = 1, 40 do local a = ck.empty(1 << 28, {device = "cuda"}) end
    assert.is_true(ck.memory("cuda").in_use < 40 * (1 << 30))
  end))

  it("in sync mode (CUKERN_SYNC=1), a device fault is reported at the launch that caused it", H.gpu(function()
    -- in a child process: an illegal address poisons the CUDA context for the rest of that process
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write([[
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
assert(ck.sync_mode(), "CUKERN_SYNC=1 did not turn sync mode on")
local k = ck.kernel('extern "C" __global__ void bad(float *p) { p[threadIdx.x + (1ll << 40)] = 1; }', "bad", {"f32*"})
local a = ck.zeros(4)
local ok, err = pcall(k.launch, k, 1, 32, a) -- line 7
io.write(tostring(ok), "\n", tostring(err), "\n")
]])
    f:close()
    local p = io.popen("CUKERN_SYNC=1 lua5.4 " .. script .. " 2>&1")
    local out = p:read("a")
    p:close()
    os.remove(script)
    assert.matches("^false\n", out)
    assert.matches("device fault %(CUKERN_SYNC%)", out)
    assert.matches(":7:", out) -- the Lua line of the launch, not a later read
    assert.matches("illegal", out)
  end, {alloc = false})) -- (the GPU work is the child's)

  it("runs work asynchronously: ops return before the GPU finishes; reading synchronises", H.gpu(function()
    local a = ck.rand(4096, 4096, {device = "cuda"})
    -- the result preallocated and the product warmed up (the cuBLAS handle, the kernel): the loop below then only
    -- queues launches. (With a fresh result per product, a first cudaMalloc of 64 MiB each took most of 10 ms when
    -- four spec files shared the GPU, round 3 session 14.)
    local c = a * a
    ck.sync("cuda")
    local t0 = ck.core.clock()
    for _ = 1, 5 do ck.matmul(a, a, {out = c}) end
    local issue = ck.core.clock() - t0
    local v = c:sum():item() -- synchronises
    local total = ck.core.clock() - t0
    assert.is_true(v == v)
    -- 5 products of 4096^2 take ~14 ms on the GPU; queueing them takes microseconds
    assert.is_true(issue < 0.25 * total, ("issue %.4f s, total %.4f s"):format(issue, total))
  end))
end)
