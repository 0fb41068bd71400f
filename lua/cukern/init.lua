--- cukern: GPU arrays for Lua 5.4, with a ladder of CUDA kernel variants behind every op.
-- This file is the friendly API over the C module cukern.core: argument checking, options, indexing,
-- operators, display. Everything that touches data is in C.
--
-- Errors: every public function checks its arguments here and names itself as the user wrote it
-- (`ck.sum`, `a:narrow`, `a + b`, `a[i]`); errors from the core are caught and re-raised under that name.
-- Either way the error points at the user's line: frames inside cukern's modules are skipped (cukern.errors).
local core = require "cukern.core"

local ck = {core = core, version = core.version}
local M = core.methods       -- array methods
local MT = core.array_mt     -- array metatable

local type, select, tostring, math_type, tointeger = type, select, tostring, math.type, math.tointeger
local pcall, error, getmetatable, setmetatable, rawequal = pcall, error, getmetatable, setmetatable, rawequal
local fmt, concat = string.format, table.concat

local function is_array(x) return getmetatable(x) == MT end

local errors, args = require "cukern.errors", require "cukern.args"
local raise, clean, fail, call, where_of = errors.raise, errors.clean, errors.fail, errors.call, errors.where_of
local show, check_array, check_operand, check_live = args.show, args.check_array, args.check_operand, args.check_live
local check_number, check_count, check_dim = args.check_number, args.check_count, args.check_dim
local is_opts, is_trailing_opts, check_opts = args.is_opts, args.is_trailing_opts, args.check_opts
local CREATE, OP, INPLACE, MATMUL, GEMM = args.CREATE, args.OP, args.INPLACE, args.MATMUL, args.GEMM
local REDUCE, REDUCE_IDX = args.REDUCE, args.REDUCE_IDX

function ck.is_array(...)
  local n = select("#", ...)
  if n ~= 1 then raise(fmt("ck.is_array: takes one value, got %d arguments", n)) end
  return is_array((...))
end

-- ---------------------------------------------------------------- tables that print well

local function show_value(v) return type(v) == "string" and fmt("%q", v) or tostring(v) end
local SEQ_MT = {__tostring = function(t)
  local s = {}
  for i = 1, #t do s[i] = show_value(t[i]) end
  return "{" .. concat(s, ", ") .. "}"
end}
local RECORD_MT = {__tostring = function(t)
  local keys, s = {}, {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(x, y) return tostring(x) < tostring(y) end)
  for i, k in ipairs(keys) do s[i] = tostring(k) .. " = " .. show_value(t[k]) end
  return "{" .. concat(s, ", ") .. "}"
end}

-- ---------------------------------------------------------------- module functions

-- `nmax`: the most arguments the function takes; more is an error, not silently ignored (ck.memory(a) may
-- have meant something else).
local function module_fn(name, nmax, record)
  local where, f = where_of("ck." .. name), core[name]
  local function check(n)
    if n > nmax then
      raise(fmt("%s: takes %s, got %d argument%s", where, nmax == 0 and "no arguments" or ("at most " .. nmax ..
        " argument" .. (nmax == 1 and "" or "s")), n, n == 1 and "" or "s"))
    end
  end
  if not record then
    ck[name] = function(...) check(select("#", ...)); return call(where, f, ...) end
    return
  end
  ck[name] = function(...)
    check(select("#", ...))
    local r = call(where, f, ...)
    if type(r) == "table" then setmetatable(r, RECORD_MT) end
    return r
  end
end
for k, nmax in pairs {has_cuda = 0, default_device = 1, sync = 0, sync_mode = 1, batching = 1, seed = 1,
                      empty_cache = 0} do module_fn(k, nmax) end
for _, k in ipairs {"device", "memory", "last_ran"} do module_fn(k, 0, true) end
do
  local where = where_of("ck.variants")
  function ck.variants(op)
    if type(op) ~= "string" then raise(fmt("%s: op must be a string (matmul, reduce, transpose, elementwise), got %s", where, show(op))) end
    local list = call(where, core.variants, op)
    for _, v in ipairs(list) do setmetatable(v, RECORD_MT); setmetatable(v.dtypes, SEQ_MT) end
    return list
  end
end

-- ---------------------------------------------------------------- creation

--- (d1, d2, ... [, opts]) or ({d1, d2, ...} [, opts]) -> shape, opts
local function shape_and_opts(where, ...)
  local n = select("#", ...)
  local last = n > 0 and select(n, ...) or nil
  local opts
  if is_trailing_opts(last, n) then opts, n = last, n - 1 end
  local first = ...
  local src = (n == 1 and type(first) == "table" and not is_array(first)) and first or {...}
  if src ~= first then for i = n + 1, #src do src[i] = nil end else n = #src end
  local shape = {}
  for i = 1, n do
    local d = src[i]
    local v = type(d) == "number" and tointeger(d)
    if not v then raise(fmt("%s: dim %d is %s, not an integer", where, i, show(d))) end
    if v < 0 then raise(fmt("%s: dim %d is negative (%d)", where, i, v)) end
    shape[i] = v
  end
  return shape, check_opts(where, opts, CREATE)
end

local function new(where, shape, opts) return call(where, core.empty, shape, opts.dtype, opts.device) end

for _, name in ipairs {"empty", "zeros", "ones"} do
  local where = where_of("ck." .. name)
  local value = name == "zeros" and 0 or name == "ones" and 1 or nil
  ck[name] = function(...)
    local a = new(where, shape_and_opts(where, ...))
    if value then a:fill(value) end
    return a
  end
end

