--- cukern.fft: discrete Fourier transforms (issue 35), NumPy's numpy.fft names and defaults.
--   ck.fft(a [, n [, dim]] [, {norm, variant, out}])    complex transform along dim (default: the last); n pads
--   ck.ifft(...)                                         with zeros or cuts a to n along dim (default: its size)
--   ck.rfft(a [, n [, dim]] [, opts])                    real input: the n/2 + 1 non-negative frequencies
--   ck.irfft(a [, n [, dim]] [, opts])                   back to n real values (default n = 2 (m - 1))
--   ck.fft2 / ck.ifft2(a [, s [, dims]] [, opts])        over dims (default the last two); s: a length per dim
--                                                        (a GPU array's last two dims go as one rank-2 cuFFT plan)
--   ck.fftn / ck.ifftn(a [, s [, dims]] [, opts])        over dims (default: all, or the last #s)
--   ck.fftshift / ck.ifftshift(a [, dims])               zero frequency to the centre and back (ck.roll)
--   ck.fftfreq(n [, d = 1] [, {dtype, device}])          the sample frequencies, NumPy's order
-- norm: "backward" (default: the inverse divides by n), "ortho" (both by sqrt n), "forward" (the forward by n).
-- f32/f64 (and f16, bf16, integers: NumPy's promotion) inputs give c64/c128. The core does one transform along one
-- dim (core.fft: src/ops/op_fft.c, the ladder kernels/fft/); here are the lengths, the norms, the several-dim forms
-- and the messages.
local core = require "cukern.core"
local errors, args, options = require "cukern.errors", require "cukern.args", require "cukern.options"
local raise, fail, where_of = errors.raise, errors.fail, errors.where_of
local is_array, check_live, check_dim = args.is_array, args.check_live, args.check_dim

local F = {}
local type, pcall, math_type, ipairs = type, pcall, math.type, ipairs
local fmt = string.format
local core_fft = core.fft

local RULES = {norm = function(v) return v == "backward" or v == "ortho" or v == "forward",
                                         '"backward", "ortho" or "forward"' end}
local ONE = options.set("norm", "variant", "out")
local MANY = options.set("norm", "variant")
local FREQ = options.set("dtype", "device")
local NONE = {}

local function check_opts(where, opts, allowed)
  if opts == nil then return NONE end
  local problem = options.problem(where, opts, allowed, RULES)
  if problem then raise(where .. ": " .. problem) end
  return opts
end

-- The scale of a transform of length n: the norm's share of 1/n for this direction.
local function scale_of(norm, n, inverse)
  if norm == "ortho" then return 1 / math.sqrt(n) end
  if (norm == "forward") ~= (inverse == true) then return 1 / n end
  return 1
end

local function desc(a) return fmt("%s[%s]", a:dtype(), table.concat(a:shape(), "x")) end

local function check_n(where, n, what)
  if math_type(n) ~= "integer" and not (type(n) == "number" and n == n // 1 and n == n) then
    raise(fmt("%s: %s must be an integer >= 1, got %s", where, what, options.show(n)))
  end
  if n < 1 then raise(fmt("%s: %s must be an integer >= 1, got %d", where, what, n)) end
  return n // 1
end

-- a with `len` elements along dim d (1-based, positive): a view of the first len, or a zero-padded copy.
-- (narrow takes the first and last index, inclusive)
local function fit(ck, a, d, len)
  local m = a:shape()[d]
  if m == len then return a end
  if m > len then return a:narrow(d, 1, len) end
  local shape = a:shape()
  shape[d] = len
  local z = ck.zeros(shape, {dtype = a:dtype(), device = a:device()})
  if m > 0 then z:narrow(d, 1, m):copy_(a) end
  return z
end

-- One transform of `kind` ("fft", "rfft", "irfft") along dim; out only for the one-dim forms.
local function one(ck, where, kind, inverse, a, n, dim, o)
  check_live(where, a, "argument 1")
  local nd = a:ndim()
  if nd == 0 then raise(where .. ": needs an array with at least one dim, got a 0-d array") end
  dim = dim == nil and -1 or dim
  check_dim(where, a, dim)
  local d = dim < 0 and nd + dim + 1 or dim
  local m = a:shape()[d]
  if n == nil then
    n = kind == "irfft" and 2 * (m - 1) or m
    if n < 1 then raise(fmt("%s: %s has %d elements along dim %d: give n >= 1", where, desc(a), m, d)) end
  else
    n = check_n(where, n, "n")
  end
  local len, scale = kind == "irfft" and n // 2 + 1 or n, scale_of(o.norm, n, inverse or kind == "irfft")
  local ok, r = pcall(function() return core_fft(kind, fit(ck, a, d, len), n, d, inverse, scale, o.variant, o.out) end)
  if ok then return r end
  fail(where, r)
end

-- (a, n, dim, opts) with opts allowed in place of n or dim, as the other ops take them
-- (an options table has no [1]; a table of lengths or dims in those places does)
local is_opts = args.is_opts
local function n_dim_opts(n, dim, opts)
  if is_opts(n) and dim == nil and opts == nil then return nil, nil, n end
  if is_opts(dim) and opts == nil then return n, nil, dim end
  return n, dim, opts
end

local function one_fn(ck, name, kind, inverse)
  local where = where_of("ck." .. name)
  return function(a, n, dim, opts)
    n, dim, opts = n_dim_opts(n, dim, opts)
    local o = check_opts(where, opts, ONE)
    if dim ~= nil and math_type(dim) ~= "integer" then
      raise(fmt("%s: dim must be an integer, got %s", where, options.show(dim)))
    end
    return one(ck, where, kind, inverse, a, n, dim, o)
  end
end

-- The dims and lengths of a several-dim transform: dims default to the last two (fft2), or all / the last #s.
local function plan_dims(where, a, s, dims, two)
  local nd = a:ndim()
  if s ~= nil and (type(s) ~= "table" or is_array(s)) then
    raise(fmt("%s: s must be a table of lengths, got %s", where, options.show(s)))
  end
  if dims ~= nil and (type(dims) ~= "table" or is_array(dims)) then
    raise(fmt("%s: dims must be a table of dims, got %s", where, options.show(dims)))
  end
  if dims == nil then
    local k = two and 2 or (s and #s or nd)
    if k > nd then raise(fmt("%s: %d dims to transform but %s has %d", where, k, desc(a), nd)) end
    dims = {}
    for i = 1, k do dims[i] = nd - k + i end
  end
  if s ~= nil and #s ~= #dims then
    raise(fmt("%s: s has %d lengths for %d dims; give one per dim", where, #s, #dims))
  end
  local seen = {}
  for i, dim in ipairs(dims) do
    if math_type(dim) ~= "integer" then raise(fmt("%s: dims[%d] must be an integer, got %s", where, i, options.show(dim))) end
    check_dim(where, a, dim)
    local d = dim < 0 and nd + dim + 1 or dim
    if seen[d] then raise(fmt("%s: dim %d is listed twice in dims", where, d)) end
    seen[d] = true
  end
  return dims
end

-- The last two dims of a GPU array at once (dims d and d + 1 = nd, lengths n1 and n2), as one rank-2 cuFFT plan:
-- what ck.fft2 of a matrix or a batch of them is, and fftn's last two dims. Each dim is padded or cut first. nil
-- when no rung can run it (cuFFT missing: only cuFFT takes two dims at once), so that the caller goes one dim at a
-- time as before; every other error (cuFFT's, or an earlier batched op's surfacing here) is raised.
local function both(ck, where, inverse, a, n1, n2, d, o)
  -- (pairable saw both at least 2 long; s's lengths are checked as the one-dim path checks them)
  n1 = n1 == nil and a:shape()[d] or check_n(where, n1, "n")
  n2 = n2 == nil and a:shape()[d + 1] or check_n(where, n2, "n")
  local scale = scale_of(o.norm, n1 * n2, inverse)
  local ok, r = pcall(function()
    return core_fft("fft", fit(ck, fit(ck, a, d, n1), d + 1, n2), n1, d, inverse, scale, o.variant, nil, n2)
  end)
  if ok then return r end
  if tostring(r):find("no variant can run this case", 1, true) then return nil end
  fail(where, r)
end

-- Whether dims i - 1 and i of the list are a's last two, on a GPU, for cuFFT (the default, or asked for by name),
-- both transforms at least 2 long (s's lengths where given; a length-1 transform is a copy, left to the one-dim path).
local function pairable(a, dims, i, o, s)
  if i < 2 or (o.variant ~= nil and o.variant ~= "cufft") or not a:device():match("^cuda") then return false end
  local nd = a:ndim()
  local d1, d2 = dims[i - 1], dims[i]
  d1, d2 = d1 < 0 and nd + d1 + 1 or d1, d2 < 0 and nd + d2 + 1 or d2
  if d2 ~= nd or d1 ~= nd - 1 then return false end
  local n1, n2 = s and s[i - 1] or a:shape()[d1], s and s[i] or a:shape()[d2]
  return type(n1) == "number" and type(n2) == "number" and n1 >= 2 and n2 >= 2
end

local function many_fn(ck, name, inverse, two)
  local where = where_of("ck." .. name)
  return function(a, s, dims, opts)
    s, dims, opts = n_dim_opts(s, dims, opts)
    local o = check_opts(where, opts, MANY)
    check_live(where, a, "argument 1")
    dims = plan_dims(where, a, s, dims, two)
    local r, i = a, #dims
    while i >= 1 do -- the last dim first; the last two of a GPU array together
      local p = pairable(r, dims, i, o, s) and both(ck, where, inverse, r, s and s[i - 1], s and s[i], r:ndim() - 1, o)
      if p then
        r, i = p, i - 2
      else
        r = one(ck, where, "fft", inverse, r, s and s[i], dims[i], o)
        i = i - 1
      end
    end
    return r
  end
end

-- NumPy's fftshift: roll each dim by floor(n/2) (ifftshift: back by the same), every dim by default.
local function shift_fn(ck, name, sign)
  local where = where_of("ck." .. name)
  return function(a, dims)
    check_live(where, a, "argument 1")
    local nd = a:ndim()
    if math_type(dims) == "integer" then dims = {dims} end
    if dims == nil then
      dims = {}
      for d = 1, nd do dims[d] = d end
    elseif type(dims) ~= "table" or is_array(dims) then
      raise(fmt("%s: dims must be an integer or a table of dims, got %s", where, options.show(dims)))
    end
    if #dims == 0 then return a:clone() end
    local shifts = {}
    for i, dim in ipairs(dims) do
      if math_type(dim) ~= "integer" then raise(fmt("%s: dims[%d] must be an integer, got %s", where, i, options.show(dim))) end
      check_dim(where, a, dim)
      shifts[i] = sign * (a:shape()[dim < 0 and nd + dim + 1 or dim] // 2)
    end
    local ok, r = pcall(ck.roll, a, shifts, dims)
    if ok then return r end
    fail(where, r)
  end
end

-- NumPy's fftfreq(n, d): [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d n), f64 by default: an arange whose second
-- half has n subtracted, scaled.
local function fftfreq_fn(ck)
  local where = where_of("ck.fftfreq")
  return function(n, d, opts)
    if type(d) == "table" and opts == nil then d, opts = nil, d end
    local o = check_opts(where, opts, FREQ)
    n = check_n(where, n, "n")
    d = d == nil and 1 or d
    if type(d) ~= "number" or d == 0 or d ~= d then
      raise(fmt("%s: d (the sample spacing) must be a nonzero number, got %s", where, options.show(d)))
    end
    local ok, r = pcall(function()
      local f = ck.arange(0, n, {dtype = "f64", device = o.device})
      local h = (n - 1) // 2 + 1 -- the non-negative frequencies
      if h < n then f:narrow(1, h + 1, n):sub_(n) end
      return ck.mul(f, 1 / (d * n)):to(o.dtype or "f64")
    end)
    if ok then return r end
    fail(where, r)
  end
end

function F.install(ck)
  ck.fft, ck.ifft = one_fn(ck, "fft", "fft", false), one_fn(ck, "ifft", "fft", true)
  ck.rfft, ck.irfft = one_fn(ck, "rfft", "rfft", false), one_fn(ck, "irfft", "irfft", true)
  ck.fft2, ck.ifft2 = many_fn(ck, "fft2", false, true), many_fn(ck, "ifft2", true, true)
  ck.fftn, ck.ifftn = many_fn(ck, "fftn", false, false), many_fn(ck, "ifftn", true, false)
  ck.fftshift, ck.ifftshift = shift_fn(ck, "fftshift", 1), shift_fn(ck, "ifftshift", -1)
  ck.fftfreq = fftfreq_fn(ck)
  require("cukern.conv").install(ck) -- ck.conv, ck.conv2 (lua/cukern/conv.lua)
end

return F
