--- Elementwise ops: map/zip with broadcasting, scalars, views, in-place forms, promotion, generators.
-- The host backend is checked against independent Lua arithmetic (element by element over :totable()),
-- then every GPU variant is checked against the host backend on the same inputs.
local H = require "spec.helpers"
local ck = H.ck

local INT_MIN = -2147483648

local gpu = H.gpu -- pending with the reason where there is no GPU

-- ---------------------------------------------------------------- Lua reference arithmetic

local function flatten(t, out)
  out = out or {}
  if type(t) ~= "table" then out[#out + 1] = t return out end
  for i = 1, #t do flatten(t[i], out) end
  return out
end

local function shape_str(s) return "[" .. table.concat(s, "x") .. "]" end

--- float -> i32 as the library does it: truncate, NaN/out of range -> INT32_MIN
local function f2i(v)
  if v ~= v or v <= -2147483649 or v >= 2147483648 then return INT_MIN end
  v = v < 0 and math.ceil(v) or math.floor(v)
  return math.tointeger(v)
end
--- wrap an integer into i32
local function wrap(v)
  v = math.tointeger(v) % 4294967296
  if v >= 2147483648 then v = v - 4294967296 end
  return v
end
local function tanh(x)
  local e = math.exp(-2 * math.abs(x))
  local t = (1 - e) / (1 + e)
  return x < 0 and -t or t
end
local function nan2(x, y) return x + y end
local function b(v) return v and 1 or 0 end

-- f: float semantics (computed in double), i: i32 semantics (nil: the op is float-only).
-- dom: "pos" keeps inputs positive (log, sqrt).
local UNARY = {
  neg = {f = function(x) return -x end, i = function(x) return wrap(-x) end},
  abs = {f = math.abs, i = function(x) return wrap(math.abs(x)) end},
  exp = {f = math.exp},
  log = {f = math.log, dom = "pos"},
  sqrt = {f = math.sqrt, dom = "pos"},
  sin = {f = math.sin},
  cos = {f = math.cos},
  tanh = {f = tanh},
  sigmoid = {f = function(x) return 1 / (1 + math.exp(-x)) end},
  relu = {f = function(x) return x < 0 and 0 or x end, i = function(x) return x < 0 and 0 or x end},
  floor = {f = math.floor, i = function(x) return x end},
  ceil = {f = math.ceil, i = function(x) return x end},
  sign = {f = function(x) return x > 0 and 1 or (x < 0 and -1 or x) end,
          i = function(x) return x > 0 and 1 or (x < 0 and -1 or 0) end},
}
-- i32 pow: exact modulo 2^32 for integral exponents >= 0 (issue 32); x^-n is 1 // x^n (1, +-1 or 0); a
-- fractional exponent goes through f64 (and the result promotes to f64 before it gets here)
local function INT_POW(x, y)
  if y ~= math.floor(y) then return f2i(x ^ y) end
  x, y = math.tointeger(x), math.tointeger(y)
  if y < 0 then return x == 1 and 1 or x == -1 and (y % 2 == 0 and 1 or -1) or 0 end
  local r = 1
  for _ = 1, y do r = r * x end
  r = r & 0xffffffff
  return r >= 0x80000000 and r - 0x100000000 or r
end

local BINARY = {
  add = {f = function(x, y) return x + y end, i = function(x, y) return wrap(x + y) end},
  sub = {f = function(x, y) return x - y end, i = function(x, y) return wrap(x - y) end},
  mul = {f = function(x, y) return x * y end, i = function(x, y) return wrap(x * y) end},
  div = {f = function(x, y) return x / y end,
         i = function(x, y)
           if y == 0 then return 0 end
           local q = x / y
           return wrap(q < 0 and math.ceil(q) or math.floor(q))
         end},
  pow = {f = function(x, y) return x ^ y end, i = function(x, y) return INT_POW(x, y) end},
  maximum = {f = function(x, y) return (x ~= x or y ~= y) and nan2(x, y) or math.max(x, y) end, i = math.max},
  minimum = {f = function(x, y) return (x ~= x or y ~= y) and nan2(x, y) or math.min(x, y) end, i = math.min},
  eq = {f = function(x, y) return b(x == y) end},
  ne = {f = function(x, y) return b(x ~= y) end},
  lt = {f = function(x, y) return b(x < y) end},
  le = {f = function(x, y) return b(x <= y) end},
  gt = {f = function(x, y) return b(x > y) end},
  ge = {f = function(x, y) return b(x >= y) end},
}
for _, k in ipairs {"eq", "ne", "lt", "le", "gt", "ge"} do BINARY[k].i = BINARY[k].f end
local UNARY_NAMES = {"neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "floor", "ceil", "sign"}
local BINARY_NAMES = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge"}
local DTYPES = {"f32", "f64", "i32"}

--- NumPy broadcast of two shapes (nil if incompatible)
local function bshape(sa, sb)
  local n = math.max(#sa, #sb)
  local out = {}
  for i = 1, n do
    local da, db = sa[i - (n - #sa)] or 1, sb[i - (n - #sb)] or 1
    if da ~= db and da ~= 1 and db ~= 1 then return nil end
    out[i] = da == 1 and db or da
  end
  return out
end

--- Flat index into an array of shape `s` for the output multi-index `idx` (broadcast, right-aligned).
local function src_index(idx, s)
  local n, k, f = #idx, 0, 0
  for i = 1, #s do
    local d = s[i]
    local j = idx[i + (n - #s)]
    f = f * d + (d == 1 and 0 or j)
    k = k + 1
  end
  return f + 1
end

local function numel(s) local n = 1 for _, d in ipairs(s) do n = n * d end return n end

--- Reference: fn applied over the broadcast of flat tables A (shape sa) and B (shape sb). Returns flat, shape.
local function ref_zip(fn, A, sa, B, sb)
  local so = assert(bshape(sa, sb))
  local out, idx = {}, {}
  for i = 1, #so do idx[i] = 0 end
  for lin = 1, numel(so) do
    out[lin] = fn(A[src_index(idx, sa)], B[src_index(idx, sb)])
    for d = #so, 1, -1 do
      idx[d] = idx[d] + 1
      if idx[d] < so[d] then break end
      idx[d] = 0
    end
  end
  return out, so
end

--- Nested table of `shape` from a flat table (for ck.array).
local function nest(flat, shape)
  if #shape == 0 then return flat[1] end
  local pos = 0
  local function build(d)
    local t = {}
    for i = 1, shape[d] do
      if d == #shape then pos = pos + 1; t[i] = flat[pos] else t[i] = build(d + 1) end
    end
    return t
  end
  return build(1)
end

--- Array from a flat reference (shapes with a 0 dim become ck.empty).
local function ref_array(flat, shape, dtype)
  if numel(shape) == 0 then return ck.empty(shape, {dtype = dtype, device = "host"}) end
  return ck.array(nest(flat, shape), {dtype = dtype, device = "host"})
end

--- Random input of a shape; "pos": strictly positive (log, sqrt).
local function input(shape, dtype, device, dom)
  local a = H.rand(shape, dtype, device or "host")
  if dom == "pos" then a = dtype == "i32" and (ck.abs(a) + 1) or (ck.abs(a) + 0.125) end
  return a
end

--- Quantise to a handful of values so that comparisons meet ties.
local function few_values(a)
  if a:dtype() == "i32" then return ck.div(a, 20) end
  return ck.floor(a * 3)
end
local CMP = {eq = true, ne = true, lt = true, le = true, gt = true, ge = true, maximum = true, minimum = true}

local BCAST = {
  {{3}, {2, 3}},
  {{2, 1}, {1, 3}},
  {{4, 1, 5}, {3, 1}},
  {{2, 3}, {2, 3}},
  {{}, {2, 3}},      -- 0-d on the left
  {{2, 3}, {}},      -- 0-d on the right
  {{0, 3}, {3}},     -- 0-size
  {{1, 0}, {4, 1}},  -- 0-size from broadcasting
}

local function tol_for(dtype, op)
  local t = H.tol(dtype)
  if dtype == "f32" then t.rtol, t.atol = 2e-6, 1e-6 end
  if op == "pow" and dtype ~= "i32" then t.atol = dtype == "f32" and 1e-5 or 1e-12 end
  return t
end

-- ---------------------------------------------------------------- host reference vs Lua

describe("elementwise host reference", function()
  it("adds element by element like Lua does (broadcast {3} + {2,3})", function()
    local a = ck.array({1.5, -2, 3}, {device = "host", dtype = "f64"})
    local bb = ck.array({{10, 20, 30}, {40, 50, 60}}, {device = "host", dtype = "f64"})
    local c = ck.add(a, bb)
    assert.same({2, 3}, c:shape())
    assert.same({{11.5, 18, 33}, {41.5, 48, 63}}, c:totable())
  end)

  for _, dt in ipairs(DTYPES) do
    for _, name in ipairs(BINARY_NAMES) do
      it(("%s %s over broadcasts matches Lua"):format(name, dt), function()
        local spec = BINARY[name]
        for _, case in ipairs(BCAST) do
          local a, bb = input(case[1], dt), input(case[2], dt)
          if name == "pow" and dt ~= "i32" then a = ck.abs(a) + 0.125 end
          if CMP[name] then a, bb = few_values(a), few_values(bb) end -- ties are common
          local got = ck[name](a, bb)
          if CMP[name] and name ~= "maximum" and name ~= "minimum" then -- comparisons give bool (issue 32); their 1/0 in the operands' dtype are checked below
            assert.equal("bool", got:dtype())
            got = got:to(dt)
          end
          local A, B = flatten(a:totable()), flatten(bb:totable())
          local flat, so = ref_zip(dt == "i32" and spec.i or spec.f, A, case[1], B, case[2])
          assert.same(so, got:shape())
          assert.equal(dt, got:dtype())
          H.assert_close(got, ref_array(flat, so, dt), tol_for(dt, name),
            ("%s %s %s %s"):format(name, dt, shape_str(case[1]), shape_str(case[2])))
        end
      end)
    end
    for _, name in ipairs(UNARY_NAMES) do
      local spec = UNARY[name]
      it(("%s %s matches Lua"):format(name, dt), function()
        if dt == "i32" and not spec.i then
          local ok, err = pcall(ck[name], ck.ones(2, 2, {dtype = "i32", device = "host"}))
          assert.is_false(ok)
          assert.matches(name, tostring(err), 1, true)
          assert.matches("i32", tostring(err), 1, true)
          return
        end
        for _, shape in ipairs {{}, {7}, {3, 5}, {0, 4}, {2, 3, 4}} do
          local a = input(shape, dt, "host", spec.dom)
          local got = ck[name](a)
          local A = flatten(a:totable())
          local flat = {}
          for i, x in ipairs(A) do flat[i] = (dt == "i32" and spec.i or spec.f)(x) end
          H.assert_close(got, ref_array(flat, shape, dt), tol_for(dt, name), name .. " " .. dt .. " " .. shape_str(shape))
        end
      end)
    end
  end

  it("handles special float values like CUDA math (NaN propagation, signed zeros)", function()
    local a = ck.array({0 / 0, 1, -0.0, -3, 2}, {dtype = "f64", device = "host"})
    local c = ck.array({1, 0 / 0, 0, 2, 2}, {dtype = "f64", device = "host"})
    local mx = ck.maximum(a, c):totable()
    assert.is_true(mx[1] ~= mx[1] and mx[2] ~= mx[2])
    assert.same({0, 2, 2}, {mx[3], mx[4], mx[5]})
    local mn = ck.minimum(a, c):totable()
    assert.is_true(mn[1] ~= mn[1] and mn[2] ~= mn[2])
    local sg = ck.sign(a):totable()
    assert.is_true(sg[1] ~= sg[1])
    assert.equal(-1, sg[4])
    assert.equal(1 / sg[3], -math.huge) -- sign(-0) = -0
    local r = ck.relu(a):totable()
    assert.is_true(r[1] ~= r[1])
    assert.same({1, 0, 2}, {r[2], r[4], r[5]})
    local ne = ck.ne(a, a):totable()
    assert.same({true, false, false, false, false}, ne)
  end)

  it("i32: division truncates, x/0 = 0, INT32_MIN/-1 wraps; add/neg/abs wrap", function()
    local I = {dtype = "i32", device = "host"}
    local x = ck.array({7, -7, 7, -7, 5, 0, INT_MIN, INT_MIN}, I)
    local y = ck.array({2, 2, -2, -2, 0, 0, -1, 1}, I)
    assert.same({3, -3, -3, 3, 0, 0, INT_MIN, INT_MIN}, ck.div(x, y):totable())
    assert.same({0, 0, 0}, ck.div(ck.array({1, -1, 0}, I), 0):totable())
    assert.same({INT_MIN}, ck.add(ck.array({2147483647}, I), 1):totable())
    assert.same({INT_MIN, 2147483647}, ck.neg(ck.array({INT_MIN, -2147483647}, I)):totable())
    assert.same({INT_MIN, 5}, ck.abs(ck.array({INT_MIN, -5}, I)):totable())
    assert.same({-1, 0, 1}, ck.sign(ck.array({-9, 0, 4}, I)):totable())
    assert.same({9, 0, 1}, ck.pow(ck.array({-3, 2, 1}, I), ck.array({2, -1, 0}, I)):totable())
  end)

  it("pow with a number and clamp", function()
    for _, dt in ipairs(DTYPES) do
      local a = input({4, 5}, dt, "host")
      local A = flatten(a:totable())
      for _, s in ipairs {2, 3, -1, 0.5} do
        local got = ck.pow(a, s)
        -- an i32 array with an integral exponent stays i32; a fractional one promotes to f64 (NumPy, torch)
        local rdt = (dt == "i32" and s ~= math.floor(s)) and "f64" or dt
        assert.equal(rdt, got:dtype(), ("pow %s ^ %g"):format(dt, s))
        local flat = {}
        for i, x in ipairs(A) do flat[i] = rdt == "i32" and INT_POW(x, s) or x ^ s end -- (integer powers: exact, issue 32)
        H.assert_close(got, ref_array(flat, {4, 5}, rdt), tol_for(rdt, "pow"), ("pow %s ^ %g"):format(dt, s))
      end
      local got = ck.clamp(a, -0.5, 0.5)
      local flat = {}
      for i, x in ipairs(A) do
        local t = math.min(math.max(x, -0.5), 0.5)
        flat[i] = dt == "i32" and f2i(t) or t
      end
      H.assert_close(got, ref_array(flat, {4, 5}, dt), H.tol(dt), "clamp " .. dt)
    end
  end)

  it("numbers on either side and the Lua operators", function()
    for _, dt in ipairs {"f32", "f64"} do
      local a = input({3, 4}, dt)
      local A = flatten(a:totable())
      local function check(got, fn, label)
        local flat = {}
        for i, x in ipairs(A) do flat[i] = fn(x) end
        if got:dtype() == "bool" then got = got:to(dt) end -- comparisons give bool (issue 32)
        assert.equal(dt, got:dtype(), label)
        H.assert_close(got, ref_array(flat, {3, 4}, dt), tol_for(dt, "pow"), label .. " " .. dt)
      end
      check(a + 2.5, function(x) return x + 2.5 end, "a+s")
      check(2.5 + a, function(x) return 2.5 + x end, "s+a")
      check(a - 1, function(x) return x - 1 end, "a-s")
      check(2 - a, function(x) return 2 - x end, "2-a")
      check(a / 3, function(x) return x / 3 end, "a/s")
      check(3 / a, function(x) return 3 / x end, "s/a")
      check(-a, function(x) return -x end, "-a")
      check(a ^ 2, function(x) return x * x end, "a^2")
      check(3 * a, function(x) return 3 * x end, "s*a")
      check(a * 3, function(x) return x * 3 end, "a*s")
      check(ck.maximum(0.25, a), function(x) return math.max(0.25, x) end, "maximum(s, a)")
      check(ck.lt(a, 0), function(x) return x < 0 and 1 or 0 end, "a<0")
      check(ck.gt(0, a), function(x) return 0 > x and 1 or 0 end, "0>a")
      local bb = input({3, 4}, dt)
      local B = flatten(bb:totable())
      local flat = {}
      for i = 1, #A do flat[i] = A[i] + B[i] end
      H.assert_close(a + bb, ref_array(flat, {3, 4}, dt), H.tol(dt), "a+b")
      for i = 1, #A do flat[i] = A[i] - B[i] end
      H.assert_close(a - bb, ref_array(flat, {3, 4}, dt), H.tol(dt), "a-b")
      for i = 1, #A do flat[i] = A[i] / B[i] end
      H.assert_close(a / bb, ref_array(flat, {3, 4}, dt), H.tol(dt), "a/b")
    end
  end)

  it("scalars with i32 arrays: integers stay i32, other numbers compute in f64, pow included", function()
    local a = ck.array({1, 2, 3, -4}, {dtype = "i32", device = "host"})
    assert.equal("i32", (a + 2):dtype())
    assert.same({3, 4, 5, -2}, (a + 2):totable())
    assert.same({0, 1, 1, -2}, ck.div(a, 2):totable()) -- ck.div keeps i32 (truncates); a / 2 is float division
    local h = a * 0.5
    assert.equal("f64", h:dtype())
    assert.same({0.5, 1, 1.5, -2}, h:totable())
    assert.same({true, true, false, true}, ck.lt(a, 2.5):totable()) -- computed in f64, a bool result
    assert.equal("bool", ck.lt(a, 2.5):dtype())
    assert.equal("i32", (a ^ 2):dtype())
    assert.same({1, 4, 9, 16}, (a ^ 2):totable())
    -- issue 29: a number that is not an i32 value promotes the i32 side of pow as well, on either side
    local e = ck.array({-3, 2}, {dtype = "i32", device = "host"})
    local p = ck.pow(0.5, e)
    assert.equal("f64", p:dtype())
    assert.same({8, 0.25}, p:totable())
    local q = ck.pow(-2.5, ck.array({5}, {dtype = "i32", device = "host"}))
    assert.equal("f64", q:dtype())
    assert.near((-2.5) ^ 5, q:totable()[1], 1e-12)
    local r = ck.pow(ck.array({4}, {dtype = "i32", device = "host"}), 0.5)
    assert.equal("f64", r:dtype())
    assert.same({2}, r:totable())
    assert.same({9, 0.5}, ck.pow(ck.array({3, 2}, {dtype = "i32", device = "host"}), ck.array({2, -1}, {dtype = "f64", device = "host"})):totable())
    assert.equal("i32", ck.pow(2, e):dtype()) -- an integral base keeps the i32 exponent's dtype
    -- an in-place op cannot widen: refused, as for a:add_(f64)
    assert.has_error(function() e:pow_(0.5) end)
  end)

  it("rounds the number of every binary op and of pow to a half dtype first", function()
    -- bf16 3 ^ (1 + 2^-8): 1 + 2^-8 is not a bf16 value (8 bits) and rounds to 1, as it does in 3 * (1 + 2^-8)
    for _, dev in ipairs(H.devices()) do
      for _, dt in ipairs {"f16", "bf16"} do
        local bits = dt == "f16" and 11 or 8
        local s = 1 + 2 ^ -(bits + 1) -- a tie below the dtype's resolution: rounds to 1 (nearest even)
        local x = ck.array({3, 5, 7}, {dtype = dt, device = dev})
        assert.same({3, 5, 7}, ck.pow(x, s):to("f64"):totable(), dt .. " pow on " .. dev)
        assert.same({3, 5, 7}, (x * s):to("f64"):totable(), dt .. " mul on " .. dev)
        assert.same({3, 5, 7}, ck.maximum(x, s):to("f64"):totable(), dt .. " maximum on " .. dev)
        assert.same({0, 0, 0}, ck.pow(s, x):sub(1):to("f64"):totable(), dt .. " number ^ array on " .. dev)
      end
    end
  end)

  it("promotes f32 + f64 to f64 and i32 + float to the float", function()
    local a = ck.array({1, 2, 3}, {dtype = "f32", device = "host"})
    local d = ck.array({0.1, 0.2, 0.3}, {dtype = "f64", device = "host"})
    local i = ck.array({1, 2, 3}, {dtype = "i32", device = "host"})
    local c = a + d
    assert.equal("f64", c:dtype())
    H.assert_close(c, ck.array({1.1, 2.2, 3.3}, {dtype = "f64", device = "host"}), H.tol("f64"))
    assert.equal("f64", (d + a):dtype())
    assert.equal("f32", (i + a):dtype())
    assert.equal("f64", (d * 1 + i):dtype())
    assert.same({2, 4, 6}, (i + a):totable())
  end)

  it("views: transposed, sliced and expanded operands give the same as contiguous copies", function()
    for _, dt in ipairs(DTYPES) do
      local base = input({6, 5}, dt)
      local t = base:t()                           -- 5x6 transposed
      local s = base:narrow(1, 2, 5):narrow(2, 2, 4) -- 4x3 slice with an offset
      local e = input({5, 1}, dt):expand(5, 6)     -- expanded (stride 0)
      local tt = input({6, 5}, dt):t()
      for _, name in ipairs {"add", "mul", "maximum", "lt"} do
        H.assert_equal(ck[name](t, e), ck[name](t:contiguous(), e:contiguous()), name .. " t,e " .. dt)
        H.assert_equal(ck[name](t, tt), ck[name](t:contiguous(), tt:contiguous()), name .. " t,t " .. dt)
        H.assert_equal(ck[name](s, s:t():t()), ck[name](s:contiguous(), s:contiguous()), name .. " slice " .. dt)
      end
      H.assert_equal(ck.neg(t), ck.neg(t:contiguous()), "neg t " .. dt)
      H.assert_equal(ck.abs(s), ck.abs(s:contiguous()), "abs slice " .. dt)
      -- a strided out
      local out = H.poison(ck.empty(6, 5, {dtype = dt, device = "host"})):t()
      ck.add(t, e, {out = out})
      H.assert_equal(out, ck.add(t, e), "strided out " .. dt)
      -- an independent check of the transposed view
      local A, T = flatten(base:totable()), flatten(t:contiguous():totable())
      for i = 1, 5 do for j = 1, 6 do assert.equal(A[(j - 1) * 5 + i], T[(i - 1) * 6 + j]) end end
    end
  end)

  it("in place: add_, exp_, and add_ with an overlapping transposed view", function()
    local a = input({4, 4}, "f64")
    local A = flatten(a:totable())
    local bb = input({4}, "f64")
    local B = flatten(bb:totable())
    local r = a:add_(bb)
    assert.equal(a, r)
    local flat = {}
    for i = 1, 16 do flat[i] = A[i] + B[(i - 1) % 4 + 1] end
    H.assert_close(a, ref_array(flat, {4, 4}, "f64"), H.tol("f64"), "add_")
    A = flatten(a:totable())
    a:exp_()
    for i = 1, 16 do flat[i] = math.exp(A[i]) end
    H.assert_close(a, ref_array(flat, {4, 4}, "f64"), H.tol("f64"), "exp_")
    -- a += a^T must read the original values, not half-updated ones
    A = flatten(a:totable())
    a:add_(a:t())
    for i = 1, 4 do for j = 1, 4 do flat[(i - 1) * 4 + j] = A[(i - 1) * 4 + j] + A[(j - 1) * 4 + i] end end
    H.assert_close(a, ref_array(flat, {4, 4}, "f64"), H.tol("f64"), "a:add_(a:t())")
    -- broadcasting into out must match out's shape
    local ok, err = pcall(function() return bb:add_(a) end)
    assert.is_false(ok)
    assert.matches("[4x4]", tostring(err), 1, true)
  end)

  it("errors name both shapes for incompatible broadcasts", function()
    local ok, err = pcall(ck.add, ck.ones(2, 3, {device = "host"}), ck.ones(4, {device = "host"}))
    assert.is_false(ok)
    assert.matches("[2x3]", tostring(err), 1, true)
    assert.matches("[4]", tostring(err), 1, true)
    ok, err = pcall(ck.mul, ck.ones(2, 3, {device = "host"}), ck.ones(3, 2, {device = "host"}))
    assert.is_false(ok)
    assert.matches("[3x2]", tostring(err), 1, true)
    assert.matches("mul", tostring(err), 1, true)
  end)

  it("0-size operands give 0-size results", function()
    local c = ck.add(ck.empty(0, 3, {device = "host"}), ck.ones(3, {device = "host"}))
    assert.same({0, 3}, c:shape())
    assert.same({0}, (ck.empty(0, {device = "host"}) * 2):shape())
    assert.same({0, 5}, ck.exp(ck.empty(0, 5, {device = "host"})):shape())
  end)

  it("casts: f -> i32 truncates, NaN and out of range give INT32_MIN", function()
    local a = ck.array({1.9, -1.9, 0 / 0, 3e9, -2147483648, 2147483647.5}, {dtype = "f64", device = "host"})
    assert.same({1, -1, INT_MIN, INT_MIN, INT_MIN, 2147483647}, a:to("i32"):totable())
    local i = ck.array({5, -7}, {dtype = "i32", device = "host"})
    assert.same({5, -7}, i:to("f32"):totable())
    assert.same({5, -7}, i:to("f64"):to("i32"):totable())
  end)

  it("generators: fill, arange, eye, linspace, rand/randn", function()
    local H32 = {device = "host", dtype = "i32"}
    assert.same({0, 1, 2, 3, 4}, ck.arange(5, {device = "host"}):totable())
    assert.same({10, 7, 4, 1}, ck.arange(10, 0, -3, H32):totable())
    assert.same({{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}, ck.eye(3, 4, {device = "host"}):totable())
    assert.same({{7, 7}, {7, 7}}, ck.full({2, 2}, 7.5, H32):totable())
    local t = ck.zeros(3, 4, {device = "host", dtype = "f64"}):t()
    t:fill(2)
    assert.same({{2, 2, 2}, {2, 2, 2}, {2, 2, 2}, {2, 2, 2}}, t:totable())
    local u = ck.rand(1000, {device = "host", dtype = "f64"})
    for _, v in ipairs(u:totable()) do assert.is_true(v >= 0 and v < 1) end
    local m = 0
    for _, v in ipairs(ck.randn(4000, {device = "host"}):totable()) do m = m + v / 4000 end
    assert.is_true(math.abs(m) < 0.1, "randn mean " .. m)
    local ok, err = pcall(ck.rand, 3, H32)
    assert.is_false(ok)
    assert.matches("i32", tostring(err), 1, true)
    ck.seed(1234)
    local r1 = ck.rand(5, {device = "host"}):totable()
    ck.seed(1234)
    assert.same(r1, ck.rand(5, {device = "host"}):totable())
  end)
end)

-- ---------------------------------------------------------------- GPU variants vs the host

describe("elementwise on cuda", function()
  -- one that declines a case falls back (and says so); batched runs each op at once here (the result is read
  -- before the next op), spec/batched_spec.lua runs many per launch
  local VARIANTS = {"strided", "contiguous", "tiled", "batched"}

  local function on_cuda_all(fn_host, fn_cuda, label, dt, tol)
    local want = fn_host()
    for _, v in ipairs(VARIANTS) do
      local got = fn_cuda(v)
      assert.equal("cuda:0", got:device(), label)
      H.assert_close(got, want, tol or H.tol(dt), label .. " (" .. v .. ")")
    end
  end

  it("every op x dtype x broadcast case matches the host", gpu(function()
    for _, dt in ipairs(DTYPES) do
      for _, name in ipairs(BINARY_NAMES) do
        for _, case in ipairs(BCAST) do
          local a, bb = input(case[1], dt), input(case[2], dt)
          if name == "pow" and dt ~= "i32" then a = ck.abs(a) + 0.125 end
          if CMP[name] then a, bb = few_values(a), few_values(bb) end
          local ca, cb = a:cuda(), bb:cuda()
          on_cuda_all(function() return ck[name](a, bb) end,
            function(v) return ck[name](ca, cb, {variant = v}) end,
            ("%s %s %s %s"):format(name, dt, shape_str(case[1]), shape_str(case[2])), dt, tol_for(dt, name))
        end
        -- numbers on either side
        local a = input({5, 7}, dt)
        local ca = a:cuda()
        on_cuda_all(function() return ck[name](a, 3) end, function(v) return ck[name](ca, 3, {variant = v}) end,
          name .. " a,3 " .. dt, dt, tol_for(dt, name))
        on_cuda_all(function() return ck[name](2, a) end, function(v) return ck[name](2, ca, {variant = v}) end,
          name .. " 2,a " .. dt, dt, tol_for(dt, name))
      end
      for _, name in ipairs(UNARY_NAMES) do
        if dt ~= "i32" or UNARY[name].i then
          for _, shape in ipairs {{}, {1}, {13}, {33, 65}, {0, 3}, {2, 3, 4}} do
            local a = input(shape, dt, "host", UNARY[name].dom)
            local ca = a:cuda()
            on_cuda_all(function() return ck[name](a) end, function(v) return ck[name](ca, {variant = v}) end,
              name .. " " .. dt .. " " .. shape_str(shape), dt, tol_for(dt, name))
          end
        end
      end
      local a = input({9, 11}, dt)
      local ca = a:cuda()
      for _, s in ipairs {2, 0.5, -1} do
        -- (i32 ^ 0.5 computes in f64: the device's pow and the host's may differ in the last bit)
        local rdt = (dt == "i32" and s ~= math.floor(s)) and "f64" or dt
        on_cuda_all(function() return ck.pow(a, s) end, function(v) return ck.pow(ca, s, {variant = v}) end,
          "pows " .. dt .. " " .. s, rdt, tol_for(rdt, "pow"))
      end
      on_cuda_all(function() return ck.clamp(a, -0.3, 0.6) end, function(v) return ck.clamp(ca, -0.3, 0.6, {variant = v}) end,
        "clamp " .. dt, dt)
    end
  end))

  it("views and awkward shapes match the host on both variants", gpu(function()
    for _, dt in ipairs(DTYPES) do
      for _, shape in ipairs(H.shapes_awkward) do
        local a, bb = input(shape, dt), input({shape[2], shape[1]}, dt)
        local ca, cb = a:cuda(), bb:cuda()
        on_cuda_all(function() return ck.add(a, bb:t()) end, function(v) return ck.add(ca, cb:t(), {variant = v}) end,
          "add a + b:t() " .. dt .. " " .. shape_str(shape), dt)
        local last = math.max(1, shape[2] - 1)
        on_cuda_all(function() return ck.mul(a:narrow(2, 1, last), 2) end,
          function(v) return ck.mul(ca:narrow(2, 1, last), 2, {variant = v}) end,
          "slice * 2 " .. dt .. " " .. shape_str(shape), dt)
        local row = input({1, shape[2]}, dt)
        on_cuda_all(function() return ck.sub(a, row:expand(shape[1], shape[2])) end,
          function(v) return ck.sub(ca, row:cuda():expand(shape[1], shape[2]), {variant = v}) end,
          "sub expanded " .. dt .. " " .. shape_str(shape), dt)
      end
      -- misaligned contiguous views (offset 1..3 elements) exercise the scalar head and tail
      local base = input({4099}, dt)
      local cbase = base:cuda()
      for off = 1, 3 do
        local n = 4099 - off - 1 -- elements 1+off .. off+n against 2 .. 1+n (inclusive ranges)
        on_cuda_all(function() return ck.add(base:narrow(1, 1 + off, off + n), base:narrow(1, 2, 1 + n)) end,
          function(v) return ck.add(cbase:narrow(1, 1 + off, off + n), cbase:narrow(1, 2, 1 + n), {variant = v}) end,
          "misaligned add off " .. off .. " " .. dt, dt)
        on_cuda_all(function() return ck.neg(base:narrow(1, 1 + off, off + n)) end,
          function(v) return ck.neg(cbase:narrow(1, 1 + off, off + n), {variant = v}) end, "misaligned neg " .. dt, dt)
      end
    end
  end))

  it("casts on the GPU match the host for all 9 dtype pairs", gpu(function()
    local src = ck.array({1.9, -1.9, 0 / 0, 3e9, -2147483648, 2147483647.5, 0.5, -0.0, 1e-40, 123456789.123},
      {dtype = "f64", device = "host"})
    for _, from in ipairs(DTYPES) do
      local h = src:to(from)
      local c = h:cuda()
      for _, to in ipairs(DTYPES) do
        H.assert_equal(c:to(to), h:to(to), from .. " -> " .. to)
        -- strided (a transposed destination) goes through the elementwise COPY kernel
        local m = ck.rand(7, 9, {dtype = "f64", device = "host"}) * 1000 - 500
        local hm = m:to(from)
        local dst = ck.empty(9, 7, {dtype = to, device = "cuda"}):t()
        dst:copy_(hm:cuda())
        H.assert_equal(dst, hm:to(to), "strided " .. from .. " -> " .. to)
      end
    end
  end))

  it("generators on the GPU match the host exactly (rand/randn same values for the same seed)", gpu(function()
    for _, dt in ipairs {"f32", "f64"} do
      for _, shape in ipairs {{1}, {1000}, {37, 129}, {3, 4, 5}} do
        local s = H.seed + #shape
        ck.seed(s)
        local hr = ck.rand(shape, {dtype = dt, device = "host"})
        ck.seed(s)
        local cr = ck.rand(shape, {dtype = dt, device = "cuda"})
        H.assert_equal(cr, hr, "rand " .. dt)
        ck.seed(s)
        local hn = ck.randn(shape, {dtype = dt, device = "host"})
        ck.seed(s)
        local cn = ck.randn(shape, {dtype = dt, device = "cuda"})
        H.assert_close(cn, hn, {rtol = dt == "f32" and 1e-6 or 1e-13, atol = 1e-13}, "randn " .. dt)
      end
    end
    for _, dt in ipairs(DTYPES) do
      H.assert_equal(ck.arange(3, 1000, 7, {dtype = dt, device = "cuda"}), ck.arange(3, 1000, 7, {dtype = dt, device = "host"}), "arange")
      H.assert_equal(ck.eye(37, 53, {dtype = dt, device = "cuda"}), ck.eye(37, 53, {dtype = dt, device = "host"}), "eye")
      local t = ck.zeros(5, 6, {dtype = dt, device = "cuda"}):t()
      t:fill(3)
      H.assert_equal(t, ck.full({6, 5}, 3, {dtype = dt, device = "host"}), "fill strided")
    end
    local ok, err = pcall(ck.randn, 3, {dtype = "i32", device = "cuda"})
    assert.is_false(ok)
    assert.matches("i32", tostring(err), 1, true)
  end))

  it("variants: explicit choice, and the fallback note for contiguous on a strided view", gpu(function()
    -- 124 x 124 elements: past the batch's 4096, so the defaults below are the launching rungs, and 94% of the
    -- tiled rung's four 64 x 64 tiles (below half it declines)
    local a, bb = ck.rand(124, 124, {device = "cuda"}), ck.rand(124, 124, {device = "cuda"})
    for _, v in ipairs {"strided", "contiguous"} do
      ck.add(a, bb, {variant = v})
      assert.equal(v, ck.last_ran().name)
    end
    ck.add(a, bb, {variant = "tiled"}) -- one memory order: nothing to tile, and the note says so
    assert.equal("contiguous", ck.last_ran().name)
    assert.matches("tiled", ck.last_ran().note, 1, true)
    ck.add(a:t(), bb, {variant = "contiguous"})
    local ran = ck.last_ran()
    assert.equal("tiled", ran.name) -- a:t() is in the other memory order: the tiled rung takes it
    assert.matches("contiguous", ran.note, 1, true)
    ck.add(a, bb)
    assert.equal("contiguous", ck.last_ran().name)
    ck.add(a, bb:narrow(1, 1, 1))
    assert.equal("strided", ck.last_ran().name)
    ck.add(a:t(), bb:t()) -- both transposed: the result follows them, and that is contiguous again
    assert.equal("contiguous", ck.last_ran().name)
  end))

  it("mixed memory orders run on the tiled rung and match the host", gpu(function()
    -- f16/bf16 compute in float and round once on both backends: equal up to one rounding
    local TOLS = {f16 = {rtol = 2 ^ -10, atol = 2 ^ -10}, bf16 = {rtol = 2 ^ -7, atol = 2 ^ -7}}
    local function tol(dt) return TOLS[dt] or H.tol(dt) end
    -- the rung: tiled, unless its tiles (64 x 64; f64 32 x 32) would hold less than half their slots on average
    -- (f64: three quarters); strided takes those (03_tiled.cu's supports() says why). x, y: the two tiled dims
    local function rung(dt, x, y)
      local t, need = 64, 0.5
      if dt == "f64" then t, need = 32, 0.75 end
      return x * y >= need * math.ceil(x / t) * math.ceil(y / t) * t * t and "tiled" or "strided"
    end
    local dims -- the case's tiled dims
    local function check(label, want, got_fn)
      local got = got_fn()
      local expect = rung(got:dtype(), dims[1], dims[2])
      assert.equal(expect, ck.last_ran().name, label .. ": ran " .. ck.last_ran().name .. " (" .. ck.last_ran().note .. ")")
      H.assert_close(got, want, tol(got:dtype()), label)
    end
    local function poisoned(shape, dt) return H.poison(ck.empty(shape, {dtype = dt, device = "cuda"})) end
    -- The tile is 64 x 64 (2- and 4-byte elements) or 32 x 32 (f64): shapes with only edge tiles, only full
    -- tiles, and both; 1-wide and 2-wide ones. Each input kind: one staged input with a scalar on either side or
    -- none (unary), a staged one with a direct one (either side), two staged ones.
    for _, dt in ipairs {"f32", "f64", "i32", "f16", "bf16"} do
      for _, sh in ipairs {{33, 65}, {1, 40}, {40, 2}, {64, 64}, {100, 257}, {128, 192}, {96, 64}, {120, 124}} do
        local ha, hb = input(sh, dt), input({sh[2], sh[1]}, dt)
        local a, b = ha:cuda(), hb:cuda()
        local tag = ("%s [%dx%d]"):format(dt, sh[1], sh[2])
        dims = sh
        if sh[1] > 1 and sh[2] > 1 then
          local osh = {sh[2], sh[1]}
          check("a + b:t() " .. tag, ha + hb:t(), function() return ck.add(a, b:t()) end)
          check("b:t() - a " .. tag, hb:t() - ha, function() return ck.sub(b:t(), a) end)
          check("a - b:t() into poisoned out " .. tag, ha - hb:t(), function() return ck.sub(a, b:t(), {out = poisoned(sh, dt)}) end)
          -- both inputs transposed, into a row-major output: a transpose as well as an add
          check("mixed out " .. tag, ha:t() + ha:t(), function() return ck.add(a:t(), a:t(), {out = poisoned(osh, dt)}) end)
          check("a:t() - b into poisoned out " .. tag, ha:t() - hb, function() return ck.sub(a:t(), b, {out = poisoned(osh, dt)}) end)
          check("2 * a:t() " .. tag, ha:t() * 2, function() return ck.mul(2, a:t(), {out = poisoned(osh, dt)}) end)
          check("a:t() - 3 " .. tag, ha:t() - 3, function() return ck.sub(a:t(), 3, {out = poisoned(osh, dt)}) end)
          check("3 - a:t() " .. tag, 3 - ha:t(), function() return ck.sub(3, a:t(), {out = poisoned(osh, dt)}) end)
          check("neg(a:t()) " .. tag, ck.neg(ha:t()), function() return ck.neg(a:t(), {out = poisoned(osh, dt)}) end)
          -- direct inputs broadcast along X (a column) and along Y (a row) next to a staged one
          local col, row = input({sh[2], 1}, dt), input({1, sh[1]}, dt)
          check("a:t() + col " .. tag, ha:t() + col:expand(sh[2], sh[1]),
            function() return ck.add(a:t(), col:cuda():expand(sh[2], sh[1]), {out = poisoned(osh, dt)}) end)
          check("row - a:t() " .. tag, row:expand(sh[2], sh[1]) - ha:t(),
            function() return ck.sub(row:cuda():expand(sh[2], sh[1]), a:t(), {out = poisoned(osh, dt)}) end)
          local y = ck.empty(osh, {dtype = dt, device = "cuda"})
          y:copy_(a:t()) -- copies take the transpose ladder's path (ck_copy), not this rung: values only
          H.assert_close(y, ha:t(), tol(dt), "copy_ " .. tag)
        end
      end
    end
    -- a batch of small transposes (10^3 x 8 x 8, x 8 x 24, x 16 x 16): strided where a tile would be mostly idle
    for _, dt in ipairs {"f32", "f64", "f16"} do
      for _, mn in ipairs {{8, 8}, {8, 24}, {16, 16}} do
        local hb = input({1000, mn[1], mn[2]}, dt)
        local got = ck.neg(hb:cuda():transpose(2, 3), {out = poisoned({1000, mn[2], mn[1]}, dt)})
        assert.equal(rung(dt, mn[1], mn[2]), ck.last_ran().name,
          ("batch of %dx%d %s: %s"):format(mn[1], mn[2], dt, ck.last_ran().note))
        H.assert_close(got, ck.neg(hb:transpose(2, 3)), tol(dt), "batch of small transposes " .. dt)
      end
    end
    -- in place into the direct input, over full and edge tiles (each element is read by the thread writing it)
    for _, sh in ipairs {{128, 96}, {120, 100}} do
      local hc, hd = input(sh, "f32"), input({sh[2], sh[1]}, "f32")
      local want = hc + hd:t()
      local c = hc:cuda()
      c:add_(hd:cuda():t())
      assert.equal(rung("f32", sh[1], sh[2]), ck.last_ran().name)
      H.assert_close(c, want, H.tol("f32"), ("add_(d:t()) [%dx%d]"):format(sh[1], sh[2]))
    end
    -- 3-D: the inner two dims swapped with a batch (full and edge tiles: 120 x 124, 91% of the tiles' slots, so
    -- tiled in every dtype); a permutation that puts another dim last; a batch dim between X and Y; a staged input
    -- broadcast over the batch
    dims = {120, 124}
    for _, dt in ipairs {"f32", "f64", "f16"} do
      local h3 = input({3, 120, 124}, dt)
      local x = h3:cuda()
      local t23 = h3:transpose(2, 3)
      check("3-D transpose(2,3) + 1 " .. dt, t23 + 1, function() return ck.add(x:transpose(2, 3), 1, {out = poisoned({3, 124, 120}, dt)}) end)
      local hz = input({3, 124, 120}, dt)
      check("3-D z - transpose(2,3) " .. dt, hz - t23, function() return ck.sub(hz:cuda(), x:transpose(2, 3)) end)
      local hw = input({120, 124}, dt)
      check("3-D transpose(2,3) * broadcast w:t() " .. dt, ck.mul(t23, hw:t()),
        function() return ck.mul(x:transpose(2, 3), hw:cuda():t(), {out = poisoned({3, 124, 120}, dt)}) end)
      check("3-D permute(3,1,2) exp " .. dt, ck.exp(h3:permute(3, 1, 2)),
        function() return ck.exp(x:permute(3, 1, 2), {out = poisoned({124, 3, 120}, dt)}) end)
      local hm = input({120, 5, 124}, dt) -- (M, B, N): permute(3, 2, 1) is (N, B, M), unit stride along N
      check("3-D permute(3,2,1) + c " .. dt, hm:permute(3, 2, 1) + hz[1]:reshape(124, 1, 120):expand(124, 5, 120),
        function() return ck.add(hm:cuda():permute(3, 2, 1), hz[1]:cuda():reshape(124, 1, 120):expand(124, 5, 120)) end)
    end
    -- a cast across layouts is an elementwise COPY, which the tiled rung takes (copies set no last_ran)
    local h3 = input({3, 70, 130}, "f32")
    local x = h3:cuda()
    for _, to in ipairs {"f64", "f16", "i32"} do
      local z = ck.empty({130, 70}, {dtype = to, device = "cuda"})
      z:copy_(x[2]:t())
      H.assert_close(z, h3[2]:t():to(to), tol(to), "copy_ with cast across layouts to " .. to)
    end
    local z = ck.empty({130, 70}, {dtype = "f32", device = "cuda"})
    z:copy_(x[2]:to("f16"):t())
    H.assert_close(z, h3[2]:to("f16"):t():to("f32"), H.tol("f32"), "copy_ f16 -> f32 across layouts")
  end))

  it("in place, promotion and errors on the GPU", gpu(function()
    local h = input({33, 33}, "f32")
    local want = h + h:t()
    local c = h:cuda()
    c:add_(c:t())
    H.assert_close(c, want, H.tol("f32"), "add_(t) cuda")
    c:exp_()
    H.assert_close(c, ck.exp(want), H.tol("f32"), "exp_ cuda")
    local d = input({33}, "f64"):cuda()
    assert.equal("f64", (c + d):dtype())
    H.assert_close(c + d, (c:host() + d:host()), H.tol("f64"), "promoted")
    local ok, err = pcall(ck.add, c, h)
    assert.is_false(ok)
    assert.matches("device", tostring(err), 1, true)
    ok, err = pcall(ck.add, c, ck.ones(5, {device = "cuda"}))
    assert.is_false(ok)
    assert.matches("[33x33]", tostring(err), 1, true)
    assert.matches("[5]", tostring(err), 1, true)
    local I = {dtype = "i32", device = "cuda"}
    assert.same({0, 0, 3, -3, INT_MIN}, ck.div(ck.array({1, -1, 7, -7, INT_MIN}, I), ck.array({0, 0, 2, 2, -1}, I)):totable())
    assert.same({0, 5}, ck.empty(0, 5, {device = "cuda"}):add_(1):shape())
  end))

  it("large and > 2^24 element cases", gpu(function()
    local n = 2 ^ 24 + 3
    local a, bb = ck.rand(n, {device = "cuda"}), ck.rand(n, {device = "cuda"})
    local got = ck.add(a, bb)
    local ha, hb = a:host(), bb:host()
    H.assert_close(got, ha + hb, H.tol("f32"), "2^24+3 add")
    local m, k = 4097, 4095
    local x = ck.rand(m, k, {device = "cuda"})
    local y = ck.rand(k, m, {device = "cuda"})
    for _, v in ipairs(VARIANTS) do
      H.assert_close(ck.add(x, y:t(), {variant = v}), x:host() + y:host():t(), H.tol("f32"), "4097x4095 + t " .. v)
    end
  end))
end)
