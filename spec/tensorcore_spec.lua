-- Tensor-core matmul rungs (issue 13): cuBLAS (GemmEx), 10 wmma, 11 mma_sync in f16 and bf16, and TF32 for
-- f32 operands when asked ({precision = "tf32"}); the Hopper rungs (issue 14): 12 wgmma_tma,
-- 13 warp_specialized, 14 persistent; all against the host f64 product of the same rounded inputs.
--
-- Tolerance, derived per output element c_ij with S_ij = sum_k |a_ik| |b_kj| (computed in f64):
--   * f16/bf16 inputs are exact in f32, and so are their products (11+11 and 8+8 significant bits <= 24);
--   * the f32 accumulation of K products, in any order the hardware uses, is within K * u32 * S_ij
--     (u32 = 2^-24, the standard gamma_K bound, first order);
--   * TF32 rounds (cuBLAS; mma_sync's CUKERN_MM_CFG=1) or truncates (mma_sync's default) each f32 input to 10
--     fraction bits first: |a~ b~ - a b| <= (2 * 2^-10 + 2^-20) |a b| (truncation; half that when rounding),
--     so add 2^-9 * S_ij;
--   * the result is rounded once to the output dtype: u_out * |c_ij| with u_out = 2^-11 (f16), 2^-8 (bf16),
--     2^-24 (f32).
-- The check allows twice the sum (the bound is first order and the reference itself is rounded to f64).
local H = require "spec.helpers"
local ck = H.ck

local U_OUT = {f16 = 2 ^ -11, bf16 = 2 ^ -8, f32 = 2 ^ -24}

local function has_dtype(dt)
  return pcall(ck.zeros, 1, {dtype = dt, device = "host"})
end

