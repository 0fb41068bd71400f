--- ck.map and ck.reduce_map on every real dtype (issue 32): each against the built-in ops bit for bit (the ops are
-- the oracle: the expression language is their rows), the generated kernels against the host evaluator under the
-- CPU emulation and through NVRTC, and on the GPU against the host.
local H = require "spec.helpers"
local ck = H.ck

local DT = {"bool", "u8", "i8", "i16", "i32", "u32", "i64", "f16", "bf16", "f32", "f64"}
local FLOAT = {f16 = true, bf16 = true, f32 = true, f64 = true}

--- Fresh random values of a dtype (never all zeros): integers over their whole range half of the time, small
-- (so that products and quotients are not all wraps) otherwise; floats in [-4, 4) rounded by the dtype.
local function rnd(dt, shape, device)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  if FLOAT[dt] then return (ck.rand(shape, {dtype = dt, device = device}) * 8 - 4) end
  local v = {}
  for i = 1, n do
    if dt == "bool" then v[i] = math.random(0, 1) == 1
    elseif math.random() < 0.5 then v[i] = math.random(H.int_range(dt))
    else v[i] = math.random(math.max((H.int_range(dt)), -20), 20) end
  end
  if dt == "bool" then v[1] = true end
  return ck.array(v, {dtype = dt, device = device}):reshape(shape)
end

local function num(v) if type(v) == "boolean" then return v and 1 or 0 end return v end

--- Equal bit for bit: dtype, shape, values (NaN matches NaN; the sign of a zero counts).
local function same(got, ref, label)
  assert(got:dtype() == ref:dtype(), ("%s: dtype %s, expected %s"):format(label, got:dtype(), ref:dtype()))
  assert(table.concat(got:shape(), "x") == table.concat(ref:shape(), "x"), label .. ": shape")
  local g, r = got:to("host"):flat(), ref:to("host"):flat()
  for i = 1, #r do
    local a, b = num(g[i]), num(r[i])
    local ok = (a == b and (a ~= 0 or 1 / a == 1 / b)) or (a ~= a and b ~= b)
    if not ok then
      error(("%s: flat index %d: got %s, expected %s (seed %d)"):format(label, i, tostring(a), tostring(b), H.seed), 2)
    end
  end
end

--- An output of the result's shape and dtype, poisoned (NaN for floats, 77 for integers, true for bool).
local function poisoned(ref)
  local o = ck.empty(ref:shape(), {dtype = ref:dtype(), device = ref:device()})
  return o:fill(FLOAT[ref:dtype()] and 0 / 0 or ref:dtype() == "bool" and 1 or 77)
end

