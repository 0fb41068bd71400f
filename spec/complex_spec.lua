-- Complex arrays (issue 35): c64 and c128, against a plain-Lua complex oracle computed in f64.
--
-- Tolerances. c128 results are a few f64 operations on the parts, so they agree with the oracle to a few
-- ulps of the operands' magnitudes: |got - ref| <= 16 * 2^-52 * scale. c64 results are the same
-- operations in f32 (unit roundoff u = 2^-24) on inputs rounded to f32 (the oracle reads the rounded inputs,
-- so that rounding is not counted): a product ar*br - ai*bi has error <= 3u(|ar br| + |ai bi|), a quotient
-- adds the denominator's and the division's, exp/log/sqrt a handful more: 32u times the scale bounds them
-- all. The scale is the size of the terms that cancel: |a||b| for products and quotients (|a|/|b| with
-- |b| >= 0.25 here), and max(1, |ref|) for the functions.
local ck = require "cukern"
local H = require "spec.helpers"
local gpu = H.gpu

local EPS = {c64 = 32 * 2 ^ -24, c128 = 16 * 2 ^ -52}

-- ---------------------------------------------------------------- the oracle
local C = {}
function C.add(a, b) return {a[1] + b[1], a[2] + b[2]} end
function C.sub(a, b) return {a[1] - b[1], a[2] - b[2]} end
function C.mul(a, b) return {a[1] * b[1] - a[2] * b[2], a[1] * b[2] + a[2] * b[1]} end
function C.div(a, b)
  local d = b[1] * b[1] + b[2] * b[2]
  return {(a[1] * b[1] + a[2] * b[2]) / d, (a[2] * b[1] - a[1] * b[2]) / d}
end
function C.abs(a) return math.sqrt(a[1] * a[1] + a[2] * a[2]) end
function C.exp(a) local e = math.exp(a[1]); return {e * math.cos(a[2]), e * math.sin(a[2])} end
function C.log(a) return {math.log(C.abs(a)), math.atan(a[2], a[1])} end
function C.sqrt(a) -- without the cancellation of sqrt((|a| - re) / 2) near the positive real axis
  local t = math.sqrt((C.abs(a) + math.abs(a[1])) / 2)
  if t == 0 then return {0, a[2]} end
  if a[1] >= 0 then return {t, a[2] / (2 * t)} end
  return {math.abs(a[2]) / (2 * t), a[2] < 0 and -t or t}
end
function C.pow(a, b) return C.exp(C.mul(b, C.log(a))) end

local function pairs_of(z) return z:to("host"):flat() end

-- random complex values with parts in [-1, 1), away from 0 where asked (divisors, logs)
local function crand(shape, dt, device, away)
  local re, im = H.rand(shape, dt == "c64" and "f32" or "f64"), H.rand(shape, dt == "c64" and "f32" or "f64")
  if away then re = re + ck.sign(re) * 0.5 end -- |re| >= 0.5: |z| >= 0.5
  return ck.complex(re, im):to(device or "host")
end

