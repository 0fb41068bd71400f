-- Matrix products: ck.matmul, ck.gemm, a * b.
--  * the host reference (ck_host_matmul) against a plain Lua triple loop: small shapes, f32/f64/i32, strided
--    and transposed views, batches with broadcast, alpha/beta, k == 0;
--  * semantics on every backend: shapes of results, errors (inner dims, dtypes, ranks, batches, outputs),
--    beta == 0 never reading C (NaN-poisoned), outputs that alias an input;
--  * on the GPU: every registered variant x its dtypes x shapes {1x1x1, 1xNx1, Nx1xK, 7x13x5, 127x255x63,
--    1000^3, 4097x4095x33, transposed A / B / both, misaligned slices, 3-D batches incl. a broadcast 2-D or
--    batch-1 operand} x alpha/beta, against the host reference computed in f64 from the same inputs.
--
-- Tolerance. The reference is exact to f64 rounding. A kernel forms each result as a sum of k products in
-- its own order (sequential per thread, or split). Any order of n additions errs by at most
-- (n-1)*eps*sum|a_p*b_p|, and with random signs the rounding errors behave like a random walk over partial
-- sums of size ~sqrt(p)*rms(ab): sigma ~ 0.2*eps*k*rms(ab) <= 0.2*eps*sum|ab|*(rms/mean) ~ 0.3*eps*sum|ab|
-- for inputs uniform in [-1, 1). We accept |got - ref| <= 4*eps*mag + 4*eps*|ref| + tiny, where
-- mag = |alpha| * (|A| @ |B|) + |beta| * |C0| is computed per element (also on the host, in f64): > 13 sigma
-- of the random-walk error, yet a wrong index, a skipped k tile or a missed alpha/beta term is off by ~|ab|,
-- far outside. (In rtol terms this is ~eps*sqrt(k) relative to |ref| ~ sqrt(k)*rms(ab): 1.2e-7*sqrt(K)*const
-- for f32.) eps = 2^-23 (f32), 2^-52 (f64); i32 is exact (sums wrap modulo 2^32 on every backend).
local H = require "spec.helpers"
local ck = H.ck

local EPS = {f32 = 2 ^ -23, f64 = 2 ^ -52}

local gpu = H.gpu -- pending with the reason where there is no GPU

local function shape_str(a) return "[" .. table.concat(a:shape(), "x") .. "]" end

-- ---------------------------------------------------------------- plain Lua reference

local function wrap32(v) v = v & 0xffffffff; if v >= 0x80000000 then v = v - 0x100000000 end; return v end

--- Nested tables (2-D or 3-D) of a host array.
local function tab(a) return a:to("host"):totable() end