describe("ck.map on every real dtype", function()
  local prev
  setup(function() prev = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev) end)

  it("gives the built-in op's result bit for bit for every pair of dtypes (views, broadcasting, poisoned out)", function()
    local ops = {{"x + y", "add"}, {"x - y", "sub"}, {"x * y", "mul"}, {"x / y", "div"}, {"max(x, y)", "maximum"},
      {"min(x, y)", "minimum"}}
    local cmps = {{"x < y", "lt"}, {"x == y", "eq"}, {"x >= y", "ge"}}
    for _, dx in ipairs(DT) do
      for _, dy in ipairs(DT) do
        local x = rnd(dx, {7, 5}):t()          -- a transposed view, 5x7
        local y = rnd(dy, {5, 1})              -- broadcast along the columns
        for _, o in ipairs(ops) do
          local ref = x[o[2]](x, y)
          local got = ck.map(o[1], {x = x, y = y}, {out = poisoned(ref)})
          same(got, ref, ("%s with x %s, y %s"):format(o[1], dx, dy))
        end
        for _, o in ipairs(cmps) do -- 1/0 in the operands' type (bool with bool stays bool)
          local t = (dx == "bool" and dy == "bool") and "bool" or x:add(y):dtype()
          same(ck.map(o[1], {x = x, y = y}), x[o[2]](x, y):to(t), ("%s with x %s, y %s"):format(o[1], dx, dy))
        end
      end
    end
  end)

  it("follows the ops' rule for numbers on every dtype (a number keeps an integer dtype it is a value of)", function()
    for _, dt in ipairs(DT) do
      local x = rnd(dt, {3, 11}):narrow(2, 2, 9)
      same(ck.map("x + 2", {x = x}), x:add(2), dt .. " + 2")
      same(ck.map("x * 0.5", {x = x}), x:mul(0.5), dt .. " * 0.5")
      same(ck.map("x + 300", {x = x}), x:add(300), dt .. " + 300")
      same(ck.map("x - n", {x = x, n = 3}), x:sub(3), dt .. " - n")
      same(ck.map("x * n", {x = x, n = 70000}), x:mul(70000), dt .. " * 70000")
      same(ck.map("x / n", {x = x, n = -2.5}), x:div(-2.5), dt .. " / -2.5")
      -- -0.0 is a value of every integer dtype (i32 + -0.0 stays i32) and stays -0 with floats (-0 + -0 is -0)
      local xz = x:clone()
      if dt:match("^b?f") then xz[1] = -0.0 end
      same(ck.map("x + n", {x = xz, n = -0.0}), xz:add(-0.0), dt .. " + -0.0")
      -- a number computed from numbers keeps only an i64 array's dtype (its value is not known when typed): with
      -- n = 0, n - 1 = -1 must not wrap into u8 or u32 (x:add(-1) is f64 there)
      local want = dt == "i64" and x:add(-1) or x:to("f64"):add(-1)
      if dt:match("^b?f") then want = x:add(-1) end
      same(ck.map("x + (n - 1)", {x = x, n = 0}), want, dt .. " + (n - 1)")
      same(ck.map("x + -n", {x = x, n = 1}), want, dt .. " + -n")
    end
    -- an expression of numbers alone: a number i32 holds is i32 (i64 beyond i32's range); one computed from
    -- numbers is i64, its value unknown when the kernel is typed; floats f32
    assert.equals("i32", ck.map("a", {a = 2}):dtype())
    assert.equals("i64", ck.map("a + 1", {a = 2}):dtype())
    assert.equals(4294967296, ck.map("a * a", {a = 65536}):item()) -- (was i32 0: the operands' dtypes)
    assert.equals("i64", ck.map("a + 1", {a = 1 << 40}):dtype())
    assert.equals((1 << 40) + 1, ck.map("a + 1", {a = 1 << 40}):item())
    assert.equals("f32", ck.map("a + 0.5", {a = 2}):dtype())
  end)

  it("wraps integers modulo 2^bits per node and divides by zero as the ops define it", function()
    local u = ck.array({200, 255, 0}, {dtype = "u8"})
    same(ck.map("x + 100", {x = u}), ck.array({44, 99, 100}, {dtype = "u8"}), "u8 200 + 100")
    same(ck.map("x * 2 / 2", {x = u}), ck.array({72, 127, 0}, {dtype = "u8"}), "u8 per-node wrap")
    same(ck.map("-x", {x = u}), ck.array({56, 1, 0}, {dtype = "u8"}), "u8 negation")
    local big = ck.array({math.maxinteger, math.mininteger, math.maxinteger - 5}, {dtype = "i64"})
    same(ck.map("x + 1", {x = big}), big:add(1), "i64 + 1 near 2^63")
    assert.equals(math.mininteger, ck.map("x + 1", {x = big}):flat()[1])
    same(ck.map("x * x", {x = big}), big:mul(big), "i64 * i64")
    same(ck.map("x - n", {x = big, n = math.maxinteger}), big:sub(math.maxinteger), "i64 - (2^63 - 1), exact")
    same(ck.map("x / -1", {x = big}), big:div(-1), "i64 MIN / -1")
    local i = ck.array({2147483647, -2147483648, 7}, {dtype = "i32"})
    same(ck.map("x + 1", {x = i}), ck.array({-2147483648, -2147483647, 8}, {dtype = "i32"}), "i32 overflow")
    same(ck.map("x / -1", {x = i}), i:div(-1), "i32 MIN / -1")
    for _, dt in ipairs({"u8", "i8", "i16", "i32", "u32", "i64"}) do
      local x = rnd(dt, {9})
      local z = ck.zeros(9, {dtype = dt})
      same(ck.map("x / z", {x = x, z = z}), x:div(z), dt .. " / 0")
      same(ck.map("x % z", {x = x, z = z}), z, dt .. " % 0")
      same(ck.map("x / 0", {x = x}), x:div(0), dt .. " / literal 0")
    end
  end)

  it("mixes dtypes in one expression as the ops would, node by node", function()
    local a, b, c = rnd("u8", {4, 6}), rnd("i64", {4, 6}), rnd("f16", {6})
    same(ck.map("a + b", {a = a, b = b}), a:add(b), "u8 + i64")
    same(ck.map("(a + b) * c", {a = a, b = b, c = c}), a:add(b):mul(c), "(u8 + i64) * f16")
    local p, q = rnd("bool", {4, 6}), rnd("f16", {4, 6})
    same(ck.map("p * q + q", {p = p, q = q}), p:mul(q):add(q), "bool with f16")
    local s, f = rnd("i16", {4, 6}), rnd("f32", {4, 6})
    same(ck.map("s * f - s", {s = s, f = f}), s:mul(f):sub(s), "i16 with f32")
    local w, v = rnd("u32", {4, 6}), rnd("i32", {4, 6})
    same(ck.map("w + v * v", {w = w, v = v}), w:add(v:mul(v)), "u32 with i32 (-> i64)")
    local h, g = rnd("bf16", {4, 6}), rnd("f16", {4, 6})
    same(ck.map("h * g + h / g", {h = h, g = g}), h:mul(g):add(h:div(g)), "bf16 with f16 (-> f32)")
    -- halves round after every node, as the ops store every result
    local x, y, z = rnd("f16", {33}), rnd("f16", {33}), rnd("f16", {33})
    same(ck.map("x * y + z * x - y", {x = x, y = y, z = z}), x:mul(y):add(z:mul(x)):sub(y), "f16 chain")
    local bx, by = rnd("bf16", {33}), rnd("bf16", {33})
    same(ck.map("sqrt(abs(bx)) * by + exp(by)", {bx = bx, by = by}), bx:abs():sqrt():mul(by):add(by:exp()), "bf16 functions")
  end)

  it("casts to every real dtype by the library's conversion rule", function()
    local f = ck.array({-1.5, 300.7, 0 / 0, 1e30, -1e30, 2.5, -0.0, 65504}, {dtype = "f64"})
    for _, dt in ipairs(DT) do
      same(ck.map(dt .. "(x)", {x = f}), f:to(dt), "f64 -> " .. dt)
      same(ck.map("f64(x)", {x = f:to(dt)}), f:to(dt):to("f64"), dt .. " -> f64")
      local i = rnd("i64", {16})
      same(ck.map(dt .. "(x)", {x = i}), i:to(dt), "i64 -> " .. dt)
    end
    same(ck.map("i64(x) * 4294967296", {x = ck.array({3, -3}, {dtype = "i32"})}),
      ck.array({3 * 4294967296, -3 * 4294967296}, {dtype = "i64"}), "i64() widens before the product")
    same(ck.map("x + 1", {x = f}, {dtype = "u8"}), f:add(1):to("u8"), "dtype = u8")
    for _, dt in ipairs(DT) do assert.equals(dt, ck.map("x", {x = f}, {dtype = dt}):dtype()) end
  end)

  it("refuses what has no meaning, naming the op, input, dtype and position", function()
    local u = rnd("u8", {3})
    local ok, err = pcall(ck.map, "x + exp(u)", {x = 1.5, u = u})
    assert.is_false(ok)
    assert.matches("exp takes floats, not u8 %(cast first: exp%(f32%(x%)%) or exp%(f64%(x%)%)%) at position 5", err)
    ok, err = pcall(ck.map, "x + y", {x = u, y = ck.complex(ck.ones(3), ck.ones(3))})
    assert.is_false(ok)
    assert.matches("input 'y' is c64; expressions take the real dtypes", err)
    assert.matches("position 5", err)
    ok, err = pcall(ck.map, "x", {x = u}, {dtype = "c64"})
    assert.is_false(ok)
    assert.matches("dtype must be a real dtype", err)
    ok, err = pcall(ck.map, "x", {x = u:to("e4m3")})
    assert.is_false(ok)
    assert.matches("input 'x' is e4m3", err)
  end)
end)

describe("ck.reduce_map on every real dtype", function()
  local prev
  setup(function() prev = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev) end)

  it("accumulates integers and bool in i64 as ck.sum, halves in f32", function()
    local sum = ck.reduce_map{map = "x", reduce = "a + b", identity = 0}
    local mx = ck.reduce_map{map = "x", reduce = "max(a, b)", identity = -math.huge}
    for _, dt in ipairs(DT) do
      local x = rnd(dt, {6, 40}):t()
      local r = sum({x = x}, {dim = 1})
      assert.equals(ck.sum(x, 1):dtype(), r:dtype(), dt)
      if FLOAT[dt] then
        H.assert_close(r:to("f64"), ck.sum(x:to("f64"), 1), {rtol = dt == "f64" and 1e-12 or 1e-2, atol = 1e-2}, dt)
      else
        same(r, ck.sum(x, 1), "sum of " .. dt)
        same(mx({x = x}, {dim = 1}), ck.max(x, 1):to("i64"), "max of " .. dt)
      end
    end
    for _, dt in ipairs {"f16", "bf16"} do -- a half's post in f32 gives the half back, unless it casts to f32
      local h = rnd(dt, {5, 30})
      local f = ck.reduce_map({map = "x", reduce = "a + b", identity = 0, post = "f32(r)"}, {x = h}, {dim = 2})
      assert.equals("f32", f:dtype(), dt)
      H.assert_close(f:to("f64"), ck.sum(h:to("f64"), 2), {rtol = 1e-5, atol = 1e-5}, dt .. " f32(r)")
      assert.equals(dt, ck.reduce_map({map = "x", reduce = "a + b", identity = 0, post = "r / n"}, {x = h}):dtype())
    end
    local u = ck.full({1000}, 255, {dtype = "u8"})
    assert.equals(255000, sum({x = u}):item())
    same(sum({x = u}), ck.sum(u), "no wrap")
  end)

  -- An integer accumulator's identity saturates: math.huge (or math.maxinteger, 2^63 once a double) is i64's
  -- maximum and -math.huge its minimum; the cast rule would have made every one of them the minimum, so a min
  -- reduction returned INT64_MIN whatever the data
  it("saturates an integer identity (math.huge for a min, math.maxinteger, -math.huge for a max)", function()
    local mn = ck.reduce_map{map = "x", reduce = "min(a, b)", identity = math.huge}
    local mi = ck.reduce_map{map = "x", reduce = "min(a, b)", identity = math.maxinteger}
    local mx = ck.reduce_map{map = "x", reduce = "max(a, b)", identity = -math.huge}
    for _, dt in ipairs {"u8", "i8", "i16", "i32", "u32", "i64"} do
      local x = rnd(dt, {9, 13}):t()
      same(mn({x = x}, {dim = 2}), ck.min(x, 2):to("i64"), "min of " .. dt)
      same(mi({x = x}), ck.min(x):to("i64"), "min (maxinteger) of " .. dt)
      same(mx({x = x}, {dim = 1}), ck.max(x, 1):to("i64"), "max of " .. dt)
    end
    assert.equals(math.maxinteger, mn({x = ck.empty({0}, {dtype = "i32"})}):item()) -- (an empty min: the identity)
  end)
end)