local function check(label, got, ref, scale, dt)
  assert(ck.iscomplex(got), label .. ": the result is " .. got:dtype() .. ", not complex")
  local g = pairs_of(got)
  assert.are.equal(#ref, #g, label .. ": element count")
  for i = 1, #ref do
    local tol = EPS[dt] * (scale and scale[i] or math.max(1, C.abs(ref[i])))
    local e = math.max(math.abs(g[i][1] - ref[i][1]), math.abs(g[i][2] - ref[i][2]))
    if not (e <= tol) then
      error(("%s: element %d: got %.17g%+.17gi, expected %.17g%+.17gi (error %.3g > tolerance %.3g; seed %d)")
        :format(label, i, g[i][1], g[i][2], ref[i][1], ref[i][2], e, tol, H.seed), 2)
    end
  end
end

local function each(t, f) local r = {}; for i, v in ipairs(t) do r[i] = f(v, i) end; return r end

describe("complex arrays (c64, c128)", function()
  it("are made from parts, pairs and casts, and show their parts as views", function()
    local z = ck.complex(ck.array({1, -2, 3}), ck.array({0.5, 4, -6}))
    assert.are.equal("c64", z:dtype())
    assert.are.same({{1, 0.5}, {-2, 4}, {3, -6}}, z:totable())
    local w = ck.array({{1, 2}, {3, -4}}, {dtype = "c128"})
    assert.are.same({2}, w:shape())
    assert.are.same({3, -4}, {w[2]:item()})
    assert.are.same({{1, 0}, {2, 0}}, ck.array({1, 2}, {dtype = "c64"}):totable())
    assert.are.same({{7, 0}, {7, 0}}, ck.full({2}, 7, {dtype = "c128"}):totable())
    assert.are.same({{0, 0}}, ck.zeros({1}, {dtype = "c64"}):totable())
    -- casts: real -> complex (im 0), complex -> real (the real part, NumPy's astype), c64 <-> c128
    assert.are.same({1, 3}, w:to("f32"):totable())
    assert.are.same({{1, 2}, {3, -4}}, w:to("c64"):to("c128"):totable())
    assert.are.same({{1.5, 0}}, ck.array({1.5}):to("c128"):totable())
    -- views share storage: writing a part writes the array
    local re, im = ck.real(w), w:imag()
    im:fill(9)
    assert.are.same({{1, 9}, {3, 9}}, w:totable())
    re[2] = -1
    assert.are.same({{1, 9}, {-1, 9}}, w:totable())
    local p = ck.view_as_real(w)
    assert.are.same({2, 2}, p:shape())
    assert.are.equal(w:storage_id(), ck.view_as_complex(p):storage_id())
    assert.is_true(ck.iscomplex(w)); assert.is_false(ck.isreal(w)); assert.is_true(ck.isreal(re))
    assert.matches("1%+9i +%-1%+9i", tostring(w))
  end)

  it("promote as NumPy does, numbers following the array", function()
    local z64 = ck.complex(ck.array({1}), 0)
    assert.are.equal("c64", (z64 + ck.array({1}, {dtype = "f32"})):dtype())
    assert.are.equal("c128", (z64 + ck.array({1}, {dtype = "f64"})):dtype())
    assert.are.equal("c128", (z64 + ck.array({1}, {dtype = "i64"})):dtype())
    assert.are.equal("c64", (z64 + ck.array({1}, {dtype = "i16"})):dtype())
    assert.are.equal("c64", (z64 * 2.5):dtype())
  end)

  for _, dt in ipairs {"c64", "c128"} do
    for _, dev in ipairs(H.devices()) do
      it(dt .. " elementwise ops on " .. dev .. " match the oracle (broadcasting, views, numbers)", function()
        local a = crand({7, 13}, dt, dev)
        local b = crand({7, 13}, dt, dev, true)
        local at = crand({13, 7}, dt, dev):t() -- a transposed view
        local A, B, AT = pairs_of(a), pairs_of(b), pairs_of(at)
        local scale = each(A, function(x, i) return math.max(1, C.abs(x) * C.abs(B[i]), C.abs(x) / C.abs(B[i])) end)
        check(dt .. " a + b", a + b, each(A, function(x, i) return C.add(x, B[i]) end), nil, dt)
        check(dt .. " a - at", a - at, each(A, function(x, i) return C.sub(x, AT[i]) end), nil, dt)
        check(dt .. " ck.mul", ck.mul(a, b), each(A, function(x, i) return C.mul(x, B[i]) end), scale, dt)
        check(dt .. " a / b", a / b, each(A, function(x, i) return C.div(x, B[i]) end), scale, dt)
        check(dt .. " -a", -a, each(A, function(x) return {-x[1], -x[2]} end), nil, dt)
        check(dt .. " conj", ck.conj(a), each(A, function(x) return {x[1], -x[2]} end), nil, dt)
        check(dt .. " exp", ck.exp(a), each(A, C.exp), nil, dt)
        check(dt .. " log", ck.log(b), each(pairs_of(b), C.log), nil, dt)
        check(dt .. " sqrt", ck.sqrt(a), each(A, C.sqrt), nil, dt)
        check(dt .. " a ^ 3", a ^ 3, each(A, function(x) return C.mul(x, C.mul(x, x)) end), nil, dt)
        check(dt .. " b ^ -2", b ^ -2, each(pairs_of(b), function(x) return C.div({1, 0}, C.mul(x, x)) end),
          each(pairs_of(b), function(x) return math.max(1, 1 / C.abs(x) ^ 2) end), dt)
        check(dt .. " b ^ 0.5", b ^ 0.5, each(pairs_of(b), function(x) return C.pow(x, {0.5, 0}) end), nil, dt)
        check(dt .. " ck.pow(b, a)", ck.pow(b, a), each(pairs_of(b), function(x, i) return C.pow(x, A[i]) end),
          each(pairs_of(b), function(x, i) return math.max(1, C.abs(C.pow(x, A[i])) * 4) end), dt)
        -- real results
        local abs, ang = ck.abs(a):to("host"):flat(), ck.angle(a):to("host"):flat()
        for i, x in ipairs(A) do
          assert(math.abs(abs[i] - C.abs(x)) <= EPS[dt], dt .. " abs " .. i)
          assert(math.abs(ang[i] - math.atan(x[2], x[1])) <= EPS[dt] * 4, dt .. " angle " .. i)
        end
        -- broadcasting with a real row and a number
        local row = H.rand({1, 13}, dt == "c64" and "f32" or "f64", dev)
        local R = row:to("host"):flat()
        check(dt .. " a * row (elementwise)", ck.mul(a, row),
          each(A, function(x, i) return C.mul(x, {R[(i - 1) % 13 + 1], 0}) end), nil, dt)
        check(dt .. " 2 - a", 2 - a, each(A, function(x) return {2 - x[1], -x[2]} end), nil, dt)
        -- comparisons: eq/ne only
        local e = ck.eq(a, a:clone()):to("host"):flat()
        for i = 1, #e do assert.is_true(e[i]) end
        assert.is_false(ck.ne(a, a:clone()):any():item())
        local ok, err = pcall(ck.lt, a, b)
        assert.is_false(ok); assert.matches("complex numbers have no lt", err)
        assert.matches("complex_spec.lua", err)
      end)

      it(dt .. " sum, mean and prod on " .. dev .. " match the oracle (every dim and all)", function()
        local a = crand({5, 6, 3}, dt, dev)
        local A = pairs_of(a)
        local function at(i, j, k) return A[((i - 1) * 6 + (j - 1)) * 3 + k] end
        for d = 1, 3 do
          local s, m, p = ck.sum(a, d), ck.mean(a, d), ck.prod(a, d)
          local ns = ({5, 6, 3})[d]
          local rs, rm, rp, sc = {}, {}, {}, {}
          local dims = {{1, 5}, {1, 6}, {1, 3}}
          dims[d] = {1, 1}
          for i = dims[1][1], dims[1][2] do for j = dims[2][1], dims[2][2] do for k = dims[3][1], dims[3][2] do
            local acc, pr, mag = {0, 0}, {1, 0}, 1
            for t = 1, ns do
              local x = d == 1 and at(t, j, k) or d == 2 and at(i, t, k) or at(i, j, t)
              acc = C.add(acc, x); pr = C.mul(pr, x); mag = mag * math.max(1, C.abs(x))
            end
            rs[#rs + 1], rm[#rm + 1], rp[#rp + 1], sc[#sc + 1] = acc, {acc[1] / ns, acc[2] / ns}, pr, ns * mag
          end end end
          check(dt .. " sum dim " .. d, s, rs, each(rs, function() return ns end), dt)
          check(dt .. " mean dim " .. d, m, rm, nil, dt)
          check(dt .. " prod dim " .. d, p, rp, sc, dt)
        end
        local total = {0, 0}
        for _, x in ipairs(A) do total = C.add(total, x) end
        local s = ck.sum(a)
        assert.are.same({}, s:shape())
        check(dt .. " sum", s, {total}, {#A}, dt)
        local ok, err = pcall(ck.max, a)
        assert.is_false(ok); assert.matches("complex numbers have no order", err)
      end)

      it(dt .. " matrix products on " .. dev .. " (Gauss's three products) match the oracle", function()
        local a, b = crand({9, 17}, dt, dev), crand({17, 5}, dt, dev)
        local A, B = pairs_of(a), pairs_of(b)
        local ref, sc = {}, {}
        for i = 1, 9 do for j = 1, 5 do
          local acc, mag = {0, 0}, 0
          for k = 1, 17 do
            local x, y = A[(i - 1) * 17 + k], B[(k - 1) * 5 + j]
            acc = C.add(acc, C.mul(x, y)); mag = mag + C.abs(x) * C.abs(y)
          end
          ref[#ref + 1], sc[#sc + 1] = acc, 4 * mag
        end end
        check(dt .. " a * b", a * b, ref, sc, dt)
        check(dt .. " ck.matmul", ck.matmul(a, b), ref, sc, dt)
        check(dt .. " gauss", ck.matmul(a, b, {variant = "gauss"}), ref, sc, dt)
        if dev == "cuda" then
          ck.matmul(a, b)
          assert.are.equal("cublas", ck.last_ran().name)
        end
        local bt = crand({5, 17}, dt, dev):t() -- a transposed operand and a batch
        local bb = ck.stack({b, bt}, 1)
        local c3 = ck.matmul(a:reshape({1, 9, 17}), bb)
        check(dt .. " batched", c3:select(1, 1), ref, sc, dt)
        check(dt .. " batched (transposed B)", c3:select(1, 2), pairs_of(ck.matmul(a, bt:contiguous())), sc, dt)
        local br = ck.real(b):contiguous()
        local BR = br:to("host"):flat()
        local ref2 = {}
        for i = 1, 9 do for j = 1, 5 do
          local acc = {0, 0}
          for k = 1, 17 do acc = C.add(acc, C.mul(A[(i - 1) * 17 + k], {BR[(k - 1) * 5 + j], 0})) end
          ref2[#ref2 + 1] = acc
        end end
        check(dt .. " complex * real", a * br, ref2, sc, dt)
      end)
    end
  end

  it("round-trips .npy files that NumPy reads as complex64/complex128", function()
    local dir = H.tmpdir()
    for _, dt in ipairs {"c64", "c128"} do
      local z = crand({3, 4}, dt)
      local f = dir .. "/z_" .. dt .. ".npy"
      ck.save(f, z)
      local back = ck.load(f)
      assert.are.equal(dt, back:dtype())
      assert.are.same(z:totable(), back:totable())
      local zt = z:t() -- a view saves its values
      ck.save(f, zt)
      assert.are.same(zt:totable(), ck.load(f):totable())
    end
    local py = H.sh("/usr/bin/python3 -c 'import numpy'") and "/usr/bin/python3" or nil
    if py then
      local z = crand({2, 3}, "c128")
      ck.save(dir .. "/p.npy", z)
      local ok, out = H.sh(py .. " -c \"import numpy as np; a = np.load('" .. dir .. "/p.npy'); " ..
        "print(a.dtype, a.shape); print(' '.join(repr(float(v)) for v in np.concatenate([a.real.ravel(), a.imag.ravel()])))\"")
      assert(ok, out)
      local dtype_line, values = out:match("([^\n]*)\n([^\n]*)")
      assert.are.equal("complex128 (2, 3)", dtype_line)
      local Z, got = pairs_of(z), {}
      for v in values:gmatch("%S+") do got[#got + 1] = tonumber(v) end
      for i = 1, 6 do
        assert.are.equal(Z[i][1], got[i]); assert.are.equal(Z[i][2], got[6 + i])
      end
      -- and NumPy's file back (big-endian too: each part is swapped)
      ok, out = H.sh(py .. " -c \"import numpy as np; np.save('" .. dir .. "/n.npy', " ..
        "np.array([1+2j, -3.5-0.25j], dtype='>c8'))\"")
      assert(ok, out)
      local n = ck.load(dir .. "/n.npy")
      assert.are.equal("c64", n:dtype())
      assert.are.same({{1, 2}, {-3.5, -0.25}}, n:totable())
    end
    H.sh("rm -rf '" .. dir .. "'")
  end)

  it("round-trips .mat files (the parts stored apart) that GNU Octave reads as complex, and Octave's back", function()
    if not ck.io_formats().mat then return pending("this build has no .mat support (libmatio)") end
    local dir = H.tmpdir()
    local z64, z128 = crand({3, 4}, "c64"), crand({2, 5}, "c128"):t() -- a view saves its values
    ck.save(dir .. "/z.mat", {a = z64, b = z128})
    local t = ck.load(dir .. "/z.mat")
    assert.are.equal("c64", t.a:dtype()); assert.are.equal("c128", t.b:dtype())
    assert.are.same(z64:totable(), t.a:totable()); assert.are.same(z128:totable(), t.b:totable())
    local octave = H.sh("command -v octave-cli") and "octave-cli" or nil
    if octave then
      H.write_file(dir .. "/check.m", table.concat({
        'load("z.mat");',
        'printf("%s %d %s\\n", class(a), iscomplex(a), class(b));',
        'printf("%.17g ", real(b(:))); printf("%.17g ", imag(b(:))); printf("\\n");',
        'c = complex([1 -2; 3.5 0], [0.25 4; -1 2]); save("-v6", "c.mat", "c");'}, "\n"))
      local ok, out = H.sh(("cd '%s' && %s --no-gui check.m"):format(dir, octave))
      assert(ok, out)
      local head, vals = out:match("([^\n]*)\n([^\n]*)")
      assert.are.equal("single 1 double", head)
      local got = {}
      for v in vals:gmatch("%S+") do got[#got + 1] = tonumber(v) end
      local B = z128:to("host"):t():contiguous():flat() -- column-major order of b, as Octave's b(:)
      for i = 1, #B do assert.are.equal(B[i][1], got[i]); assert.are.equal(B[i][2], got[#B + i]) end
      local c = ck.load(dir .. "/c.mat").c
      assert.are.equal("c128", c:dtype())
      assert.are.same({{{1, 0.25}, {-2, 4}}, {{3.5, -1}, {0, 2}}}, c:totable())
    end
    H.sh("rm -rf '" .. dir .. "'")
  end)

  it("says what is wrong", function()
    local ok, err = pcall(ck.complex, ck.array({1, 2}), ck.array({1, 2, 3}))
    assert.is_false(ok); assert.matches("ck.complex: shapes %[2%] and %[3%] do not broadcast", err)
    ok, err = pcall(ck.view_as_complex, ck.array({1, 2, 3}))
    assert.is_false(ok); assert.matches("view_as_complex: .* must end in a dim of 2", err)
    ok, err = pcall(ck.array, {{1, 2, 3}}, {dtype = "c64"})
    assert.is_false(ok); assert.matches("innermost tables are {re, im} pairs, got 3 numbers", err)
    local z = ck.complex(ck.array({1}), 1)
    ok, err = pcall(ck.cumsum, z)
    assert.is_false(ok); assert.matches("c64", err)
  end)
end)

describe("complex arrays on the GPU", function()
  it("cuda results equal the host's (same real ops on the parts)", gpu(function()
    for _, dt in ipairs {"c64", "c128"} do
      local a, b = crand({33, 65}, dt), crand({33, 65}, dt, nil, true)
      local ga, gb = a:to("cuda"), b:to("cuda")
      for _, f in ipairs {function(x, y) return x + y end, function(x, y) return ck.mul(x, y) end,
                          function(x, y) return x / y end, function(x) return ck.exp(x) end,
                          function(x) return ck.sum(x, 1) end, function(x, y) return x * y:t() end} do
        local h, g = f(a, b), f(ga, gb)
        assert.are.equal("cuda", g:device():match("^%a+"))
        local ref = pairs_of(h)
        check(dt .. " cuda vs host", g, ref, each(ref, function(x) return 260 * math.max(1, C.abs(x)) end), dt)
      end
    end
  end))
end)
