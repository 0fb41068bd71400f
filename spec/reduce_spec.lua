-- Reductions: sum, prod, mean, max, min, argmax, argmin.
--  * the host reference against plain Lua loops (small inputs, every dtype, every dim, views);
--  * semantics on every backend: empty reductions (NumPy), errors, keepdim, 0-d results, NaN propagation,
--    ties -> first index, i32 wrap-around;
--  * on the GPU: every registered variant x op x dtype x shape (1xN, Nx1, 37x1000, 1000x37, 3-D along each
--    dim, transposed, permuted, sliced, misaligned and expanded views) against the host reference.
--
-- Tolerances. The host reference accumulates in f64 (exact enough to be the truth); f32 kernels accumulate
-- in f32 in their own order. Any summation order of n terms errs by at most (n-1)*eps*sum|x_i|; with random
-- signs the rounding errors behave like a random walk: a sequential fold (the worst order the kernels use,
-- one thread's share) has std ~0.24*eps*sum|x_i| (each of the n roundings is <= eps/2 of a partial sum of
-- size ~sqrt(k)), trees far less. We allow atol = 4*eps*sum|x_i| (> 16 sigma) with sum|x_i| <= len*max|x|,
-- plus the dtype's rtol on |ref| for the final rounding; MEAN divides both by len. PROD runs on inputs near
-- 1 (so products stay finite) with rtol = len*eps (each multiply adds <= eps/2 relative error). MAX/MIN and
-- the indices are exact; i32 is exact everywhere (SUM/PROD wrap modulo 2^32 on every backend).
local H = require "spec.helpers"
local ck = H.ck
local core = ck.core

local EPS = {f32 = 2 ^ -23, f64 = 2 ^ -52}

local gpu = H.gpu -- pending with the reason where there is no GPU
local FLOAT_OPS = {"sum", "prod", "mean", "max", "min", "argmax", "argmin"}
local function ops_for(dt)
  if dt == "i32" then return {"sum", "prod", "max", "min", "argmax", "argmin"} end
  return FLOAT_OPS
end

local function shape_str(a) return "[" .. table.concat(a:shape(), "x") .. "]" end

--- Reduce through the core with explicit control of the index output: op "maxv"/"minv" are max/min
-- without indices (the plain MAX/MIN kernels; ck.max(a, dim) always asks for indices).
-- Returns values, indices (either may be nil).
local function reduce(op, x, dim, opts)
  opts = opts or {}
  local base = op:gsub("v$", "")
  local want_idx = op == "max" or op == "min"
  if base == "argmax" or base == "argmin" then
    return nil, core.reduce(base, x, dim, opts.keepdim, opts.variant, true, nil, opts.idx)
  end
  if want_idx and dim ~= nil then
    return core.reduce(base, x, dim, opts.keepdim, opts.variant, true, opts.out, opts.idx)
  end
  return core.reduce(base, x, dim, opts.keepdim, opts.variant, false, opts.out, nil)
end

-- ---------------------------------------------------------------- plain Lua reference

local function wrap32(v) v = v & 0xffffffff; if v >= 0x80000000 then v = v - 0x100000000 end; return v end

-- Reduce a Lua list of numbers (in order) with the same rules as ck_kernels.h.
local function lua_reduce_list(op, vals, dt)
  local n = #vals
  if op == "sum" or op == "mean" then
    local s = 0
    for i = 1, n do s = s + vals[i] end
    if dt == "i32" then return math.tointeger(s) end -- i32 sums are i64 (issue 32): exact here
    return op == "mean" and s / n or s
  elseif op == "prod" then
    local p = dt == "i32" and 1 or 1.0
    for i = 1, n do p = dt == "i32" and p * math.tointeger(vals[i]) or p * vals[i] end -- Lua integers wrap mod 2^64, as i64 does
    return p
  end
  local is_max = op == "max" or op == "argmax"
  local best, bi = vals[1], 1
  for i = 2, n do
    local v = vals[i]
    if best == best and (v ~= v or (is_max and v > best) or (not is_max and v < best)) then best, bi = v, i end
  end
  if op == "argmax" or op == "argmin" then return bi end
  return best, bi
end

