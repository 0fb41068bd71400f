-- Issue 32, step 2: arithmetic, comparisons, logic, bit operations and reductions on every dtype, against a
-- plain-Lua oracle (Lua 5.4 integers wrap modulo 2^64, so i64 is checked exactly, and the narrower integers by
-- wrapping the oracle's result to their width). Fresh random values, poisoned outputs, views. On the host and,
-- where there is one, on the GPU (the same oracle).
local H = require "spec.helpers"
local ck = H.ck

local INTS = {"u8", "i8", "i16", "i32", "u32", "i64"}
local BITS, wrap = H.INT_BITS, H.wrap_int

local function range(dt)
  local bits, signed = BITS[dt][1], BITS[dt][2]
  if bits == 64 then return math.mininteger, math.maxinteger end
  if signed then return -(1 << (bits - 1)), (1 << (bits - 1)) - 1 end
  return 0, (1 << bits) - 1
end

-- fresh random integers of dt, the extremes included now and then (wrapping shows there)
local function rints(dt, n)
  local lo, hi = range(dt)
  local t = {}
  for i = 1, n do
    local r = math.random()
    if r < 0.1 then t[i] = lo elseif r < 0.2 then t[i] = hi
    elseif r < 0.6 then t[i] = math.random(-40, 40) else t[i] = math.random(math.max(lo, -2 ^ 31) // 1, math.min(hi, 2 ^ 31) // 1) end
    t[i] = wrap(dt, t[i])
    if t[i] < lo or t[i] > hi then t[i] = 0 end
  end
  return t
end

-- Lua's own integer rules where the array ops define them the same way (x // 0 = x % 0 = 0 instead of an error)
local function idiv(x, y) if y == 0 then return 0 end return x // y end
local function imod(x, y) if y == 0 then return 0 end return x % y end
local function tdiv(x, y) -- truncating division (ck.div on integers), x / 0 = 0
  if y == 0 then return 0 end
  if y == -1 then return -x end
  local q = x // y
  if q < 0 and q * y ~= x then q = q + 1 end
  return q
end
local ARITH = {
  add = function(x, y) return x + y end, sub = function(x, y) return x - y end,
  mul = function(x, y) return x * y end, maximum = math.max, minimum = math.min,
  div = tdiv, idiv = idiv, mod = imod,
  bitand = function(x, y) return x & y end, bitor = function(x, y) return x | y end,
  bitxor = function(x, y) return x ~ y end,
}
local CMP = {eq = function(x, y) return x == y end, ne = function(x, y) return x ~= y end,
  lt = function(x, y) return x < y end, le = function(x, y) return x <= y end,
  gt = function(x, y) return x > y end, ge = function(x, y) return x >= y end}

local devices = H.devices

local function flatten(t, out)
  out = out or {}
  if type(t) ~= "table" then out[#out + 1] = t; return out end
  for _, v in ipairs(t) do flatten(v, out) end
  return out
end

local function arr(t, shape, dt, dev)
  return ck.array(t, {dtype = dt, device = "host"}):reshape(table.unpack(shape)):to(dev)
end

-- an operand as a view: transposed or narrowed (strided), from a poisoned base, or plain
local function viewed(t, dt, dev, how)
  local a = arr(t, {4, 6}, dt, dev)
  if how == "t" then return arr(t, {6, 4}, dt, dev):t():contiguous():t():t() end
  if how == "narrow" then
    local big = ck.zeros({4, 9}, {dtype = dt, device = dev})
    big:narrow(2, 2, 7):copy_(a)
    return big:narrow(2, 2, 7)
  end
  return a
end

describe("integer arithmetic (issue 32)", function()
  for _, dev in ipairs(devices()) do
    for _, dt in ipairs(INTS) do
      it(("%s on %s: + - * div // %% max min & | ~ and comparisons against the Lua oracle, views included"):format(dt, dev), function()
        for _, how in ipairs {"plain", "narrow", "t"} do
          local X, Y = rints(dt, 24), rints(dt, 24)
          local a, b = viewed(X, dt, dev, how), viewed(Y, dt, dev, how)
          local A, B = flatten(a:totable()), flatten(b:totable())
          for name, f in pairs(ARITH) do
            local got = ck[name](a, b)
            assert.equal(dt, got:dtype(), name)
            local g = flatten(got:totable())
            for i = 1, #A do
              assert.equal(wrap(dt, f(A[i], B[i])), g[i], ("%s %s %s(%d, %d) [%s]"):format(dev, dt, name, A[i], B[i], how))
            end
          end
          for name, f in pairs(CMP) do
            local got = ck[name](a, b)
            assert.equal("bool", got:dtype(), name)
            local g = flatten(got:totable())
            for i = 1, #A do assert.equal(f(A[i], B[i]), g[i], ("%s %s %s(%d, %d)"):format(dev, dt, name, A[i], B[i])) end
          end
          local neg, ab, sg = flatten((-a):totable()), flatten(ck.abs(a):totable()), flatten(ck.sign(a):totable())
          for i = 1, #A do
            assert.equal(wrap(dt, -A[i]), neg[i], "neg")
            assert.equal(wrap(dt, A[i] < 0 and -A[i] or A[i]), ab[i], "abs")
            assert.equal(A[i] > 0 and 1 or A[i] < 0 and -1 or 0, sg[i], "sign")
          end
        end
      end)
    end

    it(("broadcasting mixed integer dtypes (u8 with i8, u32 with i32, i64 with bool) against the oracle on %s"):format(dev), function()
      local PROMO = {{"u8", "i8", "i16"}, {"u32", "i32", "i64"}, {"i64", "bool", "i64"}, {"i16", "u8", "i16"}}
      for _, p in ipairs(PROMO) do
        local da, db, want = p[1], p[2], p[3]
        local X = rints(da, 4)
        local Y = db == "bool" and {} or rints(db, 6)
        if db == "bool" then for i = 1, 6 do Y[i] = math.random() < 0.5 end end
        local a = arr(X, {4, 1}, da, dev)
        local b = arr(Y, {1, 6}, db, dev)
        for _, name in ipairs {"add", "mul", "maximum", "bitxor", "lt"} do
          local got = ck[name](a, b)
          assert.same({4, 6}, got:shape())
          assert.equal(name == "lt" and "bool" or want, got:dtype(), name .. " " .. da .. " " .. db)
          local g = flatten(got:totable())
          for i = 1, 4 do
            for j = 1, 6 do
              local y = Y[j]
              if type(y) == "boolean" then y = y and 1 or 0 end
              local r
              if name == "lt" then r = X[i] < y else r = wrap(want, ARITH[name](X[i], y)) end
              assert.equal(r, g[(i - 1) * 6 + j], ("%s %s(%s %d, %s %d) on %s"):format(name, da, db, X[i], db, y, dev))
            end
          end
        end
      end
    end)

    it(("shifts and bitnot follow NumPy/MATLAB (arithmetic >> on signed, logical on unsigned, negative counts shift the other way) on %s"):format(dev), function()
      for _, dt in ipairs(INTS) do
        local X = rints(dt, 20)
        local N = {}
        for i = 1, 20 do N[i] = math.random(-70, 70) end
        local a, n = arr(X, {20}, dt, dev), arr(N, {20}, dt == "u8" and "i8" or dt, dev)
        if dt == "u8" or dt == "u32" then -- counts in the array's own dtype: keep them >= 0 there
          for i = 1, 20 do N[i] = math.abs(N[i]) end
          n = arr(N, {20}, dt, dev)
        end
        local shl, shr, bn = flatten((a << n):totable()), flatten((a >> n):totable()), flatten((~a):totable())
        local signed = BITS[dt][2]
        local function sr(x, k) -- x >> k, arithmetic for signed
          if k >= 64 or (signed and k >= 63) then return (signed and x < 0) and -1 or 0 end
          if signed then return x // (1 << k) end
          return x >> k
        end
        local function sl(x, k) if k >= 64 then return 0 end return x << k end
        for i = 1, 20 do
          local x, k = X[i], N[i]
          local l = k >= 0 and sl(x, k) or sr(x, -k)
          local r = k >= 0 and sr(x, k) or sl(x, -k)
          assert.equal(wrap(dt, l), shl[i], ("%s %s %d << %d"):format(dev, dt, x, k))
          assert.equal(wrap(dt, r), shr[i], ("%s %s %d >> %d"):format(dev, dt, x, k))
          assert.equal(wrap(dt, ~x), bn[i], ("%s %s ~%d"):format(dev, dt, x))
        end
      end
    end)

    it(("i64 is exact beyond 2^53, with numbers on either side, fill and pow on %s"):format(dev), function()
      local big = (1 << 53) + 1
      local a = ck.array({big, -big, math.maxinteger, 7}, {dtype = "i64", device = dev})
      assert.same({big + big, -big + big, math.maxinteger + big, 7 + big}, (a + big):totable())
      assert.same({big - big, big + big, big - math.maxinteger, big - 7}, (big - a):totable())
      assert.same({big * 3, -big * 3, math.maxinteger * 3, 21}, (a * 3):totable())
      assert.same({big, big}, ck.full({2}, big, {dtype = "i64", device = dev}):totable())
      local p39 = 1
      for _ = 1, 39 do p39 = p39 * 3 end
      assert.same({p39, -p39}, ck.pow(ck.array({3, -3}, {dtype = "i64", device = dev}), 39):totable())
      -- x^n wraps modulo 2^64 like repeated multiplication; negative exponents give 1 // x^n
      local p = 1
      for _ = 1, 70 do p = p * 3 end
      assert.equal(p, ck.pow(ck.array({3}, {dtype = "i64", device = dev}), 70):item())
      assert.same({1, -1, 0, 0}, ck.pow(ck.array({1, -1, 2, 0}, {dtype = "i64", device = dev}), -3):totable())
      assert.equal("i64", (a + big):dtype())
      -- a number the dtype cannot hold promotes (arithmetic) or is an error (fill, bit ops)
      assert.equal("f64", (ck.array({1}, {dtype = "u8", device = dev}) + 300):dtype())
      assert.has_error(function() ck.full({2}, 300, {dtype = "u8", device = dev}) end)
      assert.has_error(function() return ck.array({1}, {dtype = "u8", device = dev}) & 256 end)
    end)

    it(("promotion: bool arithmetic gives i32, x:mul(x:gt(0)) stays float, mixed integers follow the table on %s"):format(dev), function()
      local m = ck.array({true, false, true}, {device = dev})
      assert.equal("bool", m:dtype())
      assert.equal("i32", (m + m):dtype())
      assert.same({2, 0, 2}, (m + m):totable())
      assert.equal("i32", (m * 3):dtype())
      assert.equal("i32", (-m):dtype())
      local x = H.rand({3, 5}, "f32", dev) - 0.5
      local r = x:mul(x:gt(0))
      assert.equal("f32", r:dtype())
      assert.is_true(ck.equal(r, ck.relu(x)))
      local u8, i8 = ck.ones({2}, {dtype = "u8", device = dev}), ck.ones({2}, {dtype = "i8", device = dev})
      assert.equal("i16", (u8 + i8):dtype())
      assert.equal("i64", (ck.ones({2}, {dtype = "u32", device = dev}) + ck.ones({2}, {dtype = "i32", device = dev})):dtype())
      assert.equal("f64", (ck.ones({2}, {dtype = "i64", device = dev}) + ck.ones({2}, {dtype = "f32", device = dev})):dtype())
      assert.equal("f64", (u8 / 2):dtype()) -- / divides integers in f64
      assert.same({0.5, 0.5}, (u8 / 2):totable())
      -- logic and bit ops keep bool
      assert.equal("bool", (m & m):dtype())
      assert.same({false, true, false}, (~m):totable())
      assert.same({true, false, true}, (m & true):totable())
      assert.same({true, true, true}, (m | true):totable())
      assert.has_error(function() return x & x end) -- floats have no bits to operate on
    end)

    it(("logical ops and the float tests (NaN counts as true, as in NumPy) on %s"):format(dev), function()
      local v = {0, 1, -2, 0 / 0, math.huge, -math.huge, 0.5, -0.0}
      for _, dt in ipairs {"f32", "f64", "f16", "bf16"} do
        local a = ck.array(v, {dtype = dt, device = dev})
        local b = ck.array({1, 0, 0, 0, 1, 0, 1, 1}, {dtype = dt, device = dev})
        local function tv(x) return x ~= 0 end -- NaN ~= 0 is true
        local la, lo, lx, ln = ck.logical_and(a, b):totable(), ck.logical_or(a, b):totable(), ck.logical_xor(a, b):totable(), ck.logical_not(a):totable()
        local nan, inf, fin = ck.isnan(a):totable(), ck.isinf(a):totable(), ck.isfinite(a):totable()
        local B = b:totable()
        for i = 1, #v do
          local x = v[i]
          assert.equal(tv(x) and tv(B[i]), la[i], dt .. " and " .. i)
          assert.equal(tv(x) or tv(B[i]), lo[i], dt .. " or " .. i)
          assert.equal(tv(x) ~= tv(B[i]), lx[i], dt .. " xor " .. i)
          assert.equal(not tv(x), ln[i], dt .. " not " .. i)
          assert.equal(x ~= x, nan[i], dt .. " isnan " .. i)
          assert.equal(x == math.huge or x == -math.huge, inf[i], dt .. " isinf " .. i)
          assert.equal(x == x and x ~= math.huge and x ~= -math.huge, fin[i], dt .. " isfinite " .. i)
        end
      end
      local i = ck.array({0, 3, -1}, {dtype = "i16", device = dev})
      assert.same({false, false, false}, ck.isnan(i):totable())
      assert.same({true, true, true}, ck.isfinite(i):totable())
      assert.same({true, false, false}, ck.logical_not(i):totable())
    end)

    it(("reductions: integer and bool sums and products are i64, extremes keep the dtype, indices are i64, any/all/count_nonzero on %s"):format(dev), function()
      for _, dt in ipairs(INTS) do
        local X = rints(dt, 35)
        local a = arr(X, {5, 7}, dt, dev)
        for _, dim in ipairs {false, 1, 2} do
          local d = dim or nil
          local s, p, mx, mn = ck.sum(a, d), ck.prod(a, d), ck.max(a, d), ck.min(a, d)
          assert.equal("i64", s:dtype()); assert.equal("i64", p:dtype())
          assert.equal(dt, mx:dtype()); assert.equal(dt, mn:dtype())
          -- oracle per output
          local function fold(f, init, k)
            local acc = init
            local rows, cols = 5, 7
            local n = (not dim) and rows * cols or (dim == 1 and rows or cols)
            for j = 1, n do
              local r, c
              if not dim then r, c = (j - 1) // cols + 1, (j - 1) % cols + 1
              elseif dim == 1 then r, c = j, k else r, c = k, j end
              acc = f(acc, X[(r - 1) * cols + c])
            end
            return acc
          end
          local S, P, MX, MN = flatten(s:totable()), flatten(p:totable()), flatten(mx:totable()), flatten(mn:totable())
          if not dim then S, P, MX, MN = {s:item()}, {p:item()}, {mx:item()}, {mn:item()} end
          for k = 1, #S do
            assert.equal(fold(function(x, y) return x + y end, 0, k), S[k], dev .. " sum " .. dt)
            assert.equal(fold(function(x, y) return x * y end, 1, k), P[k], dev .. " prod " .. dt)
            assert.equal(fold(math.max, math.mininteger, k), MX[k], dev .. " max " .. dt)
            assert.equal(fold(math.min, math.maxinteger, k), MN[k], dev .. " min " .. dt)
          end
        end
        local _, idx = ck.max(a, 2)
        assert.equal("i64", idx:dtype())
        assert.equal("f64", ck.mean(a):dtype())
      end
      local m = ck.array({{true, false, true}, {false, false, true}}, {device = dev})
      assert.equal(3, ck.sum(m):item())
      assert.equal("i64", ck.sum(m):dtype())
      assert.equal(3, ck.count_nonzero(m):item())
      assert.same({1, 0, 2}, ck.count_nonzero(m, 1):totable())
      assert.same({true, false, true}, ck.any(m, 1):totable())
      assert.same({false, false, true}, ck.all(m, 1):totable())
      assert.same({true, true}, ck.any(m, 2):totable())
      assert.is_true(ck.any(m):item())
      assert.is_false(ck.all(m):item())
      local f = ck.array({0, 0 / 0, 0}, {device = dev})
      assert.is_true(ck.any(f):item()) -- NaN is nonzero
      local e = ck.empty({0, 3}, {device = dev})
      assert.same({false, false, false}, ck.any(e, 1):totable())
      assert.same({true, true, true}, ck.all(e, 1):totable())
      assert.same({1, 3}, ck.any(m, 1, {keepdim = true}):shape())
    end)
  end
end)
