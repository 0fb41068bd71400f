--- cukern.complex: the complex dtypes c64 and c128 (issue 35). ck.complex, real/imag/conj/angle,
-- view_as_real/view_as_complex, and the elementwise ops, reductions and matrix product on complex operands.
--
-- How: a complex array is interleaved (re, im) pairs, NumPy's layout; core.pair_view shows it as a real
-- [..., 2] array over the same storage, and its last-dim slices are the real and imaginary parts as strided
-- views (ck.real, ck.imag, ck.complex write through them). The arithmetic, comparisons, functions and sums are
-- the core's fused complex ops (core.complex_op: src/ops/op_complex.c, the ladder kernels/complex/): one pass
-- over memory each, on both backends. Composed here: pow (exp(b log a), or repeated products), prod (products
-- of halves), isnan/isinf/isfinite (on the parts) and Gauss's matrix product (the teaching form).
--
-- The ops (ops.lua and operators.lua) call the core first; when it refuses and an operand is complex, they
-- hand the call to this module (ops.complex, installed below), so real arrays pay nothing for it.
local core = require "cukern.core"
local errors, args, ops = require "cukern.errors", require "cukern.args", require "cukern.ops"
local options = require "cukern.options"
local raise, call, where_of = errors.raise, errors.call, errors.where_of
local is_array, check_array, check_live, check_opts = args.is_array, args.check_array, args.check_live, args.check_opts
local fmt, type, math_type = string.format, type, math.type
local M = core.methods
local ck -- the module table, set by X.install (the real ops are called through it)

local X = {}
local PART = args.COMPLEX_PART
local OF_PART = {f32 = "c64", f16 = "c64", bf16 = "c64", f64 = "c128"}

local is_complex = args.is_complex
X.is_complex = is_complex

-- The real and imaginary parts of an operand: views of a complex array; a real array or a number and 0.
local function parts(x)
  if is_complex(x) then
    local p = core.pair_view(x)
    return p:select(p:ndim(), 1), p:select(p:ndim(), 2)
  end
  return x, 0
end
X.parts = parts

local function shape_of(x) return type(x) == "number" and {} or x:shape() end

