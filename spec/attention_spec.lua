--- ck.attention (issue 37): the host backend against a plain-Lua softmax(q k^T * scale) v, and every rung of the
-- attention ladder against the host backend on the GPU (odd sequence lengths, causal, head dims 64/128,
-- f16/bf16, q/k/v with heads transposed out of [B, S, H, D], poisoned outputs).
local H = require "spec.helpers"
local ck = H.ck
local gpu = H.gpu

-- q, k, v of [B, H, S, D] as random values; `heads_last` builds them as [B, S, H, D] transposed to [B, H, S, D]
-- (the layout of a fused QKV projection: no unit stride between sequence positions).
-- With `device`, the same three on that device too (copied, then viewed there: strided as on the host).
local function qkv(b, h, sq, skv, d, dv, dt, heads_last, device)
  local host, dev = {}, {}
  for n, se in ipairs {{sq, d}, {skv, d}, {skv, dv}} do
    local s, e = se[1], se[2]
    local base = heads_last and H.rand({b, s, h, e}, dt) or H.rand({b, h, s, e}, dt)
    local function view(x) return heads_last and x:permute(1, 3, 2, 4) or x end
    host[n] = view(base)
    if device then dev[n] = view(base:to(device)) end
  end
  return host[1], host[2], host[3], dev[1], dev[2], dev[3]
end

-- The plain-Lua oracle: flat lists of [B, H, S, D] contiguous arrays; mask a flat [Sq, Skv] list or nil.
local function oracle(q, k, v, B, Hh, Sq, Skv, D, Dv, scale, causal, mask, bool)
  local out = {}
  for z = 0, B - 1 do
    for h = 0, Hh - 1 do
      for i = 0, Sq - 1 do
        local s, m = {}, -math.huge
        for j = 0, Skv - 1 do
          local acc = 0
          for e = 0, D - 1 do acc = acc + q[((z * Hh + h) * Sq + i) * D + e + 1] * k[((z * Hh + h) * Skv + j) * D + e + 1] end
          acc = acc * scale
          if causal and j > i then acc = -math.huge end
          if mask then
            local mv = mask[i * Skv + j + 1]
            if bool then acc = (mv ~= 0) and acc or -math.huge else acc = acc + mv end
          end
          s[j] = acc
          m = math.max(m, acc)
        end
        local l = 0
        for j = 0, Skv - 1 do s[j] = math.exp(s[j] - m); l = l + s[j] end
        for e = 0, Dv - 1 do
          local o = 0
          for j = 0, Skv - 1 do o = o + s[j] / l * v[((z * Hh + h) * Skv + j) * Dv + e + 1] end
          out[((z * Hh + h) * Sq + i) * Dv + e + 1] = o
        end
      end
    end
  end
  return out
end