-- Random operands (never zeros) rounded to `dt` on the device, and their exact f64 values on the host.
local function operand(shape, dt, transposed)
  local s = transposed and {shape[#shape], shape[#shape - 1]} or shape
  if #shape == 3 then s = transposed and {shape[1], shape[3], shape[2]} or shape end
  local x = H.rand(s, "f32", "cuda"):to(dt)
  if transposed then x = #shape == 3 and x:transpose(2, 3) or x:t() end
  return x, x:to("host"):to("f64")
end

-- The f64 reference and S (flattened) of a product: pass them in to check several results of one product.
local function reference(a64, b64) return {ck.matmul(a64, b64):flat(), ck.matmul(a64:abs(), b64:abs()):flat()} end

local function check(c, a64, b64, dt_out, k, tf32, label, refs)
  refs = refs or reference(a64, b64)
  local g, r, s = c:to("host"):to("f64"):flat(), refs[1], refs[2]
  local worst, wi = 0, nil
  for i = 1, #r do
    local bound = 2 * ((k * 2 ^ -24 + (tf32 and 2 ^ -9 or 0)) * s[i] + U_OUT[dt_out] * math.abs(r[i])) + 1e-30
    local e = math.abs(g[i] - r[i])
    if not (e <= bound) then error(("%s: element %d: got %.9g, expected %.9g (error %.3g, bound %.3g, seed %d)")
      :format(label, i, g[i], r[i], e, bound, H.seed), 2) end
    if e / bound > worst then worst, wi = e / bound, i end
  end
  return worst
end

local SHAPES = { -- {m, n, k [, batch]}, transposed A/B
  {1, 1, 1}, {17, 33, 65}, {127, 129, 31}, {64, 64, 64}, {200, 72, 136, ta = true}, {96, 80, 48, tb = true},
  {33, 40, 24, batch = 3}, {130, 250, 300},
}

describe("tensor-core matmul", function()
  for _, dt in ipairs {"f16", "bf16"} do
    for _, vname in ipairs {"cublas", "wmma", "mma_sync"} do
      it(("%s %s: awkward shapes and transposed views within the derived bound"):format(vname, dt), H.gpu(function()
        if not has_dtype(dt) then return pending(dt .. " arrays are not available in this build") end
        for _, sh in ipairs(SHAPES) do
          local m, n, k = sh[1], sh[2], sh[3]
          local as = sh.batch and {sh.batch, m, k} or {m, k}
          local bs = sh.batch and {sh.batch, k, n} or {k, n}
          local a, a64 = operand(as, dt, sh.ta)
          local b, b64 = operand(bs, dt, sh.tb)
          local label = ("%s %s %dx%dx%d%s"):format(vname, dt, m, n, k, sh.batch and (" batch " .. sh.batch) or "")
          local c = ck.matmul(a, b, {variant = vname})
          local ran = ck.last_ran()
          assert.equal(vname, ran.name, label .. ": ran " .. ran.name .. " (" .. ran.note .. ")")
          assert.equal(dt, c:dtype(), label)
          check(c, a64, b64, dt, k, false, label)
        end
      end))
    end
  end

  -- The Hopper rungs read A and B through TMA tensor maps: a row (the contiguous dim) must be a multiple of
  -- 16 bytes, so k (A row-major, B transposed), n (B row-major) or m (A transposed) are multiples of 8 here;
  -- m, n, k are otherwise not multiples of the 128 x 256 x 64 tiles (zero-filled tails), k spans more k tiles
  -- than the 4 stages (the ring wraps), and 1030 x 2056 x 2 has more tiles (162) than an H100 has SMs, so
  -- the persistent rung's blocks take several tiles each.
  local HOPPER_SHAPES = {
    {1, 8, 8}, {17, 40, 24}, {130, 264, 328}, {200, 72, 136, ta = true}, {96, 80, 48, tb = true},
    {136, 520, 1000, ta = true, tb = true}, {33, 40, 24, batch = 3}, {1030, 2056, 72, batch = 2},
  }
  local function hopper()
    return (ck.device("cuda").cc or ""):match("^9%.") ~= nil
  end
  local HOPPER = {"wgmma_tma", "warp_specialized", "persistent"}
  for _, dt in ipairs {"f16", "bf16"} do
    it(("Hopper rungs %s: tails, transposed views, batches, f32 output within the derived bound"):format(dt), H.gpu(function()
      if not hopper() then return pending("the Hopper rungs need a Hopper GPU (sm_90a)") end
      for _, sh in ipairs(HOPPER_SHAPES) do
        local m, n, k = sh[1], sh[2], sh[3]
        local a, a64 = operand(sh.batch and {sh.batch, m, k} or {m, k}, dt, sh.ta)
        local b, b64 = operand(sh.batch and {sh.batch, k, n} or {k, n}, dt, sh.tb)
        local refs = reference(a64, b64) -- one host product for the 3 rungs x 2 output dtypes
        for _, vname in ipairs(HOPPER) do
          for _, odt in ipairs {dt, "f32"} do
            local label = ("%s %s->%s %dx%dx%d%s%s%s"):format(vname, dt, odt, m, n, k, sh.batch and (" batch " .. sh.batch) or "",
              sh.ta and " A^T" or "", sh.tb and " B^T" or "")
            local out = ck.full(sh.batch and {sh.batch, m, n} or {m, n}, 0 / 0, {dtype = odt, device = "cuda"}) -- poisoned
            local c = ck.matmul(a, b, {variant = vname, out = out})
            local ran = ck.last_ran()
            assert.equal(vname, ran.name, label .. ": ran " .. ran.name .. " (" .. ran.note .. ")")
            assert.equal(odt, c:dtype(), label)
            check(c, a64, b64, odt, k, false, label, refs)
          end
        end
      end
      for _, vname in ipairs(HOPPER) do
        -- transposed views are read in place (no copy): the rung ran on them directly, and C may be strided
        local a, a64 = operand({72, 136}, dt, true)
        local b, b64 = operand({136, 48}, dt, true)
        local ct = ck.full({48, 72}, 0 / 0, {dtype = dt, device = "cuda"}):t()
        ck.matmul(a, b, {variant = vname, out = ct})
        assert.equal(vname, ck.last_ran().name)
        check(ct, a64, b64, dt, 136, false, vname .. " strided C")
        -- alpha and beta: C = 0.5 * A B + 2 * C
        local c0 = H.rand({72, 48}, "f32", "cuda"):to(dt)
        local c1 = c0:clone()
        ck.gemm(c1, a, b, 0.5, 2, {variant = vname})
        assert.equal(vname, ck.last_ran().name)
        local ref = ck.matmul(a64, b64) * 0.5 + c0:to("host"):to("f64") * 2
        local g, r = c1:to("host"):to("f64"):flat(), ref:flat()
        local S = ck.matmul(a64:abs(), b64:abs()):flat()
        local c0f = c0:to("host"):to("f64"):flat()
        for i = 1, #r do
          local bound = 2 * (0.5 * 136 * 2 ^ -24 * S[i] + U_OUT[dt] * (math.abs(r[i]) + 2 * math.abs(c0f[i]))) + 1e-30
          assert(math.abs(g[i] - r[i]) <= bound, ("%s gemm element %d: got %.9g, expected %.9g"):format(vname, i, g[i], r[i]))
        end
      end
    end))
    it(dt .. " default dispatch: large products the persistent rung takes in place run there, the rest on cuBLAS", H.gpu(function()
      if not hopper() then return pending("needs a Hopper GPU (sm_90a)") end
      -- the rule (src/ops/op_matmul.c: mm_preferred_for): >= 2^36 multiply-adds and m >= 8192 rows
      local n, m = 4096, 8192
      local a = (H.rand({m, n}, "f32", "cuda") - 0.5):to(dt)
      local b = (H.rand({n, n}, "f32", "cuda") - 0.5):to(dt)
      local c = a * b
      assert.equal("persistent", ck.last_ran().name, ck.last_ran().note)
      local ref = ck.matmul(a, b, {variant = "cublas"})
      local d = c:to("f64") - ref:to("f64")
      -- (elementwise squares: `*` of two arrays is the matrix product, which the square case before this hid)
      local rel = math.sqrt(ck.sum(ck.mul(d, d)):item() / ck.sum(ck.mul(ref:to("f64"), ref:to("f64"))):item())
      assert(rel < 1e-2, ("persistent vs cuBLAS at %dx%dx%d: relative error %.3g"):format(m, n, n, rel))
      -- what the rule leaves to cuBLAS: beta ~= 0 (C is read), an f32 output, a transposed C, a smaller product
      ck.gemm(c, a, b, 1, 0.5)
      assert.equal("cublas", ck.last_ran().name)
      ck.matmul(a, b, {out = ck.empty({m, n}, {dtype = "f32", device = "cuda"})})
      assert.equal("cublas", ck.last_ran().name)
      ck.matmul(a, b, {out = ck.empty({n, m}, {dtype = dt, device = "cuda"}):t()})
      assert.equal("cublas", ck.last_ran().name)
      local _ = a:narrow(1, 1, 1024) * b:narrow(2, 1, 1024)
      assert.equal("cublas", ck.last_ran().name)
      -- 4096^3 has the multiply-adds but not the rows: cuBLAS (rung 14 was 0.99-1.06 of it there on an H200)
      _ = a:narrow(1, 1, 4096) * b
      assert.equal("cublas", ck.last_ran().name)
      for _, x in ipairs {a, b, c, ref} do x:free() end
    end))
    it(dt .. " Hopper rungs decline what a tensor map cannot take, and the fallback says why", H.gpu(function()
      if not hopper() then return pending("needs a Hopper GPU (sm_90a)") end
      local a, a64 = operand({40, 33}, dt) -- rows of 33 elements: 66 bytes, no tensor map (and no copy helps)
      local b, b64 = operand({33, 24}, dt)
      local c = ck.matmul(a, b, {variant = "warp_specialized"})
      local ran = ck.last_ran()
      assert.are_not.equal("warp_specialized", ran.name)
      assert.matches("warp_specialized", ran.note, 1, true)
      check(c, a64, b64, dt, 33, false, "fallback")
      -- f32 operands are not Hopper-rung business either
      local x = H.rand({64, 64}, "f32", "cuda")
      ck.matmul(x, x, {variant = "wgmma_tma"})
      assert.are_not.equal("wgmma_tma", ck.last_ran().name)
    end))
  end

  for _, vname in ipairs {"cublas", "mma_sync"} do
    it(vname .. " f32 with precision tf32 (opt-in) within the TF32 bound", H.gpu(function()
      for _, sh in ipairs(SHAPES) do
        local m, n, k = sh[1], sh[2], sh[3]
        local a, a64 = operand(sh.batch and {sh.batch, m, k} or {m, k}, "f32", sh.ta)
        local b, b64 = operand(sh.batch and {sh.batch, k, n} or {k, n}, "f32", sh.tb)
        local label = ("%s tf32 %dx%dx%d"):format(vname, m, n, k)
        local c = ck.matmul(a, b, {variant = vname, precision = "tf32"})
        assert.equal(vname, ck.last_ran().name, label)
        check(c, a64, b64, "f32", k, true, label)
      end
    end))
  end

  -- mma_sync's stream-K tail (sm_90a defaults, one block per SM): T = 1.5 x (SMs) tiles of 128 x 256 leave a
  -- last round of T mod SMs tiles, whose k tiles the launch splits over one unit per SM; the last unit of a tile
  -- adds the others' partial sums. Tails on both sides; rows of every 128-row band are checked (rows 0, 9, 70
  -- and 127 of a band: both warp rows, both halves of an m16 tile, every column).
  it("mma_sync stream-K tail: a product with a partial last round of tiles within the derived bound", H.gpu(function()
    if not hopper() then return pending("the stream-K tail runs with the sm_90a (warp-specialized) defaults") end
    local sms = ck.device("cuda").sm_count
    local bm, bn = 11, (3 * sms // 2 + 10) // 11 -- tile rows and columns: about 1.5 x sms tiles, not a multiple
    local m, n, k = bm * 128 - 5, bn * 256 - 37, 1000
    assert((bm * bn) % sms ~= 0 and bm * bn > sms, "the shape has a partial last round")
    for _, dt in ipairs {"bf16", "tf32"} do
      local idt = dt == "tf32" and "f32" or dt
      local a, a64 = operand({m, k}, idt)
      local b, b64 = operand({k, n}, idt)
      local c = ck.matmul(a, b, {variant = "mma_sync", precision = dt == "tf32" and "tf32" or nil})
      assert.equal("mma_sync", ck.last_ran().name, ck.last_ran().note)
      for band = 0, bm - 1 do
        for _, o in ipairs {0, 9, 70, 127} do
          local row = band * 128 + o + 1
          if row <= m then
            local label = ("mma_sync stream-K %s %dx%dx%d row %d"):format(dt, m, n, k, row)
            check(c:narrow(1, row, row), a64:narrow(1, row, row), b64, idt, k, dt == "tf32", label)
          end
        end
      end
    end
  end))

  it("f32 without precision never takes TF32: mma_sync declines and the fallback says so", H.gpu(function()
    local a, b = H.rand({64, 64}, "f32", "cuda"), H.rand({64, 64}, "f32", "cuda")
    local c = ck.matmul(a, b, {variant = "mma_sync"})
    local ran = ck.last_ran()
    assert.are_not.equal("mma_sync", ran.name)
    assert.matches("mma_sync", ran.note, 1, true)
    local a64, b64 = a:to("host"):to("f64"), b:to("host"):to("f64")
    check(c, a64, b64, "f32", 64, false, "fp32 fallback")
  end))

  it("precision tf32 is refused for non-f32 operands, on every device", function()
    for _, dev in ipairs(H.devices()) do
      local a = H.rand({4, 4}, "f64", dev)
      local ok, err = pcall(ck.matmul, a, a, {precision = "tf32"})
      assert.is_false(ok)
      assert.matches('precision "tf32" is for f32 operands', tostring(err), 1, true)
    end
  end)
end)
