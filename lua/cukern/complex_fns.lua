--- cukern.complex_fns: the array functions a complex array takes through its real pair view (issue 35), so that
-- what a NumPy or MATLAB user types works on c64/c128 too:
--   ck.rand / ck.randn (..., {dtype = "c64"})  each part uniform [0, 1) / each part normal with variance 1/2,
--                                               so E|z|^2 = 1 (PyTorch's complex randn)
--   ck.eye(n [, m], {dtype = "c64"}), ck.full(shape, {re, im} [, opts]) (c128 unless opts.dtype says c64)
--   a:fill({re, im}), a[i] = {re, im}, a[{...}] = {re, im}   (indexing.lua hands the pair to a:fill)
--   ck.cumsum / a:cumsum on complex   the running sums of the parts are the running sum: the real scan ladder
--                                       over the pair view (dim unchanged; the pair dim is last)
--   ck.where(cond, x, y) with a complex x or y   one pick per element of both parts: the condition gets a
--                                       trailing dim of 1 and broadcasts over the pair dim
-- Each wraps the real function and hands anything that is not complex straight to it, so real arrays pay one type
-- check. Installed by complex.lua (after creation, sorting and select).
local core = require "cukern.core"
local errors, args = require "cukern.errors", require "cukern.args"
local options = require "cukern.options"
local raise, call, where_of = errors.raise, errors.call, errors.where_of
local is_array, show, check_live = args.is_array, args.show, args.check_live
local fmt, type, select = string.format, type, select
local M = core.methods

local F = {}
local PART, is_complex = args.COMPLEX_PART, args.is_complex
local function is_pair(v) return type(v) == "table" and not is_array(v) and #v == 2 and type(v[1]) == "number" and type(v[2]) == "number" end

local function with_dtype(opts, dt) return options.with(opts, "dtype", dt) end

-- The trailing options table of a creation call (a table with string keys), and its position.
local function trailing_opts(...)
  local n = select("#", ...)
  local last = n > 0 and select(n, ...) or nil
  if type(last) == "table" and not is_array(last) and rawget(last, "dtype") ~= nil then return last, n end
  return nil, n
end

function F.install(ck)
  -- ck.rand / ck.randn: the two parts drawn one after the other (the same values on every device for one seed)
  for _, name in ipairs {"rand", "randn"} do
    local real = ck[name]
    ck[name] = function(...)
      local opts, n = trailing_opts(...)
      if not (opts and PART[opts.dtype]) then return real(...) end
      local a = table.pack(...)
      a[n] = with_dtype(opts, PART[opts.dtype])
      local re, im = real(table.unpack(a, 1, n)), real(table.unpack(a, 1, n))
      if name == "randn" then re:mul_(math.sqrt(0.5)); im:mul_(math.sqrt(0.5)) end
      return ck.complex(re, im, {dtype = opts.dtype})
    end
  end

  local eye = ck.eye
  ck.eye = function(...)
    local opts, n = trailing_opts(...)
    if not (opts and PART[opts.dtype]) then return eye(...) end
    local a = table.pack(...)
    a[n] = with_dtype(opts, PART[opts.dtype])
    return ck.complex(eye(table.unpack(a, 1, n)), 0, {dtype = opts.dtype})
  end

  -- a:fill({re, im}) on a complex array: each part filled (any strides: the parts are views)
  local fill, fwhere = M.fill, where_of("a:fill")
  function M.fill(a, v, ...)
    if type(v) ~= "table" or is_array(v) then return fill(a, v, ...) end
    check_live(fwhere, a, "the array")
    if not is_complex(a) then
      raise(fmt("%s: a {re, im} pair fills a complex array (c64, c128); this one is %s", fwhere, a:dtype()))
    end
    if not is_pair(v) then raise(fmt("%s: the value must be a number or a {re, im} pair of numbers, got %s", fwhere, show(v))) end
    local p = call(fwhere, core.pair_view, a)
    fill(p:select(p:ndim(), 1), v[1])
    fill(p:select(p:ndim(), 2), v[2])
    return a
  end

  local full, fuwhere = ck.full, where_of("ck.full")
  ck.full = function(shape, value, opts)
    if not is_pair(value) then return full(shape, value, opts) end
    local dt = type(opts) == "table" and opts.dtype or "c128"
    if not PART[dt] then
      raise(fmt("%s: a {re, im} value makes a complex array: dtype must be c64 or c128, got %s", fuwhere, show(dt)))
    end
    return full(shape, 0, with_dtype(type(opts) == "table" and opts or {}, dt)):fill(value)
  end

  -- cumsum of complex: the pair view's cumsum along the same dim (dim defaults to the last, as for real arrays)
  for _, owner in ipairs {{ck, "ck.cumsum"}, {M, "a:cumsum"}} do
    local t, where = owner[1], where_of(owner[2])
    local cumsum = t.cumsum
    t.cumsum = function(a, dim, opts)
      if not is_complex(a) then return cumsum(a, dim, opts) end
      if type(dim) == "table" and opts == nil then dim, opts = nil, dim end
      local nd = a:ndim()
      if nd == 0 then return cumsum(a, dim, opts) end -- (its own checks and message)
      local d = dim == nil and nd or dim
      if type(d) == "number" and d < 0 then d = nd + 1 + d end
      if type(d) ~= "number" or d < 1 or d > nd then
        raise(fmt("%s: dim %s is out of range for a %d-D complex array (1..%d)", where, show(dim), nd, nd))
      end
      local o
      if opts ~= nil then
        if type(opts) ~= "table" or is_array(opts) then raise(fmt("%s: options must be a table, got %s", where, show(opts))) end
        o = opts
        if opts.out ~= nil then
          if not is_complex(opts.out) then
            raise(fmt("%s: out must be a complex array for a complex input, got %s", where, show(opts.out)))
          end
          o = options.with(opts, "out", core.pair_view(opts.out))
        end
      end
      local r = cumsum(call(where, core.pair_view, a:contiguous()), d, o)
      return opts ~= nil and opts.out or core.complex_view(r)
    end
  end

  -- where with a complex x or y: both made complex (numbers as re + 0i), picked as pairs
  local where_fn, wwhere = ck.where, where_of("ck.where")
  ck.where = function(cond, x, y, ...)
    if not (is_complex(x) or is_complex(y)) or select("#", ...) > 0 or not is_array(cond) then
      return where_fn(cond, x, y, ...)
    end
    check_live(wwhere, cond, "the condition")
    local dt = (is_complex(x) and is_complex(y)) and core.promote(x:dtype(), y:dtype())
      or (is_complex(x) and x or y):dtype()
    local function as_pairs(v, what)
      if type(v) == "number" then return core.pair_view(ck.complex(v, 0, {dtype = dt, device = cond:device()})) end
      if not is_array(v) then raise(fmt("%s: %s must be an array or a number, got %s", wwhere, what, show(v))) end
      check_live(wwhere, v, what)
      return core.pair_view((v:dtype() == dt and v or v:to(dt)):contiguous())
    end
    local xs, ys = as_pairs(x, "x"), as_pairs(y, "y")
    local cs = cond:shape()
    cs[#cs + 1] = 1
    return core.complex_view(where_fn(cond:contiguous():reshape(cs), xs, ys))
  end
end

return F