-- NumPy's broadcast of two shapes, or nil
local function broadcast(sa, sb)
  local n, r = math.max(#sa, #sb), {}
  for i = 1, n do
    local x, y = sa[#sa - n + i] or 1, sb[#sb - n + i] or 1
    if x ~= y and x ~= 1 and y ~= 1 then return nil end
    r[i] = x == 1 and y or x
  end
  return r
end

local function shape_str(s) return "[" .. table.concat(s, "x") .. "]" end

-- The complex dtype of a result: the promotion of the operands' dtypes (numbers follow the array).
local function result_dtype(a, b)
  local da, db = type(a) ~= "number" and a:dtype(), b ~= nil and type(b) ~= "number" and b:dtype()
  local d = (da and db) and core.promote(da, db) or da or db
  return PART[d] and d or OF_PART[d] or "c128"
end

-- The output of an op: `out` checked (complex, the result's shape), or a new complex array.
local function result(where, shape, dtype, device, out)
  if out == nil then return call(where, core.empty, shape, dtype, device) end
  check_array(where, out, "option out")
  if not PART[out:dtype()] then
    raise(fmt("%s: out is %s, but the result is complex (%s)", where, out:dtype(), dtype))
  end
  if shape_str(out:shape()) ~= shape_str(shape) then
    raise(fmt("%s: out has shape %s but the result is %s", where, shape_str(out:shape()), shape_str(shape)))
  end
  return out
end

local function device_of(a, b) return (is_array(a) and a or b):device() end

local function put(dst, x)
  if type(x) == "number" then dst:fill(x) else dst:copy_(x) end
end

-- ---------------------------------------------------------------- elementwise

-- The fused ops (core.complex_op: src/ops/op_complex.c, kernels/complex/): one pass over memory each, on both
-- backends; broadcasting, views, numbers on either side, out= and in place are the dispatcher's.
local FUSED2 = {add = true, sub = true, mul = true, div = true, eq = true, ne = true}
local FUSED1 = {neg = true, conj = true, exp = true, log = true, sqrt = true, abs = true, angle = true}

local function binary(where, name, a, b, out)
  if name == "pow" then return X.unary(where, "exp", X.binary(where, "mul", b, X.unary(where, "log", a)), out) end
  if not FUSED2[name] then
    raise(fmt("%s: complex numbers have no %s (complex arrays take add, sub, mul, div, pow, eq, ne; " ..
      "compare ck.abs(z) or ck.real(z) instead)", where, name))
  end
  return call(where, core.complex_op, name, a, b, out)
end
X.binary = binary

-- Bool results composed on the parts (two reads of the array; no fused row): isnan, isinf, isfinite.
local TEST = {}
function TEST.isnan(ar, ai) return ck.logical_or(ck.isnan(ar), ck.isnan(ai)) end
function TEST.isinf(ar, ai) return ck.logical_or(ck.isinf(ar), ck.isinf(ai)) end
function TEST.isfinite(ar, ai) return ck.logical_and(ck.isfinite(ar), ck.isfinite(ai)) end

-- z ^ p for a number p: integer powers up to 64 in magnitude by repeated squaring (exact where the products
-- are), others as exp(p log z)
local function pows(where, z, p, out)
  if math_type(p) == "integer" or (p == math.floor(p) and math.abs(p) <= 64) then
    p = math.tointeger(p)
    if p and math.abs(p) <= 64 then
      local r = ck.complex(ck.ones(z:shape(), {dtype = PART[z:dtype()], device = z:device()}), 0)
      local base, e = z, math.abs(p)
      while e > 0 do
        if e & 1 == 1 then r = binary(where, "mul", r, base) end
        e = e >> 1
        if e > 0 then base = binary(where, "mul", base, base) end
      end
      if p < 0 then r = binary(where, "div", 1, r) end
      if out then out:copy_(r); return out end
      return r
    end
  end
  return X.unary(where, "exp", binary(where, "mul", X.unary(where, "log", z), p), out)
end

function X.unary(where, name, a, out, s1)
  if name == "pows" then return pows(where, a, s1, out) end
  if TEST[name] then
    local r = TEST[name](parts(a))
    if out then out:copy_(r); return out end
    return r
  end
  if not FUSED1[name] then
    raise(fmt("%s: complex arrays do not take %s (they take neg, conj, abs, angle, exp, log, sqrt, real, imag, " ..
      "isnan, isinf, isfinite and ^)", where, name))
  end
  return call(where, core.complex_op, name, a, nil, out)
end

-- ---------------------------------------------------------------- reductions

-- the product along dim by halving: pairs of halves multiplied until one slice is left
local function prod_dim(where, z, d)
  while z:shape()[d] > 1 do
    local n = z:shape()[d]
    local h = n // 2
    local p = binary(where, "mul", z:narrow(d, 1, h), z:narrow(d, h + 1, 2 * h))
    if n % 2 == 1 then -- the odd slice joins the first product (in place: each element read before it is written)
      local first = p:narrow(d, 1, 1)
      binary(where, "mul", first, z:narrow(d, n, n), first)
    end
    z = p
  end
  return z
end

-- sum and mean are fused (one read of the data); prod multiplies halves (log2(n) fused products)
function X.reduce(where, name, a, dim, keepdim, out)
  if name == "sum" or name == "mean" then return call(where, core.complex_op, name, a, nil, out, dim, keepdim) end
  if name ~= "prod" then
    raise(fmt("%s: complex numbers have no order, so no %s (MATLAB orders by abs: ck.%s(ck.abs(z)))", where, name, name))
  end
  local z, d = a, dim and (dim < 0 and a:ndim() + 1 + dim or dim)
  if not d then z, d = a:contiguous():reshape({a:numel()}), 1 end
  local r
  if z:shape()[d] == 0 then
    local s = z:shape(); s[d] = 1
    r = ck.complex(ck.ones(s, {dtype = PART[z:dtype()], device = z:device()}), 0)
  else
    r = prod_dim(where, z, d)
  end
  if not keepdim then r = r:select(d, 1) end
  if not dim and not keepdim then r = r:reshape({}) end
  if out then out:copy_(r); return out end
  return r
end

-- ---------------------------------------------------------------- matrix product

-- Complex products run in the core (cuBLAS cgemm/zgemm on a GPU, the host's complex loop); this is the teaching
-- form, ck.matmul(a, b, {variant = "gauss"}): Gauss's three real products over the real matmul ladder,
-- (Ar + i Ai)(Br + i Bi) = (T1 - T2) + i (T3 - T1 - T2), T1 = Ar Br, T2 = Ai Bi, T3 = (Ar + Ai)(Br + Bi).
function X.matmul(where, a, b, out, variant)
  if variant ~= "gauss" then
    raise(fmt("%s: unknown variant %s for complex operands (the matmul ladder's rows that take c64/c128, or \"gauss\")",
      where, tostring(variant)))
  end
  local function mm(x, y) return ck.matmul(x:contiguous(), y:contiguous()) end
  local ar, ai = parts(a)
  local br, bi = parts(b)
  local re, im
  if ai == 0 then re, im = mm(ar, br), mm(ar, bi)
  elseif bi == 0 then re, im = mm(ar, br), mm(ai, br)
  else
    local t1, t2, t3 = mm(ar, br), mm(ai, bi), mm(ck.add(ar, ai), ck.add(br, bi))
    re, im = ck.sub(t1, t2), ck.sub(ck.sub(t3, t1), t2)
  end
  local r = result(where, re:shape(), result_dtype(a, b), device_of(a, b), out)
  local orr, oi = parts(r)
  orr:copy_(re); oi:copy_(im)
  return r
end

-- ---------------------------------------------------------------- functions

function X.install(ck_)
  ck = ck_
  ops.complex = X

  do
    local where = where_of("ck.complex")
    --- complex(re, im [, opts]): re + i*im, arrays or numbers, broadcast; dtype c64 from f32/f16/bf16 parts,
    -- else c128 (opts.dtype picks)
    function ck.complex(re, im, opts)
      opts = check_opts(where, opts, args.CREATE)
      for i, x in ipairs {re, im} do
        if type(x) ~= "number" then check_live(where, x, "argument " .. i) end
        if is_complex(x) then raise(fmt("%s: argument %d is complex already; use its ck.real / ck.imag", where, i)) end
      end
      if type(re) == "number" and type(im) == "number" then
        re = call(where, core.from_table, {re}, PART[opts.dtype] or "f64", opts.device)
      end
      local shape = broadcast(shape_of(re), shape_of(im))
      if not shape then
        raise(fmt("%s: shapes %s and %s do not broadcast", where, shape_str(shape_of(re)), shape_str(shape_of(im))))
      end
      local dt = opts.dtype or result_dtype(re, type(im) ~= "number" and im or nil)
      if not PART[dt] then raise(fmt("%s: dtype must be c64 or c128, got %s", where, tostring(dt))) end
      local r = call(where, core.empty, shape, dt, opts.device or device_of(re, im))
      local orr, oi = parts(r)
      put(orr, type(re) == "number" and re or re:expand(shape))
      put(oi, type(im) == "number" and im or im:expand(shape))
      return r
    end
  end

  -- ck.<name>(a) and, with `method`, a:<name>(): one live array, nothing else
  local function fn(name, method, body)
    local function make(where, what)
      where_of(where)
      return function(a, ...)
        check_live(where, a, what)
        if select("#", ...) > 0 then raise(fmt("%s: takes only the array, got %d more argument(s)", where, select("#", ...))) end
        return body(where, a)
      end
    end
    ck[name] = make("ck." .. name, "argument 1")
    if method then M[name] = make("a:" .. name, "the array") end
  end
  --- real(z), imag(z): views of a complex array's parts (a real array: itself, and zeros)
  fn("real", true, function(_, a) return is_complex(a) and (parts(a)) or a end)
  fn("imag", true, function(_, a)
    if is_complex(a) then local _, im = parts(a); return im end
    return ck.zeros(a:shape(), {dtype = a:dtype(), device = a:device()})
  end)
  fn("conj", true, function(where, a) return is_complex(a) and X.unary(where, "conj", a) or a:clone() end)
  fn("angle", true, function(where, a)
    if is_complex(a) then return X.unary(where, "angle", a) end
    return ck.atan2(ck.zeros(a:shape(), {dtype = a:dtype(), device = a:device()}), a)
  end)
  fn("iscomplex", false, function(_, a) return is_complex(a) end)
  fn("isreal", false, function(_, a) return not is_complex(a) end) -- MATLAB's isreal: the dtype, not the values
  fn("view_as_real", false, function(where, a) return call(where, core.pair_view, a) end)
  fn("view_as_complex", false, function(where, a) return call(where, core.complex_view, a) end)
  fn("view_as_bytes", false, function(where, a) return call(where, core.byte_view, a) end) -- (any dtype: NumPy's a.view(np.uint8))

  -- Values as Lua: a complex element is the pair {re, im}; a:item() gives re, im.
  local totable, flat, item = M.totable, M.flat, M.item
  function M.totable(a) if is_complex(a) then return totable(core.pair_view(a)) end return totable(a) end
  function M.flat(a)
    if not is_complex(a) then return flat(a) end
    return totable(core.pair_view(a:contiguous():reshape({a:numel()})))
  end
  function M.item(a)
    if not is_complex(a) then return item(a) end
    if a:numel() ~= 1 then return item(a) end -- (its message: one element needed)
    local p = flat(core.pair_view(a:reshape({1})))
    return p[1], p[2]
  end

  -- ck.array(t, {dtype = "c64"}): the innermost tables are {re, im} pairs ({{1, 2}, {3, 4}} is 1+2i, 3+4i);
  -- a flat table of numbers gives real values (im 0)
  local array = ck.array
  local awhere = where_of("ck.array")
  function ck.array(t, opts)
    local dt = type(opts) == "table" and opts.dtype
    if not PART[dt] or type(t) ~= "table" or is_array(t) then return array(t, opts) end
    local r = array(t, options.with(opts, "dtype", PART[dt]))
    if type(t[1]) ~= "table" then return r:to(dt) end
    if r:shape()[r:ndim()] ~= 2 then
      raise(fmt("%s: with dtype %s the innermost tables are {re, im} pairs, got %d numbers", awhere, dt, r:shape()[r:ndim()]))
    end
    return core.complex_view(r)
  end
  require("cukern.complex_fns").install(ck) -- rand/randn/eye/full/fill/cumsum/where on complex (the pair view)
  return ck
end

return X
