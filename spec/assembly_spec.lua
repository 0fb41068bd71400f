--- Assembly (issue 32): ck.cat, stack, split, chunk, tile, flip, roll, tril, triu, diag, pad against plain-Lua
-- oracles over :totable(), on every device present, for every dtype, with fresh random inputs (never zeros),
-- awkward shapes (0-size dims, one element, 1-D, 7x5x3, 4-D) and strided views as inputs (transposed,
-- narrowed). Every result is a copy of input values, so comparisons are exact (NaN equal to NaN; f16 and bf16
-- read through f64, which holds them exactly). The rule for inputs on different devices runs in a child
-- process with CUKERN_HOST_DEVICES=2 (spec/assembly_child.lua).
local H = require "spec.helpers"
local ck = H.ck

local DTYPES = {"f32", "f64", "i32", "f16", "bf16"}
local FLOAT = {f32 = true, f64 = true, f16 = true, bf16 = true}

-- ---------------------------------------------------------------- the oracle's arrays: {shape, v (row-major)}

local function lua_of(a)
  local shape, v = a:shape(), {}
  local function walk(t, d)
    if d > #shape then v[#v + 1] = t; return end
    for i = 1, shape[d] do walk(t[i], d + 1) end
  end
  walk(a:to("f64"):totable(), 1)
  return {shape = {table.unpack(shape)}, v = v}
end

local function strides_of(shape)
  local s, acc = {}, 1
  for d = #shape, 1, -1 do s[d] = acc; acc = acc * shape[d] end
  return s
end

local function at(L, idx)
  L.st = L.st or strides_of(L.shape)
  local f = 1
  for d = 1, #L.shape do f = f + (idx[d] - 1) * L.st[d] end
  return L.v[f]
end

--- The array of `shape` whose element at idx (1-based, reused between calls) is f(idx).
local function build(shape, f)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local v, idx = {}, {}
  for d = 1, #shape do idx[d] = 1 end
  for k = 1, n do
    v[k] = f(idx)
    for d = #shape, 1, -1 do
      idx[d] = idx[d] + 1
      if idx[d] <= shape[d] then break end
      idx[d] = 1
    end
  end
  return {shape = {table.unpack(shape)}, v = v}
end

local function sh(s) return "[" .. table.concat(s, "x") .. "]" end

--- got (an array) holds exactly want's shape and values.
local function check(got, want, label)
  assert(sh(got:shape()) == sh(want.shape), ("%s: shape %s, expected %s (seed %d)"):format(label, sh(got:shape()),
    sh(want.shape), H.seed))
  local g = lua_of(got)
  for i = 1, #want.v do
    local x, y = g.v[i], want.v[i]
    if not (x == y or (x ~= x and y ~= y)) then
      error(("%s: flat index %d: got %.17g, expected %.17g (seed %d)"):format(label, i, x, y, H.seed), 2)
    end
  end
end

-- ---------------------------------------------------------------- inputs

local function rnd(shape, dt, dev)
  if FLOAT[dt] then return ck.randn(shape, {dtype = dt, device = dev}) end
  return ck.randint(1, 1000, shape, {dtype = dt, device = dev})
end

local KINDS = {"contiguous", "transposed", "narrowed"}
--- A fresh random array of `shape`: contiguous, a transposed view (memory order reversed), or a view narrowed
-- inside a larger array on every dim (offset, gaps between rows).
local function gen(shape, dt, dev, kind)
  local nd = #shape
  if kind == "transposed" and nd >= 2 then
    local rev, perm = {}, {}
    for d = 1, nd do rev[d] = shape[nd + 1 - d]; perm[d] = nd + 1 - d end
    return rnd(rev, dt, dev):permute(table.unpack(perm))
  elseif kind == "narrowed" and nd >= 1 then
    local big = {}
    for d = 1, nd do big[d] = shape[d] + 2 end
    local x = rnd(big, dt, dev)
    for d = 1, nd do x = x:narrow(d, 2, shape[d] + 1) end
    return x
  end
  return rnd(shape, dt, dev)
end

