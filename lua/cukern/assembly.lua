--- cukern.assembly (issue 32): arrays assembled from others — ck.cat, stack, split, chunk, tile, flip, roll,
-- tril, triu, diag, pad. Built from views and copies only (a:narrow, a:select, a:reshape, a:permute, a:copy_,
-- a:fill), so every function works for every dtype, on every device, and takes any strided view; each
-- returns a new contiguous array (split and chunk: views of their input). There is no kernel of their own
-- yet: cat and stack copy once per input (a one-launch CUDA kernel for them is a later step). The launches
-- each function costs are listed in docs/api.md ("Assembly") and at each function below.
--
-- Errors: each public function runs inside errors.call, so that its own checks and any error of the views and
-- copies it uses are raised at the user's line under its name ("ck.cat: ..."). Outputs are allocated after
-- every check, so a refused call writes nothing.
local errors, args = require "cukern.errors", require "cukern.args"
local options = require "cukern.options"
local raise, call, where_of = errors.raise, errors.call, errors.where_of
local is_array, show, check_live, check_opts = args.is_array, args.show, args.check_live, args.check_opts

local A = {}
local type, pairs, ipairs, select, tointeger, math_type = type, pairs, ipairs, select, math.tointeger, math.type
local fmt, concat, min, max = string.format, table.concat, math.min, math.max
local DTYPE = options.set("dtype")
local MAXINT = math.maxinteger

local ck -- the module table (install)

local function shape_str(s) return "[" .. concat(s, "x") .. "]" end

local function prod(t, i, j)
  local p = 1
  for k = i or 1, j or #t do p = p * t[k] end
  return p
end

local function new(shape, dtype, device) return ck.empty(shape, {dtype = dtype, device = device}) end

--- A new contiguous array with a's values.
local function copy_of(a) return new(a:shape(), a:dtype(), a:device()):copy_(a) end

--- An integer >= lo (any integer when lo is nil).
local function int(where, v, what, lo)
  local i = type(v) == "number" and tointeger(v)
  if not i or (lo and i < lo) then
    raise(fmt("%s: %s must be an integer%s, got %s", where, what, lo and (" >= " .. lo) or "", show(v)))
  end
  return i
end

