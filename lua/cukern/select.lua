--- cukern.select (issue 32): selection and masks — ck.index_select, gather, take, scatter, scatter_add,
-- index_add, index_copy, put, where, masked_select, nonzero, find, count_nonzero and their methods
-- (a:gather, a:scatter_, a:masked_fill_, ...). Each is one or two calls of the core's index op
-- (core.index -> ck_run -> src/ops/op_index.c -> kernels/index/), named here as the user wrote it.
-- Dims and indices are 1-based; index arrays are i32 or i64, masks bool. Functional forms (ck.scatter, ck.put,
-- ...) return a new array; methods ending in _ write into the array and return it. Numbers given as values
-- become 0-d arrays of the destination's dtype (one value broadcast), so the kernels only ever move elements.
local errors, args = require "cukern.errors", require "cukern.args"
local core = require "cukern.core"
local raise, call, where_of = errors.raise, errors.call, errors.where_of
local is_array, show, check_live = args.is_array, args.show, args.check_live

local S = {}
local type, tointeger, select = type, math.tointeger, select
local fmt, concat = string.format, table.concat
local ck

local function shape_str(s) return "[" .. concat(s, "x") .. "]" end

--- dim d of an nd-D array (1-based, negative from the end) as 0-based.
local function dim0(where, nd, d)
  local v = type(d) == "number" and tointeger(d)
  if not v then raise(fmt("%s: dim must be an integer, got %s", where, show(d))) end
  local top = nd == 0 and 1 or nd
  if v == 0 or v > top or v < -top then
    raise(fmt("%s: dim out of range: %d for a %d-D array (1..%d, or -%d..-1 from the end)", where, v, nd, top, top))
  end
  return v < 0 and v + top or v - 1
end

local function arr(where, a, what)
  check_live(where, a, what)
  return a
end

local function same_device(where, a, b, an, bn)
  if a:device() ~= b:device() then
    raise(fmt("%s: %s is on %s and %s on %s; cukern does not copy implicitly: move it with :to(\"%s\")", where, an,
      a:device(), bn, b:device(), a:device()))
  end
end

--- An index argument: a live i32/i64 array on a's device.
local function index_arg(where, a, ix)
  if not is_array(ix) then
    raise(fmt("%s: the index must be an i32 or i64 array of 1-based indices, got %s", where, show(ix)))
  end
  check_live(where, ix, "the index")
  local dt = ix:dtype()
  if dt ~= "i32" and dt ~= "i64" then
    raise(fmt("%s: the index is %s %s; indices are 1-based i32 or i64 arrays (cast with idx:to(\"i64\"))", where, dt,
      shape_str(ix:shape())))
  end
  same_device(where, a, ix, "the array", "the index")
  return ix
end

--- A mask argument: a live bool array on a's device.
local function mask_arg(where, a, m, what)
  what = what or "the mask"
  if not is_array(m) then raise(fmt("%s: %s must be a bool array, got %s", where, what, show(m))) end
  check_live(where, m, what)
  if m:dtype() ~= "bool" then
    raise(fmt("%s: %s is %s %s; masks are bool arrays (a comparison such as a:gt(0), or m:to(\"bool\"))", where, what,
      m:dtype(), shape_str(m:shape())))
  end
  same_device(where, a, m, "the array", what)
  return m
end

--- A value for a destination of dtype dt on dev: an array (checked), or a number/boolean as a 0-d array.
local function value_arg(where, a, v, what)
  if is_array(v) then
    check_live(where, v, what)
    same_device(where, a, v, "the array", what)
    return v
  end
  if type(v) == "boolean" then v = v and 1 or 0 end
  if type(v) ~= "number" then raise(fmt("%s: %s must be a number or a cukern array, got %s", where, what, show(v))) end
  return ck.full({}, v, {dtype = a:dtype(), device = a:device()})
end

local function run(where, fn, a, ix, b, out, d) return call(where, core.index, fn, a, ix, b, out, d) end

-- ---------------------------------------------------------------- selection
local function index_select(where, a, dim, ix)
  arr(where, a, "the array")
  local d = dim0(where, a:ndim(), dim)
  index_arg(where, a, ix)
  if ix:ndim() > 1 then raise(fmt("%s: the index must be 1-D, got %s", where, shape_str(ix:shape()))) end
  return run(where, "index_select", a, ix, nil, nil, d)
end

local function gather(where, a, dim, ix)
  arr(where, a, "the array")
  local d = dim0(where, a:ndim(), dim)
  index_arg(where, a, ix)
  return run(where, "gather", a, ix, nil, nil, d)
end

local function take(where, a, ix)
  arr(where, a, "the array")
  index_arg(where, a, ix)
  return run(where, "take", a, ix, nil, nil, 0)
end

