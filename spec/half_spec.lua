--- f16 and bf16: conversions (exhaustive, against an independent Lua implementation), storage, creation,
-- casts among all five dtypes, printing, promotion, elementwise ops (computed in f32, stored rounded),
-- reductions (accumulated in f32 or wider), transpose and copies; then every CUDA path against the host.
local H = require "spec.helpers"
local ck = H.ck
local core = ck.core

local gpu = H.gpu
local HALVES = {"f16", "bf16"}
local ALL = {"f32", "f64", "i32", "f16", "bf16"}

-- ---------------------------------------------------------------- the Lua reference conversions

-- Format parameters: emin (exponent of the smallest normal), mantissa bits, the inf pattern, the sign bit.
local FMT = {
  f16 = {emin = -14, mbits = 10, ebits = 5, inf = 0x7c00, sign = 0x8000, u = 2 ^ -11},
  bf16 = {emin = -126, mbits = 7, ebits = 8, inf = 0x7f80, sign = 0x8000, u = 2 ^ -8},
}

--- bits -> value (a double; NaN for NaN patterns)
local function dec(fmt, b)
  local F = FMT[fmt]
  local emask = (1 << F.ebits) - 1
  local e, m = (b >> F.mbits) & emask, b & ((1 << F.mbits) - 1)
  local v
  if e == emask then v = (m == 0) and math.huge or (0 / 0)
  elseif e == 0 then v = m * 2.0 ^ (F.emin - F.mbits)
  else v = ((1 << F.mbits) + m) * 2.0 ^ (e - 1 + F.emin - F.mbits) end
  if b & F.sign ~= 0 then v = -v end
  return v
end

--- value (a double) -> bits, rounded to nearest, ties to even; overflow to inf; NaN gives "nan".
local function enc(fmt, v)
  local F = FMT[fmt]
  if v ~= v then return "nan" end
  local s = (v < 0 or (v == 0 and 1 / v < 0)) and F.sign or 0
  local a = math.abs(v)
  local emax = (1 << (F.ebits - 1)) - 1
  if a >= 2.0 ^ (emax + 1) then return s | F.inf end
  local e = F.emin
  while a >= 2.0 ^ (e + 1) do e = e + 1 end
  local n = a / 2.0 ^ (e - F.mbits) -- exact: a power-of-two scaling
  local r = math.floor(n)
  local f = n - r
  if f > 0.5 or (f == 0.5 and r % 2 == 1) then r = r + 1 end
  local bits = math.tointeger((e - F.emin) * (1 << F.mbits) + r)
  if bits >= F.inf then bits = F.inf end
  return s | bits
end

--- the value v rounds to in fmt
local function round_to(fmt, v)
  local b = enc(fmt, v)
  if b == "nan" then return 0 / 0 end
  return dec(fmt, b)
end

local function f32_of_bits(u) return (string.unpack("<f", string.pack("<I4", u))) end
local function f32(v) return (string.unpack("<f", string.pack("<f", v))) end

local function same(a, b) -- equal values, NaN matching NaN, and the sign of zero
  if a ~= a then return b ~= b end
  if a == 0 and b == 0 then return 1 / a == 1 / b end
  return a == b
end

local function shape_str(a) return "[" .. table.concat(type(a) == "table" and a or a:shape(), "x") .. "]" end

--- f32 random values spread over a range, converted (RNE) to dt: never all zeros.
local function rnd(shape, dt, lo, hi, device)
  lo, hi = lo or -4, hi or 4
  local u = ck.rand(shape, {dtype = "f32", device = device or "host"})
  return (u * (hi - lo) + lo):to(dt)
end

-- ---------------------------------------------------------------- conversions

