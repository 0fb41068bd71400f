--- Scans (issue 33): ck.cumsum / cumprod / cummax / cummin against a plain-Lua oracle on the host backend, and
-- every rung of the scan ladder against the host backend on the GPU (poisoned outputs, odd sizes, every dim,
-- views, every dtype a rung takes).
local H = require "spec.helpers"
local ck = H.ck
local gpu = H.gpu

local OPS = {"cumsum", "cumprod", "cummax", "cummin"}
local FLOATS = {f32 = true, f64 = true, f16 = true, bf16 = true}
local DTYPES = {"f32", "f64", "f16", "bf16", "i32", "i64", "i16", "i8", "u8", "u32", "bool"}

-- Integer-valued inputs that every dtype holds, so that sums are exact in f32/f64 and i64 (and halves are
-- off by their final rounding only): sums and extremes draw from -3..3 (0..3 unsigned, 0..1 bool), products
-- from {-1, 1, 2} ({1, 2} unsigned, {0, 1} bool; floats also 0.5), never all zeros.
local function draw(op, dt)
  local unsigned = dt == "u8" or dt == "u32"
  if dt == "bool" then return math.random(0, 1) end
  if op == "cumprod" then
    if FLOATS[dt] then -- powers of two, exact; the exponent's walk stays well inside f32's range
      local u = math.random()
      return u < 0.1 and 0.5 or u < 0.2 and 2 or u < 0.6 and -1 or 1
    end
    return ({-1, 1, 2})[math.random(unsigned and 2 or 1, 3)]
  end
  return math.random(unsigned and 0 or -3, 3)
end

local function numel(shape) local n = 1; for _, s in ipairs(shape) do n = n * s end; return n end

-- A random array of `shape` for op in dtype dt on the host, and its values as a flat Lua list.
local function input(op, dt, shape)
  local vals = {}
  for i = 1, numel(shape) do vals[i] = draw(op, dt) end
  vals[1] = vals[1] == 0 and 1 or vals[1] -- never all zeros
  local a = ck.array(vals, {dtype = "f64"}):reshape(shape):to(dt)
  return a, vals
end

-- The plain-Lua oracle: scan flat row-major `vals` of `shape` along 1-based dim d.
local function oracle(op, vals, shape, d, exclusive, int_acc)
  local out, inner = {}, 1
  for k = d + 1, #shape do inner = inner * shape[k] end
  local len, outer = shape[d], numel(shape) // (shape[d] * inner)
  for o = 0, outer - 1 do
    for i = 0, inner - 1 do
      local acc
      if op == "cumsum" then acc = int_acc and 0 or 0.0
      elseif op == "cumprod" then acc = int_acc and 1 or 1.0
      else acc = nil end
      for r = 0, len - 1 do
        local at = (o * len + r) * inner + i + 1
        local v = vals[at]
        local nx
        if op == "cumsum" then nx = acc + v
        elseif op == "cumprod" then nx = acc * v
        elseif acc == nil or acc ~= acc then nx = acc == nil and v or acc
        elseif v ~= v then nx = v
        elseif op == "cummax" then nx = v > acc and v or acc
        else nx = v < acc and v or acc end
        if exclusive then out[at] = acc else out[at] = nx end
        acc = nx
      end
    end
  end
  return out
end

local function ulp_tol(dt)
  if dt == "f16" then return 2 ^ -10 end
  if dt == "bf16" then return 2 ^ -7 end
  return 0
end

