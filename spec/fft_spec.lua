--- The FFT (issue 35): ck.fft / ifft / rfft / irfft / fft2 / fftn / fftshift / fftfreq against a plain-Lua DFT on
-- the host backend (f64 sums, twiddles from (j k mod n) / n), and every rung of the FFT ladder against the host on
-- the GPU. Fresh random complex inputs, awkward lengths (1, 2, 3, 5, 7, 16, 1000, 1024, 4097 and primes), every
-- norm and dim, views, poisoned outputs; Parseval's identity and ifft(fft(x)) = x.
--
-- Tolerances: a transform of length n computed in precision eps has a normwise error of c eps log2(n) ||y||
-- (||y|| = sqrt(n) ||x|| unscaled), so each element is compared within 8 eps (log2 n + 1) sqrt(n) max|x| times the
-- norm's scale; the naive DFT's sums grow as n eps instead of log n eps (its own bound), and so do the oracle's own
-- (in f64: it matters for c128). The host computes in f64 and rounds once, so on the host c64 is within one f32
-- rounding of the oracle.
local H = require "spec.helpers"
local ck = H.ck
local gpu = H.gpu

local EPS = {c64 = 2 ^ -24, c128 = 2 ^ -53, f32 = 2 ^ -24, f64 = 2 ^ -53}
local LENGTHS = {1, 2, 3, 5, 7, 16, 97, 127, 1000, 1024, 4097}

local function numel(shape) local n = 1; for _, s in ipairs(shape) do n = n * s end; return n end

-- A random complex array of `shape` (c64 or c128) on device, and its values as flat re and im lists.
local function crand(shape, dt, device)
  local real = dt == "c128" and "f64" or "f32"
  local re, im = H.rand(shape, real), H.rand(shape, real)
  local a = ck.complex(re, im)
  if device and device ~= "host" then a = a:to(device) end
  return a, re:to("f64"):flat(), im:to("f64"):flat()
end

local function parts(a)
  local h = a:to("host")
  return h:real():to("f64"):flat(), h:imag():to("f64"):flat()
end

-- The oracle: the DFT along 1-based dim d of flat row-major (re, im) of `shape`, sign -1 forward, times scale.
local function dft(re, im, shape, d, sign, scale)
  local inner = 1
  for k = d + 1, #shape do inner = inner * shape[k] end
  local n = shape[d]
  local outer = numel(shape) // (n * inner)
  local c, s = {}, {}
  for t = 0, n - 1 do
    local ang = 2 * math.pi * t / n
    c[t], s[t] = math.cos(ang), sign * math.sin(ang)
  end
  local ore, oim = {}, {}
  for o = 0, outer - 1 do
    for i = 0, inner - 1 do
      local base = o * n * inner + i + 1
      for k = 0, n - 1 do
        local ar, ai, jk = 0.0, 0.0, 0
        for j = 0, n - 1 do
          local xr, xi = re[base + j * inner], im[base + j * inner]
          ar = ar + xr * c[jk] - xi * s[jk]
          ai = ai + xr * s[jk] + xi * c[jk]
          jk = jk + k
          if jk >= n then jk = jk - n end
        end
        ore[base + k * inner], oim[base + k * inner] = ar * scale, ai * scale
      end
    end
  end
  return ore, oim
end

local function maxabs(re, im)
  local m = 0
  for i = 1, #re do m = math.max(m, math.abs(re[i]), math.abs(im and im[i] or 0)) end
  return m
end