-- ---------------------------------------------------------------- scatters (in place; the functional forms copy)
local function scatter_(fn)
  return function(where, a, dim, ix, src)
    arr(where, a, "the array")
    local d = dim0(where, a:ndim(), dim)
    index_arg(where, a, ix)
    if (fn == "index_add" or fn == "index_copy") and ix:ndim() > 1 then
      raise(fmt("%s: the index must be 1-D, got %s", where, shape_str(ix:shape())))
    end
    run(where, fn, nil, ix, value_arg(where, a, src, "the source"), a, d)
    return a
  end
end

local function put_(where, a, ix, src)
  arr(where, a, "the array")
  index_arg(where, a, ix)
  run(where, "put", nil, ix, value_arg(where, a, src, "the source"), a, 0)
  return a
end

-- ---------------------------------------------------------------- masks, where
--- The dtype of where's result: arrays promote (ck_promote, through a sum of empty arrays); a number follows the
-- array it meets (an integral one keeps an integer or bool dtype; another gives f64 there); two numbers give f32.
local function where_dtype(x, y)
  local xa, ya = is_array(x), is_array(y)
  if xa and ya then
    if x:dtype() == y:dtype() then return x:dtype() end
    return ck.add(ck.empty({0}, {dtype = x:dtype(), device = x:device()}),
      ck.empty({0}, {dtype = y:dtype(), device = x:device()})):dtype()
  end
  local a, n = xa and x or ya and y, xa and y or x
  if not a then return "f32" end
  local dt = a:dtype()
  if dt:match("^f") or dt:match("^bf") or tointeger(n) then
    if dt == "bool" and not (n == 0 or n == 1) then return "i32" end
    return dt
  end
  return "f64"
end

local function where(where_, cond, x, y)
  local w = where_
  -- three arrays (the common call) go to the core at once: it checks all of it (live, one device, a bool condition,
  -- promotion, broadcasting) and writes nothing when it refuses; the checks below then run for their messages. On a
  -- GPU the Lua checks were half of where's host time (11 us a call on an H200, round 3 session 13)
  if is_array(cond) and is_array(x) and is_array(y) then
    local ok, r = pcall(core.index, "where", x, cond, y, nil, 0)
    if ok then return r end
  end
  if x == nil and y == nil then return ck.nonzero(cond) end
  if not is_array(cond) then raise(fmt("%s: the condition must be a bool array, got %s", w, show(cond))) end
  check_live(w, cond, "the condition")
  mask_arg(w, cond, cond, "the condition")
  for i, v in ipairs {x, y} do
    if not is_array(v) and type(v) ~= "number" then
      raise(fmt("%s: %s must be an array or a number, got %s", w, i == 1 and "x" or "y", show(v)))
    end
  end
  local dt = where_dtype(x, y)
  local function as(v, name)
    if is_array(v) then
      check_live(w, v, name)
      same_device(w, cond, v, "the condition", name)
      return v
    end
    return ck.full({}, v, {dtype = dt, device = cond:device()})
  end
  return run(w, "where", as(x, "x"), cond, as(y, "y"), nil, 0)
end

