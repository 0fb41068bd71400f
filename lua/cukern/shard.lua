--- cukern.shard: arrays spread over several devices, for data-parallel work (docs/shard.md).
--   ck.shard(a, {devices, dim})  a split into near-equal contiguous blocks along dim, block i copied to devices[i]
--   ck.replicate(a, devices)     a full copy of a on every device
-- A sharded or replicated value is a table {parts, devices, dim, kind} (metatable SH): its operators, elementwise
-- methods, reductions and matrix products run on each device's part, and ck.nccl's collectives combine what crosses
-- devices. Nothing moves between devices implicitly: a plain array mixed in is an error (ck.replicate it first), and
-- so are two different layouts. Elsewhere: MATLAB codistributed, torch DTensor (Shard(d), Replicate()), JAX sharding.
local core = require "cukern.core"
local errors, args, options = require "cukern.errors", require "cukern.args", require "cukern.options"

local S = {}
local type, select, ipairs, pairs, getmetatable, setmetatable = type, select, ipairs, pairs, getmetatable, setmetatable
local fmt, concat, pack, unpack, math_type = string.format, table.concat, table.pack, table.unpack, math.type
local raise, call, where_of = errors.raise, errors.call, errors.where_of
local is_array, show, check_live, check_dim, check_opts = args.is_array, args.show, args.check_live, args.check_dim,
  args.check_opts
local M, MT = core.methods, core.array_mt

local SH, METHODS = {__name = "cukern.shard"}, {} -- the metatable of sharded and replicated values, their methods

local function is_sh(x) return getmetatable(x) == SH end
local function new(kind, parts, devices, dim)
  return setmetatable({parts = parts, devices = devices, dim = dim, kind = kind}, SH)
end

-- ---------------------------------------------------------------- layouts

--- A shard's block sizes along its split dim, their total, and where block i starts (1-based).
local function blocks(s, i)
  local sizes, n, first = {}, 0, 1
  for j, p in ipairs(s.parts) do
    sizes[j] = p:shape()[s.dim]
    n = n + sizes[j]
    if i and j < i then first = first + sizes[j] end
  end
  return sizes, n, first
end

local function global_shape(s)
  local sh = s.parts[1]:shape()
  if s.kind == "shard" then sh[s.dim] = select(2, blocks(s)) end
  return sh
end

--- What a value is, for messages: "f32[7x5] split along dim 1 as 3+2+2 over host:0, host:1, host:2".
local function describe(x)
  if is_array(x) then
    return x:is_freed() and "a freed array" or fmt("%s[%s] on %s", x:dtype(), concat(x:shape(), "x"), x:device())
  end
  if not is_sh(x) then return show(x) end
  local head = fmt("%s[%s]", x.parts[1]:dtype(), concat(global_shape(x), "x"))
  if x.kind == "replicate" then return head .. " replicated on " .. concat(x.devices, ", ") end
  return fmt("%s split along dim %d as %s over %s", head, x.dim, concat(blocks(x), "+"), concat(x.devices, ", "))
end

local function same_devices(a, b) return concat(a.devices, ",") == concat(b.devices, ",") end

-- Two shards alike: the same devices, ndim, split dim and block sizes.
local function same_layout(a, b)
  if a.dim ~= b.dim or not same_devices(a, b) or a.parts[1]:ndim() ~= b.parts[1]:ndim() then return false end
  for i, p in ipairs(a.parts) do if p:shape()[a.dim] ~= b.parts[i]:shape()[b.dim] then return false end end
  return true
end

local function mixed(where, x, y)
  raise(fmt("%s: mixed layouts: %s and %s; gather one (s:gather()) and ck.shard or ck.replicate it like the other",
    where, describe(x), describe(y)))
end

--- x's parts must be live (else a freed part fails later, in a message about a:shape).
local function check_parts(where, x, what)
  for _, p in ipairs(x.parts) do if p:is_freed() then raise(fmt("%s: %s was freed (s:free())", where, what)) end end
end

--- x must be a sharded or replicated value (or a number); a plain array is refused: it would be copied implicitly.
local function check_operand(where, x, what, no_number)
  if is_sh(x) then return check_parts(where, x, what) or x end
  if type(x) == "number" and not no_number then return x end
  if is_array(x) then
    raise(fmt("%s: %s is a plain array (%s); ck.replicate(x, devices) it first (or ck.shard it like the other " ..
      "operand): using it here would copy it to every device implicitly", where, what, describe(x)))
  end
  raise(fmt("%s: %s must be a sharded or replicated array%s, got %s", where, what, no_number and "" or " or a number",
    show(x)))
