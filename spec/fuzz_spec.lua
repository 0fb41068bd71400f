--- Random fuzz of every op family over random shapes and random views, against an independent plain-Lua
-- f64 oracle written here (never the host backend). Issue 18.
--
--   CUKERN_FUZZ_CASES=n     cases in all (default 8000, ~4 s on the host; `make fuzz-long` runs 100000)
--   CUKERN_FUZZ_SEED=s      replay a run (the seed is printed on every failure)
--   CUKERN_FUZZ_ONLY=fam:i  run only case i of family fam (as printed on failure)
--   CUKERN_FUZZ_KNOWN=1     also run the cases of KNOWN_BUGS below (to check a fix); or a list of keys,
--                           e.g. CUKERN_FUZZ_KNOWN=reduce_out_overlap,argmax_out
--   CUKERN_FUZZ_VARIANTS=0  on a GPU: only the default dispatch (default: a random variant of the op's
--                           ladder per cuda case, so a long run covers every rung; ck.last_ran() is printed)
--
-- Shapes: 0-5 dims drawn from 0, 1, primes and a few tile-awkward sizes. Operands are built through random
-- views (permute/transpose/t, narrow with positive and negative bounds, select, expand, reshape/view with
-- -1, contiguous()) and the oracle applies the same views to its own copy of the values, carrying for every
-- element its position in the base array, so that in-place ops and out= views that overlap their inputs are
-- checked against the whole base. Inputs are fresh random values (uniform, small integers stored as floats,
-- a sprinkling of NaN), made in Lua; outputs are poisoned first.
local H = require "spec.helpers"
local ck = H.ck

local SEED = tonumber(os.getenv("CUKERN_FUZZ_SEED")) or H.seed
local TOTAL = tonumber(os.getenv("CUKERN_FUZZ_CASES")) or 8000
local ONLY = os.getenv("CUKERN_FUZZ_ONLY")
local RUN_KNOWN_ENV = os.getenv("CUKERN_FUZZ_KNOWN") or ""
local RUN_KNOWN = RUN_KNOWN_ENV == "1"
local VARIANTS = H.has_cuda and os.getenv("CUKERN_FUZZ_VARIANTS") ~= "0"

