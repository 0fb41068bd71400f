--- Sorts (issue 33): ck.sort / argsort / topk against a plain-Lua oracle on the host backend (stability, NaN,
-- infinities and -0, every dim, views, every dtype), and every rung of the sort ladder against the host backend
-- on the GPU.
local H = require "spec.helpers"
local ck = H.ck
local gpu = H.gpu

local FLOATS = {f32 = true, f64 = true, f16 = true, bf16 = true}
local DTYPES = {"f32", "f64", "f16", "bf16", "i32", "i64", "i16", "i8", "u8", "u32", "bool"}

local function numel(shape) local n = 1; for _, s in ipairs(shape) do n = n * s end; return n end

-- Random values with many repeats (so stability shows), in a range every dtype holds; floats get fractions,
-- infinities, NaN and both zeros now and then.
local function draw(dt)
  if dt == "bool" then return math.random(0, 1) end
  local unsigned = dt == "u8" or dt == "u32"
  local v = math.random(unsigned and 0 or -20, 20)
  if FLOATS[dt] then
    local u = math.random()
    if u < 0.03 then return 0 / 0 elseif u < 0.06 then return math.huge elseif u < 0.09 then return -math.huge
    elseif u < 0.12 then return -0.0 elseif u < 0.15 then return 0.0 elseif u < 0.5 then return v + 0.5 end
  end
  return v
end

local function input(dt, shape, gen)
  local vals = {}
  for i = 1, numel(shape) do vals[i] = (gen or draw)(dt) end
  return ck.array(vals, {dtype = "f64", device = "host"}):reshape(shape):to(dt) -- the oracle's side: the host
end

local function flat(a)
  a = a:host()
  if a:dtype() == "bool" then a = a:to("u8") end
  return a:contiguous():flat()
end

-- NaN is the largest value; -0 equals +0.
local function before(a, b, descending)
  local an, bn = a ~= a, b ~= b
  if an or bn then
    if an and bn then return false end
    if descending then return an else return bn end
  end
  if descending then return a > b end
  return a < b
end

-- The plain-Lua oracle: the stable sort of each line along 1-based dim d; first k kept.
local function oracle(vals, shape, d, descending, k)
  local inner = 1
  for q = d + 1, #shape do inner = inner * shape[q] end
  local len = shape[d]
  local outer = numel(shape) // (len * inner)
  k = k or len
  local ov, oi = {}, {}
  for o = 0, outer - 1 do
    for i = 0, inner - 1 do
      local line = {}
      for r = 1, len do line[r] = r end
      local function at(r) return vals[(o * len + r - 1) * inner + i + 1] end
      table.sort(line, function(x, y)
        local a, b = at(x), at(y)
        if before(a, b, descending) then return true end
        if before(b, a, descending) then return false end
        return x < y
      end)
      for j = 1, k do
        local q = (o * k + j - 1) * inner + i + 1
        ov[q], oi[q] = at(line[j]), line[j]
      end
    end
  end
  return ov, oi
end

local function same_value(g, w)
  if w ~= w then return g ~= g end
  if w == 0 and g == 0 then return 1 / w == 1 / g end -- the sign of zero survives
  return g == w
end

local function check(v, i, wv, wi, label)
  local gv, gi = flat(v), flat(i)
  assert(#gv == #wv and #gi == #wi, label .. ": sizes")
  for q = 1, #wi do
    if gi[q] ~= wi[q] or not same_value(gv[q], wv[q]) then
      error(("%s: flat index %d: got (%s, %s), expected (%s, %s) (seed %d)"):format(label, q, tostring(gv[q]),
        tostring(gi[q]), tostring(wv[q]), tostring(wi[q]), H.seed), 2)
    end
  end
end

-- The GPU checks compare with the host's results bit for bit in array ops (Lua loops over 2^20 elements cost
-- seconds each): the indices, and the values' bytes, so NaN payloads and the sign of zero must survive. Only a
-- failure walks the elements, to name the first that differs.
local function first_diff(g, w)
  local gf, wf = g:host():to("f64"):flat(), w:host():to("f64"):flat()
  for q = 1, #wf do
    if gf[q] ~= wf[q] and (gf[q] == gf[q] or wf[q] == wf[q]) then
      return ("flat %d: got %s, expected %s"):format(q, tostring(gf[q]), tostring(wf[q]))
    end
  end
  return "(the bytes differ)"
end

