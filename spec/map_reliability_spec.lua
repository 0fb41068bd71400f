-- Reliability of the fused kernels and run-time kernels (ck.map, ck.map_info, ck.map_source, ck.reduce_map,
-- ck.kernel, ck.kernel_build): the operand limit, input and output names, NUL bytes, NaN identities and kernel
-- entry names. A refusal must be a Lua error that names the public function and points at the caller's line;
-- an accepted case is compared with plain Lua (or, for ck.map_source, with its kernel run under the CPU
-- emulation of CUDA in spec/cuda_emu.lua).
local H = require "spec.helpers"
local ck = H.ck

-- docs/map.md: the entries of the inputs table (arrays and numbers, used or not) plus the outputs.
local LIMIT = 48
local EPS = 2 ^ -52

--- Run `call` (a Lua expression over ck and the table V) on line 2 of a chunk named caller.lua, not as a tail
-- call, and expect an error "caller.lua:2: <fname>: ..." holding `what`. Returns the message.
local function refused(fname, call, V, what)
  local chunk = assert(load("local ck, V = ...\nlocal r = " .. call .. "\nreturn r", "=caller.lua"))
  local ok, err = pcall(chunk, ck, V)
  assert(not ok, ("%s was accepted; expected an error holding %q"):format(call, what))
  err = tostring(err)
  local head = "caller.lua:2: " .. fname .. ": "
  assert(err:sub(1, #head) == head, ("%s: the message should start with %q, got:\n%s"):format(call, head, err))
  assert(err:find(what, 1, true), ("%s: expected %q in:\n%s"):format(call, what, err))
  return err
end

-- ---------------------------------------------------------------- the operand limit

-- 8 dims, none of size 1; every other input has its memory order reversed, so no two dims coalesce and the
-- kernels get the most index parameters (9 per operand) that an operand can have.
local SHAPE = {2, 3, 2, 2, 3, 2, 2, 2}
local REV = {2, 2, 2, 3, 2, 2, 3, 2}

--- n fresh f64 inputs x1..xn of SHAPE on `device`, and their values as flat Lua lists (row-major order).
local function make_inputs(n, device)
  local V, flat = {}, {}
  for k = 1, n do
    local a
    if k % 2 == 0 then a = H.rand(REV, "f64", device):permute(8, 7, 6, 5, 4, 3, 2, 1)
    else a = H.rand(SHAPE, "f64", device) end
    V["x" .. k], flat[k] = a, a:to("host"):contiguous():flat()
  end
  return V, flat
end

--- "1 * x1 + 2 * x2 + ... + n * xn": distinct weights, so a swapped or misread input changes the result.
local function weighted_sum(n)
  local t = {}
  for k = 1, n do t[k] = ("%d * x%d"):format(k, k) end
  return table.concat(t, " + ")
end

--- The weighted sum per element in plain Lua (the evaluator's order), and a bound on its rounding error:
-- each of the n additions and products rounds once, relative to the sum of |terms| (for both sides).
local function lua_weighted(n, flat)
  local ref, tol = {}, {}
  for i = 1, #flat[1] do
    local s, mag = 0, 0
    for k = 1, n do
      s = s + k * flat[k][i]
      mag = mag + math.abs(k * flat[k][i])
    end
    ref[i], tol[i] = s, 4 * (n + 1) * EPS * mag
  end
  return ref, tol
end

local function assert_close_list(got, ref, tol, label)
  assert.equals(#ref, #got, label)
  for i = 1, #ref do
    local t = type(tol) == "table" and tol[i] or tol
    assert(math.abs(got[i] - ref[i]) <= t, ("%s: element %d: got %.17g, expected %.17g (tolerance %.3g, seed %d)")
      :format(label, i, got[i], ref[i], t, H.seed))
  end
end

local function numel(shape) local n = 1; for _, d in ipairs(shape) do n = n * d end; return n end

local function check_map(n, device)
  local V, flat = make_inputs(n, device)
  local ref, tol = lua_weighted(n, flat)
  local out = H.poison(ck.empty(SHAPE, {dtype = "f64", device = device}))
  local got = ck.map(weighted_sum(n), V, {out = out})
  assert.equals(out, got)
  assert_close_list(got:to("host"):flat(), ref, tol, ("ck.map, %d inputs on the %s"):format(n, device))
  -- several outputs share the operand count: o1 = the sum, oj = j * o1
  local m = LIMIT - n
  if m >= 2 then
    local stmts, outs = {"o1 = " .. weighted_sum(n)}, {}
    for j = 2, m do stmts[j] = ("o%d = o1 * %d"):format(j, j) end
    for j = 1, m do outs["o" .. j] = H.poison(ck.empty(SHAPE, {dtype = "f64", device = device})) end
    local r = {ck.map(table.concat(stmts, "; "), V, {out = outs})}
    assert.equals(m, #r)
    for j = 1, m do
      local rj, tj = {}, {}
      for i = 1, #ref do rj[i], tj[i] = ref[i] * j, tol[i] * j + math.abs(ref[i] * j) * EPS end
      assert_close_list(r[j]:to("host"):flat(), rj, tj, ("ck.map, %d inputs, output o%d of %d"):format(n, j, m))
    end
  end
end

local function check_reduce_map(n, device)
  local V, flat = make_inputs(n, device)
  local ref, tol = lua_weighted(n, flat)
  local s, t = 0, 0
  for i = 1, #ref do s, t = s + ref[i], t + tol[i] + (#ref + 8) * EPS * math.abs(ref[i]) end
  local spec = {map = weighted_sum(n), reduce = "a + b", identity = 0}
  local out = H.poison(ck.empty({}, {dtype = "f64", device = device}))
  local got = ck.reduce_map(spec, V, {out = out})
  assert.equals(out, got)
  assert_close_list(got:to("host"):flat(), {s}, t, ("ck.reduce_map, %d inputs on the %s"):format(n, device))
  -- along a dim, as a reusable function
  local f = ck.reduce_map(spec)
  local rows = f(V, {dim = 1})
  local per = numel(SHAPE) // SHAPE[1]
  local rref, rtol = {}, {}
  for j = 1, per do
    rref[j], rtol[j] = 0, 0
    for i = 0, SHAPE[1] - 1 do
      rref[j] = rref[j] + ref[i * per + j]
      rtol[j] = rtol[j] + tol[i * per + j] + 4 * EPS * math.abs(ref[i * per + j])
    end
  end
  assert_close_list(rows:to("host"):flat(), rref, rtol, ("ck.reduce_map dim 1, %d inputs on the %s"):format(n, device))
end

local function refuse_counts(device)
  for _, n in ipairs {LIMIT, 64, 65} do
    local V = make_inputs(n, device)
    local what = ("at most %d operands"):format(LIMIT)
    refused("ck.map", "ck.map(V.expr, V.inputs)", {expr = weighted_sum(n), inputs = V}, what)
    refused("ck.map_info", "ck.map_info(V.expr, V.inputs)", {expr = weighted_sum(n), inputs = V}, what)
    refused("ck.map_source", "ck.map_source(V.expr, V.inputs)", {expr = weighted_sum(n), inputs = V}, what)
    local spec = {map = weighted_sum(n), reduce = "a + b", identity = 0}
    refused("ck.reduce_map", "ck.reduce_map(V.spec, V.inputs)", {spec = spec, inputs = V}, what)
    refused("ck.reduce_map", "ck.reduce_map(V.spec)(V.inputs)", {spec = spec, inputs = V}, what)
    refused("ck.map_source", "ck.map_source(V.spec, V.inputs)", {spec = spec, inputs = V}, what)
  end
  -- outputs count: 40 inputs and 9 outputs are 49 operands
  local V = make_inputs(40, device)
  local stmts = {"o1 = " .. weighted_sum(40)}
  for j = 2, 9 do stmts[j] = ("o%d = o1 * %d"):format(j, j) end
  refused("ck.map", "ck.map(V.expr, V.inputs)", {expr = table.concat(stmts, "; "), inputs = V},
    ("at most %d operands"):format(LIMIT))
  -- so do the entries the expression does not use (they are bound and checked too)
  V = make_inputs(LIMIT - 1, device)
  V.unused = 2.5
  refused("ck.map", "ck.map(V.expr, V.inputs)", {expr = weighted_sum(LIMIT - 1), inputs = V},
    ("at most %d operands"):format(LIMIT))
end

describe("the operand limit of fused kernels", function()
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)

  for _, n in ipairs {39, 40, 41, LIMIT - 1} do
    it(("ck.map with %d inputs (and up to %d outputs) on the host matches plain Lua"):format(n, LIMIT - n), function()
      check_map(n, "host")
    end)
    it(("ck.reduce_map with %d inputs on the host matches plain Lua"):format(n), function()
      check_reduce_map(n, "host")
    end)
  end

  it(("refuses %d, 64 and 65 operands with one clear error on the host"):format(LIMIT), function()
    refuse_counts("host")
  end)

  it("counts numbers like arrays and takes up to the limit of them", function()
    local V, flat = make_inputs(LIMIT - 2, "host")
    V.c = 0.75
    local n = LIMIT - 2
    local got = ck.map(weighted_sum(n) .. " + c", V)
    local ref, tol = lua_weighted(n, flat)
    for i = 1, #ref do ref[i] = ref[i] + 0.75 end
    assert_close_list(got:flat(), ref, tol, "ck.map with a number")
    V.d = 1
    refused("ck.map", "ck.map(V.expr, V.inputs)", {expr = weighted_sum(n) .. " + c + d", inputs = V},
      ("at most %d operands"):format(LIMIT))
  end)

  local E = require "spec.cuda_emu"
  for _, n in ipairs {39, 40, 41, LIMIT - 1} do
    it(("ck.map_source with %d inputs: the generated kernels, run under the CPU emulation, match plain Lua"):format(n),
      function()
        if not E.available() then return pending("g++ with C++20 <barrier> not found") end
        local V, flat = make_inputs(n, "host")
        local ref, tol = lua_weighted(n, flat)
        local src, info = ck.map_source(weighted_sum(n), V)
        assert.equals("strided", info.layout)
        assert.equals(8, info.ndim)
        assert.equals(1 + 9 * (n + 1) + 8, #info.params) -- every operand's pointer and 8 strides, the shape
        local got = E.run(src, info, V, {out = ck.empty(SHAPE, {dtype = "f64"})})
        assert_close_list(got.out, ref, tol, ("map_source, %d inputs"):format(n))
        local spec = {map = weighted_sum(n), reduce = "a + b", identity = 0}
        src, info = ck.map_source(spec, V)
        local got2 = E.run(src, info, V, {out = ck.empty({}, {dtype = "f64"})})
        local s, t = 0, 0
        for i = 1, #ref do s, t = s + ref[i], t + tol[i] + (#ref + 8) * EPS * math.abs(ref[i]) end
        assert_close_list(got2.out, {s}, t, ("map_source reduce_map, %d inputs"):format(n))
      end)
  end

  for _, n in ipairs {39, 40, 41, LIMIT - 1} do
    it(("ck.map and ck.reduce_map with %d inputs on the GPU match plain Lua"):format(n), H.gpu(function()
      check_map(n, "cuda")
      check_reduce_map(n, "cuda")
    end))
  end
  it(("refuses %d, 64 and 65 operands with one clear error on the GPU"):format(LIMIT), H.gpu(function()
    refuse_counts("cuda")
  end))
end)

-- ---------------------------------------------------------------- names

describe("input and output names of fused kernels", function()
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)

  it("refuses an input named like a constant or a function of the language, used or not", function()
    local x = H.rand({5}, "f32")
    for _, c in ipairs {{"pi", "constant"}, {"inf", "constant"}, {"nan", "constant"}, {"exp", "function"},
                        {"max", "function"}, {"where", "function"}, {"f32", "function"}, {"float", "function"},
                        {"fmin", "function"}} do
      local what = ("input name '%s' is a %s of the expression language"):format(c[1], c[2])
      local V = {x = x, [c[1]] = 2}
      refused("ck.map", "ck.map('x * 2', V)", V, what)
      refused("ck.map_info", "ck.map_info('x * 2', V)", V, what)
      refused("ck.map_source", "ck.map_source('x * 2', V)", V, what)
      refused("ck.reduce_map", "ck.reduce_map({map = 'x', reduce = 'a + b', identity = 0}, V)", V, what)
    end
    -- used: "x * pi" must not read the input pi (it used to be shadowed by the constant, silently)
    refused("ck.map", "ck.map('x * pi', V)", {x = x, pi = 2}, "input name 'pi' is a constant")
    refused("ck.map", "ck.map('x * inf', V)", {x = x, inf = 2}, "input name 'inf' is a constant")
    -- the constants themselves still work
    local got = ck.map("x * pi + (inf > 0)", {x = x})
    local xs, g = x:flat(), got:flat()
    for i = 1, #xs do
      local r = xs[i] * math.pi + 1
      assert(math.abs(g[i] - r) <= 4 * 2 ^ -23 * (math.abs(xs[i] * math.pi) + 1), i)
    end
  end)

  it("refuses input names that are not identifiers, even when the expression does not use them", function()
    local x = H.rand({4}, "f64")
    local long = ("a"):rep(64)
    for _, name in ipairs {"1bad", "a b", "", "x-y", "x.y", "\195\169", " x", "x ", long} do
      local V = {x = x, [name] = 1.5}
      local what = ("input name %q is not a name"):format(name)
      if name == long then what = "longer than 63 characters" end
      refused("ck.map", "ck.map('x + 1', V)", V, what)
      refused("ck.map_source", "ck.map_source('x + 1', V)", V, what)
      refused("ck.reduce_map", "ck.reduce_map({map = 'x', reduce = 'a + b', identity = 0}, V)", V, what)
    end
    -- a name with a NUL byte in it
    refused("ck.map", "ck.map('x + 1', V)", {x = x, ["y\0z"] = 1}, "contains a NUL byte")
    -- identifiers of every shape are fine, up to 63 characters, used or not
    local n63 = "_" .. ("Z9"):rep(31)
    local y = H.rand({4}, "f64")
    local got = ck.map("_a + B_2 * " .. n63, {_a = x, B_2 = y, [n63] = 0.5, unused_1 = 3})
    local xs, ys, g = x:flat(), y:flat(), got:flat()
    for i = 1, #xs do
      local r = xs[i] + ys[i] * 0.5
      assert(math.abs(g[i] - r) <= 4 * EPS * (math.abs(xs[i]) + math.abs(ys[i])), i)
    end
  end)

  it("refuses names longer than 63 characters in the expression (they were cut and could alias)", function()
    local a, b = ("q"):rep(63) .. "1", ("q"):rep(63) .. "2"
    refused("ck.map", "ck.map(V.e, {})", {e = a .. " + " .. b}, "longer than 63 characters")
  end)

  it("refuses an output or temporary named like an input, with one message for every case", function()
    local x, y = H.rand({3}, "f32"), H.rand({3}, "f32")
    local what = "is an input and cannot also be assigned"
    -- the expression's own input, and an input of the table the expression does not read
    local e1 = refused("ck.map", "ck.map('x = x + 1', V)", {x = x}, "'x' " .. what)
    local e2 = refused("ck.map", "ck.map('y = x + 1', V)", {x = x, y = y}, "'y' " .. what)
    assert.matches("at position 1 of", e1, 1, true)
    assert.matches("at position 1 of", e2, 1, true)
    refused("ck.map", "ck.map('s = x; y = x * 2', V)", {x = x, y = y}, "'y' " .. what .. " at position 8")
    refused("ck.map", "ck.map('_t = x * 2; s = _t', V)", {x = x, _t = 1}, "'_t' " .. what)
    refused("ck.map", "ck.map('s = x; s2 = y; y = 1', V)", {x = x, y = y}, "'y' " .. what)
    -- a bare expression's output is called 'out'
    refused("ck.map", "ck.map('x + 1', V)", {x = x, out = 2}, "'out' " .. what .. " (a bare expression's result is the output 'out')")
    refused("ck.map_source", "ck.map_source('y = x + 1', V)", {x = x, y = y}, "'y' " .. what)
    refused("ck.map_info", "ck.map_info('y = x + 1', V)", {x = x, y = y}, "'y' " .. what)
    refused("ck.reduce_map", "ck.reduce_map({map = 'm = x * 2', reduce = 'a + b', identity = 0}, V)", {x = x, m = 1},
      "'m' " .. what)
    -- the same program with other names runs
    local out = H.poison(ck.empty({3}, {dtype = "f32"}))
    ck.map("z = x + 1", {x = x, y = y}, {out = out})
    local xs, g = x:flat(), out:flat()
    for i = 1, #xs do
      local r = string.unpack("f", string.pack("f", xs[i] + 1))
      assert.equals(r, g[i])
    end
  end)
end)

-- ---------------------------------------------------------------- NUL bytes, NaN identities

describe("strings with NUL bytes and NaN identities", function()
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  local SRC = 'extern "C" __global__ void inc(float *p) { p[threadIdx.x] += 1.0f; }\n'

  it("refuses an expression with a NUL byte (it used to be cut short there)", function()
    local V = {x = H.rand({3}, "f64"), e = "x + 1\0 * 1000"}
    local what = "the expression contains a NUL byte at position 6"
    refused("ck.map", "ck.map(V.e, {x = V.x})", V, what)
    refused("ck.map_info", "ck.map_info(V.e, {x = V.x})", V, what)
    refused("ck.map_source", "ck.map_source(V.e, {x = V.x})", V, what)
    for _, part in ipairs {"map", "reduce", "post"} do
      local spec = {map = "x", reduce = "a + b", identity = 0, post = "r"}
      spec[part] = spec[part] .. "\0 * 2"
      local W = {x = V.x, spec = spec}
      local w = ("%s contains a NUL byte"):format(part)
      refused("ck.reduce_map", "ck.reduce_map(V.spec, {x = V.x})", W, w)
      refused("ck.reduce_map", "ck.reduce_map(V.spec)", W, w)
      refused("ck.map_source", "ck.map_source(V.spec, {x = V.x})", W, w)
    end
  end)

  it("refuses a kernel source or entry name with a NUL byte", function()
    local V = {src = SRC, bad_src = SRC .. "\0garbage", entry = "inc\0junk"}
    refused("ck.kernel", "ck.kernel(V.src, V.entry, {'f32*'})", V, "the entry name contains a NUL byte")
    refused("ck.kernel", "ck.kernel(V.bad_src, 'inc', {'f32*'})", V, "the source contains a NUL byte")
    refused("ck.kernel_build", "ck.kernel_build(V.src, V.entry, {arch = 'sm_90'})", V, "the entry name contains a NUL byte")
    refused("ck.kernel_build", "ck.kernel_build(V.bad_src, 'inc', {arch = 'sm_90'})", V, "the source contains a NUL byte")
  end)

  it("refuses a NaN identity in reduce_map", function()
    local V = {x = H.rand({3}, "f64"), spec = {map = "x", reduce = "max(a, b)", identity = 0 / 0}}
    local what = "identity is NaN"
    refused("ck.reduce_map", "ck.reduce_map(V.spec, {x = V.x})", V, what)
    refused("ck.reduce_map", "ck.reduce_map(V.spec)", V, what)
    refused("ck.map_source", "ck.map_source(V.spec, {x = V.x})", V, what)
    -- infinite identities are fine (the identity of max)
    local r = ck.reduce_map({map = "x", reduce = "max(a, b)", identity = -math.huge}, {x = V.x})
    local m = -math.huge
    for _, v in ipairs(V.x:flat()) do m = math.max(m, v) end
    assert.equals(m, r:item())
  end)
end)

-- ---------------------------------------------------------------- kernel entry names

describe("kernel entry names", function()
  local SRC = [[
extern "C" __global__ void inc(float *p) { p[threadIdx.x] += 1.0f; }
namespace ns { __global__ void twice(float *p) { p[threadIdx.x] *= 2.0f; } }
template <typename T, int N> __global__ void scale(T *p) { p[threadIdx.x] *= (T)N; }
template __global__ void scale<float, 3>(float *);
]]

  it("refuses an entry that is not a kernel name before compiling, naming it", function()
    for _, entry in ipairs {"", "k k", "1inc", "inc(", "inc;", "&inc", "inc<float", "inc>", "inc<>>", "ns:::twice",
                            "ns::", " inc", "inc ", "int", "a-b", "inc<float>junk"} do
      local what = ("entry %q is not a kernel name"):format(entry)
      refused("ck.kernel", "ck.kernel(V.src, V.entry, {'f32*'})", {src = SRC, entry = entry}, what)
      refused("ck.kernel_build", "ck.kernel_build(V.src, V.entry, {arch = 'sm_90'})", {src = SRC, entry = entry}, what)
    end
  end)

  it("takes identifiers, qualified names and template-ids", function()
    for _, entry in ipairs {"inc", "ns::twice", "::inc", "scale<float, 3>", "scale<float,3>"} do
      local r = ck.kernel_build(SRC, entry, {arch = "sm_90"})
      assert.is_string(r.lowered, entry)
      if not H.has_cuda then
        local ok, err = pcall(ck.kernel, SRC, entry, {"f32*"})
        assert.is_false(ok)
        assert.matches("need a CUDA device", err, 1, true) -- the name passed; the device is what is missing
      end
    end
  end)

  it("launches a qualified and a template entry on the GPU", H.gpu(function()
    local x = H.rand({32}, "f32", "cuda")
    local ref = x:to("host"):flat()
    ck.kernel(SRC, "ns::twice", {"f32*"}):launch(1, 32, x)
    ck.kernel(SRC, "scale<float, 3>", {"f32*"}):launch(1, 32, x)
    local g = x:to("host"):flat()
    for i = 1, 32 do assert.equals(string.unpack("f", string.pack("f", ref[i] * 2 * 3)), g[i]) end
  end))
end)