--- Lua triple loop: alpha * A @ B + beta * C0 with the same batch broadcast rules; f64 (or exact i32).
local function lua_gemm(A, B, C0, alpha, beta, dt)
  local function mats(t, nd) if nd == 2 then return {t} end return t end
  local a3, b3 = mats(tab(A), A:ndim()), mats(tab(B), B:ndim())
  local batch = math.max(#a3, #b3)
  local out = {}
  local c3 = C0 and mats(tab(C0), C0:ndim())
  for z = 1, batch do
    local a, b = a3[#a3 == 1 and 1 or z], b3[#b3 == 1 and 1 or z]
    local m, k, n = #a, #b, (#b > 0 and #b[1] or B:size(B:ndim()))
    local o = {}
    for i = 1, m do
      o[i] = {}
      for j = 1, n do
        local s = dt == "i32" and 0 or 0.0
        for p = 1, k do s = s + a[i][p] * b[p][j] end
        local cv = (beta ~= 0 and c3) and c3[z][i][j] or 0
        if dt == "i32" then
          o[i][j] = wrap32(math.tointeger(alpha) * s + math.tointeger(beta) * cv)
        else
          o[i][j] = alpha * s + (beta ~= 0 and beta * cv or 0)
        end
      end
    end
    out[z] = o
  end
  return out
end

local function compare_tables(got, ref, dt, label)
  local g = tab(got)
  if got:ndim() == 2 then g = {g} end
  for z = 1, #ref do
    for i = 1, #ref[z] do
      for j = 1, #ref[z][i] do
        local x, r = g[z][i][j], ref[z][i][j]
        local ok = dt == "i32" and x == r or (x == x and math.abs(x - r) <= 1e-5 * (1 + math.abs(r)))
        assert(ok, ("%s: [%d][%d][%d] got %.17g expected %.17g (seed %d)"):format(label, z, i, j, x, r, H.seed))
      end
    end
  end
end

-- ---------------------------------------------------------------- checks against the f64 host reference

--- Reference and per-element magnitude (|alpha| |A|@|B| + |beta| |C0|), both f64 on the host.
local function reference(a, b, c0, alpha, beta)
  local a64, b64 = a:to("host", "f64"), b:to("host", "f64")
  local ref = ck.matmul(a64, b64) * alpha
  local mag = ck.matmul(a64:abs(), b64:abs()) * math.abs(alpha)
  if beta ~= 0 then
    local c64 = c0:to("host", "f64")
    ref = ref + c64 * beta
    mag = mag + c64:abs() * math.abs(beta)
  end
  return ref, mag
end

--- got (any device, f32/f64) within 4*eps*(mag + |ref|) of ref everywhere; NaN fails. Computed on got's
-- device (the big cases stay on the GPU); `on` caches ref and mag per device.
local function check(got, ref, mag, dt, label, on)
  assert(shape_str(got) == shape_str(ref), ("%s: shape %s, expected %s"):format(label, shape_str(got), shape_str(ref)))
  if got:numel() == 0 then return end
  local dev = got:device()
  on = on or {}
  if not on[dev] then on[dev] = {ref:to(dev), mag:to(dev)} end
  local r, m = on[dev][1], on[dev][2]
  local eps = EPS[dt]
  local excess = (got:to(dev, "f64") - r):abs() - (m * (4 * eps) + r:abs() * (4 * eps) + 1e-300)
  local flat = excess:reshape(-1)
  local worst = ck.max(flat):item()
  if worst <= 0 then return end -- (NaN fails this test)
  local i = ck.argmax(flat):item()
  local g = got:to("host", "f64"):reshape(-1):flat()[i]
  local e = ref:reshape(-1):flat()[i]
  error(("%s: flat index %d: got %.10g, expected %.10g (error exceeds the bound by %.3g; seed %d)")
    :format(label, i, g, e, worst, H.seed), 2)
end

-- ---------------------------------------------------------------- host reference vs Lua loops

describe("matmul host reference", function()
  it("matches a Lua triple loop (f32, f64, i32; views, batches, alpha/beta)", function()
    local cases = {
      {{1, 1}, {1, 1}}, {{1, 5}, {5, 1}}, {{4, 1}, {1, 3}}, {{3, 5}, {5, 4}}, {{7, 13}, {13, 5}},
      {{2, 3, 4}, {2, 4, 5}}, {{3, 4}, {2, 4, 5}}, {{2, 3, 4}, {4, 2}}, {{1, 3, 4}, {3, 4, 2}},
    }
    for _, dt in ipairs {"f32", "f64", "i32"} do
      for ci, c in ipairs(cases) do
        local a, b = H.rand(c[1], dt), H.rand(c[2], dt)
        local label = ("%s case %d %s x %s"):format(dt, ci, shape_str(a), shape_str(b))
        compare_tables(ck.matmul(a, b), lua_gemm(a, b, nil, 1, 0, dt), dt, label)
        compare_tables(a * b, lua_gemm(a, b, nil, 1, 0, dt), dt, label .. " (a * b)")
        -- alpha/beta into an existing C
        local c0 = H.rand(ck.matmul(a, b):shape(), dt)
        local cc = c0:clone()
        ck.gemm(cc, a, b, 2, -3)
        compare_tables(cc, lua_gemm(a, b, c0, 2, -3, dt), dt, label .. " alpha 2 beta -3")
      end
      -- transposed and sliced operands (any strides)
      local at = H.rand({6, 4}, dt):t()            -- [4x6], strides {1, 4}
      local bs = H.rand({9, 7}, dt):narrow(1, 2, 7):narrow(2, 3, 5) -- [6x3] inside a 9x7
      compare_tables(ck.matmul(at, bs), lua_gemm(at, bs, nil, 1, 0, dt), dt, dt .. " transposed x sliced")
      local b3 = H.rand({2, 5, 6}, dt):transpose(2, 3) -- [2x6x5] batch of transposes
      compare_tables(ck.matmul(at, b3), lua_gemm(at, b3, nil, 1, 0, dt), dt, dt .. " 2-D x transposed 3-D")
    end
  end)

  it("gives beta*C for k == 0 and never reads C when beta == 0", function()
    for _, dt in ipairs {"f32", "f64"} do
      local a, b = ck.empty({3, 0}, {dtype = dt, device = "host"}), ck.empty({0, 4}, {dtype = dt, device = "host"})
      local c = ck.matmul(a, b)
      assert.same({3, 4}, c:shape())
      H.assert_equal(c, ck.zeros({3, 4}, {dtype = dt, device = "host"}), dt .. " k == 0")
      local c0 = H.rand({3, 4}, dt)
      local cc = c0:clone()
      ck.gemm(cc, a, b, 1, 0.5)
      H.assert_close(cc, c0 * 0.5, H.tol(dt), dt .. " k == 0, beta 0.5")
      -- beta == 0: a NaN-poisoned C must not leak into the result
      local x, y = H.rand({5, 7}, dt), H.rand({7, 3}, dt)
      local p = H.poison(ck.empty({5, 3}, {dtype = dt, device = "host"}))
      ck.gemm(p, x, y, 1, 0)
      H.assert_close(p, ck.matmul(x, y), H.tol(dt), dt .. " beta 0 on NaN C")
      H.poison(p)
      ck.gemm(p, ck.empty({5, 0}, {dtype = dt, device = "host"}), ck.empty({0, 3}, {dtype = dt, device = "host"}), 1, 0)
      H.assert_equal(p, ck.zeros({5, 3}, {dtype = dt, device = "host"}), dt .. " k == 0, beta 0 on NaN C")
    end
    local e = ck.matmul(ck.empty({0, 5}, {device = "host"}), ck.empty({5, 4}, {device = "host"}))
    assert.same({0, 4}, e:shape())
  end)

  it("handles an output that aliases an input", function()
    local a, b = H.rand({4, 4}, "f64"), H.rand({4, 4}, "f64")
    local ref = lua_gemm(a, b, a, 1, 1, "f64")
    ck.gemm(a, a, b, 1, 1)
    compare_tables(a, ref, "f64", "C = A@B + C with C == A")
  end)

  it("stays quick: 1000 x 1000 x 1000 f32 on one core", function()
    local a, b = H.rand({1000, 1000}), H.rand({1000, 1000})
    local t0 = os.clock()
    local c = a * b
    local dt = os.clock() - t0
    assert.is_true(dt < 10, ("host matmul 1000^3 took %.2f s"):format(dt))
    -- spot-check one element against a Lua dot product in f64
    local ra, cb = a:select(1, 17):to("f64"):flat(), b:select(2, 401):to("f64"):flat()
    local s = 0.0
    for p = 1, 1000 do s = s + ra[p] * cb[p] end
    local got = c:slice{{17, 17}, {401, 401}}:item()
    assert.is_true(math.abs(got - s) <= 1e-5 * (1 + math.abs(s)), ("c[17,401] = %.9g, expected %.9g"):format(got, s))
  end)
end)

-- ---------------------------------------------------------------- semantics and errors (every backend)

describe("matmul semantics", function()
  for _, dev in ipairs(H.devices()) do
    it("gives the documented result shapes on " .. dev, function()
      local function sh(a, b) return table.concat(ck.matmul(a, b):shape(), "x") end
      local function r(...) return H.rand({...}, "f32", dev) end
      assert.equal("3x5", sh(r(3, 4), r(4, 5)))
      assert.equal("2x3x5", sh(r(2, 3, 4), r(2, 4, 5)))
      assert.equal("2x3x5", sh(r(3, 4), r(2, 4, 5)))
      assert.equal("2x3x5", sh(r(2, 3, 4), r(4, 5)))
      assert.equal("4x3x5", sh(r(1, 3, 4), r(4, 4, 5)))
      assert.equal("1x3x5", sh(r(1, 3, 4), r(1, 4, 5)))
    end)

    it("reports errors clearly on " .. dev, function()
      local function err(f)
        local ok, e = pcall(f)
        assert.is_false(ok)
        return tostring(e)
      end
      local a, b = H.rand({3, 4}, "f32", dev), H.rand({5, 6}, "f32", dev)
      local e = err(function() return a * b end)
      assert.truthy(e:find("matmul", 1, true) and e:find("[3x4]", 1, true) and e:find("[5x6]", 1, true), e)
      local ab = H.rand({4, 2}, "f64", dev) -- f32 x f64 promotes to f64, as elementwise ops do
      local p = ck.matmul(a, ab)
      assert.equal("f64", p:dtype())
      local ok_p, msg_p = H.allclose(p, ck.matmul(a:to("f64"), ab), H.tol("f64"))
      assert.truthy(ok_p, msg_p)
      e = err(function() return ck.matmul(H.rand({4}, "f32", dev), H.rand({4, 2}, "f32", dev)) end)
      assert.truthy(e:find("2-D", 1, true), e)
      e = err(function() return ck.matmul(H.rand({2, 3, 4}, "f32", dev), H.rand({3, 4, 5}, "f32", dev)) end)
      assert.truthy(e:find("batch", 1, true), e)
      e = err(function() return ck.matmul(a, H.rand({4, 2}, "f32", dev), {out = ck.empty({3, 3}, {device = dev})}) end)
      assert.truthy(e:find("out has shape [3x3]", 1, true) and e:find("[3x2]", 1, true), e)
      e = err(function() return ck.matmul(a, H.rand({4, 2}, "f32", dev), {out = ck.empty({3, 2}, {dtype = "f64", device = dev})}) end)
      assert.truthy(e:find("out is f64 but the result is f32", 1, true), e)
      if dev == "cuda" then
        e = err(function() return ck.matmul(a, H.rand({4, 2}, "f32", "host")) end)
        assert.truthy(e:find("matmul", 1, true), e)
        -- (the integer dtypes run on CUDA's smem rung since issues 32/37: spec/matmul_int_spec.lua; an FP8 operand
        -- with a non-FP8 one is refused on every device, naming both)
        e = err(function() return ck.matmul(ck.ones({2, 3}, {dtype = "e4m3", device = dev}), ck.ones({3, 2}, {dtype = "i64", device = dev})) end)
        assert.truthy(e:find("FP8 operands pair only with FP8", 1, true) and e:find("i64[3x2]", 1, true) and e:find("cuda", 1, true), e)
        e = err(function() return ck.matmul(a, H.rand({4, 2}, "f32", dev), {variant = "nope"}) end)
        assert.truthy(e:find("unknown variant", 1, true), e)
      end
    end)
  end

  it("falls back, and says so, when a variant cannot take the dtype", gpu(function()
    local a, b = H.rand({9, 7}, "f64", "cuda"), H.rand({7, 5}, "f64", "cuda")
    local c = ck.matmul(a, b, {variant = "warptile"}) -- warptile is f32 only
    local ran = ck.last_ran()
    assert.are_not.equal("warptile", ran.name)
    assert.truthy(ran.note:find("warptile", 1, true), ran.note)
    local ref, mag = reference(a, b, nil, 1, 0)
    check(c, ref, mag, "f64", "fallback result")
  end))
end)

-- ---------------------------------------------------------------- every GPU variant

-- Cases: {label, a = function(dt) -> array, b = ..., alpha, beta, gpu_only}. Inputs are made on the GPU.
local function R(shape, dt) return H.rand(shape, dt, "cuda") end
local CASES = {
  {"1x1x1", function(dt) return R({1, 1}, dt) end, function(dt) return R({1, 1}, dt) end},
  {"1x37x1", function(dt) return R({1, 1}, dt) end, function(dt) return R({1, 37}, dt) end},
  {"37x1x19", function(dt) return R({37, 19}, dt) end, function(dt) return R({19, 1}, dt) end},
  {"7x13x5", function(dt) return R({7, 5}, dt) end, function(dt) return R({5, 13}, dt) end},
  {"127x255x63", function(dt) return R({127, 63}, dt) end, function(dt) return R({63, 255}, dt) end},
  {"1000x1000x1000", function(dt) return R({1000, 1000}, dt) end, function(dt) return R({1000, 1000}, dt) end},
  {"4097x4095x33", function(dt) return R({4097, 33}, dt) end, function(dt) return R({33, 4095}, dt) end},
  {"A^T 129x130x131", function(dt) return R({131, 129}, dt):t() end, function(dt) return R({131, 130}, dt) end},
  {"B^T 129x130x131", function(dt) return R({129, 131}, dt) end, function(dt) return R({130, 131}, dt):t() end},
  {"A^T B^T 65x67x300", function(dt) return R({300, 65}, dt):t() end, function(dt) return R({67, 300}, dt):t() end},
  {"misaligned slices 130x150x97", -- leading dims 101 and 153, base offsets of 1 and 2 elements
   function(dt) return R({131, 101}, dt):narrow(1, 2, 131):narrow(2, 3, 99) end,
   function(dt) return R({98, 153}, dt):narrow(1, 2, 98):narrow(2, 2, 151) end},
  {"batch 3x70x90x50", function(dt) return R({3, 70, 50}, dt) end, function(dt) return R({3, 50, 90}, dt) end},
  {"2-D x batch 4", function(dt) return R({70, 50}, dt) end, function(dt) return R({4, 50, 90}, dt) end},
  {"batch 3 x 2-D", function(dt) return R({3, 70, 50}, dt) end, function(dt) return R({50, 90}, dt) end},
  {"batch 1 x batch 5 (transposed)", function(dt) return R({1, 70, 50}, dt) end,
   function(dt) return R({5, 90, 50}, dt):transpose(2, 3) end},
  {"alpha 1.5 beta -0.5 300x257x129", function(dt) return R({300, 129}, dt) end,
   function(dt) return R({129, 257}, dt) end, 1.5, -0.5},
  {"alpha -2 beta 1 batch 2x33x65x17", function(dt) return R({2, 33, 17}, dt) end,
   function(dt) return R({2, 17, 65}, dt) end, -2, 1},
  {"k == 0, beta 0.5", function(dt) return ck.empty({5, 0}, {dtype = dt, device = "cuda"}) end,
   function(dt) return ck.empty({0, 6}, {dtype = dt, device = "cuda"}) end, 1, 0.5},
  {"k == 0, beta 0", function(dt) return ck.empty({5, 0}, {dtype = dt, device = "cuda"}) end,
   function(dt) return ck.empty({0, 6}, {dtype = dt, device = "cuda"}) end},
}

--- Result shape of a @ b (2-D, or 3-D with the batch broadcast).
local function out_shape(a, b)
  local sa, sb = a:shape(), b:shape()
  local m, n = sa[#sa - 1], sb[#sb]
  if #sa == 2 and #sb == 2 then return {m, n} end
  return {math.max(#sa == 3 and sa[1] or 1, #sb == 3 and sb[1] or 1), m, n}
end

-- Inputs, C0 and references per (dtype, case), made once per run (fresh random data) and shared by variants.
local cache = {}
local function case_data(dt, ci)
  local key = dt .. ci
  if not cache[key] then
    local c = CASES[ci]
    local a, b = c[2](dt), c[3](dt)
    local alpha, beta = c[4] or 1, c[5] or 0
    local shape = out_shape(a, b)
    local c0 = beta ~= 0 and H.rand(shape, dt, "cuda") or nil
    local ref, mag = reference(a, b, c0, alpha, beta)
    cache[key] = {a = a, b = b, c0 = c0, alpha = alpha, beta = beta, ref = ref, mag = mag, shape = shape, on = {}}
  end
  return cache[key]
end

describe("matmul GPU variants vs the host reference", function()
  local variants = H.has_cuda and ck.variants("matmul") or {}
  if #variants == 0 then
    it("runs every variant (needs a GPU)", gpu(function() end))
  end
  for _, v in ipairs(variants) do
    for _, dt in ipairs(v.dtypes) do
      -- f16/bf16 and TF32 (mma_sync's f32 is TF32 only, opt-in) have their own spec: spec/tensorcore_spec.lua
      if (dt == "f32" or dt == "f64") and not (v.name == "mma_sync") then
      it(("%d %s %s"):format(v.id, v.name, dt), gpu(function()
        local took = 0
        for ci, c in ipairs(CASES) do
          local d = case_data(dt, ci)
          local out = H.poison(ck.empty(d.shape, {dtype = dt, device = "cuda"}))
          if d.c0 then out:copy_(d.c0) end
          ck.gemm(out, d.a, d.b, d.alpha, d.beta, {variant = v.name})
          local ran = ck.last_ran()
          local label = ("%s %s %s"):format(v.name, dt, c[1])
          -- batched takes only one dense product of <= 4096 results (k <= 256); past that it declines, says why,
          -- and the default order runs the case
          local declined = v.name == "batched" and ran.name ~= v.name and ran.note:find("asked for 'batched'", 1, true)
          if not declined then
            assert.equal(v.name, ran.name, label .. ": ran " .. ran.name .. " (" .. tostring(ran.note) .. ")")
            took = took + 1
          end
          check(out, d.ref, d.mag, dt, label, d.on)
          out:free()
        end
        assert.truthy(took > 0, v.name .. " ran no case")
      end))
      end
    end
  end

  it("a * b takes the default (cuBLAS) path and matches", gpu(function()
    local d = case_data("f32", 5)
    local c = d.a * d.b
    assert.equal("cublas", ck.last_ran().name)
    check(c, d.ref, d.mag, "f32", "a * b", d.on)
  end))
end)

-- i32 on the GPU (issue 32): rung 3 is the one CUDA rung that takes it, with the host's rule (host_matmul.c): the sum
-- wraps modulo 2^32, integer alpha and beta apply in the same wrapping arithmetic, others in double, truncated and
-- saturated. Integer results are exact, so the GPU must equal the host bit for bit.
describe("i32 matmul on the GPU", function()
  local function ri(shape, big) -- host i32: |values| up to 50000 (products past 2^31: the sums wrap) or 10
    local u = ck.rand(shape, {dtype = "f64", device = "host"})
    return (big and u * 100000 - 50000 or u * 20 - 10):floor():to("i32")
  end
  it("equals the host bit for bit: wrapping sums, integer and fractional alpha/beta, views, batches", gpu(function()
    local cases = {
      {{7, 5}, {5, 13}}, {{1, 1}, {1, 37}}, {{127, 63}, {63, 255}}, {{3, 70, 50}, {3, 50, 90}}, {{70, 50}, {4, 50, 90}},
      {{300, 129}, {129, 257}, ta = true}, {{65, 300}, {300, 67}, tb = true}, {{40, 33}, {33, 20}, ta = true, tb = true},
    }
    local ab = {{1, 0}, {-2, 1}, {3, -1}, {1.5, -0.5}, {1e10, 0}, {0.25, 2.5}}
    for _, c in ipairs(cases) do
      for _, big in ipairs {false, true} do
        local sa, sb = c[1], c[2]
        local a = c.ta and ri({sa[#sa], sa[#sa - 1]}, big):t() or ri(sa, big)
        local b = c.tb and ri({sb[#sb], sb[#sb - 1]}, big):t() or ri(sb, big)
        local ga, gb = a:to("cuda"), b:to("cuda")
        local want = ck.matmul(a, b)
        local got = ck.matmul(ga, gb)
        local label = ("i32 %s x %s%s%s%s"):format(table.concat(sa, "x"), table.concat(sb, "x"), c.ta and " A^T" or "",
          c.tb and " B^T" or "", big and " (wrapping)" or "")
        assert.equals("smem", ck.last_ran().name, label)
        assert.is_true(ck.equal(got:host(), want), label)
        for _, q in ipairs(ab) do
          local c0 = ri(want:shape(), big)
          local oh, og = c0:clone(), c0:to("cuda")
          ck.gemm(oh, a, b, q[1], q[2])
          ck.gemm(og, ga, gb, q[1], q[2])
          assert.is_true(ck.equal(og:host(), oh), ("%s alpha %g beta %g"):format(label, q[1], q[2]))
        end
      end
    end
  end))
end)
