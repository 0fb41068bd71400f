--- The selection paths of the second round of issue 32 (docs/architecture.md, "Selection, masks and assembly"):
--   * nonzero / find / masked_select as one core call (core.compact: count, allocation, selection; on a GPU the
--     count comes back through the check word), with nonzero's subscripts written by the selection itself;
--   * gathers checked through the check word (no flag copy), scatters through device flags set by the op;
--   * dense gathers that move whole source rows as vectors when four neighbouring indices are equal.
-- Host cases check the oracle against plain Lua (they carry the semantics: row-major order, 1-based subscripts,
-- any dtype's "nonzero", views); GPU cases (H.gpu) check the device against the host on fresh random inputs,
-- awkward shapes, views and poisoned outputs, and the error paths (nothing written, the next call clean).
local H = require "spec.helpers"
local ck = H.ck

local function host_table(a) return a:to("host"):totable() end

--- The row-major 1-based subscripts of the nonzero entries of a nested Lua table of `shape`.
local function subs_of(t, shape)
  local out = {}
  local idx = {}
  local function walk(x, d)
    if d > #shape then
      if x ~= 0 and x ~= false then out[#out + 1] = {table.unpack(idx)} end
      return
    end
    for i = 1, shape[d] do idx[d] = i; walk(x[i], d + 1) end
  end
  walk(t, 1)
  return out
end

local function linear(s, shape)
  local p = 0
  for d = 1, #shape do p = p * shape[d] + (s[d] - 1) end
  return p + 1
end

local function rand_mask(shape, density, dev)
  return ck.rand(shape, {device = dev}):lt(density)
end

describe("nonzero / find / masked_select on the host (the oracle, one core call)", function()
  it("give row-major 1-based subscripts and positions for 1 to 8 dims, any dtype, views; -0 is zero, NaN is not", function()
    local shapes = {{7}, {1}, {0}, {5, 6}, {3, 1, 4}, {2, 3, 2, 3}, {2, 1, 2, 1, 2, 1, 2, 2}, {4, 0, 3}}
    for _, shape in ipairs(shapes) do
      for _, density in ipairs {0, 0.3, 1} do
        local m = rand_mask(shape, density, "host")
        local want = subs_of(m:totable(), shape)
        local nz = ck.nonzero(m)
        assert.are.same({#want, #shape}, nz:shape())
        assert.equals("i64", nz:dtype())
        if #want > 0 then assert.are.same(want, nz:totable()) end
        local lin = {}
        for k, s in ipairs(want) do lin[k] = linear(s, shape) end
        local f = ck.find(m)
        assert.are.same({#want}, f:shape())
        if #want > 0 then assert.are.same(lin, f:totable()) end
        -- masked_select: the selected values, in the same order
        local x = ck.randn(shape, {device = "host"}) -- (the GPU host's default device is cuda)
        local xs = x:totable()
        local sel = ck.masked_select(x, m)
        assert.are.same({#want}, sel:shape())
        for k, s in ipairs(want) do
          local v = xs
          for d = 1, #s do v = v[s[d]] end
          assert.equals(v, sel:totable()[k])
        end
      end
    end
    -- a transposed view of a float array: -0 counts as zero, NaN as nonzero
    local a = ck.array({{0, -0.0, 1}, {0 / 0, 0, 2}}, {device = "host"})
    assert.are.same({{1, 2}, {3, 1}, {3, 2}}, ck.nonzero(a:t()):totable())
    assert.are.same({3, 4, 6}, ck.find(a):totable())
    assert.are.same({{1}}, ck.nonzero(ck.scalar(5)):totable()) -- a 0-d array counts as 1-D
    assert.are.same({0, 1}, ck.nonzero(ck.scalar(0)):shape())
  end)
end)

describe("the GPU's compactions against the host", function()
  it("nonzero / find / masked_select: dense and sparse masks of 1-4 dims, views, byte and wider masks", H.gpu(function()
    local cases = {{{1 << 16}, 0.5}, {{(1 << 16) + 3}, 0.01}, {{257, 301}, 0.5}, {{257, 301}, 0.02},
      {{33, 17, 65}, 0.4}, {{3, 5, 7, 11}, 0.5}, {{1000}, 1}, {{1000}, 0}, {{2, 3, 2, 1, 2, 3, 2, 2}, 0.5}}
    for _, c in ipairs(cases) do
      local shape, density = c[1], c[2]
      local mh = rand_mask(shape, density, "host")
      local md = mh:to("cuda")
      local xh = ck.randn(shape)
      local xd = xh:to("cuda")
      local label = ("[%s] density %g"):format(table.concat(shape, "x"), density)
      H.assert_equal(ck.nonzero(md):to("host"), ck.nonzero(mh), "nonzero " .. label)
      H.assert_equal(ck.find(md):to("host"), ck.find(mh), "find " .. label)
      H.assert_equal(ck.masked_select(xd, md):to("host"), ck.masked_select(xh, mh), "masked_select " .. label)
      if #shape == 2 then -- a transposed (strided) mask, and a float mask (the transform-iterator path)
        H.assert_equal(ck.nonzero(md:t()):to("host"), ck.nonzero(mh:t()), "nonzero of a view " .. label)
        local fh = ck.where(mh, xh, 0)
        H.assert_equal(ck.nonzero(fh:to("cuda")):to("host"), ck.nonzero(fh), "nonzero of f32 " .. label)
      end
    end
  end))
end)

describe("gathers on the GPU: whole-row vectors, the check word", function()
  it("gather of rows (equal indices in groups of 4) and of mixed indices matches the host for every element size", H.gpu(function()
    for _, dt in ipairs {"u8", "f16", "f32", "f64", "i64"} do -- element sizes 1, 2, 4, 8
      for _, cols in ipairs {8, 12, 6, 3} do -- multiples of 4 (vector groups) and not
        local R = 37
        local src = ck.randn({R, cols + 1}):to(dt) -- narrowed below by one column: rows start unaligned
        for _, view in ipairs {"whole", "narrowed"} do
          local a = view == "whole" and src:narrow(2, 1, cols):contiguous() or src:narrow(2, 2, cols + 1)
          local rows = ck.randint(1, R, {29, 1}, {dtype = "i64"})
          local ix = rows:expand(29, cols):contiguous()
          local mixed = ck.randint(1, R, {29, cols}, {dtype = "i32"})
          for _, idx in ipairs {ix, mixed} do
            local want = ck.gather(a, 1, idx)
            local got = ck.gather(a:to("cuda"), 1, idx:to("cuda"))
            H.assert_equal(got:to("host"), want, ("gather %s [%dx%d] %s %s"):format(dt, R, cols, view, idx:dtype()))
          end
        end
      end
    end
  end))

  it("a bad index in a vector group is reported as on the host, writes nothing, and the next gather is clean", H.gpu(function()
    local a = ck.randn({16, 8})
    local ix = ck.array({{3}, {17}, {2}}, {dtype = "i64"}):expand(3, 8):contiguous()
    local ok_h, eh = pcall(ck.gather, a, 1, ix)
    local ok_d, ed = pcall(ck.gather, a:to("cuda"), 1, ix:to("cuda"))
    assert.is_false(ok_h)
    assert.is_false(ok_d)
    assert.matches("ck.gather: index 17 at idx%[2, 1%] is out of range for dim 1", ed)
    -- the same words, but for the device the message names
    assert.equals((eh:gsub("^[^:]*:%d+: ", ""):gsub("host:0%]$", "cuda:0]")), (ed:gsub("^[^:]*:%d+: ", "")))
    -- the check word is set again before each launch: the next gathers (both paths) are clean and right
    local good = ck.array({{3}, {16}, {1}}, {dtype = "i64"}):expand(3, 8):contiguous()
    H.assert_equal(ck.gather(a:to("cuda"), 1, good:to("cuda")):to("host"), ck.gather(a, 1, good), "after the error")
    local ok2, e2 = pcall(ck.index_select, a:to("cuda"), 1, ck.array({1, 0, 2}, {dtype = "i32", device = "cuda"}))
    assert.is_false(ok2)
    assert.matches("ck.index_select: index 0 at idx%[2%] is out of range", e2)
    local sel = ck.index_select(a:to("cuda"), 1, ck.array({16, 1}, {dtype = "i32", device = "cuda"}))
    H.assert_equal(sel:to("host"), ck.index_select(a, 1, ck.array({16, 1}, {dtype = "i32"})), "index_select after the error")
    -- scatters keep device flags, set by the op: a bad one writes nothing, then a good one writes
    local z = ck.zeros({4, 3}, {device = "cuda"})
    local ok3 = pcall(z.scatter_, z, 1, ck.array({{1, 5, 2}}, {dtype = "i64", device = "cuda"}), ck.ones({1, 3}, {device = "cuda"}))
    assert.is_false(ok3)
    assert.are.same(ck.zeros({4, 3}):totable(), host_table(z))
    z:scatter_(1, ck.array({{1, 4, 2}}, {dtype = "i64", device = "cuda"}), ck.ones({1, 3}, {device = "cuda"}))
    assert.are.same({{1, 0, 0}, {0, 0, 1}, {0, 0, 0}, {0, 1, 0}}, host_table(z))
  end))

  it("index_select of rows over random shapes and views matches the host (i32 and i64 indices)", H.gpu(function()
    for _ = 1, 12 do
      local r, c = math.random(1, 70), math.random(1, 70)
      local first = math.random(1, 3)
      local a = ck.randn({r, c + 2}):narrow(2, first, first + c - 1)
      local n = math.random(0, 90)
      local ix = ck.randint(1, r, {n}, {dtype = math.random(2) == 1 and "i32" or "i64"})
      H.assert_equal(ck.index_select(a:to("cuda"), 1, ix:to("cuda")):to("host"), ck.index_select(a, 1, ix),
        ("index_select [%dx%d] of %d rows"):format(r, c, n))
      local ic = ck.randint(1, c, {n}, {dtype = "i64"})
      H.assert_equal(ck.index_select(a:to("cuda"), 2, ic:to("cuda")):to("host"), ck.index_select(a, 2, ic),
        ("index_select [%dx%d] of %d columns"):format(r, c, n))
    end
  end))
end)
