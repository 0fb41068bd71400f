--- cukern.assembly (issue 32): arrays assembled from others — ck.cat, stack, split, chunk, tile, flip, roll
-- (here) and tril, triu, diag, pad (assembly_matrix.lua, installed by this module's install). Built from views and copies only (a:narrow, a:select, a:reshape, a:permute, a:copy_,
-- a:fill), so every function works for every dtype, on every device, and takes any strided view; each
-- returns a new contiguous array (split and chunk: views of their input). cat and stack are one launch per 64
-- inputs (core.cat, the index ladder's cat copy: kernels/index/ix_common.cu); the others' launches are at them
-- below and in docs/api.md ("Assembly"). Each runs inside errors.call: its checks, and any error of the views
-- and copies it uses, are raised at the user's line under its name ("ck.cat: ..."). Outputs are allocated
-- after every check, so a refused call writes nothing.
local errors, args = require "cukern.errors", require "cukern.args"
local options = require "cukern.options"
local raise, call, where_of = errors.raise, errors.call, errors.where_of
local is_array, show, check_live, check_opts = args.is_array, args.show, args.check_live, args.check_opts

local A = {}
local type, pairs, ipairs, select, tointeger, math_type = type, pairs, ipairs, select, math.tointeger, math.type
local fmt, concat, min, max = string.format, table.concat, math.min, math.max
local DTYPE = options.set("dtype")
local MAXINT = math.maxinteger
local core, ck = require "cukern.core", nil -- ck: the module table (install)
local function shape_str(s) return "[" .. concat(s, "x") .. "]" end
local function prod(t, i, j) local p = 1; for k = i or 1, j or #t do p = p * t[k] end; return p end
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

--- t's keys are 1..#t (a sequence, `what` for the message).
local function check_seq(where, t, what)
  for k in pairs(t) do
    if math_type(k) ~= "integer" or k < 1 or k > #t then
      raise(fmt("%s: %s must be a list {x1, x2, ...}; it has the key %s", where, what, show(k)))
    end
  end
  return #t
end

-- ---------------------------------------------------------------- cat, stack
--- ck.cat(list, dim = 1 [, {dtype =}]) and ck.stack (a new dim of size #list at dim): one launch per 64 inputs.
-- The list: live arrays on one device. The dtype: opts.dtype, else the inputs' promoted (ck_promote, the core's one
-- promotion table). Complex inputs give a complex result. Everything per input happens in one C call, core.join
-- (src/ops/join.c says why): the checks, the allocation, the copies of inputs of another dtype or layout and the
-- launches; this function checks the arguments as a whole and words the three findings that show a value.
local function join(where, stacking, list, dim, opts)
  if type(dim) == "table" and opts == nil then dim, opts = nil, dim end
  if type(list) ~= "table" or is_array(list) then
    raise(fmt("%s: the first argument must be a list of arrays such as {a, b}, got %s%s", where, show(list),
      is_array(list) and " (put it in a table: {a})" or ""))
  end
  opts = check_opts(where, opts, DTYPE)
  if dim == nil then dim = 1 end
  local out, bad = core.join(list, dim, stacking, opts.dtype)
  if out then return out end
  if bad < 0 then check_seq(where, list, "the list of arrays") end -- (raises: a key other than 1..#list)
  if bad == 0 then raise(fmt("%s: dim must be an integer, got %s", where, show(dim))) end
  raise(fmt("%s: list[%d] must be a cukern array, got %s", where, bad, show(list[bad])))
end

-- -------------------------------------------------------------- split, chunk (views)
--- Views of a along d of the given sizes; `sizes` an integer s gives sizes s, s, ..., the rest (one 0 for n = 0).
local function parts(a, d, sizes)
  local n = a:size(d)
  if type(sizes) == "number" then
    local s = sizes
    sizes = {n == 0 and 0 or nil}
    for off = 0, n - 1, s do sizes[#sizes + 1] = min(s, n - off) end
  end
  local list, off = {}, 0
  for i, len in ipairs(sizes) do list[i], off = a:narrow(d, off + 1, off + len), off + len end
  return list
end

--- ck.split(a, size | {sizes}, dim = 1): views (torch.split).
local function split(where, a, size, dim)
  the_array(where, a, true)
  local d = dim_of(where, a:ndim(), dim == nil and 1 or dim)
  if type(size) == "number" then return parts(a, d, int(where, size, "the size", 1)) end
  if type(size) ~= "table" or is_array(size) then
    raise(fmt("%s: the size must be an integer >= 1 or a list of sizes {n1, n2, ...}, got %s", where, show(size)))
  end
  local sizes, sum = {}, 0
  for i = 1, check_seq(where, size, "the sizes") do
    sizes[i] = int(where, size[i], fmt("size %d", i), 0)
    sum = sum + sizes[i]
  end
  if sum ~= a:size(d) then
    raise(fmt("%s: the sizes {%s} sum to %d but dim %d has size %d", where, concat(sizes, ", "), sum, d, a:size(d)))
  end
  return parts(a, d, sizes)
end

--- ck.chunk(a, n, dim = 1): views of ceil(size / n), the last smaller, so at most n (torch.chunk; n empty
-- views of an empty dim).
local function chunk(where, a, n, dim)
  the_array(where, a, true)
  n = int(where, n, "the number of chunks", 1)
  local d = dim_of(where, a:ndim(), dim == nil and 1 or dim)
  local len = a:size(d)
  if len > 0 then return parts(a, d, (len + n - 1) // n) end
  local sizes = {}
  for i = 1, n do sizes[i] = 0 end
  return parts(a, d, sizes)
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
  local blocks = {[0] = out} -- blocks[k]: out narrowed to S on the first k split dims
  for k, i in ipairs(split_dims) do blocks[k] = blocks[k - 1]:narrow(i, 1, S[i]) end
  blocks[#split_dims]:copy_(a)
  for k = #split_dims, 1, -1 do -- double along each split dim, the last first
    local i, b, have = split_dims[k], blocks[k - 1], S[split_dims[k]]
    while have < out_shape[i] do
      local m = min(have, out_shape[i] - have)
      b:narrow(i, have + 1, have + m):copy_(b:narrow(i, 1, m))
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
  local shape, dt, dev = x:shape(), x:dtype(), x:device()
  local n = shape[d]
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
  local list, seen = {}, {}
  if dims == nil then
    for i = 1, nd do list[i] = i end
  elseif type(dims) == "number" then
    list[1] = dim_of(where, nd, dims)
  elseif type(dims) == "table" and not is_array(dims) then
    for i = 1, check_seq(where, dims, "dims") do
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
    if x ~= a then x:free() end -- (the previous dim's result)
    x = y
  end
  return x
end

-- ---------------------------------------------------------------- roll
--- ck.roll(a, shift [, dim]): NumPy's roll; shift and dim integers, or lists (one shift for all dims, or one
-- per dim; a dim listed twice adds its shifts). One copy per piece: 2 per rolled dim, multiplied (2^k for k
-- dims; 1 when nothing moves). Without dims the flattened array rolls: 2 copies (+1 for a non-contiguous a).
local function roll(where, a, shift, dim)
  the_array(where, a)
  local shape, nd = a:shape(), a:ndim()
  local src, acc = a, {}
  if dim == nil then
    if type(shift) ~= "number" then
      raise(fmt("%s: without dims the shift must be an integer (a list of shifts needs a list of dims), got %s",
        where, show(shift)))
    end
    shape, nd, acc[1] = {a:numel()}, 1, int(where, shift, "shift")
  else
    local shifts = (type(shift) == "table" and not is_array(shift)) and shift or {shift}
    local dims = (type(dim) == "table" and not is_array(dim)) and dim or {dim}
    local ns, nd_ = check_seq(where, shifts, "the shifts"), check_seq(where, dims, "the dims")
    if ns ~= nd_ and ns ~= 1 and nd_ ~= 1 then
      raise(fmt("%s: %d shifts for %d dims; give one shift per dim (or one for all)", where, ns, nd_))
    end
    for d = 1, nd do acc[d] = 0 end
    for i = 1, max(ns, nd_) do
      local d = dim_of(where, nd, dims[nd_ == 1 and 1 or i], nd_ == 1 and "dim" or fmt("dims[%d]", i))
      acc[d] = acc[d] + int(where, shifts[ns == 1 and 1 or i], ns == 1 and "shift" or fmt("shift[%d]", i))
    end
  end
  local out = new(a:shape(), a:dtype(), a:device())
  if out:numel() == 0 then return out end
  local dst = out
  if dim == nil then src, dst = (a:is_contiguous() and a or copy_of(a)):reshape(shape[1]), out:reshape(shape[1]) end
  -- per dim, the pieces {dst first, src first, length}
  local pieces = {}
  for d = 1, nd do
    local n, s = shape[d], acc[d] % shape[d]
    pieces[d] = s == 0 and {{1, 1, n}} or {{s + 1, 1, n - s}, {1, n - s + 1, s}}
  end
  local function go(d, dv, sv)
    if d > nd then dv:copy_(sv); return end
    for _, p in ipairs(pieces[d]) do
      go(d + 1, dv:narrow(d, p[1], p[1] + p[3] - 1), sv:narrow(d, p[2], p[2] + p[3] - 1))
    end
  end
  go(1, dst, src)
  return out
end

-- The checks and constructors assembly_matrix.lua shares (one copy of each).
A.util = {shape_str = shape_str, new = function(...) return new(...) end, copy_of = copy_of, int = int,
          the_array = the_array, check_seq = check_seq}

-- ---------------------------------------------------------------- install
--- Put each {function, the most arguments it takes} of FNS into ck as ck.<name>: more arguments are an error,
-- not silently ignored; the function runs inside errors.call under its name. (assembly_matrix.lua uses it too.)
function A.register(FNS)
  for name, e in pairs(FNS) do
    local where, f, nmax = where_of("ck." .. name), e[1], e[2]
    ck[name] = function(...)
      local n = select("#", ...)
      if n > nmax then raise(fmt("%s: takes at most %d arguments, got %d", where, nmax, n)) end
      return call(where, f, where, ...)
    end
  end
end

function A.install(target)
  ck = target
  A.register {split = {split, 3}, chunk = {chunk, 3}, tile = {tile, 2}, flip = {flip, 2}, roll = {roll, 3},
    cat = {function(w, ...) return join(w, false, ...) end, 3}, stack = {function(w, ...) return join(w, true, ...) end, 3}}
  require("cukern.assembly_matrix").install(ck)
  return ck
end

return A