do
  local where = where_of("ck.full")
  --- full(shape, value [, opts]): shape a number or a table of dims.
  function ck.full(shape, value, opts)
    if type(shape) == "number" then shape = {shape} end
    if type(shape) ~= "table" or is_array(shape) then
      raise(fmt("%s: shape must be a number or a table of dims such as {2, 3}, got %s", where, show(shape)))
    end
    if type(value) ~= "number" and type(value) ~= "boolean" then
      raise(fmt("%s: value must be a number, got %s", where, show(value)))
    end
    local s, o = shape_and_opts(where, shape, opts or {})
    return new(where, s, o):fill(value)
  end
end

do
  local where = where_of("ck.eye")
  --- eye(n [, m] [, opts]): n x m with ones on the diagonal.
  function ck.eye(n, m, opts)
    if is_opts(m) then m, opts = nil, m end
    n = check_count(where, n, "n")
    m = m == nil and n or check_count(where, m, "m")
    return call(where, core.generate, new(where, {n, m}, check_opts(where, opts, CREATE)), "eye")
  end
end

local MAX_COUNT = 2 ^ 53 -- element counts past this are not exact in a double (and would not fit anyway)

-- An i32 result must hold its first and last values (the others lie between): past +-2^31 the cast would
-- give INT32_MIN silently.
local function check_i32_range(where, r, first, last)
  if r:dtype() ~= "i32" then return end
  for _, v in ipairs {first, last} do
    if v < -2147483648 or v > 2147483647 then
      r:free()
      raise(fmt("%s: value %s does not fit in i32 (-2^31 .. 2^31-1); use a float dtype", where, show(v)))
    end
  end
end

-- The number of elements of [start, stop) in steps of step: ceil((stop - start) / step), at least 0. Integers
-- count in integer arithmetic, since near +-2^63 their difference has no double (math.mininteger + 3 minus
-- math.mininteger is 0 in doubles); the difference of integers on either side of 0 can wrap, and is then
-- counted as the unsigned number it is (always far past MAX_COUNT).
local function arange_count(start, stop, step)
  if math.type(start) == "integer" and math.type(stop) == "integer" and math.type(step) == "integer" then
    if (step > 0 and stop <= start) or (step < 0 and stop >= start) then return 0 end
    local d = stop - start -- exact unless it wrapped past 2^63 (then d has the wrong sign)
    if (step > 0) ~= (d > 0) then return (d + 0.0) + 2.0 ^ 64 end
    local q, r = d // step, d % step
    return r == 0 and q or q + 1
  end
  return math.max(0, math.ceil(((stop + 0.0) - (start + 0.0)) / step))
end

do
  local where = where_of("ck.arange")
  --- arange(stop) | arange(start, stop [, step]) : half-open [start, stop), like NumPy.
  function ck.arange(a, b, c, opts)
    if is_opts(b) then b, c, opts = nil, nil, b elseif is_opts(c) then c, opts = nil, c end
    local start, stop, step
    if b == nil then start, stop, step = 0, a, c or 1
    else start, stop, step = a, b, c or 1 end
    for _, p in ipairs {{"start", start}, {"stop", stop}, {"step", step}} do
      local v = p[2]
      if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
        raise(fmt("%s: %s must be a finite number, got %s", where, p[1], show(v)))
      end
    end
    if step == 0 then raise(where .. ": step must not be 0") end
    local n = arange_count(start, stop, step)
    if n >= MAX_COUNT then raise(fmt("%s: %.4g elements is too many (start %s, stop %s, step %s)", where, n,
      show(start), show(stop), show(step))) end
    local r = new(where, {tointeger(n)}, check_opts(where, opts, CREATE))
    if n > 0 then check_i32_range(where, r, start, start + (n - 1) * step) end
    return call(where, core.generate, r, "arange", start, step)
  end
end

do
  local where = where_of("ck.linspace")
  --- linspace(a, b [, n = 100] [, opts]): n points from a to b inclusive.
  function ck.linspace(a, b, n, opts)
    if is_opts(n) then n, opts = nil, n end
    for _, p in ipairs {{"a", a}, {"b", b}} do
      local v = p[2]
      if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
        raise(fmt("%s: %s must be a finite number, got %s", where, p[1], show(v)))
      end
    end
    n = n == nil and 100 or check_count(where, n, "n")
    local step = n > 1 and (b - a) / (n - 1) or 0
    local r = new(where, {n}, check_opts(where, opts, CREATE))
    if n > 0 then check_i32_range(where, r, a, b) end
    call(where, core.generate, r, "arange", a, step)
    -- a + (n-1)*step need not round to b (-3.3 .. 8.1 in 13 steps ends at 8.0999999999999979): the last point
    -- is b itself, as in NumPy; the first is a + 0*step = a already
    if n > 1 then call(where, core.generate, r:narrow(1, n, n), "fill", b) end
    return r
  end
end

for _, name in ipairs {"rand", "randn"} do
  local where = where_of("ck." .. name)
  local what = name == "rand" and "uniform [0, 1)" or "normal (0, 1)"
  ck[name] = function(...)
    local shape, opts = shape_and_opts(where, ...)
    if opts.dtype == "i32" then
      raise(fmt("%s: makes floating-point %s values (f32 or f64), not i32; for random integers use " ..
        "ck.randint(lo, hi, shape...), or convert afterwards: %s(...):to(\"i32\")", where, what, where))
    end
    return call(where, core.generate, new(where, shape, opts), name)
  end
end

