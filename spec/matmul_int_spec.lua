-- Integer and bool matmul (issues 32 and 37): i64, u32, i16, i8, u8 (and i32, as before) with NumPy's semantics,
-- the result dtype the operands' promotion (bool x bool: i32, this library's rule for bool arithmetic), the sums
-- wrapped modulo 2^bits of the result dtype; mixed operands converted to the promoted dtype first.
--  * the host backend against a plain-Lua oracle: Lua integers wrap modulo 2^64, so the exact sum of products is
--    Lua's, wrapped to the dtype by H.wrap_int; inputs span each dtype's whole range (products and sums overflow);
--    shapes 1x1x1, 1xk, 37x53x29, batched and broadcast 3-D; transposed and strided views; outputs poisoned;
--  * alpha and beta: exact (wrapping) when the dtype holds them, else in double, truncated and saturated;
--  * on the GPU (rung 3, smem): every dtype and some mixed pairs equal the host bit for bit.
local H = require "spec.helpers"
local ck = H.ck
local gpu = H.gpu

local DTS = {"i64", "u32", "i16", "i8", "u8", "i32"}
local POISON = {i64 = math.mininteger + 7, u32 = 0xdeadbeef, i16 = -12345, i8 = -99, u8 = 0xa5, i32 = -2147483000}

local range = H.int_range

--- Random values of dt: the whole range (wrapping guaranteed), or small ones (|v| <= 9); never all zeros.
local function vals(dt, n, small)
  local lo, hi = range(dt)
  local t = {}
  for i = 1, n do
    local v = small and math.random(math.max(lo, -9), 9) or math.random(lo, hi)
    t[i] = v ~= 0 and v or 1
  end
  return t
end

local function numel(s) local n = 1; for _, d in ipairs(s) do n = n * d end; return n end

--- A host array of shape `shape` and dtype dt (bool: true/false), and its values as Lua integers, row-major.
local function make(shape, dt, small)
  local v
  if dt == "bool" then
    v = {}
    for i = 1, numel(shape) do v[i] = math.random() < 0.6 end
  else
    v = vals(dt, numel(shape), small)
  end
  return ck.array(v, {dtype = dt, device = "host"}):reshape(shape)
end

--- Lua integers of a host array (bool: 1/0), as nested tables [z][i][j] (2-D arrays become one batch).
local function mats(a)
  local t = (a:dtype() == "bool" and a:to("i32") or a):to("host"):totable()
  if a:ndim() == 2 then t = {t} end
  return t
end