-- ---------------------------------------------------------------- generated kernels without a GPU

describe("ck.map's generated kernels on every dtype", function()
  local prev
  setup(function() prev = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev) end)
  local E = require "spec.cuda_emu"
  local EXPRS = {"x + y", "x * y - x / y", "max(x, y) + min(x, y) * 3", "x < y ? x % y : -x", "clamp(x, y, 2) + abs(x)",
    "where(x != 0 && !(y > x), x, y)", "u8(x) + i64(y) * 2", "f16(x) * bf16(y)", "bool(x) + i16(y)"}

  local function run_emu(expr, inputs, label)
    local ref = ck.map(expr, inputs)
    local out = ck.empty(ref:shape(), {dtype = ref:dtype()})
    local src, info = ck.map_source(expr, inputs, {out = out})
    local got = E.run(src, info, inputs, {out = out})
    local r = ref:flat()
    for j = 1, #r do
      local a, b = got.out[j], num(r[j])
      assert((a == b) or (a ~= a and b ~= b),
        ("%s [%s]: element %d: emulated %s, host %s (seed %d)"):format(expr, label, j, tostring(a), tostring(b), H.seed))
    end
  end

  it("run like the host evaluator, bit for bit, under the CPU emulation", function()
    if not E.available() then return pending("g++ with C++20 <barrier> not found") end
    local pairs_ = {{"u8", "u8"}, {"i8", "i16"}, {"u32", "i32"}, {"i64", "i64"}, {"bool", "bool"}, {"bool", "f16"},
      {"f16", "f16"}, {"bf16", "bf16"}, {"u8", "i64"}, {"i16", "f32"}, {"f64", "u32"}}
    for _, p in ipairs(pairs_) do
      -- vec4 (contiguous), then strided (a transposed view with a broadcast operand)
      local x, y = rnd(p[1], {13}), rnd(p[2], {13})
      run_emu(EXPRS[(_ % #EXPRS) + 1], {x = x, y = y}, p[1] .. "," .. p[2] .. " contiguous")
      run_emu("x * y + x - 1", {x = x, y = y}, p[1] .. "," .. p[2] .. " contiguous")
      local xs, ys = rnd(p[1], {3, 5}):t(), rnd(p[2], {1, 3})
      run_emu("x + y * 3 / (y + 1)", {x = xs, y = ys}, p[1] .. "," .. p[2] .. " strided")
    end
    -- a number input that is an exact i64, as a kernel parameter
    run_emu("x + n", {x = rnd("i64", {9}), n = math.maxinteger - 3}, "i64 number")
  end)

  it("run reduce_map's kernels like the host evaluator (i64 accumulators exactly, halves to rounding)", function()
    if not E.available() then return pending("g++ with C++20 <barrier> not found") end
    local function check(spec, inputs, opts, layout, exact)
      local ref = ck.reduce_map(spec, inputs, opts)
      local out = ck.empty(ref:shape(), {dtype = ref:dtype()})
      local o = {}
      for k, v in pairs(opts) do o[k] = v end
      o.out = out
      local src, info = ck.map_source(spec, inputs, o)
      assert.equals(layout, info.layout, spec.map)
      local arrays = {}
      for k, v in pairs(inputs) do if ck.is_array(v) then arrays[k] = v end end
      local got, r = E.run(src, info, arrays, {out = out}).out, ref:flat()
      for j = 1, #r do
        local a, b = got[j], num(r[j])
        local msg = ("%s [%s] %s element %d: emulated %s, host %s"):format(spec.map, layout, ref:dtype(), j, tostring(a), tostring(b))
        if exact then assert(a == b, msg) else assert(math.abs(a - b) <= 2e-3 * math.abs(b) + 2e-3, msg) end
      end
    end
    local sum = {map = "x", reduce = "a + b", identity = 0}
    check(sum, {x = rnd("u8", {33, 100})}, {dim = 2}, "rows_warp", true)
    check(sum, {x = rnd("bool", {3, 9000})}, {dim = 1}, "cols", true)
    check({map = "x * y", reduce = "max(a, b)", identity = -math.huge}, {x = rnd("i64", {5, 700}), y = rnd("i8", {700})},
      {dim = 2}, "rows", true)
    check({map = "x * s", reduce = "a + b", identity = 0, post = "r / n"}, {x = rnd("f16", {20000}), s = 3}, {}, "all", false)
    check({map = "x", reduce = "a + b", identity = 0}, {x = rnd("u32", {20000})}, {}, "all", true)
  end)

  it("compile with NVRTC for every dtype, input and output", function()
    local probe = pcall(ck.kernel_build, "extern \"C\" __global__ void k() {}", "k", {arch = "sm_90"})
    if not probe then return pending("NVRTC is not available here") end
    for _, dt in ipairs(DT) do
      for _, expr in ipairs(EXPRS) do
        local inputs = {x = rnd(dt, {8}), y = rnd(dt == "bool" and "bool" or "i16", {8})}
        for _, o in ipairs({{}, {dtype = dt}}) do
          local ok, src, info = pcall(ck.map_source, expr, inputs, o)
          if ok then
            local built, r = pcall(ck.kernel_build, src, info.entry, {arch = "sm_90"})
            assert(built, dt .. " " .. expr .. ": " .. tostring(r))
          else
            assert.matches("takes floats", src) -- (only float-only functions on integers may refuse)
          end
        end
      end
      local src, info = ck.map_source({map = "x * 2", reduce = "a + b", identity = 0, post = "r / n"},
        {x = rnd(dt, {100000})}, {})
      local built, r = pcall(ck.kernel_build, src, info.entry, {arch = "sm_90"})
      assert(built, "reduce_map " .. dt .. ": " .. tostring(r))
      if info.finisher then
        built, r = pcall(ck.kernel_build, info.finisher, info.finisher:match("void __launch_bounds__%(256%) (ck_rfin_%x+)"),
          {arch = "sm_90"})
        assert(built, "reduce_map finisher " .. dt .. ": " .. tostring(r))
      end
    end
  end)
end)

-- ---------------------------------------------------------------- on the GPU, against the host

describe("ck.map on every real dtype on the GPU", function()
  -- Bit for bit, floats too: these expressions use only correctly rounded operations (+ - * /, fmod, max,
  -- comparisons, casts), the generated code is compiled with --fmad=false, and halves round after every node on
  -- both sides. Three layouts: a broadcast operand (the strided kernel), same-shape contiguous operands (the
  -- vector loads of 1-, 2- and 8-byte dtypes) and an offset view (the contiguous kernel without them).
  it("matches the host bit for bit: strided, contiguous and offset operands", H.gpu(function()
    for _, dx in ipairs(DT) do
      for _, dy in ipairs({"bool", "u8", "i64", "f16", "f32"}) do
        local layouts = {
          broadcast = {rnd(dx, {33, 9}), rnd(dy, {9})},
          contiguous = {rnd(dx, {64, 9}), rnd(dy, {64, 9})},
          offset = {rnd(dx, {34, 9}):narrow(1, 2, 34), rnd(dy, {33, 9})},
        }
        for name, xy in pairs(layouts) do
          local x, y = xy[1], xy[2]
          for _, expr in ipairs({"x + y * 3", "x / (y + 1) - x % 3", "max(x, y) < 2 ? x : y", "i64(x) * u8(y)"}) do
            local href = ck.map(expr, {x = x, y = y})
            local got = ck.map(expr, {x = x:cuda(), y = y:cuda()}, {out = poisoned(href):cuda()}):host()
            same(got, href, ("%s,%s %s %s"):format(dx, dy, name, expr))
          end
        end
      end
    end
    local sum = ck.reduce_map{map = "x", reduce = "a + b", identity = 0}
    for _, dt in ipairs(DT) do
      local x = rnd(dt, {300, 70})
      if FLOAT[dt] then
        H.assert_close(sum({x = x:cuda()}, {dim = 2}):host():to("f64"), sum({x = x}, {dim = 2}):to("f64"),
          {rtol = 1e-2, atol = 1e-2}, "reduce " .. dt)
      else
        same(sum({x = x:cuda()}, {dim = 2}):host(), sum({x = x}, {dim = 2}), "reduce " .. dt)
        same(sum({x = x:cuda()}):host(), sum({x = x}), "reduce all " .. dt)
      end
    end
  end))
end)
