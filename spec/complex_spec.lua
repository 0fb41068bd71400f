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
    ok, err = pcall(ck.sort, z) -- (no order: MATLAB sorts by abs, NumPy lexicographically; cukern says so)
    assert.is_false(ok); assert.matches("c64", err)
  end)
end)

-- ---------------------------------------------------------------- the fused ops (one pass each)

-- a complex array whose parts are all NaN, so that an element the op does not write shows
local function poisoned(shape, dt, dev)
  local z = ck.empty(shape, {dtype = dt, device = dev or "host"})
  ck.view_as_real(z):fill(0 / 0)
  return z
end

-- the pairs of x (an array or a number) broadcast to shape, row-major
local function bpairs(x, shape)
  if type(x) == "number" then
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local r = {}
    for i = 1, n do r[i] = {x, 0} end
    return r
  end
  if not ck.iscomplex(x) then x = ck.complex(x, 0) end
  return pairs_of(x:expand(shape))
end

local function bshape(a, b)
  local sa, sb = type(a) == "number" and {} or a:shape(), type(b) == "number" and {} or b:shape()
  local n, r = math.max(#sa, #sb), {}
  for i = 1, n do
    local x, y = sa[#sa - n + i] or 1, sb[#sb - n + i] or 1
    r[i] = x == 1 and y or x
  end
  return r
end

local BIN = {add = C.add, sub = C.sub, mul = C.mul, div = C.div}
local function bin_ref(name, a, b)
  local shape = bshape(a, b)
  local A, B = bpairs(a, shape), bpairs(b, shape)
  local ref, sc = {}, {}
  for i = 1, #A do
    ref[i] = BIN[name](A[i], B[i])
    local ma, mb = C.abs(A[i]), C.abs(B[i])
    sc[i] = math.max(1, ma * mb, mb > 0 and ma / mb or 0, C.abs(ref[i]))
  end
  return ref, sc, shape
end

local UN = {neg = function(x) return {-x[1], -x[2]} end, conj = function(x) return {x[1], -x[2]} end,
            exp = C.exp, log = C.log, sqrt = C.sqrt}

describe("fused complex ops (one pass, host backend)", function()
  for _, dt in ipairs {"c64", "c128"} do
    local real = dt == "c64" and "f32" or "f64"
    it(dt .. " binary ops: awkward shapes, broadcasting, views, numbers, out= and in place", function()
      for _, shape in ipairs {{1}, {7}, {1000}, {3, 5, 7}} do
        local a, b = crand(shape, dt), crand(shape, dt, nil, true)
        for name in pairs(BIN) do
          local ref, sc = bin_ref(name, a, b)
          check(dt .. " " .. name .. " " .. #shape .. "-D", ck[name](a, b), ref, sc, dt)
          local out = poisoned(shape, dt)
          assert.are.equal(out, ck[name](a, b, {out = out}))
          check(dt .. " " .. name .. " out=", out, ref, sc, dt)
          for _, num in ipairs {2.5, -3} do -- numbers on either side
            local r1, s1 = bin_ref(name, a, num)
            check(dt .. " " .. name .. " number right", ck[name](a, num), r1, s1, dt)
            local r2, s2 = bin_ref(name, num, b)
            check(dt .. " " .. name .. " number left", ck[name](num, b), r2, s2, dt)
          end
        end
      end
      -- broadcasting: [3, 1, 7] with [5, 1]; a 0-d complex operand; a real row promotes
      local a, b = crand({3, 1, 7}, dt), crand({5, 1}, dt, nil, true)
      for name in pairs(BIN) do
        local ref, sc = bin_ref(name, a, b)
        check(dt .. " " .. name .. " broadcast", ck[name](a, b), ref, sc, dt)
      end
      local z0 = crand({}, dt, nil, true)
      local ref, sc = bin_ref("div", a, z0)
      check(dt .. " div by 0-d", a / z0, ref, sc, dt)
      local row = H.rand({1, 7}, real)
      ref, sc = bin_ref("mul", a, row)
      check(dt .. " mul real row", ck.mul(a, row), ref, sc, dt)
      local r64 = H.rand({7}, "f64")
      assert.are.equal("c128", ck.add(a, r64):dtype())
      -- views: transposed, narrowed (an odd offset), a column of a bigger array
      local big = crand({9, 12}, dt)
      local at, an, col = crand({7, 9}, dt):t(), big:narrow(2, 2, 8), big:select(2, 5)
      local bb = crand({9, 7}, dt, nil, true)
      for name in pairs(BIN) do
        local r1, s1 = bin_ref(name, at, bb)
        check(dt .. " " .. name .. " transposed", ck[name](at, bb), r1, s1, dt)
        local r2, s2 = bin_ref(name, an, bb)
        check(dt .. " " .. name .. " narrowed", ck[name](an, bb), r2, s2, dt)
        local r3, s3 = bin_ref(name, col, bb:select(2, 1))
        check(dt .. " " .. name .. " column", ck[name](col, bb:select(2, 1)), r3, s3, dt)
      end
      -- a strided out (a transposed view) and in place (a:mul_(b), a:div_(b): each element read before written)
      local ot = poisoned({9, 7}, dt):t()
      local r4, s4 = bin_ref("sub", bb:t(), at:t())
      ck.sub(bb:t(), at:t(), {out = ot})
      check(dt .. " sub into a transposed out", ot, r4, s4, dt)
      for _, name in ipairs {"mul", "div", "add"} do
        local x, y = crand({5, 6}, dt), crand({5, 6}, dt, nil, true)
        local r5, s5 = bin_ref(name, x, y)
        local same = x[name .. "_"](x, y)
        assert.are.equal(x, same)
        check(dt .. " " .. name .. "_ in place", x, r5, s5, dt)
      end
    end)

    it(dt .. " unary ops, abs/angle (real results) and eq/ne (bool) match the oracle", function()
      for _, shape in ipairs {{1}, {7}, {1000}, {3, 5, 7}} do
        local a = crand(shape, dt, nil, true)
        local A = pairs_of(a)
        for name, f in pairs(UN) do
          local out = poisoned(shape, dt)
          ck.core.complex_op(name, a, nil, out)
          check(dt .. " " .. name .. " out=", out, each(A, f), nil, dt)
          check(dt .. " " .. name, ck[name](a), each(A, f), nil, dt)
        end
        local at = a:reshape({a:numel()}):narrow(1, 1, a:numel()) -- (a view of the same values)
        local abs, ang = ck.abs(at):flat(), ck.angle(at):flat()
        assert.are.equal(dt == "c64" and "f32" or "f64", ck.abs(a):dtype())
        for i, x in ipairs(A) do
          assert(math.abs(abs[i] - C.abs(x)) <= EPS[dt] * C.abs(x), dt .. " abs " .. i)
          assert(math.abs(ang[i] - math.atan(x[2], x[1])) <= EPS[dt] * 4, dt .. " angle " .. i)
        end
        local im = ck.imag(a):clone()
        im:reshape({a:numel()})[1] = 9 -- the first element differs in its imaginary part only
        local b = ck.complex(ck.real(a), im)
        local e, n = ck.eq(a, b):flat(), ck.ne(a, b):flat()
        assert.are.equal("bool", ck.eq(a, b):dtype())
        for i = 1, #e do
          assert.are.equal(i ~= 1, e[i], dt .. " eq " .. i)
          assert.are.equal(i == 1, n[i], dt .. " ne " .. i)
        end
      end
      -- the principal root on the branch cut keeps the sign of a zero imaginary part (NumPy, C99 csqrt)
      local cut = ck.complex(ck.array({-4, -4, 0, 4}, {dtype = real}), ck.array({0, -0.0, 0, 0}, {dtype = real}))
      assert.are.same({{0, 2}, {0, -2}, {0, 0}, {2, 0}}, ck.sqrt(cut):totable())
      -- Smith's division: no overflow where |b|^2 would overflow (c64: |b| > 1.8e19; c128: 1.3e154)
      local big = dt == "c64" and 1e30 or 1e200
      local q = ck.div(ck.complex(ck.array({big}, {dtype = real}), ck.array({big}, {dtype = real})),
                       ck.complex(ck.array({big}, {dtype = real}), ck.array({-big}, {dtype = real})))
      check(dt .. " Smith's division", q, {{0, 1}}, nil, dt)
      -- z / z is 1 + 0i with a +0 imaginary part in both of Smith's cases (|re| or |im| the larger), as NumPy gives
      -- it: a -0 there would move a later sqrt or log to the other side of its branch cut
      local z = ck.complex(ck.array({1, 2, 0}, {dtype = real}), ck.array({2, 1, 3}, {dtype = real}))
      local zz = ck.div(z, z):totable()
      for i = 1, 3 do
        assert.are.equal(1, zz[i][1], dt .. " z / z " .. i)
        assert.are.equal(math.huge, 1 / zz[i][2], dt .. " z / z has a +0 imaginary part " .. i)
      end
      -- exp of a large real number: (inf, 0), not NaN
      local e = ck.exp(ck.complex(ck.array({1000}, {dtype = real}), 0)):flat()[1]
      assert.are.equal(math.huge, e[1]); assert.are.equal(0, e[2])
    end)

    it(dt .. " sum and mean over everything and along each dim (keepdim, out=) in one pass", function()
      for _, shape in ipairs {{1}, {7}, {1000}, {3, 5, 7}, {2, 300, 3}} do
        local a = crand(shape, dt)
        local A = pairs_of(a)
        local total = {0, 0}
        for _, x in ipairs(A) do total = C.add(total, x) end
        check(dt .. " sum", ck.sum(a), {total}, {#A}, dt)
        check(dt .. " mean", ck.mean(a), {{total[1] / #A, total[2] / #A}}, nil, dt)
        assert.are.same(each(shape, function() return 1 end), ck.sum(a, {keepdim = true}):shape())
        for d = 1, #shape do
          -- the oracle: fold along d of the row-major pairs
          local inner, len = 1, shape[d]
          for k = d + 1, #shape do inner = inner * shape[k] end
          local outer = #A // (len * inner)
          local rs, rm = {}, {}
          for o = 0, outer - 1 do for i = 0, inner - 1 do
            local acc = {0, 0}
            for r = 0, len - 1 do acc = C.add(acc, A[(o * len + r) * inner + i + 1]) end
            rs[#rs + 1], rm[#rm + 1] = acc, {acc[1] / len, acc[2] / len}
          end end
          check(dt .. " sum dim " .. d, ck.sum(a, d), rs, each(rs, function() return len end), dt)
          local out = poisoned((function() local s = {table.unpack(shape)}; s[d] = 1; return s end)(), dt)
          ck.mean(a, d, {keepdim = true, out = out})
          check(dt .. " mean dim " .. d .. " keepdim out=", out, rm, nil, dt)
          check(dt .. " sum dim " .. -d, ck.sum(a, d - #shape - 1), rs, each(rs, function() return len end), dt)
        end
      end
      -- a view (transposed) is summed by its values; an empty dim sums to 0 and its mean is NaN
      local m = crand({4, 6}, dt)
      check(dt .. " sum of a transposed view", ck.sum(m:t(), 1), pairs_of(ck.sum(m, 2)), {8, 8, 8, 8}, dt)
      local z = ck.sum(ck.empty({0, 3}, {dtype = dt}), 1):flat()
      assert.are.same({{0, 0}, {0, 0}, {0, 0}}, z)
      assert.are_not.equal(ck.mean(ck.empty({0}, {dtype = dt})):flat()[1][1], ck.mean(ck.empty({0}, {dtype = dt})):flat()[1][1])
    end)
  end

  it("names the op, shapes and dtypes in its messages", function()
    local a, b = crand({2, 3}, "c64"), crand({4}, "c64")
    local ok, err = pcall(ck.add, a, b)
    assert.is_false(ok); assert.matches("ck.add: .*%[2x3%].*%[4%]", err); assert.matches("complex_spec.lua", err)
    ok, err = pcall(ck.mul, a, a, {out = ck.empty({2, 3}, {dtype = "f32", device = "host"})})
    assert.is_false(ok); assert.matches("ck.mul: out is f32 but the result is c64", err)
    ok, err = pcall(ck.sum, a, 3)
    assert.is_false(ok); assert.matches("ck.sum: .*dim", err)
    ok, err = pcall(ck.complex_op or ck.core.complex_op, "cbrt", a)
    assert.is_false(ok); assert.matches("unknown complex op 'cbrt'", err)
  end)

  it("is a ladder of its own: ck.variants(\"complex\"), and the host runs it", function()
    local names = {}
    for _, v in ipairs(ck.variants("complex")) do names[#names + 1] = v.name end
    assert.are.same({"strided", "vectorized"}, names)
    ck.mul(crand({3}, "c64"), crand({3}, "c64"))
    assert.are.equal("host", ck.last_ran().name)
  end)
end)

-- cuda against the host, every op and rung, the layouts each rung takes (run on the GPU host)
describe("fused complex ops on the GPU", function()
  it("equal the host's results for every op, rung, layout and sum shape", gpu(function()
    local core = ck.core
    -- got (cuda) against the host's h: |error| of each part <= EPS * 8 * scale * max(1, |h|), scale a number (or
    -- nil: 1) checked in array ops (a Lua walk over 2^20 pairs costs seconds), or a table of per-element scales
    local function same(label, g, h, dt, scale)
      assert.are.equal("cuda", g:device():match("^%a+"), label)
      assert(ck.iscomplex(g), label .. ": the result is " .. g:dtype() .. ", not complex")
      assert.are.same(h:shape(), g:shape(), label .. ": shape")
      local walk = type(scale) == "table"
      if not walk then
        local d = g:to("host") - h
        local err = ck.maximum(ck.abs(ck.real(d)), ck.abs(ck.imag(d)))
        local tol = ck.maximum(ck.abs(h), 1) * (8 * (scale or 1) * EPS[dt])
        walk = not ck.all(ck.le(err, tol)):item() -- NaN fails le: it walks and is named
      end
      if walk then
        local ref = pairs_of(h)
        check(label, g, ref, each(ref, function(x, i)
          return (type(scale) == "table" and scale[i] or scale or 1) * 8 * math.max(1, C.abs(x)) end), dt)
      end
    end
    for _, dt in ipairs {"c64", "c128"} do
      local real = dt == "c64" and "f32" or "f64"
      for _, n in ipairs {1, 7, 1000, 65537, (1 << 20) + 3} do
        local a, b = crand({n}, dt, "host"), crand({n}, dt, "host", true)
        local ga, gb = a:to("cuda"), b:to("cuda")
        for _, variant in ipairs {"vectorized", "strided"} do
          for name in pairs(BIN) do
            local _, sc = bin_ref(name, a:narrow(1, 1, math.min(n, 64)), b:narrow(1, 1, math.min(n, 64)))
            local h = core.complex_op(name, a, b)
            local out = poisoned({n}, dt, "cuda")
            core.complex_op(name, ga, gb, out, nil, nil, variant)
            assert.are.equal(variant, ck.last_ran().name)
            local m = math.min(n, 64)
            same(dt .. " " .. name .. " " .. variant .. " n=" .. n, out:narrow(1, 1, m), h:narrow(1, 1, m), dt, sc)
            same(dt .. " " .. name .. " tail", out:narrow(1, n - m + 1, n), h:narrow(1, n - m + 1, n), dt)
            same(dt .. " " .. name .. " number", core.complex_op(name, 2.5, gb, nil, nil, nil, variant, -1),
              core.complex_op(name, 2.5, b, nil, nil, nil, nil, -1), dt)
          end
          for name in pairs(UN) do
            same(dt .. " " .. name .. " " .. variant, core.complex_op(name, gb, nil, nil, nil, nil, variant),
              core.complex_op(name, b), dt)
          end
          for _, name in ipairs {"abs", "angle", "eq", "ne"} do
            local g = core.complex_op(name, ga, name:match("^[en]") and gb or nil, nil, nil, nil, variant)
            local h = core.complex_op(name, a, name:match("^[en]") and b or nil)
            local ok = name:match("^[en]") and ck.equal(g:to("host"), h) or ck.allclose(g:to("host"), h, 4 * EPS[dt], 4 * EPS[dt])
            assert.is_true(ok, dt .. " " .. name)
          end
        end
        -- an odd offset (8-byte aligned c64: the 8-byte path), in place, mixed with a real array
        if n > 2 then
          local g1, h1 = ga:narrow(1, 2, n), a:narrow(1, 2, n)
          same(dt .. " odd offset mul", ck.mul(g1, gb:narrow(1, 1, n - 1)), ck.mul(h1, b:narrow(1, 1, n - 1)), dt, nil)
          local gc, hc = ga:clone(), a:clone()
          gc:div_(gb); hc:div_(b)
          same(dt .. " div_ in place", gc, hc, dt, 16)
          local r = H.rand({n}, real, "host")
          same(dt .. " + real", ck.add(ga, r:to("cuda")), ck.add(a, r), dt)
        end
        same(dt .. " sum n=" .. n, ck.sum(ga), ck.sum(a), dt, {n})
        same(dt .. " mean n=" .. n, ck.mean(ga), ck.mean(a), dt)
        same(dt .. " sum strided rung", core.complex_op("sum", ga, nil, nil, nil, nil, "strided"), ck.sum(a), dt, {n})
      end
      -- views and broadcasting take the strided rung (the vectorized one declines them)
      local m, v = crand({33, 65}, dt, "host"), crand({65, 33}, dt, "host", true)
      local gm, gv = m:to("cuda"), v:to("cuda")
      for name in pairs(BIN) do
        same(dt .. " " .. name .. " transposed", ck[name](gm, gv:t()), ck[name](m, v:t()), dt, 16)
        same(dt .. " " .. name .. " broadcast row", ck[name](gm, gv:t():narrow(1, 1, 1)), ck[name](m, v:t():narrow(1, 1, 1)), dt, 16)
      end
      ck.mul(gm, gv:t())
      assert.are.equal("strided", ck.last_ran().name)
      -- sums along every dim of awkward shapes: rows (inner 1), narrow columns, wide columns (inner > 256), long rows
      for _, shape in ipairs {{3, 5, 7}, {1000, 300}, {7, 1000, 3}, {2, 100003}, {100003, 2}, {5, 3, 700}} do
        local x = crand(shape, dt, "host")
        local gx = x:to("cuda")
        for d = 1, #shape do
          same(dt .. " sum dim " .. d .. " of " .. table.concat(shape, "x"), ck.sum(gx, d), ck.sum(x, d), dt, shape[d])
          same(dt .. " mean dim " .. d .. " keepdim", ck.mean(gx, d, {keepdim = true}), ck.mean(x, d, {keepdim = true}), dt)
        end
        local xt, gxt = x:transpose(1, #shape), gx:transpose(1, #shape)
        same(dt .. " sum of a transposed view", ck.sum(gxt, 1), ck.sum(xt, 1), dt, shape[#shape])
      end
    end
  end))
end)

describe("complex arrays on the GPU", function()
  it("cuda results equal the host's (the fused ops, the complex matmul)", gpu(function()
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
      -- Smith's division on the GPU: z / z is 1 + 0i with a +0 imaginary part in both cases, as on the host
      local real = dt == "c64" and "f32" or "f64"
      local z = ck.complex(ck.array({1, 2, 0}, {dtype = real}), ck.array({2, 1, 3}, {dtype = real})):to("cuda")
      local zz = ck.div(z, z):totable()
      for i = 1, 3 do
        assert.are.equal(1, zz[i][1], dt .. " cuda z / z " .. i)
        assert.are.equal(math.huge, 1 / zz[i][2], dt .. " cuda z / z has a +0 imaginary part " .. i)
      end
    end
  end))
end)

-- ---------------------------------------------------------------- creation, fill, cumsum and where (complex_fns.lua)
describe("complex creation, fill, cumsum and where", function()
  local function run(dev)
    for _, dt in ipairs {"c64", "c128"} do
      local real = dt == "c64" and "f32" or "f64"
      -- rand: both parts in [0, 1) and not equal to each other; randn: each part's variance 1/2 (E|z|^2 = 1)
      local r = ck.rand({4000}, {dtype = dt, device = dev})
      assert.are.equal(dt, r:dtype())
      local p = pairs_of(r)
      local differ = 0
      for _, v in ipairs(p) do
        assert(v[1] >= 0 and v[1] < 1 and v[2] >= 0 and v[2] < 1, "rand parts in [0, 1)")
        if v[1] ~= v[2] then differ = differ + 1 end
      end
      assert(differ > 3990, "the parts are drawn apart")
      local n, s2 = 20000, 0
      for _, v in ipairs(pairs_of(ck.randn({n}, {dtype = dt, device = dev}))) do s2 = s2 + v[1] ^ 2 + v[2] ^ 2 end
      -- E|z|^2 = 1 with standard deviation sqrt(Var(|z|^2) / n) = 1/sqrt(n): 6 sigma
      assert(math.abs(s2 / n - 1) < 6 / math.sqrt(n), ("randn: mean |z|^2 = %.4f, expected 1"):format(s2 / n))
      -- eye and full
      local e = pairs_of(ck.eye(3, 4, {dtype = dt, device = dev}))
      for i = 1, 12 do
        local row, col = (i - 1) // 4, (i - 1) % 4
        assert.are.same({row == col and 1 or 0, 0}, e[i])
      end
      local f = ck.full({2, 3}, {1.5, -2.25}, {dtype = dt, device = dev})
      assert.are.equal(dt, f:dtype())
      for _, v in ipairs(pairs_of(f)) do assert.are.same({1.5, -2.25}, v) end
      assert.are.equal("c128", ck.full({2}, {1, 2}, {device = dev}):dtype()) -- NumPy's complex default
      -- fill and assignment of a {re, im} pair, into a strided view
      local z = ck.zeros({3, 4}, {dtype = dt, device = dev})
      z:t():narrow(1, 2, 3):fill({7, -8}) -- columns 2..3 of z
      z[{1, 1}] = {0.5, 0.25}
      z[3] = {-1, 2}
      local want = {}
      for i = 1, 3 do for j = 1, 4 do
        local v = {0, 0}
        if j >= 2 and j <= 3 then v = {7, -8} end
        if i == 1 and j == 1 then v = {0.5, 0.25} end
        if i == 3 then v = {-1, 2} end
        want[#want + 1] = v
      end end
      assert.are.same(want, pairs_of(z))
      -- cumsum along every dim, exclusive, into out, of a transposed view: the oracle sums the pairs in f64
      local a = crand({5, 7}, dt, dev)
      for _, view in ipairs {false, true} do
        local x = view and a:t() or a
        local xs = x:shape()
        local vals = pairs_of(x:contiguous())
        for _, d in ipairs {1, 2, -1} do
          for _, ex in ipairs {false, true} do
            local dd = d < 0 and 2 + 1 + d or d
            local ref = {}
            for i = 1, xs[1] do for j = 1, xs[2] do
              local acc = {0, 0}
              local upto = dd == 1 and i or j
              for t = 1, upto - (ex and 1 or 0) do
                local v = dd == 1 and vals[(t - 1) * xs[2] + j] or vals[(i - 1) * xs[2] + t]
                acc = C.add(acc, v)
              end
              ref[#ref + 1] = acc
            end end
            local out = ck.full(xs, {0 / 0, 0 / 0}, {dtype = dt, device = dev}) -- poisoned
            local got = ck.cumsum(x, d, {exclusive = ex, out = out})
            assert.are.equal(out, got)
            check(("cumsum %s dim %d%s%s"):format(dt, d, ex and " excl" or "", view and " of a:t()" or ""), got, ref,
              each(ref, function() return 8 end), dt)
            check("a:cumsum", x:cumsum(d, {exclusive = ex}), ref, each(ref, function() return 8 end), dt)
          end
        end
      end
      -- where: a complex array, a number, a real array, broadcasting over rows
      local c = ck.rand({4, 6}, {device = dev}):gt(0.5)
      local za, rb = crand({4, 6}, dt, dev), H.rand({1, 6}, real):to(dev)
      local cv, zv, bv = c:to("host"):flat(), pairs_of(za), rb:to("host"):flat()
      local w1, w2 = pairs_of(ck.where(c, za, 2)), pairs_of(ck.where(c, rb, za))
      for i = 1, 24 do
        local j = (i - 1) % 6 + 1
        assert.are.same(cv[i] and zv[i] or {2, 0}, w1[i], "where(c, z, 2) " .. i)
        assert.are.same(cv[i] and {bv[j], 0} or zv[i], w2[i], "where(c, real, z) " .. i)
      end
    end
  end

  it("on the host, against a plain-Lua oracle", function() run("host") end)
  it("on the GPU, the same checks", gpu(function() run("cuda") end))

  it("say what is wrong", function()
    local z = ck.zeros({2}, {dtype = "c64"})
    assert.has_error(function() ck.zeros({2}):fill({1, 2}) end)
    assert.matches("a {re, im} pair fills a complex array", select(2, pcall(function() ck.zeros({2}):fill({1, 2}) end)))
    assert.matches("pair of numbers", select(2, pcall(function() z:fill({1, 2, 3}) end)))
    assert.matches("dtype must be c64 or c128", select(2, pcall(ck.full, {2}, {1, 2}, {dtype = "f32"})))
    assert.matches("out of range", select(2, pcall(ck.cumsum, z, 3)))
    assert.matches("complex_spec.lua:%d+:", select(2, pcall(function() return ck.cumsum(z, 3) end)))
  end)
end)