-- nil when (gv, gi) equal the host's (rv, ri) bit for bit (gi nil: the values only), else a message that starts
-- with label
local function differs(label, gv, gi, rv, ri)
  local shape_g, shape_r = table.concat(gv:shape(), "x"), table.concat(rv:shape(), "x")
  if shape_g ~= shape_r then return ("%s: shape %s, expected %s"):format(label, shape_g, shape_r) end
  if gi and not ck.equal(gi:host(), ri) then return label .. ": indices, " .. first_diff(gi, ri) end
  local gh = gv:host():contiguous()
  if not ck.equal(ck.view_as_bytes(gh), ck.view_as_bytes(rv:contiguous())) then
    return label .. ": values, " .. first_diff(gv, rv)
  end
end

describe("sorts on the host backend against a plain-Lua oracle", function()
  -- (on the GPU host the default device is cuda: these checks are of the host backend)
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  it("sort: every dtype, dim and direction, stable, NaN last, -0 and +0 kept in order", function()
    for _, dt in ipairs(DTYPES) do
      for _, shape in ipairs {{1}, {2}, {1023}, {6, 7}, {3, 4, 5}} do
        local a = input(dt, shape)
        local vals = flat(a)
        for d = 1, #shape do
          for _, desc in ipairs {false, true} do
            local label = ("sort %s %s dim %d%s"):format(dt, table.concat(shape, "x"), d, desc and " desc" or "")
            local v, i = ck.sort(a, d, desc and {descending = true} or nil)
            assert.are.equal(dt, v:dtype(), label)
            assert.are.equal("i64", i:dtype(), label)
            local wv, wi = oracle(vals, shape, d, desc)
            check(v, i, wv, wi, label)
            check(ck.argsort(a, d, {descending = desc}):to("f64"), i, wi, wi, label .. " argsort")
            local only = ck.sort(a, d, {descending = desc, indices = false})
            check(only, i, wv, wi, label .. " values only")
          end
        end
      end
    end
  end)

  it("keeps the order of equal keys (all equal: the identity permutation)", function()
    for _, dt in ipairs {"f32", "i32", "bool"} do
      local a = input(dt, {1000}, function() return 1 end)
      local _, i = ck.sort(a)
      local _, j = ck.sort(a, 1, {descending = true})
      local fi, fj = flat(i), flat(j)
      for q = 1, 1000 do assert(fi[q] == q and fj[q] == q, dt .. " index " .. q) end
    end
  end)

  it("orders NaN, infinities and signed zeros as NumPy (ascending) and torch (descending)", function()
    local nan, inf = 0 / 0, math.huge
    local a = ck.array({nan, 1, -inf, -0.0, inf, 0.0, -1, nan}, {dtype = "f64"})
    local v, i = ck.sort(a)
    assert.are.same({3, 7, 4, 6, 2, 5, 1, 8}, i:totable())
    local fv = v:totable()
    assert.is_true(1 / fv[3] < 0 and 1 / fv[4] > 0, "-0 then +0, as given")
    local _, j = ck.sort(a, 1, {descending = true})
    assert.are.same({1, 8, 5, 2, 4, 6, 7, 3}, j:totable())
  end)

  it("topk: the k largest, largest first, and their indices", function()
    for _, dt in ipairs {"f32", "f64", "i32", "i64", "f16", "u8"} do
      local shape = {5, 40}
      local a = input(dt, shape)
      local vals = flat(a)
      for d = 1, 2 do
        for _, k in ipairs {1, 3, shape[d]} do
          local v, i = ck.topk(a, k, d)
          local wv, wi = oracle(vals, shape, d, true, k)
          check(v, i, wv, wi, ("topk %s k %d dim %d"):format(dt, k, d))
        end
      end
    end
    local v, i = ck.topk(ck.rand({3, 4}), 0, 2)
    assert.are.same({3, 0}, v:shape()); assert.are.same({3, 0}, i:shape())
  end)

  it("sorts views and writes into given outputs", function()
    local a = input("f64", {6, 9})
    local t = a:t()
    local wv, wi = oracle(flat(t), {9, 6}, 2, false)
    local v, i = ck.sort(t, 2)
    check(v, i, wv, wi, "transposed")
    local out, idx = ck.empty({9, 6}, {dtype = "f64"}):fill(0 / 0), ck.zeros({9, 6}, {dtype = "i64"})
    local v2, i2 = ck.sort(t, 2, {out = out, idx = idx})
    assert.are.equal(out, v2); assert.are.equal(idx, i2)
    check(out, idx, wv, wi, "given outputs")
    local n = a:narrow(2, 2, 6) -- columns 2..6 (inclusive)
    local nv, ni = oracle(flat(n), n:shape(), 1, true)
    local v3, i3 = ck.sort(n, 1, {descending = true})
    check(v3, i3, nv, ni, "narrowed, dim 1")
  end)

  it("sorts empty arrays and 0-d arrays", function()
    for _, shape in ipairs {{0}, {3, 0}, {0, 4}} do
      local v, i = ck.sort(ck.empty(shape))
      assert.are.same(shape, v:shape()); assert.are.same(shape, i:shape())
    end
    local v, i = ck.sort(ck.scalar(3))
    assert.are.equal(3, v:item()); assert.are.equal(1, i:item())
  end)

  it("says what is wrong, at the caller's line", function()
    local a = ck.rand({3, 4})
    local ok, e = pcall(ck.topk, a, 5, 2)
    assert.is_false(ok); assert.matches("topk: k = 5 is larger than the 4 elements along dim 2", e)
    assert.matches("sort_spec.lua", e)
    ok, e = pcall(ck.topk, a, -1)
    assert.is_false(ok); assert.matches("k must be an integer >= 0", e)
    ok, e = pcall(ck.topk, a, 1.5)
    assert.is_false(ok); assert.matches("k must be an integer >= 0", e)
    ok, e = pcall(ck.sort, a, 0)
    assert.is_false(ok); assert.matches("ck.sort: dim out of range", e)
    ok, e = pcall(ck.sort, a, {descendin = true})
    assert.is_false(ok); assert.matches("unknown option", e)
    ok, e = pcall(ck.sort, a, 1, {idx = ck.empty({3, 4}, {dtype = "i32"})})
    assert.is_false(ok); assert.matches("idx is i32 but the result is i64", e)
    ok, e = pcall(ck.argsort, a, 1, {variant = "quick"})
    assert.is_false(ok); assert.matches("unknown variant 'quick'", e)
    ok, e = pcall(ck.sort, a, 1, {indices = false, idx = ck.empty({3, 4}, {dtype = "i64"})})
    assert.is_false(ok); assert.matches("ck.sort: options idx and indices = false contradict each other", e)
    assert.matches("sort_spec.lua", e)
    ok, e = pcall(ck.sort, a, 1, {indices = "no"})
    assert.is_false(ok); assert.matches("option indices must be true or false", e)
    ok, e = pcall(ck.argsort, a, 1, {indices = false})
    assert.is_false(ok); assert.matches("unknown option \"indices\"", e)
  end)

  it("lists the ladder", function()
    local v = ck.variants("sort")
    assert.are.equal("cub", v[1].name)
    local names = {}
    for _, r in ipairs(v) do names[r.name] = r.id end
    assert.are.equal(6, names.onesweep)
    assert.are.equal(#v, #ck.variants("argsort"))
    assert.are.equal(#v, #ck.variants("topk"))
  end)
end)

describe("the sort ladder on the GPU", function()
  local report = H.report

  local function run_rungs(cases, dtypes)
    local failures, ran, ran_vo = {}, {}, {}
    for _, v in ipairs(ck.variants("sort")) do
      for _, c in ipairs(cases) do
        for _, dt in ipairs(dtypes) do
          local a = input(dt, c.shape, c.gen)
          local ga = a:to("cuda")
          -- views of the storage dtypes are copied on the host until CUDA copies them (issue 32)
          if c.view and not (FLOATS[dt] or dt == "i32") then goto next_dtype end
          if c.view then a, ga = c.view(a), c.view(ga) end
          for _, d in ipairs(c.dims) do
            for _, desc in ipairs {false, true} do
              local label = ("%s %s %s dim %d%s"):format(v.name, dt, c.name, d, desc and " desc" or "")
              local rv, ri = ck.sort(a, d, {descending = desc})
              local out = ck.empty(rv:shape(), {dtype = dt, device = "cuda"})
              local idx = ck.empty(rv:shape(), {dtype = "i64", device = "cuda"})
              if FLOATS[dt] then H.poison(out) end
              local ok, e = pcall(ck.sort, ga, d, {descending = desc, variant = v.name, out = out, idx = idx})
              if not ok then failures[#failures + 1] = label .. ": " .. tostring(e)
              else
                if ck.last_ran().name == v.name then ran[v.name] = true end
                failures[#failures + 1] = differs(label, out, idx, rv, ri)
              end
              -- the values only ({indices = false}: CUB sorts integers as themselves), poisoned first
              local vo = FLOATS[dt] and H.poison(ck.empty(rv:shape(), {dtype = dt, device = "cuda"}))
                or ck.full(rv:shape(), dt == "bool" and 1 or 99, {dtype = dt, device = "cuda"})
              ok, e = pcall(ck.sort, ga, d, {descending = desc, variant = v.name, out = vo, indices = false})
              if not ok then failures[#failures + 1] = label .. " values only: " .. tostring(e)
              else
                if ck.last_ran().name == v.name then ran_vo[v.name] = true end
                failures[#failures + 1] = differs(label .. " values only", vo, nil, rv)
              end
            end
          end
          local k = math.min(3, c.shape[#c.shape])
          local tv, ti = ck.topk(a, k)
          local gv, gi = ck.topk(ga, k, nil, {variant = v.name})
          failures[#failures + 1] = differs(("%s topk %s %s"):format(v.name, dt, c.name), gv, gi, tv, ti)
          ::next_dtype::
        end
      end
    end
    return failures, ran, ran_vo
  end

  it("every rung and dtype matches the host on odd sizes, every dim and views", gpu(function()
    local cases = {
      {name = "1", shape = {1}, dims = {1}}, {name = "2", shape = {2}, dims = {1}},
      {name = "1023", shape = {1023}, dims = {1}}, {name = "5000", shape = {5000}, dims = {1}},
      {name = "37x300", shape = {37, 300}, dims = {1, 2}}, {name = "3x5x7", shape = {3, 5, 7}, dims = {1, 2, 3}},
      {name = "t(40x33)", shape = {40, 33}, dims = {1, 2}, view = function(x) return x:t() end},
      {name = "all equal", shape = {3000}, dims = {1}, gen = function() return 7 end},
    }
    local failures, ran, ran_vo = run_rungs(cases, DTYPES)
    report(failures)
    for _, v in ipairs(ck.variants("sort")) do
      assert.is_true(ran[v.name], "rung " .. v.name .. " never ran")
      assert.is_true(ran_vo[v.name], "rung " .. v.name .. " never ran a sort without indices")
    end
  end))

  it("every rung matches on 2^20+1 elements and on many rows", gpu(function()
    local cases = {{name = "2^20+1", shape = {2 ^ 20 + 1}, dims = {1}},
                   {name = "1000x1024", shape = {1000, 1024}, dims = {2}}}
    report((run_rungs(cases, {"f32", "i32", "u32"})))
  end))

  -- Rung 7 picks its block shape from the line's length and the key's width (07_rows_block.cu): a line of each
  -- length class (<= 256, 512, 1024, 2048, 4096; 8-byte keys one class lower), every dtype, both directions,
  -- argsort (no values written), topk (the first k of each line), and lines `inner` apart (the frame's path).
  -- Indices are poisoned first; values bit for bit.
  it("rows_block matches the host at every block shape, argsort and topk included", gpu(function()
    local failures = {}
    local function one(label, a, d, desc)
      local ga = a:to("cuda")
      local rv, ri = ck.sort(a, d, {descending = desc})
      local out = ck.empty(rv:shape(), {dtype = a:dtype(), device = "cuda"})
      local idx = ck.empty(rv:shape(), {dtype = "i64", device = "cuda"}):fill(-7)
      if FLOATS[a:dtype()] then H.poison(out) end
      local ok, e = pcall(ck.sort, ga, d, {descending = desc, variant = "rows_block", out = out, idx = idx})
      if not ok then failures[#failures + 1] = label .. ": " .. tostring(e); return end
      if ck.last_ran().name ~= "rows_block" then failures[#failures + 1] = label .. ": ran " .. ck.last_ran().name end
      failures[#failures + 1] = differs(label, out, idx, rv, ri)
      local gi = ck.argsort(ga, d, {descending = desc, variant = "rows_block"})
      if not ck.equal(gi:host(), ri) then failures[#failures + 1] = label .. " argsort: " .. first_diff(gi, ri) end
      local k = math.min(5, a:shape()[d])
      local tv, ti = ck.topk(a, k, d)
      local gv, gti = ck.topk(ga, k, d, {variant = "rows_block"})
      failures[#failures + 1] = differs(label .. " topk", gv, gti, tv, ti)
    end
    for _, dt in ipairs(DTYPES) do
      for _, shape in ipairs {{5, 100}, {4, 257}, {3, 700}, {2, 1500}, {2, 2048}, {2, 3000}, {2, 4096}} do
        for _, desc in ipairs {false, true} do
          one(("%s %dx%d%s"):format(dt, shape[1], shape[2], desc and " desc" or ""), input(dt, shape), 2, desc)
        end
      end
      one(dt .. " 1500x3 dim 1 (lines 3 apart)", input(dt, {1500, 3}), 1, false)
    end
    report(failures)
  end))
end)

-- The onesweep rung (kernels/sort/06_onesweep.cu) on sizes of many tiles (3840 pairs a tile), against the host,
-- bit for bit (the indices, and the values' bytes: NaN payloads and the sign of zero survive): every dtype, both
-- directions, wide keys (every digit pass moves pairs) and heavy ties (stability across tiles), all equal keys
-- (the identity permutation), lines along either dim (passes over the line number: 3, 257 and 70000 lines).
describe("the onesweep sort on many tiles", function()
  local function wide(dt, shape) -- the dtype's whole range (floats: [-1, 1) and their bits)
    local u = ck.rand(shape, {dtype = "f64", device = "host"})
    if dt == "bool" then return (u * 2):floor():to(dt) end
    local bits = ({u8 = 8, i8 = 8, i16 = 16, u32 = 32, i32 = 32, i64 = 48})[dt]
    if not bits then return (u * 2 - 1):to(dt) end
    local span = 2 ^ bits
    local lo = (dt == "u8" or dt == "u32") and 0 or -span / 2
    return (u * span + lo):floor():to(dt)
  end
  local function ties(dt, shape) -- about 200 distinct values (floats: 4000, with NaN, infinities and zeros)
    local u = ck.rand(shape, {dtype = "f64", device = "host"})
    if dt == "bool" then return (u * 2):floor():to(dt) end
    if dt == "u8" or dt == "u32" then return (u * 200):floor():to(dt) end
    if not FLOATS[dt] then return (u * 200 - 100):floor():to(dt) end
    local a = ((u * 4000):floor() / 8 - 250):to(dt)
    local n = a:numel()
    if #shape == 1 and n > 7000 then
      for q, v in ipairs {0 / 0, math.huge, -math.huge, -0.0, 0.0, 0 / 0, math.huge} do a[q * 1000] = v; a[n - q] = v end
    end
    return a
  end
  -- sort (or topk with k) of a along d on the host and with onesweep on the GPU, compared bit for bit
  local function compare(failures, a, d, desc, label, k)
    local ga = a:to("cuda")
    local rv, ri, ok, gv, gi
    if k then
      rv, ri = ck.topk(a, k, d)
      ok, gv, gi = pcall(ck.topk, ga, k, d, {variant = "onesweep"})
    else
      rv, ri = ck.sort(a, d, {descending = desc})
      ok, gv, gi = pcall(ck.sort, ga, d, {descending = desc, variant = "onesweep"})
    end
    label = ("%s %s dim %d%s"):format(a:dtype(), label, d, k and (" topk " .. k) or desc and " desc" or "")
    if not ok then failures[#failures + 1] = label .. ": " .. tostring(gv); return end
    if ck.last_ran().name ~= "onesweep" then failures[#failures + 1] = label .. ": ran " .. ck.last_ran().name; return end
    failures[#failures + 1] = differs(label, gv, gi, rv, ri)
  end

  it("matches the host on 2^20+1 and 3*2^20+7 elements: every dtype, both directions, ties", gpu(function()
    local failures = {}
    for _, dt in ipairs(DTYPES) do
      for _, desc in ipairs {false, true} do
        compare(failures, wide(dt, {2 ^ 20 + 1}), 1, desc, "wide [2^20+1]")
        compare(failures, ties(dt, {3 * 2 ^ 20 + 7}), 1, desc, "ties [3*2^20+7]")
      end
    end
    H.report(failures)
  end))

  it("keeps the input order of equal keys (all equal: the identity) across many tiles", gpu(function()
    local failures, n = {}, 3 * 2 ^ 20 + 7
    for _, dt in ipairs {"f32", "i32", "u8", "f64", "i64", "f16"} do
      local a = ck.full({n}, 3, {dtype = dt, device = "host"})
      for _, desc in ipairs {false, true} do
        compare(failures, a, 1, desc, "all equal [3*2^20+7]")
        local _, i = ck.sort(a:to("cuda"), 1, {descending = desc, variant = "onesweep"})
        if not ck.equal(i:host(), ck.arange(1, n + 1, {dtype = "i64", device = "host"})) then
          failures[#failures + 1] = dt .. " all equal: not the identity" .. (desc and " (desc)" or "")
        end
      end
    end
    H.report(failures)
  end))

  it("sorts lines along either dim (passes over the line number), and topk", gpu(function()
    local failures = {}
    for _, dt in ipairs {"f32", "u8", "i64", "f16"} do
      for _, desc in ipairs {false, true} do
        compare(failures, ties(dt, {1000, 1024}), 2, desc, "[1000x1024]")
        compare(failures, wide(dt, {257, 4099}), 2, desc, "[257x4099]")
        compare(failures, ties(dt, {70000, 15}), 2, desc, "[70000x15]")
        compare(failures, wide(dt, {2 ^ 20 + 1, 3}), 1, desc, "[(2^20+1)x3]")
        compare(failures, ties(dt, {3, 2 ^ 20 + 1}), 2, desc, "[3x(2^20+1)]")
      end
    end
    compare(failures, ties("f32", {3 * 2 ^ 20 + 7}), 1, false, "[3*2^20+7]", 1024)
    compare(failures, ties("f32", {1000, 1024}), 2, false, "[1000x1024]", 10)
    H.report(failures)
  end))
end)

-- topk's radix select (kernels/sort/05_radix_select.cu) against the host backend: both of its shapes (a block
-- per line: lines of at most 16384 or many lines; the grid: few long lines, with the compaction of the last
-- candidates), winners sorted in shared memory (k <= 2048) or by CUB, lines along dim 1 (copied contiguous),
-- transposed views, ties (all equal: the lowest indices first), NaN, infinities and -0.
describe("topk's radix select on the GPU", function()
  local function big_input(dt, shape, gen) -- large arrays drawn on the host in C, with repeats
    if numel(shape) <= 20000 or gen then return input(dt, shape, gen) end
    local u = ck.rand(shape, {dtype = "f64", device = "host"})
    if dt == "bool" then return (u * 2):floor():to(dt) end
    if dt == "u8" or dt == "u32" then return (u * 200):floor():to(dt) end
    if FLOATS[dt] then return ((u * 4000):floor() / 8 - 250):to(dt) end
    return (u * 200 - 100):floor():to(dt)
  end
  local function poisoned(shape, dt)
    local out = ck.empty(shape, {dtype = dt, device = "cuda"})
    out:fill(FLOATS[dt] and 0 / 0 or dt == "bool" and 1 or 77)
    return out, ck.empty(shape, {dtype = "i64", device = "cuda"}):fill(-5)
  end
  -- topk of (a, view) on the host and with radix_select on the GPU, for each k (k > len skipped)
  local function compare(failures, dt, a, d, ks, label, view)
    local ga = a:to("cuda")
    if view then a, ga = view(a), view(ga) end
    local len = a:shape()[d]
    for _, k in ipairs(ks) do
      if k == "n" then k = len end
      if k <= len then
        local rv, ri = ck.topk(a, k, d)
        local out, idx = poisoned(rv:shape(), dt)
        local lab = ("%s %s dim %d k %d"):format(label, dt, d, k)
        local ok, e = pcall(ck.topk, ga, k, d, {variant = "radix_select", out = out, idx = idx})
        if not ok then failures[#failures + 1] = lab .. ": " .. tostring(e)
        elseif ck.last_ran().name ~= "radix_select" then failures[#failures + 1] = lab .. ": ran " .. ck.last_ran().name
        else failures[#failures + 1] = differs(lab, out, idx, rv, ri) end
      end
    end
  end

  it("matches the host: every dtype, n 1, 2, 1023, dims 1 and 2, views, ties", gpu(function()
    local failures = {}
    for _, dt in ipairs(DTYPES) do
      for _, n in ipairs {1, 2, 1023} do
        compare(failures, dt, input(dt, {n}), 1, {1, 7, 1024, "n"}, "[" .. n .. "]")
        compare(failures, dt, input(dt, {3, n}), 2, {1, 7, 1024, "n"}, ("[3x%d]"):format(n))
        compare(failures, dt, input(dt, {n, 3}), 1, {1, 7, 1024, "n"}, ("[%dx3]"):format(n))
        if FLOATS[dt] or dt == "i32" then -- views of the storage dtypes are copied on the host (issue 32)
          compare(failures, dt, input(dt, {5, n}), 1, {1, 7, "n"}, ("t(5x%d)"):format(n), function(x) return x:t() end)
          compare(failures, dt, input(dt, {n, 5}), 2, {1, 7, "n"}, ("t(%dx5)"):format(n), function(x) return x:t() end)
        end
      end
      compare(failures, dt, input(dt, {3000}, function() return 1 end), 1, {1, 7, 1024, 2999}, "all equal [3000]")
      compare(failures, dt, input(dt, {70, 300}, function() return 1 end), 2, {1, 7, 299}, "all equal [70x300]")
      compare(failures, dt, input(dt, {2, 5000}), 2, {1, 7, 1024, 2049, "n"}, "[2x5000]") -- rows re-read
    end
    H.report(failures)
  end))

  it("matches the host on 2^20+1 elements (the grid path), many long rows, all equal", gpu(function()
    local failures, n = {}, 2 ^ 20 + 1
    for _, dt in ipairs {"f32", "f64", "i32", "f16", "bf16", "i64", "u8", "i16"} do
      compare(failures, dt, big_input(dt, {n}), 1, {1, 7, 1024, "n"}, "[2^20+1]")
      compare(failures, dt, big_input(dt, {2, n}), 2, {1, 7, 1024, 3000}, "[2x(2^20+1)]")
      compare(failures, dt, big_input(dt, {n, 2}), 1, {1, 7, 1024}, "[(2^20+1)x2]")
    end
    compare(failures, "f32", big_input("f32", {40000, 3}), 1, {7}, "t(3x40000)", function(x) return x:t() end)
    compare(failures, "f32", big_input("f32", {1200, 20000}), 2, {1, 7, 2100}, "[1200x20000]") -- many long rows
    compare(failures, "f32", ck.full({n}, 2.5, {device = "host"}), 1, {1, 7, 1024, "n"}, "all equal [2^20+1]")
    local special = big_input("f32", {n}) -- NaN, infinities and both zeros among many repeats
    for q, v in ipairs {0 / 0, math.huge, -math.huge, -0.0, 0.0, 0 / 0, math.huge} do special[q * 1000] = v end
    compare(failures, "f32", special, 1, {1, 2, 3, 7, 1024}, "specials [2^20+1]")
    H.report(failures)
  end))

  it("is what topk picks by default for k <= len / 2; sorts take rows_block, then onesweep past 4096", gpu(function()
    local a = input("f32", {4096}):to("cuda")
    ck.topk(a, 7)
    assert.are.equal("radix_select", ck.last_ran().name)
    ck.topk(a, 4000) -- (k > len / 2: the default order)
    assert.are.equal("rows_block", ck.last_ran().name)
    ck.sort(a)
    assert.are.equal("rows_block", ck.last_ran().name)
    ck.topk(input("f32", {300, 1000}):to("cuda"), 10) -- (contiguous lines of 256..1024: a whole sort per block)
    assert.are.equal("rows_block", ck.last_ran().name)
    ck.topk(input("f32", {30, 1000}):to("cuda"):t(), 10, 1) -- (lines `inner` apart: radix select)
    assert.are.equal("radix_select", ck.last_ran().name)
    ck.sort(input("f32", {2000, 100}):to("cuda"), 2) -- (many lines shorter than 256: declined, the next rung)
    assert.are.equal("onesweep", ck.last_ran().name)
    local x = input("f32", {4097})
    local v, i = ck.sort(x:to("cuda"))
    assert.are.equal("onesweep", ck.last_ran().name)
    local rv, ri = ck.sort(x)
    assert.is_nil(differs("default sort of 4097", v, i, rv, ri))
  end))
end)

describe("searchsorted", function()
  -- the oracle: 1 + the number of sorted elements before v in ck.sort's order (strictly, or not for side right)
  local function oracle(svals, vals, right)
    local out = {}
    for j, v in ipairs(vals) do
      local c = 0
      for _, s in ipairs(svals) do
        if before(s, v, false) or (right and not before(v, s, false)) then c = c + 1 end
      end
      out[j] = c + 1
    end
    return out
  end

  it("places values in a sorted array on both sides, NaN and -0 as ck.sort orders them (host)", function()
    for _, dt in ipairs(DTYPES) do
      for _, n in ipairs {1, 2, 300} do
        local sorted = ck.sort(input(dt, {n}))
        local values = input(dt, {4, 25})
        local sv, vv = flat(sorted), flat(values)
        for _, side in ipairs {"left", "right"} do
          local r = ck.searchsorted(sorted, values, {side = side})
          assert.are.equal("i64", r:dtype()); assert.are.same({4, 25}, r:shape())
          assert.are.same(oracle(sv, vv, side == "right"), r:flat(), ("%s n=%d %s"):format(dt, n, side))
        end
      end
    end
    assert.are.same({1}, ck.searchsorted(ck.empty({0}), ck.array({3})):totable())
  end)

  it("says what is wrong", function()
    local ok, e = pcall(ck.searchsorted, ck.rand({2, 3}), ck.rand({3}))
    assert.is_false(ok); assert.matches("ck.searchsorted: the sorted array must be 1%-D", e)
    ok, e = pcall(ck.searchsorted, ck.rand({3}), ck.rand({3}, {dtype = "f64"}))
    assert.is_false(ok); assert.matches("must have one dtype", e)
  end)

  it("every rung matches the host on the GPU", gpu(function()
    local failures = {}
    for _, v in ipairs(ck.variants("searchsorted")) do
      for _, dt in ipairs(DTYPES) do
        for _, n in ipairs {1, 1023, 100001} do
          local sorted = ck.sort(input(dt, {n}))
          local values = input(dt, {5000})
          for _, side in ipairs {"left", "right"} do
            local ref = ck.searchsorted(sorted, values, {side = side})
            local ok, got = pcall(ck.searchsorted, sorted:to("cuda"), values:to("cuda"), {side = side, variant = v.name})
            local good = ok and ck.last_ran().name == v.name
            if good then
              local g, r = got:host():flat(), ref:flat()
              for q = 1, #r do if g[q] ~= r[q] then good = false; break end end
            end
            if not good then failures[#failures + 1] = ("%s %s n=%d %s: %s"):format(v.name, dt, n, side, tostring(got)) end
          end
        end
      end
    end
    H.report(failures)
  end))
end)

-- ck.unique (NumPy's np.unique with return_counts / return_inverse): against a plain-Lua oracle on both
-- backends, with repeats, NaN (one value, last), -0 and +0 (one value), integers, views and empty arrays; the inverse
-- both ways (the scatter through the sort's permutation, and inverse_by = "search").
describe("ck.unique", function()
  local function oracle(vals)
    local keyed = {}
    for i, x in ipairs(vals) do keyed[i] = {x = x, i = i} end
    local function key(x) if x ~= x then return math.huge, 1 end return x, 0 end
    table.sort(keyed, function(p, q)
      local kp, np = key(p.x)
      local kq, nq = key(q.x)
      if np ~= nq then return np < nq end
      if kp ~= kq then return kp < kq end
      return p.i < q.i
    end)
    local values, counts, inverse = {}, {}, {}
    local prev, have = nil, false
    for _, e in ipairs(keyed) do
      local same = have and ((e.x ~= e.x and prev ~= prev) or e.x == prev)
      if not same then values[#values + 1] = e.x; counts[#counts + 1] = 0; prev, have = e.x, true end
      counts[#counts] = counts[#counts] + 1
      inverse[e.i] = #values
    end
    return values, counts, inverse
  end
  for _, dev in ipairs(H.devices()) do
    it("matches the oracle on " .. dev .. ": repeats, NaN, signed zeros, integers, views, empty", function()
      for _, dt in ipairs {"f64", "f32", "i32", "u8", "i64"} do
        for _, shape in ipairs {{1}, {7}, {4, 9}, {3, 1, 5}, {0}, {2, 0}} do
          local n = 1
          for _, d in ipairs(shape) do n = n * d end
          local vals = {}
          for i = 1, n do
            local r = math.random()
            vals[i] = math.random(0, 6)
            if dt:match("^f") and r < 0.1 then vals[i] = 0 / 0 elseif dt:match("^f") and r < 0.2 then vals[i] = -0.0 end
          end
          local a = ck.array(vals, {dtype = dt, device = "host"}):reshape(table.unpack(shape)):to(dev)
          if #shape == 2 and shape[2] > 0 then -- a transposed view with the same logical values
            a = ck.array(vals, {dtype = dt, device = "host"}):reshape(shape[2], shape[1]):t():contiguous():to(dev)
            vals = a:to("host"):flat()
          end
          local wv, wc, wi = oracle(vals)
          local v, c, inv = ck.unique(a, {counts = true, inverse = true})
          local label = ("%s %s [%s]"):format(dev, dt, table.concat(shape, "x"))
          assert.equal(dt, v:dtype(), label)
          assert.equal("i64", c:dtype(), label)
          assert.same(a:shape(), inv:shape(), label)
          local gv = v:to("host"):flat()
          assert.equal(#wv, #gv, label)
          for k = 1, #wv do
            assert(gv[k] == wv[k] or (gv[k] ~= gv[k] and wv[k] ~= wv[k]), ("%s value %d: %s vs %s"):format(label, k, gv[k], wv[k]))
          end
          assert.same(wc, c:to("host"):flat(), label)
          assert.same(wi, inv:to("host"):flat(), label)
          -- values only, and each option alone
          assert.equal(#wv, ck.unique(a):numel(), label)
          local _, c2 = ck.unique(a, {counts = true})
          assert.same(wc, c2:to("host"):flat(), label)
          -- the inverse by searchsorted of a in the values (no permutation, no scatter): the same indices
          local v3, inv3 = ck.unique(a, {inverse = true, inverse_by = "search"})
          assert.equal(#wv, v3:numel(), label)
          assert.equal("i64", inv3:dtype(), label)
          assert.same(a:shape(), inv3:shape(), label)
          assert.same(wi, inv3:to("host"):flat(), label .. " inverse_by search")
        end
      end
      -- a transposed view (not copied first) with NaN and -0, and a 0-d array: both inverses, the same
      local M = ck.array({{3, 1, 3}, {0 / 0, 1, -0.0}}, {dtype = "f64"}):to(dev):t()
      local v1, i1 = ck.unique(M, {inverse = true})
      local _, i2 = ck.unique(M, {inverse = true, inverse_by = "search"})
      assert.equal(4, v1:numel())
      assert.same({3, 2}, i2:shape())
      assert.same(i1:to("host"):totable(), i2:to("host"):totable())
      assert.same({{3, 4}, {2, 2}, {3, 1}}, i2:to("host"):totable())
      local _, iz = ck.unique(ck.array({2.5}, {dtype = "f32"}):to(dev):reshape(), {inverse = true, inverse_by = "search"})
      assert.equal(0, iz:ndim())
      assert.equal(1, iz:item())
    end)
  end
end)
