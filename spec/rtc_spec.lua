-- Run-time kernels: CUDA C++ from a Lua string, compiled by NVRTC, launched on the stream.
local H = require "spec.helpers"
local ck = H.ck

local AXPY = [[
extern "C" __global__ void axpy(float *y, const float *x, float a, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
template <typename T> __global__ void scale(T *v, T s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= s;
}
template __global__ void scale<double>(double *, double, int);
]]

-- Array descriptors: a 2-D kernel (strided reads and writes) and a flat one (the row-major index of any view).
local DESC_SRC = [[
extern "C" __global__ void scale2d(CkArray<float> out, CkArray<const float> x, float s) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < x.numel) {
    long long r = i / x.shape[1], c = i % x.shape[1];
    out(r, c) = s * x(r, c);
  }
}
extern "C" __global__ void flat(CkArray<double> out, CkArray<const double> x) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < x.numel) out[i] = x[i] + x.ndim + (x.contiguous() ? 100 : 0);
}]]

describe("run-time kernels", function()
  it("explains that they need a GPU when there is none", function()
    if H.has_cuda then return end
    local ok, err = pcall(ck.kernel, AXPY, "axpy", {"f32*", "const f32*", "f32", "i64"})
    assert.is_false(ok)
    assert.matches("need a CUDA device", err)
  end)

  it("compiles and launches a C kernel on strided views of any length", H.gpu(function()
    local k = ck.kernel(AXPY, "axpy", {"f32*", "const f32*", "f32", "i64"})
    for _, n in ipairs {1, 1000, 1 << 20 + 3} do
      local x, y = H.rand({n}, "f32", "cuda"), H.rand({n}, "f32", "cuda")
      local ref = (x:host() * 2.5 + y:host())
      k:launch(math.ceil(n / 256), 256, y, x, 2.5, n)
      H.assert_close(y, ref, H.tol("f32"), "axpy n=" .. n)
    end
    -- a narrowed view passes its offset pointer
    local base = ck.zeros(10, {device = "cuda"})
    local one = ck.ones(4, {device = "cuda"})
    k:launch(1, 32, base:narrow(1, 3, 6), one, 1.0, 4)
    assert.same({0, 0, 1, 1, 1, 1, 0, 0, 0, 0}, base:totable())
  end))

  it("instantiates C++ templates by name", H.gpu(function()
    local k = ck.kernel(AXPY, "scale<double>", {"f64*", "f64", "i32"})
    local v = ck.arange(100, {dtype = "f64", device = "cuda"})
    k:launch(1, 128, v, 3.0, 100)
    H.assert_close(v, ck.arange(100, {dtype = "f64"}) * 3, H.tol("f64"))
  end))

  it("reports compile errors with the log, and bad launches clearly", H.gpu(function()
    local ok, err = pcall(ck.kernel, "__global__ void bad() { undefined_thing(); }", "bad", {})
    assert.is_false(ok)
    assert.matches("compilation failed", err)
    assert.matches("undefined_thing", err)
    local k = ck.kernel(AXPY, "axpy", {"f32*", "const f32*", "f32", "i64"})
    local y = ck.zeros(4, {device = "cuda"})
    ok, err = pcall(k.launch, k, 1, 32, y, y, 1.0)
    assert.is_false(ok); assert.matches("3 arguments given, its signature has 4", err)
    ok, err = pcall(k.launch, k, 1, 32, y, ck.zeros(4, {device = "cuda", dtype = "f64"}), 1.0, 4)
    assert.is_false(ok); assert.matches("expected a f32 array", err)
    ok, err = pcall(k.launch, k, 1, 32, y, ck.zeros(4, {device = "host"}), 1.0, 4)
    assert.is_false(ok); assert.matches("cuda arrays", err)
    ok, err = pcall(k.launch, k, 1, 4096, y, y, 1.0, 4) -- 4096 threads per block is too many
    assert.is_false(ok); assert.matches("kernel 'axpy': block dim x = 4096 exceeds the device limit 1024", err, 1, true)
    ok, err = pcall(k.launch, k, {1, 70000}, 32, y, y, 1.0, 4)
    assert.is_false(ok); assert.matches("grid dim y = 70000 exceeds", err, 1, true)
    ok, err = pcall(k.launch, k, 1, 32, y, y, 1.0, 4, {smem = 1 << 30})
    assert.is_false(ok); assert.matches("kernel 'axpy': 1073741824 bytes of dynamic shared memory", err, 1, true)
    assert.equals(4, ck.ones(4, {device = "cuda"}):sum():item()) -- still working
  end))

  it("passes array descriptors (f32[]) so that kernels index strided views safely", H.gpu(function()
    local src = DESC_SRC
    local k = ck.kernel(src, "scale2d", "f32[], const f32[], f32") -- a signature string
    local x = H.rand({37, 50}, "f32", "cuda")
    local out = ck.zeros(50, 37, {device = "cuda"})
    k:launch(math.ceil(37 * 50 / 128), 128, out:t(), x, 3.0) -- a transposed output view
    H.assert_close(out:t(), x:host() * 3, H.tol("f32"))
    local xs = x:narrow(2, 3, 40) -- a narrowed input
    local o2 = ck.zeros(37, 38, {device = "cuda"})
    k:launch(math.ceil(37 * 38 / 128), 128, o2, xs, -1.0)
    H.assert_close(o2, xs:host() * -1, H.tol("f32"))
    local f = ck.kernel(src, "flat", {"f64[]", "const f64[]"})
    local x3 = H.rand({4, 5, 6}, "f64", "cuda"):permute(3, 1, 2)
    local o3 = ck.zeros(6, 4, 5, {dtype = "f64", device = "cuda"})
    f:launch(1, 128, o3, x3)
    H.assert_close(o3, x3:host() + 3, H.tol("f64"))
    -- never a reinterpretation: the dtype must match
    local ok, err = pcall(k.launch, k, 1, 32, out, H.rand({3}, "f64", "cuda"), 1.0)
    assert.is_false(ok); assert.matches("expected a f32 array, got f64", err, 1, true)
  end))

  it("describes a kernel: registers, shared and local memory, occupancy, PTX", H.gpu(function()
    local k = ck.kernel(AXPY, "axpy", {"f32*", "const f32*", "f32", "i64"})
    local info = k:info(256)
    assert.equals("axpy", info.name)
    assert.is_true(info.registers > 0 and info.registers <= 255)
    assert.is_true(info.max_threads >= 256)
    assert.equals(0, info.static_smem)
    assert.equals(0, info.local_bytes)
    assert.equals(256, info.block)
    assert.is_true(info.occupancy > 0 and info.occupancy <= 1)
    assert.matches(".entry axpy", k:ptx(), 1, true)
  end, {alloc = false}))
end)