do
  local where = where_of("ck.randint")
  --- randint(lo, hi, d1, d2, ... [, opts]): uniform integers in [lo, hi] (inclusive, like math.random); i32.
  function ck.randint(lo, hi, ...)
    local l, h = type(lo) == "number" and tointeger(lo), type(hi) == "number" and tointeger(hi)
    if not l then raise(fmt("%s: lo must be an integer, got %s", where, show(lo))) end
    if not h then raise(fmt("%s: hi must be an integer, got %s", where, show(hi))) end
    if h < l then raise(fmt("%s: hi (%d) is less than lo (%d)", where, h, l)) end
    if l < -2 ^ 31 or h >= 2 ^ 31 then raise(fmt("%s: lo and hi must fit in i32 for an i32 result", where)) end
    local shape, opts = shape_and_opts(where, ...)
    local dtype = opts.dtype or "i32"
    local u = call(where, core.generate, new(where, shape, {device = opts.device, dtype = "f64"}), "rand")
    -- floor(u * (hi - lo + 1)) + lo: every integer of [lo, hi] with equal chance (u < 1, so never hi + 1)
    local r = call(where, core.unary, "floor", call(where, core.binary, "mul", u, (h - l + 1) + 0.0))
    call(where, core.binary, "add", r, l, r)
    return dtype == "f64" and r or call(where, r.to, r, dtype)
  end
end

do
  local where = where_of("ck.array")
  --- array(nested_table | number | array [, opts]): always a new array.
  function ck.array(t, opts)
    opts = check_opts(where, opts, CREATE)
    if is_array(t) then -- always a new array, never an alias of t
      check_live(where, t, "argument 1")
      local r = call(where, t.to, t, opts.device or t:device(), opts.dtype or t:dtype())
      return r:storage_id() == t:storage_id() and r:clone() or r
    end
    local ty = type(t)
    if ty ~= "table" and ty ~= "number" then
      raise(fmt("%s: argument 1 must be a (nested) table of numbers, a number or an array, got %s%s", where, show(t),
        ty == "boolean" and " (cukern has no bool dtype yet: use 1 or 0)" or ""))
    end
    return call(where, core.from_table, t, opts.dtype, opts.device)
  end
end

do
  local where = where_of("ck.scalar")
  --- scalar(x [, opts]): a 0-d array from a number (or from a one-element array).
  function ck.scalar(x, opts)
    opts = check_opts(where, opts, CREATE)
    if is_array(x) then
      check_live(where, x, "argument 1")
      if x:numel() ~= 1 then
        raise(fmt("%s: the array has %d elements; a scalar needs exactly 1", where, x:numel()))
      end
      return ck.array(x:reshape(), opts)
    end
    if type(x) ~= "number" and type(x) ~= "boolean" then
      raise(fmt("%s: x must be a number, got %s (ck.array makes arrays from tables)", where, show(x)))
    end
    return call(where, core.from_table, x, opts.dtype, opts.device)
  end
end

-- ---------------------------------------------------------------- indexing (1-based, torch7 style)
-- a[i]             1-D: the number at i; N-D: the view a:select(1, i)
-- a[{i, j}]        a number when every dim gets a number
-- a[{{1, 3}, {}, 2}]  a view: {first, last} inclusive ranges, {} a whole dim, a number drops its dim
-- negative indices count from the end (-1 is the last); a[#a + 1] is nil (the end of the sequence, so that
-- ipairs(a) stops there); any other index out of range is an error.

local function bad_index(where, d, n, i)
  raise(fmt("%s: index %s is out of range for dim %d (size %d)", where, show(i), d, n))
end

local function norm_index(where, i, d, n)
  local v = type(i) == "number" and tointeger(i)
  if not v then raise(fmt("%s: the index for dim %d must be an integer, got %s", where, d, show(i))) end
  local j = v < 0 and v + n + 1 or v
  if j < 1 or j > n then bad_index(where, d, n, i) end
  return j
end

local function norm_range(where, r, d, n)
  local len = #r
  if len > 2 or (len == 0 and next(r) ~= nil) then
    raise(fmt("%s: the range for dim %d must be {first, last} or {} (whole dim), got a table of %d entries",
      where, d, len))
  end
  if len == 0 then return nil end
  local f, l = r[1], r[2] == nil and r[1] or r[2]
  local fi, li = type(f) == "number" and tointeger(f), type(l) == "number" and tointeger(l)
  if not fi or not li then
    raise(fmt("%s: the range for dim %d must hold integers, got {%s, %s}", where, d, show(f), show(l)))
  end
  if fi < 0 then fi = fi + n + 1 end
  if li < 0 then li = li + n + 1 end
  if fi < 1 or fi > n + 1 or li < fi - 1 or li > n then
    raise(fmt("%s: range {%d, %d} is out of range for dim %d (size %d)", where, f, l, d, n))
  end
  return fi, li
end

--- The view of a that `spec` (a table: numbers, ranges, {}) picks, and whether every dim got a number.
local function view_of(where, a, spec)
  for k in pairs(spec) do
    if math_type(k) ~= "integer" or k < 1 or k > #spec then
      raise(fmt("%s: the table lists one entry per dim ({{1, 2}, {}, 3}); %s is not a dim position", where, show(k)))
    end
  end
  local shape = a:shape()
  local nd, n = #shape, #spec
  if n > nd then raise(fmt("%s: %d indices for a %d-D array", where, n, nd)) end
  local v, dim, numbers = a, 1, 0
  for k = 1, n do
    local s = spec[k]
    if type(s) == "number" then
      v = v:select(dim, norm_index(where, s, k, shape[k]))
      numbers = numbers + 1
    elseif type(s) == "table" and not is_array(s) then
      local f, l = norm_range(where, s, k, shape[k])
      if f then v = v:narrow(dim, f, l) end
      dim = dim + 1
    else
      raise(fmt("%s: index %d must be a number or a range {first, last}, got %s", where, k, show(s)))
    end
  end
  return v, numbers == nd
end

local INDEX, SETINDEX = where_of("a[i]"), where_of("a[i] = v")
local INDEX_T, SETINDEX_T = where_of("a[{...}]"), where_of("a[{...}] = v")

