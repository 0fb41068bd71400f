-- The storage dtypes of issue 32 (step 1): bool u8 i8 i16 u32 i64 — creation, casts between all 11 dtypes
-- against a plain-Lua oracle, tables, item/totable, printing, files. Host arrays. Their arithmetic, comparisons,
-- logic, bit operations and reductions (step 2): spec/dtypes_ops_spec.lua.
local H = require "spec.helpers"
local ck = H.ck

local NEW = {"bool", "u8", "i8", "i16", "u32", "i64"}
local ALL = {"f32", "f64", "i32", "f16", "bf16", "bool", "u8", "i8", "i16", "u32", "i64"}
-- integer dtypes: {bits, signed, min, max}
local INT = {u8 = {8, false}, i8 = {8, true}, i16 = {16, true}, u32 = {32, false}, i32 = {32, true}, i64 = {64, true}}
for _, r in pairs(INT) do
  if r[1] == 64 then r[3], r[4] = math.mininteger, math.maxinteger
  elseif r[2] then r[3], r[4] = -(1 << (r[1] - 1)), (1 << (r[1] - 1)) - 1
  else r[3], r[4] = 0, (1 << r[1]) - 1 end
end
local FLOAT = {f32 = true, f64 = true, f16 = true, bf16 = true}

-- int -> int: modulo 2^bits (two's complement)
local wrap = H.wrap_int

-- The value a cast of Lua value v (a boolean, an integer or a float: the source's value) gives in dtype dt.
local function oracle(dt, v)
  if type(v) == "boolean" then v = v and 1 or 0 end
  if dt == "bool" then return v ~= 0 end
  if INT[dt] then
    if math.type(v) == "integer" then return wrap(dt, v) end
    local lo, hi = INT[dt][3], INT[dt][4]
    local t = v >= 0 and math.floor(v) or math.ceil(v) -- (NaN: neither branch matters, range check fails)
    if v ~= v or not (v > lo - 1.0 and v < hi + 1.0) or (dt == "i64" and v >= 2.0 ^ 63) then return lo end
    return math.tointeger(t)
  end
  if dt == "f64" then return v + 0.0 end
  if dt == "f32" then return (string.unpack("f", string.pack("f", v + 0.0))) end
  -- f16/bf16: as the (separately tested) f64 -> f16/bf16 rounding
  return ck.array({v + 0.0}, {dtype = "f64"}):to(dt):item()
end

local function same(a, b)
  if type(a) == "number" and type(b) == "number" then return a == b or (a ~= a and b ~= b) end
  return a == b and math.type(a) == math.type(b)
end

-- Edge values and fresh random ones (ck.randint), as Lua values.
local function ints()
  local v = {0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 65535, 2147483647, 2147483648,
    -2147483648, -2147483649, 4294967295, 4294967296, (1 << 53) + 1, -((1 << 53) + 1), math.maxinteger,
    -math.maxinteger, math.mininteger}
  local r = ck.randint(-2 ^ 31, 2 ^ 31 - 1, 24):totable()
  for i = 1, #r, 2 do v[#v + 1] = (r[i] << 32) | (r[i + 1] & 0xFFFFFFFF) end
  for i = 1, 12 do v[#v + 1] = r[i] end
  for i = 1, 6 do v[#v + 1] = r[i] % 300 - 150 end
  return v
end
local function floats()
  local v = {0.0, -0.0, 0.5, -0.5, 1.5, -2.7, 127.9, 128.0, -128.9, -129.0, 255.5, 256.0, -1.0, -0.9, 32767.5,
    -32768.9, 2.0 ^ 31, 2.0 ^ 32 - 1, 2.0 ^ 32, -2.0 ^ 31 - 1, 2.0 ^ 53 + 2, 2.0 ^ 63, -2.0 ^ 63, 1e30, -1e30,
    0 / 0, math.huge, -math.huge, 65504.0, 1e-8}
  for _, x in ipairs(ck.rand({16}, {dtype = "f64"}):totable()) do v[#v + 1] = (x - 0.5) * 600 end
  return v
end

describe("storage dtypes (issue 32)", function()
  it("are listed, parsed with their NumPy/MATLAB aliases, and keep the old ids", function()
    local alias = {bool = {"bool_", "logical"}, u8 = {"uint8"}, i8 = {"int8"}, i16 = {"int16"}, u32 = {"uint32"},
      i64 = {"int64", "long"}}
    local size = {bool = 1, u8 = 1, i8 = 1, i16 = 2, u32 = 4, i64 = 8}
    for _, dt in ipairs(NEW) do
      local a = ck.empty({3}, {dtype = dt})
      assert.equal(dt, a:dtype())
      assert.is_true(size[dt] > 0)
      for _, n in ipairs(alias[dt]) do assert.equal(dt, ck.zeros({2}, {dtype = n}):dtype(), n) end
    end
    assert.equal("f32", ck.zeros({1}):dtype())
  end)

  it("are made by every creation function", function()
    for _, dt in ipairs(NEW) do
      local one = dt == "bool" and true or 1
      local zero = 0
      if dt == "bool" then zero = false end
      assert.same({zero, zero}, ck.zeros({2}, {dtype = dt}):totable(), dt)
      assert.same({{one, one}}, ck.ones({1, 2}, {dtype = dt}):totable(), dt)
      assert.same({one, zero, zero, one}, ck.eye(2, {dtype = dt}):flat(), dt)
      assert.same({zero, one, dt == "bool" and true or 2}, ck.arange(3, {dtype = dt}):totable(), dt)
      assert.same({one, one, one}, ck.full({3}, dt == "bool" and true or 1, {dtype = dt}):totable(), dt)
      local r = ck.randint(0, 100, 5, 4, {dtype = dt})
      assert.equal(dt, r:dtype())
      for _, x in ipairs(r:flat()) do
        if dt == "bool" then assert.is_boolean(x) else assert.is_true(math.type(x) == "integer" and x >= 0 and x <= 100) end
      end
    end
    assert.same({-3, -1, 1}, ck.arange(-3, 3, 2, {dtype = "i8"}):totable())
    assert.equal("bool", ck.full({2}, true):dtype())
    -- exact past 2^53
    assert.equal(math.maxinteger, ck.full({2}, math.maxinteger, {dtype = "i64"}):flat()[2])
    assert.has_error(function() ck.arange(250, 260, {dtype = "u8"}) end, nil)
  end)

  it("cast between all 11 x 11 pairs as the plain-Lua oracle says (edges, NaN/inf, fresh random values)", function()
    local iv, fv = ints(), floats()
    for _, src in ipairs(ALL) do
      local a
      if src == "bool" then a = ck.array({true, false, true, true, false}, {dtype = "bool"})
      elseif FLOAT[src] then a = ck.array(fv, {dtype = src})
      else a = ck.array(iv, {dtype = src}) end
      local vals = a:flat() -- what the source holds (integers wrapped, floats rounded to the dtype)
      for _, dst in ipairs(ALL) do
        local got = a:to(dst):flat()
        assert.equal(#vals, #got)
        for i, v in ipairs(vals) do
          local want = oracle(dst, v)
          if not same(got[i], want) then
            error(("%s -> %s: %s gives %s, expected %s (seed %d)"):format(src, dst, tostring(v), tostring(got[i]),
              tostring(want), H.seed))
          end
        end
      end
    end
  end)

  it("keep i64 exact (tables, i64 -> i64, item) and move strided views on the host", function()
    local v = {math.maxinteger, math.mininteger, (1 << 53) + 1, -((1 << 53) + 1), 0}
    local a = ck.array(v, {dtype = "i64"})
    assert.same(v, a:totable())
    assert.same(v, a:clone():totable())
    assert.equal((1 << 53) + 1, a[3])
    assert.equal("integer", math.type(a[3]))
    assert.equal((1 << 53) + 1, a:narrow(1, 3, 3):item())
    local m = ck.array({{1, 2, 3}, {4, 5, 6}}, {dtype = "u8"})
    assert.same({{1, 4}, {2, 5}, {3, 6}}, m:t():contiguous():totable())
    m[{2, 2}] = 255
    assert.same({4, 255, 6}, m[2]:totable())
    local b = ck.array({{true, false}, {false, true}})
    assert.equal("bool", b:dtype())
    b[{1, 2}] = true
    assert.same({{true, true}, {false, true}}, b:totable())
    assert.is_true(b[{1, 1}])
    assert.equal("bool", ck.scalar(false):dtype())
    assert.equal(false, ck.scalar(false):item())
    assert.equal(4294967295, ck.array({4294967295}, {dtype = "u32"}):item())
    assert.equal(255, ck.array({-1}, {dtype = "u8"}):item()) -- Lua integers wrap as an i64 cast
    assert.equal(0, ck.array({-1.5}, {dtype = "u8"}):item()) -- floats: out of range -> the minimum
    assert.is_true(ck.array({0 / 0}, {dtype = "bool"}):item())
  end)

  it("refuse booleans in number arrays and numbers in inferred bool arrays", function()
    assert.has_error(function() ck.array({true, 1}) end)
    assert.has_error(function() ck.array({1, true}) end)
    assert.has_error(function() ck.array({true}, {dtype = "i32"}) end)
    assert.has_error(function() ck.zeros({2}):fill(true) end)
    assert.same({true, false}, ck.array({2, 0}, {dtype = "bool"}):totable())
  end)

  it("print as integers and true/false", function()
    assert.matches("true", tostring(ck.array({true, false})))
    assert.matches("false", tostring(ck.array({true, false})))
    assert.matches("9223372036854775807", tostring(ck.array({math.maxinteger}, {dtype = "i64"})))
    assert.matches("255", tostring(ck.array({255}, {dtype = "u8"})))
    assert.matches("u8", tostring(ck.array({255}, {dtype = "u8"})))
    assert.matches("-7", tostring(ck.scalar(-7, {dtype = "i16"})))
  end)

  it("compute (issue 32, step 2: spec/dtypes_ops_spec.lua; matmul: spec/matmul_int_spec.lua; ck.map: spec/map_dtypes_spec.lua), but rand still refuses them", function()
    for _, dt in ipairs(NEW) do
      local a = ck.ones({2, 2}, {dtype = dt})
      assert.equal(dt == "bool" and "i32" or dt, ck.matmul(a, a):dtype()) -- (bool x bool: i32, bool arithmetic's rule)
      assert.same({{2, 2}, {2, 2}}, ck.matmul(a, a):totable())
      local ok, err = pcall(function() return ck.rand({2}, {dtype = dt}) end)
      assert.is_false(ok, dt .. " rand")
      assert.truthy(err:find(dt, 1, true), err)
      local m = ck.map("x + 1", {x = a})
      assert.equal(a:add(1):dtype(), m:dtype(), "map " .. dt)
      assert.same(a:add(1):totable(), m:totable(), "map " .. dt)
    end
  end)

  it("leave the old dtypes' promotion and behaviour as they were", function()
    local f, d, i = ck.ones({2}), ck.ones({2}, {dtype = "f64"}), ck.ones({2}, {dtype = "i32"})
    assert.equal("f32", (f + i):dtype())
    assert.equal("f64", (f + d):dtype())
    assert.equal("f32", (ck.ones({2}, {dtype = "f16"}) + ck.ones({2}, {dtype = "bf16"})):dtype())
    assert.equal("f16", (ck.ones({2}, {dtype = "f16"}) + i):dtype())
    assert.equal(-2147483648, ck.array({0 / 0}, {dtype = "f64"}):to("i32"):item())
    assert.equal(-3, ck.array({-3.7}, {dtype = "i32"}):item())
  end)
end)

-- Files: saved with their own types, read back by NumPy and GNU Octave (when installed) and by ck.load.
describe("storage dtypes in files (issue 32)", function()
  local DIR = os.tmpname()
  os.remove(DIR)
  assert(os.execute("mkdir -p '" .. DIR .. "'"))
  local function P(name) return DIR .. "/" .. name end
  local function sh(cmd)
    local f = io.popen(cmd .. " 2>&1")
    local out = f:read("a")
    local ok = f:close()
    return ok, out
  end
  local PYTHON = sh("/usr/bin/python3 -c 'import numpy'") and "/usr/bin/python3" or nil
  local OCTAVE = sh("command -v octave-cli") and "octave-cli" or nil
  local HAVE = ck.io_formats()
  local function values(dt)
    if dt == "bool" then return {true, false, false, true, true, false} end
    local r = INT[dt]
    local v = {r[3], r[4], 0, 1}
    for _, x in ipairs(ck.randint(-2 ^ 31, 2 ^ 31 - 1, 2):totable()) do v[#v + 1] = x end
    return v
  end
  local arrays = {}
  for _, dt in ipairs(NEW) do arrays[dt] = ck.array(values(dt), {dtype = dt}):reshape(2, 3) end

  it("round-trip through .npy, .npz and .mat with ck.load", function()
    for _, dt in ipairs(NEW) do
      ck.save(P(dt .. ".npy"), arrays[dt])
      local b, info = ck.load(P(dt .. ".npy"))
      H.assert_equal(b, arrays[dt], dt)
      assert.is_nil(info.converted, dt)
      -- a transposed view too (saved in Fortran order)
      ck.save(P(dt .. "t.npy"), arrays[dt]:t())
      assert.same(arrays[dt]:t():totable(), ck.load(P(dt .. "t.npy")):totable())
    end
    if HAVE.npz then
      ck.savez(P("all.npz"), arrays)
      local t = ck.load(P("all.npz"))
      for _, dt in ipairs(NEW) do H.assert_equal(t[dt], arrays[dt], "npz " .. dt) end
    end
    if HAVE.mat then
      local named = {}
      for dt, a in pairs(arrays) do named["v_" .. dt] = a end
      ck.save(P("all.mat"), named)
      local t = ck.load(P("all.mat"))
      for _, dt in ipairs(NEW) do H.assert_equal(t["v_" .. dt], arrays[dt], "mat " .. dt) end
    end
  end)

  it("are read by NumPy with the right descr and values", function()
    if not PYTHON then return pending("python3-numpy is not installed here") end
    local lines = {"import numpy as np, sys", "d = sys.argv[1]"}
    local DESCR = {bool = "|b1", u8 = "|u1", i8 = "|i1", i16 = "<i2", u32 = "<u4", i64 = "<i8"}
    for _, dt in ipairs(NEW) do
      ck.save(P(dt .. ".npy"), arrays[dt])
      local vals = {}
      for i, x in ipairs(arrays[dt]:flat()) do vals[i] = tostring(x == true and 1 or x == false and 0 or x) end
      lines[#lines + 1] = ("a = np.load(d + '/%s.npy'); assert a.dtype.str == '%s', a.dtype.str; "
        .. "assert a.shape == (2, 3); assert a.reshape(-1).astype(object).tolist() == [%s], a"):format(dt, DESCR[dt],
        table.concat(vals, ", "))
    end
    lines[#lines + 1] = "print('NP-OK')"
    local f = assert(io.open(P("check.py"), "w"))
    f:write(table.concat(lines, "\n"), "\n")
    f:close()
    local ok, out = sh(("%s '%s' '%s'"):format(PYTHON, P("check.py"), DIR))
    assert(out:find("NP-OK", 1, true), tostring(ok) .. out)
  end)

  it("are read by Octave with the right classes and values", function()
    if not OCTAVE then return pending("octave is not installed here") end
    if not HAVE.mat then return pending("this build has no .mat support") end
    local named, lines = {}, {"load('all.mat');"}
    local CLASS = {bool = "logical", u8 = "uint8", i8 = "int8", i16 = "int16", u32 = "uint32", i64 = "int64"}
    for dt, a in pairs(arrays) do named["v_" .. dt] = a end
    ck.save(P("all.mat"), named)
    for _, dt in ipairs(NEW) do
      local rows = {}
      for r, row in ipairs(arrays[dt]:totable()) do
        local cells = {}
        for c, x in ipairs(row) do cells[c] = tostring(x == true and 1 or x == false and 0 or x) end
        rows[r] = table.concat(cells, " ")
      end
      lines[#lines + 1] = ("assert(strcmp(class(v_%s), '%s')); assert(isequal(v_%s, %s([%s])));"):format(dt,
        CLASS[dt], dt, CLASS[dt] == "logical" and "logical" or CLASS[dt], table.concat(rows, "; "))
    end
    lines[#lines + 1] = "disp('OCTAVE-DONE');"
    local f = assert(io.open(P("check.m"), "w"))
    f:write(table.concat(lines, "\n"), "\n")
    f:close()
    local ok, out = sh(("cd '%s' && %s --no-gui -q --norc check.m"):format(DIR, OCTAVE))
    assert(out:find("OCTAVE%-DONE"), tostring(ok) .. out)
  end)
end)
