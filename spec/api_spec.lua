--- The Lua API's shape: 1-based indexing, slicing, one meaning per name, Lua 5.4 operator semantics,
-- whole-array comparisons, constructors, options and printable tables. Fresh random inputs on every run.
local H = require "spec.helpers"
local ck = H.ck

-- The lead's dispatcher merge brings idiv/mod, unknown-variant errors and f32 x f64 matmul together; specs
-- for those run once the core lists idiv.
local MERGED = false
for _, op in ipairs(ck.core.ew_ops()) do if op.name == "idiv" then MERGED = true end end
local function after_merge(fn)
  return function(...)
    if not MERGED then return pending("needs the lead's dispatcher merge") end
    return fn(...)
  end
end

local function rshape(nd)
  local s = {}
  for d = 1, nd do s[d] = math.random(2, 6) end
  return s
end

-- Plain-Lua value of a nested table at a 1-based multi-index.
local function at(t, idx)
  for _, i in ipairs(idx) do t = t[i] end
  return t
end

local function err(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, "expected an error")
  return tostring(e)
end

describe("indexing", function()
  it("a[i] is a number for 1-D arrays (negative from the end) and matches totable()", function()
    for _, dt in ipairs {"f32", "f64", "i32"} do
      local n = math.random(3, 40)
      local a = H.rand({n}, dt)
      local t = a:totable()
      for _ = 1, 10 do
        local i = math.random(1, n)
        assert.equal(t[i], a[i])
        assert.equal(t[n + 1 - i], a[-i])
      end
      if dt == "i32" then assert.equal("integer", math.type(a[1])) end
    end
  end)

  it("a[i] of an N-D array is the view a:select(1, i), sharing storage", function()
    local shape = rshape(3)
    local a = H.rand(shape)
    local i = math.random(1, shape[1])
    local v = a[i]
    assert.same({shape[2], shape[3]}, v:shape())
    assert.equal(select(1, a:storage_id()), select(1, v:storage_id()))
    assert.same(a:totable()[i], v:totable())
    v:fill(3.5)
    assert.equal(3.5, a[{i, 1, 1}])
  end)

  it("a[{i, j, ...}] with a number per dim is a number", function()
    local shape = rshape(3)
    local a = H.rand(shape, "f64")
    local t = a:totable()
    for _ = 1, 10 do
      local idx = {math.random(1, shape[1]), math.random(1, shape[2]), math.random(1, shape[3])}
      assert.equal(at(t, idx), a[idx])
      local neg = {idx[1] - shape[1] - 1, idx[2] - shape[2] - 1, idx[3]}
      assert.equal(at(t, idx), a[neg])
    end
  end)

  it("a[{{f, l}, {}, k}] is a view with inclusive ranges, {} whole dims, numbers dropping their dim", function()
    local shape = rshape(3)
    local a = H.rand(shape, "f64")
    local t = a:totable()
    local f1 = math.random(1, shape[1]); local l1 = math.random(f1, shape[1])
    local k = math.random(1, shape[3])
    local v = a[{{f1, l1}, {}, k}]
    assert.same({l1 - f1 + 1, shape[2]}, v:shape())
    for i = f1, l1 do
      for j = 1, shape[2] do assert.equal(t[i][j][k], v[{i - f1 + 1, j}]) end
    end
    -- negative ranges and a missing trailing dim
    local w = a[{{-2, -1}}]
    assert.same({2, shape[2], shape[3]}, w:shape())
    assert.same({t[shape[1] - 1], t[shape[1]]}, w:totable())
    -- {i} keeps the dim
    assert.same({1, shape[2], shape[3]}, a[{{f1}}]:shape())
    -- a view, not a copy
    assert.equal(select(1, a:storage_id()), select(1, v:storage_id()))
  end)

  it("a:slice{...} is the same view as a[{...}] and always an array", function()
    local shape = rshape(2)
    local a = H.rand(shape)
    local r = {math.random(1, shape[1]), shape[1]}
    H.assert_equal(a:slice{r, {}}, a[{r, {}}])
    local s = a:slice{1, 2}
    assert.is_true(ck.is_array(s))
    assert.equal(0, s:ndim())
    assert.equal(a[{1, 2}], s:item())
  end)

  it("out-of-range indices are errors naming the dim, its size and the index", function()
    local shape = rshape(2)
    local a = H.rand(shape)
    assert.matches(("index %d is out of range for dim 1 %%(size %d%%)"):format(shape[1] + 2, shape[1]),
      err(function() return a[shape[1] + 2] end))
    assert.matches(("index %%-%d is out of range for dim 2 %%(size %d%%)"):format(shape[2] + 1, shape[2]),
      err(function() return a[{1, -shape[2] - 1}] end))
    assert.matches("index 0 is out of range", err(function() return a[0] end))
    assert.matches(("range {1, %d} is out of range for dim 2"):format(shape[2] + 1),
      err(function() return a[{{}, {1, shape[2] + 1}}] end))
    assert.matches("must be {first, last}", err(function() return a:slice{{1, 2, 3}} end))
  end)

  it("a[#a + 1] is nil and ipairs(a) visits exactly #a items", function()
    local v = H.rand({math.random(2, 30)}, "i32")
    local t = v:totable()
    assert.is_nil(v[#v + 1])
    local seen = {}
    for i, x in ipairs(v) do seen[i] = x end
    assert.same(t, seen)
    local m = H.rand(rshape(2))
    local rows = 0
    for i, row in ipairs(m) do
      rows = i
      assert.same(m:totable()[i], row:totable())
    end
    assert.equal(#m, rows)
  end)

  it("keeps method lookup and refuses other fields", function()
    local a = H.rand(rshape(2))
    assert.equal("function", type(a.sum))
    -- unknown fields and non-index keys are errors, not nil (issue 29): a typo must not read as "absent"
    assert.matches("no method or field 'no_such_method'", err(function() return a.no_such_method end))
    assert.matches("cannot index a cukern array with a boolean", err(function() return a[true] end))
    assert.matches("\"x\" is not a dim position", err(function() return a[{x = 1}] end))
    assert.matches("cannot set \"x\"", err(function() a.x = 1 end))
  end)

  it("a[...] = number fills (cast to the array's dtype); a[...] = array copies with broadcast and cast", function()
    local shape = rshape(2)
    local a = H.rand(shape, "i32")
    local t = a:totable()
    local i, j = math.random(1, shape[1]), math.random(1, shape[2])
    local x = math.random(-100, 100) + 0.75
    a[{i, j}] = x
    t[i][j] = math.tointeger(x < 0 and math.ceil(x) or math.floor(x)) -- f -> i32 truncates
    assert.same(t, a:totable())
    -- a row from an f64 array into an i32 array
    local row = H.rand({shape[2]}, "f64") * 50
    a[i] = row
    for k, v in ipairs(row:totable()) do t[i][k] = math.tointeger(v < 0 and math.ceil(v) or math.floor(v)) end
    assert.same(t, a:totable())
    -- a column broadcast into a block
    local f = H.rand(shape, "f64")
    local ft = f:totable()
    local col = H.rand({2, 1}, "f64")
    f[{{1, 2}, {}}] = col
    for r = 1, 2 do for c = 1, shape[2] do ft[r][c] = col[{r, 1}] end end
    assert.same(ft, f:totable())
    -- a 1-D element
    local v = H.rand({5}, "f64")
    local y = math.random()
    v[-1] = y
    assert.equal(y, v[5])
  end)

  it("a[...] = array refuses an array on another device", H.gpu(function()
    local a = H.rand({3, 3}, "f32", "cuda")
    local b = H.rand({3}, "f32", "host")
    assert.matches("a%[i%] = v: the value is on host:0 and the array on cuda:0; move it first with v:to%(\"cuda:0\"%)", err(function() a[1] = b end))
  end))
end)

describe("one meaning per name", function()
  it("a:sub(b) subtracts like a - b; a:sub{...} says to use a:slice", function()
    local shape = rshape(2)
    local a, b = H.rand(shape), H.rand(shape)
    H.assert_equal(a:sub(b), a - b)
    local s = math.random() * 10
    H.assert_equal(a:sub(s), a - s)
    local c = a:clone()
    c:sub_(b)
    H.assert_equal(c, a - b)
    assert.matches("a:slice", err(function() return a:sub{{1, 2}} end))
  end)

  it("the elementwise functions and methods come from core.ew_ops()", function()
    local n = 0
    for _, op in ipairs(ck.core.ew_ops()) do
      if op.lua then
        n = n + 1
        assert.equal("function", type(ck[op.name]), op.name)
        assert.equal("function", type(ck.core.methods[op.name]), op.name)
        assert.equal("function", type(ck.core.methods[op.name .. "_"]), op.name .. "_")
      end
    end
    assert.equal(#ck.unary_ops + #ck.binary_ops, n)
    -- a method agrees with its function
    local a, b = H.rand(rshape(2), "f64"), nil
    b = H.rand(a:shape(), "f64")
    H.assert_equal(a:maximum(b), ck.maximum(a, b))
    H.assert_equal(a:abs(), ck.abs(a))
  end)
end)

describe("operators follow Lua 5.4", function()
  it("/ on i32 arrays gives f64 (true division), as Lua's / gives floats", function()
    local shape = rshape(2)
    local a = H.rand(shape, "i32")
    local b = H.rand(shape, "i32")
    b = b + b:eq(0) -- no zero divisors
    local q = a / b
    assert.equal("f64", q:dtype())
    local at_, bt, qt = a:flat(), b:flat(), q:flat()
    for k = 1, #qt do assert.equal(at_[k] / bt[k], qt[k]) end
    local s = math.random(2, 9)
    local qs = a / s
    assert.equal("f64", qs:dtype())
    for k, v in ipairs(qs:flat()) do assert.equal(at_[k] / s, v) end
    local rs = s / b
    for k, v in ipairs(rs:flat()) do assert.equal(s / bt[k], v) end
    -- with a float array the core's promotion decides (i32 with f32 gives f32)
    local f = H.rand(shape, "f32")
    assert.equal("f32", (a / f):dtype())
    -- ck.div keeps the operands' dtype (i32 truncates toward zero)
    assert.equal("i32", ck.div(a, b):dtype())
  end)

  it("// is floor division and % has the divisor's sign (Lua's rules)", after_merge(function()
    for _, dt in ipairs {"f64", "i32"} do
      local shape = rshape(2)
      local a = dt == "i32" and H.rand(shape, "i32") or H.rand(shape, "f64") * 20
      local b = dt == "i32" and H.rand(shape, "i32") or H.rand(shape, "f64") * 5
      local at_, bt = a:flat(), b:flat()
      local fd, md = (a // b):flat(), (a % b):flat()
      for k = 1, #at_ do
        if bt[k] == 0 and dt == "i32" then
          assert.equal(0, fd[k]); assert.equal(0, md[k])
        elseif bt[k] ~= 0 then
          assert.near(at_[k] // bt[k], fd[k], 1e-12 * math.abs(at_[k]))
          assert.near(at_[k] % bt[k], md[k], 1e-12 * math.abs(at_[k]) + 1e-12)
        end
      end
    end
  end))

  it(".., < and <= raise errors that say what to use; == is identity", function()
    local a = H.rand(rshape(2))
    assert.matches("tostring%(a%)", err(function() return a .. "x" end))
    assert.matches("a:lt%(b%)", err(function() return a < a end))
    assert.matches("a:le%(b%)", err(function() return a <= 1 end))
    local c = a:clone()
    assert.is_true(a == a)
    assert.is_false(a == c)
    assert.is_true(ck.equal(a, c))
  end)
end)

describe("whole-array comparisons", function()
  it("ck.equal compares shape and values and returns a boolean", function()
    local shape = rshape(2)
    local a = H.rand(shape, "f64")
    local b = a:clone()
    assert.is_true(ck.equal(a, b))
    local i, j = math.random(1, shape[1]), math.random(1, shape[2])
    b[{i, j}] = a[{i, j}] + 1
    assert.is_false(ck.equal(a, b))
    assert.is_false(ck.equal(a, a:reshape(-1)))
    assert.is_true(ck.equal(a:to("f32"):to("f64"), a:to("f32"))) -- values, across dtypes
    a[{i, j}] = 0 / 0
    assert.is_false(ck.equal(a, a)) -- NaN is not equal to itself
    assert.is_true(ck.equal(ck.empty(0, 3), ck.empty(0, 3)))
  end)

  it("ck.allclose uses |a - b| <= atol + rtol * |b| and returns a boolean", function()
    local shape = rshape(2)
    local b = H.rand(shape, "f64") + 2 -- |b| in [1, 3)
    local i, j = math.random(1, shape[1]), math.random(1, shape[2])
    local a = b:clone()
    a[{i, j}] = b[{i, j}] * (1 + 2e-5)
    assert.is_false(ck.allclose(a, b))           -- default rtol 1e-5
    assert.is_true(ck.allclose(a, b, 3e-5))
    assert.is_true(ck.allclose(a, b, 0, 1e-4))    -- atol alone
    assert.is_true(ck.allclose(b, b:clone(), 0, 0))
    local inf = b:clone(); inf[{i, j}] = math.huge
    assert.is_true(ck.allclose(inf, inf))
    local nan = b:clone(); nan[{i, j}] = 0 / 0
    assert.is_false(ck.allclose(nan, nan))
    assert.is_true(ck.allclose(ck.full(shape, 2), 2)) -- a number broadcasts
  end)
end)

describe("constructors", function()
  it("ck.scalar is always 0-d", function()
    local x = math.random() * 100
    local s = ck.scalar(x, {dtype = "f64"})
    assert.equal(0, s:ndim())
    assert.equal(x, s:item())
    assert.equal(0, ck.scalar(ck.array({x})):ndim())
    assert.matches("must be a number", err(ck.scalar, {x}))
  end)

  it("ck.randint gives integers in [lo, hi] (inclusive), i32 by default", function()
    local lo = math.random(-20, 5)
    local hi = lo + math.random(0, 4)
    local r = ck.randint(lo, hi, 400)
    assert.equal("i32", r:dtype())
    local seen = {}
    for _, v in ipairs(r:flat()) do
      assert(v >= lo and v <= hi, "out of range: " .. v)
      seen[v] = true
    end
    for v = lo, hi do assert(seen[v], ("%d never drawn in 400 draws from [%d, %d]"):format(v, lo, hi)) end
  end)

  it("rand with an integer dtype explains what to do instead", function()
    assert.matches("ck.rand: makes floating%-point.*ck.randint", err(ck.rand, 2, {dtype = "i32"}))
  end)

  it("issue 18's silently accepted calls now fail or work", function()
    assert.matches("ck.eye: n must be", err(ck.eye))
    assert.matches("ck.full: shape must be", err(ck.full, nil, 1))
    assert.matches("ck.arange: stop must be a finite number, got NaN", err(ck.arange, 0 / 0))
    assert.matches("ck.arange: .* too many", err(ck.arange, math.mininteger, math.maxinteger))
    local A = H.rand(rshape(2))
    assert.equal("f64", A:to(nil, "f64"):dtype())
    H.assert_close(A:to(nil, "f64"), A:to("f64"))
    assert.matches("ck.gemm: argument 1 %(c%)", err(ck.gemm, nil, A, A:t()))
    local i = ck.empty(1, {dtype = "i32", device = "host"})
    assert.matches("idx needs a dim", err(ck.max, A, {idx = i}))
    assert.matches("unknown option \"dtype\"", err(ck.add, A, A, {dtype = "f64"}))
    assert.matches("unknown option \"keepdim\"", err(ck.matmul, A, A:t(), {keepdim = true}))
    assert.matches("unknown option \"variant\"", err(ck.zeros, 2, {variant = "x"}))
    assert.matches("must be {first, last}", err(A.slice, A, {{1, 2, 3}}))
    assert.matches("overflows", err(A.reshape, A, 2 ^ 62, 4, -1))
    -- argmax's out= receives the indices
    local o = ck.empty(A:size(1), {dtype = "i64", device = "host"})
    local r = ck.argmax(A, 2, {out = o})
    assert.equal(o, r)
    H.assert_equal(o, ck.argmax(A, 2))
    local vo, io = ck.empty(A:size(1), {device = "host"}), ck.empty(A:size(1), {dtype = "i64", device = "host"})
    assert.matches("must be different arrays", err(ck.max, A, 2, {out = io, idx = io}))
    ck.max(A, 2, {out = vo, idx = io})
    local v, idx = ck.max(A, 2)
    H.assert_equal(vo, v)
    H.assert_equal(io, idx)
  end)
end)

describe("options", function()
  it("wrong option types are errors naming the option and what it takes", function()
    local a = H.rand(rshape(2))
    assert.matches("option dtype must be a dtype name", err(ck.zeros, 2, {dtype = 32}))
    assert.matches("option out must be a %(live%) cukern array", err(ck.exp, a, {out = {}}))
    assert.matches("option keepdim must be true or false", err(ck.sum, a, 1, {keepdim = "yes"}))
    assert.matches("option variant must be a variant name or id", err(ck.transpose, a, {variant = 1.5}))
    assert.matches("unknown option \"idx\" %(ck.sum takes keepdim, variant, out%)", err(ck.sum, a, {idx = a}))
  end)

  it("unknown variant names and ids are errors listing the valid names", after_merge(function()
    local a = H.rand(rshape(2))
    for _, f in ipairs {
      function() return ck.add(a, a, {variant = "bogus"}) end,
      function() return ck.sum(a, 1, {variant = 99}) end,
      function() return ck.transpose(a, {variant = "bogus"}) end,
      function() return ck.matmul(a, a:t(), {variant = "bogus"}) end,
    } do
      assert.matches("variant", err(f))
    end
  end))
end)

describe("matmul dtypes", function()
  it("promotes f32 x f64 to f64 like elementwise ops", after_merge(function()
    local a, b = H.rand({3, 4}, "f32"), H.rand({4, 5}, "f64")
    local c = a * b
    assert.equal("f64", c:dtype())
    H.assert_close(c, a:to("f64") * b)
  end))
end)

describe("printable tables", function()
  it("shape, strides and size print as {3, 4} and stay plain sequences", function()
    local shape = rshape(2)
    local a = H.rand(shape)
    assert.equal(("{%d, %d}"):format(shape[1], shape[2]), tostring(a:shape()))
    assert.equal(("{%d, 1}"):format(shape[2]), tostring(a:strides()))
    assert.equal(tostring(a:shape()), tostring(a:size()))
    assert.same(shape, a:shape())
    assert.equal(shape[1] .. "x" .. shape[2], table.concat(a:shape(), "x"))
    assert.equal("{}", tostring(ck.scalar(1):shape()))
  end)

  it("ck.memory(), ck.device() and ck.last_ran() print their fields", function()
    assert.matches("^{.*host_in_use = %d+.*}$", tostring(ck.memory()))
    assert.matches("backend = \"", tostring(ck.device()))
    ck.add(H.rand({2}), 1)
    assert.matches("name = \"", tostring(ck.last_ran()))
  end)
end)

describe("README", function()
  it("its REPL session is a real transcript (replayed through lua5.4 -i)", function()
    if H.has_cuda then return pending("the transcript was taken on the host backend; this machine has a GPU") end
    local f = assert(io.open("README.md"))
    local text = f:read("a")
    f:close()
    local block = text:match("## A REPL session.-```lua\n(.-)```")
    assert(block, "README.md has no REPL session block")
    local input = {}
    for line in block:gmatch("[^\n]*\n") do
      local cmd = line:match("^> (.*)\n$")
      if cmd then input[#input + 1] = cmd end
    end
    assert(#input > 5, "too few REPL lines")
    local tmp = os.tmpname()
    local w = assert(io.open(tmp, "w"))
    w:write(table.concat(input, "\n"), "\n")
    w:close()
    local lua = os.getenv("LUA") or "lua5.4"
    local p = assert(io.popen(("LUA_PATH='./lua/?.lua;./lua/?/init.lua;;' LUA_CPATH='./?.so;;' %s -i < %s 2>&1")
      :format(lua, tmp)))
    local out = p:read("a")
    p:close()
    os.remove(tmp)
    out = out:gsub("^[^\n]*\n", "", 1):gsub("> \n?$", "") -- the banner line and the last prompt
    assert.equal(block, out)
  end)
end)