--- A dim of an nd-D array as 1..nd (negative counts from the end). `top` (stack's new dim) allows 1..nd+1.
local function dim_of(where, nd, d, what, top)
  top, what = top or nd, what or "dim"
  local v = type(d) == "number" and tointeger(d)
  if not v then raise(fmt("%s: %s must be an integer, got %s", where, what, show(d))) end
  if top == 0 then raise(fmt("%s: %s is %d but a 0-d array has no dims", where, what, v)) end
  if v == 0 or v > top or v < -top then
    raise(fmt("%s: %s out of range: %d for %s (1..%d, or -%d..-1 from the end)", where, what, v,
      top == nd and fmt("a %d-D array", nd) or fmt("stacking %d-D arrays", nd), top, top))
  end
  return v < 0 and v + top + 1 or v
end

--- The array of a one-array function, live and not a 0-d array when `need_dims`.
local function the_array(where, a, need_dims)
  check_live(where, a, "the array")
  if need_dims and a:ndim() == 0 then raise(where .. ": the array is 0-d; it has no dim to work along") end
  return a
end

--- The list of cat/stack: a non-empty sequence of live arrays, all on one device. Returns its length.
local function array_list(where, list)
  if is_array(list) then
    raise(where .. ": the first argument must be a list of arrays such as {a, b}, got a cukern array " ..
      "(put it in a table: {a})")
  end
  if type(list) ~= "table" then
    raise(fmt("%s: the first argument must be a list of arrays such as {a, b}, got %s", where, show(list)))
  end
  local n = #list
  for k in pairs(list) do
    if math_type(k) ~= "integer" or k < 1 or k > n then
      raise(fmt("%s: the list must be a sequence of arrays {a, b, ...}; it has the key %s", where, show(k)))
    end
  end
  if n == 0 then raise(where .. ": the list is empty; give at least one array") end
  for i = 1, n do check_live(where, list[i], fmt("list[%d]", i)) end
  local dev = list[1]:device()
  for i = 2, n do
    local d = list[i]:device()
    if d ~= dev then
      raise(fmt("%s: list[1] is on %s and list[%d] on %s; all arrays must be on one device " ..
        "(move it first: list[%d]:to(\"%s\"))", where, dev, i, d, i, dev))
    end
  end
  return n
end

--- The result dtype of cat/stack: opts.dtype, else the inputs' dtypes promoted as elementwise ops promote
-- them (the dtype of a sum of 0-element host arrays of those dtypes: the core's one rule, ck_promote).
local function list_dtype(list, n, opts)
  if opts.dtype then return opts.dtype end
  local dt = list[1]:dtype()
  for i = 2, n do
    local d = list[i]:dtype()
    if d ~= dt then
      dt = ck.add(new({0}, dt, "host"), new({0}, d, "host")):dtype()
    end
  end
  return dt
end

-- ---------------------------------------------------------------- cat, stack

--- ck.cat(list, dim = 1 [, {dtype =}]): one copy per input with elements.
local function cat(where, list, dim, opts)
  if type(dim) == "table" and opts == nil then dim, opts = nil, dim end
  local n = array_list(where, list)
  opts = check_opts(where, opts, DTYPE)
  local shape = list[1]:shape()
  local nd = #shape
  if nd == 0 then raise(where .. ": list[1] is 0-d; cat joins arrays along a dim (ck.stack takes 0-d arrays)") end
  local d = dim_of(where, nd, dim == nil and 1 or dim)
  local total = 0
  for i = 1, n do
    local s = list[i]:shape()
    local ok = #s == nd
    for k = 1, nd do if k ~= d and s[k] ~= shape[k] then ok = false end end
    if not ok then
      raise(fmt("%s: list[%d] is %s and list[1] is %s; the shapes must agree except along dim %d", where, i,
        shape_str(s), shape_str(shape), d))
    end
    total = total + s[d]
  end
  local out_shape = {table.unpack(shape)}
  out_shape[d] = total
  local out = new(out_shape, list_dtype(list, n, opts), list[1]:device())
  local off = 0
  for i = 1, n do
    local x = list[i]
    local len = x:size(d)
    if len > 0 and x:numel() > 0 then out:narrow(d, off + 1, off + len):copy_(x) end
    off = off + len
  end
  return out
end

--- ck.stack(list, dim = 1 [, {dtype =}]): a new dim of size #list at dim; one copy per input.
local function stack(where, list, dim, opts)
  if type(dim) == "table" and opts == nil then dim, opts = nil, dim end
  local n = array_list(where, list)
  opts = check_opts(where, opts, DTYPE)
  local shape = list[1]:shape()
  local nd = #shape
  local d = dim_of(where, nd, dim == nil and 1 or dim, "dim", nd + 1)
  for i = 2, n do
    local s = list[i]:shape()
    if shape_str(s) ~= shape_str(shape) then
      raise(fmt("%s: list[%d] is %s and list[1] is %s; stack needs arrays of one shape", where, i, shape_str(s),
        shape_str(shape)))
    end
  end
  local out_shape = {table.unpack(shape)}
  table.insert(out_shape, d, n)
  local out = new(out_shape, list_dtype(list, n, opts), list[1]:device())
  if out:numel() > 0 then for i = 1, n do out:select(d, i):copy_(list[i]) end end
  return out
end

-- ---------------------------------------------------------------- split, chunk (views)

local function split_sizes(a, d, sizes)
  local parts, off = {}, 0
  for i, len in ipairs(sizes) do
    parts[i] = a:narrow(d, off + 1, off + len)
    off = off + len
  end
  return parts
end

--- ck.split(a, size | {sizes}, dim = 1): views; no copy.
local function split(where, a, size, dim)
  the_array(where, a, true)
  local d = dim_of(where, a:ndim(), dim == nil and 1 or dim)
  local n = a:size(d)
  local sizes = {}
  if type(size) == "table" and not is_array(size) then
    local sum = 0
    for k in pairs(size) do
      if math_type(k) ~= "integer" or k < 1 or k > #size then
        raise(fmt("%s: the sizes must be a list {n1, n2, ...}; it has the key %s", where, show(k)))
      end
    end
    for i = 1, #size do
      sizes[i] = int(where, size[i], fmt("size %d", i), 0)
      sum = sum + sizes[i]
    end
    if sum ~= n then
      raise(fmt("%s: the sizes {%s} sum to %d but dim %d has size %d", where, concat(sizes, ", "), sum, d, n))
    end
  elseif type(size) == "number" then
    local s = int(where, size, "the size", 1)
    for off = 0, n - 1, s do sizes[#sizes + 1] = min(s, n - off) end
    if n == 0 then sizes[1] = 0 end
  else
    raise(fmt("%s: the size must be an integer >= 1 or a list of sizes {n1, n2, ...}, got %s", where, show(size)))
  end
  return split_sizes(a, d, sizes)
end

--- ck.chunk(a, n, dim = 1): at most n views of ceil(size / n) (the last smaller; torch.chunk).
local function chunk(where, a, n, dim)
  the_array(where, a, true)
  n = int(where, n, "the number of chunks", 1)
  local d = dim_of(where, a:ndim(), dim == nil and 1 or dim)
  local len = a:size(d)
  local sizes = {}
  if len == 0 then
    for i = 1, n do sizes[i] = 0 end
  else
    local s = (len + n - 1) // n
    for off = 0, len - 1, s do sizes[#sizes + 1] = min(s, len - off) end
  end
  return split_sizes(a, d, sizes)
end

-- ---------------------------------------------------------------- tile

--- ck.tile(a, reps): NumPy's tile. One copy into a permuted view of the result (the tiled dims split into
-- (reps, size) pairs); where that would take more than 8 dims, one copy plus ceil(log2 reps) doubling copies
-- per tiled dim.
local function tile(where, a, reps)
  the_array(where, a)
  if type(reps) == "number" then reps = {reps} end
  if type(reps) ~= "table" or is_array(reps) then
    raise(fmt("%s: reps must be an integer or a list of integers such as {2, 3}, got %s", where, show(reps)))
  end
  local shape, nd, r = a:shape(), a:ndim(), #reps
  local D = max(nd, r)
  local S, R, out_shape = {}, {}, {}
  for i = 1, D do
    S[i] = i > D - nd and shape[i - (D - nd)] or 1
    R[i] = i > D - r and int(where, reps[i - (D - r)], fmt("reps[%d]", i - (D - r)), 0) or 1
    if S[i] > 0 and R[i] > MAXINT // S[i] then raise(fmt("%s: dim %d would have %d x %d elements", where, i, S[i], R[i])) end
    out_shape[i] = S[i] * R[i]
  end
  local out = new(out_shape, a:dtype(), a:device())
  if out:numel() == 0 then return out end
  local split_dims = {}
  for i = 1, D do if R[i] > 1 and S[i] > 1 then split_dims[#split_dims + 1] = i end end
  if D + #split_dims <= 8 then
    -- out as (R1, S1, R2, S2, ...) for the split dims, permuted to (R..., S1, ..., SD): a broadcasts into it
    local vshape, rpos, dpos = {}, {}, {}
    for i = 1, D do
      if R[i] > 1 and S[i] > 1 then vshape[#vshape + 1] = R[i]; rpos[#rpos + 1] = #vshape end
      vshape[#vshape + 1] = (R[i] > 1 and S[i] > 1) and S[i] or out_shape[i]
      dpos[#dpos + 1] = #vshape
    end
    local perm = {table.unpack(rpos)}
    for _, p in ipairs(dpos) do perm[#perm + 1] = p end
    out:reshape(vshape):permute(table.unpack(perm)):copy_(a)
    return out
  end
  local block = out
  for _, i in ipairs(split_dims) do block = block:narrow(i, 1, S[i]) end
  block:copy_(a)
  for k, i in ipairs(split_dims) do
    block = out
    for l = k + 1, #split_dims do block = block:narrow(split_dims[l], 1, S[split_dims[l]]) end
    local have = S[i]
    while have < out_shape[i] do
      local m = min(have, out_shape[i] - have)
      block:narrow(i, have + 1, have + m):copy_(block:narrow(i, 1, m))
      have = have + m
    end
  end
  return out
end

-- ---------------------------------------------------------------- flip

--- x with dim d reversed, as a new contiguous array. Views cannot have negative strides, so a dim of n <= 16
-- is n slice copies; a longer one is reversed digit by digit: padded to N = p * 4^e >= n (p <= 16, N < 1.25 n),
-- and index i -> N-1-i is "reverse each base-4 digit" (and the leading base-p digit), one pass per digit
-- of r slice copies each (a reshape to (pre, G, r, W, post) and r selects). Launches: p + 4e + 1, plus 2
-- when N > n (the padding's fill and the copy out); about 1 + log4(n) passes over the data.
local function reverse_dim(x, d)
  local shape = x:shape()
  local n = shape[d]
  local dt, dev = x:dtype(), x:device()
  if n <= 16 then
    local out = new(shape, dt, dev)
    if out:numel() > 0 then for i = 1, n do out:select(d, i):copy_(x:select(d, n + 1 - i)) end end
    return out
  end
  local radices, W = {}, 1
  while W * 16 <= n do W = W * 4; radices[#radices + 1] = 4 end
  local p = (n + W - 1) // W
  table.insert(radices, 1, p)
  local N = p * W
  local pre, post = prod(shape, 1, d - 1), prod(shape, d + 1)
  local pshape = {table.unpack(shape)}
  pshape[d] = N
  local src = new(pshape, dt, dev) -- x at the end of the padded dim: reversed, it lies at the start
  if N > n then src:narrow(d, 1, N - n):fill(0) end
  src:narrow(d, N - n + 1, N):copy_(x)
  local dst = new(pshape, dt, dev)
  local G = 1
  for _, r in ipairs(radices) do
    W = N // (G * r)
    local sv, dv = src:reshape(pre, G, r, W, post), dst:reshape(pre, G, r, W, post)
    for t = 1, r do dv:select(3, t):copy_(sv:select(3, r + 1 - t)) end
    src, dst, G = dst, src, G * r
  end
  dst:free()
  if N == n then return src end
  local out = new(shape, dt, dev)
  out:reshape(pre, n, post):copy_(src:reshape(pre, N, post):narrow(2, 1, n))
  src:free()
  return out
end

--- ck.flip(a [, dims]): dims an integer or a list; all dims when nil.
local function flip(where, a, dims)
  the_array(where, a)
  local nd = a:ndim()
  local list = {}
  if dims == nil then
    for i = 1, nd do list[i] = i end
  elseif type(dims) == "number" then
    list[1] = dim_of(where, nd, dims)
  elseif type(dims) == "table" and not is_array(dims) then
    local seen = {}
    for i = 1, #dims do
      local d = dim_of(where, nd, dims[i], fmt("dims[%d]", i))
      if seen[d] then raise(fmt("%s: dim %d is listed twice in dims", where, d)) end
      seen[d], list[i] = true, d
    end
  else
    raise(fmt("%s: dims must be an integer or a list of dims such as {1, 2}, got %s", where, show(dims)))
  end
  if a:numel() == 0 or #list == 0 then return copy_of(a) end
  local x = a
  for _, d in ipairs(list) do
    local y = reverse_dim(x, d)
    if x ~= a then x:free() end
    x = y
  end
  return x
end

-- ---------------------------------------------------------------- roll

--- ck.roll(a, shift [, dim]): NumPy's roll. With dims: one copy per piece, 2 per rolled dim multiplied
-- (2^k for k rolled dims; 1 when nothing moves). Without: the flattened array rolled, 2 copies (+1 for a
-- non-contiguous a).
local function roll(where, a, shift, dim)
  the_array(where, a)
  local shape, nd = a:shape(), a:ndim()
  local out = new(shape, a:dtype(), a:device())
  if dim == nil then
    if type(shift) ~= "number" then
      raise(fmt("%s: without dims the shift must be an integer (a list of shifts needs a list of dims), got %s",
        where, show(shift)))
    end
    local s = int(where, shift, "shift")
    local n = a:numel()
    if n == 0 then return out end
    local flat, oflat = (a:is_contiguous() and a or copy_of(a)):reshape(n), out:reshape(n)
    s = s % n
    if s > 0 then oflat:narrow(1, 1, s):copy_(flat:narrow(1, n - s + 1, n)) end
    oflat:narrow(1, s + 1, n):copy_(flat:narrow(1, 1, n - s))
    return out
  end
  local shifts, dims = shift, dim
  if type(shifts) ~= "table" or is_array(shifts) then shifts = {shifts} end
  if type(dims) ~= "table" or is_array(dims) then dims = {dims} end
  if #shifts ~= #dims and #shifts ~= 1 and #dims ~= 1 then
    raise(fmt("%s: %d shifts for %d dims; give one shift per dim (or one for all)", where, #shifts, #dims))
  end
  local acc = {}
  for i = 1, nd do acc[i] = 0 end
  for i = 1, max(#shifts, #dims) do
    local d = dim_of(where, nd, dims[#dims == 1 and 1 or i], #dims == 1 and "dim" or fmt("dims[%d]", i))
    acc[d] = acc[d] + int(where, shifts[#shifts == 1 and 1 or i], #shifts == 1 and "shift" or fmt("shift[%d]", i))
  end
  if out:numel() == 0 then return out end
  -- per dim, the pieces {dst first, src first, length}
  local pieces = {}
  for d = 1, nd do
    local n = shape[d]
    local s = acc[d] % n
    pieces[d] = s == 0 and {{1, 1, n}} or {{s + 1, 1, n - s}, {1, n - s + 1, s}}
  end
  local function go(d, dv, sv)
    if d > nd then dv:copy_(sv); return end
    for _, p in ipairs(pieces[d]) do
      go(d + 1, dv:narrow(d, p[1], p[1] + p[3] - 1), sv:narrow(d, p[2], p[2] + p[3] - 1))
    end
  end
  go(1, out, a)
  return out
end

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
  if lower then -- zero j > i + k
    f0, f1 = 0, clamp(-k, 0, m)
    i0 = f1
    i1 = clamp(n - k - 1, i0, m)
  else          -- zero j < i + k
    f0, f1 = clamp(n - k, 0, m), m
    i0 = clamp(1 - k, 0, f0)
    i1 = f0
  end
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
  local P = q - 1
  local R = n + P
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
  local len = flat:size(1)
  if start + L * step <= len then
    return {{flat:narrow(1, start + 1, start + L * step):reshape(L, step):select(2, 1), 1, L}}
  end
  local last = start + (L - 1) * step + 1
  local parts = {{flat:narrow(1, last, last), L, L}}
  if L > 1 then
    parts[2] = {flat:narrow(1, start + 1, start + (L - 1) * step):reshape(L - 1, step):select(2, 1), 1, L - 1}
  end
  return parts
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
    local N = n + (k < 0 and -k or k)
    if N > 2 ^ 31 then raise(fmt("%s: the matrix would be %d x %d", where, N, N)) end
    local out = new({N, N}, a:dtype(), a:device()):fill(0)
    if n > 0 then
      for _, p in ipairs(strided(out:reshape(N * N), k >= 0 and k or -k * N, N + 1, n)) do
        p[1]:copy_(a:narrow(1, p[2], p[3]))
      end
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
    if #widths ~= nd then
      raise(fmt("%s: widths has %d entries for a %d-D array; give one {before, after} per dim, from dim 1", where,
        #widths, nd))
    end
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

function A.install(target)
  ck = target
  -- {function, the most arguments it takes}: more is an error, not silently ignored
  local FNS = {cat = {cat, 3}, stack = {stack, 3}, split = {split, 3}, chunk = {chunk, 3}, tile = {tile, 2},
    flip = {flip, 2}, roll = {roll, 3}, diag = {diag, 2}, pad = {pad, 3},
    tril = {function(where, a, k) return tri(where, true, a, k) end, 2},
    triu = {function(where, a, k) return tri(where, false, a, k) end, 2}}
  for name, e in pairs(FNS) do
    local where, f, nmax = where_of("ck." .. name), e[1], e[2]
    ck[name] = function(...)
      local n = select("#", ...)
      if n > nmax then raise(fmt("%s: takes at most %d arguments, got %d", where, nmax, n)) end
      return call(where, f, where, ...)
    end
  end
  return ck
end

return A
