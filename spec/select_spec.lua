--- Selection, masks and assembly (issue 32): every index op on every device against a plain-Lua oracle, over
-- every dtype (elements move by size), views (transposed, narrowed sources), broadcasting, 0-size, and the bad
-- inputs (wrong index dtypes, masks of the wrong shape, out-of-range indices, repeats, mixed devices) with
-- nothing written. GPU cases run where there is a GPU (spec/helpers.lua).
local H = require "spec.helpers"
local ck = H.ck

local DTYPES = {"f32", "f64", "i32", "f16", "bf16", "bool", "u8", "i8", "i16", "u32", "i64"}
local function vals(dt, n) -- n small integer values exact in dt
  local t = {}
  for i = 1, n do
    if dt == "bool" then t[i] = (i % 3 == 0) else t[i] = (i * 7) % 11 + (dt:match("^u") and 0 or -3) end
  end
  return t
end
local function mat(dt, r, c, dev)
  local v, t = vals(dt, r * c), {}
  for i = 1, r do t[i] = {}; for j = 1, c do t[i][j] = v[(i - 1) * c + j] end end
  return ck.array(t, {dtype = dt, device = dev}), t
end
local function ints(t, dev, dt) return ck.array(t, {dtype = dt or "i64", device = dev}) end
local function same(got, want) assert.are.same(want, got:to("host"):totable()) end