-- Known bugs of issue 18 whose fix belongs to another branch (the lead's dispatchers / the init.lua owner).
-- Cases that would hit them are counted and skipped (printed as pending); remove an entry once its fix is
-- merged (CUKERN_FUZZ_KNOWN=1 runs them anyway).
-- Fixed by the dispatcher (src/ops/dispatch.c) and checked for real since: reduce_out_overlap (issue 18 item 1),
-- matmul_zero_batch (item 2), max_out_idx_alias (item 4: now refused, "out and idx share memory"), argmax_out.
local KNOWN_BUGS = {}

local random, floor, abs, huge = math.random, math.floor, math.abs, math.huge
local INT_MIN = -2147483648

-- ---------------------------------------------------------------- numbers

local function f32(x) -- round to the nearest float (what an f32 array stores)
  if x ~= x or x == huge or x == -huge then return x end
  return (string.unpack("f", string.pack("f", x)))
end
local function round_to(dt, x)
  if dt == "f32" then return f32(x) end
  return x
end
local function isnan(x) return x ~= x end
local function is_i32_value(x) return x == floor(x) and x >= -2147483648 and x <= 2147483647 end
local function trunc(x) return x >= 0 and floor(x) or -floor(-x) end
local function f2i(x) -- float -> i32 as the core does: truncate; NaN / out of range give INT32_MIN
  if x ~= x then return INT_MIN end
  local t = trunc(x)
  if t < -2147483648 or t > 2147483647 then return INT_MIN end
  return math.tointeger(t)
end
local function wrap32(n) -- Lua integer -> int32 modulo 2^32
  n = n & 0xffffffff
  return n >= 0x80000000 and n - 0x100000000 or n
end
local function ipow(x, y) -- i32 pow by the documented rule (issue 32): exact modulo 2^32; x^-n is 1 // x^n
  if y ~= floor(y) then return f2i(x ^ y) end
  if y < 0 then
    if x == 1 then return 1 end
    if x == -1 then return (y % 2 == 0) and 1 or -1 end
    return 0 -- (0^-n too: 1 // 0 is 0 by the integer division rule)
  end
  local r = 1
  for _ = 1, y do r = r * math.tointeger(x) end -- Lua integers wrap modulo 2^64
  r = r & 0xffffffff
  return r >= 0x80000000 and r - 0x100000000 or r
end

local EPS = {f32 = 2^-23, f64 = 2^-52, i32 = 0}

local function rnd_value(dt, kind)
  if dt == "bool" then return random() < 0.5 end
  local ib = H.INT_BITS[dt]
  if ib and kind == "wide" then -- any value of the dtype (matmul_int: products and sums wrap); never 0
    local v = ib[1] == 64 and random(math.mininteger, math.maxinteger) or
      ib[2] and random(-(1 << (ib[1] - 1)), (1 << (ib[1] - 1)) - 1) or random(0, (1 << ib[1]) - 1)
    return v ~= 0 and v or 1
  end
  if ib and dt ~= "i32" then local v = random(ib[2] and -20 or 1, 20); return v ~= 0 and v or 1 end
  if dt == "i32" then return random(-50, 50) end
  local v
  if kind == "int" then v = random(-3, 3) + 0.0
  elseif kind == "nan" and random() < 0.05 then v = 0 / 0
  else v = (random() * 2 - 1) * (kind == "big" and 3e9 or kind == "mid" and 100 or 1) end
  if v == 0 then v = 0.5 end -- never zeros
  return round_to(dt, v)
end

-- ---------------------------------------------------------------- shapes

local DIMS = {0, 1, 1, 1, 2, 2, 3, 3, 5, 5, 7, 11, 13, 17, 31}
local function rnd_dim(allow0)
  local d = DIMS[random(#DIMS)]
  if d == 0 and (not allow0 or random() < 0.5) then d = 1 end
  return d
end
local function numel(shape) local n = 1; for _, d in ipairs(shape) do n = n * d end; return n end
local function rnd_shape(maxnd, maxnumel)
  for _ = 1, 50 do
    local nd = random(0, maxnd or 5)
    local s = {}
    for i = 1, nd do s[i] = rnd_dim(random() < 0.3) end
    if numel(s) <= (maxnumel or 1500) then return s end
  end
  return {random(1, 7)}
end
local function sstr(shape) return "[" .. table.concat(shape, "x") .. "]" end
local function copy(t) local r = {}; for i, v in ipairs(t) do r[i] = v end; return r end

-- ---------------------------------------------------------------- the oracle: {shape, v, p}

-- v: values in row-major order; p: each element's flat position in its base array (nil for fresh results).
local function row_strides(shape)
  local st, s = {}, 1
  for d = #shape, 1, -1 do st[d] = s; s = s * shape[d] end
  return st
end

-- out[idx] = in[src(idx)] where src maps an out multi-index to an in flat index.
local function gather(o, shape, src)
  local n = numel(shape)
  local v, p = {}, o.p and {} or nil
  local idx = {}
  for d = 1, #shape do idx[d] = 1 end
  for lin = 1, n do
    local j = src(idx)
    v[lin] = o.v[j]
    if p then p[lin] = o.p[j] end
    for d = #shape, 1, -1 do
      idx[d] = idx[d] + 1
      if idx[d] <= shape[d] then break end
      idx[d] = 1
    end
  end
  return {shape = shape, v = v, p = p, dt = o.dt}
end

local function o_permute(o, perm)
  local st, shape = row_strides(o.shape), {}
  for i, pd in ipairs(perm) do shape[i] = o.shape[pd] end
  return gather(o, shape, function(idx)
    local j = 1
    for i, pd in ipairs(perm) do j = j + (idx[i] - 1) * st[pd] end
    return j
  end)
end
local function o_narrow(o, d, first, len)
  local st, shape = row_strides(o.shape), copy(o.shape)
  shape[d] = len
  return gather(o, shape, function(idx)
    local j = 1
    for i = 1, #idx do j = j + (idx[i] - 1 + (i == d and first - 1 or 0)) * st[i] end
    return j
  end)
end
local function o_select(o, d, k)
  local st, shape = row_strides(o.shape), {}
  for i = 1, #o.shape do if i ~= d then shape[#shape + 1] = o.shape[i] end end
  return gather(o, shape, function(idx)
    local j = 1 + (k - 1) * st[d]
    for i = 1, #o.shape do
      if i < d then j = j + (idx[i] - 1) * st[i] elseif i > d then j = j + (idx[i - 1] - 1) * st[i] end
    end
    return j
  end)
end
local function o_expand(o, shape)
  local st, lead = row_strides(o.shape), #shape - #o.shape
  return gather(o, shape, function(idx)
    local j = 1
    for i = 1, #o.shape do if o.shape[i] ~= 1 then j = j + (idx[i + lead] - 1) * st[i] end end
    return j
  end)
end
local function o_reshape(o, shape) return {shape = shape, v = o.v, p = o.p, dt = o.dt} end
local function o_map(o, dt, f) -- elementwise, fresh result
  local v = {}
  for i = 1, #o.v do v[i] = f(o.v[i]) end
  return {shape = o.shape, v = v, dt = dt}
end
local function bshape(a, b)
  local n = math.max(#a, #b)
  local s = {}
  for i = 1, n do
    local da, db = a[i - (n - #a)] or 1, b[i - (n - #b)] or 1
    if da ~= db and da ~= 1 and db ~= 1 then return nil end
    s[i] = da == 1 and db or da
  end
  return s
end

-- ---------------------------------------------------------------- operands: an array and its oracle

local function from_values(shape, vals, dt, dev)
  local a = ck.array(#vals > 0 and vals or {0}, {dtype = dt, device = dev})
  if #vals == 0 then a = ck.empty(shape, {dtype = dt, device = dev}) else a = a:reshape(shape) end
  local p = {}
  for i = 1, #vals do p[i] = i end
  return a, {shape = copy(shape), v = vals, p = p, dt = dt}
end

local function fresh(shape, dt, dev, kind)
  local vals = {}
  for i = 1, numel(shape) do vals[i] = rnd_value(dt, kind) end
  return from_values(shape, vals, dt, dev)
end

local function rnd_perm(n)
  local p = {}
  for i = 1, n do p[i] = i end
  for i = n, 2, -1 do local j = random(i); p[i], p[j] = p[j], p[i] end
  return p
end
local function inverse(p) local q = {}; for i, v in ipairs(p) do q[v] = i end; return q end

-- o.shared: the view is (part of) an expanded view, so every write into it must be refused (docs/api.md)
local function shares(o, shared) o.shared = shared or nil; return o end

--- An operand of exactly `shape`, reached through up to `depth` random views of a fresh base.
-- Returns array, oracle, description. `writable`: no expanded views (it will be written).
local function build(shape, dt, dev, depth, writable, kind)
  local nd = #shape
  local r = random()
  if depth <= 0 or r < 0.25 then
    local a, o = fresh(shape, dt, dev, kind)
    return a, o, "fresh"
  end
  if r < 0.45 and nd >= 2 then -- permute / transpose / t
    local p = rnd_perm(nd)
    local inner = {}
    for i = 1, nd do inner[p[i]] = shape[i] end
    local a, o, d = build(inner, dt, dev, depth - 1, writable, kind)
    local v
    if nd == 2 and p[1] == 2 and random() < 0.5 then v = a:t()
    elseif random() < 0.3 then -- as one transpose when p is a swap, else permute
      local sw = {}
      for i = 1, nd do if p[i] ~= i then sw[#sw + 1] = i end end
      if #sw == 2 then v = a:transpose(sw[1], sw[2]) end
    end
    v = v or a:permute(table.unpack(p))
    return v, shares(o_permute(o, p), o.shared), d .. ":permute(" .. table.concat(p, ",") .. ")"
  elseif r < 0.6 and nd >= 1 then -- narrow
    local d = random(nd)
    local e1, e2 = random(0, 3), random(0, 3)
    local inner = copy(shape)
    inner[d] = shape[d] + e1 + e2
    local a, o, ds = build(inner, dt, dev, depth - 1, writable, kind)
    local first, last = e1 + 1, e1 + shape[d]
    local f, l = first, last
    if shape[d] > 0 and random() < 0.3 then f, l = first - inner[d] - 1, last - inner[d] - 1 end -- from the end
    return a:narrow(d, f, l), shares(o_narrow(o, d, first, shape[d]), o.shared), ds .. (":narrow(%d,%d,%d)"):format(d, f, l)
  elseif r < 0.7 and nd < 5 then -- select from one more dim
    local d = random(nd + 1)
    local inner = copy(shape)
    table.insert(inner, d, random(1, 3))
    local a, o, ds = build(inner, dt, dev, depth - 1, writable, kind)
    local k = random(inner[d])
    local kk = random() < 0.3 and k - inner[d] - 1 or k
    return a:select(d, kk), shares(o_select(o, d, k), o.shared), ds .. (":select(%d,%d)"):format(d, kk)
  elseif r < 0.82 and not writable and nd >= 1 then -- expand
    local lead = random(0, nd)
    local inner = {}
    for i = lead + 1, nd do inner[#inner + 1] = (random() < 0.5) and 1 or shape[i] end
    local a, o, ds = build(inner, dt, dev, depth - 1, writable, kind)
    local args = copy(shape)
    for i = lead + 1, nd do if inner[i - lead] == shape[i] and random() < 0.3 then args[i] = -1 end end
    -- a dim stretched from 1 (or added) to more than 1 makes this view, and every view of it, read-only
    local stretched = false
    for i = 1, nd do stretched = stretched or (shape[i] > 1 and (i <= lead or inner[i - lead] == 1)) end
    return a:expand(table.unpack(args)), shares(o_expand(o, shape), o.shared or stretched), ds .. ":expand" .. sstr(args)
  elseif r < 0.92 then -- reshape / view of a contiguous array of another shape
    local n = numel(shape)
    local inner
    if n == 0 or random() < 0.4 then inner = {n}
    else
      inner = {}
      local rest = n
      while rest > 1 and #inner < 4 do
        local f = 1
        for c = 2, rest do if rest % c == 0 then f = c; break end end
        if random() < 0.5 or #inner == 3 then f = rest end
        inner[#inner + 1] = f
        rest = rest // f
      end
      if #inner == 0 or random() < 0.3 then table.insert(inner, random(#inner + 1), 1) end
    end
    local a, o, ds = build(inner, dt, dev, depth - 1, writable, kind)
    local shared = o.shared
    if not a:is_contiguous() then a = a:contiguous(); ds = ds .. ":contiguous()"; shared = false end
    local args = copy(shape)
    if nd > 0 and n > 0 and random() < 0.4 then args[random(nd)] = -1 end
    local v = random() < 0.5 and a:reshape(table.unpack(args)) or a:view(args)
    return v, shares(o_reshape(o, copy(shape)), shared), ds .. ":reshape" .. sstr(args)
  else
    local a, o, ds = build(shape, dt, dev, depth - 1, writable, kind)
    return a:contiguous(), {shape = o.shape, v = o.v, dt = o.dt}, ds .. ":contiguous()"
  end
end

-- ---------------------------------------------------------------- comparison

local function compare(got, ref, tol, expect_dt)
  if got == nil then return false, "no result" end
  local gs = got:shape()
  if sstr(gs) ~= sstr(ref.shape) then return false, ("shape %s, expected %s"):format(sstr(gs), sstr(ref.shape)) end
  if expect_dt and got:dtype() ~= expect_dt then return false, ("dtype %s, expected %s"):format(got:dtype(), expect_dt) end
  local g = got:dtype() == "bool" and got:to("i32"):flat() or got:flat() -- (bool results: the oracle's 1/0)
  if #g ~= #ref.v then return false, ("%d values, expected %d"):format(#g, #ref.v) end
  for i = 1, #g do
    local a, b = g[i], ref.v[i]
    local ok
    if b ~= b then ok = a ~= a
    elseif b == huge or b == -huge then ok = a == b
    else
      local t = type(tol) == "function" and tol(i) or tol or 0
      ok = a == a and abs(a - b) <= t
    end
    if not ok then
      return false, ("element %d of %d: got %.17g, expected %.17g (tolerance %.3g)"):format(i, #g, a, b,
        type(tol) == "function" and tol(i) or tol or 0)
    end
  end
  return true
end

local function rel_tol(ref, rtol, atol)
  return function(i) local b = ref.v[i]; return atol + rtol * abs(b) end
end
local RT = {f32 = 4e-6, f64 = 1e-13, i32 = 0}
local AT = {f32 = 1e-6, f64 = 1e-14, i32 = 0}
local function ew_tol(ref) return rel_tol(ref, RT[ref.dt], AT[ref.dt]) end

-- Apply a fresh result r (oracle without positions) to a base oracle at out's positions.
local function scatter(base, outo, r)
  local v = copy(base.v)
  for i, pos in ipairs(outo.p) do v[pos] = r.v[i] end
  return {shape = base.shape, v = v, dt = base.dt}
end

-- ---------------------------------------------------------------- cases

local DEVICES = H.devices()
local VARIANT_NAMES = {}
local function variants(op)
  if not VARIANT_NAMES[op] then
    local t = {}
    for _, v in ipairs(ck.variants(op)) do if not v.bench_only then t[#t + 1] = v.name end end
    VARIANT_NAMES[op] = t
  end
  return VARIANT_NAMES[op]
end
local function pick_variant(op, dev)
  if dev ~= "cuda" or not VARIANTS or random() < 0.2 then return nil end
  local t = variants(op)
  return t[random(#t)]
end

local DT = {"f32", "f32", "f64", "i32"}
local function promote(a, b)
  if a == b then return a end
  if a == "f64" or b == "f64" then return "f64" end
  return "f32"
end

local ctx -- per case: {desc = {...}, skip = reason}
local function note(fmt_, ...) ctx.desc[#ctx.desc + 1] = fmt_:format(...) end
local function known(key)
  if not (RUN_KNOWN or (","..RUN_KNOWN_ENV..","):find(","..key..",", 1, true)) then ctx.skip = key end
end
local function opts_with(o, variant) if variant then o.variant = variant end; return o end

-- unary (functions, methods, in place, out=) ---------------------------------------------------------------

local FLOAT_ONLY = {exp = true, log = true, sqrt = true, sin = true, cos = true, tanh = true, sigmoid = true}
local UNARY = {
  neg = function(x) return -x end, abs = math.abs, exp = math.exp,
  log = function(x) if x < 0 then return 0 / 0 elseif x == 0 then return -huge end return math.log(x) end,
  sqrt = function(x) if x < 0 then return 0 / 0 end return math.sqrt(x) end,
  sin = math.sin, cos = math.cos, tanh = function(x) return (math.exp(2 * x) - 1) / (math.exp(2 * x) + 1) end,
  sigmoid = function(x) return 1 / (1 + math.exp(-x)) end,
  relu = function(x) if x ~= x then return x end return x > 0 and x or 0 end,
  floor = math.floor, ceil = math.ceil,
  sign = function(x) if x ~= x then return x end return x > 0 and 1 or x < 0 and -1 or 0 end,
}
local UNAMES = {}
for k in pairs(UNARY) do UNAMES[#UNAMES + 1] = k end
table.sort(UNAMES)

local function case_unary(dev)
  local dt = DT[random(#DT)]
  local shape = rnd_shape()
  local kind = ({"u", "int", "nan", "mid"})[random(4)]
  local a, ao, ad = build(shape, dt, dev, random(0, 3), false, kind)
  local which = random(#UNAMES + 2)
  local name, f, s1, s2
  if which <= #UNAMES then name = UNAMES[which]; f = UNARY[name]
  elseif which == #UNAMES + 1 then
    name = "pow"
    s1 = dt == "i32" and random(-2, 3) or ({2, 3, 0.5, -1, 1.5, 0})[random(6)]
    if dt == "i32" then f = function(x) return ipow(x, s1) end
    else local s = round_to(dt, s1); f = function(x) return x ^ s end end
  else
    name = "clamp"
    s1, s2 = f32(random() - 0.7), f32(random() - 0.3)
    if dt == "i32" then s1, s2 = random(-30, 0) + 0.5, random(0, 30) - 0.5 end
    local lo, hi = round_to(dt, s1), round_to(dt, s2)
    if dt == "i32" then f = function(x) return f2i(math.min(math.max(x, lo), hi)) end
    else f = function(x) if x ~= x then return x end return math.min(math.max(x, lo), hi) end end
  end
  local variant = pick_variant("elementwise", dev)
  note("%s %s %s on %s via %s, variant %s", name, dt, sstr(shape), dev, ad, tostring(variant))
  local fn = f
  if dt == "i32" and (name == "floor" or name == "ceil") then fn = function(x) return x end end
  local ref = o_map(ao, dt, function(x) return round_to(dt, fn(x)) end)
  local function call(x, o)
    if name == "pow" then return ck.pow(x, s1, o) end
    if name == "clamp" then return ck.clamp(x, s1, s2, o) end
    return ck[name](x, o)
  end
  if dt == "i32" and FLOAT_ONLY[name] then
    local ok = pcall(call, a, opts_with({}, variant))
    if ok then return false, name .. " on i32 did not raise an error" end
    return true
  end
  local mode = random(4)
  if mode == 1 then -- function (or operator / method)
    local r
    if name == "neg" and random() < 0.5 then r = -a
    elseif name == "pow" and random() < 0.5 and not variant then r = a ^ s1
    elseif random() < 0.5 and not variant and name ~= "pow" and name ~= "clamp" then r = a[name](a)
    else r = call(a, opts_with({}, variant)) end
    return compare(r, ref, ew_tol(ref), dt)
  elseif mode == 2 then -- out= a fresh poisoned array, possibly through a transposed view
    local out = H.poison(ck.empty(shape, {dtype = dt, device = dev}))
    local ov = out
    if #shape >= 2 and random() < 0.5 then
      local p = rnd_perm(#shape)
      local inner = {}
      for i = 1, #shape do inner[p[i]] = shape[i] end
      out = H.poison(ck.empty(inner, {dtype = dt, device = dev}))
      ov = out:permute(table.unpack(p))
      note("out= permuted view")
    end
    local r = call(a, opts_with({out = ov}, variant))
    if r ~= ov then return false, "out= not returned" end
    return compare(ov, ref, ew_tol(ref), dt)
  else -- in place on a view of a base, or out= another view of the same base (overlap)
    local base, bo = fresh(shape, dt, dev, kind)
    local va, vo = base, bo
    if mode == 4 and #shape >= 1 then
      -- the input and the output are different views of one base: a transposed or shifted copy
      local n = shape[1]
      if #shape >= 2 and shape[1] == shape[2] and random() < 0.5 then
        va, vo = base:transpose(1, 2), o_permute(bo, (function() local p = {2, 1}; for i = 3, #shape do p[i] = i end; return p end)())
        note("in = base:transpose(1,2), out = base")
      elseif n >= 2 then
        local len = random(1, n - 1)
        local s1_, s2_ = random(1, n - len + 1), random(1, n - len + 1)
        va, vo = base:narrow(1, s1_, s1_ + len - 1), o_narrow(bo, 1, s1_, len)
        local outv, oo = base:narrow(1, s2_, s2_ + len - 1), o_narrow(bo, 1, s2_, len)
        note("in = base:narrow(1,%d,%d), out = base:narrow(1,%d,%d)", s1_, s1_ + len - 1, s2_, s2_ + len - 1)
        local rr = o_map(vo, dt, function(x) return round_to(dt, fn(x)) end)
        call(va, opts_with({out = outv}, variant))
        local expect = scatter(bo, oo, rr)
        return compare(base, expect, ew_tol(expect), dt)
      end
      local rr = o_map(vo, dt, function(x) return round_to(dt, fn(x)) end)
      call(va, opts_with({out = base}, variant))
      local expect = scatter(bo, bo, rr)
      return compare(base, expect, ew_tol(expect), dt)
    end
    note("in place %s_ on the base", name)
    local rr = o_map(bo, dt, function(x) return round_to(dt, fn(x)) end)
    local r
    if name == "pow" then r = base:pow_(s1, opts_with({}, variant))
    elseif name == "clamp" then r = base:clamp_(s1, s2)
    else r = base[name .. "_"](base, opts_with({}, variant)) end
    if r ~= base then return false, "in-place method did not return its array" end
    return compare(base, rr, ew_tol(rr), dt)
  end
end

-- binary -----------------------------------------------------------------------------------------------

local function fmax(x, y) if x ~= x or y ~= y then return 0 / 0 end return x > y and x or y end
local function fmin(x, y) if x ~= x or y ~= y then return 0 / 0 end return x < y and x or y end
local function b2n(c) return c and 1 or 0 end
local BINARY = {
  add = function(x, y) return x + y end, sub = function(x, y) return x - y end,
  mul = function(x, y) return x * y end, div = function(x, y) return x / y end,
  maximum = fmax, minimum = fmin,
  eq = function(x, y) return b2n(x == y) end, ne = function(x, y) return b2n(x ~= y) end,
  lt = function(x, y) return b2n(x < y) end, le = function(x, y) return b2n(x <= y) end,
  gt = function(x, y) return b2n(x > y) end, ge = function(x, y) return b2n(x >= y) end,
  pow = function(x, y) return x ^ y end,
}
local IBINARY = {
  add = function(x, y) return wrap32(x + y) end, sub = function(x, y) return wrap32(x - y) end,
  mul = function(x, y) return wrap32(x * y) end,
  div = function(x, y) if y == 0 then return 0 end; local q = trunc(x / y); return wrap32(math.tointeger(q)) end,
  pow = function(x, y) return ipow(x, y) end,
}
local BNAMES = {}
for k in pairs(BINARY) do BNAMES[#BNAMES + 1] = k end
table.sort(BNAMES)

local function case_binary(dev)
  local name = BNAMES[random(#BNAMES)]
  local dta = DT[random(#DT)]
  local dtb = random() < 0.7 and dta or DT[random(#DT)]
  local shape = rnd_shape(5, 800)
  -- b: broadcast-compatible with a (dims kept, set to 1, or dropped at the front), or the other way round
  local bs = {}
  local drop = random(0, #shape)
  if random() < 0.5 then drop = 0 end
  for i = drop + 1, #shape do bs[#bs + 1] = random() < 0.3 and 1 or shape[i] end
  if random() < 0.5 then shape, bs = bs, shape end
  local kind = ({"u", "int", "nan", "mid"})[random(4)]
  local a, ao, ad = build(shape, dta, dev, random(0, 3), false, kind)
  local b, bo, bd = build(bs, dtb, dev, random(0, 3), false, kind)
  local rshape = bshape(shape, bs)
  local variant = pick_variant("elementwise", dev)
  -- a number on one side, sometimes
  local num_side = random() < 0.25 and random(2) or nil
  if num_side then rshape = shape end
  local s
  if num_side then
    if dta == "i32" and random() < 0.6 then s = random(-5, 5)
      if name == "pow" then s = random(-2, 3) end
    else s = f32(random() * 4 - 2); if s == 0 then s = 0.25 end
      if name == "pow" and random() < 0.5 then s = random(-2, 3) + 0.0 end
    end
  end
  local rdt
  if num_side then
    -- an i32 array with a number that is not an i32 value gives f64, pow included (docs/api.md, issue 29)
    rdt = (dta == "i32" and not is_i32_value(s)) and "f64" or dta
  else rdt = promote(dta, dtb) end
  local f = (rdt == "i32" and IBINARY[name]) or BINARY[name]
  local function val(x, fromdt) -- operand value as the op sees it in rdt
    if rdt == "i32" then return x end
    return round_to(rdt, x)
  end
  local ref
  if num_side then
    note("%s %s %s %s number %s on %s via %s, variant %s", name, num_side == 1 and "number," or "",
      dta .. sstr(shape), num_side == 2 and ", number" or "", tostring(s), dev, ad, tostring(variant))
    local sv = rdt == "i32" and s or round_to(rdt, s) -- the number is rounded to the op's dtype first
    ref = o_map(ao, rdt, function(x)
      x = val(x)
      local r = num_side == 1 and f(sv, x) or f(x, sv)
      return rdt == "i32" and r or round_to(rdt, r)
    end)
  else
    note("%s %s%s %s%s on %s via %s and %s, variant %s", name, dta, sstr(shape), dtb, sstr(bs), dev, ad, bd,
      tostring(variant))
    local ea, eb = o_expand(ao, rshape), o_expand(bo, rshape)
    local v = {}
    for i = 1, #ea.v do
      local r = f(val(ea.v[i]), val(eb.v[i]))
      v[i] = rdt == "i32" and r or round_to(rdt, r)
    end
    ref = {shape = rshape, v = v, dt = rdt}
  end
  if rdt == "i32" and name == "pow" and not num_side then
    -- exponents of up to 50 overflow to INT32_MIN by the rule; keep it, the rule is documented
  end
  local tol = ew_tol(ref)
  if name == "pow" and rdt ~= "i32" then tol = rel_tol(ref, RT[rdt] * 8, AT[rdt]) end
  local CMPS = {eq = 1, ne = 1, lt = 1, le = 1, gt = 1, ge = 1}
  local odt = CMPS[name] and "bool" or rdt -- comparisons compute in rdt and give bool (issue 32)
  if CMPS[name] then tol = 0 end
  local x, y = a, b
  if num_side == 1 then x, y = s, a elseif num_side == 2 then x, y = a, s end
  local mode = random(3)
  if mode == 1 then
    local r
    local OPS = {add = "+", sub = "-", div = "/"}
    local int_operand = (ck.is_array(x) and x:dtype() == "i32") or (ck.is_array(y) and y:dtype() == "i32")
    if not variant and OPS[name] and random() < 0.4 and not (name == "div" and int_operand) then
      -- (Lua 5.4's / is float division: on i32 arrays it gives f64, which ck.div does not; tested in api_spec)
      if name == "add" then r = x + y elseif name == "sub" then r = x - y else r = x / y end
    elseif not variant and name == "mul" and num_side and random() < 0.5 then r = x * y
    else r = ck[name](x, y, opts_with({}, variant)) end
    return compare(r, ref, tol, odt)
  elseif mode == 2 then
    local out = H.poison(ck.empty(rshape, {dtype = odt, device = dev}))
    local r = ck[name](x, y, opts_with({out = out}, variant))
    if r ~= out then return false, "out= not returned" end
    return compare(out, ref, tol, odt)
  else -- in place into a fresh copy of a's values when the result fits a
    if num_side == 1 or odt ~= dta or sstr(rshape) ~= sstr(shape) then
      local r = ck[name](x, y, opts_with({}, variant))
      return compare(r, ref, tol, odt)
    end
    local dst = ck.array(a, {}) -- a new array with a's values (never an alias)
    note("in place %s_", name)
    local r = dst[name .. "_"](dst, y, opts_with({}, variant))
    if r ~= dst then return false, "in-place method did not return its array" end
    return compare(dst, ref, tol, rdt)
  end
end

-- reductions -------------------------------------------------------------------------------------------

local RNAMES = {"sum", "prod", "mean", "max", "min", "argmax", "argmin"}

-- reduce o along dim d (nil: all) -> values oracle (and indices oracle for max/min/argmax/argmin)
local function o_reduce(name, o, d, keepdim, dt)
  local shape = o.shape
  local outer, n, inner
  if d == nil then outer, n, inner = 1, #o.v, 1
  else
    outer, inner = 1, 1
    for i = 1, d - 1 do outer = outer * shape[i] end
    for i = d + 1, #shape do inner = inner * shape[i] end
    n = shape[d]
  end
  local rshape = {}
  if d == nil then
    if keepdim then for i = 1, #shape do rshape[i] = 1 end end
  else
    for i = 1, #shape do if i ~= d then rshape[#rshape + 1] = shape[i] elseif keepdim then rshape[#rshape + 1] = 1 end end
  end
  local v, ix, tolv = {}, {}, {}
  local k = 0
  for oi = 0, outer - 1 do
    for ii = 0, inner - 1 do
      k = k + 1
      local function at(j) return o.v[1 + oi * n * inner + j * inner + ii] end
      local acc, absacc, best, bi, nan
      if name == "sum" or name == "mean" then
        -- (i32 sums are exact i64 (issue 32); the mean of i32 is f64)
        if dt == "i32" then acc = 0; for j = 0, n - 1 do acc = acc + math.tointeger(at(j)) end
        else acc, absacc = 0, 0; for j = 0, n - 1 do acc = acc + at(j); absacc = absacc + abs(at(j)) end end
        if name == "mean" then acc = acc / n; absacc = absacc and absacc / n end
        v[k] = (dt == "i32" or dt == "f64") and acc or round_to(dt, acc)
        tolv[k] = dt == "i32" and (name == "mean" and 1e-12 * abs(acc) or 0) or (RT[dt] * 3 * (absacc or 0) + AT[dt])
      elseif name == "prod" then
        if dt == "i32" then acc = 1; for j = 0, n - 1 do acc = acc * math.tointeger(at(j)) end; v[k] = acc; tolv[k] = 0
        else
          acc = 1; for j = 0, n - 1 do acc = acc * at(j) end
          v[k] = round_to(dt, acc)
          tolv[k] = abs(acc) * EPS[dt] * (2 * n + 4) + (dt == "f32" and 1e-30 or 1e-300)
        end
      else
        local wantmax = name == "max" or name == "argmax"
        for j = 0, n - 1 do
          local x = at(j)
          if x ~= x then if not nan then nan = true; best, bi = x, j end
          elseif not nan and (best == nil or (wantmax and x > best) or (not wantmax and x < best)) then best, bi = x, j end
        end
        v[k], ix[k], tolv[k] = best, bi and bi + 1, 0
      end
    end
  end
  return {shape = rshape, v = v, dt = dt}, {shape = rshape, v = ix, dt = "i64"}, tolv
end

local function case_reduce(dev)
  local name = RNAMES[random(#RNAMES)]
  local dt = DT[random(#DT)]
  local shape = rnd_shape(5, 2000)
  local kind = ({"u", "int", "nan", "mid"})[random(4)]
  -- f32 products of values up to 100 overflow in a GPU's tree order before the f64 oracle's does
  if name == "prod" and kind == "mid" then kind = "u" end
  local a, ao, ad = build(shape, dt, dev, random(0, 3), false, kind)
  local nd = #shape
  local d = (nd > 0 and random() < 0.8) and random(nd) or nil
  local darg = d and (random() < 0.3 and d - nd - 1 or d) or nil
  local keepdim = random() < 0.4
  local variant = pick_variant("reduce", dev)
  note("%s %s%s dim %s keepdim %s on %s via %s, variant %s", name, dt, sstr(shape), tostring(darg),
    tostring(keepdim), dev, ad, tostring(variant))
  local o = opts_with({}, variant)
  if keepdim then o.keepdim = true end
  local empty = (d and shape[d] == 0) or (not d and numel(shape) == 0)
  local needs_nonempty = name == "max" or name == "min" or name == "argmax" or name == "argmin"
  if empty and needs_nonempty then
    local ok = pcall(ck[name], a, darg, o)
    if ok then return false, "no error raised (empty reduction)" end
    return true
  end
  local ref, iref, tolv = o_reduce(name, ao, d, keepdim, dt)
  local isidx = name == "argmax" or name == "argmin"
  local want_idx = (name == "max" or name == "min") and d ~= nil
  -- issue 32: indices are i64, integer sums and products i64, the mean of integers f64
  local rdt = isidx and "i64" or (dt == "i32" and (name == "sum" or name == "prod")) and "i64"
    or (dt == "i32" and name == "mean") and "f64" or dt
  local vref = isidx and iref or ref
  local tol = function(i) return tolv[i] end
  if isidx then tol = 0 end
  -- out= (and idx=): poisoned, sometimes a view of the input's own storage (overlap)
  local out, idx
  if random() < 0.35 then
    local overlap = dev == "host" or random() < 0.5
    -- (not through an expand: a view of an expanded view is read-only, see the "writes" family)
    if random() < 0.3 and numel(shape) > 0 and rdt == dt and numel(ref.shape) <= numel(shape) and a:is_contiguous()
      and not a:is_freed() and not ad:find("expand", 1, true) then
      -- out= m consecutive elements of the input itself (input still to be read while out is written)
      local m, N = numel(ref.shape), numel(shape)
      local st = random(1, N - m + 1)
      out = a:reshape(N):narrow(1, st, st + m - 1):view(ref.shape)
      note("out= a view of the input's own storage")
      -- expected: computed from the snapshot of the input
    else
      out = H.poison(ck.empty(ref.shape, {dtype = rdt, device = dev}))
    end
    o.out = out
    local _ = overlap
  end
  if want_idx and random() < 0.35 then
    if o.out and random() < 0.5 and rdt == "i64" then idx = o.out; note("idx= out")
    else idx = H.poison(ck.empty(ref.shape, {dtype = "i64", device = dev})) end
    o.idx = idx
  end
  if ctx.skip then return true end
  if idx and idx == o.out then
    -- one array for values and indices: refused with a clear error (issue 18 item 4), never a wrong result
    -- (an empty result has no memory to share: accepting it is as good)
    local ok, err = pcall(ck[name], a, darg, o)
    if ok and numel(ref.shape) == 0 then return true end
    if ok then return false, "out= and idx= the same array: no error raised" end
    local e = tostring(err)
    return (e:find("share memory", 1, true) or e:find("must be different arrays", 1, true)) ~= nil,
      "unexpected error: " .. e
  end
  local r, ri
  if not variant and random() < 0.3 and d then r, ri = a[name](a, darg, o) else r, ri = ck[name](a, darg, o) end
  if o.out and r ~= o.out then return false, "out= not returned" end
  if o.idx and ri ~= o.idx then return false, "idx= not returned" end
  local ok, msg = compare(r, vref, tol, rdt)
  if not ok then return ok, "values: " .. msg end
  if want_idx then
    ok, msg = compare(ri, iref, 0, "i64")
    if not ok then return ok, "indices: " .. msg end
  elseif ri ~= nil then return false, "indices returned without a dim" end
  return true
end

-- matmul and gemm -------------------------------------------------------------------------------------

local MDIMS = {0, 1, 1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 31, 33, 64, 65}
local function case_matmul(dev)
  -- operands of one dtype, or (3 in 10) of two: f32 x f64 -> f64 (issue 12), i32 x float -> that float
  local dta = DT[random(#DT)]
  local dtb = random() < 0.3 and DT[random(#DT)] or dta
  local dt = promote(dta, dtb) -- the result's dtype
  local m, n, k = MDIMS[random(#MDIMS)], MDIMS[random(#MDIMS)], MDIMS[random(#MDIMS)]
  if m * n * k > 40000 then m, n = math.min(m, 13), math.min(n, 13) end
  local ash, bsh = {m, k}, {k, n}
  local batch = 1
  local r = random()
  if r < 0.4 then
    batch = ({0, 1, 2, 3, 5})[random(5)]
    local ba, bb = batch, batch
    local w = random(4)
    if w == 1 then bb = nil elseif w == 2 then ba = nil elseif w == 3 then bb = 1 end
    if ba then table.insert(ash, 1, ba) end
    if bb then table.insert(bsh, 1, bb) end
  end
  local a, ao, ad = build(ash, dta, dev, random(0, 2), false, "u")
  local b, bo, bd = build(bsh, dtb, dev, random(0, 2), false, "u")
  local variant = pick_variant("matmul", dev)
  note("matmul %s%s x %s%s -> %s on %s via %s and %s, variant %s", dta, sstr(ash), dtb, sstr(bsh), dt, dev, ad, bd,
    tostring(variant))
  -- oracle
  local B = (#ash == 3 or #bsh == 3) and math.max(#ash == 3 and ash[1] or 1, #bsh == 3 and bsh[1] or 1) or nil
  if (#ash == 3 and ash[1] == 0) or (#bsh == 3 and bsh[1] == 0) then B = 0 end -- a 0 batch broadcasts to 0
  local rshape = B and {B, m, n} or {m, n}
  local v, tv = {}, {}
  local function A(bi, i, p) local base = (#ash == 3 and ash[1] > 1) and bi * m * k or 0; return ao.v[1 + base + i * k + p] end
  local function Bv(bi, p, j) local base = (#bsh == 3 and bsh[1] > 1) and bi * k * n or 0; return bo.v[1 + base + p * n + j] end
  local gemm = random() < 0.25
  local alpha, beta = 1, 0
  if gemm then alpha, beta = f32(random() * 2 - 1), (random() < 0.3 and 0 or f32(random() * 2 - 1)) end
  if dt == "i32" then alpha, beta = random(-2, 2), random(0, 2) end
  local c, co
  if gemm then
    c, co = fresh(rshape, dt, dev, "u")
    if beta == 0 then H.poison(c); note("c poisoned, beta 0 (BLAS: c is not read)") end
  end
  local idx = 0
  for bi = 0, (B or 1) - 1 do
    for i = 0, m - 1 do
      for j = 0, n - 1 do
        idx = idx + 1
        local s, sa = 0, 0
        for p = 0, k - 1 do local t = A(bi, i, p) * Bv(bi, p, j); s = s + t; sa = sa + abs(t) end
        if dt == "i32" then s = wrap32(s) end
        if gemm then
          local cv = co.v[idx]
          if dt == "i32" then s = wrap32(alpha * s + (beta ~= 0 and beta * cv or 0))
          else
            s = alpha * s + (beta ~= 0 and beta * cv or 0)
            sa = abs(alpha) * sa + abs(beta * cv)
          end
        end
        v[idx] = dt == "i32" and s or round_to(dt, s)
        -- f32: k products accumulated in f32 on the GPU (worst case ~k ulp of the sum of |products|)
        tv[idx] = dt == "i32" and 0 or (dt == "f32" and (dev == "cuda" and 1e-5 or 2e-6) or 1e-13) * (sa + 1e-30)
      end
    end
  end
  local ref = {shape = rshape, v = v, dt = dt}
  local function tol(i)
    -- reduced-precision rungs (tensor-core TF32 / half inputs), should a ladder list them
    local ran = dev == "cuda" and ck.last_ran().name or ""
    if ran:find("tf32") or ran:find("f16") or ran:find("bf16") then return tv[i] * 500 end
    return tv[i]
  end
  if gemm then
    note("gemm alpha %s beta %s", tostring(alpha), tostring(beta))
    local r = ck.gemm(c, a, b, alpha, beta, opts_with({}, variant))
    if r ~= nil and r ~= c then return false, "gemm did not return c" end
    return compare(c, ref, tol, dt)
  end
  local res
  if not B and m == k and k == n and m > 0 and random() < 0.15 then
    -- out= one of the operands (the product must be computed from the operands' values before the write);
    -- with mixed dtypes, the one of the result's dtype
    local which = random(2)
    if dta ~= dt then which = 2 elseif dtb ~= dt then which = 1 end
    local dst = ck.array(which == 1 and a or b, {}) -- a private copy, so that the operand views stay intact
    note("out= operand %s (a fresh copy of it)", which == 1 and "a" or "b")
    if which == 1 then res = ck.matmul(dst, b, opts_with({out = dst}, variant))
    else res = ck.matmul(a, dst, opts_with({out = dst}, variant)) end
    if res ~= dst then return false, "out= not returned" end
  elseif random() < 0.3 then
    local out = H.poison(ck.empty(rshape, {dtype = dt, device = dev}))
    res = ck.matmul(a, b, opts_with({out = out}, variant))
    if res ~= out then return false, "out= not returned" end
  elseif not variant and random() < 0.3 then res = a * b
  else res = ck.matmul(a, b, opts_with({}, variant)) end
  return compare(res, ref, tol, dt)
end

-- transpose and copies --------------------------------------------------------------------------------

local function case_copy(dev)
  local dt = DT[random(#DT)]
  local shape = rnd_shape(5, 1500)
  local kind = ({"u", "int", "nan", "mid", "big"})[random(5)]
  local which = random(6)
  if which == 1 and #shape < 2 then which = 2 end
  if which == 1 then -- ck.transpose materialises the last two dims
    local a, ao, ad = build(shape, dt, dev, random(0, 3), false, kind)
    local variant = pick_variant("transpose", dev)
    note("transpose %s%s on %s via %s, variant %s", dt, sstr(shape), dev, ad, tostring(variant))
    local p = {}
    for i = 1, #shape do p[i] = i end
    p[#shape - 1], p[#shape] = #shape, #shape - 1
    local ref = o_permute(ao, p)
    ref.p = nil
    local r
    if shape[#shape] == shape[#shape - 1] and random() < 0.2 then
      -- in place: out= a private copy of the input, transposed into itself
      local dst = ck.array(a, {})
      note("out= the input itself (a fresh copy)")
      local ok, rr = pcall(ck.transpose, dst, opts_with({out = dst}, variant))
      -- refusing is allowed (a clear error, never a wrong result)
      if not ok then return tostring(rr):find("shares storage", 1, true) ~= nil, "unexpected error: " .. tostring(rr) end
      r = rr
      if r ~= dst then return false, "out= not returned" end
    elseif random() < 0.3 then
      local out = H.poison(ck.empty(ref.shape, {dtype = dt, device = dev}))
      r = ck.transpose(a, opts_with({out = out}, variant))
      if r ~= out then return false, "out= not returned" end
    else r = ck.transpose(a, opts_with({}, variant)) end
    return compare(r, ref, 0, dt)
  elseif which == 2 then -- the view itself, clone, contiguous
    local a, ao, ad = build(shape, dt, dev, random(1, 4), false, kind)
    local how = ({"view", "clone", "contiguous"})[random(3)]
    note("%s of %s%s on %s via %s", how, dt, sstr(shape), dev, ad)
    local r = how == "view" and a or a[how](a)
    if how ~= "view" and r:numel() > 0 and not r:is_contiguous() then return false, how .. " is not contiguous" end
    if how == "clone" and r:numel() > 0 and r:storage_id() == a:storage_id() then return false, "clone shares storage" end
    return compare(r, {shape = ao.shape, v = ao.v}, 0, dt)
  elseif which == 3 then -- dtype conversion (and device)
    local a, ao, ad = build(shape, dt, dev, random(0, 3), false, kind)
    local to = DT[random(#DT)]
    note("%s%s:to(%s) on %s via %s", dt, sstr(shape), to, dev, ad)
    local ref = o_map(ao, to, function(x)
      if to == "i32" then return dt == "i32" and x or f2i(x) end
      return round_to(to, x)
    end)
    local r = random() < 0.5 and a:to(to) or a:to(dev, to)
    return compare(r, ref, 0, to)
  elseif which == 4 then -- copy_ with broadcasting and casting into a poisoned destination (maybe a view)
    local sdt = random() < 0.6 and dt or DT[random(#DT)]
    local bs = {}
    local drop = random() < 0.5 and 0 or random(0, #shape)
    for i = drop + 1, #shape do bs[#bs + 1] = random() < 0.3 and 1 or shape[i] end
    local src, so, sd = build(bs, sdt, dev, random(0, 3), false, kind)
    local dst, dd = nil, "fresh"
    if #shape >= 2 and random() < 0.5 then
      local full = H.poison(ck.empty({shape[#shape], table.unpack(shape, 1, #shape - 1)}, {dtype = dt, device = dev}))
      local p = {}
      for i = 1, #shape - 1 do p[i] = i + 1 end
      p[#shape] = 1
      dst, dd = full:permute(table.unpack(p)), "permuted"
    else dst = H.poison(ck.empty(shape, {dtype = dt, device = dev})) end
    note("copy_ %s%s (%s) <- %s%s on %s via %s", dt, sstr(shape), dd, sdt, sstr(bs), dev, sd)
    local e = o_expand(so, shape)
    local ref = o_map(e, dt, function(x)
      if dt == "i32" then return sdt == "i32" and x or f2i(x) end
      return round_to(dt, x)
    end)
    local r = dst:copy_(src)
    if r ~= dst then return false, "copy_ did not return its destination" end
    return compare(dst, ref, 0, dt)
  elseif which == 5 then -- fill
    local a, ao, ad = build(shape, dt, dev, random(0, 2), true, kind)
    local x = dt == "i32" and random(-1000, 1000) or f32(random() * 10 - 5)
    note("fill %s%s with %s on %s via %s", dt, sstr(shape), tostring(x), dev, ad)
    a:fill(x)
    return compare(a, o_map(ao, dt, function() return dt == "i32" and x or round_to(dt, x) end), 0, dt)
  else -- copy_ between overlapping views of one base (reads a snapshot first)
    local n = random(2, 9)
    local base, bo = fresh({n, n}, dt, dev, kind)
    local r = random(3)
    local dv, dvo, sv, svo
    if r == 1 then
      dv, dvo, sv, svo = base, bo, base:t(), o_permute(bo, {2, 1})
      note("base:copy_(base:t()) %s[%dx%d] on %s", dt, n, n, dev)
    else
      local len = random(1, n - 1)
      local s1_, s2_ = random(1, n - len + 1), random(1, n - len + 1)
      local d = random(2)
      dv, dvo = base:narrow(d, s1_, s1_ + len - 1), o_narrow(bo, d, s1_, len)
      sv, svo = base:narrow(d, s2_, s2_ + len - 1), o_narrow(bo, d, s2_, len)
      if r == 3 and len == n then sv, svo = sv:t(), o_permute(svo, {2, 1}) end
      note("base:narrow(%d,%d..)::copy_(base:narrow(%d,%d..)) len %d %s[%dx%d] on %s", d, s1_, d, s2_, len, dt, n, n, dev)
    end
    dv:copy_(sv)
    local expect = scatter(bo, dvo, {v = svo.v})
    return compare(base, expect, 0, dt)
  end
end

-- ---------------------------------------------------------------- driver

-- writes through views (issue 29) ---------------------------------------------------------------------
-- Every write path into a random view of a fresh base: refused with the one message when the view is (part
-- of) an expanded view, else the view holds exactly what was written (and nothing else of it changed).

local WRITE_PATHS = {"a[i] = v", "a[{r}] = b", "fill", "copy_", "add_", "out=", "map out", "gemm C"}
local SHARED_MSG = "expanded view, whose elements share memory"

local function case_writes(dev)
  local dt = DT[random(#DT)]
  local shape = rnd_shape(4, 300)
  local a, o, ad = build(shape, dt, dev, random(1, 4), false, "u")
  local nd, n = #shape, numel(shape)
  local wide = {}
  for j = 1, nd do if shape[j] > 1 then wide[#wide + 1] = j end end
  if #wide > 0 and random() < 0.35 then -- (build reaches expanded views rarely: make one, then a piece of it)
    local j = wide[random(#wide)]
    local inner = copy(shape); inner[j] = 1
    local e = H.rand(inner, dt, dev):expand(table.unpack(shape))
    a, o, ad = e, {shared = true}, "rand" .. sstr(inner) .. ":expand" .. sstr(shape)
    local k = random(nd)
    if random() < 0.5 and shape[k] > 0 then
      local i = random(shape[k])
      a = e:narrow(k, i, i); ad = ad .. (":narrow(%d,%d,%d)"):format(k, i, i)
      shape = a:shape()
      nd, n = #shape, numel(shape)
    end
  end
  local path = WRITE_PATHS[random(#WRITE_PATHS)]
  if path:find("^a%[") and (nd == 0 or shape[1] == 0) then path = "fill" end
  if (path == "map out" or path == "gemm C") and dt == "i32" then path = "copy_" end
  if path == "gemm C" and nd ~= 2 then path = "out=" end
  note("%s into %s%s on %s via %s%s", path, dt, sstr(shape), dev, ad, o.shared and " (part of an expanded view)" or "")
  local before = a:flat()
  local src = H.rand(shape, dt, dev)
  local sv = src:flat()
  local v = dt == "i32" and random(-9, 9) or round_to(dt, random() * 4 - 2)
  local exp, tol = copy(before), 0
  local write
  if path == "a[i] = v" then
    local i = random(shape[1])
    local row = n // shape[1]
    for j = (i - 1) * row + 1, i * row do exp[j] = v end
    write = function() a[i] = v end
  elseif path == "a[{r}] = b" then
    local r1 = random(shape[1]); local r2 = random(r1, shape[1])
    local bs = copy(shape); bs[1] = r2 - r1 + 1
    local b = H.rand(bs, dt, dev)
    local bv, row = b:flat(), n // shape[1]
    for j = 1, #bv do exp[(r1 - 1) * row + j] = bv[j] end
    write = function() a[{{r1, r2}}] = b end
  elseif path == "fill" then
    for j = 1, n do exp[j] = v end
    write = function() a:fill(v) end
  elseif path == "copy_" then
    exp = sv
    write = function() a:copy_(src) end
  elseif path == "add_" then
    for j = 1, n do exp[j] = dt == "i32" and wrap32(before[j] + 2) or round_to(dt, before[j] + 2) end
    write = function() a:add_(2) end
  elseif path == "out=" then
    for j = 1, n do exp[j] = dt == "i32" and wrap32(sv[j] * 3) or round_to(dt, sv[j] * 3) end
    write = function() ck.mul(src, 3, {out = a}) end
  elseif path == "map out" then
    for j = 1, n do exp[j] = sv[j] * 2 end
    write = function() ck.map("y = x * 2", {x = src}, {out = {y = a}}) end
  else -- gemm C: c = A B with beta 0 (C's poison-free old values must not matter)
    local k = random(1, 9)
    local A, B = H.rand({shape[1], k}, dt, dev), H.rand({k, shape[2]}, dt, dev)
    local Av, Bv = A:flat(), B:flat()
    local mag = {}
    for i = 1, shape[1] do
      for j = 1, shape[2] do
        local acc, m = 0, 0
        for p = 1, k do local t = Av[(i - 1) * k + p] * Bv[(p - 1) * shape[2] + j]; acc = acc + t; m = m + abs(t) end
        exp[(i - 1) * shape[2] + j], mag[(i - 1) * shape[2] + j] = acc, m
      end
    end
    tol = function(i) return (dt == "f32" and 2e-6 or 1e-14) * (mag[i] + 1) end
    write = function() ck.gemm(a, A, B, 1, 0) end
  end
  local ok, err = pcall(write)
  if o.shared then
    if ok and n == 0 then return true end -- (a write of nothing may be accepted)
    if ok then return false, "a write into (part of) an expanded view was accepted" end
    return tostring(err):find(SHARED_MSG, 1, true) ~= nil, "unexpected error: " .. tostring(err)
  end
  if not ok then return false, "error: " .. tostring(err) end
  return compare(a, {shape = shape, v = exp, dt = dt}, tol, dt)
end

-- numbers in binary ops and pow, on half dtypes (issue 29) ----------------------------------------------
-- The number is rounded to the array's dtype first, in every op: comparisons, maximum and minimum are then
-- exact, which is what shows the rule (a number between two bf16 values is neither of them otherwise).

local HALF = {f16 = {m = 10, emin = -14, max = 65504}, bf16 = {m = 7, emin = -126, max = (2 - 2 ^ -7) * 2 ^ 127}}
local function round_half(dt, x) -- round to nearest even, with subnormals and overflow to inf
  if x ~= x or x == 0 or x == huge or x == -huge then return x end
  local h = HALF[dt]
  local e = floor(math.log(abs(x), 2))
  if 2 ^ e > abs(x) then e = e - 1 elseif 2 ^ (e + 1) <= abs(x) then e = e + 1 end
  if e < h.emin then e = h.emin end
  local q = 2 ^ (e - h.m)
  local r = x / q
  local fl = floor(r)
  if r - fl > 0.5 or (r - fl == 0.5 and fl % 2 == 1) then fl = fl + 1 end
  local y = fl * q
  if abs(y) > h.max then return y > 0 and huge or -huge end
  return y
end
local EXACT = {eq = true, ne = true, lt = true, le = true, gt = true, ge = true, maximum = true, minimum = true}

local function case_numbers(dev)
  local dt = random() < 0.5 and "f16" or "bf16"
  local name = random() < 0.3 and "pow" or BNAMES[random(#BNAMES)]
  local shape = rnd_shape(3, 200)
  local n = numel(shape)
  local vals = {}
  for i = 1, n do
    local x = round_half(dt, random() * 8 - 4)
    if name == "pow" then x = abs(x) + 2 ^ -6 end -- (negative bases with fractional exponents are NaN)
    vals[i] = round_half(dt, x)
  end
  local a = n > 0 and ck.array(vals, {dtype = dt, device = dev}):reshape(shape) or ck.empty(shape, {dtype = dt, device = dev})
  -- the number: between two values of the dtype, sometimes next to one of the array's own values
  local s = random() * 6 - 3
  if n > 0 and random() < 0.5 then s = vals[random(n)] * (1 + (random() - 0.5) * 2 ^ -(HALF[dt].m + 1)) end
  if name == "pow" then s = random(-2, 3) + (random() < 0.7 and random() * 0.5 or 0) end
  local left = random() < 0.4
  if name == "pow" and left then s = abs(s) + 0.5 end
  -- x ^ (k + d), k = 1 or 2, d under half a unit of the dtype at k: the exponent rounds to k, and x ^ k of
  -- a half value is exact in float, so the result is exact; the unrounded exponent would move a base in
  -- [8, 32) by a unit or more (d ln x)
  local exact_pow = name == "pow" and not left and random() < 0.6
  if exact_pow then
    s = random(1, 2) + 0.45 * 2 ^ -HALF[dt].m
    for i = 1, n do vals[i] = round_half(dt, 8 + random() * 24) end
    if n > 0 then a = ck.array(vals, {dtype = dt, device = dev}):reshape(shape) end
  end
  local sv = round_half(dt, s)
  local f = BINARY[name]
  note("%s %s%s %s number %.17g on %s", name, dt, sstr(shape), left and "left" or "right", s, dev)
  local exp = {}
  for i = 1, n do exp[i] = round_half(dt, left and f(sv, vals[i]) or f(vals[i], sv)) end
  local r
  if name == "pow" then r = ck.pow(left and s or a, left and a or s)
  else r = ck[name](left and s or a, left and a or s) end
  local tol = 0
  if not EXACT[name] and not exact_pow then
    tol = function(i)
      local x = exp[i]
      if x ~= x or x == huge or x == -huge then return 0 end
      return (name == "pow" and 2 or 1) * 2 ^ -HALF[dt].m * abs(x) + 2 ^ (HALF[dt].emin - HALF[dt].m)
    end
  end
  local cmp = ({eq = 1, ne = 1, lt = 1, le = 1, gt = 1, ge = 1})[name]
  return compare(r, {shape = shape, v = exp, dt = dt}, tol, cmp and "bool" or dt) -- (comparisons give bool: issue 32)
end

-- operands of fused kernels (issue 29) ---------------------------------------------------------------
-- ck.map / ck.reduce_map with 1 to 70 inputs of random views: at most 48 operands (inputs and outputs, one
-- limit checked at the entry) run and match the oracle; more are refused with that limit's message, never a
-- crash or garbage (past 40 they used to overflow the binding's buffers).

local MAP_LIMIT = 48

-- Integer dtypes too (issue 32: ck.map on every real dtype): any value of the dtype, so the sums wrap; each node
-- of x1 + x2 + ... wraps to the dtype, which is the exact sum wrapped once; reduce_map sums those in i64.
local OPERAND_DTS = {"f32", "f64", "f32", "f64", "i32", "u8", "i16", "u32", "i64", "i8"}

local function case_operands(dev)
  local k = random() < 0.5 and random(38, 50) or random(1, 70)
  local dt = OPERAND_DTS[random(#OPERAND_DTS)]
  local int = H.INT_BITS[dt] ~= nil
  local shape = rnd_shape(3, 60)
  local inputs, names, vals = {}, {}, {}
  for i = 1, k do
    local a, o = build(shape, dt, dev, random(0, 2), false, int and "wide" or "u")
    names[i] = "x" .. i
    inputs[names[i]] = a
    vals[i] = o.v
  end
  local reduce = random() < 0.4
  note("%s with %d inputs %s%s on %s", reduce and "reduce_map" or "map", k, dt, sstr(shape), dev)
  local expr = table.concat(names, " + ")
  local ok, r = pcall(function()
    if reduce then return ck.reduce_map({map = expr, reduce = "a + b", identity = 0}, inputs) end
    return ck.map("y = " .. expr, inputs)
  end)
  if k + 1 > MAP_LIMIT then
    if ok then return false, ("%d operands accepted (the limit is %d)"):format(k + 1, MAP_LIMIT) end
    return tostring(r):find("at most " .. MAP_LIMIT .. " operands", 1, true) ~= nil, "unexpected error: " .. tostring(r)
  end
  if not ok then return false, "error: " .. tostring(r) end
  local n = numel(shape)
  if int then -- exact: Lua integers wrap modulo 2^64, then once to the dtype
    local ref, total = {}, 0
    for j = 1, n do
      local acc = 0
      for i = 1, k do acc = acc + vals[i][j] end
      ref[j] = H.wrap_int(dt, acc)
      total = total + ref[j]
    end
    if reduce then return compare(r, {shape = {}, v = {total}, dt = "i64"}, 0, "i64") end
    return compare(r, {shape = shape, v = ref, dt = dt}, 0, dt)
  end
  local ref, mag = {}, {}
  for j = 1, n do
    local acc, m = 0, 0
    for i = 1, k do acc = acc + vals[i][j]; m = m + abs(vals[i][j]) end
    ref[j], mag[j] = acc, m
  end
  local eps = EPS[dt] * (k + 2)
  if reduce then
    local acc, m = 0, 0
    for j = 1, n do acc, m = acc + ref[j], m + mag[j] end
    return compare(r, {shape = {}, v = {acc}, dt = dt}, function() return eps * (n + k) * m + 1e-30 end, dt)
  end
  return compare(r, {shape = shape, v = ref, dt = dt}, function(j) return eps * mag[j] + 1e-30 end, dt)
end

-- index ops (issue 32): index_select, gather, take, where, masked_select, find on random views and dtypes,
-- indices i32/i64, sometimes one out of range (then the error, naming the op) ---------------------------------
local function case_index(dev)
  local dt = ({"f32", "f64", "i32", "f16", "bf16"})[random(5)]
  local shape = rnd_shape(3, 400)
  if #shape == 0 then shape = {random(1, 5)} end
  local a, o = build(shape, dt, dev, random(0, 2), false, "u")
  local nd, n = #shape, numel(shape)
  local rs = row_strides(shape)
  local idt = random() < 0.5 and "i32" or "i64"
  local op = ({"index_select", "gather", "take", "where", "masked_select", "find"})[random(6)]
  local d = random(1, nd)
  local bad = random() < 0.1
  local function pick(hi) return random(1, math.max(hi, 1)) end
  local function at(sub) local p = 1; for k = 1, nd do p = p + (sub[k] - 1) * rs[k] end; return o.v[p] end
  local function subs(p, sh) local s, q = {}, p - 1; for k = #sh, 1, -1 do s[k] = q % sh[k] + 1; q = q // sh[k] end; return s end
  note("%s %s%s dim %d idx %s on %s%s", op, dt, sstr(shape), d, idt, dev, bad and " (one index out of range)" or "")
  local r, ref, rshape
  if op == "index_select" or op == "gather" or op == "take" then
    if n == 0 then return true end
    local ishape = op == "index_select" and {random(0, 6)} or op == "take" and rnd_shape(2, 30) or copy(shape)
    if op == "gather" then ishape[d] = random(0, 5); for k = 1, nd do if k ~= d then ishape[k] = random(0, shape[k]) end end end
    local ni, hi = numel(ishape), op == "take" and n or shape[d]
    local it = {}
    for i = 1, ni do it[i] = pick(hi) end
    if bad and ni > 0 then it[random(ni)] = random() < 0.5 and 0 or hi + 1 end
    local ix = ck.array(it, {dtype = idt, device = dev}):reshape(ishape)
    local ok, res
    if op == "take" then ok, res = pcall(ck.take, a, ix) else ok, res = pcall(ck[op], a, d, ix) end
    if bad and ni > 0 then return not ok and tostring(res):find("ck." .. op .. ": index", 1, true) ~= nil, "expected a range error, got " .. tostring(res) end
    if not ok then return false, "error: " .. tostring(res) end
    r, ref = res, {}
    if op == "take" then rshape = ishape; for i = 1, ni do ref[i] = o.v[it[i]] end
    elseif op == "gather" then rshape = ishape
      for p = 1, ni do local s2 = subs(p, ishape); s2[d] = it[p]; ref[p] = at(s2) end
    else rshape = copy(shape); rshape[d] = ishape[1]
      for p = 1, numel(rshape) do local s2 = subs(p, rshape); s2[d] = it[s2[d]]; ref[p] = at(s2) end
    end
  else
    local mt = {}
    for i = 1, n do mt[i] = random() < 0.5 end
    local m = ck.array(mt, {dtype = "bool", device = dev}):reshape(shape)
    ref, rshape = {}, nil
    if op == "where" then
      r, rshape = ck.where(m, a, -1), shape
      for i = 1, n do ref[i] = mt[i] and o.v[i] or -1 end
    elseif op == "masked_select" then
      r = ck.masked_select(a, m)
      for i = 1, n do if mt[i] then ref[#ref + 1] = o.v[i] end end
      rshape = {#ref}
    else
      r = ck.find(m)
      for i = 1, n do if mt[i] then ref[#ref + 1] = i end end
      return compare(r, {shape = {#ref}, v = ref, dt = "i64"}, function() return 0 end, "i64")
    end
  end
  -- the oracle's values are those the array was made from: 2-byte floats hold them rounded once (moves are exact)
  local rel = dt == "bf16" and 2^-8 or dt == "f16" and 2^-10 or 0
  return compare(r, {shape = rshape, v = ref, dt = dt}, function(j) return rel * abs(ref[j]) + (rel > 0 and 1e-7 or 0) end, dt)
end

-- the integer dtypes and bool (issue 32) -------------------------------------------------------------
-- u8 i8 i16 u32 i64 arrays of random shapes and views, with each other, with bool and with numbers: every
-- integer op, comparison, logical op and reduction against Lua integers (which wrap modulo 2^64, so the oracle
-- is exact), the result wrapped to its dtype (H.wrap_int).
local IDT = {"u8", "i8", "i16", "u32", "i64", "i32"}
local irange = H.int_range
local function ipromote(a, b) -- docs/api.md's table for two integer dtypes
  if a == b then return a end
  local ba, sa, bb, sb = H.INT_BITS[a][1], H.INT_BITS[a][2], H.INT_BITS[b][1], H.INT_BITS[b][2]
  if sa == sb then return ba >= bb and a or b end
  local s, u = sa and a or b, sa and b or a
  if H.INT_BITS[s][1] > H.INT_BITS[u][1] then return s end
  return ({[8] = "i16", [16] = "i32", [32] = "i64"})[H.INT_BITS[u][1]] or "i64"
end
local IOPS = {
  add = function(x, y) return x + y end, sub = function(x, y) return x - y end, mul = function(x, y) return x * y end,
  maximum = math.max, minimum = math.min,
  div = function(x, y) if y == 0 then return 0 end; if y == -1 then return -x end; local q = x // y
    if q < 0 and q * y ~= x then q = q + 1 end; return q end,
  idiv = function(x, y) if y == 0 then return 0 end; return x // y end,
  mod = function(x, y) if y == 0 then return 0 end; return x % y end,
  bitand = function(x, y) return x & y end, bitor = function(x, y) return x | y end, bitxor = function(x, y) return x ~ y end,
  eq = function(x, y) return x == y end, lt = function(x, y) return x < y end, ge = function(x, y) return x >= y end,
  logical_and = function(x, y) return x ~= 0 and y ~= 0 end, logical_xor = function(x, y) return (x ~= 0) ~= (y ~= 0) end,
}
local INAMES = {}
for k in pairs(IOPS) do INAMES[#INAMES + 1] = k end
table.sort(INAMES)

local function case_intdt(dev)
  local shape = rnd_shape(3, 300)
  local n = numel(shape)
  local da, db = IDT[random(#IDT)], random() < 0.5 and IDT[random(#IDT)] or nil
  local function vals(dt, m)
    local lo, hi = irange(dt)
    local t = {}
    for i = 1, m do
      local r = random()
      t[i] = r < 0.08 and lo or r < 0.16 and hi or r < 0.3 and 0 or random(math.max(lo, -1000), math.min(hi, 1000))
    end
    return t
  end
  local function make(dt)
    local v = vals(dt, n)
    local a = n > 0 and ck.array(v, {dtype = dt, device = "host"}):reshape(shape) or ck.empty(shape, {dtype = dt, device = "host"})
    a = a:to(dev)
    if #shape == 2 and random() < 0.4 then -- a transposed view with the same values in the same logical order
      a = a:t():contiguous():t()
      note("a:t():contiguous():t() view")
    end
    return a, v
  end
  local a, A = make(da)
  local name = INAMES[random(#INAMES)]
  local f = IOPS[name]
  local b, B, rdt
  if db then
    b, B = make(db)
    rdt = ipromote(da, db)
  else -- a number the dtype holds
    local lo, hi = irange(da)
    local s = random(math.max(lo, -50), math.min(hi, 50))
    b, B, rdt = s, nil, da
  end
  local bool = name == "eq" or name == "lt" or name == "ge" or name:find("^logical") ~= nil
  note("%s %s%s %s on %s", name, da, sstr(shape), db and (db .. " array") or ("number " .. tostring(b)), dev)
  local ok, r = pcall(ck[name], a, b)
  if not ok then return false, "error: " .. tostring(r) end
  if r:dtype() ~= (bool and "bool" or rdt) then return false, ("dtype %s, expected %s"):format(r:dtype(), bool and "bool" or rdt) end
  local g = n > 0 and r:to("host"):flat() or {}
  for i = 1, n do
    local x, y = A[i], B and B[i] or b
    local want = f(x, y)
    if not bool then want = H.wrap_int(rdt, want) end
    if g[i] ~= want then return false, ("element %d: %s(%d, %d) gave %s, expected %s"):format(i, name, x, y, tostring(g[i]), tostring(want)) end
  end
  -- a reduction of a along a random dim, or all of it
  local rop = ({"sum", "prod", "max", "min", "count_nonzero", "any"})[random(6)]
  if n == 0 and (rop == "max" or rop == "min") then return true end
  local v = ck[rop](a)
  local acc = (rop == "sum" or rop == "count_nonzero") and 0 or rop == "prod" and 1 or nil
  for i = 1, n do
    local x = A[i]
    if rop == "sum" then acc = acc + x elseif rop == "prod" then acc = acc * x
    elseif rop == "count_nonzero" then acc = acc + (x ~= 0 and 1 or 0)
    elseif rop == "any" then acc = acc or x ~= 0
    elseif rop == "max" then acc = acc and math.max(acc, x) or x
    else acc = acc and math.min(acc, x) or x end
  end
  if rop == "any" then acc = acc or false end
  local want_dt = (rop == "sum" or rop == "prod" or rop == "count_nonzero") and "i64" or rop == "any" and "bool" or da
  if v:dtype() ~= want_dt then return false, ("%s: dtype %s, expected %s"):format(rop, v:dtype(), want_dt) end
  if v:item() ~= acc then return false, ("%s: got %s, expected %s"):format(rop, tostring(v:item()), tostring(acc)) end
  return true
end

-- integer and bool matmul (issues 32 and 37) ---------------------------------------------------------------
-- Operands of the integer dtypes and bool, of one dtype or two (promoted as elementwise ops do; bool x bool: i32),
-- values over each dtype's whole range or small, through random views; the oracle sums in Lua integers (modulo
-- 2^64) and wraps to the result dtype, so it is exact; gemm with integer alpha and beta the dtype holds.
local MIDT = {"u8", "i8", "i16", "u32", "i64", "i32", "bool"}
local function case_matmul_int(dev)
  local dta = MIDT[random(#MIDT)]
  local dtb = random() < 0.35 and MIDT[random(#MIDT)] or dta
  local dt = dta == "bool" and (dtb == "bool" and "i32" or dtb) or dtb == "bool" and dta or ipromote(dta, dtb)
  local m, n, k = MDIMS[random(#MDIMS)], MDIMS[random(#MDIMS)], MDIMS[random(#MDIMS)]
  if m * n * k > 40000 then m, n = math.min(m, 13), math.min(n, 13) end
  local ash, bsh = {m, k}, {k, n}
  if random() < 0.4 then
    local batch = ({0, 1, 2, 3, 5})[random(5)]
    local w = random(4)
    if w ~= 2 then table.insert(ash, 1, batch) end
    if w ~= 1 then table.insert(bsh, 1, w == 3 and 1 or batch) end
  end
  local wide = random() < 0.6 -- the whole range (sums wrap) or small values (rnd_value's kinds "wide" and "small")
  local kind = wide and "wide" or "small"
  local a, ao, ad = build(ash, dta, dev, random(0, 2), false, kind)
  local b, bo, bd = build(bsh, dtb, dev, random(0, 2), false, kind)
  local variant = pick_variant("matmul", dev)
  note("matmul_int %s%s x %s%s -> %s on %s via %s and %s, variant %s%s", dta, sstr(ash), dtb, sstr(bsh), dt, dev, ad,
    bd, tostring(variant), wide and ", whole-range values" or "")
  local B = (#ash == 3 or #bsh == 3) and math.max(#ash == 3 and ash[1] or 1, #bsh == 3 and bsh[1] or 1) or nil
  if (#ash == 3 and ash[1] == 0) or (#bsh == 3 and bsh[1] == 0) then B = 0 end
  local rshape = B and {B, m, n} or {m, n}
  local function num(x) if type(x) == "boolean" then return x and 1 or 0 end; return x end
  local function A(bi, i, p) local base = (#ash == 3 and ash[1] > 1) and bi * m * k or 0; return num(ao.v[1 + base + i * k + p]) end
  local function Bv(bi, p, j) local base = (#bsh == 3 and bsh[1] > 1) and bi * k * n or 0; return num(bo.v[1 + base + p * n + j]) end
  local gemm = random() < 0.3
  local lo = irange(dt)
  local alpha, beta = 1, 0
  if gemm then alpha, beta = random(lo < 0 and -3 or 0, 3), random(0, 2) end
  local c, co
  local hi = select(2, irange(dt))
  if gemm then
    c, co = fresh(rshape, dt, dev, kind)
    if beta == 0 then c:fill(hi); note("c poisoned (the dtype's largest value), beta 0") end
    note("gemm alpha %d beta %d", alpha, beta)
  end
  local v, idx = {}, 0
  for bi = 0, (B or 1) - 1 do
    for i = 0, m - 1 do
      for j = 0, n - 1 do
        idx = idx + 1
        local s = 0
        for p = 0, k - 1 do s = s + A(bi, i, p) * Bv(bi, p, j) end -- Lua integers: modulo 2^64
        s = H.wrap_int(dt, s)
        if gemm then s = H.wrap_int(dt, alpha * s + beta * co.v[idx]) end
        v[idx] = s
      end
    end
  end
  local res
  if gemm then
    res = ck.gemm(c, a, b, alpha, beta, opts_with({}, variant))
    if res ~= nil and res ~= c then return false, "gemm did not return c" end
    res = c
  elseif random() < 0.3 then
    local out = ck.full(rshape, hi, {dtype = dt, device = dev}) -- poisoned
    res = ck.matmul(a, b, opts_with({out = out}, variant))
    if res ~= out then return false, "out= not returned" end
  else res = ck.matmul(a, b, opts_with({}, variant)) end
  if sstr(res:shape()) ~= sstr(rshape) then return false, ("shape %s, expected %s"):format(sstr(res:shape()), sstr(rshape)) end
  if res:dtype() ~= dt then return false, ("dtype %s, expected %s"):format(res:dtype(), dt) end
  local g = res:numel() > 0 and res:to("host"):flat() or {}
  for i = 1, #v do
    if g[i] ~= v[i] then return false, ("element %d of %d: got %s, expected %s"):format(i, #v, tostring(g[i]), tostring(v[i])) end
  end
  return true
end

local FAMILIES = {
  {"unary", case_unary, 0.22}, {"binary", case_binary, 0.26}, {"reduce", case_reduce, 0.22},
  {"matmul", case_matmul, 0.12}, {"copy", case_copy, 0.18}, {"writes", case_writes, 0.08},
  {"numbers", case_numbers, 0.06}, {"operands", case_operands, 0.01}, {"index", case_index, 0.08},
  {"intdt", case_intdt, 0.06}, {"matmul_int", case_matmul_int, 0.04},
}

local function run_family(fi)
  local fam, fn, share = table.unpack(FAMILIES[fi])
  local only_fam, only_i = nil, nil
  if ONLY then only_fam, only_i = ONLY:match("^(%w+):(%d+)$"); only_i = tonumber(only_i) end
  if only_fam and only_fam ~= fam then return {ran = 0, failed = 0, skipped = {}, fails = {}} end
  local n = math.max(1, floor(TOTAL * share + 0.5))
  local res = {ran = 0, failed = 0, skipped = {}, fails = {}, ran_variants = {}}
  for i = 1, n do
    if not only_i or only_i == i then
      math.randomseed(SEED, fi * 1000003 + i)
      ck.seed((SEED * 31 + fi * 1000003 + i) % 2^31)
      local dev = DEVICES[random(#DEVICES)]
      ctx = {desc = {}}
      local ok, okv, msg = pcall(fn, dev)
      if ok and ctx.skip then
        res.skipped[ctx.skip] = (res.skipped[ctx.skip] or 0) + 1
      else
        res.ran = res.ran + 1
        if dev == "cuda" then
          local lr = ck.last_ran()
          if lr and lr.name then res.ran_variants[lr.name] = (res.ran_variants[lr.name] or 0) + 1 end
        end
        if not ok or not okv then
          res.failed = res.failed + 1
          if #res.fails < 8 then
            res.fails[#res.fails + 1] = ("  %s:%d  %s\n    %s"):format(fam, i, table.concat(ctx.desc, "; "),
              ok and tostring(msg) or ("error: " .. tostring(okv)))
          end
        end
      end
    end
  end
  return res
end

-- The cases run while the spec loads, so that only the known bugs a run actually reached get a pending line.
local totals = {ran = 0, failed = 0, skipped = {}}
local RESULTS = {}
for fi in ipairs(FAMILIES) do
  local res = run_family(fi)
  RESULTS[fi] = res
  totals.ran, totals.failed = totals.ran + res.ran, totals.failed + res.failed
  for k, v in pairs(res.skipped) do totals.skipped[k] = (totals.skipped[k] or 0) + v end
end

describe("fuzz against a plain-Lua oracle #fuzz", function()
  for fi, f in ipairs(FAMILIES) do
    local fam, res = f[1], RESULTS[fi]
    it(fam .. " (seed " .. SEED .. ")", function()
      if next(res.ran_variants or {}) then
        local t = {}
        for k, v in pairs(res.ran_variants) do t[#t + 1] = k .. "=" .. v end
        table.sort(t)
        io.write(("\n[fuzz] %s on cuda ran: %s\n"):format(fam, table.concat(t, " ")))
      end
      assert(res.ran > 0 or ONLY, "no " .. fam .. " case ran")
      assert(res.failed == 0, ("%d of %d %s cases failed (seed %d; replay one with CUKERN_FUZZ_SEED=%d " ..
        "CUKERN_FUZZ_CASES=%d CUKERN_FUZZ_ONLY=<family:case> sh spec/run.sh spec/fuzz_spec.lua):\n%s")
        :format(res.failed, res.ran, fam, SEED, SEED, TOTAL, table.concat(res.fails, "\n")))
    end)
  end
  -- One pending line per known bug reached, with the number of fuzz cases it kept out. In a long run each
  -- generator must still reach its bug (so that dropping the entry after the fix re-enables a live check).
  local keys = {}
  for k in pairs(KNOWN_BUGS) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, key in ipairs(keys) do
    local n = totals.skipped[key] or 0
    if n > 0 then
      it("known bug " .. key, function()
        pending(("%s: %d fuzz cases skipped until the fix is merged (KNOWN_BUGS.%s)"):format(KNOWN_BUGS[key], n, key))
      end)
    elseif TOTAL >= 50000 and not (RUN_KNOWN or ONLY or RUN_KNOWN_ENV ~= "") then
      it("known bug " .. key .. " is still reached", function()
        error("no fuzz case reached known bug " .. key .. ": its generator is gone; drop the entry or restore the case")
      end)
    end
  end
  it("summary", function()
    if os.getenv("CUKERN_FUZZ_VERBOSE") == "1" or TOTAL > 3000 or totals.failed > 0 then
      io.write(("\n[fuzz] seed %d: %d cases run, %d failed\n"):format(SEED, totals.ran, totals.failed))
    end
    assert(ONLY or totals.ran >= TOTAL * 0.9, ("only %d of %d cases ran"):format(totals.ran, TOTAL))
  end)
end)
