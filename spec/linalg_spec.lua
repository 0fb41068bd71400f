--- Linear algebra (issue 34; lua/cukern/linalg.lua, src/linalg/): checked by residuals that a wrong result cannot
-- meet, on every device present (the host always: LAPACKE), with fresh random inputs each run.
--   backward error  ||A x - b|| / (||A|| ||x|| n eps) < BOUND          (solve, cholesky_solve, triangular_solve)
--   factorisations   ||A - F|| / (||A|| n eps) < BOUND, ||Q^T Q - I|| / (n eps) < BOUND, triangles exact zeros
--   det              against prod(diag U) times the sign of perm, computed here from lu's results
-- BOUND = 30 is LAPACK's own test threshold for these ratios (its TESTING/ drivers); eps is the dtype's machine
-- epsilon. The GPU backend is also compared with the host (spec/linalg_gpu_spec.lua).
local H = require "spec.helpers"
local ck = H.ck

local BOUND = 30
local EPS = {f32 = 2.0 ^ -23, f64 = 2.0 ^ -52}

local function host64(a) return a:to("host", "f64") end
--- the Frobenius norm of each matrix, largest over the batch (a Lua number)
local function fro(a)
  local n = ck.norm(host64(a), "fro", {-2, -1})
  return n:ndim() == 0 and n:item() or (ck.max(n:contiguous():reshape(-1), 1)):item()
