-- The elementwise op table (kernels/elementwise/ew_ops.def) is the one place an op is defined: these specs
-- check the four ops added through it alone (atan2, hypot, idiv, mod) against plain Lua, on the host and
-- (on the GPU host) on cuda arrays of every variant, and that the table reaches Lua through core.ew_ops().
local H = require "spec.helpers"
local ck = H.ck
local core = ck.core

-- Plain-Lua definitions: Lua 5.4's own operators and math library are the oracle.
local LUA = {
  atan2 = function(x, y) return math.atan(x, y) end,
  hypot = function(x, y) return math.sqrt(x * x + y * y) end,
  idiv = function(x, y) return x // y end,
  mod = function(x, y) return x % y end,
}
-- i32 semantics (Lua integers raise on x // 0 and x % 0; arrays give 0 there, like div)
local LUA_I32 = {
  idiv = function(x, y) if y == 0 then return 0 end return x // y end,
  mod = function(x, y) if y == 0 then return 0 end return x % y end,
}

local function apply(name, a, b, dtype)
  local fa, fb = a:to("host"):to("f64"):flat(), b:to("host"):to("f64"):flat()
  local out = {}
  for i = 1, #fa do
    local x, y = fa[i], fb[i]
    if dtype == "i32" then out[i] = LUA_I32[name](math.tointeger(x), math.tointeger(y))
    elseif dtype == "f32" and name == "idiv" then
      -- f32 computes the quotient in float: floor of the float-rounded quotient (else a quotient just below an
      -- integer in double but rounded up to it in float would differ by 1)
      out[i] = math.floor((string.unpack("f", string.pack("f", x / y))))
    else out[i] = LUA[name](x, y) end
  end
  return ck.array(out, {dtype = "f64", device = "host"}):reshape(a:shape())
end

-- Operands with the awkward cases in them: zeros in the divisor, mixed signs, exact multiples.
local function operands(shape, dtype, dev)
  local a, b = H.rand(shape, dtype, dev), H.rand(shape, dtype, dev)
  if dtype ~= "i32" then a, b = a * 7, b * 3 end
  local fb = b:to("host"):flat()
  fb[1] = 0
  if #fb > 2 then fb[2] = dtype == "i32" and -3 or -2.5 end
  local fa = a:to("host"):flat()
  if #fa > 2 then fa[2] = dtype == "i32" and 9 or 5 end -- an exact multiple of b[2]
  return ck.array(fa, {dtype = dtype, device = dev}):reshape(shape), ck.array(fb, {dtype = dtype, device = dev}):reshape(shape)
end

local TOL = {f32 = {rtol = 2e-6, atol = 1e-6}, f64 = {rtol = 1e-14, atol = 1e-15}, i32 = {rtol = 0, atol = 0}}
-- cuda against the host: CUDA's atan2f/hypotf are within a few ulp (its math appendix), glibc's within 1;
-- allow 2^-17 relative (about 64 f32 ulp) and an absolute term for results near 0
local DEV_TOL = {f32 = {rtol = 2 ^ -17, atol = 1e-7}, f64 = {rtol = 1e-13, atol = 1e-15}, i32 = {rtol = 0, atol = 0}}

describe("elementwise op table", function()
  it("reaches Lua: core.ew_ops() lists every op with its arity, dtype rule and Lua kind", function()
    local byname = {}
    for id, o in ipairs(core.ew_ops()) do byname[o.name] = o; o.id = id end
    for _, n in ipairs {"atan2", "hypot", "idiv", "mod"} do
      assert.truthy(byname[n], n)
      assert.equal(2, byname[n].arity, n)
      assert.equal("binary", byname[n].lua, n)
    end
    assert.is_true(byname.atan2.float_only)
    assert.is_true(byname.hypot.float_only)
    assert.is_false(byname.idiv.float_only)
    assert.is_false(byname.mod.float_only)
    assert.equal(0, byname.fill.arity)
    assert.is_nil(byname.copy.lua)
    assert.truthy(#ck.variants("atan2") >= 2) -- every elementwise op runs on the elementwise ladder
  end)

  for _, name in ipairs {"atan2", "hypot", "idiv", "mod"} do
    for _, dt in ipairs {"f32", "f64", "i32"} do
      local float_only = name == "atan2" or name == "hypot"
      it(("%s %s on the host matches plain Lua (incl. zero divisors, signs, views)"):format(name, dt), function()
        if float_only and dt == "i32" then
          local ok, err = pcall(core.binary, name, ck.ones(2, {dtype = "i32", device = "host"}), ck.ones(2, {dtype = "i32", device = "host"}))
          assert.is_false(ok)
          assert.matches(name .. ": not defined for i32", tostring(err), 1, true)
          return
        end
        for _, shape in ipairs {{1}, {7}, {13, 5}, {3, 4, 6}} do
          local a, b = operands(shape, dt, "host")
          local out = H.poison(ck.empty(shape, {dtype = dt, device = "host"}))
          core.binary(name, a, b, out)
          H.assert_close(out, apply(name, a, b, dt):to(dt), TOL[dt], ("%s %s %s"):format(name, dt, table.concat(shape, "x")))
        end
        -- a transposed view, and a number on either side
        local a, b = operands({9, 4}, dt, "host")
        H.assert_close(core.binary(name, a:t(), b:t()), apply(name, a, b, dt):t():to(dt), TOL[dt], name .. " views")
        local two = dt == "i32" and 2 or 2.5
        local full = ck.full(a:shape(), two, {dtype = dt, device = "host"})
        H.assert_close(core.binary(name, a, two), apply(name, a, full, dt):to(dt), TOL[dt], name .. " a, number")
        H.assert_close(core.binary(name, two, a), apply(name, full, a, dt):to(dt), TOL[dt], name .. " number, a")
      end)

      it(("%s %s on cuda equals the host for every variant"):format(name, dt), H.gpu(function()
        if float_only and dt == "i32" then return end
        for _, v in ipairs(ck.variants("elementwise")) do
          for _, shape in ipairs {{1}, {1000}, {33, 65}} do
            local a, b = operands(shape, dt, "cuda")
            local out = H.poison(ck.empty(shape, {dtype = dt, device = "cuda"}))
            core.binary(name, a, b, out, v.name)
            local ref = core.binary(name, a:host(), b:host())
            H.assert_close(out, ref, DEV_TOL[dt], ("%s %s %s %s"):format(name, dt, v.name, table.concat(shape, "x")))
          end
          local a, b = operands({40, 24}, dt, "cuda")
          H.assert_close(core.binary(name, a:t(), b:t(), nil, v.name), core.binary(name, a:host():t(), b:host():t()),
            DEV_TOL[dt], name .. " views " .. v.name)
        end
      end, {alloc = not (float_only and dt == "i32")}))
    end
  end
end)