-- got (an array) against the oracle's (re, im) lists within tol; im nil for a real result.
local function check(got, re, im, tol, label)
  local gr, gi
  if im then gr, gi = parts(got) else gr = got:to("host"):to("f64"):flat() end
  assert(#gr == #re, ("%s: %d values, expected %d"):format(label, #gr, #re))
  for i = 1, #re do
    local e = math.abs(gr[i] - re[i])
    if im then e = math.max(e, math.abs(gi[i] - im[i])) end
    if not (e <= tol) then
      error(("%s: flat index %d: got %.10g%+.10gi, expected %.10g%+.10gi (|err| %.3g > tol %.3g, seed %d)"):format(label,
        i, gr[i], gi and gi[i] or 0, re[i], im and im[i] or 0, e, tol, H.seed), 2)
    end
  end
end

-- The transform's bound plus the oracle's own: a plain sum of n terms in f64 is off by up to n 2^-53 of its terms.
local function tol_for(dt, n, xmax, scale, naive)
  local growth = naive and n or (math.log(n, 2) + 1)
  return 8 * (EPS[dt] * growth + 2 ^ -53 * n) * math.sqrt(n) * xmax * scale + 1e-300
end

local function scales(norm, n)
  if norm == "ortho" then return 1 / math.sqrt(n), 1 / math.sqrt(n) end
  if norm == "forward" then return 1 / n, 1 end
  return 1, 1 / n
end

local function shape_along(n, d, nd)
  local shape = {}
  for k = 1, nd do shape[k] = k == d and n or ({3, 2, 4})[k] end
  return shape
end

local function scaled(re, im, s)
  local r, i = {}, {}
  for k = 1, #re do r[k], i[k] = re[k] * s, im[k] * s end
  return r, i
end

-- fft and ifft of a fresh input along dim d of an nd-array, every norm, on device, against the oracle (one forward
-- and one backward DFT, scaled per norm).
local function check_fft(dt, device, n, d, nd, variant, label)
  local shape = shape_along(n, d, nd)
  if n >= 1000 then shape = {1, n}; d = 2 end
  local a, re, im = crand(shape, dt, device)
  local xmax = maxabs(re, im)
  local fr, fi = dft(re, im, shape, d, -1, 1)
  local br, bi = dft(re, im, shape, d, 1, 1)
  local naive = variant == "naive"
  for _, norm in ipairs {"backward", "ortho", "forward"} do
    local sf, si = scales(norm, n)
    local out = H.poison(ck.empty(shape, {dtype = dt, device = device}))
    local y = ck.fft(a, nil, d, {norm = norm, variant = variant, out = out})
    assert(y:storage_id() == out:storage_id(), label .. ": the result is out")
    local r, i = scaled(fr, fi, sf)
    check(y, r, i, tol_for(dt, n, xmax, sf, naive), ("%s fft n=%d dim %d norm %s"):format(label, n, d, norm))
    r, i = scaled(br, bi, si)
    check(ck.ifft(a, nil, d, {norm = norm, variant = variant}), r, i, tol_for(dt, n, xmax, si, naive),
      ("%s ifft n=%d dim %d norm %s"):format(label, n, d, norm))
  end
end

describe("ck.fft on the host, against a plain-Lua DFT", function()
  it("every length, norm and dim, c64 and c128", function()
    for _, dt in ipairs {"c128", "c64"} do
      for _, n in ipairs(LENGTHS) do
        for d = 1, (n >= 1000 and 1 or 3) do check_fft(dt, "host", n, d, 3, nil, dt) end
      end
    end
  end)

  it("more primes and composites: Bluestein above 64, mixed radix below", function()
    for _, n in ipairs {11, 13, 31, 61, 67, 131, 211, 2 * 67, 3 * 5 * 7, 360} do check_fft("c128", "host", n, 2, 2, nil, "c128") end
  end)

  it("real input gives c64 / c128; n pads with zeros and cuts", function()
    local x = H.rand({3, 10}, "f32")
    local y = ck.fft(x)
    assert.are.equal("c64", y:dtype())
    assert.are.equal("c128", ck.fft(x:to("f64")):dtype())
    local re, im = x:to("f64"):flat(), {}
    for i = 1, #re do im[i] = 0 end
    for _, n in ipairs {4, 10, 17} do
      local pr, pi = {}, {}
      for r = 0, 2 do
        for j = 0, n - 1 do pr[r * n + j + 1] = j < 10 and re[r * 10 + j + 1] or 0; pi[r * n + j + 1] = 0 end
      end
      local fr, fi = dft(pr, pi, {3, n}, 2, -1, 1)
      check(ck.fft(x, n), fr, fi, tol_for("c64", n, maxabs(re), 1), "fft(x, " .. n .. ")")
    end
  end)

  it("transforms views: transposed, narrowed, and along dim 1", function()
    local a, _, _ = crand({6, 5}, "c128")
    local t = a:t()
    local tr, ti = parts(t:contiguous())
    local fr, fi = dft(tr, ti, {5, 6}, 2, -1, 1)
    check(ck.fft(t), fr, fi, 1e-12, "fft of a transposed view")
    local nv = a:narrow(2, 2, 4) -- columns 2..4
    local nr, ni = parts(nv:contiguous())
    fr, fi = dft(nr, ni, {6, 3}, 1, -1, 1)
    check(ck.fft(nv, nil, 1), fr, fi, 1e-12, "fft of a narrowed view along dim 1")
  end)

  it("Parseval: sum |x|^2 = sum |X|^2 / n, and ifft(fft(x)) = x", function()
    for _, n in ipairs {7, 64, 1000, 4097} do
      local a, re, im = crand({2, n}, "c128")
      local X = ck.fft(a)
      local xr, xi = parts(X)
      local e1, e2 = 0, 0
      for i = 1, #re do e1 = e1 + re[i] ^ 2 + im[i] ^ 2; e2 = e2 + xr[i] ^ 2 + xi[i] ^ 2 end
      assert(math.abs(e1 - e2 / n) <= 1e-10 * e1, ("Parseval n=%d: %.17g vs %.17g"):format(n, e1, e2 / n))
      check(ck.ifft(X), re, im, 1e-12 * math.sqrt(n), "ifft(fft(x)) n=" .. n)
    end
  end)

  it("rfft gives the n/2 + 1 non-negative frequencies; irfft(rfft(x), n) = x", function()
    for _, n in ipairs {1, 2, 5, 16, 97, 1000} do
      for _, dt in ipairs {"f64", "f32"} do
        local x = H.rand({3, n}, dt)
        local re, im = x:to("f64"):flat(), {}
        for i = 1, #re do im[i] = 0 end
        local fr, fi = dft(re, im, {3, n}, 2, -1, 1)
        local h = n // 2 + 1
        local kr, ki = {}, {}
        for r = 0, 2 do
          for k = 0, h - 1 do kr[r * h + k + 1], ki[r * h + k + 1] = fr[r * n + k + 1], fi[r * n + k + 1] end
        end
        local cdt = dt == "f64" and "c128" or "c64"
        local X = ck.rfft(x)
        assert.are.equal(cdt, X:dtype())
        check(X, kr, ki, tol_for(cdt, n, maxabs(re), 1), ("rfft n=%d %s"):format(n, dt))
        local back = ck.irfft(X, n)
        assert.are.equal(dt, back:dtype())
        check(back, re, nil, tol_for(cdt, n, maxabs(re), 1), ("irfft(rfft(x), %d) %s"):format(n, dt))
      end
    end
  end)

  it("fft2 and fftn transform over several dims; ifftn inverts", function()
    local a, re, im = crand({3, 4, 5}, "c128")
    local r1, i1 = dft(re, im, {3, 4, 5}, 3, -1, 1)
    local r2, i2 = dft(r1, i1, {3, 4, 5}, 2, -1, 1)
    check(ck.fft2(a), r2, i2, 1e-12, "fft2")
    local r3, i3 = dft(r2, i2, {3, 4, 5}, 1, -1, 1)
    check(ck.fftn(a), r3, i3, 1e-12, "fftn")
    check(ck.ifftn(ck.fftn(a)), re, im, 1e-12, "ifftn(fftn(a))")
    check(ck.ifft2(ck.fft2(a, {4, 5}, {-2, -1})), re, im, 1e-12, "ifft2(fft2(a, s, dims))")
    -- the core's two-dim transform (core.fft's n2: what fft2 runs as one cuFFT plan on a GPU) on the host oracle,
    -- scaled once, and its refusals
    check(ck.core.fft("fft", a, 4, 2, false, 1, nil, nil, 5), r2, i2, 1e-12, "core.fft over the last two dims")
    local b1, c1 = dft(re, im, {3, 4, 5}, 3, 1, 1)
    local b2, c2 = dft(b1, c1, {3, 4, 5}, 2, 1, 1 / 20)
    check(ck.core.fft("fft", a, 4, 2, true, 1 / 20, nil, nil, 5), b2, c2, 1e-12, "core.fft inverse over two dims")
    local ok, e = pcall(ck.core.fft, "fft", a, 3, 1, false, 1, nil, nil, 4)
    assert(not ok and tostring(e):find("two-dim transform runs over the last two dims", 1, true), tostring(e))
    ok, e = pcall(ck.core.fft, "rfft", H.rand({3, 4, 5}, "f64"), 4, 2, false, 1, nil, nil, 5)
    assert(not ok and tostring(e):find("complex-to-complex only", 1, true), tostring(e))
  end)

  it("fftshift, ifftshift and fftfreq follow NumPy", function()
    local f = ck.fftfreq(5, 0.5):flat()
    local want = {0, 0.4, 0.8, -0.8, -0.4}
    for i = 1, 5 do assert(math.abs(f[i] - want[i]) < 1e-15, "fftfreq(5, 0.5)") end
    local g = ck.fftfreq(4):flat()
    for i, v in ipairs {0, 0.25, -0.5, -0.25} do assert.are.equal(v, g[i]) end
    local x = ck.arange(1, 8):to("f64") -- 1..7
    assert.are.same({5, 6, 7, 1, 2, 3, 4}, ck.fftshift(x):flat())
    assert.are.same({1, 2, 3, 4, 5, 6, 7}, ck.ifftshift(ck.fftshift(x)):flat())
    local m = ck.arange(1, 13):to("f64"):reshape(3, 4)
    assert.are.same({11, 12, 9, 10, 3, 4, 1, 2, 7, 8, 5, 6}, ck.fftshift(m):flat())
  end)

  it("says what is wrong, at the caller's line", function()
    local a = H.rand({3, 4}, "f32")
    local function err(f) local ok, e = pcall(f); assert(not ok); return tostring(e) end
    assert.truthy(err(function() return ck.fft(a, 0) end):find("^spec/fft_spec.lua:%d+: ck.fft: n must be an integer >= 1"))
    assert.truthy(err(function() return ck.fft(a, nil, 3) end):find("ck.fft: dim"))
    assert.truthy(err(function() return ck.fft(a, {norm = "x"}) end):find("norm"))
    assert.truthy(err(function() return ck.rfft(ck.fft(a)) end):find("ck.rfft: the input must be real"))
    assert.truthy(err(function() return ck.fft2(H.rand({3}, "f32")) end):find("ck.fft2: 2 dims to transform"))
    assert.truthy(err(function() return ck.fft(a, {variant = "nope"}) end):find("unknown variant 'nope'"))
  end)

  it("lists the ladder", function()
    local names = {}
    for _, v in ipairs(ck.variants("fft")) do names[#names + 1] = v.name end
    assert.are.same({"cufft", "naive", "radix2", "stockham", "radix8"}, names)
    assert.are.equal(5, #ck.variants("ifft"))
  end)
end)

describe("the FFT ladder on the GPU #gpu", function()
  it("every rung matches the host (itself checked against the oracle above) on the lengths it takes, every norm",
    gpu(function()
    local failures = {}
    -- the lengths each rung takes (its supports(): rows of a contiguous array here), so that a rung which declined
    -- and fell back to another is a failure, not a pass
    local function pow2(n) return n >= 1 and n & (n - 1) == 0 end
    local TAKES = {cufft = function() return true end, naive = function(n) return n <= 65536 end, radix2 = pow2,
                   stockham = function(n) return pow2(n) and n <= 4096 end,
                   radix8 = function(n) return pow2(n) and n >= 8 and n <= 4096 end}
    for _, v in ipairs(ck.variants("fft")) do
      for _, dt in ipairs {"c64", "c128"} do
        for _, n in ipairs {1, 2, 8, 16, 32, 64, 128, 256, 512, 1000, 1024, 2048, 4096, 4097} do
          local h, re, im = crand({n >= 1000 and 3 or 37, n}, dt)
          local g = h:to("cuda")
          for _, norm in ipairs {"backward", "ortho", "forward"} do
            for _, f in ipairs {"fft", "ifft"} do
              local sf, si = scales(norm, n)
              local s = f == "fft" and sf or si
              local out = H.poison(ck.empty(h:shape(), {dtype = dt, device = "cuda"}))
              local ok, e = pcall(function()
                ck[f](g, nil, 2, {norm = norm, variant = v.name, out = out})
                local ran = ck.last_ran().name
                assert(TAKES[v.name], "a rung this spec does not know: " .. v.name)
                if TAKES[v.name](n) and ran ~= v.name then
                  error(("%s declined %s %s n=%d (ran %s)"):format(v.name, f, dt, n, ran))
                end
                local rr, ri = parts(ck[f](h, nil, 2, {norm = norm}))
                check(out, rr, ri, tol_for(dt, n, maxabs(re, im), s, v.name == "naive"),
                  ("%s (ran %s) %s %s n=%d norm %s"):format(v.name, ran, f, dt, n, norm))
              end)
              if not ok then failures[#failures + 1] = tostring(e) end
            end
          end
        end
      end
    end
    H.report(failures)
  end))

  it("agrees with the host on columns (inner > 1), rfft/irfft and fft2, and says which rung ran", gpu(function()
    local a = crand({64, 48}, "c64", "cuda")
    local ga = ck.fft(a, nil, 1)
    assert.are.equal("cufft", ck.last_ran().name) -- (before the host's fft and the copies reset last_ran)
    H.assert_close(ga:to("host"):real(), ck.fft(a:to("host"), nil, 1):real(), {rtol = 1e-4, atol = 1e-4})
    local x = H.rand({8, 1000}, "f32", "cuda")
    local X = ck.rfft(x)
    H.assert_close(X:to("host"):imag(), ck.rfft(x:to("host")):imag(), {rtol = 1e-4, atol = 1e-4})
    H.assert_close(ck.irfft(X, 1000), x, {rtol = 1e-4, atol = 1e-5})
    local v = crand({48, 64}, "c128", "cuda"):t() -- a transposed view, into a poisoned strided out
    local out = H.poison(ck.empty({64, 64}, {dtype = "c128", device = "cuda"})):narrow(2, 9, 56)
    ck.fft(v, nil, 2, {out = out, variant = "radix8"})
    H.assert_close(out:imag(), ck.fft(v:to("host")):imag(), {rtol = 1e-10, atol = 1e-10})
    local s = crand({256, 1024}, "c64", "cuda")
    ck.fft(s)
    assert.are.equal("cufft", ck.last_ran().name)
    ck.fft(s, {variant = "radix8"})
    assert.are.equal("radix8", ck.last_ran().name)
  end))

  it("fft2 / ifft2 over a GPU array's last two dims: one rank-2 cuFFT plan, against the plain-Lua DFT", gpu(function()
    for _, dt in ipairs {"c64", "c128"} do
      for _, shape in ipairs {{16, 12}, {3, 7, 10}, {2, 2, 9, 4}} do
        local nd = #shape
        local n1, n2 = shape[nd - 1], shape[nd]
        local a, re, im = crand(shape, dt, "cuda")
        local xmax = maxabs(re, im)
        local r1, i1 = dft(re, im, shape, nd, -1, 1)
        local fr, fi = dft(r1, i1, shape, nd - 1, -1, 1)
        local b1, c1 = dft(re, im, shape, nd, 1, 1)
        local br, bi = dft(b1, c1, shape, nd - 1, 1, 1)
        for _, norm in ipairs {"backward", "ortho", "forward"} do
          local sf, si = scales(norm, n1 * n2)
          local label = ("%s fft2 %s norm %s"):format(dt, table.concat(shape, "x"), norm)
          local y = ck.fft2(a, {norm = norm})
          assert.are.equal("cufft", ck.last_ran().name, label)
          assert.are.equal(dt, y:dtype())
          local r, i = scaled(fr, fi, sf)
          check(y, r, i, tol_for(dt, n1 * n2, xmax, sf), label)
          r, i = scaled(br, bi, si)
          check(ck.ifft2(a, {norm = norm}), r, i, tol_for(dt, n1 * n2, xmax, si), "i" .. label)
        end
      end
      -- one plan, not two: the rank-2 path ran (the one-dim passes would also say "cufft" and give the same values)
      ck.empty_cache()
      ck.fft2((crand({16, 12}, dt, "cuda"))) -- (crand returns the parts too: one argument only)
      assert.are.equal(1, ck.memory().fft_plans, dt .. " fft2 made one cuFFT plan")
      -- against the host's one-dim passes: s padding and cutting, fftn of three dims (the last two together, then
      -- dim 1), a transposed view, a real input, and a radix8 request (one dim at a time: radix8 where it takes the
      -- length, a fallback where not)
      local real = dt == "c64" and "f32" or "f64"
      local a = crand({3, 6, 8}, dt, "cuda")
      local h = a:to("host")
      local cases = {
        {"fft2 s {5, 12}", function(x) return ck.fft2(x, {5, 12}) end},
        {"fftn", function(x) return ck.fftn(x) end},
        {"ifftn ortho", function(x) return ck.ifftn(x, {norm = "ortho"}) end},
        {"fft2 of a transposed view", function(x) return ck.fft2(x:select(1, 2):t()) end},
        {"fft2 of the real part", function(x) return ck.fft2(x:real():contiguous():to(real)) end},
        {"fft2 on radix8", function(x) return ck.fft2(x, {variant = "radix8"}) end},
      }
      for _, c in ipairs(cases) do
        local got = c[2](a)
        local hr, hi = parts(c[2](h))
        check(got, hr, hi, tol_for(dt, 3 * 6 * 16, maxabs(parts(h)), 1) * 4, dt .. " " .. c[1] .. " against the host")
      end
      local function err(f) local ok, e = pcall(f); assert(not ok); return tostring(e) end
      local bad = err(function() return ck.fft2((crand({4, 0}, dt, "cuda"))) end)
      assert.truthy(bad:find("ck.fft2", 1, true) and bad:find("give n >= 1", 1, true), bad)
    end
  end))

  it("caches cuFFT plans and frees them with ck.empty_cache", gpu(function()
    ck.empty_cache()
    assert.are.equal(0, ck.memory().fft_plans)
    local a = crand({4, 300}, "c64", "cuda")
    ck.fft(a); ck.fft(a); ck.ifft(a) -- one plan: the direction is the execution's
    assert.are.equal(1, ck.memory().fft_plans)
    ck.fft(a, nil, 1)
    assert.are.equal(2, ck.memory().fft_plans)
    ck.empty_cache()
    assert.are.equal(0, ck.memory().fft_plans)
    H.assert_close(ck.fft(a):to("host"):real(), ck.fft(a:to("host")):real(), {rtol = 1e-4, atol = 1e-4})
    assert.are.equal(1, ck.memory().fft_plans)
  end))
end)
