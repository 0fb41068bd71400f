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
    assert.is_false(ok); assert.matches("launch", err)
    assert.equals(4, ck.ones(4, {device = "cuda"}):sum():item()) -- still working
  end))
end)