local SHAPES = {{0}, {1}, {6}, {1, 1}, {4, 6}, {0, 3}, {3, 0}, {7, 5, 3}, {2, 3, 4, 2}}

local function copy_shape(s) return {table.unpack(s)} end

-- NumPy/torch promotion of the dtypes here (docs/api.md): f64 wins; f32 over i32 and the halves; f16 with
-- bf16 gives f32; a half over i32.
local RANK = {i32 = 0, f16 = 1, bf16 = 1, f32 = 2, f64 = 3}
local function promote(a, b)
  if a == b then return a end
  if RANK[a] == RANK[b] then return "f32" end
  return RANK[a] > RANK[b] and a or b
end

for _, dev in ipairs(H.devices()) do
  describe("assembly on " .. dev .. " (seed " .. H.seed .. ")", function()
    it("ck.cat joins along any dim, for every dtype, shape and layout; empty parts; one input is a copy", function()
      for _, dt in ipairs(DTYPES) do
        for _, shape in ipairs(SHAPES) do
          local nd = #shape
          for d = 1, nd do
            local list, L, sizes = {}, {}, {shape[d], math.random(0, 3), shape[d]}
            for i = 1, 3 do
              local s = copy_shape(shape)
              s[d] = sizes[i]
              list[i] = gen(s, dt, dev, KINDS[i])
              L[i] = lua_of(list[i])
            end
            local out_shape = copy_shape(shape)
            out_shape[d] = sizes[1] + sizes[2] + sizes[3]
            local want = build(out_shape, function(idx)
              local j, k = idx[d], 1
              while j > sizes[k] do j = j - sizes[k]; k = k + 1 end
              local src = {table.unpack(idx)}
              src[d] = j
              return at(L[k], src)
            end)
            local label = ("cat %s %s dim %d"):format(dt, sh(shape), d)
            local r = ck.cat(list, d)
            check(r, want, label)
            assert.equals(dt, r:dtype())
            assert.equals(dev .. ":0", r:device())
            assert.is_true(r:is_contiguous())
            check(ck.cat(list, d - nd - 1), want, label .. " (negative dim)")
            if d == 1 then check(ck.cat(list), want, label .. " (default dim)") end
          end
        end
      end
      local a = gen({3, 4}, "f32", dev, "transposed")
      local c = ck.cat({a})
      check(c, lua_of(a), "cat of one array")
      assert.are_not.equal(a:storage_id(), c:storage_id())
    end)

    it("ck.cat and ck.stack promote mixed dtypes as elementwise ops do, or take {dtype =}", function()
      for _, d1 in ipairs(DTYPES) do
        for _, d2 in ipairs(DTYPES) do
          local x, y = gen({2, 3}, d1, dev, "contiguous"), gen({2, 3}, d2, dev, "transposed")
          local rdt = promote(d1, d2)
          assert.equals(rdt, (x + y):dtype(), "the oracle's promotion agrees with a + b")
          local r = ck.cat({x, y}, 2)
          assert.equals(rdt, r:dtype(), d1 .. " with " .. d2)
          check(r, lua_of(ck.cat({x:to(rdt), y:to(rdt)}, 2)), "cat " .. d1 .. " " .. d2)
          local s = ck.stack({x, y}, 1, {dtype = "f64"})
          assert.equals("f64", s:dtype())
          local X, Y = lua_of(x), lua_of(y)
          check(s, build({2, 2, 3}, function(i) return at(i[1] == 1 and X or Y, {i[2], i[3]}) end), "stack f64")
        end
      end
    end)

    it("ck.stack inserts a new dim anywhere, for every dtype, shape and layout", function()
      for _, dt in ipairs(DTYPES) do
        for _, shape in ipairs({{}, table.unpack(SHAPES)}) do
          local nd = #shape
          local list, L = {}, {}
          for i = 1, 3 do list[i] = gen(shape, dt, dev, KINDS[i]); L[i] = lua_of(list[i]) end
          for d = 1, nd + 1 do
            local out_shape = copy_shape(shape)
            table.insert(out_shape, d, 3)
            local want = build(out_shape, function(idx)
              local src = {table.unpack(idx)}
              local k = table.remove(src, d)
              return at(L[k], src)
            end)
            local label = ("stack %s %s dim %d"):format(dt, sh(shape), d)
            check(ck.stack(list, d), want, label)
            check(ck.stack(list, d - nd - 2), want, label .. " (negative dim)")
          end
        end
      end
    end)

    it("ck.split and ck.chunk give views covering the dim (torch semantics)", function()
      for _, dt in ipairs(DTYPES) do
        for _, shape in ipairs(SHAPES) do
          local a = gen(shape, dt, dev, KINDS[math.random(3)])
          local A = lua_of(a)
          for d = 1, #shape do
            local n = shape[d]
            local function check_parts(parts, sizes, label)
              assert.equals(#sizes, #parts, label .. ": number of parts")
              local off = 0
              for p, len in ipairs(sizes) do
                local s = copy_shape(shape)
                s[d] = len
                local o = off
                check(parts[p], build(s, function(idx)
                  local src = {table.unpack(idx)}
                  src[d] = src[d] + o
                  return at(A, src)
                end), label .. " part " .. p)
                assert.equals(a:storage_id(), parts[p]:storage_id(), label .. ": a view")
                off = off + len
              end
            end
            for size = 1, n + 1 do
              local sizes = {}
              for off = 0, n - 1, size do sizes[#sizes + 1] = math.min(size, n - off) end
              if n == 0 then sizes = {0} end
              check_parts(ck.split(a, size, d), sizes, ("split %s %s size %d dim %d"):format(dt, sh(shape), size, d))
            end
            local sizes, left = {}, n
            while left > 0 do sizes[#sizes + 1] = math.random(0, left); left = left - sizes[#sizes] end
            sizes[#sizes + 1] = 0
            check_parts(ck.split(a, sizes, -(#shape - d + 1)), sizes, "split with sizes")
            for chunks = 1, n + 2 do
              local want = {}
              if n == 0 then
                for i = 1, chunks do want[i] = 0 end
              else
                local s = math.ceil(n / chunks)
                for off = 0, n - 1, s do want[#want + 1] = math.min(s, n - off) end
              end
              check_parts(ck.chunk(a, chunks, d), want, ("chunk %s %s n %d dim %d"):format(dt, sh(shape), chunks, d))
            end
          end
        end
      end
      assert.equals(3, #ck.split(ck.rand(7), 3)) -- 3, 3, 1
      assert.equals(3, #ck.chunk(ck.rand(5), 4)) -- ceil(5/4) = 2: 2, 2, 1 (torch.chunk)
    end)

    it("ck.tile repeats like NumPy's tile (reps longer or shorter than the dims, 0 reps, > 8 view dims)", function()
      local cases = {}
      for _, shape in ipairs(SHAPES) do
        cases[#cases + 1] = {shape, {2}}
        cases[#cases + 1] = {shape, 3}
        local reps = {}
        for i = 1, math.random(1, #shape + 1) do reps[i] = math.random(0, 3) end
        cases[#cases + 1] = {shape, reps}
      end
      cases[#cases + 1] = {{}, {2, 3}}
      cases[#cases + 1] = {{2, 3, 2, 2, 3}, {3, 2, 5, 2, 2}} -- 5 dims + 5 tiled > 8: doubling copies
      cases[#cases + 1] = {{2, 1, 3}, {1, 1, 2, 4, 1}}
      for _, dt in ipairs(DTYPES) do
        for _, c in ipairs(cases) do
          local shape, reps = c[1], c[2]
          local a = gen(shape, dt, dev, KINDS[math.random(3)])
          local A = lua_of(a)
          local R = type(reps) == "number" and {reps} or reps
          local D = math.max(#shape, #R)
          local S, RR, out_shape = {}, {}, {}
          for i = 1, D do
            S[i] = i > D - #shape and shape[i - (D - #shape)] or 1
            RR[i] = i > D - #R and R[i - (D - #R)] or 1
            out_shape[i] = S[i] * RR[i]
          end
          local want = build(out_shape, function(idx)
            local src = {}
            for i = D - #shape + 1, D do src[#src + 1] = (idx[i] - 1) % S[i] + 1 end
            return at(A, src)
          end)
          check(ck.tile(a, reps), want, ("tile %s %s reps %s"):format(dt, sh(shape),
            type(reps) == "number" and reps or sh(reps)))
        end
      end
    end)

    it("ck.flip reverses any dims (short dims by slices, long ones by digit passes, padded or not)", function()
      local shapes = {{0}, {1}, {6}, {17}, {64}, {1000}, {4, 6}, {17, 3}, {3, 70}, {64, 2}, {7, 5, 3}, {2, 37, 3},
        {0, 3}, {2, 3, 4, 2}}
      for _, dt in ipairs(DTYPES) do
        for _, shape in ipairs(shapes) do
          local nd = #shape
          local a = gen(shape, dt, dev, KINDS[math.random(3)])
          local A = lua_of(a)
          local function want(dims)
            local f = {}
            for _, d in ipairs(dims) do f[d] = true end
            return build(shape, function(idx)
              local src = {}
              for d = 1, nd do src[d] = f[d] and shape[d] + 1 - idx[d] or idx[d] end
              return at(A, src)
            end)
          end
          local all = {}
          for d = 1, nd do all[d] = d end
          local label = ("flip %s %s"):format(dt, sh(shape))
          check(ck.flip(a), want(all), label .. " all dims")
          for d = 1, nd do
            check(ck.flip(a, d), want({d}), label .. " dim " .. d)
            check(ck.flip(a, {d - nd - 1}), want({d}), label .. " dims {" .. (d - nd - 1) .. "}")
          end
          if nd >= 2 then check(ck.flip(a, {nd, 1}), want({1, nd}), label .. " two dims") end
          check(ck.flip(a, {}), A, label .. " no dims")
        end
      end
      check(ck.flip(ck.scalar(3)), {shape = {}, v = {3}}, "flip of a 0-d array")
    end)

    it("ck.roll shifts along dims (several, repeated, negative, past the size) or the flattened array", function()
      for _, dt in ipairs(DTYPES) do
        for _, shape in ipairs({{}, table.unpack(SHAPES)}) do
          local nd = #shape
          local a = gen(shape, dt, dev, KINDS[math.random(3)])
          local A = lua_of(a)
          local total = #A.v
          local label = ("roll %s %s"):format(dt, sh(shape))
          for _ = 1, 3 do
            local s = math.random(-2 * total - 2, 2 * total + 2)
            check(ck.roll(a, s), {shape = shape, v = (function()
              local v = {}
              for i = 1, total do v[i] = A.v[(i - 1 - s) % total + 1] end
              return v
            end)()}, label .. " flattened by " .. s)
          end
          if nd >= 1 then
            local dims, shifts = {}, {}
            for i = 1, math.random(1, nd + 1) do dims[i] = math.random(1, nd); shifts[i] = math.random(-9, 9) end
            local acc = {}
            for d = 1, nd do acc[d] = 0 end
            for i, d in ipairs(dims) do acc[d] = acc[d] + shifts[i] end
            local want = build(shape, function(idx)
              local src = {}
              for d = 1, nd do src[d] = (idx[d] - 1 - acc[d]) % shape[d] + 1 end
              return at(A, src)
            end)
            check(ck.roll(a, shifts, dims), want, label .. " dims " .. sh(dims) .. " by " .. sh(shifts))
            local d = math.random(1, nd)
            local s = math.random(-9, 9)
            check(ck.roll(a, s, d - nd - 1), build(shape, function(idx)
              local src = {table.unpack(idx)}
              src[d] = (idx[d] - 1 - s) % shape[d] + 1
              return at(A, src)
            end), label .. " dim " .. d .. " by " .. s)
          end
        end
      end
    end)

    it("ck.tril and ck.triu keep exact values (NaN, inf included) and write exact +0 elsewhere, batched", function()
      local shapes = {{1, 1}, {4, 6}, {6, 4}, {1, 7}, {7, 1}, {5, 5}, {0, 3}, {3, 0}, {2, 3, 4, 5}, {3, 1, 2}, {40, 3}}
      for _, dt in ipairs(DTYPES) do
        for _, shape in ipairs(shapes) do
          local nd = #shape
          local m, n = shape[nd - 1], shape[nd]
          local a = gen(shape, dt, dev, KINDS[math.random(3)])
          if FLOAT[dt] and m * n > 1 then -- a NaN and an inf on both sides of the diagonal
            local lo, hi = {}, {}
            for d = 1, nd - 2 do lo[d], hi[d] = 1, 1 end
            lo[nd - 1], lo[nd] = m, 1
            hi[nd - 1], hi[nd] = 1, n
            a[lo] = 0 / 0
            a[hi] = 1 / 0
          end
          local A = lua_of(a)
          for k = -m - 1, n + 1 do
            for _, lower in ipairs {true, false} do
              local want = build(shape, function(idx)
                local diff = idx[nd] - idx[nd - 1]
                local keep = lower and diff <= k or (not lower and diff >= k)
                return keep and at(A, idx) or 0
              end)
              local name = lower and "tril" or "triu"
              local r = (lower and ck.tril or ck.triu)(a, k)
              local label = ("%s %s %s k %d"):format(name, dt, sh(shape), k)
              check(r, want, label)
              local g = lua_of(r)
              for i, v in ipairs(want.v) do
                if v == 0 then assert(1 / g.v[i] > 0, label .. ": a zero that is -0 at " .. i) end
              end
            end
          end
          local r = ck.tril(a)
          check(r, build(shape, function(idx) return idx[nd] <= idx[nd - 1] and at(A, idx) or 0 end), "tril default k")
        end
      end
    end)

    it("ck.diag makes a matrix from a 1-D array and takes diagonal k of a 2-D one", function()
      for _, dt in ipairs(DTYPES) do
        for _, shape in ipairs({{0}, {1}, {5}, {16}}) do
          local a = gen(shape, dt, dev, KINDS[math.random(3)])
          local A = lua_of(a)
          local n = shape[1]
          for k = -3, 3 do
            local N = n + math.abs(k)
            check(ck.diag(a, k), build({N, N}, function(idx)
              local i, j = idx[1], idx[2]
              if j - i ~= k then return 0 end
              return A.v[k >= 0 and i or j]
            end), ("diag %s %s k %d"):format(dt, sh(shape), k))
          end
        end
        for _, shape in ipairs({{4, 6}, {6, 4}, {1, 1}, {5, 5}, {0, 3}, {3, 0}, {1, 7}}) do
          for _, kind in ipairs(KINDS) do
            local a = gen(shape, dt, dev, kind)
            local A = lua_of(a)
            local m, n = shape[1], shape[2]
            for k = -m - 1, n + 1 do
              local L = math.max(0, k >= 0 and math.min(m, n - k) or math.min(m + k, n))
              check(ck.diag(a, k), build({L}, function(idx)
                local i = idx[1]
                return k >= 0 and at(A, {i, i + k}) or at(A, {i - k, i})
              end), ("diag %s %s %s k %d"):format(dt, sh(shape), kind, k))
            end
            if m * n > 0 then check(ck.diag(a), build({math.min(m, n)}, function(i) return at(A, {i[1], i[1]}) end), "diag default") end
          end
        end
      end
    end)

    it("ck.pad surrounds with a constant (per-dim pairs or one width; 0-size dims)", function()
      for _, dt in ipairs(DTYPES) do
        for _, shape in ipairs({{}, table.unpack(SHAPES)}) do
          local nd = #shape
          local a = gen(shape, dt, dev, KINDS[math.random(3)])
          local A = lua_of(a)
          local widths, W = {}, {}
          for d = 1, nd do widths[d] = {math.random(0, 2), math.random(0, 2)} end
          local value = FLOAT[dt] and 0.5 or math.random(-5, 5)
          for _, w in ipairs({widths, 1, 0}) do
            for d = 1, nd do W[d] = type(w) == "number" and {w, w} or w[d] end
            local out_shape = {}
            for d = 1, nd do out_shape[d] = shape[d] + W[d][1] + W[d][2] end
            local want = build(out_shape, function(idx)
              local src = {}
              for d = 1, nd do
                src[d] = idx[d] - W[d][1]
                if src[d] < 1 or src[d] > shape[d] then return value end
              end
              return at(A, src)
            end)
            check(ck.pad(a, w, value), want, ("pad %s %s"):format(dt, sh(shape)))
          end
          if nd > 0 then
            local want = build(shape, function(idx) return at(A, idx) end)
            check(ck.pad(a, 0), want, "pad by 0")
          end
        end
      end
      check(ck.pad(ck.array({1, 2}), {{1, 1}}), {shape = {4}, v = {0, 1, 2, 0}}, "default value 0")
    end)
  end)
end

describe("assembly errors", function()
  local function err(f, ...)
    local ok, e = pcall(f, ...)
    assert(not ok, "expected an error")
    return tostring(e)
  end
  it("name the function, the shapes, the dims and the device; nothing is made", function()
    local a, b = ck.rand(3, 4), ck.rand(2, 5)
    assert.matches("ck.cat: list%[2%] is %[2x5%] and list%[1%] is %[3x4%]; the shapes must agree except along dim 1",
      err(ck.cat, {a, b}))
    assert.matches("ck.cat: list%[2%] must be a cukern array", err(ck.cat, {a, "x"}))
    assert.matches("ck.cat: the list is empty", err(ck.cat, {}))
    assert.matches("ck.cat: dim out of range: 3 for a 2%-D array", err(ck.cat, {a, a}, 3))
    assert.matches("ck.cat: unknown option \"bogus\"", err(ck.cat, {a}, 1, {bogus = 1}))
    assert.matches("ck.stack: list%[2%] is %[2x5%] and list%[1%] is %[3x4%]; stack needs arrays of one shape",
      err(ck.stack, {a, b}))
    assert.matches("ck.stack: dim out of range: 4 for stacking 2%-D arrays %(1..3", err(ck.stack, {a, a}, 4))
    assert.matches("ck.split: the sizes {1, 1} sum to 2 but dim 1 has size 3", err(ck.split, a, {1, 1}))
    assert.matches("ck.split: the size must be an integer >= 1", err(ck.split, a, 0))
    assert.matches("ck.chunk: the number of chunks must be an integer >= 1", err(ck.chunk, a, 0))
    assert.matches("ck.tile: reps%[1%] must be an integer >= 0, got %-1", err(ck.tile, a, {-1, 2}))
    assert.matches("ck.flip: dim 1 is listed twice", err(ck.flip, a, {1, -2}))
    assert.matches("ck.roll: 2 shifts for 3 dims", err(ck.roll, a, {1, 2}, {1, 2, 1}))
    assert.matches("ck.tril: needs an array of at least 2 dims", err(ck.tril, ck.rand(3)))
    assert.matches("ck.triu: k must be an integer, got 0.5", err(ck.triu, a, 0.5))
    assert.matches("ck.diag: takes a 1%-D array", err(ck.diag, ck.rand(2, 2, 2)))
    assert.matches("ck.pad: widths%[2%] must be a pair {before, after}", err(ck.pad, a, {{1, 1}, 2}))
    assert.matches("ck.pad: widths has 1 entries for a 2%-D array", err(ck.pad, a, {{1, 1}}))
    assert.matches("ck.pad: takes at most 3 arguments, got 4", err(ck.pad, a, 1, 0, 1))
  end)

  it("on several host devices (child process, CUKERN_HOST_DEVICES=2): one device, or the :to that fixes it", function()
    local lua = os.getenv("LUA") or "lua5.4"
    local res = H.child_checks(("env CUKERN_HOST_DEVICES=2 %s spec/assembly_child.lua"):format(lua), 120)
    assert(res.done and res.rc, "child failed:\n" .. res.out)
    for _, c in ipairs(res.checks) do assert(c.status == "ok", c.name .. ": " .. tostring(c.why)) end
    assert.is_true(#res.checks >= 3)
  end)
end)
