-- Fused expression kernels: ck.map and ck.reduce_map. The host evaluator is checked against plain Lua here;
-- on the GPU every fused kernel is checked against the host evaluator (the oracle).
local H = require "spec.helpers"
local ck = H.ck

-- ---------------------------------------------------------------- plain-Lua references

local function shape_of(a) return a:shape() end
local function numel(shape) local n = 1; for _, d in ipairs(shape) do n = n * d end; return n end

local function bshape(...)
  local nd, shapes = 0, {...}
  for _, s in ipairs(shapes) do nd = math.max(nd, #s) end
  local out = {}
  for d = 1, nd do
    local v = 1
    for _, s in ipairs(shapes) do
      local x = s[d - (nd - #s)] or 1
      if x ~= 1 then v = x end
    end
    out[d] = v
  end
  return out
end

--- Apply fn elementwise in Lua: inputs {name = array or number}; returns a host f64 array of the broadcast shape.
local function lua_map(fn, inputs, round)
  local shapes, names = {}, {}
  for k, v in pairs(inputs) do
    names[#names + 1] = k
    if ck.is_array(v) then shapes[#shapes + 1] = v:shape() end
  end
  local shape = bshape(table.unpack(shapes))
  local flat = {}
  for _, k in ipairs(names) do
    local v = inputs[k]
    if ck.is_array(v) then
      local e = v:host()
      local s = e:shape()
      while #s < #shape do e = e:reshape(1, table.unpack(s)); s = e:shape() end
      flat[k] = e:expand(table.unpack(shape)):to("f64"):flat()
    end
  end
  local out = {}
  for i = 1, numel(shape) do
    local env = {}
    for _, k in ipairs(names) do
      local v = inputs[k]
      env[k] = ck.is_array(v) and flat[k][i] or v
    end
    local r = fn(env)
    out[i] = round and round(r) or r
  end
  local r = ck.array(out, {dtype = "f64"})
  if #shape == 0 then return r:reshape({}) end
  return r:reshape(shape)
end

local function tanh(x) if x > 20 then return 1 elseif x < -20 then return -1 end local e = math.exp(2 * x); return (e - 1) / (e + 1) end
local function sign(x) return x > 0 and 1 or (x < 0 and -1 or x) end
local function erf(x) -- Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7)
  local s = x < 0 and -1 or 1
  x = math.abs(x)
  local t = 1 / (1 + 0.3275911 * x)
  local y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * math.exp(-x * x)
  return s * y
end
local function trunc(x) return x >= 0 and math.floor(x) or math.ceil(x) end
local function round(x) return x >= 0 and math.floor(x + 0.5) or -math.floor(-x + 0.5) end
local function i32(x) -- the library's float -> i32 rule
  if x ~= x or x <= -2147483649 or x >= 2147483648 then return -2147483648 end
  return trunc(x)
end

local TOLS = {f32 = {rtol = 2e-5, atol = 2e-6}, f64 = {rtol = 1e-12, atol = 1e-13}, i32 = {rtol = 0, atol = 0}}

-- (expression, Lua function of the inputs, tolerance override)
local FLOAT_CASES = {
  {"x + y", function(e) return e.x + e.y end},
  {"x - y", function(e) return e.x - e.y end},
  {"x * y", function(e) return e.x * e.y end},
  {"x / y", function(e) return e.x / e.y end},
  {"x % y", function(e) return math.fmod(e.x, e.y) end},
  {"-x", function(e) return -e.x end},
  {"x < y", function(e) return e.x < e.y and 1 or 0 end},
  {"x <= y", function(e) return e.x <= e.y and 1 or 0 end},
  {"x > y", function(e) return e.x > e.y and 1 or 0 end},
  {"x >= y", function(e) return e.x >= e.y and 1 or 0 end},
  {"x == x", function(e) return 1 end},
  {"x != y", function(e) return e.x ~= e.y and 1 or 0 end},
  {"x > 0 && y > 0", function(e) return (e.x > 0 and e.y > 0) and 1 or 0 end},
  {"x > 0 || y > 0", function(e) return (e.x > 0 or e.y > 0) and 1 or 0 end},
  {"!(x > 0)", function(e) return e.x > 0 and 0 or 1 end},
  {"x > y ? x : y * 2", function(e) return e.x > e.y and e.x or e.y * 2 end},
  {"where(x > 0, x, 0.5)", function(e) return e.x > 0 and e.x or 0.5 end},
  {"(x + 1) * (y - 2) / 3", function(e) return (e.x + 1) * (e.y - 2) / 3 end},
  {"exp(x)", function(e) return math.exp(e.x) end},
  {"exp2(x)", function(e) return 2 ^ e.x end},
  {"expm1(x)", function(e) return math.exp(e.x) - 1 end, {rtol = 1e-5, atol = 1e-6}},
  {"log(x + 2)", function(e) return math.log(e.x + 2) end},
  {"log2(x + 2)", function(e) return math.log(e.x + 2, 2) end},
  {"log10(x + 2)", function(e) return math.log(e.x + 2, 10) end},
  {"log1p(x + 1)", function(e) return math.log(e.x + 2) end},
  {"sqrt(x + 1)", function(e) return math.sqrt(e.x + 1) end},
  {"rsqrt(x + 2)", function(e) return 1 / math.sqrt(e.x + 2) end},
  {"cbrt(x)", function(e) return sign(e.x) * math.abs(e.x) ^ (1 / 3) end},
  {"sin(x)", function(e) return math.sin(e.x) end},
  {"cos(x)", function(e) return math.cos(e.x) end},
  {"tan(x)", function(e) return math.tan(e.x) end},
  {"asin(x)", function(e) return math.asin(e.x) end},
  {"acos(x)", function(e) return math.acos(e.x) end},
  {"atan(x)", function(e) return math.atan(e.x) end},
  {"sinh(x)", function(e) return (math.exp(e.x) - math.exp(-e.x)) / 2 end},
  {"cosh(x)", function(e) return (math.exp(e.x) + math.exp(-e.x)) / 2 end},
  {"tanh(x)", function(e) return tanh(e.x) end},
  {"erf(x)", function(e) return erf(e.x) end, {rtol = 0, atol = 3e-7}},
  {"erfc(x)", function(e) return 1 - erf(e.x) end, {rtol = 0, atol = 3e-7}},
  {"sigmoid(x)", function(e) return 1 / (1 + math.exp(-e.x)) end},
  {"abs(x)", function(e) return math.abs(e.x) end},
  {"fabs(x)", function(e) return math.abs(e.x) end},
  {"floor(x * 10)", function(e) return math.floor(e.x * 10) end},
  {"ceil(x * 10)", function(e) return math.ceil(e.x * 10) end},
  {"round(x * 10)", function(e) return round(e.x * 10) end},
  {"trunc(x * 10)", function(e) return trunc(e.x * 10) end},
  {"sign(x)", function(e) return sign(e.x) end},
  {"relu(x)", function(e) return math.max(e.x, 0) end},
  {"min(x, y)", function(e) return math.min(e.x, e.y) end},
  {"max(x, y)", function(e) return math.max(e.x, e.y) end},
  {"fmin(x, y) + fmax(x, y)", function(e) return e.x + e.y end},
  {"pow(x + 2, y)", function(e) return (e.x + 2) ^ e.y end},
  {"clamp(x, -0.25, 0.5)", function(e) return math.min(math.max(e.x, -0.25), 0.5) end},
  {"atan2(x, y)", function(e) return math.atan(e.x, e.y) end},
  {"hypot(x, y)", function(e) return math.sqrt(e.x * e.x + e.y * e.y) end},
  {"fma(x, y, 0.25)", function(e) return e.x * e.y + 0.25 end},
  {"fmod(x, 0.3)", function(e) return math.fmod(e.x, 0.3) end},
  {"x * pi", function(e) return e.x * math.pi end},
  {"1.5e-1 * x + .5", function(e) return 0.15 * e.x + 0.5 end},
  {"x - -y", function(e) return e.x + e.y end},
  {"2 * x * x - 3 * x + 1", function(e) return 2 * e.x * e.x - 3 * e.x + 1 end},
}

describe("ck.map on the host", function()
  -- host-only cases: arrays made without a device go to the host here, also on a machine with a GPU
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  for _, dt in ipairs {"f64", "f32"} do
    it("computes every operator and function (" .. dt .. ") like plain Lua", function()
      local x, y = H.rand({7, 5}, dt), H.rand({7, 5}, dt):add(1.5) -- y in [0.5, 2.5): no division by ~0
      for _, c in ipairs(FLOAT_CASES) do
        local got = ck.map(c[1], {x = x, y = y})
        assert.equals(dt, got:dtype(), c[1])
        H.assert_close(got, lua_map(c[2], {x = x, y = y}), c[3] or TOLS[dt], c[1])
      end
    end)
  end

  it("follows i32 semantics: wrapping, truncating division, x / 0 = 0, exact integer pow", function()
    local i = ck.array({-7, 7, 9, -9, 0, 2147483647, -2147483648, 19}, {dtype = "i32"})
    local j = ck.array({2, -2, 0, 4, 3, 1, -1, 3}, {dtype = "i32"})
    local function wrap(v) v = v % 4294967296; if v >= 2147483648 then v = v - 4294967296 end; return v end
    local cases = {
      {"i + j", function(e) return wrap(e.i + e.j) end},
      {"i - j", function(e) return wrap(e.i - e.j) end},
      {"i * j", function(e) return wrap(e.i * e.j) end},
      {"i / j", function(e) if e.j == 0 then return 0 elseif e.j == -1 then return wrap(-e.i) end return trunc(e.i / e.j) end},
      {"i % j", function(e) if e.j == 0 or e.j == -1 then return 0 end return math.fmod(e.i, e.j) end},
      {"-i", function(e) return wrap(-e.i) end},
      {"abs(i)", function(e) return wrap(math.abs(e.i)) end},
      {"i < j", function(e) return e.i < e.j and 1 or 0 end},
      {"min(i, j) + max(i, j)", function(e) return wrap(e.i + e.j) end},
      {"sign(i) * relu(j)", function(e) return sign(e.i) * math.max(e.j, 0) end},
      {"pow(j, 3)", function(e) return i32(e.j ^ 3) end},
      {"clamp(i, -8, 8)", function(e) return math.min(math.max(e.i, -8), 8) end},
      {"floor(i) + ceil(j)", function(e) return wrap(e.i + e.j) end},
      {"i > 0 ? i : j", function(e) return e.i > 0 and e.i or e.j end},
      {"i32(f64(i) * 0.5)", function(e) return trunc(e.i * 0.5) end},
    }
    for _, c in ipairs(cases) do
      local got = ck.map(c[1], {i = i, j = j})
      assert.equals("i32", got:dtype(), c[1])
      H.assert_equal(got, lua_map(c[2], {i = i, j = j}):to("i32"), c[1])
    end
  end)

  it("promotes like the library: f32+f64 -> f64, i32 with a float -> that float, numbers are weak", function()
    local a32, a64 = H.rand({4}, "f32"), H.rand({4}, "f64")
    local i = ck.array({1, 2, 3, 4}, {dtype = "i32"})
    local cases = {
      {"a + b", {a = a32, b = a64}, "f64"},
      {"a + i", {a = a32, i = i}, "f32"},
      {"b * i", {b = a64, i = i}, "f64"},
      {"a * 0.1", {a = a32}, "f32"},              -- a literal never widens
      {"a * s", {a = a32, s = 0.1}, "f32"},       -- nor does a number
      {"i * 2", {i = i}, "i32"},
      {"i * s", {i = i, s = 2.0}, "i32"},         -- an integral number keeps i32
      {"i * 0.5", {i = i}, "f64"},                -- a non-integral one gives f64, as the ops do
      {"i * s", {i = i, s = 0.5}, "f64"},
      {"i / 2", {i = i}, "i32"},
      {"f64(i) / 2", {i = i}, "f64"},
      {"f32(b)", {b = a64}, "f32"},
      {"i32(a * 100)", {a = a32}, "i32"},
      {"s", {s = 3}, "i32"},                      -- only numbers: a 0-d array, i32 when i32 holds it
      {"s * 2", {s = 3}, "i64"},                  -- computed from numbers: i64 (docs/map.md: any i64 value)
      {"s * 0.5", {s = 3}, "f32"},
      {"sqrt(2) * a", {a = a32}, "f32"},
      {"i < 2.5", {i = i}, "f64"},                -- (as i:lt(2.5))
    }
    for _, c in ipairs(cases) do
      local got = ck.map(c[1], c[2])
      assert.equals(c[3], got:dtype(), c[1])
    end
    H.assert_close(ck.map("i * 0.5", {i = i}), ck.array({0.5, 1, 1.5, 2}), H.tol("f32"))
    assert.same({}, ck.map("s * 2", {s = 3}):shape())
    assert.equals(6, ck.map("s * 2", {s = 3}):item())
    -- opts.dtype converts the result
    assert.equals("f64", ck.map("a * 2", {a = a32}, {dtype = "f64"}):dtype())
  end)

  it("refuses what the types cannot take, and says so", function()
    local i = ck.array({1, 2}, {dtype = "i32"})
    for _, e in ipairs {"sqrt(i)", "exp(i) + 1", "atan2(i, i)", "fma(i, i, i)", "sigmoid(i)"} do
      local ok, err = pcall(ck.map, e, {i = i})
      assert.is_false(ok, e)
      assert.matches("takes floats, not i32", err, 1, true)
      assert.matches("cast first", err, 1, true)
    end
    -- an out of another dtype is an error, never a conversion behind the user's back
    local ok, err = pcall(ck.map, "x * 2", {x = H.rand({3}, "f32")}, {out = ck.zeros(3, {dtype = "f64"})})
    assert.is_false(ok)
    assert.matches("out 'out' is f64 but the result is f32", err, 1, true)
  end)

  it("names the position of a syntax error with a caret line", function()
    local cases = {
      {"a * (x + ", 10, "expected a number"},
      {"a * (x + y", 11, "expected ')'"},
      {"a ** x", 4, "expected a number"},
      {"a ^ x", 3, "expected an operator"},
      {"x = = y", 5, "expected a number"},
      {"x == 1 = 2", 8, "'=' assigns to a name only"},
      {"foo(x)", 1, "unknown function 'foo'"},
      {"pow(x)", 1, "pow takes 2 arguments, got 1"},
      {"x ? 1", 6, "expected ':'"},
      {"", 1, "empty expression"},
      {"s = x; s = y", 8, "'s' is assigned twice"},
      {"x $ y", 3, "expected an operator"},
      {"_t = x * 2", 1, "no outputs"},
      {"exp = x", 1, "'exp' is a function"},
      {"pi = x", 1, "'pi' is a constant"},
      {"s = x; x = s", 8, "'x' is an input and cannot also be assigned"},
      {"x = x + 1", 1, "'x' is an input and cannot also be assigned"},
      {"a = x + 1", 1, "'a' is an input and cannot also be assigned"}, -- a is in the table, unread
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(ck.map, c[1], {a = 1, x = H.rand({3}), y = H.rand({3})})
      assert.is_false(ok, c[1])
      assert.matches(c[3], err, 1, true)
      assert.matches("at position " .. c[2] .. " of", err, 1, true)
      -- the caret sits under that position
      local line, caret = err:match("\n  ([^\n]*)\n  ( *)%^")
      assert.is_not_nil(caret, c[1] .. ": " .. err)
      assert.equals(c[2] - 1, #caret, c[1])
    end
  end)

  it("lists the inputs when a name is unknown", function()
    local ok, err = pcall(ck.map, "a * x + z", {a = 2, x = H.rand({3}), y = H.rand({3})})
    assert.is_false(ok)
    assert.matches("unknown name 'z'", err, 1, true)
    assert.matches("inputs: a, x, y", err, 1, true)
    assert.matches("position 9", err, 1, true)
    ok, err = pcall(ck.map, "x", {x = "text"})
    assert.is_false(ok)
    assert.matches("input 'x' must be an array or a number, got string", err, 1, true)
    ok, err = pcall(ck.map, "x", {x = H.rand({2})}, {outt = 1})
    assert.is_false(ok)
    assert.matches('unknown option "outt"', err, 1, true)
  end)

  it("broadcasts, and takes strided views (transposed, narrowed, expanded, selected)", function()
    local base = H.rand({6, 8}, "f64")
    local views = {
      {base, "contiguous"},
      {base:t(), "transposed"},
      {base:narrow(2, 2, 6), "narrowed"},
      {base:slice{{1, 5}, {2, 7}}, "slice"},
      {H.rand({1, 8}, "f64"):expand(6, 8), "expanded"},
      {H.rand({3, 6, 8}, "f64"):select(1, 2), "selected"},
    }
    for _, v in ipairs(views) do
      local x = v[1]
      local s = x:shape()
      local row = H.rand({s[2]}, "f64")
      local col = H.rand({s[1], 1}, "f64")
      local got = ck.map("x * r + c - 2", {x = x, r = row, c = col})
      H.assert_close(got, lua_map(function(e) return e.x * e.r + e.c - 2 end, {x = x, r = row, c = col}), H.tol("f64"), v[2])
    end
    -- [3,1] with [4] -> [3,4]; 0-d arrays broadcast like numbers
    local a, b, z = H.rand({3, 1}, "f32"), H.rand({4}, "f32"), ck.array(0.5)
    local got = ck.map("a + b * z", {a = a, b = b, z = z})
    assert.same({3, 4}, got:shape())
    H.assert_close(got, lua_map(function(e) return e.a + e.b * e.z end, {a = a, b = b, z = z}), TOLS.f32)
    local ok, err = pcall(ck.map, "a + b", {a = H.rand({3}), b = H.rand({4})})
    assert.is_false(ok)
    assert.matches("does not broadcast", err, 1, true)
    -- empty arrays give empty results
    assert.same({0, 3}, ck.map("x + 1", {x = ck.zeros(0, 3)}):shape())
  end)

  it("follows a transposed operand's layout, like the built-in elementwise ops", function()
    local x = H.rand({5, 7}, "f32"):t()
    local r = ck.map("x * 2", {x = x})
    assert.same({5, 7}, x:t():shape())
    assert.same(x:strides(), r:strides())
  end)

  it("returns several outputs, temporaries stay private, later statements see earlier results", function()
    local a, b = H.rand({4, 3}, "f64"), H.rand({4, 3}, "f64")
    local s, d, p = ck.map("s = a + b; d = a - b; _t = s * d; p = _t + 1", {a = a, b = b})
    H.assert_close(s, lua_map(function(e) return e.a + e.b end, {a = a, b = b}), H.tol("f64"))
    H.assert_close(d, lua_map(function(e) return e.a - e.b end, {a = a, b = b}), H.tol("f64"))
    H.assert_close(p, lua_map(function(e) return (e.a + e.b) * (e.a - e.b) + 1 end, {a = a, b = b}), H.tol("f64"))
    -- outputs of different dtypes
    local f, i = ck.map("f = a * 2; i = i32(a * 100)", {a = a})
    assert.equals("f64", f:dtype()); assert.equals("i32", i:dtype())
  end)

  it("writes into given outputs (in place too) and returns them", function()
    local x, y = H.rand({5, 4}, "f32"), H.rand({5, 4}, "f32")
    local ref = lua_map(function(e) return 2 * e.x + e.y end, {x = x, y = y})
    local out = H.poison(ck.empty(5, 4))
    local r = ck.map("a * x + y", {a = 2, x = x, y = y}, {out = out})
    assert.equals(out, r)
    H.assert_close(out, ref, TOLS.f32)
    -- in place: y = a * x + y
    local y2 = y:clone()
    ck.map("a * x + y", {a = 2, x = x, y = y2}, {out = y2})
    H.assert_close(y2, ref, TOLS.f32)
    -- a strided out
    local big = H.poison(ck.empty(4, 5))
    ck.map("a * x + y", {a = 2, x = x, y = y}, {out = big:t()})
    H.assert_close(big:t(), ref, TOLS.f32)
    -- named outs; an overlapping (shifted) input is read before it is overwritten
    local s, d = ck.zeros(5, 4), ck.zeros(5, 4)
    local rs, rd = ck.map("s = x + y; d = x - y", {x = x, y = y}, {out = {d = d, s = s}})
    assert.equals(s, rs); assert.equals(d, rd)
    H.assert_close(d, lua_map(function(e) return e.x - e.y end, {x = x, y = y}), TOLS.f32)
    local v = H.rand({10}, "f64")
    local vref = lua_map(function(e) return e.a * 10 end, {a = v:narrow(1, 1, 9)})
    ck.map("a * 10", {a = v:narrow(1, 1, 9)}, {out = v:narrow(1, 2, 10)})
    H.assert_close(v:narrow(1, 2, 10), vref, H.tol("f64"))
    local ok, err = pcall(ck.map, "x + 1", {x = x}, {out = ck.zeros(4, 5)})
    assert.is_false(ok); assert.matches("is [4x5], the result is [5x4]", err, 1, true)
    ok, err = pcall(ck.map, "x + 1", {x = x}, {out = ck.zeros(1, 4):expand(5, 4)})
    assert.is_false(ok)
  end)

  it("keeps numbers as parameters: changing one gives new values from the same parse", function()
    local x = H.rand({3}, "f64")
    for _, a in ipairs {1.5, -2.25, 7} do
      H.assert_close(ck.map("a * x", {a = a, x = x}), lua_map(function(e) return a * e.x end, {x = x}), H.tol("f64"))
    end
  end)
end)

-- ---------------------------------------------------------------- reduce_map

local function lua_reduce(vals, shape, dim, fmap, fred, ident, fpost, keepdim)
  -- vals: flat row-major list of the mapped values; returns flat list and out shape
  local nd = #shape
  local outer, len, inner = 1, 1, 1
  if dim == nil then len = numel(shape) else
    for d = 1, nd do
      if d < dim then outer = outer * shape[d] elseif d == dim then len = shape[d] else inner = inner * shape[d] end
    end
  end
  local out = {}
  for o = 0, outer - 1 do
    for i = 0, inner - 1 do
      local acc = ident
      for r = 0, len - 1 do acc = fred(acc, fmap(vals[(o * len + r) * inner + i + 1])) end
      out[#out + 1] = fpost and fpost(acc, len) or acc
    end
  end
  local oshape = {}
  for d = 1, nd do
    if dim == nil then if keepdim then oshape[#oshape + 1] = 1 end
    elseif d == dim then if keepdim then oshape[#oshape + 1] = 1 end
    else oshape[#oshape + 1] = shape[d] end
  end
  return out, oshape
end

local function as_array(flat, shape)
  local a = ck.array(flat, {dtype = "f64"})
  if #shape == 0 then return a:reshape({}) end
  return a:reshape(shape)
end

describe("ck.reduce_map on the host", function()
  -- host-only cases: arrays made without a device go to the host here, also on a machine with a GPU
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  local NORM = {map = "x * x", reduce = "a + b", identity = 0, post = "sqrt(r)"}

  it("reduces along any dim or everything, with map and post", function()
    for _, dt in ipairs {"f64", "f32"} do
      for _, shape in ipairs {{7}, {5, 9}, {3, 4, 6}, {1, 1000}, {300, 1}} do
        local x = H.rand(shape, dt)
        local flat = x:to("f64"):flat()
        for dim = 0, #shape do
          local d = dim > 0 and dim or nil
          local got = ck.reduce_map(NORM, {x = x}, {dim = d})
          local ref, oshape = lua_reduce(flat, shape, d, function(v) return v * v end, function(a, b) return a + b end, 0,
            function(r) return math.sqrt(r) end)
          local tol = dt == "f32" and {rtol = 1e-5, atol = 1e-6} or {rtol = 1e-12, atol = 1e-13}
          H.assert_close(got, as_array(ref, oshape), tol, ("norm %s %s dim %s"):format(dt, table.concat(shape, "x"), tostring(d)))
          assert.equals(dt, got:dtype())
        end
      end
    end
  end)

  it("max, mean, a dot product of strided operands, keepdim, negative dims", function()
    local m = H.rand({6, 11}, "f64")
    local flat = m:flat()
    local got = ck.reduce_map({map = "x", reduce = "max(a, b)", identity = -math.huge}, {x = m}, {dim = 2})
    H.assert_close(got, as_array((lua_reduce(flat, {6, 11}, 2, function(v) return v end, math.max, -math.huge)), {6}), H.tol("f64"))
    got = ck.reduce_map({map = "x", reduce = "a + b", identity = 0, post = "r / n"}, {x = m}, {dim = -2, keepdim = true})
    assert.same({1, 11}, got:shape())
    H.assert_close(got, ck.mean(m, 1, {keepdim = true}), H.tol("f64"))
    local a, b = H.rand({20, 30}, "f64"), H.rand({30, 20}, "f64"):t()
    local dot = ck.reduce_map({map = "a * b", reduce = "a + b", identity = 0}, {a = a, b = b})
    local ref = 0
    local fa, fb = a:flat(), b:contiguous():flat()
    for i = 1, #fa do ref = ref + fa[i] * fb[i] end
    H.assert_close(dot, ck.array(ref, {dtype = "f64"}), H.tol("f64"))
  end)

  it("log-sum-exp in two passes: a broadcast max, then exp and log", function()
    local x = H.rand({4, 50}, "f64"):mul(30)
    local mx = ck.reduce_map({map = "x", reduce = "max(a, b)", identity = -math.huge}, {x = x}, {dim = 2, keepdim = true})
    local lse = ck.reduce_map({map = "exp(x - m)", reduce = "a + b", identity = 0, post = "log(r)"}, {x = x, m = mx}, {dim = 2})
    lse = lse + mx:reshape(4)
    local rows = x:totable()
    for i = 1, 4 do
      local m = -math.huge
      for _, v in ipairs(rows[i]) do m = math.max(m, v) end
      local s = 0
      for _, v in ipairs(rows[i]) do s = s + math.exp(v - m) end
      assert.near(m + math.log(s), lse:totable()[i], 1e-10)
    end
  end)

  it("integer maps accumulate in i64 (as ck.sum), a reusable reducer, empty reductions give post(identity)", function()
    local i = ck.array({{1, 2, 3}, {4, 5, 6}}, {dtype = "i32"})
    local sumsq = ck.reduce_map{map = "i * i", reduce = "a + b", identity = 0}
    local r = sumsq({i = i}, {dim = 2})
    assert.equals("i64", r:dtype())
    assert.equals(ck.sum(i:mul(i), 2):dtype(), r:dtype())
    assert.same({14, 77}, r:totable())
    assert.equals(91, sumsq({i = i}):item())
    local e = ck.reduce_map({map = "x", reduce = "a + b", identity = 0, post = "r + n"}, {x = ck.zeros(3, 0)}, {dim = 2})
    assert.same({0, 0, 0}, e:totable())
    local out = ck.zeros(2, {dtype = "i64"})
    assert.equals(out, sumsq({i = i}, {dim = 2, out = out}))
    assert.same({14, 77}, out:totable())
  end)

  it("checks its spec", function()
    local x = H.rand({3})
    local cases = {
      {{map = "x", reduce = "a + c", identity = 0}, "unknown name 'c' (this expression can use: a, b)"},
      {{map = "x", reduce = "a", identity = 0}, "must use both a and b"},
      {{map = "x", reduce = "a + b"}, "identity must be a number"},
      {{map = "x +", reduce = "a + b", identity = 0}, "position 4"},
      {{map = "x", reduce = "a + b", identity = 0, post = "q"}, "unknown name 'q' (this expression can use: r, n)"},
      {{map = "s = x; t = x", reduce = "a + b", identity = 0}, "exactly one result"},
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(ck.reduce_map, c[1], {x = x})
      assert.is_false(ok)
      assert.matches(c[2], err, 1, true)
    end
    local ok, err = pcall(ck.reduce_map, {map = "x", reduce = "a + b", identity = 0}, {x = x}, {dim = 3})
    assert.is_false(ok); assert.matches("out of range", err, 1, true)
  end)
end)

-- ---------------------------------------------------------------- code generation (NVRTC, no GPU needed)

describe("generated CUDA", function()
  -- host-only cases: arrays made without a device go to the host here, also on a machine with a GPU
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  local dir = os.tmpname()
  os.remove(dir)
  setup(function() ck.cache_dir(dir) end)
  teardown(function() ck.cache_dir(false); os.execute("rm -rf '" .. dir .. "'") end)

  it("compiles for every layout and dtype (sm_90, here without a GPU)", function()
    local x = H.rand({5, 8}, "f32")
    local cases = {
      {"a * x + y", {a = 2.5, x = x, y = H.rand({5, 8}, "f32")}, "vec4"},
      {"a * x + y", {a = 2.5, x = x:narrow(2, 2, 7), y = 1}, "strided"},
      {"a * x + y", {a = 2.5, x = x, y = H.rand({8}, "f32")}, "strided"},
      {"s = x > 0.5 ? x : -x; d = i32(x * 100) % 7", {x = x:t()}, "vec4"},
      {"f64(x) / 3 + i", {x = x, i = ck.array({1, 2, 3, 4, 5, 6, 7, 8}, {dtype = "i32"})}, "strided"},
      {"where(x > y && !(x < 0.1) || x == 1, pow(x, 2), clamp(y, 0.2, 0.4)) + fma(x, y, 1) + atan2(x, y) + inf * 0 + nan",
        {x = x, y = x:contiguous()}, "vec4"},
      {"x + s", {x = x, s = ck.array(2)}, "vec4"},
    }
    for _, f in ipairs(FLOAT_CASES) do cases[#cases + 1] = {f[1], {x = x, y = x}, "vec4"} end
    for _, c in ipairs(cases) do
      local src, info = ck.map_source(c[1], c[2])
      assert.equals(c[3], info.layout, c[1])
      assert.matches("extern \"C\" __global__", src, 1, true)
      local ok, r = pcall(ck.kernel_build, src, info.entry, {arch = "sm_90"})
      assert(ok, c[1] .. ": " .. tostring(r))
      assert.is_true(r.cubin_bytes > 0)
    end
    local m = H.rand({33, 100}, "f64")
    local rcases = {
      {{map = "x * x", reduce = "a + b", identity = 0, post = "sqrt(r)"}, {x = m}, {dim = 2}, "rows_warp"},
      {{map = "x * x", reduce = "a + b", identity = 0, post = "sqrt(r)"}, {x = H.rand({4, 5000})}, {dim = 2}, "rows"},
      {{map = "x", reduce = "max(a, b)", identity = -math.huge}, {x = H.rand({100000})}, {}, "all"},
      {{map = "i32(x * 10)", reduce = "a + b", identity = 0, post = "f32(r) / n"}, {x = m:t()}, {dim = 1}, nil},
      {{map = "x * y", reduce = "a + b", identity = 0}, {x = m, y = 2}, {dim = 1, keepdim = true}, nil},
    }
    for _, c in ipairs(rcases) do
      local src, info = ck.map_source(c[1], c[2], c[3])
      if c[4] then assert.equals(c[4], info.layout) end
      local ok, r = pcall(ck.kernel_build, src, info.entry, {arch = "sm_90"})
      assert(ok, c[1].map .. ": " .. tostring(r))
    end
  end)
end)

-- ---------------------------------------------------------------- the GPU against the host

describe("ck.map on the GPU", function()
  it("matches the host evaluator for every operator, function and layout", H.gpu(function()
    for _, dt in ipairs {"f32", "f64"} do
      local xh, yh = H.rand({37, 129}, dt), H.rand({37, 129}, dt):add(1.5)
      local x, y = xh:cuda(), yh:cuda()
      for _, c in ipairs(FLOAT_CASES) do
        local tol = dt == "f32" and {rtol = 1e-5, atol = 1e-6} or {rtol = 1e-13, atol = 1e-14}
        H.assert_close(ck.map(c[1], {x = x, y = y}), ck.map(c[1], {x = xh, y = yh}), tol, dt .. " " .. c[1])
        -- strided: a transposed operand and a broadcast row
        H.assert_close(ck.map(c[1], {x = x:t(), y = y:slice{{1, 1}, {1, 37}}}),
          ck.map(c[1], {x = xh:t(), y = yh:slice{{1, 1}, {1, 37}}}), tol, dt .. " strided " .. c[1])
      end
    end
  end))

  it("runs the vectorised, contiguous and strided layouts on awkward sizes", H.gpu(function()
    for _, n in ipairs {1, 3, 4, 5, 1023, 1 << 20 + 3} do
      local xh, yh = H.rand({n}, "f32"), H.rand({n}, "f32")
      local x, y = xh:cuda(), yh:cuda()
      local ref = ck.map("a * x + y", {a = 2.5, x = xh, y = yh})
      local info = ck.map_info("a * x + y", {a = 2.5, x = x, y = y})
      assert.equals("vec4", info.layout)
      H.assert_close(ck.map("a * x + y", {a = 2.5, x = x, y = y}), ref, H.tol("f32"), "vec4 n=" .. n)
      if n > 1 then
        -- misaligned by one element: the scalar contiguous layout
        local x1 = H.rand({n + 1}, "f32"):cuda()
        local xs = x1:narrow(1, 2, n + 1)
        local r1 = ck.map("a * x + y", {a = 2.5, x = xs, y = y})
        assert.equals("contiguous", ck.map_info("a * x + y", {a = 2.5, x = xs, y = y}).layout)
        H.assert_close(r1, ck.map("a * x + y", {a = 2.5, x = xs:host(), y = yh}), H.tol("f32"))
      end
    end
    local m = H.rand({64, 33, 5}, "f64")
    local g = ck.map("x * 2 + y", {x = m:cuda():permute(3, 1, 2), y = H.rand({64, 1}, "f64"):cuda()})
    assert.is_true(g:numel() > 0)
  end))

  it("keeps i32 semantics and multi-output results identical to the host", H.gpu(function()
    local ih = (H.rand({1000}, "f64") * 2e9):to("i32")
    local jh = H.rand({1000}, "i32")
    for _, e in ipairs {"i + j", "i - j", "i * j", "i / j", "i % j", "-i", "abs(i)", "pow(j, 3)", "i < j", "i * 0.5",
                        "s = i + j; d = i32(f64(i) * 0.25); m = max(i, j)"} do
      local gh = {ck.map(e, {i = ih, j = jh})}
      local gd = {ck.map(e, {i = ih:cuda(), j = jh:cuda()})}
      for k = 1, #gh do H.assert_equal(gd[k]:host(), gh[k], e) end
    end
  end))

  it("writes into given outputs, compiles each kernel once, and describes it", H.gpu(function()
    local x, y = H.rand({4096}, "f32"):cuda(), H.rand({4096}, "f32"):cuda()
    local n0 = ck.map_cache_size()
    ck.map("q * x + y * 3", {q = 1.5, x = x, y = y})
    local n1 = ck.map_cache_size()
    ck.map("q * x + y * 3", {q = -4.25, x = x, y = y}) -- another number: same kernel
    assert.equals(n1, ck.map_cache_size())
    assert.is_true(n1 >= n0)
    local out = ck.empty(4096, {device = "cuda"})
    assert.equals(out, ck.map("q * x + y * 3", {q = 2, x = x, y = y}, {out = out}))
    local info = ck.map_info("q * x + y * 3", {q = 2, x = x, y = y})
    assert.equals("cuda", info.device)
    assert.is_true(info.kernel.registers > 0)
    assert.is_true(info.kernel.occupancy > 0 and info.kernel.occupancy <= 1)
    assert.matches("%.entry", info.kernel.ptx)
    assert.matches("ck_body", info.source, 1, true)
  end))
end)

describe("ck.reduce_map on the GPU", function()
  it("matches the host for rows, cols and whole-array layouts", H.gpu(function()
    local specs = {
      {map = "x * x", reduce = "a + b", identity = 0, post = "sqrt(r)"},
      {map = "x", reduce = "max(a, b)", identity = -math.huge},
      {map = "abs(x - m)", reduce = "a + b", identity = 0, post = "r / n"},
    }
    for _, dt in ipairs {"f32", "f64"} do
      for _, shape in ipairs {{1}, {5, 7}, {3, 3000}, {2000, 3}, {33, 65, 17}, {300000}} do
        local xh = H.rand(shape, dt)
        local x = xh:cuda()
        for dim = 0, #shape do
          for _, sp in ipairs(specs) do
            local d = dim > 0 and dim or nil
            local got = ck.reduce_map(sp, {x = x, m = 0.25}, {dim = d})
            local ref = ck.reduce_map(sp, {x = xh, m = 0.25}, {dim = d})
            local n = d and shape[d] or xh:numel()
            local tol = dt == "f32" and {rtol = 2e-6 * math.log(n + 1, 2) + 1e-5, atol = 1e-5}
                        or {rtol = 1e-12, atol = 1e-12}
            H.assert_close(got, ref, tol, ("%s %s dim %s %s"):format(dt, table.concat(shape, "x"), tostring(d), sp.map))
          end
        end
        -- a transposed view
        if #shape == 2 then
          H.assert_close(ck.reduce_map(specs[1], {x = x:t()}, {dim = 2}), ck.reduce_map(specs[1], {x = xh:t()}, {dim = 2}),
            {rtol = 1e-4, atol = 1e-5})
        end
      end
    end
    local ih = H.rand({1000, 7}, "i32")
    local sumsq = ck.reduce_map{map = "i * i", reduce = "a + b", identity = 0}
    H.assert_equal(sumsq({i = ih:cuda()}, {dim = 1}):host(), sumsq({i = ih}, {dim = 1}))
    H.assert_equal(sumsq({i = ih:cuda()}):host(), sumsq({i = ih}))
  end))
end)

-- ---------------------------------------------------------------- the generated kernels, run on the CPU

describe("generated kernels under a CPU emulation of CUDA (g++)", function()
  -- host-only cases: arrays made without a device go to the host here, also on a machine with a GPU
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  local E = require "spec.cuda_emu"
  local function emu_ok(fn)
    return function()
      if not E.available() then return pending("g++ with C++20 <barrier> not found") end
      return fn()
    end
  end

  local function check_map(expr, inputs, layout, opts)
    opts = opts or {}
    local refs = {ck.map(expr, inputs, {dtype = opts.dtype})}
    local outs, names = {}, {}
    local oarg = {}
    for i, r in ipairs(refs) do
      local o = ck.empty(r:shape(), {dtype = r:dtype()})
      outs[i] = o
    end
    -- output names in order: from the expression's statements
    local src0, info0 = ck.map_source(expr, inputs, {dtype = opts.dtype})
    for _, p in ipairs(info0.params) do if p.kind == "output" then names[#names + 1] = p.value end end
    for i, n in ipairs(names) do oarg[n] = outs[i] end
    local src, info = ck.map_source(expr, inputs, {dtype = opts.dtype, out = #names == 1 and outs[1] or oarg})
    assert.equals(layout, info.layout, expr)
    local arrays = {}
    for k, v in pairs(inputs) do if ck.is_array(v) then arrays[k] = v end end
    local got = E.run(src, info, arrays, oarg)
    for i, n in ipairs(names) do
      local ref = refs[i]:to("f64"):flat()
      local g = got[n]
      assert.equals(#ref, #g)
      for j = 1, #ref do
        local ok = (ref[j] ~= ref[j] and g[j] ~= g[j]) or math.abs(ref[j] - g[j]) <= 1e-6 * math.abs(ref[j]) + 1e-7
        assert(ok, ("%s [%s] %s element %d: emulated %.9g, host %.9g"):format(expr, layout, n, j, g[j], ref[j]))
      end
    end
  end

  it("runs ck.map's vec4, contiguous and strided kernels like the host evaluator", emu_ok(function()
    local x = H.rand({10}, "f32")
    check_map("a * x + y", {a = 2.5, x = x, y = H.rand({10}, "f32")}, "vec4")
    local base = H.rand({11}, "f32")
    check_map("a * x + y", {a = 2.5, x = base:narrow(1, 2, 11), y = H.rand({10}, "f32")}, "contiguous")
    local m = H.rand({7, 5}, "f64")
    check_map("s = x * r + c; d = x > 0 ? sqrt(abs(x)) : exp(c)", {x = m:t(), r = H.rand({7}, "f64"), c = H.rand({5, 1}, "f64")},
      "strided")
    check_map("s = i + j; q = i / j; f = i * 0.5", {i = H.rand({13}, "i32"), j = H.rand({13}, "i32")}, "vec4")
    check_map("x * z + 1", {x = H.rand({3, 4, 5}, "f64"), z = ck.array(0.25, {dtype = "f64"})}, "vec4")
    check_map("x + y", {x = H.rand({4, 6}, "f32"):narrow(2, 2, 5), y = H.rand({4, 1}, "f32")}, "strided")
    check_map("x * 2", {x = H.rand({2, 3, 4}, "f32"):permute(3, 1, 2)}, "strided") -- into a row-major out
  end))

  local function check_reduce(spec, inputs, opts, layout)
    local ref = ck.reduce_map(spec, inputs, opts)
    local out = ck.empty(ref:shape(), {dtype = ref:dtype()})
    local o = {}
    for k, v in pairs(opts) do o[k] = v end
    local src, info = ck.map_source(spec, inputs, o)
    assert.equals(layout, info.layout, spec.map)
    local arrays = {}
    for k, v in pairs(inputs) do if ck.is_array(v) then arrays[k] = v end end
    local got = E.run(src, info, arrays, {out = out}).out
    local r = ref:to("f64"):flat()
    assert.equals(#r, #got)
    for j = 1, #r do
      assert(math.abs(r[j] - got[j]) <= 1e-5 * math.abs(r[j]) + 1e-6,
        ("%s [%s] element %d: emulated %.9g, host %.9g"):format(spec.map, layout, j, got[j], r[j]))
    end
  end

  it("runs reduce_map's rows, cols and whole-array kernels like the host evaluator", emu_ok(function()
    local norm = {map = "x * x", reduce = "a + b", identity = 0, post = "sqrt(r)"}
    check_reduce(norm, {x = H.rand({33, 100}, "f32")}, {dim = 2}, "rows_warp")
    check_reduce(norm, {x = H.rand({3, 3000}, "f64")}, {dim = 2}, "rows")
    check_reduce({map = "x", reduce = "max(a, b)", identity = -math.huge}, {x = H.rand({3, 9000}, "f32")}, {dim = 1}, "cols")
    check_reduce({map = "x * s", reduce = "a + b", identity = 0, post = "r / n"}, {x = H.rand({20000}, "f64"), s = 3},
      {}, "all")
    check_reduce({map = "i * i", reduce = "a + b", identity = 0}, {i = H.rand({5, 7, 9}, "i32"):transpose(1, 3)}, {dim = 2}, "rows_warp")
  end))
end)