-- Reference for x (any view, host) along dim (nil = all) from x:totable(): values and 1-based indices, as
-- flat lists in the output's logical order.
local function lua_reduce(op, x, dim)
  local t, shp, dt = x:totable(), x:shape(), x:dtype()
  local nd = #shp
  local function get(idx) local v = t; for k = 1, nd do v = v[idx[k]] end; return v end
  local vals_out, idx_out = {}, {}
  if dim == nil then
    local all, idx = {}, {}
    for k = 1, nd do idx[k] = 1 end
    local n = x:numel()
    for _ = 1, n do
      all[#all + 1] = get(idx)
      for k = nd, 1, -1 do idx[k] = idx[k] + 1; if idx[k] <= shp[k] then break end; idx[k] = 1 end
    end
    local v, i = lua_reduce_list(op, all, dt)
    return {v}, {i}
  end
  local kept = {}
  for k = 1, nd do if k ~= dim then kept[#kept + 1] = k end end
  local count = 1
  for _, k in ipairs(kept) do count = count * shp[k] end
  local idx = {}
  for k = 1, nd do idx[k] = 1 end
  for _ = 1, count do
    local list = {}
    for r = 1, shp[dim] do idx[dim] = r; list[r] = get(idx) end
    local v, i = lua_reduce_list(op, list, dt)
    vals_out[#vals_out + 1], idx_out[#idx_out + 1] = v, i
    for j = #kept, 1, -1 do
      local k = kept[j]
      idx[k] = idx[k] + 1
      if idx[k] <= shp[k] then break end
      idx[k] = 1
    end
  end
  return vals_out, idx_out
end

local function f32(v) return string.unpack("f", string.pack("f", v)) end

local function close(got, ref, dt, rtol, atol)
  if ref ~= ref then return got ~= got end
  if ref == math.huge or ref == -math.huge then return got == ref end
  if math.type(got) == "integer" and math.type(ref) == "integer" then return got == ref end -- (i64: exact, and abs(minint) < 0)
  return got == got and math.abs(got - ref) <= atol + rtol * math.abs(ref)
end

-- Small host arrays with values we choose (so they are exact in every dtype).
local function small(shape, dt, lo, hi)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local flat = {}
  for i = 1, n do
    local v = math.random(lo or -20, hi or 20)
    if dt ~= "i32" then v = v / 4 end
    flat[i] = v
  end
  local function build(k, off)
    if k > #shape then return flat[off + 1] end
    local t, stride = {}, 1
    for j = k + 1, #shape do stride = stride * shape[j] end
    for i = 1, shape[k] do t[i] = build(k + 1, off + (i - 1) * stride) end
    return t
  end
  if #shape == 0 then return ck.scalar(flat[1], {dtype = dt, device = "host"}) end
  return ck.array(build(1, 0), {dtype = dt, device = "host"})
end

describe("host reference against plain Lua loops", function()
  local shapes = {{1}, {7}, {1, 1}, {1, 7}, {7, 1}, {3, 5}, {4, 3, 5}, {2, 3, 2, 3}}
  it("matches for every dtype, op and dim, with and without keepdim", function()
    for _, dt in ipairs {"f32", "f64", "i32"} do
      for _, shp in ipairs(shapes) do
        local x = small(shp, dt)
        for _, op in ipairs(ops_for(dt)) do
          for dim = 0, #shp do
            local d = dim > 0 and dim or nil
            local rv, ri = lua_reduce(op, x, d)
            for _, keepdim in ipairs {false, true} do
              local v, i = reduce(op, x, d, {keepdim = keepdim})
              local label = ("%s %s %s dim %s keepdim %s"):format(op, dt, shape_str(x), tostring(d), tostring(keepdim))
              local res = v or i
              local want_nd = d and (keepdim and #shp or #shp - 1) or (keepdim and #shp or 0)
              assert.equals(want_nd, res:ndim(), label)
              if v then
                local g = v:flat()
                assert.equals(#rv, #g, label)
                for k = 1, #rv do
                  local ref = dt == "f32" and f32(rv[k]) or rv[k]
                  assert(close(g[k], ref, dt, dt == "i32" and 0 or 1e-6, 0), label .. (": got %s want %s at %d"):format(g[k], ref, k))
                end
              end
              if i then
                local g = i:flat()
                for k = 1, #ri do assert.equals(ri[k], g[k], label .. " index " .. k) end
              end
            end
          end
        end
      end
    end
  end)

  it("matches on strided views: transposed, permuted, narrowed, selected, expanded", function()
    for _, dt in ipairs {"f32", "i32"} do
      local a = small({5, 6}, dt)
      local b = small({3, 4, 5}, dt)
      local views = {
        a:t(), a:narrow(2, 2, 5), a:narrow(1, 2, 4):t(), b:permute(3, 1, 2), b:select(2, 3),
        b:narrow(3, 2, 4):transpose(1, 3), small({1, 6}, dt):expand(4, 6),
      }
      for vi, x in ipairs(views) do
        for _, op in ipairs(ops_for(dt)) do
          for dim = 0, x:ndim() do
            local d = dim > 0 and dim or nil
            local rv, ri = lua_reduce(op, x, d)
            local v, i = reduce(op, x, d)
            local label = ("view %d %s %s dim %s"):format(vi, op, dt, tostring(d))
            if v then
              local g = v:flat()
              for k = 1, #rv do
                local ref = dt == "f32" and f32(rv[k]) or rv[k]
                assert(close(g[k], ref, dt, 1e-6, 0), label .. (": got %s want %s"):format(g[k], ref))
              end
            end
            if i then local g = i:flat(); for k = 1, #ri do assert.equals(ri[k], g[k], label) end end
          end
        end
      end
    end
  end)

  it("accumulates f32 in f64; i32 sums and products accumulate in and return i64 (issue 32)", function()
    -- 2^24 + 1 + 1 + ...: an f32 accumulator would stay at 2^24
    local t = {2 ^ 24}
    for i = 2, 9 do t[i] = 1 end
    assert.equals(2 ^ 24 + 8, ck.sum(ck.array(t, {device = "host"})):item())
    local big = ck.array({2 ^ 30, 2 ^ 30, 2 ^ 30, 2 ^ 30, 5}, {dtype = "i32", device = "host"})
    assert.equals(4 * 2 ^ 30 + 5, ck.sum(big):item())
    assert.equals("i64", ck.sum(big):dtype())
    assert.equals(2147483648, ck.sum(ck.array({2147483647, 1}, {dtype = "i32", device = "host"})):item())
    assert.equals(65536 * 65536 * 3, ck.prod(ck.array({65536, 65536, 3}, {dtype = "i32", device = "host"})):item())
    assert.equals(46341 * 46341, ck.prod(ck.array({46341, 46341}, {dtype = "i32", device = "host"})):item())
  end)
end)

-- ---------------------------------------------------------------- semantics on every backend

for _, dev in ipairs(H.devices()) do
  describe("reductions on " .. dev, function()
    local O = function(dt) return {dtype = dt or "f32", device = dev} end

    it("follows NumPy on empty reductions", function()
      for _, dt in ipairs {"f32", "f64", "i32"} do
        local z = ck.zeros(0, 5, O(dt))
        local s = ck.sum(z, 1)
        assert.same({5}, s:shape()); assert.same({0, 0, 0, 0, 0}, s:totable())
        assert.same({1, 1, 1, 1, 1}, ck.prod(z, 1):totable())
        assert.same({0}, ck.sum(z, 2):shape())
        assert.same({0, 1}, ck.sum(z, 2, {keepdim = true}):shape())
        assert.equals(0, ck.sum(z):item())
        assert.equals(1, ck.prod(z):item())
        assert.same({}, ck.sum(z):shape())
        if dt ~= "i32" then
          local m = ck.mean(z, 1):flat()
          for k = 1, 5 do assert.is_true(m[k] ~= m[k]) end
          local mm = ck.mean(z):item()
          assert.is_true(mm ~= mm)
        end
        for _, op in ipairs {"max", "min", "argmax", "argmin"} do
          local ok, err = pcall(ck[op], z, 1)
          assert.is_false(ok)
          assert.matches(op .. ": cannot reduce an empty dimension (shape [0x5], dim 1)", err, 1, true)
          ok, err = pcall(ck[op], z)
          assert.is_false(ok)
          assert.matches(op .. ": cannot reduce an empty array (shape [0x5])", err, 1, true)
          -- the kept dims may be empty: that is an empty result, not an error
          assert.same({0}, (ck[op](z, 2)):shape())
        end
      end
    end)

    it("reports clear errors", function()
      local a = ck.ones(3, 4, O())
      assert.equals("f64", ck.mean(ck.ones(3, O("i32"))):dtype()) -- the mean of integers is f64 (NumPy)
      local ok, err = pcall(ck.sum, a, 3)
      assert.is_false(ok); assert.matches("dim out of range", err, 1, true)
      ok, err = pcall(ck.sum, a, 1, {out = ck.empty(5, O())})
      assert.is_false(ok); assert.matches("sum: out has shape [5] but the result is [4]", err, 1, true)
      ok, err = pcall(ck.sum, a, 1, {out = ck.empty(4, O("f64"))})
      assert.is_false(ok); assert.matches("sum: out is f64 but the result is f32", err, 1, true)
      if dev == "cuda" then
        ok, err = pcall(ck.sum, a, 1, {variant = "nope"})
        assert.is_false(ok); assert.matches("unknown variant 'nope'", err, 1, true)
        ok, err = pcall(ck.sum, a, 1, {out = ck.empty(4, {device = "host"})})
        assert.is_false(ok); assert.matches("sum: operands are on different devices", err, 1, true)
      end
    end)

    it("keeps dims on request and returns 0-d arrays for whole-array reductions", function()
      local a = H.rand({4, 6, 5}, "f64", dev)
      assert.same({}, ck.sum(a):shape())
      assert.same({1, 1, 1}, ck.sum(a, {keepdim = true}):shape())
      assert.same({4, 1, 5}, ck.sum(a, 2, {keepdim = true}):shape())
      assert.same({4, 5}, ck.sum(a, 2):shape())
      assert.same({6, 5}, ck.max(a, 1):shape())
      local v, i = ck.max(a, 3, {keepdim = true})
      assert.same({4, 6, 1}, v:shape()); assert.same({4, 6, 1}, i:shape()); assert.equals("i64", i:dtype())
      assert.equals(dev .. ":0", v:device())
      -- :item() of a whole-array result equals the host value
      local s = ck.sum(a):item()
      assert.is_true(math.abs(s - ck.sum(a:host()):item()) < 1e-12 * 120)
      assert.equals(ck.argmax(a:host()):item(), ck.argmax(a):item())
      -- keepdim results equal the plain ones
      H.assert_close(ck.mean(a, 1, {keepdim = true}):reshape(6, 5), ck.mean(a, 1), H.tol("f64"), "keepdim")
      -- a given out (keepdim or not) is written in place
      local out = H.poison(ck.empty(4, 1, 5, O("f64")))
      local r = ck.sum(a, 2, {out = out, keepdim = true})
      assert.equals(out, r)
      H.assert_close(out:reshape(4, 5), ck.sum(a, 2), H.tol("f64"), "out")
      local out2 = H.poison(ck.empty(6, 4, O("f64")))
      ck.min(a, 3, {out = out2:t()})
      H.assert_close(out2:t(), (ck.min(a, 3)), H.tol("f64"), "strided out")
    end)

    it("propagates NaN: sum/prod/mean/max/min give NaN, argmax/argmin the first NaN", function()
      for _, dt in ipairs {"f32", "f64"} do
        for _, n in ipairs {5, 100, 5000, 300001} do
          local x = H.rand({3, n}, dt, dev)
          local p1, p2 = math.max(1, n // 3), math.max(2, n - 1)
          x:narrow(1, 2, 2):narrow(2, p1, p1):fill(0 / 0)
          x:narrow(1, 2, 2):narrow(2, p2, p2):fill(0 / 0)
          x:narrow(1, 3, 3):narrow(2, n, n):fill(0 / 0)
          for _, op in ipairs {"sum", "prod", "mean", "maxv", "minv"} do
            local r = reduce(op, x, 2):flat()
            assert.is_true(r[1] == r[1], op .. " row 1")
            assert.is_true(r[2] ~= r[2], op .. " row 2"); assert.is_true(r[3] ~= r[3], op .. " row 3")
            local all = reduce(op, x):item()
            assert.is_true(all ~= all, op .. " all")
          end
          for _, op in ipairs {"max", "min", "argmax", "argmin"} do
            local v, i = reduce(op, x, 2)
            assert.same({i:flat()[2], i:flat()[3]}, {p1, n}, ("%s %s n=%d"):format(op, dt, n))
            if v then local vf = v:flat(); assert.is_true(vf[2] ~= vf[2] and vf[3] ~= vf[3]) end
            local _, ia = reduce((op:gsub("^(m..)$", "arg%1")), x)
            assert.equals(n + p1, ia:item(), op .. " all")
          end
        end
      end
    end)

    it("breaks ties to the first index, across threads and blocks", function()
      for _, dt in ipairs {"f32", "f64", "i32"} do
        for _, n in ipairs {7, 33, 1000, 70001, 1048583} do
          local x = ck.full({2, n}, 3, O(dt))
          local p = {math.max(1, n // 5), math.max(2, n // 2), n}
          for _, q in ipairs(p) do x:narrow(2, q, q):fill(9) end
          local lo = {math.max(2, n // 3), math.max(3, n - 1)}
          for _, q in ipairs(lo) do x:narrow(2, q, q):fill(-9) end
          assert.same({p[1], p[1]}, ck.argmax(x, 2):flat(), ("argmax %s n=%d"):format(dt, n))
          assert.same({lo[1], lo[1]}, ck.argmin(x, 2):flat(), ("argmin %s n=%d"):format(dt, n))
          local _, i = ck.max(x, 2)
          assert.same({p[1], p[1]}, i:flat())
          assert.equals(p[1], ck.argmax(x):item())
          -- all equal: index 1; all -inf: index 1
          assert.same({1, 1}, ck.argmax(ck.full({2, n}, 4, O(dt)), 2):flat())
          if dt ~= "i32" then
            assert.same({1, 1}, ck.argmax(ck.full({2, n}, -math.huge, O(dt)), 2):flat())
            assert.equals(-math.huge, ck.max(ck.full({n}, -math.huge, O(dt))):item())
          end
          -- down a column (a leading dim)
          local c = x:t():contiguous()
          assert.same({p[1], p[1]}, ck.argmax(c, 1):flat())
        end
      end
    end)

    it("sums and multiplies i32 in i64, exactly (issue 32), and i64 modulo 2^64 as Lua integers do", function()
      local big = ck.array({2 ^ 30, 2 ^ 30, 2 ^ 30, 2 ^ 30, 5}, {dtype = "i32", device = dev})
      assert.equals(4 * 2 ^ 30 + 5, ck.sum(big):item())
      assert.equals(2147483648, ck.sum(ck.array({2147483647, 1}, {dtype = "i32", device = dev})):item())
      assert.equals(65536 * 65536 * 3, ck.prod(ck.array({65536, 65536, 3}, {dtype = "i32", device = dev})):item())
      local col = ck.full({5, 3}, 2 ^ 30, O("i32"))
      assert.same({5 * 2 ^ 30, 5 * 2 ^ 30, 5 * 2 ^ 30}, ck.sum(col, 1):flat())
      local w = ck.array({math.maxinteger, 1, 3}, {dtype = "i64", device = dev})
      assert.equals(math.maxinteger + 1 + 3, ck.sum(w):item())
      assert.equals(math.maxinteger * 3, ck.prod(w):item())
    end)
  end)
end

-- ---------------------------------------------------------------- every GPU variant against the host

-- Cases: a maker (fresh random input, any view) and the dims to reduce (nil = all).
local function cases(big)
  local N = {1, 31, 32, 33, 1000}
  local list = {}
  local function add(name, make, dims) list[#list + 1] = {name = name, make = make, dims = dims} end
  if big then
    local n = 2 ^ 20 + 7
    add("1x" .. n, function(dt) return H.rand({1, n}, dt, "cuda") end, {false, 2})
    add(n .. "x1", function(dt) return H.rand({n, 1}, dt, "cuda") end, {1})
    add("3x" .. n .. " misaligned", function(dt) return H.rand({3 * n + 1}, dt, "cuda"):narrow(1, 2, 3 * n + 1):reshape(3, n) end, {2})
    add("1025x" .. (n // 1024), function(dt) return H.rand({1025, n // 1024}, dt, "cuda") end, {2})
    return list
  end
  for _, n in ipairs(N) do
    add("1x" .. n, function(dt) return H.rand({1, n}, dt, "cuda") end, {false, 1, 2})
    add(n .. "x1", function(dt) return H.rand({n, 1}, dt, "cuda") end, {false, 1, 2})
  end
  add("37x1000", function(dt) return H.rand({37, 1000}, dt, "cuda") end, {false, 1, 2})
  add("1000x37", function(dt) return H.rand({1000, 37}, dt, "cuda") end, {false, 1, 2})
  add("3x2000x5", function(dt) return H.rand({3, 2000, 5}, dt, "cuda") end, {1, 2, 3})
  add("6x35x67", function(dt) return H.rand({6, 35, 67}, dt, "cuda") end, {false, 1, 2, 3})
  add("20000x3", function(dt) return H.rand({20000, 3}, dt, "cuda") end, {2})
  add("1200x700", function(dt) return H.rand({1200, 700}, dt, "cuda") end, {1, 2})
  add("(1000x37):t()", function(dt) return H.rand({1000, 37}, dt, "cuda"):t() end, {false, 1, 2})
  add("(6x35x67):permute(3,1,2)", function(dt) return H.rand({6, 35, 67}, dt, "cuda"):permute(3, 1, 2) end, {1, 2, 3})
  add("(37x1000):narrow(2,3,999)", function(dt) return H.rand({37, 1000}, dt, "cuda"):narrow(2, 3, 999) end, {false, 1, 2})
  add("(40x999):narrow(1,2,40) misaligned", function(dt) return H.rand({40, 999}, dt, "cuda"):narrow(1, 2, 40) end, {false, 1, 2})
  add("(1x37):expand(300,37)", function(dt) return H.rand({1, 37}, dt, "cuda"):expand(300, 37) end, {false, 1, 2})
  return list
end

local function tolerance(op, dt, len, xmax)
  if dt == "i32" or not (op == "sum" or op == "mean" or op == "prod") then return {rtol = 0, atol = 0} end
  local t = H.tol(dt)
  if op == "prod" then return {rtol = t.rtol + len * EPS[dt], atol = t.atol} end
  local atol = 4 * EPS[dt] * len * xmax
  if op == "mean" then atol = atol / len end
  return {rtol = t.rtol, atol = t.atol + atol}
end

local function variants()
  local vs = {}
  for _, v in ipairs(ck.variants("reduce")) do if not v.bench_only then vs[#vs + 1] = v end end
  return vs
end

describe("reduce variants on cuda", function()
  local OPS = {"sum", "prod", "mean", "max", "min", "maxv", "minv", "argmax", "argmin"}

  -- One input per (case, dtype, purpose), its host copy and the host references, shared by all variants.
  local function run_all(case_list, vnames, only_ops)
    local failures, ran = {}, {}
    for _, case in ipairs(case_list) do
      for _, dt in ipairs {"f32", "f64", "i32"} do
        local x = case.make(dt)
        local xp = dt == "i32" and x or (x * 0.01 + 1) -- near 1: products stay finite
        local xh, xph = x:host(), xp:host()
        for _, op in ipairs(only_ops or OPS) do
          if not (op == "mean" and dt == "i32") then
            local src, srch = op == "prod" and xp or x, op == "prod" and xph or xh
            for _, d in ipairs(case.dims) do
              local dim = d or nil
              local rv, ri = reduce(op, srch, dim)
              local len = dim and x:size(dim) or x:numel()
              local tol = tolerance(op, dt, len, 1)
              for _, vn in ipairs(vnames) do
                local label = ("%s %s %s dim %s variant %s"):format(op, dt, case.name, tostring(dim), vn)
                local out = rv and H.poison(ck.empty(rv:shape(), {dtype = rv:dtype(), device = "cuda"}))
                local idx = ri and H.poison(ck.empty(ri:shape(), {dtype = "i64", device = "cuda"}))
                local ok, gv, gi = pcall(reduce, op, src, dim, {variant = vn, out = out, idx = idx})
                if not ok then
                  failures[#failures + 1] = label .. ": " .. tostring(gv)
                else
                  ran[ck.last_ran().name] = true
                  if rv then
                    local good, msg = H.allclose(gv, rv, tol)
                    if not good then failures[#failures + 1] = label .. " values: " .. msg end
                  end
                  if ri then
                    local good, msg = H.allclose(gi, ri, {rtol = 0, atol = 0})
                    if not good then failures[#failures + 1] = label .. " indices: " .. msg end
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

  it("every variant, op and dtype matches the host reference on awkward shapes and views", gpu(function()
    local names = {}
    for _, v in ipairs(variants()) do names[#names + 1] = v.name end
    local failures, ran = run_all(cases(false), names)
    report(failures)
    for _, n in ipairs(names) do assert.is_true(ran[n], "variant " .. n .. " never ran on its own") end
  end))

  it("every variant matches on 2^20+7 elements (long rows, many rows, misaligned)", gpu(function()
    local names = {}
    for _, v in ipairs(variants()) do names[#names + 1] = v.name end
    report((run_all(cases(true), names, nil)))
  end))

  it("every variant matches on 2^24 elements", gpu(function()
    local names = {}
    for _, v in ipairs(variants()) do names[#names + 1] = v.name end
    local big = {{name = "1x2^24", make = function(dt) return H.rand({1, 2 ^ 24}, dt, "cuda") end, dims = {false, 2}},
                 {name = "2^24x1", make = function(dt) return H.rand({2 ^ 24, 1}, dt, "cuda") end, dims = {1}},
                 {name = "4096x4096", make = function(dt) return H.rand({4096, 4096}, dt, "cuda") end, dims = {1, 2}}}
    report((run_all(big, names, {"sum", "max", "argmin", "mean"})))
  end))

  it("reduces a transposed matrix in place: column sums of a:t() run as row sums of a", gpu(function()
    local a = H.rand({2000, 3000}, "f32", "cuda")
    local before = ck.memory("cuda").allocations
    local s = ck.sum(a:t(), 1)
    assert.equals("rows_block", ck.last_ran().name)
    assert.is_true(ck.memory("cuda").allocations - before <= 1, "no copy of the input")
    H.assert_close(s, ck.sum(a, 2), tolerance("sum", "f32", 3000, 1), "a:t() dim 1")
    local c = ck.sum(a:t(), 2)
    assert.equals("cols", ck.last_ran().name)
    H.assert_close(c, ck.sum(a:host(), 1), tolerance("sum", "f32", 2000, 1), "a:t() dim 2")
  end))

  it("indexes past 2^31 elements with 64-bit offsets", gpu(function()
    if ck.device("cuda").free_mem < 16e9 then return pending("needs 16 GB of free GPU memory") end
    local m = 2 ^ 30 + 1
    local n = 3 * m + 2 -- 3.2e9 i32 elements, 12.9 GB
    local x = ck.ones({n}, {dtype = "i32", device = "cuda"})
    x:narrow(1, n - 1, n - 1):fill(7)
    for _, v in ipairs(variants()) do
      local s = ck.sum(x, {variant = v.name})
      assert.equals(n - 1 + 7, s:item(), "sum " .. v.name) -- i64 (issue 32)
      assert.equals(7, ck.max(x, {variant = v.name}):item(), "max " .. v.name)
    end
    -- indices are i64 (issue 32): argmax past 2^31 works
    assert.equals(n - 1, ck.argmax(x):item())
    -- rows whose start lies past element 2^31 (row 3 starts at 2^31 + 2)
    local r = x:narrow(1, 1, 3 * m):reshape(3, m)
    r:narrow(1, 2, 2):narrow(2, 5, 5):fill(9)
    r:narrow(1, 3, 3):narrow(2, m - 1, m - 1):fill(9)
    r:narrow(1, 3, 3):narrow(2, m, m):fill(8)
    for _, v in ipairs(variants()) do
      local mx, i = ck.max(r, 2, {variant = v.name})
      assert.same({1, 5, m - 1}, i:flat(), "argmax rows " .. v.name)
      assert.same({1, 9, 9}, mx:flat(), "max rows " .. v.name)
      assert.same({m, m + 8, m + 8 + 7}, ck.sum(r, 2, {variant = v.name}):flat(), "sum rows " .. v.name)
    end
    x:free()
  end))
end)