for _, dev in ipairs(H.devices()) do
  local it_ = dev == "cuda" and function(n, f) it(n, H.gpu(f)) end or it
  describe("selection on " .. dev, function()
    it_("index_select, gather, take match the oracle for every dtype, over a transposed view", function()
      for _, dt in ipairs(DTYPES) do
        local a, t = mat(dt, 3, 4, dev)
        local at = a:t() -- [4x3] view
        for _, idt in ipairs {"i32", "i64"} do
          local r = ck.index_select(at, 2, ints({3, 1, 3}, dev, idt))
          local want = {}
          for i = 1, 4 do want[i] = {t[3][i], t[1][i], t[3][i]} end
          same(r, want)
          local g = ck.gather(a, 2, ints({{4, 1}, {2, 2}, {1, 3}}, dev, idt))
          same(g, {{t[1][4], t[1][1]}, {t[2][2], t[2][2]}, {t[3][1], t[3][3]}})
          -- row-major over the view (take copies a view first; cuda copies strided storage dtypes after issue 32's
          -- other half, so the storage dtypes take a contiguous source there until then)
          if dev == "host" or ({f32 = 1, f64 = 1, i32 = 1, f16 = 1, bf16 = 1})[dt] then
            same(ck.take(at, ints({1, 2, 12}, dev, idt)), {t[1][1], t[2][1], t[3][4]})
          end
          same(ck.take(a, ints({1, 2, 12}, dev, idt)), {t[1][1], t[1][2], t[3][4]})
        end
        same(a[ints({2}, dev)], {t[2]})
        same(a[{{}, ints({4, 1}, dev)}], {{t[1][4], t[1][1]}, {t[2][4], t[2][1]}, {t[3][4], t[3][1]}})
      end
    end)

    it_("scatter, scatter_add, index_add, index_copy, put write what the oracle writes", function()
      for _, dt in ipairs {"f32", "f64", "i32", "f16", "bf16", "u8", "i8", "i16", "u32", "i64"} do
        local z = ck.zeros({3, 4}, {dtype = dt, device = dev})
        local s = ck.array({{1, 2, 3, 4}, {5, 6, 7, 8}}, {dtype = dt, device = dev})
        same(ck.scatter(z, 1, ints({{3, 1, 2, 2}}, dev), s), {{0, 2, 0, 0}, {0, 0, 3, 4}, {1, 0, 0, 0}})
        same(ck.scatter_add(z, 1, ints({{3, 3, 1, 1}, {3, 3, 1, 1}}, dev), s), {{0, 0, 10, 12}, {0, 0, 0, 0}, {6, 8, 0, 0}})
        same(ck.index_add(z, 1, ints({2, 2}, dev), s), {{0, 0, 0, 0}, {6, 8, 10, 12}, {0, 0, 0, 0}})
        same(ck.index_copy(z, 2, ints({4, 1}, dev), ck.array({{1, 2}, {3, 4}, {5, 6}}, {dtype = dt, device = dev})),
          {{2, 0, 0, 1}, {4, 0, 0, 3}, {6, 0, 0, 5}})
        same(ck.put(z, ints({12, 1}, dev), s:narrow(1, 1, 1):narrow(2, 1, 2)), {{2, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 1}})
        same(ck.put(z, ints({1, 1}, dev), 5), {{5, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}) -- one value: repeats allowed
      end
    end)

    it_("where broadcasts and promotes; masks select, fill and assign", function()
      local a, t = mat("f32", 3, 4, dev)
      local mt = {{true, false, true, false}, {false, false, false, true}, {true, true, true, true}}
      local m = ck.array(mt, {device = dev})
      local want, sel = {}, {}
      for i = 1, 3 do want[i] = {}; for j = 1, 4 do want[i][j] = mt[i][j] and t[i][j] or -1; if mt[i][j] then sel[#sel + 1] = t[i][j] end end end
      same(ck.where(m, a, -1), want)
      same(a[m], sel)
      same(ck.masked_select(a, ck.array({{true, false, true, false}}, {device = dev})),
        {t[1][1], t[1][3], t[2][1], t[2][3], t[3][1], t[3][3]}) -- the mask broadcasts
      local row = ck.array({{true, false, false, true}}, {device = dev})
      same(ck.where(row, a, ck.zeros({3, 1}, {device = dev})), {{t[1][1], 0, 0, t[1][4]}, {t[2][1], 0, 0, t[2][4]}, {t[3][1], 0, 0, t[3][4]}})
      assert.are.equal("f64", ck.where(m, ck.ones({3, 4}, {dtype = "i32", device = dev}), 0.5):dtype())
      local b = a:clone(); b:masked_fill_(row, 0)
      same(b:narrow(2, 1, 1), {{0}, {0}, {0}})
      b = a:clone(); b[m] = ck.arange(1, #sel + 1, {device = dev})
      local k, w2 = 0, {}
      for i = 1, 3 do w2[i] = {}; for j = 1, 4 do if mt[i][j] then k = k + 1; w2[i][j] = k else w2[i][j] = t[i][j] end end end
      same(b, w2)
      same(ck.nonzero(m), {{1, 1}, {1, 3}, {2, 4}, {3, 1}, {3, 2}, {3, 3}, {3, 4}})
      same(ck.find(m), {1, 3, 8, 9, 10, 11, 12})
      same(ck.find(ck.arange(0, 12, {device = dev}):reshape(3, 4):t():narrow(1, 1, 2)), {2, 3, 4, 5, 6}) -- any dtype, a view: nonzero elements
      assert.are.equal(0, ck.find(ck.zeros({5}, {device = dev})):numel())
      assert.are.same({0, 2}, ck.nonzero(ck.zeros({0, 3}, {dtype = "bool", device = dev})):shape())
    end)

    it_("cat and stack of 2-70 arrays of every dtype, views and 0-size inputs, in one launch per 64", function()
      for _, dt in ipairs(DTYPES) do
        local list, want = {}, {}
        for i = 1, 70 do
          local x = ck.array({{vals(dt, 3)[i % 3 + 1]}, {vals(dt, 3)[(i + 1) % 3 + 1]}}, {dtype = dt, device = dev})
          list[i] = x
          want[1] = want[1] or {}; want[2] = want[2] or {}
          want[1][i], want[2][i] = x:to("host"):totable()[1][1], x:to("host"):totable()[2][1]
        end
        same(ck.cat(list, 2), want)
        assert.are.same({70, 2, 1}, ck.stack(list, 1):shape())
      end
      local a = ck.arange(1, 13, {device = dev}):reshape(3, 4)
      same(ck.cat({a:t(), ck.empty({0, 3}, {device = dev}), a:narrow(2, 1, 3)}, 1),
        {{1, 5, 9}, {2, 6, 10}, {3, 7, 11}, {4, 8, 12}, {1, 2, 3}, {5, 6, 7}, {9, 10, 11}})
    end)

    it_("refuses bad input with a clear error and writes nothing", function()
      local a = ck.arange(1, 13, {device = dev}):reshape(3, 4)
      local before = a:to("host"):totable()
      local function err(pat, f, ...)
        local ok, e = pcall(f, ...)
        assert.is_false(ok)
        assert.matches(pat, e)
      end
      err("ck.index_select: the index is f32", ck.index_select, a, 1, ck.ones({2}, {device = dev}))
      err("ck.gather: index 4 at idx%[2, 1%] is out of range for dim 1", ck.gather, a, 1, ints({{1, 1}, {4, 3}}, dev))
      err("a:scatter_: index 0 at idx%[1, 2%] is out of range", a.scatter_, a, 1, ints({{1, 0}}, dev), ck.ones({1, 2}, {device = dev}))
      err("a:scatter_: idx%[1, 1%] and idx%[2, 1%] write the same element", a.scatter_, a, 1, ints({{2}, {2}}, dev), ck.ones({2, 1}, {device = dev}))
      err("a:put_: index 13 at idx%[2%]", a.put_, a, ints({1, 13}, dev), 0)
      err("a%[i%] = v: the mask is %[3x3%] and the array %[3x4%]", function() a[ck.zeros({3, 3}, {dtype = "bool", device = dev})] = 1 end)
      err("a:masked_fill_: the mask is f32", a.masked_fill_, a, ck.zeros({3, 4}, {device = dev}), 1)
      err("ck.where: the condition is i32", ck.where, ck.zeros({3}, {dtype = "i32", device = dev}), 1, 0)
      err("a:index_add_: the source must have the destination's shape", a.index_add_, a, 1, ints({1}, dev), ck.ones({2, 4}, {device = dev}))
      same(a, before)
      if dev == "cuda" then
        err("on host:0 and the index on cuda:0", ck.index_select, a:to("host"), 1, ints({1}, dev))
        err("ck.cat: list%[1%] is on cuda:0 and list%[2%] on host:0", ck.cat, {a, a:to("host")})
      end
    end)
  end)
end

describe("the GPU agrees with the host on random index ops", function()
  it("gather/scatter_add/where on random shapes", H.gpu(function()
    for trial = 1, 20 do
      local r, c = math.random(1, 40), math.random(1, 40)
      local a = ck.randn(r, c)
      local ix = ck.randint(1, r, {math.random(1, 30), c}, {dtype = "i32"})
      local g = ck.gather(a, 1, ix)
      assert.are.same(g:totable(), ck.gather(a:to("cuda"), 1, ix:to("cuda")):to("host"):totable())
      local z = ck.zeros({r, c}, {dtype = "i32"})
      local s = ck.randint(-5, 5, ix:shape(), {dtype = "i32"})
      assert.are.same(ck.scatter_add(z, 1, ix, s):totable(),
        ck.scatter_add(z:to("cuda"), 1, ix:to("cuda"), s:to("cuda")):to("host"):totable())
    end
  end))
end)