-- ---------------------------------------------------------------- compiling and the disk cache (no GPU needed)

describe("run-time compilation and the kernel cache", function()
  local SRC = [[extern "C" __global__ void inc(float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += 1.0f;
}]]
  local dir
  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    ck.cache_dir(dir .. "/nested/cache")
  end)
  after_each(function()
    ck.cache_dir(false)
    os.execute("chmod -R u+w '" .. dir .. "' 2>/dev/null; rm -rf '" .. dir .. "'")
  end)

  local function entry_file(key) return dir .. "/nested/cache/" .. key .. ".ckbin" end

  it("misses, then hits; the key covers the source, options and architecture", function()
    local a = ck.kernel_build(SRC, "inc", {arch = "sm_90"})
    assert.equals("miss", a.cache)
    assert.is_true(a.cubin_bytes > 0)
    assert.matches(".entry inc", a.ptx, 1, true)
    local f = io.open(entry_file(a.key), "rb")
    assert.is_not_nil(f); f:close()
    local b = ck.kernel_build(SRC, "inc", {arch = "sm_90"})
    assert.equals("hit", b.cache)
    assert.equals(a.key, b.key)
    assert.equals(a.cubin_bytes, b.cubin_bytes)
    assert.equals(a.ptx, b.ptx)
    assert.equals("miss", ck.kernel_build(SRC .. "\n", "inc", {arch = "sm_90"}).cache)
    assert.equals("miss", ck.kernel_build(SRC, "inc", {arch = "sm_90", options = {"-lineinfo"}}).cache)
    local c = ck.kernel_build(SRC, "inc", {arch = "sm_80"})
    assert.equals("miss", c.cache)
    assert.are_not.equal(a.key, c.key)
    -- no temporary files are left behind
    local p = io.popen("ls '" .. dir .. "/nested/cache'")
    for name in p:lines() do assert.matches("%.ckbin$", name) end
    p:close()
  end)

  it("detects a corrupt or truncated entry and rebuilds it", function()
    local a = ck.kernel_build(SRC, "inc", {arch = "sm_90"})
    local path = entry_file(a.key)
    local f = io.open(path, "rb"); local bytes = f:read("a"); f:close()
    -- a flipped byte in the payload
    local i = #bytes - 100
    f = io.open(path, "wb"); f:write(bytes:sub(1, i - 1), string.char((bytes:byte(i) + 1) % 256), bytes:sub(i + 1)); f:close()
    assert.equals("rebuilt (corrupt)", ck.kernel_build(SRC, "inc", {arch = "sm_90"}).cache)
    assert.equals("hit", ck.kernel_build(SRC, "inc", {arch = "sm_90"}).cache)
    -- truncated
    f = io.open(path, "wb"); f:write(bytes:sub(1, #bytes // 2)); f:close()
    assert.equals("rebuilt (corrupt)", ck.kernel_build(SRC, "inc", {arch = "sm_90"}).cache)
    -- empty, and foreign
    f = io.open(path, "wb"); f:close()
    assert.equals("rebuilt (corrupt)", ck.kernel_build(SRC, "inc", {arch = "sm_90"}).cache)
    f = io.open(path, "wb"); f:write(("x"):rep(5000)); f:close()
    local r = ck.kernel_build(SRC, "inc", {arch = "sm_90"})
    assert.equals("rebuilt (corrupt)", r.cache)
    assert.equals(a.cubin_bytes, r.cubin_bytes)
  end)

  it("works without a usable directory: no cache, no error", function()
    -- a path below a regular file can never be created (chmod does not stop root)
    local file = os.tmpname()
    ck.cache_dir(file .. "/cache")
    local r = ck.kernel_build(SRC, "inc", {arch = "sm_90"})
    assert.equals("unwritable", r.cache)
    assert.is_true(r.cubin_bytes > 0)
    os.remove(file)
    -- a read-only directory (effective for users other than root)
    os.execute("mkdir -p '" .. dir .. "/ro' && chmod 555 '" .. dir .. "/ro'")
    ck.cache_dir(dir .. "/ro")
    r = ck.kernel_build(SRC, "inc", {arch = "sm_90"})
    assert.is_true(r.cache == "unwritable" or r.cache == "miss", r.cache)
    ck.cache_dir("off")
    assert.equals("", ck.cache_dir())
    assert.equals("off", ck.kernel_build(SRC, "inc", {arch = "sm_90"}).cache)
  end)

  it("survives processes building the same entry at once (temp file + rename)", function()
    local cdir = dir .. "/nested/cache"
    local script = os.tmpname()
    local f = io.open(script, "w")
    f:write(([[
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
ck.cache_dir(%q)
local r = ck.kernel_build(%q, "inc", {arch = "sm_90"})
print(r.cache, r.cubin_bytes)
]]):format(cdir, SRC))
    f:close()
    local out = os.tmpname()
    local cmd = {}
    for i = 1, 4 do cmd[#cmd + 1] = ("lua5.4 %s > %s.%d 2>&1 &"):format(script, out, i) end
    assert.is_true(os.execute(table.concat(cmd, " ") .. " wait") == true)
    local sizes = {}
    for i = 1, 4 do
      local g = io.open(out .. "." .. i)
      local line = g:read("a")
      g:close()
      os.remove(out .. "." .. i)
      local state, bytes = line:match("^(%S+)%s+(%d+)")
      assert(state == "miss" or state == "hit", "process " .. i .. ": " .. line)
      sizes[#sizes + 1] = tonumber(bytes)
    end
    os.remove(script); os.remove(out)
    for i = 2, 4 do assert.equals(sizes[1], sizes[i]) end
    assert.equals("hit", ck.kernel_build(SRC, "inc", {arch = "sm_90"}).cache)
  end)

  it("shows compile errors with the log and the offending source lines", function()
    local ok, err = pcall(ck.kernel_build, "extern \"C\" __global__ void bad(float *v) {\n  v[0] = 1;\n  undefined_thing(v);\n}",
      "bad", {arch = "sm_90"})
    assert.is_false(ok)
    assert.matches("compilation failed", err, 1, true)
    assert.matches("undefined_thing", err, 1, true)
    assert.matches("cukern_kernel.cu(3)", err, 1, true)
    assert.matches("    3 |   undefined_thing(v);", err, 1, true)
  end)

  it("pre-includes cukern.h: array descriptors compile for any dtype", function()
    local r = ck.kernel_build([[extern "C" __global__ void k(CkArray<float> a, CkArray<const double> b, CkArray<int> c) {
  if (a.contiguous()) a[0] = (float)b(0) + c.size(0);
}]], "k", {arch = "sm_90"})
    assert.is_true(r.cubin_bytes > 0)
  end)
end)


describe("array descriptors under a CPU emulation of CUDA (g++)", function()
  local E = require "spec.cuda_emu"
  local SRC = DESC_SRC

  it("index strided views the way ck.kernel passes them", function()
    if not E.available() then return pending("g++ with C++20 <barrier> not found") end
    local x = H.rand({7, 5}, "f32")
    local out = ck.zeros(5, 7)
    local r = E.run_raw(SRC, "scale2d", 1, 64, {out:t(), {array = x}, {3.0, "float"}})
    H.assert_close(ck.array(r[1]):reshape(7, 5), x * 3, H.tol("f32"), "transposed out")
    local xs = H.rand({6, 9}, "f32"):narrow(2, 2, 8)
    r = E.run_raw(SRC, "scale2d", 1, 64, {ck.zeros(6, 7), {array = xs}, {-1.0, "float"}})
    H.assert_close(ck.array(r[1]):reshape(6, 7), xs * -1, H.tol("f32"), "narrowed in")
    local x3 = H.rand({4, 5, 6}, "f64"):permute(3, 1, 2)
    r = E.run_raw(SRC, "flat", 2, 64, {ck.zeros(6, 4, 5, {dtype = "f64"}), {array = x3}})
    H.assert_close(ck.array(r[1], {dtype = "f64"}):reshape(6, 4, 5), x3 + 3, H.tol("f64"), "permuted, row-major index")
    local xc = H.rand({3, 4}, "f64")
    r = E.run_raw(SRC, "flat", 1, 32, {ck.zeros(3, 4, {dtype = "f64"}), {array = xc}})
    H.assert_close(ck.array(r[1], {dtype = "f64"}):reshape(3, 4), xc + 102, H.tol("f64"), "contiguous()")
  end)
end)