--- The oracle: alpha * A @ B + beta * C0 in dtype dt, batch broadcast as ck.matmul does. alpha, beta: integers
-- (wrapping), or floats (the double rule: truncated toward zero, saturated).
local function oracle(a, b, dt, alpha, beta, c0)
  local A, B = mats(a), mats(b)
  local C = c0 and mats(c0)
  local lo, hi = range(dt)
  local batch = math.max(#A, #B)
  if (a:ndim() == 3 and a:size(1) == 0) or (b:ndim() == 3 and b:size(1) == 0) then batch = 0 end
  local m, k, n = a:size(a:ndim() - 1), a:size(a:ndim()), b:size(b:ndim())
  local out = {}
  for z = 1, batch do
    local az, bz = A[#A == 1 and 1 or z], B[#B == 1 and 1 or z]
    out[z] = {}
    for i = 1, m do
      local row = {}
      for j = 1, n do
        local s = 0
        for p = 1, k do s = s + math.tointeger(az[i][p]) * math.tointeger(bz[p][j]) end -- wraps modulo 2^64
        s = H.wrap_int(dt, s)
        local cv = (beta and beta ~= 0) and C[z][i][j] or 0
        local r
        if not alpha then r = s
        elseif math.type(alpha) == "integer" and math.type(beta) == "integer" then
          r = H.wrap_int(dt, alpha * s + beta * cv)
        else
          local v = alpha * (s + 0.0) + (beta ~= 0 and beta * (cv + 0.0) or 0.0)
          if v ~= v then r = 0
          elseif v >= hi + 0.0 then r = hi
          elseif v <= lo + 0.0 then r = lo
          else r = math.tointeger(v >= 0 and math.floor(v) or -math.floor(-v)) end
        end
        row[j] = r
      end
      out[z][i] = row
    end
  end
  return out
end

local function check(got, want, dt, label)
  assert(got:dtype() == dt, ("%s: dtype %s, expected %s"):format(label, got:dtype(), dt))
  local g = mats(got)
  assert(#g == #want or (#want == 0 and got:numel() == 0), ("%s: %d batches, expected %d"):format(label, #g, #want))
  for z = 1, #want do
    for i = 1, #want[z] do
      for j = 1, #want[z][i] do
        local x, r = g[z][i][j], want[z][i][j]
        if x ~= r then
          error(("%s: [%d][%d][%d] got %s expected %s (seed %d)"):format(label, z, i, j, tostring(x), tostring(r), H.seed), 2)
        end
      end
    end
  end
end

-- {A shape, B shape, ta = A given as the transpose of a contiguous array, tb likewise, strided = a column-step view}
local CASES = {
  {{1, 1}, {1, 1}}, {{1, 7}, {7, 5}}, {{6, 1}, {1, 4}}, {{37, 53}, {53, 29}}, {{3, 5, 4}, {3, 4, 6}},
  {{5, 4}, {3, 4, 6}}, {{1, 3, 8}, {4, 8, 2}}, {{9, 11}, {11, 7}, ta = true}, {{8, 6}, {6, 10}, tb = true},
  {{13, 9}, {9, 12}, ta = true, tb = true, strided = true},
}

--- Operands for case c: contiguous arrays, or views of fresh arrays holding fresh values: the transpose of a
-- contiguous array (ta / tb), or with `strided` a view with no unit stride at all (every other element of each
-- row of a transposed array: strides 2 and 2*rows).
local function operands(c, dta, dtb, small)
  local function one(shape, dt, t)
    if not t then return make(shape, dt, small) end
    local r = {}
    for i = 1, #shape do r[i] = shape[i] end
    r[#r], r[#r - 1] = r[#r - 1], r[#r]
    if c.strided then
      r[#r + 1] = 2
      return make(r, dt, small):select(#r, 2):transpose(#r - 2, #r - 1)
    end
    return make(r, dt, small):transpose(#r - 1, #r)
  end
  return one(c[1], dta, c.ta), one(c[2], dtb, c.tb)
end

local function label(c, dta, dtb, extra)
  return ("%s%s x %s%s%s%s%s"):format(dta, "[" .. table.concat(c[1], "x") .. "]", dtb, "[" .. table.concat(c[2], "x") .. "]",
    c.ta and " A^T" or "", c.tb and " B^T" or "", extra or "")
end

local function result_shape(a, b)
  local m, n = a:size(a:ndim() - 1), b:size(b:ndim())
  if a:ndim() == 2 and b:ndim() == 2 then return {m, n} end
  local ba, bb = a:ndim() == 3 and a:size(1) or 1, b:ndim() == 3 and b:size(1) or 1
  return {ba == 1 and bb or ba, m, n}
end

describe("integer matmul on the host against a plain-Lua oracle", function()
  -- (on the GPU host the default device is cuda: these checks are of the host backend, so arrays made without a
  -- device, like ck.empty's operands below, must be host arrays too)
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  for _, dt in ipairs(DTS) do
    it(dt .. ": sums wrap modulo 2^bits (whole-range inputs), views, batches, poisoned out", function()
      for _, c in ipairs(CASES) do
        for _, small in ipairs {false, true} do
          local a, b = operands(c, dt, dt, small)
          local l = label(c, dt, dt, small and "" or " (wrapping)")
          check(ck.matmul(a, b), oracle(a, b, dt), dt, l)
          local out = ck.full(result_shape(a, b), POISON[dt], {dtype = dt, device = "host"})
          local r = ck.matmul(a, b, {out = out})
          assert(r == out, l .. ": out not returned")
          check(out, oracle(a, b, dt), dt, l .. " out=")
        end
      end
    end)
  end

  it("alpha and beta: exact when the dtype holds them (wrapping), else in double, truncated and saturated", function()
    local ab = {{1, 0}, {-2, 1}, {3, -1}, {2, 2}, {1.5, -0.5}, {1e10, 0}, {-1e30, 0.25}, {0.25, 2.5}, {-1, 0}, {300, 0}}
    for _, dt in ipairs(DTS) do
      for _, c in ipairs {CASES[2], CASES[4], CASES[5], CASES[8]} do
        for _, small in ipairs {false, true} do
          local a, b = operands(c, dt, dt, small)
          for _, q in ipairs(ab) do
            local alpha, beta = q[1], q[2]
            local lo, hi = range(dt)
            -- the rule: exact (integer arithmetic) when both are integers the dtype holds, [-max, max] ([0, max]
            -- unsigned); then the oracle's integers
            local function holds(v) return v == math.floor(v) and v >= (lo < 0 and -hi or 0) and v <= hi end
            local ia, ib = alpha, beta
            if holds(alpha) and holds(beta) then ia, ib = math.tointeger(alpha), math.tointeger(beta)
            else ia, ib = alpha + 0.0, beta + 0.0 end
            local c0 = make(result_shape(a, b), dt, small)
            local got = c0:clone()
            ck.gemm(got, a, b, alpha, beta)
            check(got, oracle(a, b, dt, ia, ib, c0), dt, label(c, dt, dt, (" alpha %g beta %g"):format(alpha, beta)))
          end
        end
      end
      local ok, e = pcall(ck.gemm, ck.zeros({2, 2}, {dtype = dt}), ck.ones({2, 3}, {dtype = dt}), ck.ones({3, 2}, {dtype = dt}), 1 / 0, 0)
      assert.is_false(ok)
      assert.truthy(tostring(e):find("matmul", 1, true) and tostring(e):find("finite for " .. dt, 1, true), tostring(e))
    end
  end)

  it("k == 0 and alpha == 0 give beta*C by the same rule for beta (no elementwise refusal of u8 by -1 or 0.5)", function()
    for _, dt in ipairs(DTS) do
      local a0, b0 = ck.empty({4, 0}, {dtype = dt}), ck.empty({0, 3}, {dtype = dt})
      local a, b = make({4, 5}, dt), make({5, 3}, dt)
      for _, beta in ipairs {0, 1, 2, -1, 0.5, -2.5, 1e30} do
        local lo, hi = range(dt)
        local exact = beta == math.floor(beta) and beta >= (lo < 0 and -hi or 0) and beta <= hi
        local ib = exact and math.tointeger(beta) or beta + 0.0
        local c0 = make({4, 3}, dt)
        local want = oracle(a, b, dt, exact and 0 or 0.0, ib, c0)
        for _, ops in ipairs {{a0, b0, 1, "k == 0"}, {a, b, 0, "alpha == 0"}} do
          local c = c0:clone()
          ck.gemm(c, ops[1], ops[2], ops[3], beta)
          check(c, want, dt, ("%s %s beta %g"):format(dt, ops[4], beta))
        end
        -- k == 0 with an alpha the dtype does not hold (0.5; 300 past a byte): the sum is 0, but the rule is the
        -- inexact one for beta too, as rung 3 decides from alpha and beta both (beta == 1 leaves C as it is)
        for _, alpha in ipairs {0.5, 300} do
          if beta ~= 1 and not (alpha == 300 and hi >= 300) then
            local c = c0:clone()
            ck.gemm(c, a0, b0, alpha, beta)
            check(c, oracle(a, b, dt, 0.0, beta + 0.0, c0), dt, ("%s k == 0 alpha %g beta %g"):format(dt, alpha, beta))
          end
        end
      end
    end
  end)

  it("bool x bool gives i32 (the count of true pairs: bool arithmetic promotes to i32); bool x int gives the int", function()
    for _, c in ipairs(CASES) do
      local a, b = operands(c, "bool", "bool")
      check(ck.matmul(a, b), oracle(a, b, "i32"), "i32", label(c, "bool", "bool"))
      for _, dt in ipairs {"u8", "i64", "i16"} do
        local x, y = operands(c, "bool", dt)
        check(ck.matmul(x, y), oracle(x, y, dt), dt, label(c, "bool", dt))
        x, y = operands(c, dt, "bool")
        check(ck.matmul(x, y), oracle(x, y, dt), dt, label(c, dt, "bool"))
      end
    end
  end)

  it("mixed integer pairs promote as elementwise ops do, converted first (wrapping in the promoted dtype)", function()
    local pairs_ = {{"u8", "i8", "i16"}, {"i16", "i64", "i64"}, {"u32", "i32", "i64"}, {"u8", "u32", "u32"},
                    {"i8", "i16", "i16"}, {"u8", "i16", "i16"}, {"u32", "i8", "i64"}}
    for _, pr in ipairs(pairs_) do
      for _, c in ipairs {CASES[3], CASES[4], CASES[6], CASES[9]} do
        local a, b = operands(c, pr[1], pr[2])
        check(ck.matmul(a, b), oracle(a, b, pr[3]), pr[3], label(c, pr[1], pr[2]))
        local b2, a2 = operands({c[2], c[1]}, pr[2], pr[1]) -- (the other order: B x A where it chains)
        if b2:size(b2:ndim()) == a2:size(a2:ndim() - 1) then
          check(ck.matmul(b2, a2), oracle(b2, a2, pr[3]), pr[3], label(c, pr[2], pr[1]))
        end
      end
    end
    -- an integer with a float: the float (or f64), by the elementwise rule, through the float path
    local a, b = make({7, 5}, "u8", true), H.rand({5, 3}, "f32")
    local r = ck.matmul(a, b)
    assert.equal("f32", r:dtype())
    H.assert_close(r, ck.matmul(a:to("f32"), b), H.tol("f32"), "u8 x f32")
    local i64 = make({4, 5}, "i64", true)
    r = ck.matmul(i64, H.rand({5, 2}, "f32"))
    assert.equal("f64", r:dtype())
  end)
end)

describe("integer matmul on the GPU", function()
  it("every integer dtype equals the host bit for bit (rung smem): wrapping sums, views, batches, poisoned out", gpu(function()
    for _, dt in ipairs(DTS) do
      for _, c in ipairs(CASES) do
        for _, small in ipairs {false, true} do
          local a, b = operands(c, dt, dt, small)
          local l = label(c, dt, dt, small and "" or " (wrapping)")
          local want = ck.matmul(a, b)
          local out = ck.full(result_shape(a, b), POISON[dt], {dtype = dt, device = "cuda"})
          ck.matmul(a:to("cuda"), b:to("cuda"), {out = out})
          assert.equals("smem", ck.last_ran().name, l)
          assert.is_true(ck.equal(out:host(), want), l)
          check(out, oracle(a, b, dt), dt, l .. " (oracle)")
        end
      end
    end
  end))

  it("alpha and beta, mixed pairs and bool equal the host bit for bit", gpu(function()
    local ab = {{1, 0}, {-2, 1}, {3, -1}, {1.5, -0.5}, {1e10, 0}, {0.25, 2.5}, {-1, 0}, {300, 2}}
    for _, dt in ipairs(DTS) do
      for _, c in ipairs {CASES[4], CASES[5], CASES[10]} do
        local a, b = operands(c, dt, dt, false)
        local ga, gb = a:to("cuda"), b:to("cuda")
        for _, q in ipairs(ab) do
          local c0 = make(result_shape(a, b), dt, false)
          local oh, og = c0:clone(), c0:to("cuda")
          ck.gemm(oh, a, b, q[1], q[2])
          ck.gemm(og, ga, gb, q[1], q[2])
          assert.is_true(ck.equal(og:host(), oh), label(c, dt, dt, (" alpha %g beta %g"):format(q[1], q[2])))
        end
      end
    end
    for _, dt in ipairs(DTS) do -- k == 0 and alpha == 0 through rung 3's epilogue
      local a0, b0 = ck.empty({4, 0}, {dtype = dt}), ck.empty({0, 3}, {dtype = dt})
      local a, b = make({4, 5}, dt), make({5, 3}, dt)
      for _, beta in ipairs {2, -1, 0.5, 1e30} do
        for _, ops in ipairs {{a0, b0, 1}, {a, b, 0}} do
          local c0 = make({4, 3}, dt)
          local oh, og = c0:clone(), c0:to("cuda")
          ck.gemm(oh, ops[1], ops[2], ops[3], beta)
          ck.gemm(og, ops[1]:to("cuda"), ops[2]:to("cuda"), ops[3], beta)
          assert.is_true(ck.equal(og:host(), oh), ("%s k %d alpha %g beta %g"):format(dt, ops[1]:size(2), ops[3], beta))
        end
      end
    end
    for _, pr in ipairs {{"u8", "i8"}, {"i16", "i64"}, {"u32", "i32"}, {"bool", "bool"}, {"bool", "u8"}, {"i8", "bool"}} do
      for _, c in ipairs {CASES[4], CASES[6], CASES[9]} do
        local a, b = operands(c, pr[1], pr[2])
        local want = ck.matmul(a, b)
        local got = ck.matmul(a:to("cuda"), b:to("cuda"))
        assert.equals(want:dtype(), got:dtype())
        assert.is_true(ck.equal(got:host(), want), label(c, pr[1], pr[2]))
      end
    end
  end))
end)