end

--- The layout the result of operands xs takes (the first shard, else the first replicated value); mixed ones raise.
local function layout_of(where, xs)
  local lay
  for _, x in ipairs(xs) do if is_sh(x) and (not lay or (lay.kind ~= "shard" and x.kind == "shard")) then lay = x end end
  for _, x in ipairs(xs) do
    if is_sh(x) and x ~= lay and (not same_devices(x, lay) or (x.kind == "shard" and not same_layout(x, lay))) then
      mixed(where, xs[1], x == xs[1] and lay or x)
    end
  end
  return lay
end

--- Part i of the replicated r, used against the shard s: narrowed to s's block i where r spans the split dim
-- (aligned from the end, as broadcasting aligns; a view, no copy), whole where it broadcasts (size 1 or no dim).
local function localize(where, s, r, i)
  local p = r.parts[i]
  local rd = s.dim - (s.parts[1]:ndim() - p:ndim())
  if rd < 1 then return p end
  local sizes, n, first = blocks(s, i)
  local size = p:shape()[rd]
  if size == n then return p:narrow(rd, first, first + sizes[i] - 1) end
  if size == 1 then return p end
  raise(fmt("%s: the replicated operand (%s) does not match %s: its dim %d has size %d, not %d (or 1)", where,
    describe(r), describe(s), rd, size, n))
end

--- Results parts[i] (one per device) as a value laid out like lay, or nil where they do not fit: arrays on lay's
-- devices and, for a shard, a dim whose sizes are lay's blocks (counted from the end, then from the start).
local function wrap(lay, parts)
  for i, d in ipairs(lay.devices) do if not is_array(parts[i]) or parts[i]:device() ~= d then return nil end end
  if lay.kind == "replicate" then return new("replicate", parts, lay.devices) end
  local nd, rn = lay.parts[1]:ndim(), parts[1]:ndim()
  for _, d in ipairs {lay.dim + rn - nd, lay.dim} do
    local fits = d >= 1 and d <= rn
    for i, p in ipairs(parts) do fits = fits and p:ndim() == rn and p:shape()[d] == lay.parts[i]:shape()[lay.dim] end
    if fits then return new("shard", parts, lay.devices, d) end
  end
end

-- f(part, ...) on every part; the results keep s's layout.
local function per_part(where, s, f, ...)
  local parts = {}
  for i, p in ipairs(s.parts) do parts[i] = call(where, f, p, ...) end
  return new(s.kind, parts, s.devices, s.dim)
end

--- f(x_i, y_i) on every device for an elementwise op between x and y (at least one sharded or replicated).
local function ew2(where, f, x, y)
  check_operand(where, x, "the left operand"); check_operand(where, y, "the right operand")
  local lay = layout_of(where, {x, y})
  local function part(v, i)
    if not is_sh(v) then return v end
    if v.kind == "replicate" and lay.kind == "shard" then return localize(where, lay, v, i) end
    return v.parts[i]
  end
  local parts = {}
  for i = 1, #lay.parts do parts[i] = call(where, f, part(x, i), part(y, i)) end
  return wrap(lay, parts) or raise(where .. ": the results do not keep the operands' layout (" .. describe(lay) .. ")")
end

--- A device name as the core names it ("host" -> "host:0"); unknown devices raise.
local function device_id(where, d, what)
  if type(d) ~= "string" then raise(fmt("%s: %s must be a device name (\"cuda:1\", \"host:0\"), got %s", where, what, show(d))) end
  return call(where, core.device, d).id
end

