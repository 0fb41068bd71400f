--- cukern.conv: MATLAB's conv and conv2 (issue 35), on either backend.
--   ck.conv(a, k [, {mode = "full" | "same" | "valid", variant = "direct" | "fft"}])   1-D vectors, or 2-D arrays
--   ck.conv2(a, k [, opts])                                                          2-D (a vector is a 1 x n row)
-- mode as MATLAB: "full" (the default: size(a) + size(k) - 1 per dim), "same" (the central part of a's size,
-- starting at floor(size(k) / 2) + 1), "valid" (only where k lies inside a: max(size(a) - size(k) + 1, 0)).
-- Two ways, both listed by ck.variants("conv"), picked by the kernel's size unless a variant is named:
--   direct  out(i, j) = sum k(p, q) a(i - p, j - q): on a GPU one run-time kernel (NVRTC, compiled once per
--           dtype) over 32 x 32 output tiles with the input tile and k in shared memory; on the host one scaled
--           add of a per tap. Taken for kernels of up to DIRECT_MAX = 1024 elements (31^2 included), real inputs.
--   fft     both padded to the full size (rounded up to a product of 2, 3, 5 and 7), transformed (rfft along the last dim, fft along the first), multiplied,
--           transformed back (ifft, irfft) and cut to the mode: O(L log L) whatever the kernel's size.
-- Real inputs give f32 (f64 if either is f64 or an integer); complex inputs (either) go through "fft" and give
-- complex results.
local errors, args, options = require "cukern.errors", require "cukern.args", require "cukern.options"
local raise, fail, where_of = errors.raise, errors.fail, errors.where_of
local check_live = args.check_live

local C = {}
local fmt, pcall, ipairs = string.format, pcall, ipairs

local DIRECT_MAX = 1024
local OPTS = options.set("mode", "variant")
local RULES = {
  mode = function(v) return v == "full" or v == "same" or v == "valid", '"full", "same" or "valid"' end,
  variant = function(v) return v == "direct" or v == "fft" or v == 1 or v == 2, '"direct" or "fft"' end,
}
local VARIANTS = {
  {id = 1, name = "direct", dtypes = {"f32", "f64"},
   summary = "direct sums: a run-time CUDA kernel over 32x32 output tiles (input tile and kernel in shared memory); "
          .. "host: a scaled add per tap. Kernels up to 1024 elements"},
  {id = 2, name = "fft", dtypes = {"f32", "f64", "c64", "c128"},
   summary = "FFT convolution: pad to the full size, rfft/fft, multiply, ifft/irfft, cut to the mode"},
}

local function desc(a) return fmt("%s[%s]", a:dtype(), table.concat(a:shape(), "x")) end
local function is_complex(a) return args.COMPLEX_PART[a:dtype()] ~= nil end
local function real_dtype(a, k)
  local wide = function(x) local d = x:dtype(); return d == "f64" or not d:match("f") end
  return (wide(a) or wide(k)) and "f64" or "f32"
end

-- The first index (0-based, into the full result) and the length of a mode along one dim.
local function span(mode, na, nk)
  if mode == "same" then return nk // 2, na end
  if mode == "valid" then return nk - 1, math.max(na - nk + 1, 0) end
  return 0, na + nk - 1
end

-- The mode's part of the full result: mo x no from (r0, c0) (0-based), as a new array.
local function cut(full, r0, c0, mo, no)
  return full:narrow(1, r0 + 1, r0 + mo):narrow(2, c0 + 1, c0 + no):contiguous()
end

-- ---------------------------------------------------------------- direct

