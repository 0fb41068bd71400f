--- Row ops (issue 37): ck.softmax / log_softmax / layer_norm / rms_norm against a plain-Lua oracle on the host
-- backend, and every rung of the row ladder against the host backend on the GPU (poisoned outputs, odd lengths,
-- every dim, views, f32/f64/f16/bf16).
local H = require "spec.helpers"
local ck = H.ck
local gpu = H.gpu

local FNS = {"softmax", "log_softmax", "layer_norm", "rms_norm"}
local DTYPES = {"f32", "f64", "f16", "bf16"}
-- unit roundoff of the arithmetic (statistics: f32 for f32/f16/bf16) and of the stored result
local U_ACC = {f32 = 2 ^ -24, f16 = 2 ^ -24, bf16 = 2 ^ -24, f64 = 2 ^ -53}
local U_OUT = {f32 = 2 ^ -24, f16 = 2 ^ -11, bf16 = 2 ^ -8, f64 = 2 ^ -53}

local function numel(shape) local n = 1; for _, s in ipairs(shape) do n = n * s end; return n end

-- The plain-Lua oracle over flat row-major values of `shape` along 1-based dim d (w, b: Lua lists or nil).
local function oracle(fn, vals, shape, d, w, b, eps)
  local out, inner = {}, 1
  for k = d + 1, #shape do inner = inner * shape[k] end
  local len = shape[d]
  local outer = numel(shape) // (len * inner)
  for o = 0, outer - 1 do
    for i = 0, inner - 1 do
      local function at(r) return (o * len + r) * inner + i + 1 end
      local m, s, mean, ss = -math.huge, 0, 0, 0
      for r = 0, len - 1 do m = math.max(m, vals[at(r)]); mean = mean + vals[at(r)] / len end
      for r = 0, len - 1 do
        local x = vals[at(r)]
        s = s + math.exp(x - m)
        ss = ss + (fn == "layer_norm" and (x - mean) ^ 2 or x * x)
      end
      for r = 0, len - 1 do
        local x, wr, br = vals[at(r)], w and w[r + 1] or 1, b and b[r + 1] or 0
        local y
        if fn == "softmax" then y = math.exp(x - m) / s
        elseif fn == "log_softmax" then y = x - m - math.log(s)
        elseif fn == "layer_norm" then y = (x - mean) / math.sqrt(ss / len + eps) * wr + br
        else y = x / math.sqrt(ss / len + eps) * wr end
        out[at(r)] = y
      end
    end
  end
  return out
end