--- A list of devices, by their core names; the default: every CUDA device, or without one every host device.
local function check_devices(where, devs)
  local out, seen = {}, {}
  if devs == nil then
    local want = core.has_cuda() and "cuda" or "host"
    for _, d in ipairs(core.devices()) do if d.backend == want then out[#out + 1] = d.id end end
    return out
  end
  local n, tbl = 0, type(devs) == "table" and not is_array(devs) and not is_sh(devs)
  if tbl then for _ in pairs(devs) do n = n + 1 end end
  if n == 0 or n ~= #devs then
    raise(fmt("%s: devices must be a non-empty list of device names such as {\"cuda:0\", \"cuda:1\"}, got %s", where,
      tbl and (n == 0 and "an empty table" or "a table that is not a list") or show(devs)))
  end
  for i, d in ipairs(devs) do
    out[i] = device_id(where, d, "device " .. i .. " of the list")
    if seen[out[i]] then
      raise(fmt("%s: device %s is listed twice (entries %d and %d); each device holds one part", where, out[i], seen[out[i]], i))
    end
    seen[out[i]] = i
  end
  return out
end

--- x on device d as a new array of its own (a:to on the same device returns a itself).
local function copy_to(x, d)
  local y = x:to(d)
  return y:storage_id() == x:storage_id() and y:clone() or y
end

-- ---------------------------------------------------------------- methods

--- A's dim d checked and counted from 1 (negative counts from the end).
local function norm_dim(where, a, d)
  d = check_dim(where, a, d)
  return d < 0 and a:ndim() + 1 + d or d
end

local function at_most(where, n, takes, ...)
  if select("#", ...) > n then raise(fmt("%s: takes %s, got %d arguments", where, takes, select("#", ...))) end
end

--- METHODS[name]: called on a sharded or replicated value with at most nmax arguments, f(where, s, ...).
local function method(name, nmax, takes, f)
  local where = where_of("s:" .. name)
  METHODS[name] = function(s, ...)
    if not is_sh(s) then
      raise(fmt("%s: call it as s:%s(...) on a sharded or replicated array, got %s", where, name, show(s)))
    end
    at_most(where, nmax, takes, ...)
    if name ~= "free" then check_parts(where, s, "the array") end
    return f(where, s, ...)
  end
end

method("shape", 0, "no arguments", function(_, s) return global_shape(s) end)
method("dtype", 0, "no arguments", function(_, s) return s.parts[1]:dtype() end)
method("ndim", 0, "no arguments", function(_, s) return s.parts[1]:ndim() end)
method("numel", 0, "no arguments", function(_, s)
  local n = 1
  for _, v in ipairs(global_shape(s)) do n = n * v end
  return n
end)

--- s:gather([device]): the whole array on one device (default the first): each part copied into its block.
method("gather", 1, "one device", function(where, s, device)
  local target = device == nil and s.devices[1] or device_id(where, device, "the device")
  if s.kind == "replicate" then
    for i, d in ipairs(s.devices) do if d == target then return call(where, M.clone, s.parts[i]) end end
    return call(where, copy_to, s.parts[1], target)
  end
  local out, first = call(where, core.empty, global_shape(s), s.parts[1]:dtype(), target), 1
  for _, p in ipairs(s.parts) do
    local len = p:shape()[s.dim]
    local src = p:device() == target and p or call(where, p.to, p, target)
    call(where, M.copy_, out:narrow(s.dim, first, first + len - 1), src)
    first = first + len
  end
  return out
end)

--- s:map(fn, ...): fn(part_i, args_i...) on every device; sharded and replicated arguments give their part i (a
-- replicated one whole), anything else but a plain array passes as it is. Each result (fn may return several) is
-- wrapped like the operands' layout where its parts fit it, else returned as the list of parts.
method("map", math.huge, "", function(where, s, fn, ...)
  if type(fn) ~= "function" then raise(fmt("%s: argument 1 must be a function, got %s", where, show(fn))) end
  local extra, all = pack(...), {s}
  for j = 1, extra.n do
    if is_array(extra[j]) then check_operand(where, extra[j], "argument " .. (j + 1)) end
    all[#all + 1] = is_sh(extra[j]) and extra[j] or nil
  end
  local lay, res, nres = layout_of(where, all), {}, 0
  for i = 1, #lay.parts do
    local a = {}
    for j = 1, extra.n do a[j] = is_sh(extra[j]) and extra[j].parts[i] or extra[j] end
    res[i] = pack(fn(s.parts[i], unpack(a, 1, extra.n)))
    if res[i].n > nres then nres = res[i].n end
  end
  local out = {}
  for j = 1, nres do
    local parts = {}
    for i = 1, #res do parts[i] = res[i][j] end
    out[j] = wrap(lay, parts) or parts
  end
  return unpack(out, 1, nres)
end)

--- s:to(dtype): every part converted (moving devices is s:gather's and ck.shard's work).
method("to", 1, "one dtype", function(where, s, dtype)
  if type(dtype) ~= "string" or dtype:match("^cuda") or dtype:match("^host") then
    raise(fmt("%s: takes a dtype (f32, f64, i32, f16, bf16), got %s; to move it use s:gather(device) and ck.shard", where, show(dtype)))
  end
  return per_part(where, s, M.to, dtype)
end)
method("clone", 0, "no arguments", function(where, s) return per_part(where, s, M.clone) end)
method("clamp", 2, "(lo, hi)", function(where, s, lo, hi) return per_part(where, s, M.clamp, lo, hi) end)
method("pow", 1, "one exponent", function(where, s, b) return ew2(where, M.pow, s, b) end)

--- s:sync(): waits for the work queued on every device of s. s:free(): frees every part now.
method("sync", 0, "no arguments", function(where, s) for _, d in ipairs(s.devices) do call(where, core.sync, d) end end)
method("free", 0, "no arguments", function(where, s) for _, p in ipairs(s.parts) do call(where, M.free, p) end end)

-- ---------------------------------------------------------------- reductions and matrix products

local RED = options.set("keepdim", "variant")

-- max / min along the split dim: the values combine with an all-reduce; each device proposes the global index of
-- its own value where it equals the winner (or both are NaN, which max and min propagate), and the smallest
-- proposal wins, as the first occurrence wins within one array.
local function extreme_across(where, name, s, dim, o, nccl)
  local v, ix, mine, cand = {}, {}, {}, {}
  for i, p in ipairs(s.parts) do v[i], ix[i] = call(where, M[name], p, dim, o); mine[i] = v[i]:clone() end
  call(where, nccl.all_reduce, v, name)
  local sizes, n = blocks(s)
  local off = 0
  for i = 1, #s.parts do
    cand[i] = call(where, function(m, g, k)
      local hit = m:eq(g):maximum(m:ne(m):mul(g:ne(g))):to("i32")
      return k:add(off):mul(hit):add(hit:mul(-(n + 1)):add(n + 1))
    end, mine[i], v[i], ix[i])
    off = off + sizes[i]
  end
  call(where, nccl.reduce, cand, "min", 1)
  return v[1], cand[1]
end

--- s:sum([dim] [, {keepdim}]) and max, min, mean, prod: over everything or the split dim, a plain array on the
-- first device (per-part reductions combined by ck.nccl.reduce); along another dim, a shard; a replicated value
-- reduces every copy (a replicated result). max and min along a dim also return the (1-based) indices.
local function reduce(where, name, s, dim, o, nccl)
  if type(dim) == "table" and o == nil then dim, o = nil, dim end
  if o ~= nil then check_opts(where, o, RED) end
  if dim ~= nil then dim = norm_dim(where, s.parts[1], dim) end
  local f, two = M[name], (name == "max" or name == "min") and dim ~= nil
  local function each(g)
    local v, ix = {}, {}
    for i, p in ipairs(s.parts) do v[i], ix[i] = call(where, g, p, dim, o) end
    return v, ix
  end
  local kind, rdim
  if s.kind == "replicate" then kind = "replicate"
  elseif dim ~= nil and dim ~= s.dim then
    kind, rdim = "shard", ((o and o.keepdim) or dim > s.dim) and s.dim or s.dim - 1
  end
  if kind then
    local v, ix = each(f)
    if two then return new(kind, v, s.devices, rdim), new(kind, ix, s.devices, rdim) end
    return new(kind, v, s.devices, rdim)
  end
  -- across the devices: everything, or the split dim
  if two then return extreme_across(where, name, s, dim, o, nccl) end
  if name == "mean" and s.parts[1]:dtype() == "i32" then call(where, f, s.parts[1], dim, o) end -- a:mean's refusal
  local op = name == "mean" and "sum" or name
  local v = each(M[op])
  call(where, nccl.reduce, v, op, 1)
  if name ~= "mean" then return v[1] end
  return call(where, M.div, v[1], dim and global_shape(s)[dim] or METHODS.numel(s))
end

--- x @ y with at least one sharded: a left operand split along its rows or batch dim, or a right one along its
-- columns or batch dim, against a replicated other (or both split alike along the batch dim) -> a shard.
local function matmul(where, mm, x, y, o)
  if o ~= nil then check_opts(where, o, args.GEMM) end
  for _, v in ipairs {{x, "the left operand"}, {y, "the right operand"}} do
    if type(v[1]) == "number" then raise(fmt("%s: %s is a number; a matrix product takes two arrays (scale with s * 2)", where, v[2])) end
    check_operand(where, v[1], v[2], true)
  end
  local function prod(a, b) return mm(a, b, o) end
  local s = y.kind == "shard" and x.kind ~= "shard" and y or x -- the split operand (x if neither is)
  local nd, d = s.parts[1]:ndim(), s.dim
  if nd ~= 2 and nd ~= 3 then
    raise(fmt("%s: a matrix product takes 2-D matrices or 3-D batches, got %s", where, describe(s)))
  end
  local batch = nd == 3 and d == 1
  if x.kind == "shard" and y.kind == "shard" then
    if not (batch and same_layout(x, y)) then
      raise(fmt("%s: both operands are split (%s and %s); one must be replicated (ck.replicate), unless both are " ..
        "split alike along the batch dim (dim 1 of 3-D arrays)", where, describe(x), describe(y)))
    end
  elseif not same_devices(x, y) then mixed(where, x, y)
  elseif d and not batch and d ~= (s == x and nd - 1 or nd) then
    local l = s == x
    raise(fmt("%s: the %s operand is split along dim %d, the dim the product contracts (its %s); split it along its " ..
      "%s (dim %d)%s, or gather it first", where, l and "left" or "right", d, l and "columns" or "rows",
      l and "rows" or "columns", l and nd - 1 or nd, nd == 3 and " or its batch dim (dim 1)" or ""))
  end
  local function part(v, i)
    if v.kind == "replicate" and batch then return localize(where, s, v, i) end
    return v.parts[i]
  end
  -- every operand view first, then the products back to back: the last device's work starts one issue per device
  -- after the first's, with no Lua between (lab/split_probe.lua measures the issue cost)
  local xs, ys, parts = {}, {}, {}
  for i = 1, #s.parts do xs[i], ys[i] = part(x, i), part(y, i) end
  for i = 1, #s.parts do parts[i] = call(where, prod, xs[i], ys[i]) end
  return new(s.kind, parts, s.devices, d and d + parts[1]:ndim() - nd)
end

-- ---------------------------------------------------------------- the metatable

-- The array methods not defined here say so (rather than "attempt to call a nil value").
local UNSUPPORTED = {}
SH.__index = function(_, k)
  local m = METHODS[k]
  if m ~= nil or type(k) ~= "string" or not M[k] then return m end
  local where = where_of("s:" .. k)
  UNSUPPORTED[k] = UNSUPPORTED[k] or function()
    raise(where .. ": not defined for sharded or replicated arrays; s:gather() gives a plain array, s:map(fn) runs fn on every part")
  end
  return UNSUPPORTED[k]
end
SH.__tostring = function(s)
  for _, p in ipairs(s.parts) do if p:is_freed() then return "cukern." .. s.kind .. " (freed) over " .. concat(s.devices, ", ") end end
  return "cukern." .. s.kind .. " " .. describe(s)
end
SH.__len = function(s) return global_shape(s)[1] end
SH.__close = function(s) METHODS.free(s) end

function S.install(ck)
  local nccl, orig_matmul = ck.nccl, ck.matmul

  --- ck.shard(a [, {devices = {...}, dim = 1}]) (or ck.shard(a, devices)).
  do
    local where = where_of("ck.shard")
    local KEYS = options.set("devices", "dim")
    local RULES = {devices = function(v) return type(v) == "table", "a list of device names" end,
                   dim = function(v) return math_type(v) == "integer", "an integer (1..ndim, or negative from the end)" end}
    function ck.shard(a, o, ...)
      at_most(where, 2, "(a, {devices = ..., dim = ...})", a, o, ...)
      if is_sh(a) then raise(where .. ": the array is already spread over devices (a " .. a.kind .. "); gather it first") end
      check_live(where, a, "argument 1")
      if type(o) == "table" and not is_array(o) and o[1] ~= nil then o = {devices = o} end
      local problem = options.problem(where, o, KEYS, RULES)
      if problem then raise(where .. ": " .. problem) else o = o or {} end
      if a:ndim() == 0 then raise(where .. ": a 0-d array has no dim to split; ck.replicate it instead") end
      local dim = norm_dim(where, a, o.dim or 1)
      local devs = check_devices(where, o.devices)
      local n, k = a:shape()[dim], #devs
      if k > n then
        raise(fmt("%s: %d devices but dim %d of %s has only %d entries; every device needs at least one", where, k,
          dim, describe(a), n))
      end
      local parts, first = {}, 1
      for i, d in ipairs(devs) do
        local len = n // k + (i <= n % k and 1 or 0)
        parts[i] = call(where, copy_to, a:narrow(dim, first, first + len - 1), d)
        first = first + len
      end
      return new("shard", parts, devs, dim)
    end
  end

  --- ck.replicate(a [, devices]): a copy of a on every device (default: as ck.shard's).
  do
    local where = where_of("ck.replicate")
    function ck.replicate(a, devices, ...)
      at_most(where, 2, "(a, devices)", a, devices, ...)
      if is_sh(a) then raise(where .. ": the array is already spread over devices (a " .. a.kind .. "); gather it first") end
      check_live(where, a, "argument 1")
      local devs, parts = check_devices(where, devices), {}
      for i, d in ipairs(devs) do parts[i] = call(where, copy_to, a, d) end
      return new("replicate", parts, devs)
    end
  end

  -- Elementwise methods: every unary and binary op arrays have (ck.unary_ops, ck.binary_ops), per part.
  for _, name in ipairs(ck.unary_ops) do
    local f = M[name]
    if f then method(name, 1, "an options table {variant = ...}", function(where, s, o)
      return per_part(where, s, f, o ~= nil and check_opts(where, o, args.INPLACE) or nil)
    end) end
  end
  for _, name in ipairs(ck.binary_ops) do
    local f = M[name]
    if f then method(name, 2, "(b, {variant = ...})", function(where, s, b, o)
      o = o ~= nil and check_opts(where, o, args.INPLACE) or nil
      return ew2(where, function(x, y) return f(x, y, o) end, s, b)
    end) end
  end

  -- Operators: as arrays' (lua/cukern/operators.lua), * a matrix product unless a number is on one side.
  for mm, v in pairs {__add = {"+", M.add}, __sub = {"-", M.sub}, __div = {"/", MT.__div}, __pow = {"^", MT.__pow},
                      __idiv = {"//", M.idiv}, __mod = {"%", M.mod}} do
    local where, f = where_of("s " .. v[1] .. " t"), v[2]
    SH[mm] = function(x, y) return ew2(where, f, x, y) end
  end
  local mwhere, uwhere, mul = where_of("s * t"), where_of("-s"), M.mul
  SH.__mul = function(x, y)
    if type(x) == "number" or type(y) == "number" then return ew2(mwhere, mul, x, y) end
    return matmul(mwhere, orig_matmul, x, y)
  end
  SH.__unm = function(x) return per_part(uwhere, x, M.neg) end
  -- a plain array on the left of a sharded value: its operator hands over, so that the message says what to do
  for _, mm in ipairs {"__add", "__sub", "__mul", "__div", "__pow", "__idiv", "__mod"} do
    local arr = MT[mm]
    MT[mm] = function(a, b)
      if type(b) == "table" and getmetatable(b) == SH then return SH[mm](a, b) end
      return arr(a, b)
    end
  end

  --- s:matmul(r [, {variant, precision}]) and ck.matmul(s, r [, opts]) (plain arrays: ops.lua's, unchanged).
  method("matmul", 2, "(r, {variant = ..., precision = ...})", function(where, s, r, o)
    return matmul(where, orig_matmul, s, r, o)
  end)
  do
    local where = where_of("ck.matmul")
    function ck.matmul(a, b, o, ...)
      if not (is_sh(a) or is_sh(b)) then return orig_matmul(a, b, o, ...) end
      at_most(where, 3, "(a, b, options)", a, b, o, ...)
      return matmul(where, orig_matmul, a, b, o)
    end
  end

  -- Reductions: s:<op> and ck.<op> (plain arrays go to the functions of lua/cukern/ops.lua, unchanged).
  for _, name in ipairs {"sum", "max", "min", "mean", "prod"} do
    method(name, 2, "(dim, {keepdim = ...})", function(where, s, dim, o) return reduce(where, name, s, dim, o, nccl) end)
    local where, orig = where_of("ck." .. name), ck[name]
    ck[name] = function(a, dim, o, ...)
      if not is_sh(a) then return orig(a, dim, o, ...) end
      at_most(where, 3, "(a, dim, {keepdim = ...})", a, dim, o, ...)
      return reduce(where, name, a, dim, o, nccl)
    end
  end
  return ck
end

return S