local function check_flat(got, want, tol, label)
  assert(#got == #want, label .. ": " .. #got .. " values, expected " .. #want)
  for i = 1, #want do
    local g, w = got[i], want[i]
    local ok = (g == w) or (g ~= g and w ~= w) or (w == w and math.abs(g - w) <= tol * math.abs(w))
    if not ok then error(("%s: flat index %d: got %s, expected %s (seed %d)"):format(label, i, tostring(g), tostring(w), H.seed), 2) end
  end
end

local function result_dtype(op, dt)
  if (op == "cumsum" or op == "cumprod") and not FLOATS[dt] then return "i64" end
  return dt
end

describe("scans on the host backend against a plain-Lua oracle", function()
  local shapes = {{1}, {2}, {1023}, {3, 5}, {4, 1, 6}, {2, 3, 4}}
  it("every op, dtype, dim, inclusive and exclusive", function()
    for _, op in ipairs(OPS) do
      for _, dt in ipairs(DTYPES) do
        for _, shape in ipairs(shapes) do
          local a, vals = input(op, dt, shape)
          for d = 1, #shape do
            for _, ex in ipairs {false, true} do
              local label = ("%s %s %s dim %d%s"):format(op, dt, table.concat(shape, "x"), d, ex and " exclusive" or "")
              local r = ck[op](a, d, ex and {exclusive = true} or nil)
              assert.are.equal(result_dtype(op, dt), r:dtype(), label)
              assert.are.same(shape, r:shape(), label)
              local int_acc = not FLOATS[dt] and (op == "cumsum" or op == "cumprod")
              local want = oracle(op, vals, shape, d, ex, int_acc)
              local got = (r:dtype() == "bool" and r:to("u8") or r):flat()
              if ex and (op == "cummax" or op == "cummin") then
                -- each line starts with the dtype's extreme (checked below): compare the rest
                local g2, w2 = {}, {}
                for k = 1, #vals do if want[k] ~= nil then g2[#g2 + 1], w2[#w2 + 1] = got[k], want[k] end end
                got, want = g2, w2
              end
              if dt == "f16" or dt == "bf16" then want = ck.array(want, {dtype = "f64"}):to(dt):to("f64"):flat() end
              check_flat(got, want, 0, label)
            end
          end
        end
      end
    end
  end)

  it("starts exclusive cummax/cummin with the dtype's extreme", function()
    local a = ck.array({3, 1, 2}, {dtype = "f32"})
    assert.are.same({-math.huge, 3, 3}, ck.cummax(a, 1, {exclusive = true}):totable())
    assert.are.same({math.huge, 3, 1}, ck.cummin(a, 1, {exclusive = true}):totable())
    local b = ck.array({3, 1, 2}, {dtype = "f64"}):to("i8")
    assert.are.same({-128, 3, 3}, ck.cummax(b, 1, {exclusive = true}):totable())
    local c = ck.array({1, 0, 1}, {dtype = "f64"}):to("bool")
    local m = ck.cummin(c, 1, {exclusive = true}):to("f64"):totable()
    assert.are.same({1, 1, 0}, m)
  end)

  it("propagates NaN and infinities as NumPy does", function()
    local nan, inf = 0 / 0, math.huge
    local a = ck.array({1, -inf, 2, nan, 3, inf}, {dtype = "f64"})
    local s = ck.cumsum(a):totable()
    assert.are.equal(1, s[1]); assert.are.equal(-inf, s[2]); assert.are.equal(-inf, s[3])
    for k = 4, 6 do assert.is_true(s[k] ~= s[k]) end
    local m = ck.cummax(a):totable()
    assert.are.same({1, 1, 2}, {m[1], m[2], m[3]})
    for k = 4, 6 do assert.is_true(m[k] ~= m[k]) end
    local p = ck.cumprod(ck.array({2, inf, 0, 1}, {dtype = "f32"})):totable()
    assert.are.equal(2, p[1]); assert.are.equal(inf, p[2]); assert.is_true(p[3] ~= p[3])
  end)

  it("scans views (transposed, narrowed) and writes into a given out", function()
    local a, vals = input("cumsum", "f64", {5, 7})
    local t = a:t()
    local want = oracle("cumsum", t:contiguous():flat(), {7, 5}, 2, false)
    check_flat(ck.cumsum(t, 2):flat(), want, 0, "transposed")
    local n = a:narrow(2, 2, 5) -- columns 2..5 (inclusive)
    check_flat(ck.cumsum(n, 1):flat(), oracle("cumsum", n:contiguous():flat(), n:shape(), 1, false), 0, "narrowed")
    local out = ck.empty({7, 5}, {dtype = "f64"}):fill(0 / 0)
    local r = ck.cumsum(t, 2, {out = out})
    assert.are.equal(out, r)
    check_flat(out:flat(), want, 0, "out")
    local big = ck.empty({5, 14}, {dtype = "f64"})
    local ov = big:narrow(2, 1, 7):t() -- a strided out
    ck.cumsum(a:t(), 1, {out = ov})
    check_flat(ov:t():contiguous():flat(), oracle("cumsum", vals, {5, 7}, 2, false), 0, "strided out")
    assert.is_true(vals ~= nil)
  end)

  it("takes the last dim by default, and a 0-d array", function()
    local a = ck.array({{1, 2}, {3, 4}}, {dtype = "f64"})
    assert.are.same({{1, 3}, {3, 7}}, ck.cumsum(a):totable())
    assert.are.same({{1, 3}, {3, 7}}, a:cumsum():totable())
    assert.are.equal(5, ck.cumsum(ck.scalar(5, {dtype = "f64"})):item())
  end)

  it("gives empty results for empty arrays", function()
    for _, shape in ipairs {{0}, {3, 0}, {0, 4}} do
      for d = 1, #shape do
        local r = ck.cumsum(ck.empty(shape, {dtype = "f32"}), d)
        assert.are.same(shape, r:shape())
        assert.are.equal(0, r:numel())
      end
    end
    assert.are.equal("i64", ck.cumsum(ck.empty({0}, {dtype = "i32"})):dtype())
  end)

  it("says what is wrong, at the caller's line", function()
    local a = ck.rand({3, 4})
    local ok, e = pcall(ck.cumsum, a, 3)
    assert.is_false(ok); assert.matches("ck.cumsum: dim out of range", e)
    ok, e = pcall(ck.cumsum, a, 1, {exclusiv = true})
    assert.is_false(ok); assert.matches("unknown option \"exclusiv\"", e)
    ok, e = pcall(ck.cumsum, a, 1, {exclusive = 1})
    assert.is_false(ok); assert.matches("option exclusive must be true or false", e)
    ok, e = pcall(ck.cumsum, a, 1, {variant = "nope"})
    assert.is_false(ok); assert.matches("unknown variant 'nope'", e)
    ok, e = pcall(a.cummax, a, 1, {out = ck.empty({4, 3})})
    assert.is_false(ok); assert.matches("cummax: out has shape %[4x3%] but the result is %[3x4%]", e)
    local f = ck.rand({2}); f:free()
    ok, e = pcall(ck.cumprod, f)
    assert.is_false(ok); assert.matches("ck.cumprod", e)
    assert.matches("scan_spec.lua", e)
  end)

  it("lists the ladder", function()
    local v = ck.variants("scan")
    assert.are.equal("cub", v[1].name)
    local names = {}
    for _, r in ipairs(v) do names[r.name] = true end
    for _, n in ipairs {"hillis_steele", "blelloch", "warp_shuffle", "reduce_then_scan", "chained", "lookback",
                        "rows_warp", "rows_block", "cols", "cols_lookback"} do assert.is_true(names[n], n) end
    assert.are.equal(#v, #ck.variants("cumsum"))
  end)
end)

describe("the scan ladder on the GPU", function()
  local function takes(v, dt) for _, d in ipairs(v.dtypes) do if d == dt then return true end end return false end

  -- Every rung against the host backend (H.gpu makes the host the default device): poisoned outputs,
  -- integer-valued inputs (exact but for halves). Each input and host reference is made once, for every rung.
  -- only: a set of rung names to run (each must run itself, not fall back); nil: every rung.
  local function run_rungs(cases, ops, dtypes, only)
    local failures, ran, rungs = {}, {}, ck.variants("scan")
    for _, c in ipairs(cases) do
      for _, op in ipairs(ops) do
        for _, dt in ipairs(dtypes) do
          local a = input(op, dt, c.shape)
          local ga = a:to("cuda")
          if c.view then ga = c.view(ga); a = c.view(a) end
          for _, d in ipairs(c.dims) do
            for _, ex in ipairs {false, true} do
              local ref = ck[op](a, d, {exclusive = ex})
              for _, v in ipairs(rungs) do
                -- views of the storage dtypes are copied on the host until CUDA copies them (issue 32)
                if takes(v, dt) and not (c.view and not (FLOATS[dt] or dt == "i32")) and (not only or only[v.name]) then
                  local label = ("%s %s %s %s dim %d%s"):format(v.name, op, dt, c.name, d, ex and " excl" or "")
                  local out = ck.empty(ref:shape(), {dtype = ref:dtype(), device = "cuda"})
                  if FLOATS[ref:dtype()] or ref:dtype() == "i32" then H.poison(out) end
                  local ok, err = pcall(ck[op], ga, d, {exclusive = ex, variant = v.name, out = out})
                  if not ok then
                    if not tostring(err):match("cannot run") and not tostring(err):match("only") then
                      failures[#failures + 1] = label .. ": " .. tostring(err)
                    end
                  else
                    if ck.last_ran().name == v.name then ran[v.name] = true
                    elseif only then failures[#failures + 1] = label .. ": ran " .. ck.last_ran().name end
                    local good, msg = H.allclose(out, ref, {rtol = ulp_tol(dt) * 1.01, atol = 0})
                    if not good then failures[#failures + 1] = label .. ": " .. msg end
                  end
                end
              end
            end
          end
        end
      end
    end
    return failures, ran
  end

  local report = H.report

  it("every rung, op and dtype matches the host on odd sizes, every dim and views", gpu(function()
    local cases = {
      {name = "1", shape = {1}, dims = {1}}, {name = "2", shape = {2}, dims = {1}},
      {name = "1023", shape = {1023}, dims = {1}}, {name = "5000", shape = {5000}, dims = {1}},
      {name = "37x300", shape = {37, 300}, dims = {1, 2}},
      {name = "3x5x7", shape = {3, 5, 7}, dims = {1, 2, 3}},
      {name = "t(40x33)", shape = {40, 33}, dims = {1, 2}, view = function(x) return x:t() end},
      {name = "narrow", shape = {9, 70}, dims = {2}, view = function(x) return x:narrow(2, 3, 63) end},
    }
    local failures, ran = run_rungs(cases, OPS, DTYPES)
    report(failures)
    for _, v in ipairs(ck.variants("scan")) do assert.is_true(ran[v.name], "rung " .. v.name .. " never ran") end
  end))

  -- 7x20000 along dim 2: rows of several tiles of 8192 (the look-back rung's tile for 4-byte accumulators), so
  -- the look-back must stop at each row's first tile
  it("every rung matches on 2^20+1 elements and on many long rows", gpu(function()
    local cases = {{name = "2^20+1", shape = {2 ^ 20 + 1}, dims = {1}},
                   {name = "300x5000", shape = {300, 5000}, dims = {1, 2}},
                   {name = "7x20000", shape = {7, 20000}, dims = {2}}}
    report((run_rungs(cases, {"cumsum", "cummax"}, {"f32", "i32", "f16"})))
  end))

  -- 2^23 + 5 elements: 1025 tiles of 8192, past single_pass.cuh's kDelayGrid (1024 tiles), so the look-back rung
  -- sleeps before its first read and between re-polls (its Delay) as on large arrays; 2^20+1 above is 129 tiles,
  -- which poll at once
  it("the single-pass rungs match the host on 2^23+5 elements, where the look-back sleeps", gpu(function()
    local only = {lookback = true, chained = true, cub = true}
    report((run_rungs({{name = "2^23+5", shape = {2 ^ 23 + 5}, dims = {1}}}, {"cumsum", "cummax"}, {"f32", "i32"}, only)))
  end))

  -- cols_lookback (rung 10): many tiles down the scan dim (64 rows each; 32 for 8-byte sums of narrow dtypes),
  -- strips of 128 columns (64 for 8-byte dtypes) with a partial last strip, inner not a multiple of the vector
  -- width (scalar loads) or a multiple of it (16-byte vectors), len 1 and 2, several outer slices, and a
  -- misaligned (offset by one element) input that must take the scalar path.
  it("cols_lookback matches the host on many tiles and awkward column counts", gpu(function()
    local only = {cols_lookback = true, cols = true}
    local cases = {
      {name = "5000x3", shape = {5000, 3}, dims = {1}},
      {name = "2x7x129", shape = {2, 7, 129}, dims = {1, 2}},
      {name = "3x300x130", shape = {3, 300, 130}, dims = {2}},
      {name = "2x257x256", shape = {2, 257, 256}, dims = {1, 2}},
      {name = "1x200", shape = {1, 200}, dims = {1}}, {name = "2x200", shape = {2, 200}, dims = {1}},
      {name = "offset 200x132", shape = {200 * 132 + 1}, dims = {1},
       view = function(x) return x:narrow(1, 2, 200 * 132 + 1):reshape({200, 132}) end},
    }
    local failures, ran = run_rungs(cases, OPS, DTYPES, only)
    report(failures)
    assert.is_true(ran.cols_lookback, "cols_lookback never ran")
    local big = {{name = "3000x1000", shape = {3000, 1000}, dims = {1}},
                 {name = "70000x33", shape = {70000, 33}, dims = {1}},
                 {name = "3x2100x300", shape = {3, 2100, 300}, dims = {2}}}
    report((run_rungs(big, {"cumsum", "cummax"}, {"f32", "i32"}, {cols_lookback = true})))
  end))

  it("picks the layout rungs by shape", gpu(function()
    local function ran(shape, d)
      ck.cumsum(ck.rand(shape, {device = "cuda"}), d)
      return ck.last_ran().name
    end
    assert.are.equal("rows_warp", ran({1000, 100}, 2))
    assert.are.equal("rows_block", ran({1000, 5000}, 2))
    assert.are.equal("cols", ran({1000, 100}, 1))
    assert.are.equal("cols", ran({100, 1000}, 1)) -- 10^5 elements: small
    assert.are.equal("cols", ran({20000, 100}, 1)) -- 2 x 10^6 elements, but 100 columns: narrow strips
    assert.are.equal("cols", ran({8192, 4, 128}, 2)) -- 4M elements, but columns of 4: short tiles
    assert.are.equal("cols_lookback", ran({2048, 1024}, 1))
    assert.are.equal("cols_lookback", ran({8, 1024, 128}, 2))
    assert.are.equal("cub", ran({1, 2 ^ 20}, 2))
  end))
end)
