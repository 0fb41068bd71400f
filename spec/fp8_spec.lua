-- The FP8 dtypes e4m3 and e5m2 (issue 37): every bit pattern decoded, every rounding and saturation, against an
-- independent plain-Lua model of the OCP formats; casts from and to every dtype, views, fills, tables, files; the
-- GPU's casts equal the host's bit for bit.
local ck = require "cukern"
local H = require "spec.helpers"
local gpu = H.gpu

-- ---------------------------------------------------------------- the model (not kernels/fp8.h's algorithm)
local FMT = {e4m3 = {e = 4, m = 3, bias = 7, max = 448}, e5m2 = {e = 5, m = 2, bias = 15, max = 57344}}

-- the value of bit pattern p (NaN as 0/0, infinities as +-math.huge)
local function decode(dt, p)
  local f = FMT[dt]
  local sign = (p & 0x80) ~= 0 and -1 or 1
  local e, m = (p >> f.m) & ((1 << f.e) - 1), p & ((1 << f.m) - 1)
  if dt == "e4m3" and e == 15 and m == 7 then return 0 / 0 end
  if dt == "e5m2" and e == 31 then return m == 0 and sign * math.huge or 0 / 0 end
  if e == 0 then return sign * m * 2.0 ^ (1 - f.bias - f.m) end
  return sign * (1 + m / (1 << f.m)) * 2.0 ^ (e - f.bias)
end

-- the finite values, ascending, with their patterns
local VALUES = {}
for dt in pairs(FMT) do
  local t = {}
  for p = 0, 255 do
    local v = decode(dt, p)
    if v == v and v ~= math.huge and v ~= -math.huge and not (v == 0 and p ~= 0) then t[#t + 1] = {v = v, p = p} end
  end
  table.sort(t, function(a, b) return a.v < b.v end)
  VALUES[dt] = t
end

-- the nearest value by search (ties to the even pattern), saturating beyond the largest; the value it stands for
local function round(dt, x)
  if x ~= x then return 0 / 0 end
  local f = FMT[dt]
  if x >= f.max then return f.max elseif x <= -f.max then return -f.max end
  local best, bd, bp
  for _, c in ipairs(VALUES[dt]) do
    local d = math.abs(c.v - x)
    if not best or d < bd or (d == bd and c.p % 2 == 0 and bp % 2 == 1) then best, bd, bp = c.v, d, c.p end
  end
  if best == 0 and x < 0 then return -0.0 end
  return best
end

local function same(a, b) return (a ~= a and b ~= b) or a == b end

describe("FP8 dtypes (e4m3, e5m2)", function()
  for dt, f in pairs(FMT) do
    it(dt .. ": every bit pattern decodes as the format says, and finite ones encode back to themselves", function()
      local pats = {}
      for p = 0, 255 do pats[#pats + 1] = p end
      local q = ck.array(pats, {dtype = "u8"})
      local got = ck.empty({256}, {dtype = dt})
      ck.view_as_bytes(got):copy_(q) -- the raw patterns
      local vals = got:to("f64"):flat()
      for p = 0, 255 do
        assert(same(vals[p + 1], decode(dt, p)), ("%s pattern 0x%02x: got %s, expected %s"):format(dt, p, vals[p + 1], decode(dt, p)))
      end
      local back = ck.view_as_bytes(got:to("f64"):to(dt)):flat()
      for p = 0, 255 do
        local v = decode(dt, p)
        if v == v and math.abs(v) ~= math.huge then assert.are.equal(p, back[p + 1], ("%s 0x%02x"):format(dt, p)) end
      end
      assert.are.equal(f.max, ck.finfo(dt).max)
    end)

    it(dt .. ": casts round to nearest even and saturate (infinities too), NaN stays NaN, from every dtype", function()
      local xs = {0, -0.0, 1, -1, f.max, f.max * 1.01, -f.max * 3, 1e30, -1e30, math.huge, -math.huge, 0 / 0}
      -- every midpoint between neighbours (the ties), and just beside them
      local v = VALUES[dt]
      for i = 1, #v - 1 do
        local mid = (v[i].v + v[i + 1].v) / 2
        xs[#xs + 1] = mid; xs[#xs + 1] = mid * (1 + 2 ^ -40); xs[#xs + 1] = mid * (1 - 2 ^ -40)
      end
      math.randomseed(H.seed)
      for _ = 1, 400 do xs[#xs + 1] = (math.random() * 2 - 1) * 2.0 ^ math.random(-20, 18) end
      local got = ck.array(xs, {dtype = "f64"}):to(dt):to("f64"):flat()
      for i, x in ipairs(xs) do
        assert(same(got[i], round(dt, x)), ("%s(%.17g): got %s, expected %s (seed %d)"):format(dt, x, got[i], round(dt, x), H.seed))
      end
      -- the same numbers through f32, f16 and bf16 first (each rounding is the model's of that value)
      for _, src in ipairs {"f32", "f16", "bf16"} do
        local a = ck.array(xs, {dtype = "f64"}):to(src)
        local inter, out = a:to("f64"):flat(), a:to(dt):to("f64"):flat()
        for i = 1, #xs do assert(same(out[i], round(dt, inter[i])), ("%s -> %s of %.17g"):format(src, dt, inter[i])) end
      end
      -- integers (saturated beyond the range), bool, and back to every dtype
      local ints = ck.array({-300, -7, 0, 5, 17, 1000}, {dtype = "i64"})
      local q = ints:to(dt):to("f64"):flat()
      for i, n in ipairs {-300, -7, 0, 5, 17, 1000} do assert.are.equal(round(dt, n), q[i]) end
      assert.are.same({1, 0}, ck.array({true, false}):to(dt):to("i32"):totable())
      local small = ck.array({1.5, -2, 3}, {dtype = dt})
      for _, to in ipairs {"i32", "u8", "i16", "i64", "f16", "bf16", "f32", "e4m3", "e5m2"} do
        local r = small:to(to):to("f64"):flat()
        if to ~= "u8" then assert.are.equal(-2, r[2], to) end
      end
    end)

    it(dt .. ": views, fills, tables, printing and files (saved as f32)", function()
      local a = ck.rand({5, 7}):to(dt)
      local t = a:t():contiguous()
      assert.are.same(a:to("f32"):t():totable(), t:to("f32"):totable())
      assert.are.equal(dt, t:dtype())
      local z = ck.full({3}, 1e6, {dtype = dt})
      assert.are.same({f.max, f.max, f.max}, z:to("f64"):totable())
      assert.are.same({0, 0}, ck.zeros({2}, {dtype = dt}):to("f64"):totable())
      assert.are.same({0.5}, ck.array({0.5}, {dtype = dt}):flat())
      assert.matches(dt, tostring(a))
      local dir = H.tmpdir()
      ck.save(dir .. "/q.npy", a)
      local back = ck.load(dir .. "/q.npy")
      assert.are.equal("f32", back:dtype())
      assert.are.same(a:to("f32"):totable(), back:totable())
      H.sh("rm -rf '" .. dir .. "'")
      local ok, err = pcall(function() return a + 1 end)
      assert.is_false(ok); assert.matches("dtype " .. dt .. " is not supported", err)
    end)

    it(dt .. ": quantize and dequantize with a per-tensor scale", function()
      local x = H.rand({64, 33}, "f64") * 1000
      local q, s = ck.quantize(x, dt)
      assert.are.equal(dt, q:dtype())
      local amax = ck.max(ck.abs(x)):item()
      assert.is_true(math.abs(s - amax / f.max) <= 1e-12 * s)
      local back = ck.dequantize(q, s, {dtype = "f64"})
      -- each element is within half a step of its binade: |x - back| <= 2^-(m+1) |x| (normal range) or the
      -- subnormal half-step s * 2^(-bias - m)
      local X, B = x:flat(), back:flat()
      for i = 1, #X do
        local tol = math.max(math.abs(X[i]) * 2 ^ -(f.m + 1), s * 2 ^ (-f.bias - f.m)) * (1 + 1e-12)
        assert(math.abs(X[i] - B[i]) <= tol, ("%s element %d: %.17g -> %.17g"):format(dt, i, X[i], B[i]))
      end
      local q2 = ck.quantize(x, dt, {scale = 2})
      assert.are.same((x / 2):to(dt):to("f64"):totable(), q2:to("f64"):totable())
      local ok, err = pcall(ck.quantize, x, dt, {scale = 0})
      assert.is_false(ok); assert.matches("ck.quantize: option scale must be a finite number > 0", err)
    end)
  end

  -- FP8 products: exact FP8 inputs, so the only errors are the accumulation and the result's one rounding (half
  -- an ulp of bf16/f16/f32: 2^-8, 2^-11, 2^-24 relative). The host accumulates in f64 (k 2^-53 sum|a||b|, below
  -- the rest). Hopper's FP8 tensor cores add each MMA's k-slice with about 14 bits kept (the DeepSeek-V3 report,
  -- 2024, measured ~2^-14 on H800; cuBLASLt then adds the slices in f32): the addends are aligned to the slice's
  -- largest exponent and cut to 14 bits, so each loses up to 2^-13 of 2^(e_max + 1) <= 2 max|a_i b_j|, whatever
  -- its own size. So on a GPU: k 2^-12 max_p|a_ip| max_p|b_pj| (every addend at the worst cut), plus k 2^-24 for
  -- the f32 additions. (The earlier bound, 2^-13 sum|a||b|, assumed each addend lost 2^-14 of ITSELF; an H100 run
  -- of round 3, session 5 found one element of 32768 past it, at 128x256x64 with an f32 result.)
  -- Our wgmma rung (18) keeps the running sum in the tensor core's accumulator over the whole k (cuBLASLt's
  -- "fast accumulation", torch._scaled_mm(use_fast_accum = True)): each of its ceil(k/32) wgmma steps may cut the
  -- running sum itself (|sum| <= sum|a||b|) to those 14 bits, 2^-13 of 2^(e + 1): ceil(k/32) 2^-12 sum|a||b| more
  -- (fastacc below).
  local HALF_ULP = {bf16 = 2 ^ -8, f16 = 2 ^ -11, f32 = 2 ^ -24}
  local function check_product(label, c, a, bt, scale, fastacc)
    local a64, b64 = a:to("host"):to("f64"), bt:to("host"):to("f64") -- a [m, k], bt [n, k]
    local ref = ck.matmul(a64, b64:t()) * scale
    local mag = ck.matmul(ck.abs(a64), ck.abs(b64):t()) * scale
    local m, k, n = a:shape()[1], a:shape()[2], bt:shape()[1]
    local tol = mag * (k * 2 ^ -24) + ck.abs(ref) * HALF_ULP[c:dtype()] * 1.01
    if c:device():match("^cuda") then
      local worst = ck.max(ck.abs(a64), 2):reshape(m, 1) * ck.max(ck.abs(b64), 2):reshape(1, n) * scale
      tol = tol + worst * (k * 2 ^ -12)
      if fastacc then tol = tol + mag * (math.ceil(k / 32) * 2 ^ -12) end
    end
    local bad = ck.gt(ck.abs(c:to("host"):to("f64") - ref), tol + 1e-300):count_nonzero():item()
    assert.are.equal(0, bad, label .. ": elements outside the derived tolerance")
  end

  -- a batch of three products on the GPU (B transposed: K-major), each matrix against the host oracle; `variant`
  -- asks for a row by name (nil: the default order)
  local function check_batch(label, dta, dtb, variant)
    local a = (H.rand({3, 64, 32}, "f32")):to(dta)
    local bt = (H.rand({3, 16, 32}, "f32")):to(dtb)
    local c = ck.matmul(a:to("cuda"), bt:to("cuda"):transpose(2, 3), {variant = variant})
    if variant then assert.are.equal(variant, ck.last_ran().name, label .. ": " .. tostring(ck.last_ran().note)) end
    local fast = ck.last_ran().name == "wgmma_fp8"
    for z = 1, 3 do check_product(label .. " " .. z, c:select(1, z), a:select(1, z), bt:select(1, z), 1, fast) end
  end

  it("e4m3 matmul on the host: scales, result dtypes, refusals", function()
    local a, bt = (H.rand({33, 64}, "f32") * 3):to("e4m3"), (H.rand({17, 64}, "f32") * 3):to("e4m3")
    for _, od in ipairs {"bf16", "f16", "f32"} do
      local c = ck.matmul(a, bt:t(), {out = ck.empty({33, 17}, {dtype = od, device = "host"}), scale_a = 0.5, scale_b = 4})
      assert.are.equal(od, c:dtype())
      check_product("host " .. od, c, a, bt, 2)
    end
    assert.are.equal("bf16", ck.matmul(a, bt:t()):dtype())
    -- mixed e4m3 x e5m2 and e5m2 x e4m3, and e5m2 x e5m2: each operand read by its own dtype (no conversion)
    local a5, bt5 = (H.rand({33, 64}, "f32") * 3):to("e5m2"), (H.rand({17, 64}, "f32") * 3):to("e5m2")
    for _, pr in ipairs {{a, bt5, "e4m3 x e5m2"}, {a5, bt, "e5m2 x e4m3"}, {a5, bt5, "e5m2 x e5m2"}} do
      for _, od in ipairs {"bf16", "f32"} do
        local c = ck.matmul(pr[1], pr[2]:t(), {out = H.poison(ck.empty({33, 17}, {dtype = od, device = "host"})), scale_a = 2, scale_b = 0.25})
        assert.are.equal(od, c:dtype())
        check_product("host " .. pr[3] .. " " .. od, c, pr[1], pr[2], 0.5)
      end
      local v = ck.matmul(pr[1]:narrow(2, 1, 31), pr[2]:narrow(2, 1, 31):t()) -- odd k, a strided view
      check_product("host " .. pr[3] .. " view", v, pr[1]:narrow(2, 1, 31), pr[2]:narrow(2, 1, 31), 1)
    end
    local ok, err = pcall(ck.matmul, a, bt:t():to("f32"))
    assert.is_false(ok); assert.matches("FP8 operands pair only with FP8", err)
    ok, err = pcall(ck.matmul, a, bt:t(), {scale_a = -1})
    assert.is_false(ok); assert.matches("option scale_a must be a finite number > 0", err)
  end)

  it("e4m3 matmul on the GPU (cuBLASLt) matches the host oracle, batched too, and declines row-major B", gpu(function()
    for _, case in ipairs {{m = 128, n = 256, k = 64}, {m = 129, n = 48, k = 1024}, {m = 1, n = 16, k = 16}} do
      local a = (H.rand({case.m, case.k}, "f32") * 4):to("e4m3")
      local bt = (H.rand({case.n, case.k}, "f32") * 4):to("e4m3")
      local ga, gbt = a:to("cuda"), bt:to("cuda")
      for _, od in ipairs {"bf16", "f32"} do
        local c = ck.matmul(ga, gbt:t(), {out = ck.empty({case.m, case.n}, {dtype = od, device = "cuda"}), scale_a = 0.25, scale_b = 2})
        assert.are.equal("cublaslt_fp8", ck.last_ran().name)
        check_product(("cuda %dx%dx%d %s"):format(case.m, case.n, case.k, od), c, a, bt, 0.5)
      end
    end
    check_batch("batch", "e4m3", "e4m3")
    -- a row-major (N-major) B: cuBLASLt's FP8 wants K-major, so the product is declined with a message
    local a = H.rand({64, 32}, "f32"):to("e4m3"):to("cuda")
    local ok, err = pcall(ck.matmul, a, (H.rand({32, 16}, "f32")):to("e4m3"):to("cuda"))
    assert.is_false(ok); assert.matches("K%-major", err)
  end))

  it("mixed e4m3 x e5m2 and e5m2 x e4m3 on the GPU (cuBLASLt) match the host oracle; e5m2 x e5m2 is refused", gpu(function()
    for _, case in ipairs {{m = 128, n = 256, k = 64}, {m = 33, n = 48, k = 1024}, {m = 1, n = 16, k = 16}} do
      for _, dts in ipairs {{"e4m3", "e5m2"}, {"e5m2", "e4m3"}} do
        local a = (H.rand({case.m, case.k}, "f32") * 4):to(dts[1])
        local bt = (H.rand({case.n, case.k}, "f32") * 4):to(dts[2])
        local ga, gbt = a:to("cuda"), bt:to("cuda")
        for _, od in ipairs {"bf16", "f16", "f32"} do
          local out = H.poison(ck.empty({case.m, case.n}, {dtype = od, device = "cuda"}))
          local c = ck.matmul(ga, gbt:t(), {out = out, scale_a = 0.5, scale_b = 2})
          assert.are.equal("cublaslt_fp8", ck.last_ran().name)
          local label = ("cuda %s x %s %dx%dx%d %s"):format(dts[1], dts[2], case.m, case.n, case.k, od)
          check_product(label, c, a, bt, 1)
          -- and against the host backend's own mixed product, within the same bound
          local h = ck.matmul(a, bt:t(), {out = ck.empty({case.m, case.n}, {dtype = "f32", device = "host"}), scale_a = 0.5, scale_b = 2})
          check_product(label .. " (host)", h, a, bt, 1)
        end
      end
    end
    check_batch("batch e5m2 x e4m3", "e5m2", "e4m3")
    -- e5m2 x e5m2: cuBLASLt has no kernel for it; on a Hopper GPU our wgmma rung (18) takes it, elsewhere the
    -- error names the pairing and the op
    local a5, bt5 = (H.rand({32, 64}, "f32")):to("e5m2"), (H.rand({16, 64}, "f32")):to("e5m2")
    local ok, c = pcall(ck.matmul, a5:to("cuda"), bt5:to("cuda"):t())
    if ok then
      assert.are.equal("wgmma_fp8", ck.last_ran().name)
      check_product("cuda e5m2 x e5m2", c, a5, bt5, 1, true)
    else
      assert.truthy(tostring(c):find("e5m2 x e5m2", 1, true) and tostring(c):find("matmul", 1, true), tostring(c))
    end
  end))

  -- Every FP8 row of the matmul ladder asked for by name, in the form of the acceptance loop of
  -- spec/matmul_spec.lua: each pairing it takes, every result dtype, tails in m, n and k (k below one 128-wide
  -- k tile, n not a multiple of 8: no TMA store), a C view whose rows no TMA map takes, a batch; C poisoned first.
  -- A row that declines a case must say so and be cuBLASLt on e5m2 x e5m2 (its only gap) or a non-Hopper GPU.
  it("every FP8 matmul variant, asked for by name, matches the host oracle", gpu(function()
    local rows = {}
    for _, v in ipairs(ck.variants("matmul")) do
      for _, d in ipairs(v.dtypes) do if d == "e4m3" then rows[#rows + 1] = v.name end end
    end
    table.sort(rows)
    assert.are.same({"cublaslt_fp8", "wgmma_fp8"}, rows)
    local hopper = tostring(ck.device("cuda").cc):match("^9%.") ~= nil
    local CASES = {{128, 256, 128}, {300, 520, 272}, {1, 16, 16}, {257, 24, 1040}, {65, 20, 48}}
    local PAIRS = {{"e4m3", "e4m3"}, {"e4m3", "e5m2"}, {"e5m2", "e4m3"}, {"e5m2", "e5m2"}}
    for _, name in ipairs(rows) do
      local took = 0
      for _, cs in ipairs(CASES) do
        local m, n, k = cs[1], cs[2], cs[3]
        for _, pr in ipairs(PAIRS) do
          local a, bt = (H.rand({m, k}, "f32") * 6):to(pr[1]), (H.rand({n, k}, "f32") * 6):to(pr[2])
          local ga, gb = a:to("cuda"), bt:to("cuda"):t()
          for _, od in ipairs {"bf16", "f16", "f32"} do
            local label = ("%s %s x %s %dx%dx%d -> %s"):format(name, pr[1], pr[2], m, n, k, od)
            -- C as a view of a wider array: rows of n + 3 elements (no TMA map takes them: direct stores)
            for _, wide in ipairs {false, true} do
              local out = H.poison(ck.empty({m, wide and n + 3 or n}, {dtype = od, device = "cuda"}))
              local c = wide and out:narrow(2, 1, n) or out
              ck.matmul(ga, gb, {out = c, scale_a = 0.5, scale_b = 0.25, variant = name})
              local ran = ck.last_ran()
              if ran.name == name then
                took = took + 1
                check_product(label .. (wide and " (C a view)" or ""), c, a, bt, 0.125, name == "wgmma_fp8")
              else
                -- cuBLASLt declines e5m2 x e5m2 and a C whose rows are not 16-byte multiples (the view; n = 20 in
                -- bf16/f16)
                local row_bytes = (wide and n + 3 or n) * (od == "f32" and 4 or 2)
                assert.truthy((name == "cublaslt_fp8" and ((pr[1] == "e5m2" and pr[2] == "e5m2") or row_bytes % 16 ~= 0)) or
                              (name == "wgmma_fp8" and not hopper), label .. ": declined: " .. tostring(ran.note))
                assert.truthy(tostring(ran.note):find("asked for '" .. name .. "'", 1, true), label .. ": " .. tostring(ran.note))
              end
              out:free()
            end
          end
        end
      end
      assert.truthy(took > 0 or (name == "wgmma_fp8" and not hopper), name .. " ran no case")
      if hopper or name ~= "wgmma_fp8" then check_batch("batch " .. name, "e4m3", "e5m2", name) end
    end
    -- a row-major (N-major) B is declined by both rows, each with its reason
    local ok, err = pcall(ck.matmul, (H.rand({64, 32}, "f32")):to("e4m3"):to("cuda"), (H.rand({32, 16}, "f32")):to("e4m3"):to("cuda"))
    assert.is_false(ok)
    assert.truthy(tostring(err):find("cublaslt_fp8: B must be K-major", 1, true) and tostring(err):find("wgmma_fp8:", 1, true), tostring(err))
  end))

  it("cuda casts equal the host's, bit for bit (every pattern, every source dtype, views)", gpu(function()
    for dt in pairs(FMT) do
      local pats = {}
      for p = 0, 255 do pats[#pats + 1] = p end
      local hq = ck.empty({256}, {dtype = dt})
      ck.view_as_bytes(hq):copy_(ck.array(pats, {dtype = "u8"}))
      local gq = hq:to("cuda")
      for _, to in ipairs {"f32", "f64", "f16", "bf16", "e4m3", "e5m2"} do
        local h, g = hq:to(to), gq:to(to):to("host")
        assert.is_true(ck.equal(ck.view_as_bytes(h), ck.view_as_bytes(g)), dt .. " -> " .. to)
      end
      local x = (ck.rand({300, 129}, {dtype = "f64"}) * 2 - 1) * 2 ^ 17
      for _, src in ipairs {"f64", "f32", "f16", "bf16", "i32"} do
        local hx = x:to(src):t()
        local h, g = hx:to(dt), hx:to("cuda"):to(dt):to("host")
        assert.is_true(ck.equal(ck.view_as_bytes(h), ck.view_as_bytes(g)), src .. " -> " .. dt)
      end
    end
  end))
end)