end
local function mm(a, b) -- f64 products on the host, any batch
  a, b = host64(a), host64(b)
  if a:ndim() <= 3 and b:ndim() <= 3 then return ck.matmul(a, b) end
  local sa = a:shape()
  local r = ck.matmul(a:contiguous():reshape(-1, sa[#sa - 1], sa[#sa]), b:contiguous():reshape(-1, b:size(-2), b:size(-1)))
  sa[#sa] = b:size(-1)
  return r:reshape(table.unpack(sa))
end
local function T(a) return a:transpose(-2, -1) end
local function eye_like(n, dt) return ck.eye(n, {dtype = dt}) end

--- ||Q^T Q - I|| / (m eps): orthonormal columns
local function orth(Q, m, dt) return fro(ck.sub(mm(T(Q), Q), eye_like(Q:size(-1), "f64"))) / (m * EPS[dt]) end
--- ||F - A|| / (||A|| m eps): a factorisation F of A
local function fact(F, A, m, dt) return fro(ck.sub(F, host64(A))) / (fro(A) * m * EPS[dt]) end

local function randm(shape, dt, dev, how)
  local a = H.rand(shape, dt, dev)
  if how == "transposed" then -- the same values seen through a transposed view
    local s = {table.unpack(shape)}
    s[#s - 1], s[#s] = s[#s], s[#s - 1]
    a = H.rand(s, dt, dev):transpose(-2, -1)
  elseif how == "strided" then -- every other column of a wider array
    local s = {table.unpack(shape)}
    s[#s] = 2 * s[#s]
    a = H.rand(s, dt, dev):slice(#s == 2 and {{}, {1, -1}} or {{}, {}, {1, -1}})
    local idx = {}
    for i = 1, shape[#shape] do idx[i] = 2 * i - 1 end
    a = ck.stack((function() local l = {}; for i, j in ipairs(idx) do l[i] = a:select(-1, j) end; return l end)(), #shape)
  end
  return a
end

--- ratio ||A x - b|| / (||A|| ||x|| n eps)
local function backward(A, x, b, dt)
  local n = A:size(-1)
  local r = ck.sub(mm(A, x), host64(b))
  return fro(r) / ((fro(A) * fro(x) + 1e-300) * math.max(n, 1) * EPS[dt])
end

local CASES = {
  {{1, 1}}, {{2, 2}}, {{7, 7}}, {{33, 33}}, {{64, 64}, "transposed"}, {{3, 5, 5}}, {{2, 3, 4, 4}}, {{6, 6}, "strided"},
}

for _, dev in ipairs(H.devices()) do
  describe("linear algebra on " .. dev, function()
    -- the oracle's arrays (eye_like, host64 ...) are made on the host, also where the default device is a GPU
    local prev_default
    setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
    teardown(function() ck.default_device(prev_default) end)
    local g = dev == "cuda" and H.gpu or function(f) return f end

    for _, dt in ipairs {"f32", "f64"} do
      it(dt .. ": solve, inv, det and slogdet on square, batched, transposed and strided A", g(function()
        for _, c in ipairs(CASES) do
          local A = randm(c[1], dt, dev, c[2])
          local n = A:size(-1)
          local bs = {table.unpack(c[1])}
          bs[#bs] = 3
          local B = H.rand(bs, dt, dev)
          local X = ck.solve(A, B)
          assert(backward(A, X, B, dt) < BOUND, ("solve %s %s: backward error %.3g"):format(dt, table.concat(c[1], "x"), backward(A, X, B, dt)))
          local Ai = ck.inv(A)
          local e = fro(ck.sub(mm(A, Ai), eye_like(n, "f64"))) / (n * EPS[dt] * fro(A) * fro(Ai))
          assert(e < BOUND, ("inv %s: ||A inv(A) - I|| ratio %.3g"):format(dt, e))
          -- det against the LU this file reads: prod(diag U) * sign(perm)
          local L, U, p = ck.lu(A)
          local d = ck.det(A)
          local s, la = ck.slogdet(A)
          local Uf = host64(U):contiguous():reshape(-1, n, n):totable()
          local pf = p:to("host"):contiguous():reshape(-1, n):totable()
          local df = host64(d):contiguous():reshape(-1):totable()
          local sf, lf = host64(s):contiguous():reshape(-1):totable(), host64(la):contiguous():reshape(-1):totable()
          for b = 1, #Uf do
            local prod, inv = 1, 0
            for i = 1, n do prod = prod * Uf[b][i][i] end
            for i = 1, n do for j = i + 1, n do if pf[b][i] > pf[b][j] then inv = inv + 1 end end end
            local ref = prod * (inv % 2 == 0 and 1 or -1)
            assert(math.abs(df[b] - ref) <= 1e-4 * math.abs(ref) + 1e-300, ("det %s: %g vs %g"):format(dt, df[b], ref))
            assert(sf[b] == (ref > 0 and 1 or -1), "slogdet sign")
            assert(math.abs(lf[b] - math.log(math.abs(ref))) <= 1e-4 * math.max(1, math.abs(lf[b])), "slogdet log")
          end
          -- a 1-D right-hand side gives a 1-D x
          if #c[1] == 2 then
            local b1 = H.rand({n}, dt, dev)
            local x1 = ck.solve(A, b1)
            assert.same({n}, x1:shape())
            assert(backward(A, x1:reshape(n, 1), b1:reshape(n, 1), dt) < BOUND)
          end
        end
      end))

      it(dt .. ": lu gives L unit lower, |L| <= 1, U upper and A[perm, :] = L U (square and rectangular); packed form", g(function()
        for _, shape in ipairs {{1, 1}, {6, 6}, {7, 4}, {4, 7}, {3, 5, 5}} do
          local A = H.rand(shape, dt, dev)
          local L, U, p = ck.lu(A)
          local m, n = shape[#shape - 1], shape[#shape]
          local k = math.min(m, n)
          assert.same(m, L:size(-2)); assert.same(k, L:size(-1)); assert.same(k, U:size(-2)); assert.same(n, U:size(-1))
          assert(ck.equal(L, ck.tril(L)) and ck.equal(U, ck.triu(U)), "triangles")
          assert(ck.equal(ck.diag(L:to("host"):reshape(-1, m, k):select(1, 1)), ck.ones(k, {dtype = dt})), "unit diagonal")
          assert((ck.max(ck.abs(L):to("host"):contiguous():reshape(-1), 1)):item() <= 1, "partial pivoting: |L| <= 1")
          -- P A from perm, row by row
          local pf = p:to("host"):contiguous():reshape(-1, m):totable()
          local A3 = host64(A):contiguous():reshape(-1, m, n)
          local PA = ck.empty(A3:shape(), {dtype = "f64"})
          for b = 1, #pf do for i = 1, m do PA:select(1, b):select(1, i):copy_(A3:select(1, b):select(1, pf[b][i])) end end
          local LU = mm(L, U):contiguous():reshape(-1, m, n)
          local e = fro(ck.sub(PA, LU)) / (fro(A3) * math.max(m, n) * EPS[dt])
          assert(e < BOUND, ("lu %s %s: ||PA - LU|| ratio %.3g"):format(dt, table.concat(shape, "x"), e))
          local LUp, piv = ck.lu(A, {packed = true})
          assert(ck.allclose(ck.triu(LUp):narrow(-2, 1, k), U, 0, 0), "packed U")
          assert.same("i32", piv:dtype())
          assert.same(k, piv:size(-1))
        end
      end))

      it(dt .. ": cholesky (lower and upper), cholesky_solve; not positive definite names the minor", g(function()
        for _, shape in ipairs {{1, 1}, {5, 5}, {40, 40}, {3, 6, 6}} do
          local G = H.rand(shape, dt, dev)
          local n = shape[#shape]
          local A = ck.add(mm(G, T(G)), ck.mul(eye_like(n, "f64"), n)):to(dev, dt)
          local Lc = ck.cholesky(A)
          assert(ck.equal(Lc, ck.tril(Lc)))
          local e = fact(mm(Lc, T(Lc)), A, n, dt)
          assert(e < BOUND, ("cholesky %s: ratio %.3g"):format(dt, e))
          local Uc = ck.cholesky(A, {upper = true})
          assert(ck.equal(Uc, ck.triu(Uc)))
          assert(fact(mm(T(Uc), Uc), A, n, dt) < BOUND)
          local bs = {table.unpack(shape)}; bs[#bs] = 2
          local B = H.rand(bs, dt, dev)
          assert(backward(A, ck.cholesky_solve(Lc, B), B, dt) < BOUND)
          assert(backward(A, ck.cholesky_solve(Uc, B, {upper = true}), B, dt) < BOUND)
        end
        local D = ck.array({{1, 0, 0, 0}, {0, 2, 0, 0}, {0, 0, -1, 0}, {0, 0, 0, 3}}, {dtype = dt}):to(dev)
        local ok, err = pcall(ck.cholesky, D)
        assert(not ok and err:find("ck.cholesky: the matrix is not positive definite: its leading minor of order 3", 1, true), err)
        assert(err:find("linalg_spec.lua", 1, true), "raised at the caller's line: " .. err)
      end))

      it(dt .. ": triangular_solve, upper/lower, left/right, unit diagonal", g(function()
        for _, up in ipairs {false, true} do
          for _, left in ipairs {true, false} do
            for _, unit in ipairs {false, true} do
              local n = 9
              local R = H.rand({n, n}, dt, dev)
              local A = up and ck.triu(R) or ck.tril(R)
              A = ck.add(A, ck.mul(ck.eye(n, {dtype = dt, device = dev}), 4)) -- well conditioned
              local B = H.rand(left and {n, 3} or {3, n}, dt, dev)
              local X = ck.triangular_solve(A, B, {upper = up, left = left, unit = unit})
              local Ae = unit and ck.add(ck.sub(A, ck.diag(ck.diag(A))), ck.eye(n, {dtype = dt, device = dev})) or A
              local r = left and ck.sub(mm(Ae, X), host64(B)) or ck.sub(mm(X, Ae), host64(B))
              local e = fro(r) / (fro(Ae) * fro(X) * n * EPS[dt])
              assert(e < BOUND, ("trsm up=%s left=%s unit=%s: %.3g"):format(tostring(up), tostring(left), tostring(unit), e))
              -- trans = "T" (and 1, "C": real A): A^T x = B, or x A^T = B; checked by the residual against A^T
              local At = Ae:t():contiguous()
              for _, tr in ipairs {"T", 1, "C"} do
                local Xt = ck.triangular_solve(A, B, {upper = up, left = left, unit = unit, trans = tr})
                local rt = left and ck.sub(mm(At, Xt), host64(B)) or ck.sub(mm(Xt, At), host64(B))
                local et = fro(rt) / (fro(At) * fro(Xt) * n * EPS[dt])
                assert(et < BOUND, ("trsm trans=%s up=%s left=%s unit=%s: %.3g"):format(tr, tostring(up), tostring(left),
                  tostring(unit), et))
              end
            end
          end
        end
        local ok, err = pcall(ck.triangular_solve, ck.eye(3, {dtype = dt, device = dev}), H.rand({3, 2}, dt, dev), {trans = "X"})
        assert(not ok and err:find("ck.triangular_solve", 1, true) and err:find('"N", "T" or "C"', 1, true), err)
      end))

      it(dt .. ": qr, reduced and complete, tall and wide: Q^T Q = I, A = Q R, R upper", g(function()
        for _, shape in ipairs {{1, 1}, {8, 5}, {5, 8}, {6, 6}, {2, 7, 3}} do
          local A = H.rand(shape, dt, dev)
          local m, n = shape[#shape - 1], shape[#shape]
          for _, mode in ipairs {"reduced", "complete"} do
            local Q, R = ck.qr(A, {mode = mode})
            local qc = mode == "complete" and m or math.min(m, n)
            assert.same(qc, Q:size(-1)); assert.same(qc, R:size(-2))
            assert(ck.equal(R, ck.triu(R)), "R upper")
            local eo, ef = orth(Q, m, dt), fact(mm(Q, R), A, m, dt)
            assert(eo < BOUND and ef < BOUND, ("qr %s %s %s: orth %.3g, fact %.3g"):format(dt, mode, table.concat(shape, "x"), eo, ef))
          end
        end
      end))

      it(dt .. ": svd and svdvals (tall, wide, full, batched): A = U diag(s) V^T, orthonormal U and V, s descending", g(function()
        for _, shape in ipairs {{1, 1}, {9, 4}, {4, 9}, {6, 6}, {3, 5, 3}} do
          local A = H.rand(shape, dt, dev)
          local m, n = shape[#shape - 1], shape[#shape]
          local k = math.min(m, n)
          for _, full in ipairs {false, true} do
            local U, s, V = ck.svd(A, {full = full})
            assert.same(full and m or k, U:size(-1)); assert.same(full and n or k, V:size(-1)); assert.same(k, s:size(-1))
            local Uk, Vk = U:narrow(-1, 1, k), V:narrow(-1, 1, k)
            local sh = s:shape(); table.insert(sh, #sh, 1)
            local US = ck.mul(host64(Uk), host64(s):contiguous():reshape(table.unpack(sh)))
            local ef, eu, ev = fact(mm(US, T(Vk)), A, math.max(m, n), dt), orth(U, m, dt), orth(V, n, dt)
            assert(ef < BOUND and eu < BOUND and ev < BOUND, ("svd %s %s: %.3g %.3g %.3g"):format(dt, table.concat(shape, "x"), ef, eu, ev))
            local sf = host64(s):contiguous():reshape(-1, k):totable()
            for _, row in ipairs(sf) do for i = 1, k do assert(row[i] >= 0 and (i == 1 or row[i] <= row[i - 1]), "descending") end end
          end
          assert(H.allclose(ck.svdvals(A), select(2, ck.svd(A)), {rtol = 1e3 * EPS[dt], atol = 1e3 * EPS[dt]}))
        end
      end))

      it(dt .. ": eigh: A V = V diag(w), V^T V = I, w ascending, only the named triangle read", g(function()
        for _, shape in ipairs {{1, 1}, {7, 7}, {30, 30}, {2, 3, 5, 5}} do
          local G = H.rand(shape, dt, dev)
          local n = shape[#shape]
          local A = ck.add(G, T(G))
          local w, V = ck.eigh(A)
          local sh = w:shape(); table.insert(sh, #sh, 1)
          local VL = ck.mul(host64(V), host64(w):contiguous():reshape(table.unpack(sh)))
          local er = fro(ck.sub(mm(A, V), VL)) / (fro(A) * n * EPS[dt])
          local eo = orth(V, n, dt)
          assert(er < BOUND and eo < BOUND, ("eigh %s: %.3g %.3g"):format(dt, er, eo))
          local wf = host64(w):contiguous():reshape(-1, n):totable()
          for _, row in ipairs(wf) do for i = 2, n do assert(row[i] >= row[i - 1], "ascending") end end
          -- garbage in the upper triangle does not matter with the default uplo = "L"
          local Ag = ck.add(ck.tril(A), ck.triu(H.rand(shape, dt, dev), 1))
          assert(H.allclose(ck.eigvalsh(Ag), w, {rtol = 1e3 * EPS[dt], atol = 1e3 * EPS[dt] * fro(A)}))
          assert(H.allclose(ck.eigvalsh(ck.add(ck.triu(A), ck.tril(H.rand(shape, dt, dev), -1)), {uplo = "U"}), w,
            {rtol = 1e3 * EPS[dt], atol = 1e3 * EPS[dt] * fro(A)}))
        end
      end))

      it(dt .. ": solve and inv of complex A (c64/c128): backward error, A inv(A) = I, batches, real B", g(function()
        local cdt = dt == "f32" and "c64" or "c128"
        local function cx(shape) return ck.complex(H.rand(shape, dt, dev), H.rand(shape, dt, dev)) end
        local function cfro(x) return math.sqrt(ck.sum(ck.abs(x:to("host"):to("c128")) ^ 2):item()) end
        local function cmm(a, b) -- c128 products on the host, batches entry by entry
          a, b = a:to("host"):to("c128"), b:to("host"):to("c128")
          if a:ndim() == 2 then return ck.matmul(a, b) end
          local l = {}
          for i = 1, a:size(1) do l[i] = ck.matmul(a:select(1, i):contiguous(), b:select(1, i):contiguous()) end
          return ck.stack(l)
        end
        -- {2, 4, 4} and {2, 96, 96}: cuBLAS's batched getrf/getrs on a GPU (orders to 128); {70, 70}: cuSOLVER's; a
        -- transposed view; a real B
        for _, c in ipairs {{{1, 1}}, {{7, 7}}, {{2, 4, 4}}, {{2, 96, 96}}, {{70, 70}}, {{9, 9}, "t"}, {{5, 5}, "real B"}} do
          local A = cx(c[1])
          if c[2] == "t" then A = A:transpose(-2, -1) end
          local n = A:size(-1)
          local bs = {table.unpack(c[1])}
          bs[#bs] = 3
          local B = c[2] == "real B" and H.rand(bs, dt, dev) or cx(bs)
          local X = ck.solve(A, B)
          assert.are.equal(cdt, X:dtype())
          local r = cfro(cmm(A, X) - B:to("host"):to("c128")) / ((cfro(A) * cfro(X) + 1e-300) * n * EPS[dt])
          assert(r < BOUND, ("solve %s %s%s: backward error ratio %.3g"):format(cdt, table.concat(c[1], "x"), c[2] or "", r))
          local Ai = ck.inv(A)
          local I = ck.eye(n, {dtype = "c128"})
          local e = cfro(cmm(A, Ai) - (A:ndim() == 3 and I:expand(A:size(1), n, n) or I)) / (n * EPS[dt] * cfro(A) * cfro(Ai))
          assert(e < BOUND, ("inv %s: ||A inv(A) - I|| ratio %.3g"):format(cdt, e))
        end
        local S = ck.complex(ck.ones(2, 2, {dtype = dt, device = dev}), ck.ones(2, 2, {dtype = dt, device = dev}))
        local ok, err = pcall(ck.solve, S, ck.ones(2, {dtype = cdt, device = dev}))
        assert(not ok and err:find("U(2,2) is exactly zero", 1, true), err)
      end))

      it(dt .. ": cholesky and cholesky_solve of Hermitian positive definite complex A (A = L L^H)", g(function()
        local cdt = dt == "f32" and "c64" or "c128"
        local function h(x) return x:to("host"):to("c128") end
        local function cfro(x) return math.sqrt(ck.sum(ck.abs(h(x)) ^ 2):item()) end
        local function H_(x) return ck.conj(h(x)):transpose(-2, -1) end
        local function cmm(a, b) -- c128 products on the host, batches entry by entry
          if a:ndim() == 2 then return ck.matmul(a, b) end
          local l = {}
          for i = 1, a:size(1) do l[i] = ck.matmul(a:select(1, i):contiguous(), b:select(1, i):contiguous()) end
          return ck.stack(l)
        end
        for _, shape in ipairs {{1, 1}, {6, 6}, {2, 4, 4}, {40, 40}} do
          local n = shape[#shape]
          local G = ck.complex(H.rand(shape, dt, "host"), H.rand(shape, dt, "host")):to("c128")
          local I = ck.eye(n, {dtype = "c128"})
          local A = (cmm(G, H_(G)) + (#shape == 3 and I:expand(shape[1], n, n) or I) * n):to(cdt):to(dev)
          local L = ck.cholesky(A)
          assert.are.equal(cdt, L:dtype())
          local r = cfro(cmm(h(L), H_(L)) - h(A)) / (cfro(A) * n * EPS[dt])
          assert(r < BOUND, ("cholesky %s %s: ||A - L L^H|| ratio %.3g"):format(cdt, table.concat(shape, "x"), r))
          local U = ck.cholesky(A, {upper = true})
          r = cfro(cmm(H_(U), h(U)) - h(A)) / (cfro(A) * n * EPS[dt])
          assert(r < BOUND, ("cholesky upper %s: ||A - U^H U|| ratio %.3g"):format(cdt, r))
          local bs = {table.unpack(shape)}
          bs[#bs] = 2
          local B = ck.complex(H.rand(bs, dt, dev), H.rand(bs, dt, dev))
          local X = ck.cholesky_solve(L, B)
          r = cfro(cmm(h(A), h(X)) - h(B)) / ((cfro(A) * cfro(X) + 1e-300) * n * EPS[dt])
          assert(r < BOUND, ("cholesky_solve %s: backward error ratio %.3g"):format(cdt, r))
        end
      end))

      it(dt .. ": lu, det and slogdet of complex A: A[perm] = L U, det against Gaussian elimination in Lua", g(function()
        local cdt = dt == "f32" and "c64" or "c128"
        local function cmul(a, b) return {a[1] * b[1] - a[2] * b[2], a[1] * b[2] + a[2] * b[1]} end
        local function cdiv(a, b) local q = b[1] ^ 2 + b[2] ^ 2; return {(a[1] * b[1] + a[2] * b[2]) / q, (a[2] * b[1] - a[1] * b[2]) / q} end
        local function lua_det(M) -- M: n x n table of {re, im}; partial pivoting on |.|
          local n, d = #M, {1, 0}
          local m = {}
          for i = 1, n do m[i] = {}; for j = 1, n do m[i][j] = {M[i][j][1], M[i][j][2]} end end
          for c = 1, n do
            local p, best = c, -1
            for r = c, n do local a = m[r][c][1] ^ 2 + m[r][c][2] ^ 2; if a > best then p, best = r, a end end
            if p ~= c then m[p], m[c] = m[c], m[p]; d = {-d[1], -d[2]} end
            d = cmul(d, m[c][c])
            for r = c + 1, n do
              local f = cdiv(m[r][c], m[c][c])
              for j = c, n do local t = cmul(f, m[c][j]); m[r][j] = {m[r][j][1] - t[1], m[r][j][2] - t[2]} end
            end
          end
          return d
        end
        for _, shape in ipairs {{1, 1}, {5, 5}, {3, 4, 4}} do
          local A = ck.complex(H.rand(shape, dt, dev), H.rand(shape, dt, dev))
          local n = shape[#shape]
          local d = ck.det(A)
          local s, la = ck.slogdet(A)
          assert.are.equal(cdt, d:dtype()); assert.are.equal(cdt, s:dtype()); assert.are.equal(dt, la:dtype())
          local mats = A:ndim() == 2 and {A} or {A:select(1, 1), A:select(1, 2), A:select(1, 3)}
          local df = d:to("host"):to("c128"):contiguous():reshape(-1):flat()
          local sf = s:to("host"):to("c128"):contiguous():reshape(-1):flat()
          local lf = la:to("host"):to("f64"):contiguous():reshape(-1):flat()
          for b, M in ipairs(mats) do
            local ref = lua_det(M:to("host"):to("c128"):totable())
            local mag = math.sqrt(ref[1] ^ 2 + ref[2] ^ 2)
            local tol = 1e3 * n * EPS[dt] * math.max(mag, 1)
            assert(math.abs(df[b][1] - ref[1]) <= tol and math.abs(df[b][2] - ref[2]) <= tol,
              ("det %s %s [%d]: %g%+gi, expected %g%+gi"):format(cdt, table.concat(shape, "x"), b, df[b][1], df[b][2], ref[1], ref[2]))
            assert(math.abs(lf[b] - math.log(mag)) <= 1e3 * n * EPS[dt], "slogdet log |det|")
            assert(math.abs(sf[b][1] - ref[1] / mag) <= 1e3 * n * EPS[dt] and math.abs(sf[b][2] - ref[2] / mag) <= 1e3 * n * EPS[dt], "slogdet sign")
          end
          -- lu: A[perm, :] = L U, L unit lower, U upper (2-D)
          if A:ndim() == 2 then
            local L, U, p = ck.lu(A)
            local Ah = A:to("host"):to("c128")
            local pf = p:to("host"):flat()
            local rows = {}
            for i = 1, n do rows[i] = Ah:select(1, pf[i]) end
            local PA = ck.stack(rows)
            local R = PA - ck.matmul(L:to("host"):to("c128"), U:to("host"):to("c128"))
            local r = math.sqrt(ck.sum(ck.abs(R) ^ 2):item()) / (math.sqrt(ck.sum(ck.abs(Ah) ^ 2):item()) * n * EPS[dt])
            assert(r < BOUND, ("lu %s: ||A[perm] - L U|| ratio %.3g"):format(cdt, r))
            local Lf, Uf = L:to("host"):to("c128"):totable(), U:to("host"):to("c128"):totable()
            for i = 1, n do for j = 1, n do
              if j > i then assert.are.same({0, 0}, Lf[i][j]) end
              if j == i then assert.are.same({1, 0}, Lf[i][j]) end
              if j < i then assert.are.same({0, 0}, Uf[i][j]) end
            end end
          end
        end
      end))

      it(dt .. ": eig (real and complex A): A V = V diag(w), unit columns, a triangle's diagonal, eigvals", g(function()
        local cdt = dt == "f32" and "c64" or "c128"
        local function entries(x, batched) -- a batch (dim 1) as a list of its entries
          if not batched then return {x} end
          local l = {}
          for b = 1, x:size(1) do l[b] = x:select(1, b) end
          return l
        end
        local function cfro(x) return math.sqrt(ck.sum(ck.abs(x:to("host"):to("c128")) ^ 2):item()) end
        for _, c in ipairs {{{1, 1}}, {{2, 2}}, {{7, 7}}, {{33, 33}, "transposed"}, {{3, 5, 5}}, {{6, 6}, "complex"}} do
          local A = c[2] == "complex" and ck.complex(H.rand(c[1], dt, dev), H.rand(c[1], dt, dev))
            or randm(c[1], dt, dev, c[2])
          local n = A:size(-1)
          local w, V = ck.eig(A)
          assert.are.equal(cdt, w:dtype()); assert.are.equal(cdt, V:dtype())
          assert.are.same(A:device(), w:device())
          local bt = A:ndim() == 3
          local As, Vs, ws = entries(A, bt), entries(V, bt), entries(w, bt)
          for b = 1, #As do
            local Ah, Vh = As[b]:to("host"):to("c128"), Vs[b]:to("host"):to("c128")
            local wh = ws[b]:to("host"):to("c128"):reshape(1, n)
            local r = cfro(ck.matmul(Ah, Vh) - ck.mul(Vh, wh)) / ((cfro(Ah) + 1e-300) * math.max(n, 1) * EPS[dt])
            assert(r < BOUND, ("eig %s %s: ||A V - V diag(w)|| ratio %.3g"):format(dt, table.concat(c[1], "x"), r))
            local norms = ck.sum(ck.abs(Vh) ^ 2, 1):flat()
            for j = 1, n do assert(math.abs(norms[j] - 1) < 1e3 * EPS[dt], "unit column " .. j) end
          end
          -- eigvals gives the same values (as a set: compared by nearest match)
          local wv = ck.eigvals(A):to("host"):to("c128"):contiguous():reshape(-1):flat()
          local we = w:to("host"):to("c128"):contiguous():reshape(-1):flat()
          local scale = cfro(A) + 1
          for _, x in ipairs(wv) do
            local best = math.huge
            for _, y in ipairs(we) do best = math.min(best, math.abs(x[1] - y[1]) + math.abs(x[2] - y[2])) end
            assert(best <= 1e3 * n * EPS[dt] * scale, ("eigvals %s: %g%+gi has no match in eig's w"):format(dt, x[1], x[2]))
          end
        end
        -- a triangular matrix's eigenvalues are its diagonal
        local U = ck.triu(H.rand({9, 9}, dt, dev))
        local d = ck.diag(U:to("host")):to("f64"):flat()
        local w = ck.eigvals(U):to("host"):to("c128"):flat()
        table.sort(d)
        table.sort(w, function(x, y) return x[1] < y[1] end)
        for i = 1, 9 do
          assert(math.abs(w[i][1] - d[i]) < 1e3 * EPS[dt] and math.abs(w[i][2]) < 1e3 * EPS[dt], "triangle's diagonal " .. i)
        end
      end))

      it(dt .. ": lstsq over- and under-determined: normal equations, minimum norm (= pinv(A) b)", g(function()
        for _, shape in ipairs {{9, 4}, {4, 9}, {5, 5}, {2, 8, 3}} do
          local A = H.rand(shape, dt, dev)
          local m, n = shape[#shape - 1], shape[#shape]
          local bs = {table.unpack(shape)}; bs[#bs] = 2
          local B = H.rand(bs, dt, dev)
          local X = ck.lstsq(A, B)
          assert.same(n, X:size(-2))
          local r = ck.sub(mm(A, X), host64(B))
          local en = fro(mm(T(A), r)) / (fro(A) ^ 2 * fro(X) * math.max(m, n) * EPS[dt] + fro(A) * fro(r) * m * EPS[dt])
          assert(en < BOUND, ("lstsq %s %s: normal equations %.3g"):format(dt, table.concat(shape, "x"), en))
          if m < n then assert(backward(A, X, B, dt) < BOUND, "under-determined: exact") end
          local Xp = mm(ck.pinv(A), B)
          assert(fro(ck.sub(host64(X), Xp)) <= 1e4 * EPS[dt] * fro(Xp), "the same as pinv(A) b")
        end
      end))

      it(dt .. ": norm, cond, matrix_rank, pinv", g(function()
        local A = H.rand({6, 4}, dt, dev)
        local t = host64(A):totable()
        local fro2, one, inf = 0, 0, 0
        for j = 1, 4 do local c = 0; for i = 1, 6 do c = c + math.abs(t[i][j]); fro2 = fro2 + t[i][j] ^ 2 end; one = math.max(one, c) end
        for i = 1, 6 do local r = 0; for j = 1, 4 do r = r + math.abs(t[i][j]) end; inf = math.max(inf, r) end
        local tol = 1e2 * EPS[dt]
        local function near(x, y) return math.abs(x - y) <= tol * math.abs(y) end
        assert(near(ck.norm(A):item(), math.sqrt(fro2)) and near(ck.norm(A, "fro"):item(), math.sqrt(fro2)))
        assert(near(ck.norm(A, 1):item(), one) and near(ck.norm(A, math.huge):item(), inf))
        local s = ck.svdvals(A):to("host", "f64"):totable()
        assert(near(ck.norm(A, 2):item(), s[1]) and near(ck.norm(A, "nuc"):item(), s[1] + s[2] + s[3] + s[4]))
        local v = H.rand({10}, dt, dev)
        local vt = host64(v):totable()
        local l1, l3 = 0, 0
        for _, x in ipairs(vt) do l1 = l1 + math.abs(x); l3 = l3 + math.abs(x) ^ 3 end
        assert(near(ck.norm(v, 1):item(), l1) and near(ck.norm(v, 3):item(), l3 ^ (1 / 3)))
        assert(near(ck.cond(A):item(), s[1] / s[4]))
        local D = ck.array({{1, 0}, {0, 1e-3}}, {dtype = dt}):to(dev)
        assert(near(ck.cond(D):item(), 1e3) and near(ck.cond(D, 1):item(), 1e3))
        local R = ck.matmul(H.rand({7, 3}, dt, dev), H.rand({3, 6}, dt, dev)) -- rank 3
        assert.same(3, ck.matrix_rank(R):item())
        assert.same(4, ck.matrix_rank(A):item())
        local P = ck.pinv(R)
        assert.same({6, 7}, P:shape())
        assert(fro(ck.sub(mm(mm(R, P), R), host64(R))) <= 1e3 * EPS[dt] * fro(R) * ck.cond(R:to("host", "f64"):narrow(2, 1, 3)):item())
      end))
    end

    it("singular A: solve and inv raise the failing pivot, det is 0, batch entries named; check = false skips the read", g(function()
      local S = ck.array({{1, 2}, {2, 4}}, {dtype = "f64"}):to(dev)
      local ok, err = pcall(ck.solve, S, ck.ones(2, {dtype = "f64", device = dev}))
      assert(not ok and err:find("ck.solve: the matrix is singular: U(2,2) is exactly zero", 1, true), err)
      assert(err:find("linalg_spec.lua", 1, true), err)
      ok, err = pcall(ck.inv, ck.stack({ck.eye(2, {dtype = "f64", device = dev}), S}))
      assert(not ok and err:find("ck.inv: the matrix is singular: U(2,2) is exactly zero in its LU factors (matrix [2] of the batch)", 1, true), err)
      assert.same(0, ck.det(S):item())
      local sg, la = ck.slogdet(S)
      assert(sg:item() == 0 and la:item() == -math.huge)
      assert(pcall(ck.solve, S, ck.ones(2, 1, {dtype = "f64", device = dev}), {check = false}))
    end))

    it("ill-conditioned A (Hilbert 10, cond ~1e13): solve stays backward stable", g(function()
      local n = 10
      local t = {}
      for i = 1, n do t[i] = {}; for j = 1, n do t[i][j] = 1 / (i + j - 1) end end
      local Hm = ck.array(t, {dtype = "f64"}):to(dev)
      local b = H.rand({n, 1}, "f64", dev)
      assert(backward(Hm, ck.solve(Hm, b), b, "f64") < BOUND)
      assert(ck.cond(Hm):item() > 1e12)
    end))

    it("NaN or Inf in A: an error on every device while check is on; check = false runs", g(function()
      local A = H.rand({3, 3}, "f64", dev)
      A[{2, 2}] = 0 / 0
      for _, f in ipairs {"solve", "det", "cholesky", "qr", "svd", "eigh", "lu"} do
        local ok, err = pcall(ck[f], A, f == "solve" and ck.ones(3, {dtype = "f64", device = dev}) or nil)
        assert(not ok and err:find("ck." .. f .. ": A has NaN or Inf entries", 1, true), f .. ": " .. tostring(err))
      end
      A[{2, 2}] = math.huge
      assert(not pcall(ck.det, A))
      assert(pcall(ck.det, A, {check = false}))
      A[{2, 2}] = -math.huge
      assert(not pcall(ck.solve, A, ck.ones(3, {dtype = "f64", device = dev})))
      -- finite entries whose sum overflows are finite: the check counts finite entries, it does not add them
      A[{2, 2}], A[{1, 1}], A[{3, 3}] = 1.7e308, 1.7e308, 1.7e308
      assert(pcall(ck.det, A))
    end))

    it("empty matrices: 0 x 0 solve, det 1, svd of 0 columns", g(function()
      local Z = ck.empty({0, 0}, {dtype = "f64", device = dev})
      assert.same({0, 2}, ck.solve(Z, ck.empty({0, 2}, {dtype = "f64", device = dev})):shape())
      assert.same(1, ck.det(Z):item())
      assert.same({3, 0}, ck.svdvals(ck.empty({3, 5, 0}, {dtype = "f64", device = dev})):shape())
    end))
  end)
end

describe("linear algebra: bad input", function()
  -- host arrays (the messages name host:0), also where the default device is a GPU
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  local A = ck.randn(3, 3, {device = "host"})
  local cases = {
    {function() ck.solve(ck.randn(3, 4), ck.randn(3)) end, "ck.solve: A is f32[3x4] host:0; it must be square"},
    {function() ck.solve(A, ck.randn(4)) end, "ck.solve: A is f32[3x3] host:0 and B is f32[4x1]"},
    {function() ck.det(ck.ones(3, 3, {dtype = "i32"})) end, "ck.det: A is i32[3x3] host:0; linear algebra takes f32 or f64"},
    {function() ck.inv(ck.randn(3)) end, "ck.inv: A is f32[3]; it needs a matrix"},
    {function() ck.qr(A, {mode = "economic"}) end, 'ck.qr: option mode must be "reduced" or "complete"'},
    {function() ck.svd(A, {ful = true}) end, "ck.svd: unknown option \"ful\""},
    {function() ck.solve(A, ck.randn(3), {refine = "f16"}) end, "ck.solve: refine is for ck.solve with f64 A and B"},
    {function() ck.eig(ck.ones(3, 3, {dtype = "i32"})) end, "ck.eig: A is i32[3x3] host:0; linear algebra takes f32 or f64, c64 or c128"},
    {function() ck.det(ck.ones(3, 4, {dtype = "c64"})) end, "ck.det: A is c64[3x4]; it must be square"},
    {function() ck.qr(ck.ones(3, 3, {dtype = "f16"})) end, "ck.qr: A is f16[3x3] host:0; linear algebra takes f32 or f64, c64 or c128 (convert"},
    {function() ck.lstsq(ck.ones(3, 2, {dtype = "c64"}), ck.ones(4, 1, {dtype = "c64"})) end, "ck.lstsq: A is c64[3x2] host:0 and B is c64[4x1]"},
    {function() ck.cholesky(ck.ones(3, 3, {dtype = "c64"})) end, "ck.cholesky: the matrix is not positive definite"},
    {function() ck.eig(ck.randn(3, 4)) end, "ck.eig: A is f32[3x4] host:0; it must be square"},
    {function() ck.eig(A, {vectors = false}) end, "ck.eig: unknown option \"vectors\""},
    {function() ck.norm(A, "frob") end, 'ck.norm: p must be a number, math.huge, "fro" or "nuc"'},
    {function() ck.lu(A, {variant = "nope"}) end, "ck.lu: unknown variant 'nope'"},
    {function() ck.solve(ck.randn(2, 3, 3), ck.randn(4, 3, 1)) end, "ck.solve: the batch dims of A"},
  }
  for i, c in ipairs(cases) do
    it("case " .. i .. ": " .. c[2], function()
      local ok, err = pcall(c[1])
      assert(not ok and err:find(c[2], 1, true), tostring(err))
      assert(err:find("linalg_spec.lua", 1, true), "at the caller's line: " .. err)
    end)
  end
end)
