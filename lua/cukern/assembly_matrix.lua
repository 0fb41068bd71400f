--- cukern.assembly_matrix (issue 32): the matrix parts of assembly — ck.tril, triu, diag, pad — split from
-- assembly.lua (which installs this module and shares its checks through A.util). Built from views, copies and
-- fills only, so every dtype, device and strided view works; each returns a new contiguous array, allocated
-- after every check. Launches: at each function below and in docs/api.md ("Assembly").
local errors, args = require "cukern.errors", require "cukern.args"
local A = require "cukern.assembly"
local raise = errors.raise
local is_array, show = args.is_array, args.show
local U = A.util
local shape_str, new, copy_of, int, the_array, check_seq = U.shape_str, U.new, U.copy_of, U.int, U.the_array, U.check_seq

local M = {}
local type, ipairs = type, ipairs
local fmt, min, max = string.format, math.min, math.max
local MAXINT = math.maxinteger

-- ---------------------------------------------------------------- tril, triu
--- ck.tril(a, k = 0) / ck.triu(a, k = 0) on the last two dims (batched). The kept part is copied, the other
-- part filled with exact zeros (a NaN there does not leak: no multiply by a mask). Views have no diagonal
-- strides, so the matrix is copied into a buffer whose rows are padded by q-1 elements (q: the rows cut
-- partly), with the batch dims innermost; in that buffer, a view with row stride R+1 (R the padded row)
-- turns the staircase of zeros into one rectangle. Launches: copy in, at most 2 fills (the rectangle, and
-- the rows zeroed whole), copy out; the buffer is (m + 2) x (n + q - 1) per matrix.
local function tri(where, lower, a, k)
  the_array(where, a)
  local shape, nd = a:shape(), a:ndim()
  if nd < 2 then
    raise(fmt("%s: needs an array of at least 2 dims (the last two are the matrix), got a %d-D array %s", where,
      nd, shape_str(shape)))
  end
  k = k == nil and 0 or int(where, k, "k")
  local m, n = shape[nd - 1], shape[nd]
  local out = new(shape, a:dtype(), a:device())
  if out:numel() == 0 then return out end
  local function clamp(v, lo, hi) return min(max(v, lo), hi) end
  -- (0-based rows) [f0, f1): zeroed whole; [i0, i1): zeroed in part
  local f0, f1, i0, i1
  if lower then f0, f1 = 0, clamp(-k, 0, m); i0, i1 = f1, clamp(n - k - 1, f1, m) -- zero j > i + k
  else f0, f1 = clamp(n - k, 0, m), m; i0, i1 = clamp(1 - k, 0, f0), f0 end       -- zero j < i + k
  local q = i1 - i0
  if f1 - f0 == m then return out:fill(0) end
  if q == 0 then
    out:copy_(a)
    if f1 > f0 then out:narrow(nd - 1, f0 + 1, f1):fill(0) end
    return out
  end
  local bshape = {table.unpack(shape, 1, nd - 2)}
  local perm = {nd - 1, nd}
  for i = 1, nd - 2 do perm[#perm + 1] = i end
  local R = n + q - 1
  local buf = new({m + 2, R, table.unpack(bshape)}, a:dtype(), a:device())
  local C = buf:narrow(1, 2, m + 1):narrow(2, 1, n) -- (m, n, batch...): matrix row i is buffer row i + 1
  C:copy_(a:permute(table.unpack(perm)))
  if f1 > f0 then C:narrow(1, f0 + 1, f1):fill(0) end
  -- cell (row b, column j) of the buffer is cell b*R + j of its flat view; the rectangle's row r starts at
  -- matrix (i0 + r, j0 + r): cell (1 + i0 + r)*R + j0 + r = base + r*(R + 1)
  local j0, W
  if lower then j0, W = i0 + k + 1, n - i0 - k - 1 else j0, W = i0 - i1 + 1, i1 + k - 1 end
  local base = (1 + i0) * R + j0
  local flat = buf:reshape((m + 2) * R, table.unpack(bshape))
  flat:narrow(1, base + 1, base + q * (R + 1)):reshape(q, R + 1, table.unpack(bshape)):narrow(2, 1, W):fill(0)
  out:permute(table.unpack(perm)):copy_(C)
  buf:free()
  return out
end

-- ---------------------------------------------------------------- diag
--- The elements start, start + step, ... (L of them, 0-based) of a 1-D contiguous array, as views: one when
-- the array holds L whole steps after start, else two (the last element alone). Returns {{view, first, last}}.
local function strided(flat, start, step, L)
  local whole = start + L * step <= flat:size(1) and L or L - 1 -- the elements with a whole step after them
  local list = {}
  if whole > 0 then
    list[1] = {flat:narrow(1, start + 1, start + whole * step):reshape(whole, step):select(2, 1), 1, whole}
  end
  if whole < L then list[#list + 1] = {flat:narrow(1, start + whole * step + 1, start + whole * step + 1), L, L} end
  return list
end

--- ck.diag(a, k = 0): 1-D -> the square matrix with a on diagonal k (a fill and 1-2 copies); 2-D -> diagonal k
-- as a new 1-D array (1-2 copies, +1 for a non-contiguous a). The diagonal is a view of the flattened
-- matrix with stride n + 1.
local function diag(where, a, k)
  the_array(where, a)
  local nd = a:ndim()
  if nd ~= 1 and nd ~= 2 then
    raise(fmt("%s: takes a 1-D array (to make a matrix) or a 2-D array (to take its diagonal), got a %d-D array %s",
      where, nd, shape_str(a:shape())))
  end
  k = k == nil and 0 or int(where, k, "k")
  if nd == 1 then
    local n = a:size(1)
    if k == math.mininteger or (k < 0 and -k or k) > MAXINT - n then
      raise(fmt("%s: k = %d is too large: the matrix would have more than 2^63 rows", where, k))
    end
    local N = n + (k < 0 and -k or k)
    local out = new({N, N}, a:dtype(), a:device()):fill(0)
    if n == 0 then return out end
    for _, p in ipairs(strided(out:reshape(N * N), k >= 0 and k or -k * N, N + 1, n)) do
      p[1]:copy_(a:narrow(1, p[2], p[3]))
    end
    return out
  end
  local m, n = a:size(1), a:size(2)
  local L = max(0, k >= 0 and min(m, n - k) or min(m + k, n))
  local out = new({L}, a:dtype(), a:device())
  if L == 0 then return out end
  local flat = (a:is_contiguous() and a or copy_of(a)):reshape(m * n)
  for _, p in ipairs(strided(flat, k >= 0 and k or -k * n, n + 1, L)) do out:narrow(1, p[2], p[3]):copy_(p[1]) end
  return out
end

-- ---------------------------------------------------------------- pad
--- ck.pad(a, widths [, value = 0]): NumPy's constant pad. widths: an integer (every side of every dim), or
-- one {before, after} per dim from dim 1. One copy and one fill per side with a width.
local function pad(where, a, widths, value)
  the_array(where, a)
  local shape, nd = a:shape(), a:ndim()
  local W = {}
  if type(widths) == "number" then
    local w = int(where, widths, "the width", 0)
    for d = 1, nd do W[d] = {w, w} end
  elseif type(widths) == "table" and not is_array(widths) then
    local nw = check_seq(where, widths, "widths")
    if nw ~= nd then raise(fmt("%s: widths has %d entries for a %d-D array; give one {before, after} per dim, " ..
      "from dim 1", where, nw, nd)) end
    for d = 1, nd do
      local w = widths[d]
      if type(w) ~= "table" or is_array(w) or #w ~= 2 then
        raise(fmt("%s: widths[%d] must be a pair {before, after}, got %s (widths lists one pair per dim, " ..
          "from dim 1: {{1, 1}, {0, 2}})", where, d, show(w)))
      end
      W[d] = {int(where, w[1], fmt("widths[%d][1]", d), 0), int(where, w[2], fmt("widths[%d][2]", d), 0)}
    end
  else
    raise(fmt("%s: widths must be an integer or a list of {before, after} pairs, one per dim, got %s", where,
      show(widths)))
  end
  if value == nil then value = 0 end
  if type(value) ~= "number" then raise(fmt("%s: the value must be a number, got %s", where, show(value))) end
  local out_shape = {}
  for d = 1, nd do
    if W[d][1] > MAXINT - shape[d] - W[d][2] then raise(fmt("%s: dim %d would be too large", where, d)) end
    out_shape[d] = W[d][1] + shape[d] + W[d][2]
  end
  local out = new(out_shape, a:dtype(), a:device())
  if out:numel() == 0 then return out end
  -- each side's slab: the interior on the dims before d, everything on the dims after it
  local inner = out
  for d = 1, nd do
    local b, e = W[d][1], W[d][2]
    if b > 0 then inner:narrow(d, 1, b):fill(value) end
    if e > 0 then inner:narrow(d, b + shape[d] + 1, out_shape[d]):fill(value) end
    inner = inner:narrow(d, b + 1, b + shape[d])
  end
  if a:numel() > 0 then inner:copy_(a) end
  return out
end

-- ---------------------------------------------------------------- install
function M.install()
  A.register {diag = {diag, 2}, pad = {pad, 3},
    tril = {function(w, a, k) return tri(w, true, a, k) end, 2}, triu = {function(w, a, k) return tri(w, false, a, k) end, 2}}
end

return M