-- The bound on |device - host|, derived: a line of n elements is folded in the accumulation dtype with up to
-- n roundings (a sequential sum's worst case: gamma_n ~ n u), exp/log/rsqrt add a few ulp, and the result is
-- rounded once to the stored dtype. Outputs are O(1) for these inputs (uniform in [-1, 1)), so the same number
-- serves as atol; 2x margin.
local function tol(dt, n)
  local t = 2 * ((8 + n) * U_ACC[dt] + U_OUT[dt])
  return {rtol = t, atol = t}
end

local function call(fn, x, d, opts, w, b)
  opts = opts or {}
  if fn == "softmax" or fn == "log_softmax" then return ck[fn](x, d, opts) end
  opts.dim = d
  if fn == "layer_norm" then return ck.layer_norm(x, w, b, 1e-5, opts) end
  return ck.rms_norm(x, w, 1e-5, opts)
end

describe("row ops on the host backend against a plain-Lua oracle", function()
  -- (host-backend cases: arrays made without a device stay on the host, also where the default is a GPU)
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  it("every op, dtype and dim, odd lengths, with and without weight and bias", function()
    for _, fn in ipairs(FNS) do
      for _, dt in ipairs(DTYPES) do
        for _, shape in ipairs {{1}, {7}, {129}, {3, 1000}, {2, 3, 5}} do
          for d = 1, #shape do
            local x = H.rand(shape, dt)
            local vals = x:to("f64"):flat()
            local w, b, wl, bl
            if fn == "layer_norm" or fn == "rms_norm" then
              w = H.rand({shape[d]}, dt) + 1.5
              wl = w:to("f64"):flat()
              if fn == "layer_norm" then b = H.rand({shape[d]}, dt); bl = b:to("f64"):flat() end
            end
            local want = oracle(fn, vals, shape, d, wl, bl, 1e-5)
            local r = call(fn, x, d, nil, w, b)
            local label = ("%s %s %s dim %d"):format(fn, dt, table.concat(shape, "x"), d)
            assert.are.equal(dt, r:dtype(), label)
            local ref = ck.array(want, {dtype = "f64"}):reshape(shape)
            H.assert_close(r, ref, {rtol = 2 * U_OUT[dt] + 1e-12, atol = 2 * U_OUT[dt] + 1e-12}, label)
          end
        end
      end
    end
  end)

  it("softmax rows sum to 1; layer_norm rows have mean 0 and variance 1", function()
    local x = H.rand({5, 300}, "f64") * 10
    local s = ck.softmax(x):sum(2):flat()
    for i = 1, 5 do assert.is_true(math.abs(s[i] - 1) < 1e-12, "row " .. i .. " sums to " .. s[i]) end
    local y = ck.layer_norm(x, nil, nil, 0)
    local m, v = y:mean(2):flat(), y:pow(2):mean(2):flat()
    for i = 1, 5 do assert.is_true(math.abs(m[i]) < 1e-12 and math.abs(v[i] - 1) < 1e-10) end
  end)

  it("keeps -inf out of the sum and NaN in the row", function()
    local inf, nan = math.huge, 0 / 0
    local s = ck.softmax(ck.array({-inf, 0, 0, -inf}, {dtype = "f64"})):totable()
    assert.are.same({0, 0.5, 0.5, 0}, s)
    local n = ck.softmax(ck.array({1, nan, 2}, {dtype = "f32"})):totable()
    for k = 1, 3 do assert.is_true(n[k] ~= n[k]) end
    local a = ck.softmax(ck.array({-inf, -inf}, {dtype = "f64"})):totable()
    assert.is_true(a[1] ~= a[1]) -- the softmax of nothing
  end)

  it("takes views, the last dim by default, a 0-d array, an out, and methods", function()
    local x = H.rand({6, 9}, "f64")
    local t = x:t()
    H.assert_close(ck.softmax(t), ck.softmax(t:contiguous()), H.tol("f64"), "transposed")
    H.assert_close(x:log_softmax(), ck.log_softmax(x, 2), H.tol("f64"), "method")
    local n = x:narrow(2, 2, 5)
    H.assert_close(ck.layer_norm(n), ck.layer_norm(n:contiguous()), H.tol("f64"), "narrowed")
    assert.are.equal(1, ck.softmax(ck.scalar(3, {dtype = "f64"})):item())
    local out = H.poison(ck.empty({9, 6}, {dtype = "f64"}))
    assert.are.equal(out, ck.rms_norm(t, {out = out}))
    H.assert_close(out, ck.rms_norm(t:contiguous()), H.tol("f64"), "out")
    assert.are.same({0, 3}, ck.softmax(ck.empty({0, 3})):shape())
  end)

  it("says what is wrong, at the caller's line", function()
    local a = ck.rand({3, 4})
    local ok, e = pcall(ck.softmax, a, 3)
    assert.is_false(ok); assert.matches("ck.softmax: dim out of range", e)
    ok, e = pcall(ck.layer_norm, a, ck.rand({3}))
    assert.is_false(ok); assert.matches("ck.layer_norm: the weight must be a vector of 4 elements", e)
    ok, e = pcall(ck.rms_norm, a, nil, -1)
    assert.is_false(ok); assert.matches("ck.rms_norm: eps must be a number >= 0", e)
    ok, e = pcall(ck.softmax, a, 1, {variant = "nope"})
    assert.is_false(ok); assert.matches("unknown variant 'nope'", e)
    ok, e = pcall(ck.softmax, a:to("i32"))
    assert.is_false(ok); assert.matches("softmax: dtype i32", e)
    assert.matches("rows_spec.lua", e)
  end)

  it("lists the ladder", function()
    local names = {}
    for _, r in ipairs(ck.variants("softmax")) do names[#names + 1] = r.name end
    assert.are.same({"naive", "online", "warp", "block", "vectorized"}, names)
    assert.are.equal(#ck.variants("rows"), #ck.variants("layer_norm"))
  end)
end)

describe("the row ladder on the GPU", function()
  it("every rung keeps NaN in its row and -inf out of the sum, as the host does", H.gpu(function()
    local inf, nan = math.huge, 0 / 0
    for _, v in ipairs(ck.variants("rows")) do
      for _, n in ipairs {3, 1000, 5000} do
        local t = {}
        for i = 1, n do t[i] = (i % 7) / 7 end
        t[2], t[n] = nan, -inf -- one NaN (alone in its lane or thread's share) and one masked score
        local x = ck.array(t, {dtype = "f32", device = "host"})
        local ok, got = pcall(ck.softmax, x:to("cuda"), {variant = v.name})
        if ok then
          local g = got:to("host"):flat()
          for i = 1, n do assert(g[i] ~= g[i], ("%s n=%d: element %d is %s, not NaN"):format(v.name, n, i, g[i])) end
        end
        t[2] = 0.5
        local y = ck.array(t, {dtype = "f32", device = "host"})
        ok, got = pcall(ck.softmax, y:to("cuda"), {variant = v.name})
        if ok then H.assert_close(got, ck.softmax(y), {rtol = 1e-5, atol = 1e-7}, v.name .. " -inf, n=" .. n) end
      end
    end
  end))

  local function run_rungs(cases, fns, dtypes)
    local failures, ran = {}, {}
    for _, v in ipairs(ck.variants("rows")) do
      for _, c in ipairs(cases) do
        for _, fn in ipairs(fns) do
          for _, dt in ipairs(dtypes) do
            local x = H.rand(c.shape, dt)
            local gx = x:to("cuda")
            if c.view then x, gx = c.view(x), c.view(gx) end
            for _, d in ipairs(c.dims) do
              local w, b
              if fn ~= "softmax" and fn ~= "log_softmax" then
                w = H.rand({x:shape()[d]}, dt) + 1.5
                if fn == "layer_norm" then b = H.rand({x:shape()[d]}, dt) end
              end
              local label = ("%s %s %s %s dim %d"):format(v.name, fn, dt, c.name, d)
              local ref = call(fn, x, d, nil, w, b)
              local out = H.poison(ck.empty(ref:shape(), {dtype = dt, device = "cuda"}))
              local ok, err = pcall(call, fn, gx, d, {variant = v.name, out = out}, w and w:to("cuda"), b and b:to("cuda"))
              if not ok then
                failures[#failures + 1] = label .. ": " .. tostring(err)
              else
                if ck.last_ran().name == v.name then ran[v.name] = true end
                local good, msg = H.allclose(out, ref, tol(dt, x:shape()[d]))
                if not good then failures[#failures + 1] = label .. " (ran " .. ck.last_ran().name .. "): " .. msg end
              end
            end
          end
        end
      end
    end
    return failures, ran
  end

  it("every rung, op and dtype matches the host on odd lengths, every dim and views", gpu(function()
    local cases = {
      {name = "1", shape = {1}, dims = {1}}, {name = "7", shape = {7}, dims = {1}},
      {name = "129", shape = {129}, dims = {1}}, {name = "5x1000", shape = {5, 1000}, dims = {2}},
      {name = "3x1024", shape = {3, 1024}, dims = {2}}, {name = "2x8192", shape = {2, 8192}, dims = {2}},
      {name = "37x16", shape = {37, 16}, dims = {1, 2}},
      {name = "3x5x7", shape = {3, 5, 7}, dims = {1, 2, 3}},
      {name = "t(40x33)", shape = {40, 33}, dims = {2}, view = function(x) return x:t() end},
      {name = "narrow", shape = {9, 70}, dims = {2}, view = function(x) return x:narrow(2, 3, 64) end},
    }
    H.report((run_rungs(cases, FNS, DTYPES)))
  end))

  it("every rung runs where it should, and long rows (33000, 70000) match", gpu(function()
    local cases = {{name = "4x1024", shape = {4, 1024}, dims = {2}}, {name = "2x33000", shape = {2, 33000}, dims = {2}},
                   {name = "1x70000", shape = {1, 70000}, dims = {2}}}
    local failures, ran = run_rungs(cases, {"softmax", "layer_norm"}, {"f32", "bf16"})
    H.report(failures)
    for _, v in ipairs(ck.variants("rows")) do assert.is_true(ran[v.name], "rung " .. v.name .. " never ran") end
  end))

  it("picks the rungs by shape", gpu(function()
    local function ran(shape, d)
      ck.softmax(ck.rand(shape, {device = "cuda"}), d)
      return ck.last_ran().name
    end
    assert.are.equal("vectorized", ran({1000, 1024}, 2))
    assert.are.equal("vectorized", ran({100, 8192}, 2))
    assert.are.equal("warp", ran({1000, 7}, 2))
    assert.are.equal("block", ran({10, 5001}, 2))
    assert.are.equal("block", ran({2, 40000}, 2))
    assert.are.equal("online", ran({100, 1000}, 1))
  end))
end)