local SRC = [[
extern "C" __global__ void ck_conv2_direct(REAL *out, const REAL *a, const REAL *k, long long ma, long long na,
    long long mk, long long nk, long long mo, long long no, long long r0, long long c0, long long ty) {
  /* out(i, j) = sum_{p,q} a(i + r0 - p, j + c0 - q) k(p, q) over a's bounds: ty x 32 outputs per 32 x 8 block, the
     (ty + mk - 1) x (32 + nk - 1) input tile and k in shared memory */
  extern __shared__ unsigned char raw[];
  REAL *ks = (REAL *)raw, *tile = ks + mk * nk;
  const long long i0 = (long long)blockIdx.y * ty, j0 = (long long)blockIdx.x * 32, th = ty + mk - 1, tw = 32 + nk - 1;
  const int tid = threadIdx.y * 32 + threadIdx.x;
  for (long long e = tid; e < mk * nk; e += 256) ks[e] = k[e];
  for (long long e = tid; e < th * tw; e += 256) {
    const long long ai = i0 + r0 - (mk - 1) + e / tw, aj = j0 + c0 - (nk - 1) + e % tw;
    tile[e] = ai >= 0 && ai < ma && aj >= 0 && aj < na ? a[ai * na + aj] : (REAL)0;
  }
  __syncthreads();
  /* each thread: rows threadIdx.y + 8 r (r < 4) of column x, sharing every load of k between its four sums */
  const int x = threadIdx.x;
  REAL acc[4] = {0, 0, 0, 0};
  for (long long p = 0; p < mk; ++p) {
    const REAL *row = tile + (threadIdx.y + mk - 1 - p) * tw + x + nk - 1;
    for (long long q = 0; q < nk; ++q) {
      const REAL kv = ks[p * nk + q];
#pragma unroll
      for (int r = 0; r < 4; ++r)
        if (threadIdx.y + 8 * r < ty) acc[r] += row[8 * r * tw - q] * kv;
    }
  }
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const long long y = threadIdx.y + 8 * r;
    if (y < ty && i0 + y < mo && j0 + x < no) out[(i0 + y) * no + j0 + x] = acc[r];
  }
}
]]
local kernels = {} -- per dtype, compiled on first use
local SMEM_MAX = 48 * 1024

-- Rows of outputs per block (32, or fewer for short results) and the shared memory the kernel needs.
local function tiling(mo, mk, nk, dt)
  local ty = mo < 32 and math.max(mo, 1) or 32
  return ty, (mk * nk + (ty + mk - 1) * (32 + nk - 1)) * (dt == "f64" and 8 or 4)
end

