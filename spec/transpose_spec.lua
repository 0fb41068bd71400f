--- transpose: the registry, every variant x awkward shapes x dtypes x views against the host reference
-- (exact: a transpose moves bits), views that share storage, contiguous() of permuted views on both
-- backends (ck_copy's tiled fast path on CUDA), and the bench-only memcpy row.
local H = require "spec.helpers"
local ck = H.ck

local DTYPES = {"f32", "f64", "i32"}

local gpu = H.gpu -- pending with the reason where there is no GPU

-- Shapes: 2-D {rows, cols} and one batched 3-D; the 4097 x 4095 case only where there is a GPU.
local SHAPES = {{0, 5}, {5, 0}, {1, 1}, {1, 37}, {37, 1}, {33, 65}, {1000, 37}, {3, 129, 67}}
if H.has_cuda then SHAPES[#SHAPES + 1] = {4097, 4095} end

local function sstr(s) return "[" .. table.concat(s, "x") .. "]" end

local function tshape(s)
  local t = {table.unpack(s)}
  t[#t - 1], t[#t] = s[#s], s[#s - 1]
  return t
end

local function numel(s)
  local n = 1
  for _, d in ipairs(s) do n = n * d end
  return n
end

--- The array to transpose, as a view of the named kind, with logical shape `shape`:
-- "contiguous"; "sliced" (a window of a larger array: row and column strides differ from the shape);
-- "transposed" (the last two dims of a contiguous array swapped: unit stride on the row dim).
local function make_input(kind, shape, dtype, device)
  local nd = #shape
  if kind == "contiguous" then return H.rand(shape, dtype, device) end
  if kind == "sliced" then
    local big = {table.unpack(shape)}
    big[nd - 1], big[nd] = shape[nd - 1] + 3, shape[nd] + 5
    local a = H.rand(big, dtype, device)
    local v = a:narrow(nd - 1, 2, shape[nd - 1] + 1)
    return shape[nd] > 0 and v:narrow(nd, 4, shape[nd] + 3) or v:narrow(nd, 1, 0)
  end
  local a = H.rand(tshape(shape), dtype, device)
  return a:transpose(nd - 1, nd)
end

--- Independent oracle on the host: the transpose of the last two dims by table indexing.
local function lua_transpose(x)
  local t = x:to("host"):totable()
  local function tr2(m, rows, cols)
    local r = {}
    for j = 1, cols do
      r[j] = {}
      for i = 1, rows do r[j][i] = m[i][j] end
    end
    return r
  end
  local s = x:shape()
  if #s == 2 then return ck.array(tr2(t, s[1], s[2]), {dtype = x:dtype()}) end
  local out = {}
  for b = 1, s[1] do out[b] = tr2(t[b], s[2], s[3]) end
  return ck.array(out, {dtype = x:dtype()})
end

describe("transpose registry", function()
  it("lists the ladder: geam (id 0) then the steps by id; the memcpy bound is not a variant", function()
    local v = ck.variants("transpose")
    assert.is_true(#v >= 9)
    assert.are.equal("geam", v[1].name)
    for i = 1, #v do
      assert.are.equal(i - 1, v[i].id)
      assert.are_not.equal("memcpy", v[i].name)
    end
  end)

  it("refuses unknown variant names and ids on every device, listing the ladder", function()
    for _, dev in ipairs(H.devices()) do
      local x = H.rand({4, 6}, "f32", dev)
      for _, req in ipairs {"memcpy", "bogus", 99} do
        local ok, err = pcall(ck.transpose, x, {variant = req})
        assert.is_false(ok, dev .. " " .. req)
        assert.matches("transpose: unknown variant '" .. req .. "'", tostring(err), 1, true)
        assert.matches("8 aligned", tostring(err), 1, true)
      end
    end
  end)

  it("names op, shape and dtype in its errors", function()
    for _, dev in ipairs(H.devices()) do
      local ok, err = pcall(ck.transpose, H.rand({7}, "f32", dev))
      assert.is_false(ok)
      assert.matches("transpose", err)
      assert.matches("%[7%]", err)
      ok, err = pcall(ck.transpose, H.rand({3, 4}, "f64", dev), {out = ck.empty(3, 4, {dtype = "f64", device = dev})})
      assert.is_false(ok)
      assert.matches("out has shape [3x4] but the result is [4x3]", err, 1, true)
      assert.matches("f64[3x4] " .. dev, err, 1, true)
    end
  end)

  it("writes into an out that shares storage with x through a temporary (the one overlap rule)", function()
    for _, dev in ipairs(H.devices()) do
      local a = H.rand({5, 5}, "f32", dev)
      local want = a:t():contiguous():flat()
      ck.transpose(a, {out = a}) -- out is x itself: read all of x before writing
      assert.are.same(want, a:flat())
      local c = H.rand({4, 4}, "f64", dev)
      local want_c = c:flat()
      ck.transpose(c, {out = c:t()}) -- out(i, j) lives at c[j][i] and receives x(j, i) = c[j][i]: c is unchanged
      assert.are.same(want_c, c:flat())
    end
  end)
end)

describe("transpose on the host", function()
  -- every real dtype of 2, 4 and 8 bytes (CK_DT_WORDS) takes ck.transpose; others are refused by name
  it("takes i16, u32 and i64 (bits moved), refuses u8, c64 and c128", function()
    for _, dt in ipairs {"i16", "u32", "i64"} do
      local x = (H.rand({5, 7}, "f64", "host") * 3000):floor():to(dt)
      local got = ck.transpose(x)
      assert.are.same({7, 5}, got:shape())
      assert.is_true(ck.equal(ck.view_as_bytes(got), ck.view_as_bytes(x:t():contiguous())), dt)
    end
    for _, dt in ipairs {"u8", "c64", "c128"} do
      local ok, e = pcall(ck.transpose, ck.zeros({3, 4}, {dtype = dt, device = "host"}))
      assert.is_false(ok)
      assert.truthy(tostring(e):find(dt, 1, true) and tostring(e):find("transpose_spec.lua", 1, true), tostring(e))
    end
  end)

  for _, dt in ipairs(DTYPES) do
    for _, shape in ipairs(SHAPES) do
      if numel(shape) <= 40000 then
        for _, kind in ipairs {"contiguous", "sliced", "transposed"} do
          it(("%s %s %s equals the indexed transpose"):format(dt, sstr(shape), kind), function()
            local x = make_input(kind, shape, dt, "host")
            local out = H.poison(ck.empty(tshape(shape), {dtype = dt, device = "host"}))
            local got = ck.transpose(x, {out = out})
            assert.are.equal(out, got)
            assert.are.equal("host", ck.last_ran().name)
            assert.is_true(got:is_contiguous())
            if numel(shape) > 0 then
              H.assert_equal(got, lua_transpose(x), ("%s %s %s"):format(dt, sstr(shape), kind))
            else
              assert.are.same(tshape(shape), got:shape())
            end
          end)
        end
      end
    end
  end
end)

describe("transpose variants on CUDA", function()
  local variants = {}
  for _, v in ipairs(ck.variants("transpose")) do
    if not v.bench_only then variants[#variants + 1] = v end
  end

  -- One input and its host reference per (dtype, shape, view), shared by the variants.
  local cache = {}
  local function case(dt, shape, kind)
    local key = dt .. sstr(shape) .. kind
    if not cache[key] then
      local x = make_input(kind, shape, dt, "cuda")
      cache[key] = {x = x, ref = ck.transpose(x:to("host")):cuda()}
    end
    return cache[key].x, cache[key].ref
  end

  -- Exact comparison; big arrays are compared on the GPU (count of elements that differ, NaN included).
  local function same(got, ref, label)
    if got:numel() <= 200000 then return H.assert_equal(got, ref, label) end
    assert.are.same(ref:shape(), got:shape(), label)
    local bad = ck.sum(ck.ne(got, ref):to("f64")):item()
    assert.are.equal(0, bad, label .. ": elements differ from the host reference")
  end

  for _, v in ipairs(variants) do
    for _, dt in ipairs(DTYPES) do
      it(("%s %s: shapes x views equal the host reference (poisoned out)"):format(v.name, dt), gpu(function()
        for _, shape in ipairs(SHAPES) do
          for _, kind in ipairs {"contiguous", "sliced", "transposed"} do
            local label = ("%s %s %s %s"):format(v.name, dt, sstr(shape), kind)
            local x, ref = case(dt, shape, kind)
            local out = H.poison(ck.empty(tshape(shape), {dtype = dt, device = "cuda"}))
            ck.transpose(x, {out = out, variant = v.name})
            local ran = ck.last_ran()
            if ran.name ~= v.name then
              -- only geam declines cases (floats with a unit inner stride); the dispatcher says so
              assert.are.equal("geam", v.name, label .. " fell back to " .. ran.name)
              assert.matches("geam", ran.note, label)
            end
            if v.name == "geam" and dt == "i32" then assert.are_not.equal("geam", ran.name, label) end
            same(out, ref, label .. " (ran " .. ran.name .. ")")
            out:free()
            local alloc = ck.transpose(x, {variant = v.id}) -- allocated output, by id
            same(alloc, ref, label .. " allocated")
            alloc:free()
          end
        end
      end))
    end
  end

  it("writes into a strided out view and leaves the rest alone", gpu(function()
    for _, v in ipairs(variants) do
      local x = H.rand({70, 45}, "f32", "cuda")
      local big = H.poison(ck.empty(50, 80, {device = "cuda"}))
      local win = big:narrow(1, 3, 47):narrow(2, 6, 75)
      ck.transpose(x, {out = win, variant = v.name})
      H.assert_equal(win, ck.transpose(x:host()), v.name)
      local rest = big:host():totable()
      assert.is_true(rest[1][1] ~= rest[1][1] and rest[50][80] ~= rest[50][80], v.name .. " wrote outside out")
    end
  end))
end)

describe("transpose views", function()
  for _, dev in ipairs(H.devices()) do
    it(dev .. ": a:t() is a view that shares storage with a", function()
      local a = ck.zeros(3, 4, {device = dev})
      local at = a:t()
      assert.are.same({4, 3}, at:shape())
      assert.are.same({1, 4}, at:strides())
      assert.is_false(at:is_contiguous())
      at:narrow(1, 2, 2):fill(7) -- row 2 of a:t() is column 2 of a
      local t = a:totable()
      for i = 1, 3 do
        for j = 1, 4 do assert.are.equal(j == 2 and 7 or 0, t[i][j]) end
      end
      local m = ck.transpose(a) -- materialised: no longer shares storage
      m:fill(1)
      assert.are.equal(0, a:totable()[1][1])
    end)
  end
end)

describe("contiguous() of permuted views", function()
  local function perms(n)
    local out = {}
    local function rec(p, used)
      if #p == n then out[#out + 1] = {table.unpack(p)} return end
      for i = 1, n do
        if not used[i] then
          used[i] = true
          p[#p + 1] = i
          rec(p, used)
          p[#p] = nil
          used[i] = false
        end
      end
    end
    rec({}, {})
    return out
  end

  -- {40, 64, 36}: the four permutations that move its last dim take the tiled transpose path on CUDA (the pairs 40 x
  -- 36 and 64 x 36 fill 35% and 56% of their 64 x 64 tiles; the other two are a memcpy and an elementwise copy with
  -- the last dim in place); {9, 10, 11}-like shapes (tiles mostly idle) and {2, 3, 5} ones (dims shorter than 8) fall
  -- back to the elementwise copy; all must agree with the host bit for bit.
  local CASES = {{{40, 64, 36}, perms(3)}, {{9, 10, 11}, perms(3)}, {{2, 3, 5}, perms(3)}, {{3, 9, 10, 12}, perms(4)},
                 {{2, 3, 4, 5}, perms(4)}}
  for _, dt in ipairs(DTYPES) do
    for _, case in ipairs(CASES) do
      local shape, ps = case[1], case[2]
      it(("%s %s: every permutation, host == indexed, cuda == host"):format(dt, sstr(shape)), function()
        local x = H.rand(shape, dt, "host")
        local xt = x:totable()
        local xc = H.has_cuda and x:cuda() or nil
        for _, p in ipairs(ps) do
          local label = ("%s %s permute(%s)"):format(dt, sstr(shape), table.concat(p, ","))
          local hv = x:permute(table.unpack(p)):contiguous()
          assert.is_true(hv:is_contiguous())
          -- spot-check the host result against direct indexing
          local ht, s = hv:totable(), hv:shape()
          for _ = 1, 20 do
            local idx = {}
            for d = 1, #s do idx[d] = math.random(s[d]) end
            local src = {}
            for d = 1, #s do src[p[d]] = idx[d] end
            local a, b = ht, xt
            for d = 1, #s do a, b = a[idx[d]], b[src[d]] end
            assert.are.equal(b, a, label)
          end
          if xc then
            local cv = H.poison(ck.empty(s, {dtype = dt, device = "cuda"}))
            cv:copy_(xc:permute(table.unpack(p)))
            H.assert_equal(cv, hv, label .. " copy_")
            H.assert_equal(xc:permute(table.unpack(p)):contiguous(), hv, label .. " contiguous")
          end
        end
      end)
    end
  end

  -- The transpose ladder takes every dtype of 2, 4 and 8 bytes (CK_DT_WORDS: its kernels move bits), bit for
  -- bit: i64 values whose bits read as f64 signalling NaNs and infinities must survive (geam would quiet them).
  it("cuda: i64, u32, i16, u8 and bool transposes move bits (the tiled path and the fallback), = host", gpu(function()
    local y = (ck.rand({70, 90}, {dtype = "f64", device = "host"}) * 1e6):floor():to("i64")
    assert.is_true(ck.equal(ck.transpose(y:to("cuda")):host(), ck.transpose(y)), "ck.transpose i64")
    local specials = {0x7FF0000000000001, 0x7FF8000000000000, -1, math.mininteger, math.maxinteger, 0x7FF0000000000000}
    for _, dt in ipairs {"i64", "u32", "i16", "u8", "bool"} do
      for _, shape in ipairs {{40, 33}, {3, 9, 17}, {1000, 9}, {5, 3}} do
        local n = 1
        for _, d in ipairs(shape) do n = n * d end
        local vals = {}
        for i = 1, n do vals[i] = math.random(-30000, 30000) end
        local x
        if dt == "i64" then
          for q, v in ipairs(specials) do vals[q * 7] = v end
          x = ck.array(vals, {dtype = "i64", device = "host"}):reshape(shape)
        else
          x = ck.array(vals, {dtype = "i64", device = "host"}):reshape(shape):to(dt)
        end
        local xc = x:cuda()
        for _, p in ipairs(perms(#shape)) do
          local label = ("%s %s permute(%s)"):format(dt, sstr(shape), table.concat(p, ","))
          local want = x:permute(table.unpack(p)):contiguous()
          local got = xc:permute(table.unpack(p)):contiguous()
          assert.is_true(ck.equal(ck.view_as_bytes(got:host()), ck.view_as_bytes(want)), label)
        end
      end
    end
  end))
end)
