--- cukern.linalg (issue 34): dense linear algebra — ck.solve (MATLAB's `\`), inv, det, slogdet, lu, cholesky,
-- cholesky_solve, triangular_solve, qr, lstsq, svd, svdvals, eigh, eig, eigvals, norm, cond, matrix_rank, pinv.
-- The factorisations run in the core (src/linalg/: LAPACKE on the host, cuSOLVER
-- and cuBLAS on a GPU, batched over leading dims); what is built from them (inv, pinv, norm, cond, matrix_rank,
-- svdvals, 1-D right-hand sides) is here, from array ops. Contract and MATLAB/NumPy names: docs/api.md "Linear
-- algebra". Results of the factorisations are column-major views (a:is_contiguous() is false); every op takes them.
local errors, args, options = require "cukern.errors", require "cukern.args", require "cukern.options"
local raise, call, where_of = errors.raise, errors.call, errors.where_of
local check_live, show = args.check_live, args.show
local core = require "cukern.core"

local L = {}
local type, fmt, huge, unpack = type, string.format, math.huge, table.unpack

local ck -- the module table (install)

local EPS = {f32 = 2.0 ^ -23, f64 = 2.0 ^ -52}
local PART_OF = args.COMPLEX_PART
local function eps_of(dt) return EPS[PART_OF[dt] or dt] end -- c64/c128: their parts' epsilon
--- |x|^2 elementwise, real for complex x too
local function abs2(x)
  if not PART_OF[x:dtype()] then return ck.mul(x, x) end
  local ax = ck.abs(x)
  return ck.mul(ax, ax)
end
--- the conjugate transpose of the last two dims (a view for real x)
local function ctrans(x) return (PART_OF[x:dtype()] and ck.conj(x) or x):transpose(-2, -1) end

-- option rules beyond options.RULES
local function is_bool(v) return type(v) == "boolean", "true or false" end
local RULES = {
  check = is_bool, upper = is_bool, left = is_bool, unit = is_bool, full = is_bool, packed = is_bool,
  refine = function(v) return v == "f16" or v == "bf16" or v == "tf32" or v == "f32", '"f16", "bf16", "tf32" or "f32"' end,
  mode = function(v) return v == "reduced" or v == "complete", '"reduced" or "complete"' end,
  uplo = function(v) return v == "L" or v == "U", '"L" or "U"' end,
  rtol = function(v) return type(v) == "number" and v >= 0, "a number >= 0" end,
  tol = function(v) return type(v) == "number" and v >= 0, "a number >= 0" end,
  trans = function(v) return v == "N" or v == "T" or v == "C" or v == 0 or v == 1 or v == 2, '"N", "T" or "C" (or 0, 1, 2)' end,
}

local function opts_of(where, opts, allowed)
  local problem = options.problem(where, opts, allowed, RULES)
  if problem then raise(where .. ": " .. problem) end
  return opts or {}
end

local function matrix(where, a, what)
  check_live(where, a, what or "A")
  if a:ndim() < 2 then
    raise(fmt("%s: %s is %s[%s]; it needs a matrix (2 dims, or more for a batch)", where, what or "A", a:dtype(),
      table.concat(a:shape(), "x")))
  end
  return a
end

--- b as a matrix: a 1-D b is a column (NumPy 2's rule: only a 1-D b is a vector), through a view.
local function rhs(where, b)
  check_live(where, b, "B")
  if b:ndim() == 1 then return b:expand(1, b:size(1)):t(), true end
  return b, false
end

local function run(where, fn, a, b, o, variant) return call(where, core.linalg, fn, a, b, o, variant) end

--- a x b for any batch (ck.matmul takes 2-D and 3-D operands)
local function bmm(a, b)
  if a:ndim() <= 3 and b:ndim() <= 3 then return ck.matmul(a, b) end
  local sa, sb = a:shape(), b:shape()
  local lead = {}
  for i = 1, #sa - 2 do lead[i] = sa[i] end
  local r = ck.matmul(a:contiguous():reshape(-1, sa[#sa - 1], sa[#sa]), b:contiguous():reshape(-1, sb[#sb - 1], sb[#sb]))
  lead[#lead + 1], lead[#lead + 2] = sa[#sa - 1], sb[#sb]
  return r:reshape(unpack(lead))
end

-- ---------------------------------------------------------------- solvers

local SOLVE = options.set("check", "refine")
local w_solve = where_of("ck.solve")
function L.solve(A, B, opts)
  local o = opts_of(w_solve, opts, SOLVE)
  matrix(w_solve, A)
  local b, vec = rhs(w_solve, B)
  local x, iters = run(w_solve, "solve", A, b, o)
  if vec then x = x:select(2, 1) end
  return x, iters
end

local w_inv = where_of("ck.inv")
function L.inv(A, opts)
  local o = opts_of(w_inv, opts, options.set("check"))
  matrix(w_inv, A)
  return (run(w_inv, "inv", A, nil, o)) -- solve with the identity, which small systems on a GPU make in registers
end

local w_det, w_slogdet = where_of("ck.det"), where_of("ck.slogdet")
--- Complex det and slogdet, from the packed LU (the core's det reduces real diagonals): the diagonal of U picked
-- out of each matrix's flattened buffer through its pair view (index_select takes no complex), its product by
-- ck.prod, and (-1)^(the pivots that swapped). slogdet: NumPy's, sign a complex number of modulus 1.
local function complex_det(where, A, o, logdet)
  local n = A:size(-1)
  if A:size(-2) ~= n then raise(fmt("%s: A is %s[%s]; it must be square", where, A:dtype(), table.concat(A:shape(), "x"))) end
  local lu, piv = run(where, "lu", A, nil, {packed = true, check = o.check})
  local bs = {table.unpack(A:shape(), 1, A:ndim() - 2)}
  local dev = A:device()
  -- lu is column-major: lu:transpose(-2, -1) is its contiguous buffer; U(i, i) is element i (n + 1) of it
  local flat = lu:transpose(-2, -1):contiguous()
  local pv = core.pair_view(flat:reshape(table.unpack((function() local s = {table.unpack(bs)}; s[#s + 1] = n * n; return s end)())))
  local idx = ck.arange(0, n * n, n + 1, {dtype = "i64", device = dev}) + 1
  local d = core.complex_view(ck.index_select(pv, pv:ndim() - 1, idx):contiguous())
  local swaps = ck.sum(ck.ne(piv, ck.arange(1, n + 1, {dtype = "i32", device = dev})), -1)
  local sign = ck.sub(1, ck.mul(ck.mod(swaps, 2), 2)):to(PART_OF[A:dtype()]) -- (-1)^swaps
  if not logdet then return ck.mul(ck.prod(d, -1), sign) end
  local ad = ck.abs(d)
  return ck.mul(ck.prod(ck.div(d, ad), -1), sign), ck.sum(ck.log(ad), -1)
end
function L.det(A, opts)
  local o = opts_of(w_det, opts, options.set("check"))
  A = matrix(w_det, A)
  if PART_OF[A:dtype()] then return call(w_det, complex_det, w_det, A, o) end
  return (run(w_det, "det", A, nil, o))
end
function L.slogdet(A, opts)
  local o = opts_of(w_slogdet, opts, options.set("check"))
  A = matrix(w_slogdet, A)
  if PART_OF[A:dtype()] then return call(w_slogdet, complex_det, w_slogdet, A, o, true) end
  return run(w_slogdet, "slogdet", A, nil, o)
end

local LU = options.set("packed", "check", "variant")
local w_lu = where_of("ck.lu")
--- L, U, perm (A[perm, :] = L U); {packed = true}: LU (L below the diagonal, unit diagonal implied), pivots
function L.lu(A, opts)
  local o = opts_of(w_lu, opts, LU)
  local lu, piv, perm, l, u = run(w_lu, "lu", matrix(w_lu, A), nil, o, o.variant)
  if o.packed then return lu, piv end
  return l, u, perm
end

local w_chol, w_chols, w_tri = where_of("ck.cholesky"), where_of("ck.cholesky_solve"), where_of("ck.triangular_solve")
function L.cholesky(A, opts)
  local o = opts_of(w_chol, opts, options.set("upper", "check"))
  return (run(w_chol, "cholesky", matrix(w_chol, A), nil, o))
end
function L.cholesky_solve(F, B, opts)
  local o = opts_of(w_chols, opts, options.set("upper", "check"))
  local b, vec = rhs(w_chols, B)
  local x = run(w_chols, "cholesky_solve", matrix(w_chols, F, "the factor"), b, o)
  return vec and x:select(2, 1) or x
end
--- {trans = "T"} solves A^T x = B (x A^T = B with left = false), "C" A^H (SciPy's trans, MATLAB's linsolve TRANSA):
-- A's transposed view with upper swapped, which the solvers take as it is (cuBLAS trsm and trtrs read either
-- layout); "C" conjugates complex A first (one copy; real A: the same as "T").
local TRANS = {N = "N", T = "T", C = "C", [0] = "N", [1] = "T", [2] = "C"}
function L.triangular_solve(A, B, opts)
  local o = opts_of(w_tri, opts, options.set("upper", "left", "unit", "check", "trans"))
  local b, vec = rhs(w_tri, B)
  if vec and o.left == false then b = B:expand(1, B:size(1)) end -- a row: x A = b
  A = matrix(w_tri, A)
  local t = TRANS[o.trans or "N"]
  if t ~= "N" then
    A = t == "C" and ctrans(A) or A:transpose(-2, -1)
    o = {upper = not o.upper, left = o.left, unit = o.unit, check = o.check}
  end
  local x = run(w_tri, "triangular_solve", A, b, o)
  if vec then x = o.left == false and x:select(1, 1) or x:select(2, 1) end
  return x
end

local w_lstsq = where_of("ck.lstsq")
function L.lstsq(A, B, opts)
  local o = opts_of(w_lstsq, opts, options.set("check"))
  local b, vec = rhs(w_lstsq, B)
  local x = run(w_lstsq, "lstsq", matrix(w_lstsq, A), b, o)
  return vec and x:select(2, 1) or x
end

-- ---------------------------------------------------------------- factorisations

local w_qr = where_of("ck.qr")
function L.qr(A, opts)
  local o = opts_of(w_qr, opts, options.set("mode", "check"))
  return run(w_qr, "qr", matrix(w_qr, A), nil, {full = o.mode == "complete", check = o.check})
end

local w_svd, w_svdvals = where_of("ck.svd"), where_of("ck.svdvals")
function L.svd(A, opts)
  local o = opts_of(w_svd, opts, options.set("full", "check"))
  return run(w_svd, "svd", matrix(w_svd, A), nil, {full = o.full, check = o.check, vectors = true})
end
local function svdvals(where, A, check)
  return (run(where, "svd", matrix(where, A), nil, {vectors = false, check = check}))
end
function L.svdvals(A, opts)
  local o = opts_of(w_svdvals, opts, options.set("check"))
  return svdvals(w_svdvals, A, o.check)
end

local w_eigh, w_eigvalsh, w_eig = where_of("ck.eigh"), where_of("ck.eigvalsh"), where_of("ck.eig")
function L.eigh(A, opts)
  local o = opts_of(w_eigh, opts, options.set("uplo", "check"))
  return run(w_eigh, "eigh", matrix(w_eigh, A), nil, {upper = o.uplo == "U", check = o.check, vectors = true})
end
function L.eigvalsh(A, opts)
  local o = opts_of(w_eigvalsh, opts, options.set("uplo", "check"))
  return (run(w_eigvalsh, "eigh", matrix(w_eigvalsh, A), nil, {upper = o.uplo == "U", check = o.check, vectors = false}))
end
--- eig(A [, {check}]) -> w, V: the eigenvalues (complex, in LAPACK's order: unsorted) and right eigenvectors
-- (complex, unit columns, largest component real) of a general square A, real or complex: A V = V diag(w).
-- NumPy's eig, MATLAB's [V, D] = eig(A) (w = diag(D)). geev on the complex form of A (src/linalg/la_funcs.c).
local w_eigvals = where_of("ck.eigvals")
function L.eig(A, opts)
  local o = opts_of(w_eig, opts, options.set("check"))
  return run(w_eig, "eig", matrix(w_eig, A), nil, {check = o.check, vectors = true})
end
function L.eigvals(A, opts)
  local o = opts_of(w_eigvals, opts, options.set("check"))
  return (run(w_eigvals, "eig", matrix(w_eigvals, A), nil, {check = o.check, vectors = false}))
end

-- ---------------------------------------------------------------- built from the above

local w_norm = where_of("ck.norm")
local function vnorm(x, p, d)
  local ax = ck.abs(x)
  if p == 2 then return ck.sqrt(ck.sum(ck.mul(ax, ax), d)) end
  if p == 1 then return ck.sum(ax, d) end
  if p == huge then return (ck.max(ax, d)) end
  if p == -huge then return (ck.min(ax, d)) end
  if p == 0 then return ck.sum(ck.ne(x, 0), d) end
  return ck.pow(ck.sum(ck.pow(ax, p), d), 1 / p)
end

--- ck.norm(a [, p [, dim]]): NumPy's norm. Vector norms (p a number, inf, -inf, 0) of a 1-D array or along dim;
-- matrix norms ("fro", "nuc", 1, -1, 2, -2, inf, -inf) of a 2-D array or over dim = {-2, -1} (the last two dims,
-- batched); no p and no dim: the 2-norm of every element.
function L.norm(a, p, dim)
  check_live(w_norm, a, "the array")
  local nd = a:ndim()
  local matrix_dims = type(dim) == "table" or (dim == nil and nd == 2 and p ~= nil)
  if type(dim) == "table" and not (#dim == 2 and ((dim[1] == -2 and dim[2] == -1) or (dim[1] == nd - 1 and dim[2] == nd))) then
    raise(fmt("%s: dim %s: matrix norms are over the last two dims ({-2, -1})", w_norm, show(dim)))
  end
  if p ~= nil and type(p) ~= "number" and p ~= "fro" and p ~= "nuc" then
    raise(fmt('%s: p must be a number, math.huge, "fro" or "nuc", got %s', w_norm, show(p)))
  end
  if not matrix_dims then
    if p == "fro" or p == "nuc" then raise(fmt("%s: %s is a matrix norm; give a 2-D array or dim = {-2, -1}", w_norm, p)) end
    if dim == nil then return call(w_norm, vnorm, nd == 1 and a or a:contiguous():reshape(-1), p or 2, 1) end
    return call(w_norm, vnorm, a, p or 2, dim)
  end
  if nd < 2 then raise(fmt("%s: a matrix norm needs 2 dims, the array has %d", w_norm, nd)) end
  p = p or "fro"
  return call(w_norm, function()
    if p == "fro" then return ck.sqrt(ck.sum(ck.sum(abs2(a), -1), -1)) end
    if p == "nuc" then return ck.sum(svdvals(w_norm, a), -1) end
    if p == 2 or p == -2 then
      local s = svdvals(w_norm, a)
      return s:select(-1, p == 2 and 1 or s:size(-1)):clone()
    end
    local ax = ck.abs(a)
    if p == 1 or p == -1 then
      local c = ck.sum(ax, -2)
      return p == 1 and (ck.max(c, -1)) or (ck.min(c, -1))
    end
    if p == huge or p == -huge then
      local r = ck.sum(ax, -1)
      return p == huge and (ck.max(r, -1)) or (ck.min(r, -1))
    end
    raise(fmt("%s: p = %s is not a matrix norm (fro, nuc, 1, -1, 2, -2, inf, -inf)", w_norm, show(p)))
  end)
end

local w_cond = where_of("ck.cond")
--- ck.cond(A [, p]): p = 2 (default): s_max / s_min; another norm: norm(A, p) * norm(inv(A), p)
function L.cond(A, p)
  matrix(w_cond, A)
  if p == nil or p == 2 or p == -2 then
    local s = svdvals(w_cond, A)
    local k = s:size(-1)
    local hi, lo = s:select(-1, 1), s:select(-1, k)
    return call(w_cond, ck.div, p == -2 and lo or hi, p == -2 and hi or lo)
  end
  return call(w_cond, function() return ck.mul(L.norm(A, p, {-2, -1}), L.norm(L.inv(A), p, {-2, -1})) end)
end

local w_rank, w_pinv = where_of("ck.matrix_rank"), where_of("ck.pinv")
--- the default cutoff: rtol * s_max with rtol = max(m, n) * eps (NumPy's and MATLAB's)
local function cutoff(where, A, s, o)
  local m, n = A:size(-2), A:size(-1)
  local smax = s:narrow(-1, 1, math.max(math.min(1, s:size(-1)), 0))
  if o.tol then return o.tol end
  return ck.mul(smax, o.rtol or (math.max(m, n) * eps_of(A:dtype())))
end

--- ck.matrix_rank(A [, {tol=, rtol=}]): the number of singular values above the cutoff (i32)
function L.matrix_rank(A, opts)
  local o = opts_of(w_rank, opts, options.set("tol", "rtol", "check"))
  matrix(w_rank, A)
  local s = svdvals(w_rank, A, o.check)
  if s:size(-1) == 0 then return call(w_rank, ck.zeros, A:ndim() > 2 and {unpack(A:shape(), 1, A:ndim() - 2)} or {}, {dtype = "i32", device = A:device()}) end
  return call(w_rank, function() return ck.sum(ck.gt(s, cutoff(w_rank, A, s, o)), -1):to("i32") end)
end

--- ck.pinv(A [, {rtol=}]): V diag(1/s) U^H over the singular values above the cutoff (U^T for real A)
function L.pinv(A, opts)
  local o = opts_of(w_pinv, opts, options.set("rtol", "tol", "check"))
  matrix(w_pinv, A)
  local U, s, V = run(w_pinv, "svd", A, nil, {vectors = true, check = o.check})
  return call(w_pinv, function()
    local k = s:size(-1)
    if k == 0 then
      local sh = A:shape(); sh[#sh - 1], sh[#sh] = sh[#sh], sh[#sh - 1]
      return ck.zeros(sh, {dtype = A:dtype(), device = A:device()})
    end
    local keep = ck.gt(s, cutoff(w_pinv, A, s, o))
    local sinv = ck.div(keep, ck.add(s, ck.sub(1, keep))) -- 1/s where kept, 0 elsewhere
    local sh = sinv:shape(); table.insert(sh, #sh, 1)
    return bmm(ck.mul(V, sinv:reshape(unpack(sh))), ctrans(U))
  end)
end

--- true, or false and why: LAPACKE for host arrays (cuSOLVER is loaded on a GPU's first use)
function L.linalg_available() return core.linalg_available() end

-- ---------------------------------------------------------------- install
local NAMES = {"solve", "inv", "det", "slogdet", "lu", "cholesky", "cholesky_solve", "triangular_solve", "lstsq", "qr",
               "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "norm", "cond", "matrix_rank", "pinv", "linalg_available"}
function L.install(target)
  ck = target
  for _, n in ipairs(NAMES) do target[n] = L[n] end
end

return L