local function direct_gpu(ck, a, k, dt, r0, c0, mo, no)
  local kern = kernels[dt]
  if not kern then
    kern = ck.kernel(SRC:gsub("REAL", dt == "f64" and "double" or "float"), "ck_conv2_direct",
                     {dt .. "*", "const " .. dt .. "*", "const " .. dt .. "*", "i64", "i64", "i64", "i64", "i64", "i64",
                      "i64", "i64", "i64"})
    kernels[dt] = kern
  end
  local out = ck.empty({mo, no}, {dtype = dt, device = a:device()})
  if mo == 0 or no == 0 then return out end
  local ma, na, mk, nk = a:shape()[1], a:shape()[2], k:shape()[1], k:shape()[2]
  local ty, smem = tiling(mo, mk, nk, dt)
  kern:launch({(no + 31) // 32, (mo + ty - 1) // ty, 1}, {32, 8, 1}, out, a, k, ma, na, mk, nk, mo, no, r0, c0, ty,
              {smem = smem})
  return out
end

-- The host's direct sum: one scaled add of a into the full result per tap, then the mode's part.
local function direct_host(ck, a, k, dt, r0, c0, mo, no)
  local ma, na, mk, nk = a:shape()[1], a:shape()[2], k:shape()[1], k:shape()[2]
  local full = ck.zeros({ma + mk - 1, na + nk - 1}, {dtype = dt, device = a:device()})
  local kv = k:flat()
  for p = 0, mk - 1 do
    for q = 0, nk - 1 do
      local v = kv[p * nk + q + 1]
      if v ~= 0 then full:narrow(1, p + 1, p + ma):narrow(2, q + 1, q + na):add_(ck.mul(a, v)) end
    end
  end
  return cut(full, r0, c0, mo, no)
end

-- ---------------------------------------------------------------- fft

-- The smallest 2^a 3^b 5^c 7^d >= n (scipy's next_fast_len): a transform of that length runs on radix 2-7 passes,
-- where the full size itself may have a large prime factor (4096 + 512 - 1 = 17 * 271) and take Bluestein's path.
local function fast_len(n)
  local best = 1
  while best < n do best = best * 2 end
  for _, p in ipairs {1, 7, 49, 343} do
    local q = p
    while q < best do
      local r = q
      while r < best do
        local t = r
        while t < n do t = t * 2 end
        if t < best then best = t end
        r = r * 3
      end
      q = q * 5
    end
  end
  return best
end

-- a (2-D) transformed over both dims at the full size {L1, L2}: rfft along dim 2 for real a, then fft along dim 1.
local function forward(ck, a, L1, L2)
  local t = is_complex(a) and ck.fft(a, L2, 2) or ck.rfft(a, L2, 2)
  return ck.fft(t, L1, 1)
end

local function via_fft(ck, a, k, cplx, r0, c0, mo, no)
  local L1, L2 = fast_len(a:shape()[1] + k:shape()[1] - 1), fast_len(a:shape()[2] + k:shape()[2] - 1)
  local P = ck.mul(forward(ck, a, L1, L2), forward(ck, k, L1, L2))
  local t = ck.ifft(P, L1, 1)
  local full = cplx and ck.ifft(t, L2, 2) or ck.irfft(t, L2, 2)
  return cut(full, r0, c0, mo, no)
end

-- ---------------------------------------------------------------- the functions

local function conv_fn(ck, name, two)
  local where = where_of("ck." .. name)
  return function(a, k, opts)
    check_live(where, a, "argument 1")
    check_live(where, k, "argument 2")
    local problem = opts ~= nil and options.problem(where, opts, OPTS, RULES)
    if problem then raise(where .. ": " .. problem) end
    local o = opts or {}
    local mode = o.mode or "full"
    local nd = math.max(a:ndim(), k:ndim())
    if a:ndim() > 2 or k:ndim() > 2 or (not two and a:ndim() ~= k:ndim()) then
      raise(fmt("%s: takes two vectors or two matrices%s, got %s and %s", where,
        two and "" or " (ck.conv2 takes a vector with a matrix)", desc(a), desc(k)))
    end
    if a:device() ~= k:device() then
      raise(fmt("%s: a is on %s and k on %s; move one with :to(\"%s\")", where, a:device(), k:device(), a:device()))
    end
    local rows = function(x) return x:ndim() == 2 and x or x:reshape(1, math.max(x:numel(), 0)) end
    local A, K = rows(a), rows(k)
    if A:numel() == 0 or K:numel() == 0 then
      raise(fmt("%s: a and k must not be empty (got %s and %s)", where, desc(a), desc(k)))
    end
    local cplx = is_complex(A) or is_complex(K)
    local r0, mo = span(mode, A:shape()[1], K:shape()[1])
    local c0, no = span(mode, A:shape()[2], K:shape()[2])
    local variant = o.variant == 1 and "direct" or o.variant == 2 and "fft" or o.variant
    local on_gpu = A:device():match("^cuda") ~= nil
    local fits = not on_gpu or select(2, tiling(mo, K:shape()[1], K:shape()[2], real_dtype(A, K))) <= SMEM_MAX
    if variant == nil then variant = (not cplx and K:numel() <= DIRECT_MAX and fits) and "direct" or "fft" end
    if variant == "direct" and cplx then
      raise(fmt("%s: the direct variant takes real inputs (got %s and %s); use variant = \"fft\"", where, a:dtype(), k:dtype()))
    end
    if variant == "direct" and not fits then
      raise(fmt("%s: the direct variant's tiles of a %dx%d kernel do not fit one block's shared memory; use variant = \"fft\"",
        where, K:shape()[1], K:shape()[2]))
    end
    local ok, r = pcall(function()
      if variant == "fft" then
        if not cplx then local dt = real_dtype(A, K); A, K = A:to(dt), K:to(dt) end
        return via_fft(ck, A, K, cplx, r0, c0, mo, no)
      end
      local dt = real_dtype(A, K)
      A, K = A:to(dt):contiguous(), K:to(dt):contiguous()
      local f = on_gpu and direct_gpu or direct_host
      return f(ck, A, K, dt, r0, c0, mo, no)
    end)
    if not ok then fail(where, r) end
    if nd == 1 then r = r:reshape(r:numel()) end
    return r
  end
end

function C.install(ck)
  ck.conv, ck.conv2 = conv_fn(ck, "conv", false), conv_fn(ck, "conv2", true)
end

--- ck.variants("conv"): fresh records of the two ways (ck.variants sets their metatables).
function C.variant_list()
  local list = {}
  for i, v in ipairs(VARIANTS) do
    list[i] = {id = v.id, name = v.name, summary = v.summary, dtypes = {table.unpack(v.dtypes)}, library = false}
  end
  return list
end

return C
