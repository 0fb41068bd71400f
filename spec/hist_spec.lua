--- Histograms (issue 33): ck.histc / ck.histogram against a plain-Lua oracle on the host backend, and every rung
-- of the histogram ladder against the host backend on the GPU.
local H = require "spec.helpers"
local ck = H.ck
local gpu = H.gpu

local DTYPES = {"f32", "f64", "f16", "bf16", "i32", "i64", "i16", "i8", "u8", "u32", "bool"}

-- The rule of kernels/hist/hist_bin.h, in Lua.
local function oracle(vals, bins, lo, hi)
  local c = {}
  for b = 1, bins do c[b] = 0 end
  for _, v in ipairs(vals) do
    if v >= lo and v <= hi then
      local b = math.floor((v - lo) * bins / (hi - lo))
      if b >= bins then b = bins - 1 end
      c[b + 1] = c[b + 1] + 1
    end
  end
  return c
end

local function input(dt, n)
  local vals = {}
  for i = 1, n do
    if dt == "bool" then vals[i] = math.random(0, 1)
    elseif dt == "u8" or dt == "u32" then vals[i] = math.random(0, 40)
    else vals[i] = math.random(-20, 20) + ((dt == "i32" or dt == "i64" or dt == "i16" or dt == "i8") and 0 or 0.25 * math.random(0, 3)) end
  end
  local a = ck.array(vals, {dtype = "f64"}):to(dt)
  return a, a:to("f64"):flat()
end

describe("histograms on the host backend against a plain-Lua oracle", function()
  it("histc: every dtype, bins, ranges (values on the edges, outside, NaN)", function()
    for _, dt in ipairs(DTYPES) do
      for _, n in ipairs {1, 2, 1023} do
        local a, vals = input(dt, n)
        for _, r in ipairs {{7, -10, 10}, {1, 0, 1}, {40, 0, 40}, {3, -100.5, 100.5}} do
          local c = ck.histc(a, r[1], r[2], r[3])
          assert.are.equal("i64", c:dtype())
          assert.are.same(oracle(vals, r[1], r[2], r[3]), c:totable(), ("%s n=%d bins=%d [%g, %g]"):format(dt, n, r[1], r[2], r[3]))
        end
      end
    end
    local nan = ck.array({0 / 0, 1, 0 / 0, 2}, {dtype = "f32"})
    assert.are.same({1, 1}, ck.histc(nan, 2, 1, 2):totable())
  end)

  it("histogram: NumPy's defaults (10 bins over the data's range) and the edges", function()
    local a = ck.array({{1, 2, 3}, {4, 5, 9}}, {dtype = "f64"})
    local c, e = ck.histogram(a:t())
    assert.are.same({1, 1, 1, 1, 0, 1, 0, 0, 0, 1}, c:totable()) -- as np.histogram([1, 2, 3, 4, 5, 9])
    assert.are.equal(11, e:numel()); assert.are.equal(1, e:totable()[1]); assert.are.equal(9, e:totable()[11])
    local c2 = ck.histogram(ck.full({4}, 3), {bins = 2})
    assert.are.same({0, 4}, c2:totable()) -- one value: range 2.5..3.5
    local c3 = ck.histogram(a, {bins = 3, range = {0, 3}})
    assert.are.same({0, 1, 2}, c3:totable())
  end)

  it("says what is wrong, at the caller's line", function()
    local a = ck.rand({5})
    local ok, e = pcall(ck.histc, a, 0, 0, 1)
    assert.is_false(ok); assert.matches("ck.histc: bins = 0 must be >= 1", e); assert.matches("hist_spec.lua", e)
    ok, e = pcall(ck.histc, a, 3, 2, 1)
    assert.is_false(ok); assert.matches("must be finite with lo < hi", e)
    ok, e = pcall(ck.histogram, a, {bins = 0})
    assert.is_false(ok); assert.matches("option bins must be an integer >= 1", e)
    ok, e = pcall(ck.histogram, ck.array({0 / 0}))
    assert.is_false(ok); assert.matches("contain NaN", e)
  end)
end)

describe("the histogram ladder on the GPU", function()
  it("every rung and dtype matches the host (2^20+1 elements, few and many bins, a view)", gpu(function()
    local failures, ran = {}, {}
    for _, v in ipairs(ck.variants("histogram")) do
      for _, dt in ipairs(DTYPES) do
        for _, c in ipairs {{n = 1, bins = 3}, {n = 1023, bins = 7}, {n = 2 ^ 20 + 1, bins = 1}, {n = 2 ^ 20 + 1, bins = 5000}} do
          local a = input(dt, c.n)
          local ref = ck.histc(a, c.bins, -10, 30)
          local ga = a:to("cuda")
          local ok, got = pcall(ck.histc, ga, c.bins, -10, 30, {variant = v.name})
          if not ok then failures[#failures + 1] = v.name .. " " .. dt .. ": " .. tostring(got)
          else
            if ck.last_ran().name == v.name then ran[v.name] = true end
            local g, r = got:host():flat(), ref:flat()
            for b = 1, #r do
              if g[b] ~= r[b] then
                failures[#failures + 1] = ("%s %s n=%d bins=%d: bin %d got %s expected %s"):format(v.name, dt, c.n, c.bins, b, g[b], r[b])
                break
              end
            end
          end
        end
      end
      local m = ck.rand({300, 70}, {device = "cuda"})
      local ok, got = pcall(ck.histc, m:t(), 16, 0, 1, {variant = v.name})
      if not ok or not ck.equal(got:to("f64"), ck.histc(m:host(), 16, 0, 1):to("f64"):to("cuda")) then
        failures[#failures + 1] = v.name .. " view: " .. tostring(got)
      end
    end
    H.report(failures)
    for _, v in ipairs(ck.variants("histogram")) do assert.is_true(ran[v.name], "rung " .. v.name .. " never ran") end
  end))
end)
