--- cukern.creation: the functions that make arrays: ck.empty, zeros, ones, full, eye, arange, linspace, rand,
-- randn, randint, array, scalar. Shapes are given as dims or one table of dims, options last
-- ({dtype =, device =}); every argument is checked here, so that the core's errors are about the data.
local core = require "cukern.core"
local errors, args = require "cukern.errors", require "cukern.args"
local raise, call, where_of = errors.raise, errors.call, errors.where_of
local is_array, show, is_opts, is_trailing_opts = args.is_array, args.show, args.is_opts, args.is_trailing_opts
local check_live, check_count, check_opts, CREATE = args.check_live, args.check_count, args.check_opts, args.CREATE

local C = {}
local type, select, ipairs, tointeger = type, select, ipairs, math.tointeger
local fmt = string.format

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

-- (pinned = true: page-locked host memory, for asynchronous copies; ordinary host memory without a GPU)
local function new(where, shape, opts)
  if opts.pinned then return call(where, core.empty_pinned, shape, opts.dtype, opts.device or "host") end
  return call(where, core.empty, shape, opts.dtype, opts.device)
end

local STORAGE = {bool = true, u8 = true, i8 = true, i16 = true, u32 = true, i64 = true} -- no arithmetic yet
local MAX_COUNT = 2 ^ 53 -- element counts past this are not exact in a double (and would not fit anyway)

-- An i32 result must hold its first and last values (the others lie between): past +-2^31 the cast would
-- give INT32_MIN silently.
-- (the same for the other integer dtypes, issue 32)
local INT_RANGE = {i32 = {-2 ^ 31, 2 ^ 31 - 1, "-2^31 .. 2^31-1"}, u8 = {0, 255, "0 .. 255"},
  i8 = {-128, 127, "-128 .. 127"}, i16 = {-32768, 32767, "-32768 .. 32767"}, u32 = {0, 2 ^ 32 - 1, "0 .. 2^32-1"},
  i64 = {-2 ^ 63, 2 ^ 63, "-2^63 .. 2^63-1"}}
local function check_i32_range(where, r, first, last)
  local dt = r:dtype()
  local range = INT_RANGE[dt]
  if not range then return end
  for _, v in ipairs {first, last} do
    if v < range[1] or v > range[2] or (dt == "i64" and v + 0.0 >= 2 ^ 63) then
      r:free()
      raise(fmt("%s: value %s does not fit in %s (%s); use a float dtype", where, show(v), dt, range[3]))
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

function C.install(ck)
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
      if type(value) == "boolean" and o.dtype == nil then o.dtype = "bool" end
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
      if dtype == "f64" then return r end
      if STORAGE[dtype] and r:device() ~= "host" then -- (no cuda kernel casts to them yet: cast on the host)
        return call(where, r.to, call(where, r.to, r, "host", dtype), r:device())
      end
      return call(where, r.to, r, dtype)
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
        if ty ~= "boolean" then
          raise(fmt("%s: argument 1 must be a (nested) table of numbers or booleans, a number, a boolean or an array, "
            .. "got %s", where, show(t)))
        end
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
  return ck
end

return C
