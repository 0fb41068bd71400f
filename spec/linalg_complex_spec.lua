--- Complex linear algebra (c64, c128; lua/cukern/linalg.lua, src/linalg/): qr, svd and svdvals, eigh and eigvalsh,
-- lstsq, triangular_solve, and what linalg.lua builds on them (pinv, norm, cond, matrix_rank), on every device present:
-- the host (LAPACKE's c/z routines) always, a GPU (cuSOLVER's C/Z routines, cuBLAS's C/Z trsm) under H.gpu with every
-- reference computed on the host in c128. Fresh random inputs each run (the seed is printed on failure); awkward
-- shapes (1 x 1, tall, wide, square, batched), transposed and strided views, and before every call the allocator is
-- handed NaN-filled blocks of the sizes the call allocates (poison), so a result the library did not write shows.
--
-- Tolerances. u is the unit roundoff of the parts' precision: c64 2^-24, c128 2^-53. Every check is a ratio
--     ||residual||_F / (scale * n * u)      (n: the largest dim involved; scale: ||A||_F, times ||x||_F for a solve)
-- which a backward-stable algorithm keeps below a modest constant: Higham, Accuracy and Stability of Numerical
-- Algorithms (2nd ed.), Thm 8.5 (triangular substitution: (T + dT) x = b, |dT| <= gamma_n |T|), Thm 19.4 (Householder
-- QR: A + dA = Q R, ||dA|| <= gamma_mn ||A||, Q unitary to the same order), section 20.3 (least squares by QR); the
-- SVD and the Hermitian eigensolvers are backward stable with bounds of the same form (Demmel, Applied Numerical
-- Linear Algebra, 5.2 and 5.4). Complex arithmetic raises each flop's constant by at most 2 sqrt(2) (Higham
-- Lemma 3.5: a complex product is within sqrt(2) gamma_2 of the exact one). LAPACK's own test drivers accept ratios
-- up to 30 in units of eps = 2u. Hence, in units of u:
--     BOUND = 30 * 2 * 2 sqrt(2) ~= 170
-- (the ratios seen while this was written are below 2; a wrong result, e.g. a transpose where a conjugate transpose
-- belongs, gives ratios of order 1/u).
local H = require "spec.helpers"
local ck = H.ck

local U_OF = {c64 = 2.0 ^ -24, c128 = 2.0 ^ -53}
local PART = {c64 = "f32", c128 = "f64"}
local BOUND = 30 * 2 * 2 * math.sqrt(2)

local function h(x) return x:to("host"):to("c128") end
local function CH(x) return ck.conj(h(x)):transpose(-2, -1) end -- x^H, host c128
local function cfro(x) return math.sqrt(ck.sum(ck.abs(h(x)) ^ 2):item()) end
--- the matrices of a batch (any number of leading dims) as a list of 2-D host c128 arrays
local function entries(x)
  x = h(x)
  if x:ndim() == 2 then return {x} end
  local f = x:contiguous():reshape(-1, x:size(-2), x:size(-1))
  local l = {}
  for b = 1, f:size(1) do l[b] = f:select(1, b) end
  return l
end
--- the largest ratio over a batch: each entry's residual(A_b, ...) / denominator
local function worst(f, ...)
  local lists = {}
  for i, x in ipairs {...} do lists[i] = entries(x) end
  local r = 0
  for b = 1, #lists[1] do
    local args = {}
    for i = 1, #lists do args[i] = lists[i][b] end
    r = math.max(r, f(table.unpack(args)))
  end
  return r
end
local function eye(n) return ck.eye(n, {dtype = "c128"}) end
local function maxof(x) return (ck.max(x:to("host", "f64"):contiguous():reshape(-1), 1)):item() end
--- ||Q^H Q - I|| / (m u): unitary columns
local function unitary(Q, m, u) return cfro(ck.matmul(CH(Q), Q) - eye(Q:size(-1))) / (math.max(m, 1) * u) end
--- s as a row [1, k] (to scale columns)
local function row(s) return h(s):reshape(1, s:size(-1)) end