describe("attention on the host backend against a plain-Lua oracle", function()
  -- (host-backend cases: arrays made without a device stay on the host, also where the default is a GPU)
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  it("odd sizes, seq_q != seq_kv, causal, bool and additive masks, a given scale", function()
    for _, c in ipairs {{1, 2, 1, 1, 3, 3}, {2, 2, 7, 7, 8, 5}, {1, 3, 7, 12, 4, 4}, {1, 1, 12, 7, 5, 2}} do
      local B, Hh, Sq, Skv, D, Dv = table.unpack(c)
      local q, k, v = qkv(B, Hh, Sq, Skv, D, Dv, "f64")
      local ql, kl, vl = q:flat(), k:flat(), v:flat()
      for _, causal in ipairs {false, true} do
        for _, mk in ipairs {"none", "bool", "add"} do
          local mask, ml
          if mk == "bool" then
            mask = ck.rand({Sq, Skv}, {dtype = "f64"}):gt(0.3)
            for i = 1, Sq do mask[{i, 1}] = 1 end -- every row keeps a key
            ml = mask:to("f64"):flat()
          elseif mk == "add" then
            mask = H.rand({Sq, Skv}, "f64")
            ml = mask:flat()
          end
          local scale = mk == "add" and 0.7 or 1 / math.sqrt(D)
          local want = oracle(ql, kl, vl, B, Hh, Sq, Skv, D, Dv, scale, causal, ml, mk == "bool")
          local got = ck.attention(q, k, v, {causal = causal, mask = mask, scale = mk == "add" and 0.7 or nil})
          local label = ("%s causal=%s mask=%s"):format(table.concat(c, "x"), tostring(causal), mk)
          assert.are.same({B, Hh, Sq, Dv}, got:shape(), label)
          H.assert_close(got, ck.array(want, {dtype = "f64"}):reshape({B, Hh, Sq, Dv}), {rtol = 1e-12, atol = 1e-12}, label)
        end
      end
    end
  end)

  it("f32/f16/bf16 round the f64 result once; transposed heads read in place", function()
    for _, dt in ipairs {"f32", "f16", "bf16"} do
      local q, k, v = qkv(2, 3, 7, 9, 16, 16, dt, true)
      local got = ck.attention(q, k, v, {causal = true})
      local ref = ck.attention(q:to("f64"), k:to("f64"), v:to("f64"), {causal = true})
      local u = ({f32 = 2 ^ -24, f16 = 2 ^ -11, bf16 = 2 ^ -8})[dt]
      -- below the normal range the rounding is absolute: one step of the dtype's subnormals (f16's 2^-24 is 6e-8; a
      -- clean clone's run in session 14 drew an f16 result of 1.47e-6, rounded 2.2e-8 away, past atol = 1e-12)
      local sub = ({f32 = 2 ^ -149, f16 = 2 ^ -24, bf16 = 2 ^ -133})[dt]
      H.assert_close(got, ref, {rtol = 2 * u, atol = sub}, dt)
    end
  end)

  it("says what is wrong, at the caller's line", function()
    local q = ck.rand({1, 2, 3, 4})
    local ok, e = pcall(ck.attention, q, q, ck.rand({1, 2, 5, 4}))
    assert.is_false(ok); assert.matches("ck.attention: shapes do not agree", e)
    ok, e = pcall(ck.attention, q, q, q:to("f64"))
    assert.is_false(ok); assert.matches("ck.attention: q, k, v must share a dtype", e)
    ok, e = pcall(ck.attention, q, q, q, {mask = ck.rand({3, 5})})
    assert.is_false(ok); assert.matches("ck.attention: the mask must be bool or f32 and broadcast to", e)
    ok, e = pcall(ck.attention, q, q, q, {causl = true})
    assert.is_false(ok); assert.matches("unknown option \"causl\"", e)
    local bq = ck.zeros({1, 2, 3, 4}, {dtype = "bool"})
    ok, e = pcall(ck.attention, bq, bq, bq)
    assert.is_false(ok); assert.matches("ck.attention: q, k, v must be f32, f64, f16 or bf16", e)
    ok, e = pcall(ck.attention, ck.rand({3, 4}), q, q)
    assert.is_false(ok); assert.matches("must be 4%-D", e)
    assert.matches("attention_spec.lua", e)
  end)

  it("gives NaN rows without keys, uniform weights with an empty head dim, and lists the ladder", function()
    local v = ck.array({{{{1, 2}, {3, 4}, {5, 9}}}}, {dtype = "f64"})
    assert.are.same({{{{3, 5}, {3, 5}}}}, ck.attention(ck.empty({1, 1, 2, 0}, {dtype = "f64"}),
      ck.empty({1, 1, 3, 0}, {dtype = "f64"}), v):totable())
    local r = ck.attention(ck.rand({1, 1, 2, 4}), ck.empty({1, 1, 0, 4}), ck.empty({1, 1, 0, 3}))
    assert.are.same({1, 1, 2, 3}, r:shape())
    for _, x in ipairs(r:flat()) do assert.is_true(x ~= x) end
    local names = {}
    for _, row in ipairs(ck.variants("attention")) do names[#names + 1] = row.name end
    assert.are.same({"naive", "flash1", "flash2"}, names)
  end)
end)

describe("the attention ladder on the GPU", function()
  -- The bound, derived as spec/tensorcore_spec.lua derives the tensor-core matmul's: the oracle is f64 on the same
  -- rounded inputs. Scores carry f32 accumulation (d products: d * 2^-24 |q||k|, negligible at these sizes); P is
  -- rounded to the input dtype before P V (|dp| <= u p), so |dO| <= u * sum p |v| / l <= u * max|v| with u the
  -- input's unit roundoff; the result is rounded once more (u |o|). f32/f64 (the naive rung only): (d + Skv)
  -- roundings of the accumulation. 2x margin.
  local U = {f16 = 2 ^ -11, bf16 = 2 ^ -8, f32 = 2 ^ -24, f64 = 2 ^ -53}
  local function tol(dt, d, skv)
    if dt == "f16" or dt == "bf16" then return {rtol = 2 * U[dt], atol = 2 * U[dt]} end
    local t = 2 * (8 + d + skv) * U[dt]
    return {rtol = t, atol = t}
  end

  local function run(cases, dtypes)
    local failures, ran = {}, {}
    for _, c in ipairs(cases) do
      for _, dt in ipairs(dtypes) do
        local B, Hh, Sq, Skv, D = table.unpack(c.dims)
        local q, k, v, gq, gk, gv = qkv(B, Hh, Sq, Skv, D, D, dt, c.heads_last, "cuda")
        for _, causal in ipairs {false, true} do
          local ref = ck.attention(q, k, v, {causal = causal}) -- the host oracle, once for every rung
          for _, vr in ipairs(ck.variants("attention")) do
            local label = ("%s %s %s%s causal=%s"):format(vr.name, dt, table.concat(c.dims, "x"),
              c.heads_last and " heads-last" or "", tostring(causal))
            local out = H.poison(ck.empty(ref:shape(), {dtype = dt, device = "cuda"}))
            local ok, err = pcall(ck.attention, gq, gk, gv, {causal = causal, variant = vr.name, out = out})
            if not ok then failures[#failures + 1] = label .. ": " .. tostring(err)
            else
              if ck.last_ran().name == vr.name then ran[vr.name] = true end
              local good, msg = H.allclose(out, ref, tol(dt, D, Skv))
              if not good then failures[#failures + 1] = label .. " (ran " .. ck.last_ran().name .. "): " .. msg end
            end
          end
        end
      end
    end
    return failures, ran
  end

  it("every rung matches the host: seq 1, 7, 129, 1000, head dims 64/128, causal, f16/bf16, transposed heads", gpu(function()
    local cases = {
      {dims = {1, 2, 1, 1, 64}}, {dims = {2, 2, 7, 7, 64}}, {dims = {1, 3, 129, 129, 128}},
      {dims = {1, 2, 129, 7, 64}}, {dims = {1, 1, 7, 129, 128}},
      {dims = {1, 2, 1000, 1000, 64}, heads_last = true}, {dims = {2, 1, 129, 1000, 128}, heads_last = true},
    }
    local failures, ran = run(cases, {"f16", "bf16"})
    H.report(failures)
    for _, vr in ipairs(ck.variants("attention")) do assert.is_true(ran[vr.name], "rung " .. vr.name .. " never ran") end
  end))

  it("the naive rung takes f32, f64, any head dim and masks", gpu(function()
    local failures = {}
    for _, dt in ipairs {"f32", "f64", "bf16"} do
      local q, k, v, gq, gk, gv = qkv(2, 2, 33, 70, 24, 24, dt, true, "cuda")
      local mask = ck.rand({1, 2, 33, 70}, {dtype = "f64", device = "host"}):gt(0.2)
      mask[{1, 1, 1, 1}] = 1
      mask[{1, 2, 1, 1}] = 1
      for _, m in ipairs {mask, H.rand({33, 70}, dt)} do
        local ref = ck.attention(q, k, v, {mask = m, causal = true})
        local got = ck.attention(gq, gk, gv, {mask = m:to("cuda"), causal = true})
        assert.are.equal("naive", ck.last_ran().name)
        local ok, msg = H.allclose(got, ref, tol(dt, 24, 70))
        if not ok then failures[#failures + 1] = dt .. " " .. m:dtype() .. " mask: " .. msg end
      end
    end
    H.report(failures)
  end))

  it("the fused rungs decline what they cannot take, with the reason", gpu(function()
    local q = ck.rand({1, 1, 8, 32}, {dtype = "bf16", device = "cuda"})
    ck.attention(q, q, q, {variant = "flash2"})
    assert.are.equal("naive", ck.last_ran().name)
    assert.matches("head dims 64 and 128", ck.last_ran().note)
    local q64 = ck.rand({1, 1, 8, 64}, {dtype = "bf16", device = "cuda"})
    ck.attention(q64, q64, q64)
    assert.are.equal("flash2", ck.last_ran().name)
  end))
end)