-- Called by the array metatable's __index (core.make_index, in C) for number and table keys that are not
-- method names.
local function index(a, k)
  local tk = type(k)
  if tk == "number" then
    check_live(INDEX, a, "the array")
    local nd = a:ndim()
    local n = nd == 0 and 1 or a:size(1)
    if k == n + 1 then return nil end
    local i = norm_index(INDEX, k, 1, n)
    if nd == 0 then return a:item() end
    local v = a:select(1, i)
    if nd == 1 then return v:item() end
    return v
  elseif not is_array(k) then
    check_live(INDEX, a, "the array")
    local v, all = view_of(INDEX_T, a, k)
    if all then return v:item() end
    return v
  end
  raise(INDEX .. ": indexing with an array (a mask or a list of indices) is not supported; " ..
    "for a mask use a:mul(mask), for single elements a[{i, j}]")
end

local function setindex(a, k, value)
  local where = SETINDEX
  local target
  local tk = type(k)
  if tk == "number" then
    check_live(where, a, "the array")
    local nd = a:ndim()
    local i = norm_index(where, k, 1, nd == 0 and 1 or a:size(1))
    target = nd == 0 and a or a:select(1, i)
  elseif tk == "table" and not is_array(k) then
    where = SETINDEX_T
    check_live(where, a, "the array")
    target = view_of(where, a, k)
  else
    raise(fmt("%s: cannot set %s on a cukern array (arrays take a[i] = v and a[{...}] = v; methods cannot be replaced)",
      where, show(k)))
  end
  if type(value) == "boolean" then
    raise(fmt("%s: the value must be a number or a cukern array, got %s (cukern has no bool dtype yet: write 1 or 0)",
      where, show(value)))
  end
  call(where, core.check_writable, target) -- the one message of every write path, before any other
  if type(value) == "number" then
    call(where, target.fill, target, value)
  elseif is_array(value) then
    check_live(where, value, "the value")
    if value:device() ~= a:device() then
      raise(fmt("%s: the value is on %s and the array on %s; move it first with v:to(\"%s\")", where, value:device(),
        a:device(), a:device()))
    end
    call(where, target.copy_, target, value) -- broadcast, and cast to a's dtype
  else
    raise(fmt("%s: the value must be a number or a cukern array, got %s", where, show(value)))
  end
end

MT.__index = core.make_index(M, index)
MT.__newindex = setindex

-- ---------------------------------------------------------------- methods written in Lua

do
  local cuda, host = where_of("a:cuda"), where_of("a:host")
  function M.cuda(a) check_array(cuda, a, "the array"); return call(cuda, a.to, a, "cuda") end
  function M.host(a) check_array(host, a, "the array"); return call(host, a.to, a, "host") end
end

do
  local where = where_of("a:slice")
  --- a:slice{{r1, r2}, {c1, c2}, 3, ...}: inclusive 1-based ranges per dim; {} (or a missing entry) keeps a dim
  -- whole; a number selects that index and drops the dim. Always a view (a[{...}] gives a number instead when
  -- every dim gets a number).
  function M.slice(a, spec)
    check_live(where, a, "the array")
    if type(spec) ~= "table" or is_array(spec) then
      raise(fmt("%s: takes a table such as {{1, 2}, {}, 3}, got %s", where, show(spec)))
    end
    return (view_of(where, a, spec))
  end
end

-- ---------------------------------------------------------------- ops

-- The ops used in loops (matmul, reductions, elementwise, operators) call the core first and check their
-- arguments only when it fails, to say precisely what was wrong: a successful call costs one pcall more than
-- calling the core directly. Options are checked before (only when given): the core ignores unknown keys.
local core_matmul, core_reduce, core_unary, core_binary = core.matmul, core.reduce, core.unary, core.binary

do
  local where = where_of("ck.matmul")
  function ck.matmul(a, b, opts)
    local out, variant, precision
    if opts ~= nil then opts = check_opts(where, opts, MATMUL); out, variant, precision = opts.out, opts.variant, opts.precision end
    local ok, r = pcall(core_matmul, a, b, out, 1, 0, variant, precision)
    if ok then return r end
    check_array(where, a, "argument 1 (a)")
    check_array(where, b, "argument 2 (b)")
    fail(where, r)
  end
end

do
  local where = where_of("ck.gemm")
  --- gemm(c, a, b [, alpha = 1 [, beta = 0]] [, opts]): c = alpha * a @ b + beta * c, in place.
  function ck.gemm(c, a, b, alpha, beta, opts)
    if is_opts(alpha) then alpha, beta, opts = nil, nil, alpha elseif is_opts(beta) then beta, opts = nil, beta end
    if c == nil then raise(where .. ": argument 1 (c) must be the output array (updated in place), got nil; use ck.matmul(a, b) for a new array") end
    check_array(where, c, "argument 1 (c)")
    check_array(where, a, "argument 2 (a)")
    check_array(where, b, "argument 3 (b)")
    alpha = check_number(where, alpha, "alpha", 1)
    beta = check_number(where, beta, "beta", 0)
    opts = check_opts(where, opts, GEMM)
    return call(where, core.matmul, a, b, c, alpha, beta, opts.variant, opts.precision)
  end
end

do
  local where = where_of("ck.transpose")
  function ck.transpose(a, opts)
    check_array(where, a, "argument 1")
    opts = check_opts(where, opts, OP)
    return call(where, core.transpose, a, opts.out, opts.variant)
  end
end