local function masked_fill_(where_, a, mask, v)
  arr(where_, a, "the array")
  mask_arg(where_, a, mask)
  local ms, as = mask:shape(), a:shape()
  local ok = #ms <= #as
  for k = 1, #ms do
    local m, s = ms[#ms - k + 1], as[#as - k + 1]
    if m ~= s and m ~= 1 then ok = false end
  end
  if not ok then
    raise(fmt("%s: the mask is %s and the array %s; the mask must broadcast to the array's shape", where_,
      shape_str(ms), shape_str(as)))
  end
  local val = value_arg(where_, a, v, "the value")
  if val:numel() ~= 1 then raise(fmt("%s: the value must be one number (or a 1-element array), got %s", where_, shape_str(val:shape()))) end
  if val:ndim() > 0 then val = val:reshape({}) end
  if val:dtype() ~= a:dtype() then val = val:to(a:dtype()) end
  call(where_, core.check_writable, a)
  run(where_, "where", val, mask, a, a, 0)
  return a
end

--- The shapes of a and mask broadcast together (views; masked_select takes torch's broadcasting).
local function broadcast2(where_, a, m)
  if shape_str(a:shape()) == shape_str(m:shape()) then return a, m end
  local sa, sm = a:shape(), m:shape()
  local nd = math.max(#sa, #sm)
  local s = {}
  for k = 1, nd do
    local x, y = sa[#sa - nd + k] or 1, sm[#sm - nd + k] or 1
    if x ~= y and x ~= 1 and y ~= 1 then
      raise(fmt("%s: the mask is %s and the array %s; they do not broadcast", where_, shape_str(sm), shape_str(sa)))
    end
    s[k] = x == 1 and y or x
  end
  return a:expand(s), m:expand(s)
end

--- The compactions are one core call each (core.compact: the count, the output at its size, the selection; on a GPU
-- the count comes back through pinned memory the reduction writes, src/ops/op_index.c).
local function masked_select(where_, a, mask)
  arr(where_, a, "the array")
  mask_arg(where_, a, mask)
  local x, m = broadcast2(where_, a, mask)
  return call(where_, core.compact, "masked_select", x, m)
end

local function nonzero(where_, a, linear)
  arr(where_, a, "the array")
  if a:ndim() == 0 then a = a:reshape({1}) end
  return call(where_, core.compact, linear and "find" or "nonzero", nil, a)
end

S.index_arg, S.mask_arg = index_arg, mask_arg

--- a[mask] (a 1-D copy of the selected elements, row-major) and a[mask] = v (v a number, a 1-element array or
-- an array of one element per selected element, in row-major order); the mask has a's shape.
function S.mask_get(where_, a, mask)
  mask_arg(where_, a, mask)
  if shape_str(mask:shape()) ~= shape_str(a:shape()) then
    raise(fmt("%s: the mask is %s and the array %s; a[mask] takes a mask of the array's shape", where_,
      shape_str(mask:shape()), shape_str(a:shape())))
  end
  return masked_select(where_, a, mask)
end

function S.mask_set(where_, a, mask, v)
  mask_arg(where_, a, mask)
  if shape_str(mask:shape()) ~= shape_str(a:shape()) then
    raise(fmt("%s: the mask is %s and the array %s; a[mask] = v takes a mask of the array's shape", where_,
      shape_str(mask:shape()), shape_str(a:shape())))
  end
  if not is_array(v) or v:numel() == 1 then return masked_fill_(where_, a, mask, is_array(v) and v:reshape({}) or v) end
  check_live(where_, v, "the value")
  local pos = nonzero(where_, mask, true)
  if v:numel() ~= pos:numel() then
    raise(fmt("%s: the mask selects %d elements but the value has %d (%s); give one value per selected element or one number",
      where_, pos:numel(), v:numel(), shape_str(v:shape())))
  end
  return put_(where_, a, pos, v)
end

--- a[idx] and a[{..., idx, ...}] with one index array: index_select along its dim of the view the rest picks;
-- the assignment is index_copy_ into that view (a number or an array broadcast to the selection).
function S.array_get(where_, v, d, ix)
  index_arg(where_, v, ix)
  if ix:ndim() > 1 then raise(fmt("%s: an index array inside a[...] must be 1-D, got %s", where_, shape_str(ix:shape()))) end
  return run(where_, "index_select", v, ix, nil, nil, d - 1)
end

function S.array_set(where_, v, d, ix, value)
  index_arg(where_, v, ix)
  if ix:ndim() > 1 then raise(fmt("%s: an index array inside a[...] must be 1-D, got %s", where_, shape_str(ix:shape()))) end
  call(where_, core.check_writable, v)
  local src = value_arg(where_, v, value, "the value")
  if src:ndim() > 0 then
    local s = v:shape()
    s[d] = ix:numel()
    src = call(where_, src.expand, src, s)
  end
  run(where_, "index_copy", nil, ix, src, v, d - 1)
end

function S.install(target)
  ck = target
  local M = core.methods
  local scatter, scatter_add, index_add, index_copy = scatter_("scatter"), scatter_("scatter_add"),
    scatter_("index_add"), scatter_("index_copy")
  local function copying(f) return function(w, a, ...) arr(w, a, "the array"); return f(w, a:clone(), ...) end end
  -- name = {function, the most arguments, method name (nil: none)}
  local FNS = {
    index_select = {index_select, 3, "index_select"}, gather = {gather, 3, "gather"}, take = {take, 2, "take"},
    scatter = {copying(scatter), 4}, scatter_add = {copying(scatter_add), 4}, index_add = {copying(index_add), 4},
    index_copy = {copying(index_copy), 4}, put = {copying(put_), 3},
    where = {where, 3}, masked_select = {masked_select, 2, "masked_select"},
    nonzero = {function(w, a) return nonzero(w, a, false) end, 1, "nonzero"},
    find = {function(w, a) return nonzero(w, a, true) end, 1},
  }
  local METHODS = {scatter_ = {scatter, 4}, scatter_add_ = {scatter_add, 4}, index_add_ = {index_add, 4},
    index_copy_ = {index_copy, 4}, put_ = {put_, 3}, masked_fill_ = {masked_fill_, 3}}
  for name, e in pairs(FNS) do
    local w, f, nmax = where_of("ck." .. name), e[1], e[2]
    ck[name] = function(...)
      local n = select("#", ...)
      if n > nmax then raise(fmt("%s: takes at most %d arguments, got %d", w, nmax, n)) end
      return f(w, ...)
    end
    if e[3] then METHODS[e[3]] = {f, nmax} end
  end
  for name, e in pairs(METHODS) do
    local mw, f, nmax = where_of("a:" .. name), e[1], e[2]
    M[name] = function(...)
      local n = select("#", ...)
      if n > nmax then raise(fmt("%s: takes at most %d arguments, got %d", mw, nmax - 1, n - 1)) end
      return f(mw, ...)
    end
  end
  return ck
end

return S