--- A complex random array: each part uniform in [-1, 1). how: "transposed" (a transposed view), "strided" (the middle
-- row of a [.., m, 3, n] array: rows 3n apart)
local function cx(shape, dt, dev, how)
  local r = PART[dt]
  local function make(s) return ck.complex(H.rand(s, r, dev), H.rand(s, r, dev)):to(dt) end
  local s = {table.unpack(shape)}
  if how == "transposed" then
    s[#s - 1], s[#s] = s[#s], s[#s - 1]
    return make(s):transpose(-2, -1)
  elseif how == "strided" then
    table.insert(s, #s, 3)
    return make(s):select(#s - 1, 2)
  end
  return make(s)
end

--- Poison: blocks of the given element counts, NaN in both parts, made and freed on dev (the caching allocator hands
-- them to the next allocations of those sizes), in the complex dtype and its real part's
local function poison(dev, dt, counts)
  for _, n in ipairs(counts) do
    if n > 0 then
      ck.empty({n}, {dtype = dt, device = dev}):fill({0 / 0, 0 / 0}):free()
      ck.empty({n}, {dtype = PART[dt], device = dev}):fill(0 / 0):free()
    end
  end
end
local function nbatch(shape) local b = 1; for i = 1, #shape - 2 do b = b * shape[i] end; return b end

--- strictly below the diagonal (or above) is exactly zero
local function zero_below(R) return (ck.max(ck.abs(ck.tril(h(R), -1)):reshape(-1), 1)):item() == 0 end

for _, dev in ipairs(H.devices()) do
  describe("complex linear algebra on " .. dev, function()
    local prev_default
    setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
    teardown(function() ck.default_device(prev_default) end)
    local g = dev == "cuda" and H.gpu or function(f) return f end

    for _, dt in ipairs {"c64", "c128"} do
      local u = U_OF[dt]
      local function fail(what, shape, r) return ("%s %s %s: ratio %.3g (seed %d)"):format(what, dt, table.concat(shape, "x"), r, H.seed) end

      it(dt .. ": qr, reduced and complete, tall/wide/square/batched/views: A = Q R, Q^H Q = I, R upper", g(function()
        for _, c in ipairs {{{1, 1}}, {{8, 5}}, {{5, 8}}, {{6, 6}}, {{2, 7, 3}}, {{2, 2, 4, 4}}, {{9, 4}, "transposed"}, {{6, 5}, "strided"}} do
          local A = cx(c[1], dt, dev, c[2])
          local m, n = A:size(-2), A:size(-1)
          for _, mode in ipairs {"reduced", "complete"} do
            poison(dev, dt, {nbatch(c[1]) * m * math.max(m, n), nbatch(c[1]) * m * n, nbatch(c[1]) * math.min(m, n)})
            local Q, R = ck.qr(A, {mode = mode})
            local qc = mode == "complete" and m or math.min(m, n)
            assert.are.equal(dt, Q:dtype()); assert.are.equal(dt, R:dtype())
            assert.are.same(qc, Q:size(-1)); assert.are.same(qc, R:size(-2))
            assert(zero_below(R), "R upper triangular")
            local rf = worst(function(a, q, r) return cfro(a - ck.matmul(q, r)) / (cfro(a) * math.max(m, n) * u) end, A, Q, R)
            local ro = worst(function(q) return unitary(q, m, u) end, Q)
            assert(rf < BOUND, fail("qr " .. mode .. " ||A - QR||", c[1], rf))
            assert(ro < BOUND, fail("qr " .. mode .. " ||Q^H Q - I||", c[1], ro))
          end
        end
      end))

      it(dt .. ": svd and svdvals: A = U diag(s) V^H, U and V unitary, s real, descending, >= 0", g(function()
        for _, c in ipairs {{{1, 1}}, {{9, 4}}, {{4, 9}}, {{6, 6}}, {{3, 5, 3}}, {{2, 3, 6}}, {{7, 5}, "transposed"}, {{5, 4}, "strided"}} do
          local A = cx(c[1], dt, dev, c[2])
          local m, n = A:size(-2), A:size(-1)
          local k = math.min(m, n)
          for _, full in ipairs {false, true} do
            local nb = nbatch(c[1])
            poison(dev, dt, {nb * m * n, nb * m * m, nb * n * n, nb * k * k, nb * k})
            local U, s, V = ck.svd(A, {full = full})
            assert.are.equal(PART[dt], s:dtype()); assert.are.equal(dt, U:dtype()); assert.are.equal(dt, V:dtype())
            assert.are.same(full and m or k, U:size(-1)); assert.are.same(full and n or k, V:size(-1)); assert.are.same(k, s:size(-1))
            local rf = worst(function(a, uu, ss, vv)
              local Us = ck.mul(uu:narrow(2, 1, k), row(ss))
              return cfro(a - ck.matmul(Us, CH(vv:narrow(2, 1, k)))) / (cfro(a) * math.max(m, n) * u)
            end, A, U, s:reshape(-1, 1, k), V)
            local ru, rv = worst(function(uu) return unitary(uu, m, u) end, U), worst(function(vv) return unitary(vv, n, u) end, V)
            assert(rf < BOUND, fail("svd ||A - U S V^H||", c[1], rf))
            assert(ru < BOUND and rv < BOUND, fail("svd unitary U, V", c[1], math.max(ru, rv)))
            for _, r in ipairs(s:to("host", "f64"):contiguous():reshape(-1, k):totable()) do
              for i = 1, k do assert(r[i] >= 0 and (i == 1 or r[i] <= r[i - 1]), "s descending and >= 0") end
            end
          end
          local sv = ck.svdvals(A)
          assert.are.equal(PART[dt], sv:dtype())
          local ok, msg = H.allclose(sv, select(2, ck.svd(A)), {rtol = 30 * k * u, atol = 30 * k * u * cfro(A)})
          assert(ok, "svdvals = svd's s: " .. tostring(msg))
        end
      end))

      it(dt .. ": eigh and eigvalsh of Hermitian A: A V = V diag(w), V^H V = I, w real ascending, one triangle read", g(function()
        for _, c in ipairs {{{1, 1}}, {{2, 2}}, {{7, 7}}, {{30, 30}}, {{2, 3, 5, 5}}, {{6, 6}, "strided"}} do
          local G = cx(c[1], dt, dev, c[2])
          local n = G:size(-1)
          local A = (G + ck.conj(G):transpose(-2, -1)):to(dt) -- Hermitian: a real diagonal
          poison(dev, dt, {nbatch(c[1]) * n * n, nbatch(c[1]) * n})
          local w, V = ck.eigh(A)
          assert.are.equal(PART[dt], w:dtype()); assert.are.equal(dt, V:dtype())
          local ww = w:reshape(-1, 1, n)
          local rr = worst(function(a, v, wv) return cfro(ck.matmul(a, v) - ck.mul(v, row(wv))) / (cfro(a) * n * u) end, A, V, ww)
          local ro = worst(function(v) return unitary(v, n, u) end, V)
          assert(rr < BOUND, fail("eigh ||A V - V diag(w)||", c[1], rr))
          assert(ro < BOUND, fail("eigh ||V^H V - I||", c[1], ro))
          for _, r in ipairs(w:to("host", "f64"):contiguous():reshape(-1, n):totable()) do
            for i = 2, n do assert(r[i] >= r[i - 1], "w ascending") end
          end
          -- garbage in the other triangle is not read: uplo "L" (default) and "U"
          local tol = {rtol = 30 * n * u, atol = 30 * n * u * cfro(A)}
          local junk = cx(c[1], dt, dev)
          local ok, msg = H.allclose(ck.eigvalsh(ck.triu(junk, 1) + ck.tril(A)), w, tol)
          assert(ok, "eigvalsh, lower triangle: " .. tostring(msg))
          ok, msg = H.allclose(ck.eigvalsh(ck.tril(junk, -1) + ck.triu(A), {uplo = "U"}), w, tol)
          assert(ok, "eigvalsh, upper triangle: " .. tostring(msg))
        end
      end))

      it(dt .. ": lstsq: normal equations A^H (A x - b) = 0 (tall), exact minimum norm (wide), = pinv(A) b", g(function()
        for _, c in ipairs {{{9, 4}}, {{4, 9}}, {{5, 5}}, {{1, 1}}, {{2, 8, 3}}, {{3, 7}, "transposed"}, {{8, 3}, "strided"}, {{7, 4}, "real B"}} do
          local A = cx(c[1], dt, dev, c[2] ~= "real B" and c[2] or nil)
          local m, n = A:size(-2), A:size(-1)
          local bs = {table.unpack(c[1])}
          bs[#bs - 1], bs[#bs] = m, 2
          local B = c[2] == "real B" and H.rand(bs, PART[dt], dev) or cx(bs, dt, dev)
          poison(dev, dt, {nbatch(c[1]) * m * n, nbatch(c[1]) * math.max(m, n) * 2, nbatch(c[1]) * math.min(m, n)})
          local X = ck.lstsq(A, B)
          assert.are.equal(dt, X:dtype()); assert.are.same(n, X:size(-2))
          -- a backward-stable x solves (A + dA) x = b + db with ||dA|| <= c n u ||A||, so
          -- ||A^H r|| <= c u (n ||A||^2 ||x|| + m ||A|| ||r||) to first order (r = A x - b)
          local en = worst(function(a, x, b)
            local r = ck.matmul(a, x) - b
            return cfro(ck.matmul(CH(a), r)) / (cfro(a) ^ 2 * cfro(x) * math.max(m, n) * u + cfro(a) * cfro(r) * m * u)
          end, A, X, B)
          assert(en < BOUND, fail("lstsq normal equations", c[1], en))
          if m <= n then -- consistent: a backward error
            local eb = worst(function(a, x, b) return cfro(ck.matmul(a, x) - b) / (cfro(a) * cfro(x) * n * u) end, A, X, B)
            assert(eb < BOUND, fail("lstsq backward error", c[1], eb))
          end
          -- the minimum-norm least-squares solution is unique: pinv(A) b, within cond(A) times the above
          local Xp = ck.matmul(h(ck.pinv(A)), h(B))
          local d = cfro(h(X) - Xp) / (cfro(Xp) * math.max(m, n) * u * maxof(ck.cond(A:to("host"):to("c128"))))
          assert(d < BOUND, fail("lstsq = pinv(A) b", c[1], d))
        end
        local A = cx({6, 3}, dt, dev)
        local x1 = ck.lstsq(A, cx({6}, dt, dev))
        assert.are.same({3}, x1:shape())
      end))

      it(dt .. ": triangular_solve, upper/lower, left/right, unit diagonal, batched, real B: backward error", g(function()
        for _, up in ipairs {false, true} do
          for _, left in ipairs {true, false} do
            for _, unit in ipairs {false, true} do
              for _, shape in ipairs {{9, 9}, {1, 1}, {3, 5, 5}} do
                local n = shape[#shape]
                local R = cx(shape, dt, dev)
                local I = ck.eye(n, {dtype = dt, device = dev})
                local A = (up and ck.triu(R) or ck.tril(R)) + I * 4 -- well conditioned
                local bs = {table.unpack(shape)}
                bs[#bs - 1], bs[#bs] = left and n or 3, left and 3 or n
                local B = unit and H.rand(bs, PART[dt], dev) or cx(bs, dt, dev) -- (a real B with unit: promoted)
                poison(dev, dt, {nbatch(shape) * n * n, nbatch(shape) * n * 3})
                local X = ck.triangular_solve(A, B, {upper = up, left = left, unit = unit})
                assert.are.equal(dt, X:dtype())
                local e = worst(function(a, x, b)
                  if unit then a = a - ck.diag(ck.diag(a)) + eye(n) end
                  local r = left and ck.matmul(a, x) - b or ck.matmul(x, a) - b
                  return cfro(r) / (cfro(a) * cfro(x) * n * u)
                end, A, X, B:to(dt))
                assert(e < BOUND, fail(("trsm up=%s left=%s unit=%s"):format(tostring(up), tostring(left), tostring(unit)), shape, e))
                -- trans = "C" solves A^H x = B (x A^H = B), "T" A^T x = B: residuals against those
                for _, tr in ipairs {"C", "T"} do
                  local Xt = ck.triangular_solve(A, B, {upper = up, left = left, unit = unit, trans = tr})
                  local et = worst(function(a, x, b)
                    if unit then a = a - ck.diag(ck.diag(a)) + eye(n) end
                    a = (tr == "C" and ck.conj(a) or a):transpose(-2, -1)
                    local r = left and ck.matmul(a, x) - b or ck.matmul(x, a) - b
                    return cfro(r) / (cfro(a) * cfro(x) * n * u)
                  end, A, Xt, B:to(dt))
                  assert(et < BOUND, fail(("trsm trans=%s up=%s left=%s unit=%s"):format(tr, tostring(up), tostring(left),
                    tostring(unit)), shape, et))
                end
              end
            end
          end
        end
        -- a singular triangle: an exact zero on the diagonal, as a complex number (both parts 0) is refused ...
        local T = ck.triu(cx({4, 4}, dt, dev))
        T[{3, 3}] = {0, 0}
        local ok, err = pcall(ck.triangular_solve, T, cx({4, 1}, dt, dev), {upper = true})
        assert(not ok and err:find("its diagonal entry (3,3) is exactly zero", 1, true), err)
        assert(err:find("linalg_complex_spec.lua", 1, true), "raised at the caller's line: " .. err)
        -- ... and a purely imaginary one is not zero
        T[{3, 3}] = {0, 1}
        assert(ck.triangular_solve(T, cx({4, 1}, dt, dev), {upper = true}):dtype() == dt)
      end))

      it(dt .. ": pinv, norm, cond, matrix_rank of complex A", g(function()
        local A = cx({6, 4}, dt, dev)
        local Ah = h(A)
        local t = Ah:totable()
        local fro2, one, inf = 0, 0, 0
        local function abs(z) return math.sqrt(z[1] ^ 2 + z[2] ^ 2) end
        for j = 1, 4 do local s = 0; for i = 1, 6 do s = s + abs(t[i][j]); fro2 = fro2 + abs(t[i][j]) ^ 2 end; one = math.max(one, s) end
        for i = 1, 6 do local s = 0; for j = 1, 4 do s = s + abs(t[i][j]) end; inf = math.max(inf, s) end
        local tol = 100 * u
        local function near(x, y) return math.abs(x - y) <= tol * math.abs(y) end
        assert.are.equal(PART[dt], ck.norm(A):dtype())
        assert(near(ck.norm(A):item(), math.sqrt(fro2)) and near(ck.norm(A, "fro"):item(), math.sqrt(fro2)), "fro")
        assert(near(ck.norm(A, 1):item(), one) and near(ck.norm(A, math.huge):item(), inf), "1, inf")
        local s = ck.svdvals(A):to("host", "f64"):totable()
        assert(near(ck.norm(A, 2):item(), s[1]) and near(ck.norm(A, "nuc"):item(), s[1] + s[2] + s[3] + s[4]), "2, nuc")
        assert(near(ck.norm(A:select(2, 1)):item(), math.sqrt((function() local q = 0; for i = 1, 6 do q = q + abs(t[i][1]) ^ 2 end; return q end)())), "vector 2-norm")
        assert(near(ck.cond(A):item(), s[1] / s[4]), "cond")
        assert.are.same(4, ck.matrix_rank(A):item())
        local Rk = ck.matmul(cx({7, 3}, dt, dev), cx({3, 6}, dt, dev)) -- rank 3
        assert.are.same(3, ck.matrix_rank(Rk):item())
        -- the Moore-Penrose conditions A P A = A and (A P)^H = A P
        local P = ck.pinv(Rk)
        assert.are.same({6, 7}, P:shape()); assert.are.equal(dt, P:dtype())
        local R, Ph = h(Rk), h(P)
        local c = 7 * u * cfro(R) * cfro(Ph)
        assert(cfro(ck.matmul(ck.matmul(R, Ph), R) - R) <= BOUND * c * cfro(R), "A P A = A")
        local AP = ck.matmul(R, Ph)
        assert(cfro(AP - ck.conj(AP):transpose(-2, -1)) <= BOUND * c, "(A P)^H = A P")
      end))
    end
  end)
end
