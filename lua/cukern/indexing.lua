--- cukern.indexing: a[i], a[{...}], a[i] = v, a[{...}] = v and a:slice{...} (1-based, torch7 style).
-- The array metatable's __index is the core's (core.make_index): method names go to the methods table,
-- number and table keys come here.
local errors, args = require "cukern.errors", require "cukern.args"
local raise, call, where_of = errors.raise, errors.call, errors.where_of
local is_array, show, check_live = args.is_array, args.show, args.check_live

local I = {}
local type, next, pairs, math_type, tointeger = type, next, pairs, math.type, math.tointeger
local fmt = string.format
local core = require "cukern.core"
local sel = require "cukern.select"

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

--- The view of a that `spec` (a table: numbers, ranges, {}, at most one index array) picks, whether every dim got
-- a number, and the index array with its dim in the view (an array entry keeps its dim whole in the view).
local function view_of(where, a, spec)
  for k in pairs(spec) do
    if math_type(k) ~= "integer" or k < 1 or k > #spec then
      raise(fmt("%s: the table lists one entry per dim ({{1, 2}, {}, 3}); %s is not a dim position", where, show(k)))
    end
  end
  local shape = a:shape()
  local nd, n = #shape, #spec
  if n > nd then raise(fmt("%s: %d indices for a %d-D array", where, n, nd)) end
  local v, dim, numbers, ix, ixdim = a, 1, 0, nil, nil
  for k = 1, n do
    local s = spec[k]
    if is_array(s) then
      if ix then raise(fmt("%s: one index array per table (entries %d and %d are arrays)", where, ixdim, k)) end
      ix, ixdim = s, dim
      dim = dim + 1
    elseif type(s) == "number" then
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
  return v, numbers == nd, ix, ixdim
end

local INDEX, SETINDEX = where_of("a[i]"), where_of("a[i] = v")
local INDEX_T, SETINDEX_T = where_of("a[{...}]"), where_of("a[{...}] = v")
local COMPLEX = args.COMPLEX_PART

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
    local cx = COMPLEX[a:dtype()] -- a complex element stays a 0-d array (z[i]:item() gives re, im)
    if nd == 0 then return cx and a or a:item() end
    local v = a:select(1, i)
    if nd == 1 and not cx then return v:item() end
    return v
  elseif not is_array(k) then
    check_live(INDEX, a, "the array")
    local v, all, ix, d = view_of(INDEX_T, a, k)
    if ix then return sel.array_get(INDEX_T, v, d, ix) end
    if all and not COMPLEX[a:dtype()] then return v:item() end
    return v
  end
  check_live(INDEX, a, "the array")
  check_live(INDEX, k, "the index")
  if k:dtype() == "bool" then return sel.mask_get(INDEX, a, k) end
  if a:ndim() == 0 then raise(INDEX .. ": a 0-d array takes no index array") end
  return sel.array_get(INDEX, a, 1, k) -- i32/i64 (index_arg names any other dtype)
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
    local ix, d
    target, _, ix, d = view_of(where, a, k)
    if ix then return sel.array_set(where, target, d, ix, value) end
  elseif is_array(k) then
    check_live(where, a, "the array")
    check_live(where, k, "the index")
    if k:dtype() == "bool" then sel.mask_set(where, a, k, value); return end
    if a:ndim() == 0 then raise(where .. ": a 0-d array takes no index array") end
    return sel.array_set(where, a, 1, k, value)
  else
    raise(fmt("%s: cannot set %s on a cukern array (arrays take a[i] = v and a[{...}] = v; methods cannot be replaced)",
      where, show(k)))
  end
  if type(value) == "boolean" and a:dtype() ~= "bool" then
    raise(fmt("%s: the value must be a number or a cukern array, got %s (booleans go into bool arrays)",
      where, show(value)))
  end
  call(where, core.check_writable, target) -- the one message of every write path, before any other
  if type(value) == "number" or type(value) == "boolean" then
    call(where, target.fill, target, value)
  elseif type(value) == "table" and COMPLEX[target:dtype()] then
    call(where, target.fill, target, value) -- a {re, im} pair (complex_fns.lua)
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

function I.install(ck)
  local M, MT = core.methods, core.array_mt
  MT.__index = core.make_index(M, index)
  MT.__newindex = setindex

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
  return ck
end

return I