describe("f16/bf16 conversions on the host", function()
  -- host-only cases: arrays made without a device go to the host here, also on a machine with a GPU
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  it("the Lua reference is self-consistent: enc(dec(b)) == b for every non-NaN pattern", function()
    for _, fmt in ipairs(HALVES) do
      local nnan = 0
      for b = 0, 0xffff do
        local v = dec(fmt, b)
        if v ~= v then nnan = nnan + 1
        else assert(enc(fmt, v) == b, ("%s pattern %04x -> %.17g -> %s"):format(fmt, b, v, tostring(enc(fmt, v)))) end
      end
      assert.equals(fmt == "f16" and 2046 or 254, nnan, fmt .. " NaN patterns")
    end
  end)

  it("all 65536 bit patterns round trip through f64, f32 and tables, exactly (NaN stays NaN, -0 stays -0)", function()
    for _, fmt in ipairs(HALVES) do
      local vals = {}
      for b = 0, 0xffff do vals[b + 1] = dec(fmt, b) end
      local h = ck.array(vals, {dtype = "f64", device = "host"}):to(fmt) -- f64 -> half, rounded once
      assert.equals(fmt, h:dtype())
      local direct = ck.array(vals, {dtype = fmt, device = "host"})   -- table -> half
      local paths = {
        {"flat", h:flat()},
        {"to f64", h:to("f64"):flat()},
        {"to f32", h:to("f32"):flat()},
        {"f32 -> half -> f64", h:to("f32"):to(fmt):to("f64"):flat()},
        {"from table", direct:flat()},
      }
      for _, p in ipairs(paths) do
        local got = p[2]
        assert.equals(65536, #got)
        for i = 1, 65536 do
          if not same(got[i], vals[i]) then
            error(("%s %s: pattern %04x: got %.17g, want %.17g"):format(fmt, p[1], i - 1, got[i], vals[i]))
          end
        end
      end
    end
  end)

  it("rounds every tie to even and every near-tie the right way, from f64 and from f32 (no double rounding)", function()
    for _, fmt in ipairs(HALVES) do
      local F = FMT[fmt]
      local ins, want, ins32, want32 = {}, {}, {}, {}
      local last = F.inf - 2 -- the largest pattern whose successor is finite
      for b = 0, last do
        local lo, hi = dec(fmt, b), dec(fmt, b + 1)
        local mid = (lo + hi) / 2
        local even = (b % 2 == 0) and lo or hi
        local d = (hi - lo) * 2 ^ -30 -- below f32's precision at mid: (float)(mid +- d) == mid
        for sgn = -1, 1, 2 do
          ins[#ins + 1], want[#want + 1] = sgn * mid, sgn * even
          ins[#ins + 1], want[#want + 1] = sgn * (mid + d), sgn * hi
          ins[#ins + 1], want[#want + 1] = sgn * (mid - d), sgn * lo
          -- the same ties reached from f32 (exact there: the mid needs mbits + 2 bits)
          ins32[#ins32 + 1], want32[#want32 + 1] = sgn * mid, sgn * even
        end
      end
      -- overflow: the tie above the largest finite value goes to inf, anything below it to the max
      local maxf, nxt = dec(fmt, F.inf - 1), 2 * dec(fmt, F.inf - 1) - dec(fmt, F.inf - 2)
      for _, p in ipairs {{(maxf + nxt) / 2, math.huge}, {(maxf + nxt) / 2 * (1 - 2 ^ -40), maxf}, {1e300, math.huge},
                          {-1e300, -math.huge}, {2 ^ -200, 0}, {-2 ^ -200, -0.0}} do
        ins[#ins + 1], want[#want + 1] = p[1], p[2]
      end
      local got = ck.array(ins, {dtype = "f64", device = "host"}):to(fmt):to("f64"):flat()
      for i = 1, #ins do
        if not same(got[i], want[i]) then
          error(("%s from f64: %.17g gave %.17g, want %.17g"):format(fmt, ins[i], got[i], want[i]))
        end
      end
      local tbl = ck.array(ins, {dtype = fmt, device = "host"}):flat()
      for i = 1, #ins do assert(same(tbl[i], want[i]), ("%s from a table: %.17g gave %.17g"):format(fmt, ins[i], tbl[i])) end
      local g32 = ck.array(ins32, {dtype = "f64", device = "host"}):to("f32"):to(fmt):flat()
      for i = 1, #ins32 do
        assert(f32(ins32[i]) == ins32[i], "tie not exact in f32")
        assert(same(g32[i], want32[i]), ("%s from f32: %.17g gave %.17g, want %.17g"):format(fmt, ins32[i], g32[i], want32[i]))
      end
    end
  end)

  it("converts a large random sample of f32 values (all exponents, subnormals, NaN, inf) like the reference", function()
    local vals = {}
    for i = 1, 200000 do
      local e
      if i % 3 == 0 then e = math.random(0, 255) else e = math.random(127 - 30, 127 + 17) end -- half's range, densely
      local u = (math.random(0, 1) << 31) | (e << 23) | math.random(0, (1 << 23) - 1)
      if i % 97 == 0 then u = u & 0xffff0000 | 0x8000 end -- bf16 ties
      if i % 89 == 0 then u = u & 0xffffe000 | 0x1000 end -- f16 ties (normal range)
      vals[i] = f32_of_bits(u)
    end
    vals[#vals + 1], vals[#vals + 2], vals[#vals + 3] = math.huge, -math.huge, 0 / 0
    local x = ck.array(vals, {dtype = "f64", device = "host"}):to("f32")
    for _, fmt in ipairs(HALVES) do
      local got = x:to(fmt):flat()
      for i = 1, #vals do
        local w = round_to(fmt, vals[i])
        if not same(got[i], w) then error(("%s: f32 %.17g gave %.17g, want %.17g"):format(fmt, vals[i], got[i], w)) end
      end
    end
  end)

  it("elementwise results are rounded from f32 to the dtype like the reference (products are exact in f32)", function()
    -- x * y of two f16 (11-bit) or bf16 (8-bit) values is exact in f32, so the stored result is RNE(x*y):
    -- this reaches the f32 -> half rounding of every op's store, including subnormal results and overflow.
    for _, fmt in ipairs(HALVES) do
      local xs, ys = {}, {}
      for i = 1, 60000 do
        local bx, by = math.random(0, 0xffff), math.random(0, 0xffff)
        local vx, vy = dec(fmt, bx), dec(fmt, by)
        if vx ~= vx or vy ~= vy or math.abs(vx) == math.huge or math.abs(vy) == math.huge then vx, vy = 1.5, -3 end
        if fmt == "f16" and i % 2 == 0 then vy = vy * 2 ^ -12 end -- push products into the subnormal range
        xs[i], ys[i] = vx, round_to(fmt, vy)
      end
      local x, y = ck.array(xs, {dtype = fmt, device = "host"}), ck.array(ys, {dtype = fmt, device = "host"})
      local got = ck.mul(x, y):flat()
      for i = 1, #xs do
        local w = round_to(fmt, xs[i] * ys[i])
        if not same(got[i], w) then
          error(("%s: %.17g * %.17g gave %.17g, want %.17g"):format(fmt, xs[i], ys[i], got[i], w))
        end
      end
    end
  end)
end)

-- ---------------------------------------------------------------- storage, creation, casts, printing

describe("f16/bf16 arrays on the host", function()
  -- host-only cases: arrays made without a device go to the host here, also on a machine with a GPU
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  it("are created by every constructor with the dtype's values", function()
    for _, dt in ipairs(HALVES) do
      local o = {dtype = dt, device = "host"}
      assert.equals(dt, ck.empty({2, 3}, o):dtype())
      assert.same({{0, 0}, {0, 0}}, ck.zeros({2, 2}, o):totable())
      assert.same({1, 1, 1}, ck.ones(3, o):totable())
      assert.same({round_to(dt, 0.1), round_to(dt, 0.1)}, ck.full({2}, 0.1, o):totable())
      assert.same({{1, 0, 0}, {0, 1, 0}}, ck.eye(2, 3, o):totable())
      local ar = ck.arange(-1, 1, 0.1, o):flat()
      assert.equals(20, #ar)
      for i = 1, 20 do assert.equals(round_to(dt, -1 + 0.1 * (i - 1)), ar[i], "arange " .. i) end
      local ls = ck.linspace(0, 1000, 7, o):flat()
      for i = 1, 7 do assert.equals(round_to(dt, (i - 1) * (1000 / 6)), ls[i], "linspace " .. i) end
      local r = ck.rand({4000}, o)
      local q = dt == "f16" and 2 ^ 11 or 2 ^ 8
      local distinct, seen = 0, {}
      for _, v in ipairs(r:flat()) do
        assert(v >= 0 and v < 1, dt .. " rand out of [0, 1): " .. v)
        assert.equals(math.floor(v * q), v * q, "rand draws are multiples of 2^-bits")
        if not seen[v] then seen[v], distinct = true, distinct + 1 end
      end
      assert(distinct > (dt == "f16" and 1000 or 200), dt .. " rand: only " .. distinct .. " distinct values")
      local n = ck.randn({20000}, o)
      local n64 = n:to("f64")
      local m, s2 = n64:mean():item(), ck.mul(n64, n64):mean():item()
      assert(math.abs(m) < 0.05 and math.abs(s2 - 1) < 0.05, ("%s randn mean %g, E[x^2] %g"):format(dt, m, s2))
      local a = ck.array({{1.5, -2}, {1e-7, 70000}}, o)
      assert.equals(dt, a:dtype())
      assert.same({{1.5, -2}, {round_to(dt, 1e-7), round_to(dt, 70000)}}, a:totable())
      assert.equals(dt == "f16" and math.huge or 70144, a:flat()[4])
      assert.equals(round_to(dt, 1e-7), a:narrow(1, 2, 2):narrow(2, 1, 1):item())
      assert.equals(1.5, ck.scalar(1.5, o):item())
    end
  end)

  it("parses dtype names and aliases, and lists them in errors", function()
    for name, dt in pairs {f16 = "f16", float16 = "f16", half = "f16", bf16 = "bf16", bfloat16 = "bf16"} do
      assert.equals(dt, ck.zeros(1, {dtype = name}):dtype())
      assert.equals(dt, ck.zeros(1):to(name):dtype())
    end
    local ok, err = pcall(ck.zeros, 1, {dtype = "f8"})
    assert.is_false(ok)
    assert.matches("f16, bf16", tostring(err), 1, true)
  end)

  it("casts among all five dtypes: exact where representable, rounded or truncated otherwise", function()
    local ints = {}
    for i = 1, 41 do ints[i] = i - 21 end -- -20 .. 20: exact in every dtype
    local base = ck.array(ints, {dtype = "f64", device = "host"})
    for _, from in ipairs(ALL) do
      local x = base:to(from)
      for _, to in ipairs(ALL) do
        local y = x:to(to)
        assert.equals(to, y:dtype())
        assert.same(ints, y:flat(), from .. " -> " .. to)
        -- through a strided (transposed) destination
        local m = base:reshape(1, 41):expand(3, 41):to(from)
        local dst = ck.empty({41, 3}, {dtype = to, device = "host"}):t()
        dst:copy_(m)
        assert.same(m:to("f64"):totable(), dst:to("f64"):totable(), "strided " .. from .. " -> " .. to)
      end
    end
    -- not representable: RNE to the halves, truncation to i32, NaN to INT32_MIN
    local odd = {1.9, -1.9, 0.1, 1 / 3, 1e-6, -65519, 3e9, 2049, 0 / 0}
    local x = ck.array(odd, {dtype = "f64", device = "host"})
    for _, fmt in ipairs(HALVES) do
      local h = x:to(fmt)
      local got = h:flat()
      for i, v in ipairs(odd) do assert(same(got[i], round_to(fmt, v)), fmt .. " " .. v) end
      local i32 = h:to("i32"):flat()
      for i, v in ipairs(got) do
        local w = (v ~= v or math.abs(v) >= 2 ^ 31) and -2147483648 or (v < 0 and math.ceil(v) or math.floor(v))
        assert.equals(w, i32[i], fmt .. " -> i32 of " .. v)
      end
      local other = fmt == "f16" and "bf16" or "f16"
      local cross = h:to(other):flat()
      for i, v in ipairs(got) do assert(same(cross[i], round_to(other, v)), fmt .. " -> " .. other .. " of " .. v) end
    end
  end)

  it("views, copies and clones keep the dtype and the bits", function()
    for _, dt in ipairs(HALVES) do
      local a = rnd({5, 7}, dt)
      local t = a:t()
      assert.equals(dt, t:dtype())
      local c = t:contiguous()
      assert.equals(dt, c:dtype())
      local at, ct = a:totable(), c:totable()
      for i = 1, 5 do for j = 1, 7 do assert.equals(at[i][j], ct[j][i]) end end
      local s = a:narrow(2, 2, 3)
      assert.same(s:totable(), s:clone():totable())
      local n = ck.array({0 / 0, -0.0, math.huge}, {dtype = dt}):clone():flat()
      assert(n[1] ~= n[1] and 1 / n[2] == -math.huge and n[3] == math.huge)
    end
  end)

  it("prints with the dtype name and values", function()
    for _, dt in ipairs(HALVES) do
      local s = tostring(ck.array({{1.5, -2}, {0.25, 3}}, {dtype = dt}))
      assert.matches(dt, s, 1, true)
      assert.matches("1.5", s, 1, true)
      assert.matches("0.25", s, 1, true)
      assert.matches("-2", s, 1, true)
      local s0 = tostring(ck.scalar(0.1, {dtype = dt}))
      assert.matches(dt, s0, 1, true)
    end
  end)

  it("promotes: same dtype stays, f16 with bf16 -> f32, with f32 -> f32, with f64 -> f64, with i32 -> the half", function()
    local function arr(dt) return ck.ones({2}, {dtype = dt}) end
    local cases = {
      {"f16", "f16", "f16"}, {"bf16", "bf16", "bf16"}, {"f16", "bf16", "f32"}, {"bf16", "f16", "f32"},
      {"f16", "f32", "f32"}, {"f32", "bf16", "f32"}, {"f16", "f64", "f64"}, {"bf16", "f64", "f64"},
      {"f16", "i32", "f16"}, {"i32", "bf16", "bf16"},
    }
    for _, c in ipairs(cases) do
      assert.equals(c[3], (arr(c[1]) + arr(c[2])):dtype(), c[1] .. " + " .. c[2])
      assert.equals(c[3], ck.maximum(arr(c[1]), arr(c[2])):dtype(), "maximum " .. c[1] .. ", " .. c[2])
      assert.equals(c[3], ck.matmul(arr(c[1]):reshape(1, 2), arr(c[2]):reshape(2, 1)):dtype(), "matmul " .. c[1] .. ", " .. c[2])
    end
    assert.equals("f16", (arr("f16") * 0.5):dtype())
    assert.equals("bf16", (2.5 - arr("bf16")):dtype())
    assert.equals("bool", arr("f16"):eq(arr("f16")):dtype()) -- comparisons give bool (issue 32)
    -- a number is rounded to the dtype first, then the op runs in f32 and rounds once
    local x = ck.array({1, 2, 3}, {dtype = "f16"})
    local got = (x + 0.1):flat()
    for i = 1, 3 do assert.equals(round_to("f16", i + round_to("f16", 0.1)), got[i]) end
  end)
end)

-- ---------------------------------------------------------------- elementwise ops

local UNARY = {"neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "floor", "ceil", "sign"}
local BINARY = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
                "atan2", "hypot", "idiv", "mod"}
local POS = {log = true, sqrt = true, pow = true}
-- through core so that every row of the op table is reachable (atan2, hypot, idiv, mod included)
local function U(name, a, opts) opts = opts or {}; return core.unary(name, a, opts.out, 0, 0, opts.variant) end
local function B(name, a, b, opts) opts = opts or {}; return core.binary(name, a, b, opts.out, opts.variant) end

--- tolerance of a half result (the f32 math rounded once) against the f64 result rounded once: the two
-- roundings can land on neighbouring values when the f32 error (a few 2^-24) crosses a rounding boundary:
-- one ulp, 2u relative; plus the smallest subnormal (absolute) near zero
local function half_tol(dt)
  local u = FMT[dt].u
  return {rtol = 2 * u * (1 + 2 ^ -8), atol = 2.0 ^ (FMT[dt].emin - FMT[dt].mbits)}
end

local function operands(dt, name, shape, device)
  local lo = POS[name] and 0.125 or -4
  return rnd(shape, dt, lo, 4, device), rnd(shape, dt, POS[name] and 0.25 or -3, 3, device)
end

describe("elementwise ops in f16/bf16 on the host", function()
  -- host-only cases: arrays made without a device go to the host here, also on a machine with a GPU
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  it("every op equals the f32 result rounded once, and is within the unit roundoff of the f64 result", function()
    for _, dt in ipairs(HALVES) do
      for _, name in ipairs(UNARY) do
        local x = operands(dt, name, {17, 13})
        local got = U(name, x)
        assert.equals(dt, got:dtype())
        H.assert_equal(got, U(name, x:to("f32")):to(dt), name .. " " .. dt .. " vs f32 rounded")
        H.assert_close(got:to("f64"), U(name, x:to("f64")):to(dt), half_tol(dt), name .. " " .. dt .. " vs f64")
      end
      for _, name in ipairs(BINARY) do
        local x, y = operands(dt, name, {11, 19})
        if name == "pow" then y = rnd({11, 19}, dt, -3, 3) end
        local got = B(name, x, y)
        if got:dtype() == "bool" then got = got:to(dt) end -- comparisons give bool (issue 32), compared as 1/0
        assert.equals(dt, got:dtype())
        H.assert_equal(got, B(name, x:to("f32"), y:to("f32")):to(dt), name .. " " .. dt .. " vs f32 rounded")
        if name ~= "idiv" and name ~= "mod" then -- floor(x / y) and the remainder amplify the quotient's rounding
          H.assert_close(got:to("f64"), B(name, x:to("f64"), y:to("f64")):to(dt), half_tol(dt), name .. " " .. dt .. " vs f64")
        end
        -- broadcast and a number on either side
        local row = y:narrow(1, 1, 1)
        local function as_dt(r) return r:to(dt) end -- (comparisons give bool: compared as 1/0 in dt)
        H.assert_equal(as_dt(B(name, x, row)), B(name, x:to("f32"), row:to("f32")):to(dt), name .. " broadcast " .. dt)
        local s = y:flat()[1]
        H.assert_equal(as_dt(B(name, x, s)), B(name, x:to("f32"), s):to(dt), name .. " a, s " .. dt)
        H.assert_equal(as_dt(B(name, s, x)), B(name, s, x:to("f32")):to(dt), name .. " s, a " .. dt)
      end
      local x = rnd({9, 4}, dt, 0.25, 3)
      for _, p in ipairs {2, 0.5, -1, 3} do
        H.assert_equal(ck.pow(x, p), ck.pow(x:to("f32"), p):to(dt), "pows " .. dt .. " " .. p)
      end
      H.assert_equal(ck.clamp(x, 0.5, 2), ck.clamp(x:to("f32"), 0.5, 2):to(dt), "clamp " .. dt)
      -- in place, and into a strided view
      local y = x:clone()
      y:exp_()
      H.assert_equal(y, ck.exp(x:to("f32")):to(dt), "exp_ " .. dt)
      local z = rnd({4, 9}, dt)
      local z0 = z:clone()
      z:t():add_(x)
      H.assert_equal(z:t(), (z0:t():to("f32") + x:to("f32")):to(dt), "add_ into a transposed view " .. dt)
    end
  end)

  it("specials: NaN propagates, inf and signed zeros survive, overflow rounds to inf", function()
    for _, dt in ipairs(HALVES) do
      local x = ck.array({0 / 0, math.huge, -math.huge, -0.0, 1, 60000}, {dtype = dt})
      local s = (x * 2):flat()
      assert(s[1] ~= s[1])
      assert.equals(math.huge, s[2])
      assert.equals(-math.huge, s[3])
      assert.equals(-math.huge, 1 / s[4])
      assert.equals(2, s[5])
      assert.equals(dt == "f16" and math.huge or round_to("bf16", 120000), s[6])
      local m = ck.maximum(x, ck.zeros({6}, {dtype = dt})):flat()
      assert(m[1] ~= m[1], "maximum keeps NaN")
      assert.same({false, true, true, true, true, true}, x:eq(x):flat())
    end
  end)
end)

-- ---------------------------------------------------------------- reductions, transpose, matmul

local RED = {"sum", "prod", "mean", "max", "min", "argmax", "argmin"}

local function reduce(op, x, dim, opts)
  opts = opts or {}
  if op == "argmax" or op == "argmin" then return nil, core.reduce(op, x, dim, opts.keepdim, opts.variant, true, nil, nil) end
  return core.reduce(op, x, dim, opts.keepdim, opts.variant, false, opts.out, nil)
end

--- f64 reference of a reduction of the (already rounded) inputs
local function ref_reduce(op, x, dim)
  local v, i = reduce(op, x:to("f64"), dim)
  return v, i
end

--- tolerance of a reduction of len inputs with |x| <= 2, accumulated in f32 (CUDA) or f64 (host), against
-- the f64 result of the same rounded inputs: len * 2^-24 relative (f32 accumulation), plus one ulp of the
-- dtype (2u: the two results are rounded separately to the dtype and may land on neighbours); absolute,
-- for sums that cancel: a tree of depth log2(len) with error 2^-24 * sum|x| (<= 2 len) per level.
local function red_tol(dt, len, op)
  local u = FMT[dt].u
  if op == "max" or op == "min" then return {rtol = 0, atol = 0} end
  local depth = math.ceil(math.log(len, 2)) + 2
  return {rtol = len * 2 ^ -24 + 2 * u * (1 + 2 ^ -8),
          atol = 2.0 ^ (FMT[dt].emin - FMT[dt].mbits) + depth * 2 ^ -24 * 2 * len}
end

describe("reductions, transpose and matmul in f16/bf16 on the host", function()
  -- host-only cases: arrays made without a device go to the host here, also on a machine with a GPU
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  it("reductions accumulate wider than the dtype and round once", function()
    for _, dt in ipairs(HALVES) do
      for _, shape in ipairs {{1}, {7}, {1000}, {13, 31}, {4, 3, 5}} do
        local x = rnd(shape, dt, -2, 2)
        for _, op in ipairs(RED) do
          for dim = 0, #shape do
            local d = dim > 0 and dim or nil
            local v, i = reduce(op, x, d)
            local rv, ri = ref_reduce(op, x, d)
            local len = d and shape[d] or x:numel()
            local label = ("%s %s %s dim %s"):format(op, dt, shape_str(shape), tostring(d))
            if v then
              assert.equals(dt, v:dtype(), label)
              H.assert_close(v:to("f64"), rv, red_tol(dt, len, op), label)
              if op == "max" or op == "min" then H.assert_equal(v, rv:to(dt), label) end
            else
              assert.same(ri:flat(), i:flat(), label)
            end
          end
        end
      end
      -- the sum of 4096 ones is exact only when accumulated wider than f16 (f16 stops counting at 2048)
      assert.equals(4096, ck.ones({4096}, {dtype = dt}):sum():item())
      assert.equals(round_to(dt, 3000 * round_to(dt, 1.1)), ck.full({3000}, 1.1, {dtype = dt}):sum():item())
    end
  end)

  it("transpose moves the bits exactly (views, batches, NaN and -0)", function()
    for _, dt in ipairs(HALVES) do
      for _, shape in ipairs {{1, 1}, {3, 5}, {31, 33}, {2, 7, 3}, {0, 4}} do
        local x = rnd(shape, dt)
        local t = ck.transpose(x)
        assert.equals(dt, t:dtype())
        local nd = #shape
        H.assert_equal(t, x:to("f64"):transpose(nd - 1, nd):contiguous():to(dt), "transpose " .. dt .. " " .. shape_str(shape))
      end
      local sp = ck.array({{0 / 0, -0.0}, {math.huge, 1}}, {dtype = dt})
      local t = ck.transpose(sp):flat()
      assert(t[1] ~= t[1] and t[2] == math.huge and 1 / t[3] == -math.huge and t[4] == 1)
    end
  end)

  it("matmul: f16/bf16 in, the same out (f32 when out is f32), the f64 product rounded once", function()
    for _, dt in ipairs(HALVES) do
      local a, b = rnd({13, 37}, dt, -1, 1), rnd({37, 11}, dt, -1, 1)
      local c = ck.matmul(a, b)
      assert.equals(dt, c:dtype())
      local ref = ck.matmul(a:to("f64"), b:to("f64"))
      H.assert_equal(c, ref:to(dt), "matmul " .. dt)
      local out = ck.empty({13, 11}, {dtype = "f32"})
      local c32 = ck.matmul(a, b, {out = out})
      assert.equals("f32", c32:dtype())
      H.assert_equal(out, ref:to("f32"), "matmul " .. dt .. " into f32")
    end
  end)
end)

-- ---------------------------------------------------------------- CUDA against the host

describe("f16/bf16 on cuda", function()
  local SHAPES = {{0}, {1}, {7}, {1, 1}, {3, 5}, {31, 37}, {127, 255}, {1000, 37}, {2, 3, 251}}

  --- a cuda result into a poisoned output, against the host
  local function poisoned(shape, dt)
    return H.poison(ck.empty(shape, {dtype = dt, device = "cuda"}))
  end

  it("conversions on the device are bit-identical to the host's (all patterns, f32 sample, ties)", gpu(function()
    for _, fmt in ipairs(HALVES) do
      local vals = {}
      for b = 0, 0xffff do vals[b + 1] = dec(fmt, b) end
      local h = ck.array(vals, {dtype = "f64", device = "host"}):to(fmt)
      local c = h:cuda()
      for _, to in ipairs(ALL) do H.assert_equal(c:to(to), h:to(to), fmt .. " -> " .. to .. " on cuda") end
      local x64 = ck.array(vals, {dtype = "f64", device = "host"})
      H.assert_equal(x64:cuda():to(fmt), x64:to(fmt), "f64 -> " .. fmt .. " on cuda")
      -- random f32 values and f64 near-ties (double rounding would show here)
      local r = {}
      for i = 1, 100000 do
        local u = (math.random(0, 1) << 31) | (math.random(0, 254) << 23) | math.random(0, (1 << 23) - 1)
        r[i] = f32_of_bits(u)
        if i % 2 == 0 then r[i] = r[i] * (1 + 2 ^ -30) end
      end
      local xr = ck.array(r, {dtype = "f64", device = "host"})
      H.assert_equal(xr:cuda():to(fmt), xr:to(fmt), "random f64 -> " .. fmt .. " on cuda")
      H.assert_equal(xr:to("f32"):cuda():to(fmt), xr:to("f32"):to(fmt), "random f32 -> " .. fmt .. " on cuda")
      -- the f32 -> half store of an op: products of two half values are exact in f32, so the store's
      -- rounding decides every result (ties, subnormal results, overflow included)
      local hx, hy = {}, {}
      for i = 1, 100000 do
        local bx, by = math.random(0, 0xffff), math.random(0, 0xffff)
        hx[i], hy[i] = dec(fmt, bx), dec(fmt, by)
        if fmt == "f16" and i % 2 == 0 then hy[i] = round_to(fmt, hy[i] * 2 ^ -12) end
      end
      local px, py = ck.array(hx, {dtype = fmt, device = "host"}), ck.array(hy, {dtype = fmt, device = "host"})
      for _, v in ipairs {"strided", "contiguous"} do
        H.assert_equal(ck.mul(px:cuda(), py:cuda(), {variant = v}), ck.mul(px, py), "stores of " .. fmt .. " on cuda (" .. v .. ")")
      end
    end
  end))

  it("every elementwise op on every dense variant matches the host over awkward shapes and views", gpu(function()
    for _, dt in ipairs(HALVES) do
      local tol = {rtol = 2 * FMT[dt].u, atol = 2.0 ^ (FMT[dt].emin - FMT[dt].mbits)}
      for _, shape in ipairs(SHAPES) do
        for _, v in ipairs {"strided", "contiguous", "batched"} do
          for _, name in ipairs(UNARY) do
            local x = operands(dt, name, shape)
            local out = poisoned(shape, dt)
            U(name, x:cuda(), {variant = v, out = out})
            H.assert_close(out, U(name, x), tol, ("%s %s %s %s"):format(name, dt, shape_str(shape), v))
          end
          for _, name in ipairs(BINARY) do
            local x, y = operands(dt, name, shape)
            local odt = B(name, x:narrow(1, 1, math.min(1, shape[1])), y:narrow(1, 1, math.min(1, shape[1]))):dtype() -- bool for comparisons
            local function poisoned_r(sh) return odt == "bool" and ck.full(sh, true, {dtype = "bool", device = "cuda"}) or poisoned(sh, dt) end
            local out = poisoned_r(shape)
            B(name, x:cuda(), y:cuda(), {variant = v, out = out})
            H.assert_close(odt == "bool" and out:to(dt) or out, B(name, x, y):to(dt), tol, ("%s %s %s %s"):format(name, dt, shape_str(shape), v))
            local out2 = poisoned_r(shape)
            B(name, x:cuda(), 0.7, {variant = v, out = out2})
            H.assert_close(odt == "bool" and out2:to(dt) or out2, B(name, x, 0.7):to(dt), tol, ("%s %s a, 0.7 %s %s"):format(name, dt, shape_str(shape), v))
          end
        end
        if #shape == 2 then -- transposed and sliced views (strided rung)
          local x, y = rnd({shape[2], shape[1]}, dt), rnd(shape, dt)
          H.assert_close(ck.add(x:cuda():t(), y:cuda()), ck.add(x:t(), y), tol, "a:t() + b " .. dt .. shape_str(shape))
          if shape[2] > 1 then
            local s = y:narrow(2, 2, shape[2]) -- columns 2 .. end (inclusive bounds)
            H.assert_close(ck.exp(s:cuda()), ck.exp(s), tol, "exp of a slice " .. dt .. shape_str(shape))
          end
        end
      end
      -- misaligned contiguous views exercise the 16-byte packs' scalar head and tail
      local base = rnd({4099}, dt)
      local cb = base:cuda()
      for off = 1, 7 do
        local n = 4099 - off - 7 -- elements 1+off .. off+n against 8 .. 7+n (inclusive bounds)
        local got = ck.add(cb:narrow(1, 1 + off, off + n), cb:narrow(1, 8, 7 + n), {variant = "contiguous"})
        assert.equals("contiguous", ck.last_ran().name)
        H.assert_equal(got, ck.add(base:narrow(1, 1 + off, off + n), base:narrow(1, 8, 7 + n)), "misaligned add " .. off .. " " .. dt)
      end
    end
  end))

  it("generators and casts on the device match the host exactly", gpu(function()
    for _, dt in ipairs(HALVES) do
      for _, shape in ipairs {{1}, {1000}, {37, 129}} do
        local s = H.seed + #shape
        ck.seed(s)
        local hr = ck.rand(shape, {dtype = dt, device = "host"})
        ck.seed(s)
        H.assert_equal(ck.rand(shape, {dtype = dt, device = "cuda"}), hr, "rand " .. dt)
        ck.seed(s)
        local hn = ck.randn(shape, {dtype = dt, device = "host"})
        ck.seed(s)
        H.assert_close(ck.randn(shape, {dtype = dt, device = "cuda"}), hn, {rtol = FMT[dt].u * 2, atol = 0}, "randn " .. dt)
      end
      local o, oh = {dtype = dt, device = "cuda"}, {dtype = dt, device = "host"}
      H.assert_equal(ck.arange(-3, 1000, 0.7, o), ck.arange(-3, 1000, 0.7, oh), "arange " .. dt)
      H.assert_equal(ck.linspace(-1, 1, 101, o), ck.linspace(-1, 1, 101, oh), "linspace " .. dt)
      H.assert_equal(ck.eye(37, 53, o), ck.eye(37, 53, oh), "eye " .. dt)
      H.assert_equal(ck.full({5, 6}, 0.1, o), ck.full({5, 6}, 0.1, oh), "full " .. dt)
      -- the elementwise COPY of one half dtype to itself on both rungs (whole 16-byte packs on contiguous)
      for _, n in ipairs {1, 7, 4099} do
        local x = rnd({n}, dt)
        for _, v in ipairs {"strided", "contiguous", "batched"} do
          local out = H.poison(ck.empty({n}, {dtype = dt, device = "cuda"}))
          core.unary("copy", x:cuda(), out, 0, 0, v)
          H.assert_equal(out, x, ("copy %s [%d] (%s)"):format(dt, n, v))
        end
      end
      for _, from in ipairs(ALL) do
        local m = (ck.rand({7, 9}, {dtype = "f64", device = "host"}) * 1000 - 500):to(from)
        for _, to in ipairs(ALL) do
          local dst = H.poison(ck.empty({9, 7}, {dtype = to, device = "cuda"})):t()
          dst:copy_(m:cuda())
          H.assert_equal(dst, m:to(to), "strided cast " .. from .. " -> " .. to)
          H.assert_equal(m:cuda():to(to), m:to(to), "cast " .. from .. " -> " .. to)
          -- across devices, both ways, with the cast (and from a transposed view)
          H.assert_equal(m:to("cuda", to), m:to(to), "host -> cuda cast " .. from .. " -> " .. to)
          H.assert_equal(m:cuda():to("host", to), m:to(to), "cuda -> host cast " .. from .. " -> " .. to)
          H.assert_equal(m:cuda():t():to("host", to), m:t():to(to), "cuda view -> host cast " .. from .. " -> " .. to)
        end
      end
    end
  end))

  it("reductions on every variant that takes the dtype match the host", gpu(function()
    for _, dt in ipairs(HALVES) do
      for _, shape in ipairs {{1}, {7}, {1000}, {13, 31}, {257, 3}, {4, 3, 5}, {2, 65537}} do
        local x = rnd(shape, dt, -2, 2)
        local cx = x:cuda()
        for _, op in ipairs(RED) do
          for dim = 0, #shape do
            local d = dim > 0 and dim or nil
            local len = d and shape[d] or x:numel()
            local v, i = reduce(op, x, d)
            for _, var in ipairs(ck.variants("reduce")) do
              if not var.bench_only then
                local cv, ci = reduce(op, cx, d, {variant = var.name})
                local ran = ck.last_ran()
                local label = ("%s %s %s dim %s (%s, ran %s)"):format(op, dt, shape_str(shape), tostring(d), var.name, ran.name)
                if ran.name ~= var.name then assert(#ran.note > 0, label .. ": a fallback says why") end
                if v then H.assert_close(cv, v, red_tol(dt, len, op), label)
                else assert.same(i:flat(), ci:flat(), label) end
              end
            end
          end
        end
      end
    end
  end))

  it("transpose and permuted copies are exact on every rung that takes 2-byte elements", gpu(function()
    for _, dt in ipairs(HALVES) do
      for _, shape in ipairs {{1, 1}, {1, 7}, {7, 1}, {31, 33}, {64, 64}, {127, 255}, {3, 67, 129}} do
        local x = rnd(shape, dt)
        local want = ck.transpose(x)
        for _, var in ipairs(ck.variants("transpose")) do
          if var.name ~= "geam" then
            local out = H.poison(ck.empty(want:shape(), {dtype = dt, device = "cuda"}))
            ck.transpose(x:cuda(), {variant = var.name, out = out})
            H.assert_equal(out, want, ("transpose %s %s (%s)"):format(dt, shape_str(shape), var.name))
            assert(ck.last_ran().name ~= "aligned", "aligned takes no 2-byte elements")
          end
        end
        -- a permuted copy (the tiled fast path)
        local nd = #shape
        local c = x:cuda():transpose(nd - 1, nd):contiguous()
        H.assert_equal(c, x:transpose(nd - 1, nd):contiguous(), "permuted copy " .. dt .. " " .. shape_str(shape))
      end
    end
  end))

  it("matmul with halves says it runs on the host only (no cuda rung takes them yet), unless one does", gpu(function()
    for _, dt in ipairs(HALVES) do
      local a, b = rnd({5, 3}, dt), rnd({3, 4}, dt)
      local ok, err = pcall(ck.matmul, a:cuda(), b:cuda())
      if ok then
        H.assert_close(err, ck.matmul(a, b), {rtol = 3 * FMT[dt].u, atol = 1e-3}, "matmul " .. dt)
      else
        assert.matches("host only", tostring(err), 1, true)
      end
    end
  end))
end)