-- Reductions: ck.sum(a [, dim] [, opts]); max/min with a dim return values and 1-based indices.
for _, name in ipairs {"sum", "prod", "mean", "max", "min", "argmax", "argmin"} do
  local want_idx = name == "max" or name == "min"
  local arg = name == "argmax" or name == "argmin"
  local allowed = want_idx and REDUCE_IDX or REDUCE
  local function make(where, what)
    where_of(where)
    return function(a, dim, opts)
      if type(dim) == "table" and opts == nil and not is_array(dim) then dim, opts = nil, dim end
      local keepdim, variant, out, idx
      if opts ~= nil then
        opts = check_opts(where, opts, allowed)
        keepdim, variant, out, idx = opts.keepdim, opts.variant, opts.out, opts.idx
        if idx and dim == nil then
          raise(fmt("%s: option idx needs a dim (without one, %s reduces everything and gives no indices)", where, name))
        end
        if out and idx and out:storage_id() == idx:storage_id() then
          raise(where .. ": options out and idx must be different arrays")
        end
        if arg then out, idx = nil, out end -- argmax's result is the index array
      end
      local two = want_idx and dim ~= nil -- values and indices
      local ok, r1, r2 = pcall(core_reduce, name, a, dim, keepdim, variant, two, out, idx)
      if ok then
        if two then return r1, r2 end
        return r1
      end
      check_live(where, a, what)
      if dim ~= nil then check_dim(where, a, dim) end
      fail(where, r1)
    end
  end
  ck[name] = make("ck." .. name, "argument 1")
  M[name] = make("a:" .. name, "the array")
end

-- Elementwise: functions, methods and in-place methods for every op the core lists (core.ew_ops()).
-- The core takes an op by name or by id (its row in core.ew_ops(), from 0); the functions made here pass
-- the id, which costs the core no string compares.
ck.unary_ops, ck.binary_ops = {}, {}
local EW_ID = {}
for i, op in ipairs(core.ew_ops()) do EW_ID[op.name] = i - 1 end

local function unary_fn(name, where, inplace)
  where_of(where)
  local id = EW_ID[name]
  local what = where:match("^a:") and "the array" or "argument 1"
  local allowed = inplace and INPLACE or OP
  return function(a, opts)
    local out, variant
    if opts ~= nil then opts = check_opts(where, opts, allowed); out, variant = opts.out, opts.variant end
    if inplace then out = a end
    local ok, r = pcall(core_unary, id, a, out, 0, 0, variant)
    if ok then return r end
    check_array(where, a, what)
    fail(where, r)
  end
end

local function binary_fn(name, where, inplace)
  where_of(where)
  local id = EW_ID[name]
  local method = where:match("^a:") ~= nil
  local what1, what2 = method and "the array" or "argument 1", method and "argument 1" or "argument 2"
  local allowed = inplace and INPLACE or OP
  return function(a, b, opts)
    local out, variant
    if opts ~= nil then opts = check_opts(where, opts, allowed); out, variant = opts.out, opts.variant end
    if inplace then out = a end
    local ok, r = pcall(core_binary, id, a, b, out, variant)
    if ok then return r end
    if method then check_array(where, a, what1) else check_operand(where, a, what1) end
    check_operand(where, b, what2)
    if type(a) == "number" and type(b) == "number" then
      raise(fmt("%s: at least one operand must be a cukern array (both are numbers)", where))
    end
    fail(where, r)
  end
end

