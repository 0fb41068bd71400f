--- Linear algebra on a GPU against the host (LAPACKE) — issue 34. The residual checks of spec/linalg_spec.lua run
-- on the GPU too; here every GPU path is compared with the host's answer for the same input: the one-kernel
-- solve of orders <= 32 in f32, 16 in f64, and Cholesky to 64 (la_small.cu; operands read in place), the batched cuBLAS getrf/getrs (batch >= 2, n <= 128), cuSOLVER per matrix,
-- each rung of the LU ladder (same pivots, LU within 1e3 n eps |A|), iterative refinement (backward error within
-- the f64 solve's, times 10), and check = false.
local H = require "spec.helpers"
local ck = H.ck
local gpu = H.gpu

local EPS = {f32 = 2.0 ^ -23, f64 = 2.0 ^ -52}
local function close(got, ref, tol, what)
  local ok, msg = H.allclose(got, ref, tol)
  assert(ok, (what or "") .. ": " .. tostring(msg) .. " (seed " .. H.seed .. ")")
end

describe("linear algebra: GPU against the host", function()
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  for _, dt in ipairs {"f32", "f64"} do
    it(dt .. ": solve, det, cholesky, svdvals, eigvalsh on small batches (cuBLAS batched) and large matrices", gpu(function()
      -- orders <= 32 (f32) / 16 (f64): gesv_small (one kernel; groups of 8, 16, 32 lanes); to 128: cuBLAS batched;
      -- larger: cuSOLVER
      for _, shape in ipairs {{1000, 8, 8}, {500, 13, 13}, {7, 32, 32}, {20, 20}, {1, 1}, {100, 64, 64}, {65, 65},
                              {300, 300}, {4, 128, 128}, {3, 130, 130}} do
        local n = shape[#shape]
        local A = H.rand(shape, dt, "host")
        local B = H.rand((function() local s = {table.unpack(shape)}; s[#s] = 2; return s end)(), dt, "host")
        local tol = {rtol = 1e3 * n * EPS[dt], atol = 1e3 * n * EPS[dt]}
        local Xd = ck.solve(A:cuda(), B:cuda())
        local Xh = ck.solve(A, B)
        -- compare A (Xd - Xh), not x (which cond(A) amplifies): each solve is backward stable, |A x - b| <= c n u |A||x|
        -- (c: pivot growth and summation; partial pivoting keeps it small), so |A (Xd - Xh)| <= 2 c n u |A||x|,
        -- bounded here with c = 500 by the largest entry of |A||Xh|. (A bound without |x| failed on one H100 draw:
        -- a random 300^2 A can have cond ~1e4 and entries of x that large.)
        local A64 = A:to("f64"):contiguous():reshape(-1, n, n)
        local r = ck.matmul(A64, ck.sub(Xd:host(), Xh):to("f64"):contiguous():reshape(-1, n, 2))
        local ax = ck.max(ck.matmul(ck.abs(A64), ck.abs(Xh:to("f64")):contiguous():reshape(-1, n, 2)):reshape(-1), 1):item()
        local err = ck.max(ck.abs(r):reshape(-1), 1):item()
        assert(err <= 1e3 * n * EPS[dt] * math.max(ax, 1), ("solve residual of the difference: %.3g > %.3g (|A||x| %.3g, seed %d)")
          :format(err, 1e3 * n * EPS[dt] * math.max(ax, 1), ax, H.seed))
        close((ck.slogdet(A:cuda())), (ck.slogdet(A)), {rtol = 0, atol = 0}, "slogdet sign")
        local G = ck.add(ck.matmul(A:to("f64"):contiguous():reshape(-1, n, n), A:to("f64"):contiguous():reshape(-1, n, n):transpose(2, 3)),
          ck.mul(ck.eye(n, {dtype = "f64"}), n)):to(dt)
        close(ck.cholesky(G:cuda()), ck.cholesky(G), tol, "cholesky")
        close(ck.svdvals(A:cuda()), ck.svdvals(A), {rtol = tol.rtol, atol = tol.atol * n}, "svdvals")
        local S = ck.add(A, A:transpose(-2, -1))
        close(ck.eigvalsh(S:cuda()), ck.eigvalsh(S), {rtol = tol.rtol, atol = tol.atol * n}, "eigvalsh")
      end
    end))

    it(dt .. ": every rung of the LU ladder gives the host's pivots and factors", gpu(function()
      -- 1100 x 200: fused_panel's grid of 18 blocks of 64 rows, pivots crossing blocks; "singular": column 71 zero
      -- (an exact zero pivot at step 71: no swap, no scaling, the rest factored as LAPACK does)
      for _, shape in ipairs {{1, 1}, {33, 33}, {200, 200}, {130, 70}, {70, 130}, {2, 96, 96}, {513, 513}, {1100, 200},
                              "singular"} do
        local A
        if shape == "singular" then
          shape = {150, 150}
          local keep = {}
          for j = 1, 150 do keep[j] = j == 71 and 0 or 1 end
          A = ck.mul(H.rand(shape, dt, "host"), ck.array({keep}, {dtype = dt}))
        else
          A = H.rand(shape, dt, "host")
        end
        local LUh, ph = ck.lu(A, {packed = true})
        for _, v in ipairs(ck.variants("lu")) do
          local LUd, pd = ck.lu(A:cuda(), {packed = true, variant = v.name})
          assert.same(v.name, ck.last_ran().name)
          if v.name == "fused_panel" and shape[#shape] > 1 then -- its cooperative kernel ran (not the fallback)
            local names = {}
            for _, k in ipairs(ck.last_ran().kernels or {}) do names[#names + 1] = k.name end
            assert(table.concat(names, " "):find("panel_kernel", 1, true), "fused_panel ran " .. table.concat(names, " "))
          end
          assert(ck.equal(pd, ph), v.name .. ": pivots differ (seed " .. H.seed .. ")")
          local n = math.max(shape[#shape], shape[#shape - 1])
          close(LUd, LUh, {rtol = 1e2 * n * EPS[dt], atol = 1e2 * n * EPS[dt]}, "lu " .. v.name .. " " .. table.concat(shape, "x"))
        end
      end
    end))

    it(dt .. ": qr, svd, eigh, lstsq, triangular_solve, inv on the GPU satisfy the host's residual bounds", gpu(function()
      local A = H.rand({40, 25}, dt, "cuda")
      local Q, R = ck.qr(A)
      close(ck.matmul(Q, R), A, {rtol = 1e3 * 40 * EPS[dt], atol = 1e3 * 40 * EPS[dt]}, "qr")
      local U, s, V = ck.svd(A)
      close(ck.matmul(ck.mul(U, s:reshape(1, 25)), V:t()), A, {rtol = 1e3 * 40 * EPS[dt], atol = 1e3 * 40 * EPS[dt]}, "svd")
      local U2, s2, V2 = ck.svd(A:t(), {full = true})
      assert.same({25, 25}, U2:shape()); assert.same({40, 40}, V2:shape()); close(s2, s, {rtol = 1e3 * 40 * EPS[dt], atol = 1e-6}, "svd wide")
      local x = ck.lstsq(A, H.rand({40}, dt, "cuda"))
      assert.same({25}, x:shape())
      local T = ck.add(ck.triu(H.rand({30, 30}, dt, "cuda")), ck.mul(ck.eye(30, {dtype = dt, device = "cuda"}), 4))
      local b = H.rand({5, 30}, dt, "cuda")
      close(ck.triangular_solve(T, b, {upper = true, left = false}), ck.triangular_solve(T:host(), b:host(), {upper = true, left = false}),
        {rtol = 1e3 * 30 * EPS[dt], atol = 1e3 * 30 * EPS[dt]}, "trsm right")
      local M = H.rand({50, 50}, dt, "cuda")
      close(ck.matmul(M, ck.inv(M)), ck.eye(50, {dtype = dt, device = "cuda"}), {rtol = 0, atol = 1e4 * 50 * EPS[dt] * ck.cond(M):item() / 50}, "inv")
    end))
  end

  it("eig and eigvals (cusolverDnXgeev) match the host's eigenvalues, real and complex, batched", gpu(function()
    for _, dt in ipairs {"f32", "f64", "c64", "c128"} do
      local real = dt:match("^c") and (dt == "c64" and "f32" or "f64") or dt
      local eps = EPS[real]
      for _, shape in ipairs {{1, 1}, {8, 8}, {3, 16, 16}, {64, 64}} do
        local A = dt:match("^c") and ck.complex(H.rand(shape, real, "host"), H.rand(shape, real, "host")) or H.rand(shape, dt, "host")
        local n = shape[#shape]
        local wg, Vg = ck.eig(A:cuda())
        assert.are.equal("cuda", wg:device():match("^%a+"))
        local wh = ck.eigvals(A):to("c128"):contiguous():reshape(-1, n):totable()
        local wd = wg:to("host"):to("c128"):contiguous():reshape(-1, n):totable()
        -- the same eigenvalues as a set (nearest match; LAPACK's and cuSOLVER's orders may differ)
        local scale = math.sqrt(ck.sum(ck.abs(A:to("host")) ^ 2):item()) + 1
        for b = 1, #wh do
          for _, x in ipairs(wh[b]) do
            local best = math.huge
            for _, y in ipairs(wd[b]) do best = math.min(best, math.abs(x[1] - y[1]) + math.abs(x[2] - y[2])) end
            assert(best <= 1e3 * n * eps * scale, ("%s %s: host eigenvalue %g%+gi: nearest GPU one %.3g away")
              :format(dt, table.concat(shape, "x"), x[1], x[2], best))
          end
        end
        -- and the GPU's vectors satisfy A V = V diag(w) (in c128 on the host)
        if #shape == 2 then
          local Ah, Vh = A:to("c128"), Vg:to("host"):to("c128")
          local R = ck.matmul(Ah, Vh) - ck.mul(Vh, wg:to("host"):to("c128"):reshape(1, n))
          local r = math.sqrt(ck.sum(ck.abs(R) ^ 2):item()) / (scale * n * eps)
          assert(r < 30, ("%s %s: ||A V - V diag(w)|| ratio %.3g"):format(dt, table.concat(shape, "x"), r))
        end
      end
    end
  end))

  -- complex qr, svd, eigh, lstsq, triangular_solve (cuSOLVER's C/Z geqrf, ungqr, unmqr, gesvd, heevd; cuBLAS's C/Z
  -- trsm) against the host's LAPACKE c/z. Values that are unique (singular values, Hermitian eigenvalues, |R|, the
  -- solutions of well-conditioned systems) to 1e3 n u (times cond where a solve amplifies: two backward-stable
  -- answers differ by up to cond times their backward errors); factors that are unique only up to unit phases (Q,
  -- U, V) by their residuals in c128 on the host, ratio to ||A|| n u below 170 (spec/linalg_complex_spec.lua derives
  -- it). u: the unit roundoff of the parts (c64 2^-24, c128 2^-53).
  it("complex qr, svd, eigh, lstsq, triangular_solve on the GPU agree with the host's", gpu(function()
    local function h(x) return x:to("host"):to("c128") end
    local function CH(x) return ck.conj(h(x)):transpose(-2, -1) end
    local function cfro(x) return math.sqrt(ck.sum(ck.abs(h(x)) ^ 2):item()) end
    local function vr(x) return ck.view_as_real(h(x):contiguous()) end -- complex compared part by part
    for _, dt in ipairs {"c64", "c128"} do
      local part = dt == "c64" and "f32" or "f64"
      local u = EPS[part] / 2
      local function cx(shape) return ck.complex(H.rand(shape, part, "host"), H.rand(shape, part, "host")):to(dt) end
      for _, shape in ipairs {{40, 25}, {25, 40}, {3, 16, 16}, {130, 70}, {1, 1}} do
        local A = cx(shape)
        local Ad = A:cuda()
        local m, n = shape[#shape - 1], shape[#shape]
        local big, k = math.max(m, n), math.min(m, n)
        local tag = dt .. " " .. table.concat(shape, "x")
        local tol = {rtol = 1e3 * big * u, atol = 1e3 * big * u * cfro(A)}
        local Q, R = ck.qr(Ad)
        assert.are.equal("cuda", Q:device():match("^%a+"))
        if #shape == 2 then
          local r = cfro(h(A) - ck.matmul(h(Q), h(R))) / (cfro(A) * big * u)
          assert(r < 170, ("qr %s: ||A - QR|| ratio %.3g"):format(tag, r))
          r = cfro(ck.matmul(CH(Q), h(Q)) - ck.eye(k, {dtype = "c128"})) / (big * u)
          assert(r < 170, ("qr %s: ||Q^H Q - I|| ratio %.3g"):format(tag, r))
        end
        close(ck.abs(R), ck.abs(select(2, ck.qr(A))), tol, "qr |R| " .. tag)
        local U, s, V = ck.svd(Ad)
        assert.are.equal(part, s:dtype())
        close(s, ck.svdvals(A), tol, "svd s " .. tag)
        if #shape == 2 then
          local r = cfro(h(A) - ck.matmul(ck.mul(h(U), h(s):reshape(1, k)), CH(V))) / (cfro(A) * big * u)
          assert(r < 170, ("svd %s: ||A - U S V^H|| ratio %.3g"):format(tag, r))
        end
        if m == n then
          local S = A + ck.conj(A):transpose(-2, -1)
          local w, W = ck.eigh(S:cuda())
          assert.are.equal(part, w:dtype())
          close(w, ck.eigvalsh(S), tol, "eigh w " .. tag)
          if #shape == 2 then
            local r = cfro(ck.matmul(h(S), h(W)) - ck.mul(h(W), h(w):reshape(1, n))) / (cfro(S) * n * u)
            assert(r < 170, ("eigh %s: ||A V - V diag(w)|| ratio %.3g"):format(tag, r))
          end
          local T = ck.triu(A) + ck.eye(n, {dtype = dt}) * 4
          for _, left in ipairs {true, false} do
            local bs = {table.unpack(shape)}
            bs[#bs - 1], bs[#bs] = left and n or 3, left and 3 or n
            local B = cx(bs)
            local o = {upper = true, left = left}
            close(vr(ck.triangular_solve(T:cuda(), B:cuda(), o)), vr(ck.triangular_solve(T, B, o)), tol, "trsm " .. tag)
          end
        end
        if #shape == 2 and m ~= n then -- a full-rank random A: cond well below 1e3
          local B = cx({m, 2})
          local c = ck.cond(A:to("c128")):item()
          close(vr(ck.lstsq(Ad, B:cuda())), vr(ck.lstsq(A, B)), {rtol = tol.rtol * c * c, atol = tol.rtol * c * c}, "lstsq " .. tag)
          close(vr(ck.pinv(Ad)), vr(ck.pinv(A)), {rtol = tol.rtol * c, atol = tol.rtol * c}, "pinv " .. tag)
        end
      end
    end
  end))

  -- ck.svd on a GPU runs cusolverDn<t>gesvdj (Jacobi) and, where an entry does not converge, gesvd (QR iteration) on
  -- A again (la_funcs.c); check = false skips the read of info, so it runs gesvd at once: the fallback's routine,
  -- checked here by residuals in every dtype, tall, wide and batched (the trigger, an unconverged Jacobi entry, is not
  -- something a random input reaches)
  it("svd by QR iteration (gesvd, the Jacobi path's fallback, taken directly by check = false) passes the residual checks", gpu(function()
    local function h(x) return x:to("host"):to("c128") end
    local function CH(x) return ck.conj(h(x)):transpose(-2, -1) end
    local function cfro(x) return math.sqrt(ck.sum(ck.abs(h(x)) ^ 2):item()) end
    for _, dt in ipairs {"f32", "f64", "c64", "c128"} do
      local part = (dt == "f32" or dt == "c64") and "f32" or "f64"
      local u = EPS[part] / 2
      for _, shape in ipairs {{40, 25}, {25, 40}, {3, 16, 16}, {1, 1}} do
        local A = H.rand(shape, part, "host")
        if dt == "c64" or dt == "c128" then A = ck.complex(A, H.rand(shape, part, "host")) end
        local m, n = shape[#shape - 1], shape[#shape]
        local big, k = math.max(m, n), math.min(m, n)
        local tag = dt .. " " .. table.concat(shape, "x")
        local U, sv, V = ck.svd(A:cuda(), {check = false})
        assert.are.equal("cuda", U:device():match("^%a+"))
        assert.are.equal(part, sv:dtype())
        close(sv, ck.svdvals(A), {rtol = 1e3 * big * u, atol = 1e3 * big * u * cfro(A)}, "gesvd s " .. tag)
        for b = 1, (#shape == 3 and shape[1] or 1) do
          local function one(x) return #shape == 3 and x:select(1, b) or x end
          local Ab, Ub, Vb, sb = one(h(A)), one(h(U)), one(h(V)), one(h(sv))
          local r = cfro(Ab - ck.matmul(ck.mul(Ub, sb:reshape(1, k)), CH(Vb))) / (math.max(cfro(Ab), 1e-300) * big * u)
          assert(r < 170, ("gesvd %s [%d]: ||A - U S V^H|| ratio %.3g"):format(tag, b, r))
          r = cfro(ck.matmul(CH(Ub), Ub) - ck.eye(k, {dtype = "c128"})) / (big * u)
          assert(r < 170, ("gesvd %s [%d]: ||U^H U - I|| ratio %.3g"):format(tag, b, r))
          r = cfro(ck.matmul(CH(Vb), Vb) - ck.eye(k, {dtype = "c128"})) / (big * u)
          assert(r < 170, ("gesvd %s [%d]: ||V^H V - I|| ratio %.3g"):format(tag, b, r))
        end
      end
    end
  end))

  it("singular and not-SPD inputs raise on the GPU as on the host; check = false reads nothing back", gpu(function()
    local S = ck.array({{1, 2}, {2, 4}}, {dtype = "f64", device = "cuda"})
    local ok, err = pcall(ck.solve, S, ck.ones(2, {dtype = "f64", device = "cuda"}))
    assert(not ok and err:find("U(2,2) is exactly zero", 1, true), err)
    local batch = ck.stack({ck.eye(3, {dtype = "f32", device = "cuda"}), ck.zeros(3, 3, {device = "cuda"})})
    ok, err = pcall(ck.inv, batch)
    assert(not ok and err:find("U(1,1) is exactly zero in its LU factors (matrix [2] of the batch)", 1, true), err)
    ok, err = pcall(ck.cholesky, ck.mul(ck.eye(4, {dtype = "f64", device = "cuda"}), -1))
    assert(not ok and err:find("leading minor of order 1", 1, true), err)
    -- a batch goes through one cusolverDn<t>potrfBatched call: the entry that is not positive definite is named, and
    -- the upper factor of a batch matches the host's
    local P = ck.stack({ck.eye(4, {dtype = "f64", device = "cuda"}), ck.mul(ck.eye(4, {dtype = "f64", device = "cuda"}), -1),
                        ck.eye(4, {dtype = "f64", device = "cuda"})})
    ok, err = pcall(ck.cholesky, P)
    assert(not ok and err:find("leading minor of order 1 is not positive (matrix [2] of the batch)", 1, true), err)
    for _, dt in ipairs {"f32", "f64", "c64", "c128"} do
      local R = H.rand({40, 12, 12}, (dt == "c64" or dt == "f32") and "f32" or "f64", "host")
      if dt == "c64" or dt == "c128" then R = ck.complex(R, H.rand({40, 12, 12}, dt == "c64" and "f32" or "f64", "host")) end
      local G = ck.add(ck.matmul(R, ck.conj(R):transpose(2, 3)), ck.mul(ck.eye(12, {dtype = R:dtype()}), 12))
      for _, upper in ipairs {false, true} do
        local want = ck.cholesky(G, {upper = upper})
        local got = ck.cholesky(G:cuda(), {upper = upper}):host()
        local e = ck.max(ck.abs(ck.sub(got, want)):contiguous():reshape(-1), 1):item()
        local bound = 1e3 * 12 * EPS[(dt == "c64" or dt == "f32") and "f32" or "f64"] * ck.max(ck.abs(want):contiguous():reshape(-1), 1):item()
        assert(e <= bound, ("batched cholesky %s upper=%s: max |GPU - host| %.3g > %.3g"):format(dt, tostring(upper), e, bound))
      end
    end
    assert(pcall(ck.solve, S, ck.ones(2, 1, {dtype = "f64", device = "cuda"}), {check = false}))
    -- the one-kernel path (orders <= 32): entry 31 of 50 has a zero row 4 (never a pivot, it ends as row 5:
    -- U(5,5) is zero), entry 7 then a NaN, which is raised first, as the host's scan of A does
    for _, dt in ipairs {"f32", "f64"} do
      local keep = {}
      for b = 1, 50 do keep[b] = {}; for i = 1, 5 do keep[b][i] = {(b == 31 and i == 4) and 0 or 1} end end
      local A = ck.mul(H.rand({50, 5, 5}, dt, "host"), ck.array(keep, {dtype = dt}))
      local B = H.rand({50, 5, 3}, dt, "host")
      local okh, eh = pcall(ck.solve, A, B)
      ok, err = pcall(ck.solve, A:cuda(), B:cuda())
      assert(not ok and not okh and err:find("(matrix [31] of the batch)", 1, true), err)
      assert.same(eh:match("U%(%d+,%d+%)"), err:match("U%(%d+,%d+%)"))
      A[{7, 2, 3}] = 0 / 0
      ok, err = pcall(ck.solve, A:cuda(), B:cuda())
      assert(not ok and err:find("ck.solve: A has NaN or Inf entries", 1, true), err)
      assert(pcall(ck.solve, A:cuda(), B:cuda(), {check = false}))
    end
    -- the one-kernel Cholesky (orders <= 32, potrf_small): batches of 50 at orders 1, 5, 8, 17 and 32 in both
    -- triangles against the host's factor (LAPACK), then entry 31 not positive definite (its minor named as the
    -- host names it), then entry 7 with an Inf, raised first; the other triangle of a batch is read as nothing
    for _, dt in ipairs {"f32", "f64"} do
      for _, n in ipairs {1, 5, 8, 17, 32, 33, 47, 64} do -- (33 to 64: one block a matrix, block_potrf_kernel)
        local R = H.rand({50, n, n}, dt, "host")
        local G = ck.add(ck.matmul(R, R:transpose(2, 3)), ck.mul(ck.eye(n, {dtype = dt}), n))
        for _, upper in ipairs {false, true} do
          local want = ck.cholesky(G, {upper = upper})
          local Gd = G:cuda()
          -- garbage in the triangle potrf does not read: the result must not change
          local other = upper and ck.tril(ck.full({50, n, n}, 1e3, {dtype = dt, device = "cuda"}), -1)
                              or ck.triu(ck.full({50, n, n}, 1e3, {dtype = dt, device = "cuda"}), 1)
          local Gg = ck.add(upper and ck.triu(Gd) or ck.tril(Gd), other)
          local got = ck.cholesky(Gg, {upper = upper})
          got = got:host()
          local e = ck.max(ck.abs(ck.sub(got, want)):contiguous():reshape(-1), 1):item()
          local bound = 1e3 * n * EPS[dt] * ck.max(ck.abs(want):contiguous():reshape(-1), 1):item()
          assert(e <= bound, ("potrf_small %s n=%d upper=%s: max |GPU - host| %.3g > %.3g"):format(dt, n, tostring(upper), e, bound))
        end
      end
      for _, n in ipairs {6, 40} do
        local R = H.rand({50, n, n}, dt, "host")
        local G = ck.add(ck.matmul(R, R:transpose(2, 3)), ck.mul(ck.eye(n, {dtype = dt}), n))
        G[{31, 4, 4}] = -1
        local okh, eh = pcall(ck.cholesky, G)
        ok, err = pcall(ck.cholesky, G:cuda())
        assert(not ok and not okh and err:find("(matrix [31] of the batch)", 1, true), err)
        assert.same(eh:match("minor of order %d+"), err:match("minor of order %d+"))
        G[{7, 2, 3}] = 1 / 0
        ok, err = pcall(ck.cholesky, G:cuda())
        assert(not ok and err:find("ck.cholesky: A has NaN or Inf entries", 1, true), err)
        assert(pcall(ck.cholesky, G:cuda(), {check = false}))
      end
    end
  end))

  -- The one-kernel paths read A and B where they are when the batch steps by one stride (la_in), else from a copy:
  -- each view below against the host's answer for the same values (the host copies every operand: the oracle).
  -- Matrices are M = R + n I (R uniform in [0, 1)): diagonally dominant, cond(M) < 3, so two backward-stable solves
  -- agree to 1e3 n u; G = M M^T + n I for the Cholesky factor.
  it("solve, inv and cholesky on small batches read transposed, strided, sliced and broadcast views as the host does", gpu(function()
    for _, dt in ipairs {"f32", "f64"} do
      for _, n in ipairs {3, 8, dt == "f32" and 32 or 16, 40} do
        local tol = {rtol = 1e3 * n * EPS[dt], atol = 1e3 * n * EPS[dt]}
        local I = ck.eye(n, {dtype = dt})
        local M = ck.add(H.rand({8, 6, n, n}, dt, "host"), ck.mul(I, n))
        local m3 = M:reshape(48, n, n)
        local G = ck.add(ck.matmul(m3, m3:transpose(2, 3)), ck.mul(I, n)):reshape(8, 6, n, n)
        local J = H.rand({8, 6, n, 3}, dt, "host") -- columns past n of the wider rows
        local B = H.rand({4, 6, n, 5}, dt, "host")
        local Bd = B:cuda()
        local VIEWS = { -- each view of X (8 x 6 x n x n; J the extra columns on X's device)
          {"contiguous", function(X) return X:narrow(1, 1, 4) end},
          {"transposed", function(X) return X:narrow(1, 1, 4):transpose(3, 4) end},
          {"every other of the batch", function(X) return X:reshape(4, 2, 6, n, n):select(2, 2) end},
          {"the first columns of wider rows", function(X, J) return ck.cat({X, J}, 4):narrow(1, 1, 4):narrow(4, 1, n) end},
          {"batch dims permuted (copied)", function(X) return X:narrow(1, 1, 6):narrow(2, 1, 4):transpose(1, 2) end},
          {"one matrix broadcast", function(X) return X[{1, 1}] end},
        }
        for _, v in ipairs(VIEWS) do
          local what = ("%s n=%d %s"):format(dt, n, v[1])
          local Ad, Ah = v[2](M:cuda(), J:cuda()), v[2](M, J)
          close(ck.solve(Ad, Bd), ck.solve(Ah, B), tol, "solve " .. what)
          close(ck.solve(Ad, Bd:transpose(3, 4):contiguous():transpose(3, 4)), ck.solve(Ah, B), tol, "solve, B transposed, " .. what)
          close(ck.inv(Ad), ck.inv(Ah), tol, "inv " .. what)
          local Gd, Gh = v[2](G:cuda(), J:cuda()), v[2](G, J)
          for _, upper in ipairs {false, true} do
            close(ck.cholesky(Gd, {upper = upper}), ck.cholesky(Gh, {upper = upper}), {rtol = tol.rtol, atol = tol.atol * n}, "cholesky " .. what)
          end
        end
        -- mixed dtypes (A promoted: copied) and a 1-D right-hand side
        local other = dt == "f32" and "f64" or "f32"
        local Md = M:cuda()
        close(ck.solve(Md[{1, 1}]:to(other), Bd[{1, 1}]), ck.solve(M[{1, 1}]:to(other), B[{1, 1}]), {rtol = 1e3 * n * EPS.f32, atol = 1e3 * n * EPS.f32}, "solve mixed " .. dt)
        close(ck.solve(Md[{1, 1}], Bd[{1, 1, {}, 1}]), ck.solve(M[{1, 1}], B[{1, 1, {}, 1}]), tol, "solve 1-D b " .. dt)
      end
    end
  end))

  it("refine (f16, bf16, tf32): backward error no worse than 10x the f64 solve's", gpu(function()
    local n = 512
    local A = ck.add(H.rand({n, n}, "f64", "cuda"), ck.mul(ck.eye(n, {dtype = "f64", device = "cuda"}), n / 4))
    local b = H.rand({n, 1}, "f64", "cuda")
    local function berr(x) local r = ck.sub(ck.matmul(A, x), b); return ck.norm(r):item() / (ck.norm(A):item() * ck.norm(x):item()) end
    local base = berr(ck.solve(A, b))
    for _, p in ipairs {"f16", "bf16", "tf32"} do
      local x, iters = ck.solve(A, b, {refine = p})
      assert(math.type(iters) == "integer")
      assert(berr(x) <= 10 * base + 1e-15, p .. ": backward error " .. berr(x) .. " vs " .. base)
    end
  end))
end)
