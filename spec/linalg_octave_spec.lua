--- Linear algebra against GNU Octave (issue 34): cukern saves the systems to a .mat file, Octave solves them with
-- its own LAPACK (`\`, det, chol, svd, eig, qr's R, pinv) and saves its answers; cukern's answers agree within
-- tolerances stated from the condition number: |x - x_oct| <= 100 n eps cond(A) |x_oct| (forward error of two
-- backward-stable solvers), values of det/svd/eig relative 100 n eps (well-conditioned inputs). Both devices.
local H = require "spec.helpers"
local ck = H.ck

local DIR = H.tmpdir()
local function P(name) return DIR .. "/" .. name end
local sh = H.sh
local OCTAVE = sh("command -v octave-cli") and "octave-cli" or (sh("command -v octave") and "octave" or nil)
local HAVE_MAT = ck.io_formats().mat

local function octave(body)
  local f = assert(io.open(P("script.m"), "w"))
  f:write(body)
  f:close()
  local ok, out = sh(("cd '%s' && %s --no-gui -q --norc script.m"):format(DIR, OCTAVE))
  assert(out:find("OCTAVE%-DONE"), "octave failed (seed " .. H.seed .. ", exit ok " .. tostring(ok) .. "):\n" .. out)
end

local EPS = 2.0 ^ -52
local function rel(a, b) -- max |a - b| / max |b|
  local d = ck.max(ck.abs(ck.sub(a:to("host", "f64"), b:to("host", "f64"))):contiguous():reshape(-1), 1):item()
  return d / math.max(ck.max(ck.abs(b:to("host", "f64")):contiguous():reshape(-1), 1):item(), 1e-300)
end

for _, dev in ipairs(H.devices()) do
  describe("linear algebra against GNU Octave on " .. dev, function()
    it("solve, lstsq, det, chol, svd, eig, qr, pinv of the same matrices agree", (dev == "cuda" and H.gpu or function(f) return f end)(function()
      if not OCTAVE then return pending("octave is not installed here (`make test` installs it from Debian)") end
      if not HAVE_MAT then return pending("this build has no .mat support (libmatio)") end
      local n = 12
      local A = H.rand({n, n}, "f64", dev)
      local B = H.rand({n, 3}, "f64", dev)
      local At = H.rand({n, n}, "f64", dev):t() -- a transposed view: saved as it lies
      local G = H.rand({n, n}, "f64", dev)
      local S = ck.add(ck.matmul(G, G:t()), ck.mul(ck.eye(n, {dtype = "f64", device = dev}), n)) -- SPD
      local T = H.rand({9, 5}, "f64", dev)  -- tall
      local W = H.rand({4, 9}, "f64", dev)  -- wide
      local bt, bw = H.rand({9, 2}, "f64", dev), H.rand({4, 2}, "f64", dev)
      ck.save(P("in.mat"), {A = A:to("host"), B = B:to("host"), At = At:to("host"), S = S:to("host"), T = T:to("host"),
        W = W:to("host"), bt = bt:to("host"), bw = bw:to("host")})
      octave([[
load('in.mat');
X = A \ B; Xt = At \ B; d = det(A); L = chol(S, 'lower'); s = svd(T); e = eig((S + S') / 2);
[~, R] = qr(T, 0); Pw = pinv(W); xt = T \ bt; xw = pinv(W) * bw; c = cond(A); eg = complex(eig(A));
save('-v7', 'out.mat', 'X', 'Xt', 'd', 'L', 's', 'e', 'R', 'Pw', 'xt', 'xw', 'c', 'eg');
disp('OCTAVE-DONE');
]])
      local o = ck.load(P("out.mat"))
      local c = o.c:item()
      local fw = 100 * n * EPS * c
      assert(rel(ck.solve(A, B), o.X) < fw, "solve")
      assert(rel(ck.solve(At, B), o.Xt) < 100 * n * EPS * ck.cond(At):item(), "solve, transposed A")
      assert(rel(ck.det(A), o.d) < fw, "det")
      assert(rel(ck.cholesky(S), o.L) < 100 * n * EPS * ck.cond(S):item(), "chol")
      assert(rel(ck.svdvals(T), o.s:reshape(-1)) < 100 * n * EPS, "svd")
      assert(rel(ck.eigvalsh(S), o.e:reshape(-1)) < 100 * n * EPS * ck.cond(S):item(), "eig")
      local _, R = ck.qr(T) -- R is unique up to the signs of its rows
      assert(rel(ck.abs(R), ck.abs(o.R)) < 100 * n * EPS * ck.cond(T):item(), "qr's R")
      assert(rel(ck.pinv(W), o.Pw) < 100 * n * EPS * ck.cond(W):item(), "pinv")
      assert(rel(ck.lstsq(T, bt), o.xt) < 100 * n * EPS * ck.cond(T):item() ^ 2, "lstsq, over-determined")
      assert(rel(ck.lstsq(W, bw), o.xw) < 100 * n * EPS * ck.cond(W):item(), "lstsq, minimum norm")
      -- eig of the general A: complex eigenvalues, the same set (orders may differ: nearest match)
      assert.are.equal("c128", o.eg:dtype())
      local mine, theirs = ck.eigvals(A):to("host"):flat(), o.eg:contiguous():reshape(-1):flat()
      assert.are.equal(#theirs, #mine)
      local scale = ck.norm(A:to("host")):item()
      for _, x in ipairs(theirs) do
        local best = math.huge
        for _, y in ipairs(mine) do best = math.min(best, math.abs(x[1] - y[1]) + math.abs(x[2] - y[2])) end
        assert(best < 1e3 * n * EPS * scale, ("eig: Octave's %g%+gi: nearest of ours %.3g away"):format(x[1], x[2], best))
      end
    end))

    it("complex (c128): svd, Hermitian eig, qr's R, lstsq, minimum norm, triangular solve agree", (dev == "cuda" and H.gpu or function(f) return f end)(function()
      if not OCTAVE then return pending("octave is not installed here (`make test` installs it from Debian)") end
      if not HAVE_MAT then return pending("this build has no .mat support (libmatio)") end
      local function cx(...) return ck.complex(H.rand({...}, "f64", dev), H.rand({...}, "f64", dev)) end
      local n = 10
      local G = cx(n, n)
      local S = ck.add(G, ck.conj(G):t()) -- Hermitian
      local T, W = cx(9, 5), cx(4, 9) -- tall, wide
      local bt, bw = cx(9, 2), cx(4, 2)
      local Ut = ck.add(ck.triu(cx(n, n)), ck.mul(ck.eye(n, {dtype = "c128", device = dev}), 4)) -- upper, well conditioned
      local bu = cx(n, 3)
      ck.save(P("cin.mat"), {S = S:to("host"), T = T:to("host"), W = W:to("host"), bt = bt:to("host"),
        bw = bw:to("host"), Ut = Ut:to("host"), bu = bu:to("host")})
      octave([[
load('cin.mat');
s = svd(T); e = eig((S + S') / 2); [~, R] = qr(T, 0); xt = T \ bt; xw = pinv(W) * bw; xu = Ut \ bu;
ct = cond(T); cw = cond(W); cu = cond(Ut); cs = cond(S);
save('-v7', 'cout.mat', 's', 'e', 'R', 'xt', 'xw', 'xu', 'ct', 'cw', 'cu', 'cs');
disp('OCTAVE-DONE');
]])
      local o = ck.load(P("cout.mat"))
      -- the same tolerances as above, with n the largest dim: values to 100 n eps (times cond(S) for eigenvalues
      -- near zero), solutions to 100 n eps cond (cond^2 for an over-determined least-squares problem)
      local function crel(a, b) -- max |a - b| / max |b| over complex entries
        local d = ck.max(ck.abs(ck.sub(a:to("host"):to("c128"), b:to("host"):to("c128"))):contiguous():reshape(-1), 1):item()
        return d / math.max(ck.max(ck.abs(b:to("host"):to("c128")):contiguous():reshape(-1), 1):item(), 1e-300)
      end
      assert(rel(ck.svdvals(T), o.s:reshape(-1)) < 100 * n * EPS, "svd")
      assert(rel(ck.eigvalsh(S), o.e:reshape(-1)) < 100 * n * EPS * o.cs:item(), "Hermitian eig")
      local _, R = ck.qr(T) -- R is unique up to a unit complex factor per row: compare moduli
      assert(rel(ck.abs(R), ck.abs(o.R)) < 100 * n * EPS * o.ct:item(), "qr's |R|")
      assert(crel(ck.lstsq(T, bt), o.xt) < 100 * n * EPS * o.ct:item() ^ 2, "lstsq, over-determined")
      assert(crel(ck.lstsq(W, bw), o.xw) < 100 * n * EPS * o.cw:item(), "lstsq, minimum norm")
      assert(crel(ck.triangular_solve(Ut, bu, {upper = true}), o.xu) < 100 * n * EPS * o.cu:item(), "triangular solve")
    end))
  end)
end