for _, op in ipairs(core.ew_ops()) do
  local name = op.name
  local make = op.lua == "unary" and unary_fn or op.lua == "binary" and binary_fn or nil
  if make then
    local list = op.lua == "unary" and ck.unary_ops or ck.binary_ops
    list[#list + 1] = name
    ck[name] = make(name, "ck." .. name)
    M[name] = make(name, "a:" .. name)
    M[name .. "_"] = make(name, "a:" .. name .. "_", true)
  end
end

-- a:sub(b) is subtraction like a:add(b); slicing is a:slice{...} or a[{...}] (a:sub{...} was slicing once).
do
  local where, sub = "a:sub", M.sub
  function M.sub(a, b, ...)
    if type(b) == "table" and not is_array(b) then
      raise(where .. ": a:sub(b) subtracts (like a:add, a:mul); to take a part of an array use a:slice{...} or a[{...}]")
    end
    return sub(a, b, ...)
  end
end

local pow_impl
do
  local where = where_of("ck.pow")
  --- pow(a, b): b a number (a .^ s) or an array (elementwise, broadcast).
  local function pow(where_, a, b, opts)
    check_operand(where_, a, "argument 1")
    check_operand(where_, b, "argument 2")
    if type(a) == "number" and type(b) == "number" then
      raise(fmt("%s: at least one operand must be a cukern array (both are numbers)", where_))
    end
    opts = check_opts(where_, opts, OP)
    if type(b) == "number" then return call(where_, core.unary, "pows", a, opts.out, b, 0, opts.variant) end
    return call(where_, core.binary, "pow", a, b, opts.out, opts.variant)
  end
  function ck.pow(a, b, opts) return pow(where, a, b, opts) end
  local mwhere, iwhere = where_of("a:pow"), where_of("a:pow_")
  function M.pow(a, b, opts) check_array(mwhere, a, "the array"); return pow(mwhere, a, b, opts) end
  function M.pow_(a, b, opts)
    check_array(iwhere, a, "the array")
    check_operand(iwhere, b, "argument 1")
    opts = check_opts(iwhere, opts, INPLACE)
    if type(b) == "number" then return call(iwhere, core.unary, "pows", a, a, b, 0, opts.variant) end
    return call(iwhere, core.binary, "pow", a, b, a, opts.variant)
  end
  pow_impl = pow
end

do
  -- Both bounds are required (-math.huge / math.huge leave a side open; ck.maximum / ck.minimum take one), and
  -- a NaN bound is an error: it would bound nothing.
  local function clamp(where, a, lo, hi, out, variant)
    for _, b in ipairs {{"lo", lo}, {"hi", hi}} do
      local v = b[2]
      if type(v) ~= "number" then
        raise(fmt("%s: %s must be a number, got %s (both bounds are needed; use -math.huge or math.huge for an " ..
          "open side, or ck.maximum / ck.minimum)", where, b[1], show(v)))
      end
      if v ~= v then raise(fmt("%s: %s is NaN; a bound must be a number or +-math.huge", where, b[1])) end
    end
    return call(where, core.unary, "clamp", a, out, lo, hi, variant)
  end
  local where, mwhere, iwhere = where_of("ck.clamp"), where_of("a:clamp"), where_of("a:clamp_")
  function ck.clamp(a, lo, hi, opts)
    check_array(where, a, "argument 1")
    opts = check_opts(where, opts, OP)
    return clamp(where, a, lo, hi, opts.out, opts.variant)
  end
  function M.clamp(a, lo, hi, opts)
    check_array(mwhere, a, "the array")
    opts = check_opts(mwhere, opts, OP)
    return clamp(mwhere, a, lo, hi, opts.out, opts.variant)
  end
  function M.clamp_(a, lo, hi, opts)
    check_array(iwhere, a, "the array")
    opts = check_opts(iwhere, opts, INPLACE)
    return clamp(iwhere, a, lo, hi, a, opts.variant)
  end
end

-- ---------------------------------------------------------------- whole-array comparisons

do
  local where = where_of("ck.equal")
  --- equal(a, b) -> true when a and b have the same shape and equal values (NaN is not equal to NaN, as in
  -- NumPy's array_equal); dtypes and devices may differ.
  function ck.equal(a, b)
    check_live(where, a, "argument 1")
    check_live(where, b, "argument 2")
    local sa, sb = a:shape(), b:shape()
    if #sa ~= #sb then return false end
    for i = 1, #sa do if sa[i] ~= sb[i] then return false end end
    if a:numel() == 0 then return true end
    if b:device() ~= a:device() then b = call(where, b.to, b, a:device()) end
    return call(where, core.reduce, "max", call(where, core.binary, "ne", a, b)):item() == 0
  end
end

do
  local where = where_of("ck.allclose")
  --- allclose(a, b [, rtol = 1e-5 [, atol = 1e-8]]) -> true when |a - b| <= atol + rtol * |b| everywhere
  -- (NumPy's rule and defaults; b may be a number or broadcast; NaN is never close; equal infinities are).
  function ck.allclose(a, b, rtol, atol)
    check_live(where, a, "argument 1")
    check_operand(where, b, "argument 2")
    rtol = check_number(where, rtol, "rtol", 1e-5)
    atol = check_number(where, atol, "atol", 1e-8)
    if rtol < 0 or atol < 0 then raise(where .. ": rtol and atol must be >= 0") end
    local fa = call(where, a.to, a, "f64")
    local fb = b
    if is_array(b) then
      fb = call(where, b.to, b, a:device(), "f64")
    end
    local diff = call(where, core.unary, "abs", call(where, core.binary, "sub", fa, fb))
    local tol = type(fb) == "number" and atol + rtol * math.abs(fb)
      or call(where, core.binary, "add", call(where, core.binary, "mul", call(where, core.unary, "abs", fb), rtol), atol)
    local ok = call(where, core.binary, "maximum", call(where, core.binary, "le", diff, tol),
      call(where, core.binary, "eq", fa, fb))
    if ok:numel() == 0 then return true end
    return call(where, core.reduce, "min", ok):item() == 1
  end
end

-- ---------------------------------------------------------------- operators
-- MATLAB conventions: * is the matrix product (a number on either side scales), the rest are elementwise.
-- Lua 5.4 semantics: / always gives a float result (an i32 array gives f64, as NumPy's true divide), // is
-- floor division and % the modulo with the divisor's sign (Lua's rules); ==, <, <= and .. cannot be
-- elementwise in Lua (see docs/api.md): use a:eq(b), a:lt(b), ... and ck.equal(a, b).

local function operands(where, a, b)
  check_operand(where, a, "the left operand")
  check_operand(where, b, "the right operand")
end

local function binop(name, where)
  where_of(where)
  local id = EW_ID[name]
  return function(a, b)
    local ok, r = pcall(core_binary, id, a, b)
    if ok then return r end
    operands(where, a, b)
    fail(where, r)
  end
end

MT.__add = binop("add", "a + b")
MT.__sub = binop("sub", "a - b")
MT.__idiv = binop("idiv", "a // b")
MT.__mod = binop("mod", "a % b")

do
  local where = where_of("a / b")
  local dtype, EW_DIV = M.dtype, EW_ID.div
  -- An i32 array divided by a number or another i32 array divides in f64 (with a float array, the core
  -- promotes the i32 side to that float dtype).
  local function div(a, b)
    local da = type(a) ~= "number" and dtype(a)
    local db = type(b) ~= "number" and dtype(b)
    if (da == "i32" or not da) and (db == "i32" or not db) then
      if da then a = a:to("f64") end
      if db then b = b:to("f64") end
    end
    return core_binary(EW_DIV, a, b)
  end
  MT.__div = function(a, b)
    local ok, r = pcall(div, a, b)
    if ok then return r end
    operands(where, a, b)
    if type(a) ~= "number" then check_live(where, a, "the left operand") end
    if type(b) ~= "number" then check_live(where, b, "the right operand") end
    fail(where, r)
  end
end

do
  local where = where_of("-a")
  MT.__unm = function(a)
    local ok, r = pcall(core_unary, EW_ID.neg, a)
    if ok then return r end
    check_array(where, a, "the operand")
    fail(where, r)
  end
end

do
  local where = where_of("a ^ b")
  MT.__pow = function(a, b) return pow_impl(where, a, b) end
end

do
  local where = where_of("a * b")
  local EW_MUL = EW_ID.mul
  local function mul(a, b)
    if type(a) == "number" or type(b) == "number" then return core_binary(EW_MUL, a, b) end
    return core_matmul(a, b)
  end
  MT.__mul = function(a, b)
    local ok, r = pcall(mul, a, b)
    if ok then return r end
    operands(where, a, b)
    fail(where, r)
  end
end

for k in pairs(M) do where_of("a:" .. k) end -- C methods' own names, relabelled when used from here

MT.__eq = nil -- arrays compare by identity; ck.equal(a, b) compares values, a:eq(b) elementwise

local function refuse(where, why) where_of(where); return function() raise(where .. ": " .. why) end end
MT.__lt = refuse("a < b", "Lua turns the result of < into one boolean, so it cannot compare elementwise; " ..
  "use a:lt(b) (1 where a < b, else 0), or ck.equal / ck.allclose for whole arrays")
MT.__le = refuse("a <= b", "Lua turns the result of <= into one boolean, so it cannot compare elementwise; " ..
  "use a:le(b) (1 where a <= b, else 0)")
MT.__concat = refuse("a .. b", "`..` joins strings and is not defined for arrays; for text use " ..
  "tostring(a) .. s; to join arrays copy them into views: c[{{1, n}}] = a")
for mm, op in pairs {__band = "&", __bor = "|", __bxor = "~", __shl = "<<", __shr = ">>"} do
  MT[mm] = refuse("a " .. op .. " b", "bitwise operators are not defined for cukern arrays")
end
MT.__bnot = refuse("~a", "bitwise operators are not defined for cukern arrays")

-- ---------------------------------------------------------------- display

local function fmt_values(vals, dtype)
  local strs, allint, maxabs, minabs = {}, true, 0, math.huge
  for _, v in ipairs(vals) do
    if v ~= v or v == math.huge or v == -math.huge then allint = false
    else
      if v ~= math.floor(v) then allint = false end
      local av = math.abs(v)
      if av > maxabs then maxabs = av end
      if av > 0 and av < minabs then minabs = av end
    end
  end
  local f
  if dtype == "i32" or (allint and maxabs < 1e9) then f = "%d"
  elseif maxabs >= 1e5 or minabs < 1e-3 then f = "%.4e"
  else f = "%.4f" end
  local w = 0
  for i, v in ipairs(vals) do
    local s
    if v ~= v then s = "NaN" elseif v == math.huge then s = "Inf" elseif v == -math.huge then s = "-Inf"
    elseif f == "%d" then s = fmt("%d", math.tointeger(v) or v) else s = fmt(f, v) end
    strs[i] = s
    if #s > w then w = #s end
  end
  return strs, w
end

local EDGE = 3 -- elements kept at each end of a long dim

-- Values of a (possibly large) array: kept indices per dim and a lookup of their values. Large arrays are
-- read corner by corner (2^k small reads) so that printing never copies the whole array to the host.
local function gather(a)
  local shape, nd = a:shape(), a:ndim()
  -- per dim: how many indices to show at each end (nil: all). Long dims keep EDGE at each end; the leading
  -- dims of a large array keep only their first and last slice, so printing stays short at any ndim.
  local large = a:numel() > 1000
  local keep, head = {}, {}
  for d = 1, nd do
    local n, h = shape[d], (large and d <= nd - 2) and 1 or EDGE
    local k = {}
    if n > 2 * h + 1 then
      head[d] = h
      for i = 1, h do k[#k + 1] = i end
      k[#k + 1] = false -- the ellipsis
      for i = n - h + 1, n do k[#k + 1] = i end
    else
      for i = 1, n do k[i] = i end
    end
    keep[d] = k
  end
  if a:numel() <= 4096 then
    local flat, strides = a:flat(), {}
    local s = 1
    for d = nd, 1, -1 do strides[d] = s; s = s * shape[d] end
    return keep, function(idx)
      local p = 1
      for d = 1, nd do p = p + (idx[d] - 1) * strides[d] end
      return flat[p]
    end
  end
  -- corners: for each elided dim, its head or its tail block (2^k small reads, never the whole array)
  local big, lookup = {}, {}
  for d = 1, nd do if head[d] then big[#big + 1] = d end end
  for mask = 0, (1 << #big) - 1 do
    local v, lo = a, {}
    for d = 1, nd do lo[d] = 1 end
    for j, d in ipairs(big) do
      local tail = (mask >> (j - 1)) & 1 == 1
      lo[d] = tail and shape[d] - head[d] + 1 or 1
      v = v:narrow(d, lo[d], lo[d] + head[d] - 1)
    end
    lookup[mask] = {lo = lo, flat = v:flat(), shape = v:shape()}
  end
  return keep, function(idx)
    local mask = 0
    for j, d in ipairs(big) do if idx[d] > head[d] then mask = mask | (1 << (j - 1)) end end
    local c = lookup[mask]
    local p, s = 1, 1
    for d = nd, 1, -1 do p = p + (idx[d] - c.lo[d]) * s; s = s * c.shape[d] end
    return c.flat[p]
  end
end

local function format(a)
  if a:is_freed() then return "cukern.array (freed)" end
  local shape, nd = a:shape(), a:ndim()
  local head = fmt("cukern.array %s [%s] strides {%s} %s%s", a:dtype(), concat(shape, "x"),
    concat(a:strides(), ","), a:device(), a:is_contiguous() and "" or " (not contiguous)")
  if a:numel() == 0 then return head .. "\n  (empty)" end
  if nd == 0 then
    local s = fmt_values({a:item()}, a:dtype())
    return head .. "\n  " .. s[1]
  end
  local keep, val = gather(a)
  -- collect every displayed value first, so that the columns share one width
  local rows, cells = {}, {}
  local lead = {}
  for d = 1, nd - 2 do lead[d] = keep[d] end
  local function each_slice(d, idx, fn)
    if d > nd - 2 then return fn(idx) end
    for _, i in ipairs(lead[d]) do
      local c = {table.unpack(idx)}
      c[d] = i
      each_slice(d + 1, c, fn)
    end
  end
  local rk = nd >= 2 and keep[nd - 1] or {1}
  local ck_ = keep[nd]
  local blocks = {}
  each_slice(1, {}, function(idx)
    local elided = false
    for d = 1, nd - 2 do if idx[d] == false then elided = true end end
    local blk = {title = nil, rows = {}}
    if nd > 2 then
      local t = {}
      for d = 1, nd - 2 do t[d] = idx[d] == false and "..." or tostring(idx[d]) end
      blk.title = elided and "  ..." or fmt("  (%s,:,:) =", concat(t, ","))
    end
    if not elided then
      for _, r in ipairs(rk) do
        local row = {}
        for _, c in ipairs(ck_) do
          if r == false or c == false then row[#row + 1] = false
          else
            local full = {table.unpack(idx)}
            if nd >= 2 then full[nd - 1] = r end
            full[nd] = c
            cells[#cells + 1] = val(full)
            row[#row + 1] = #cells
          end
        end
        blk.rows[#blk.rows + 1] = row
      end
    end
    blocks[#blocks + 1] = blk
  end)
  local strs, w = fmt_values(cells, a:dtype())
  local out = {head}
  for _, blk in ipairs(blocks) do
    if blk.title then out[#out + 1] = blk.title end
    for _, row in ipairs(blk.rows) do
      local line = {}
      for j, c in ipairs(row) do line[j] = c and fmt("%" .. w .. "s", strs[c]) or fmt("%" .. w .. "s", "...") end
      out[#out + 1] = "  " .. concat(line, "  ")
    end
  end
  return concat(out, "\n")
end
MT.__tostring = format
do
  local where = where_of("ck.format")
  --- format(a) -> the text tostring(a) and the REPL show.
  function ck.format(a)
    if not is_array(a) then raise(fmt("%s: argument 1 must be a cukern array, got %s", where, show(a))) end
    return format(a)
  end
end

-- ---------------------------------------------------------------- run-time kernels

do
  local where = where_of("ck.kernel")
  --- ck.kernel(source, entry, signature [, nvrtc_options]) compiles CUDA C++ at run time (NVRTC) for this GPU.
  -- signature lists the parameter types: "f32*", "const f64*", "i32*", "void*", "f32", "f64", "i32", "i64", "u32".
  -- Launch with k:launch(grid, block, args... [, {smem = bytes}]); arrays pass their device pointer (with offset).
  function ck.kernel(src, entry, sig, options)
    if type(src) ~= "string" then raise(fmt("%s: source must be a string of CUDA C++, got %s", where, show(src))) end
    if type(entry) ~= "string" then raise(fmt("%s: entry must be the kernel's name, got %s", where, show(entry))) end
    if type(sig) ~= "table" then
      raise(fmt("%s: signature must be a table of parameter types such as {\"f32*\", \"i64\"}, got %s", where, show(sig)))
    end
    if options ~= nil and type(options) ~= "table" and type(options) ~= "string" then
      raise(fmt("%s: nvrtc options must be a table or a string, got %s", where, show(options)))
    end
    return call(where, core.kernel, src, entry, sig, type(options) == "table" and concat(options, " ") or options)
  end
end

-- ---------------------------------------------------------------- benchmarks (lazy: cukern.bench is optional)

do
  local bw, lw = where_of("ck.bench"), where_of("ck.launch_overhead")
  function ck.bench(o)
    if type(o) ~= "table" then raise(fmt("%s: takes a table {spec = {...}, reps = ...}, got %s", bw, show(o))) end
    return call(bw, function(...) return require("cukern.bench").run(...) end, o)
  end
  function ck.launch_overhead(o)
    if o ~= nil and type(o) ~= "table" then raise(fmt("%s: takes nil or a table {n = ...}, got %s", lw, show(o))) end
    return call(lw, function(...) return require("cukern.bench").launch_overhead(...) end, o)
  end
end

-- ---------------------------------------------------------------- CUDA graphs

do
  local where = where_of("ck.graph")
  --- ck.graph(fn, ...): runs fn(...) once while recording the device work it issues into a CUDA graph, and
  -- returns the graph: g:replay() launches all of it again with one launch (g:nodes() counts the kernels and
  -- copies recorded). The arrays fn creates stay alive with the graph (their memory is what the replay
  -- writes), and so do the arrays it reads: change their contents between replays with copy_/fill, not by
  -- rebinding. Inside fn only device work is allowed: host arrays, reading values (item, totable, print) and
  -- ck.sync() raise an error, and the capture is abandoned. Random numbers are drawn at capture time, so
  -- every replay repeats them.
  function ck.graph(fn, ...)
    if type(fn) ~= "function" then raise(fmt("%s: argument 1 must be a function, got %s", where, show(fn))) end
    call(where, core.graph_begin)
    local ok, err = pcall(fn, ...)
    if not ok then
      core.graph_abort()
      if type(err) == "string" then raise(where .. ": the function failed while recording: " .. clean(err)) end
      error(err, 0)
    end
    return call(where, core.graph_end)
  end
end

require("cukern.io").install(ck) -- ck.save, ck.savez, ck.load (lua/cukern/io.lua)
require("cukern.map").install(ck) -- ck.map, ck.reduce_map, ck.kernel_build, ... (lua/cukern/map.lua)

return ck
