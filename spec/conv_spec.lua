--- ck.conv / ck.conv2 (issue 35): MATLAB's conv and conv2 against a direct plain-Lua oracle (f64 sums), both
-- variants ("direct", "fft"), every mode, vectors and matrices, awkward sizes (kernel larger than a, 1-element
-- kernels), on the host and on the GPU. Tolerances: a sum of numel(k) products of values in [-1, 1) is off by at most
-- numel(k) eps per output directly; the FFT path adds the transforms' c eps log2(L) sqrt(L) ||.|| (spec/fft_spec.lua).
local H = require "spec.helpers"
local ck = H.ck
local gpu = H.gpu

-- The oracle: the full 2-D convolution of flat row-major a (ma x na) and k (mk x nk), then the mode's part.
local function oracle(av, ma, na, kv, mk, nk, mode)
  local L1, L2 = ma + mk - 1, na + nk - 1
  local full = {}
  for i = 0, L1 - 1 do
    for j = 0, L2 - 1 do
      local s = 0.0
      for p = math.max(0, i - ma + 1), math.min(mk - 1, i) do
        for q = math.max(0, j - na + 1), math.min(nk - 1, j) do s = s + av[(i - p) * na + (j - q) + 1] * kv[p * nk + q + 1] end
      end
      full[i * L2 + j + 1] = s
    end
  end
  local function span(n, m)
    if mode == "same" then return m // 2, n end
    if mode == "valid" then return m - 1, math.max(n - m + 1, 0) end
    return 0, n + m - 1
  end
  local r0, mo = span(ma, mk)
  local c0, no = span(na, nk)
  local out = {}
  for i = 0, mo - 1 do for j = 0, no - 1 do out[#out + 1] = full[(i + r0) * L2 + j + c0 + 1] end end
  return out, mo, no
end

local function check(got, want, tol, label)
  local g = got:to("host"):to("f64"):flat()
  assert(#g == #want, ("%s: %d values, expected %d"):format(label, #g, #want))
  for i = 1, #want do
    if not (math.abs(g[i] - want[i]) <= tol) then
      error(("%s: flat index %d: got %.10g, expected %.10g (tol %.3g, seed %d)"):format(label, i, g[i], want[i], tol, H.seed), 2)
    end
  end
end

local SIZES = {{{1, 1}, {1, 1}}, {{5, 7}, {3, 3}}, {{9, 4}, {2, 5}}, {{4, 4}, {6, 6}}, {{31, 17}, {8, 1}}, {{20, 33}, {7, 12}}}

local function run_cases(device)
  for _, dt in ipairs {"f64", "f32"} do
    local eps = dt == "f64" and 2 ^ -53 or 2 ^ -24
    for _, s in ipairs(SIZES) do
      local a, k = H.rand(s[1], dt), H.rand(s[2], dt)
      local av, kv = a:to("f64"):flat(), k:to("f64"):flat()
      local ga, gk = a:to(device), k:to(device)
      for _, mode in ipairs {"full", "same", "valid"} do
        local want, mo, no = oracle(av, s[1][1], s[1][2], kv, s[2][1], s[2][2], mode)
        local L = (s[1][1] + s[2][1]) * (s[1][2] + s[2][2])
        for _, variant in ipairs {"direct", "fft"} do
          local tol = 4 * eps * (#kv + 8 * (math.log(L, 2) + 1) * math.sqrt(L) * math.sqrt(#kv))
          local label = ("%s conv2 %s %s %s a %dx%d k %dx%d"):format(device, dt, mode, variant, s[1][1], s[1][2], s[2][1], s[2][2])
          local r = ck.conv2(ga, gk, {mode = mode, variant = variant})
          assert.are.same({mo, no}, r:shape(), label)
          assert.are.equal(dt, r:dtype(), label)
          check(r, want, tol, label)
        end
      end
    end
  end
  -- vectors: ck.conv of two 1-D arrays gives a 1-D result (MATLAB's conv)
  local a, k = H.rand({50}, "f64"), H.rand({7}, "f64")
  local want = oracle(a:flat(), 1, 50, k:flat(), 1, 7, "same")
  for _, variant in ipairs {"direct", "fft"} do
    local r = ck.conv(a:to(device), k:to(device), {mode = "same", variant = variant})
    assert.are.same({50}, r:shape())
    check(r, want, 1e-12, device .. " conv same " .. variant)
  end
end

describe("ck.conv and ck.conv2 on the host", function()
  it("match a direct oracle: both variants, every mode, awkward sizes", function() run_cases("host") end)

  it("follow MATLAB's example: conv(u, v, 'same')", function()
    local u, v = ck.array {-1, 2, 3, -2, 0, 1, 2}, ck.array {2, 4, -1, 1}
    assert.are.same({15, 5, -9, 7, 6, 7, -1}, ck.conv(u, v, {mode = "same"}):to("f64"):flat())
    assert.are.same({-2, 0, 15, 5, -9, 7, 6, 7, -1, 2}, ck.conv(u, v, {variant = "direct"}):to("f64"):flat())
  end)

  it("picks direct for small kernels and fft for large ones, and lists both", function()
    local names = {}
    for _, v in ipairs(ck.variants("conv")) do names[#names + 1] = v.name end
    assert.are.same({"direct", "fft"}, names)
    local a = H.rand({40, 40}, "f64")
    for _, k in ipairs {H.rand({3, 3}, "f64"), H.rand({33, 33}, "f64")} do
      local r = ck.conv2(a, k)
      H.assert_close(r, ck.conv2(a, k, {variant = "fft"}), {rtol = 1e-10, atol = 1e-10})
      H.assert_close(r, ck.conv2(a, k, {variant = "direct"}), {rtol = 1e-10, atol = 1e-10})
    end
  end)

  it("convolves complex inputs through the fft variant: the parts' real convolutions combined", function()
    local ar, ai, kr, ki = H.rand({9, 11}, "f64"), H.rand({9, 11}, "f64"), H.rand({4, 3}, "f64"), H.rand({4, 3}, "f64")
    local c = function(x, y) return ck.conv2(x, y, {mode = "same", variant = "direct"}) end
    local re, im = ck.sub(c(ar, kr), c(ai, ki)), ck.add(c(ar, ki), c(ai, kr))
    local z = ck.conv2(ck.complex(ar, ai), ck.complex(kr, ki), {mode = "same"})
    assert.are.equal("c128", z:dtype())
    H.assert_close(z:real(), re, {rtol = 1e-12, atol = 1e-12})
    H.assert_close(z:imag(), im, {rtol = 1e-12, atol = 1e-12})
  end)

  it("says what is wrong, at the caller's line", function()
    local a = H.rand({3, 4}, "f32")
    local function err(f) local ok, e = pcall(f); assert(not ok); return tostring(e) end
    assert.truthy(err(function() return ck.conv2(a, a, {mode = "middle"}) end):find("^spec/conv_spec.lua:%d+: ck.conv2: .*mode"))
    assert.truthy(err(function() return ck.conv(a, H.rand({3}, "f32")) end):find("ck.conv: takes two vectors or two matrices"))
    assert.truthy(err(function() return ck.conv2(H.rand({2, 2, 2}), a) end):find("ck.conv2: takes"))
  end)
end)

describe("ck.conv2 on the GPU #gpu", function()
  it("matches the oracle: both variants, every mode", gpu(function() run_cases("cuda") end))
end)
