--- cukern: GPU arrays for Lua 5.4, with a ladder of CUDA kernel variants behind every op.
-- This file is the friendly API over the C module cukern.core: argument shapes and options, operators,
-- display. Everything that touches data is in C.
local core = require "cukern.core"

local ck = {core = core, version = core.version}
local M = core.methods       -- array methods (the metatable's __index)
local MT = core.array_mt     -- array metatable

local type, select, tostring, math_type = type, select, tostring, math.type
local fmt, concat = string.format, table.concat

-- Plain module functions straight from C.
for _, k in ipairs {"device", "has_cuda", "default_device", "sync", "sync_mode", "seed", "memory",
                    "empty_cache", "last_ran", "variants"} do
  ck[k] = core[k]
end

local function is_array(x) return getmetatable(x) == MT end
ck.is_array = is_array

-- ---------------------------------------------------------------- arguments

-- An options table is a table that is not a list (shape tables are lists). An empty table after other
-- arguments is an (empty) options table; alone it is an empty shape (a 0-d array).
local function is_opts(t) return type(t) == "table" and not is_array(t) and t[1] == nil and next(t) ~= nil end
local function is_trailing_opts(t, n) return is_opts(t) or (n > 1 and type(t) == "table" and not is_array(t) and next(t) == nil) end

-- (d1, d2, ... [, opts]) or ({d1, d2, ...} [, opts]) -> shape, opts
local function shape_and_opts(...)
  local n = select("#", ...)
  local last = n > 0 and select(n, ...) or nil
  local opts = {}
  if is_trailing_opts(last, n) then opts, n = last, n - 1 end
  local first = ...
  if n == 1 and type(first) == "table" then return first, opts end
  local shape = {}
  for i = 1, n do shape[i] = (select(i, ...)) end
  for i = 1, n do
    local d = shape[i]
    local v = type(d) == "number" and math.tointeger(d) or nil
    if not v then error(fmt("bad shape: dim %d is %s, not an integer", i, tostring(d)), 3) end
    shape[i] = v
  end
  return shape, opts
end

local KNOWN_OPTS = {dtype = true, device = true, variant = true, out = true, keepdim = true, idx = true}

-- Unknown keys are errors (a misspelt option must not be ignored); `level` points the message at the caller.
local function check_opts(opts, where, level)
  if opts == nil then return {} end
  if type(opts) ~= "table" then error(fmt("%s: options must be a table, got %s", where, type(opts)), level or 3) end
  for k in pairs(opts) do
    if not KNOWN_OPTS[k] then error(fmt("%s: unknown option '%s'", where, tostring(k)), level or 3) end
  end
  return opts
end

local function new(where, shape, opts)
  check_opts(opts, where, 4)
  return core.empty(shape, opts.dtype, opts.device)
end

-- ---------------------------------------------------------------- creation

function ck.empty(...) return new("empty", shape_and_opts(...)) end
function ck.zeros(...) return new("zeros", shape_and_opts(...)):fill(0) end
function ck.ones(...) return new("ones", shape_and_opts(...)):fill(1) end

function ck.full(shape, value, opts)
  if type(shape) ~= "table" then shape = {shape} end
  return new("full", shape, opts or {}):fill(value)
end

function ck.eye(n, m, opts)
  if is_opts(m) then m, opts = nil, m end
  return core.generate(new("eye", {n, m or n}, opts or {}), "eye")
end

--- arange(stop) | arange(start, stop [, step]) : half-open [start, stop), like NumPy.
function ck.arange(a, b, c, opts)
  if is_opts(b) then b, c, opts = nil, nil, b elseif is_opts(c) then c, opts = nil, c end
  local start, stop, step = b and a or 0, b or a, c or 1
  if step == 0 then error("arange: step must not be 0", 2) end
  local n = math.max(0, math.ceil((stop - start) / step))
  return core.generate(new("arange", {n}, opts or {}), "arange", start, step)
end

function ck.linspace(a, b, n, opts)
  n = n or 100
  if n < 0 then error("linspace: n must be >= 0", 2) end
  local step = n > 1 and (b - a) / (n - 1) or 0
  return core.generate(new("linspace", {n}, opts or {}), "arange", a, step)
end

function ck.rand(...) return core.generate(new("rand", shape_and_opts(...)), "rand") end
function ck.randn(...) return core.generate(new("randn", shape_and_opts(...)), "randn") end

function ck.array(t, opts)
  opts = check_opts(opts, "array")
  if is_array(t) then -- always a new array, never an alias of t
    local r = t:to(opts.device or t:device(), opts.dtype or t:dtype())
    return r:storage_id() == t:storage_id() and r:clone() or r
  end
  return core.from_table(t, opts.dtype, opts.device)
end
function ck.scalar(x, opts) return ck.array(x, opts) end

-- ---------------------------------------------------------------- methods written in Lua

function M.cuda(a) return a:to("cuda") end
function M.host(a) return a:to("host") end

--- a:sub{{r1, r2}, {c1, c2}, ...}: inclusive 1-based ranges per dim; nil or {} keeps a dim whole; a number
-- selects one index and drops the dim (MATLAB's a(2, :) keeps it; use {2, 2} for that).
function M.sub(a, spec)
  local v, dim = a, 1
  local nd = a:ndim()
  for i = 1, math.max(#spec, nd) do
    local s = spec[i]
    if i > nd then error(fmt("sub: %d ranges given for a %d-D array", #spec, nd), 2) end
    if type(s) == "number" then
      v = v:select(dim, s)
    else
      if s ~= nil and #s > 0 then v = v:narrow(dim, s[1], s[2] or s[1]) end
      dim = dim + 1
    end
  end
  return v
end

-- ---------------------------------------------------------------- ops

local function opt(opts, where) return check_opts(opts, where or "op", 4) end

function ck.matmul(a, b, opts)
  opts = opt(opts)
  return core.matmul(a, b, opts.out, 1, 0, opts.variant)
end

--- gemm(c, a, b, alpha, beta [, opts]): c = alpha * a @ b + beta * c, in place.
function ck.gemm(c, a, b, alpha, beta, opts)
  return core.matmul(a, b, c, alpha or 1, beta or 0, opt(opts).variant)
end

function ck.transpose(a, opts)
  opts = opt(opts)
  return core.transpose(a, opts.out, opts.variant)
end

-- Reductions: ck.sum(a [, dim [, opts]]); max/min return values and 1-based indices along a dim.
for _, name in ipairs {"sum", "prod", "mean", "max", "min", "argmax", "argmin"} do
  local want_idx = name == "max" or name == "min"
  local function f(a, dim, opts)
    if type(dim) == "table" and not is_array(dim) then dim, opts = nil, dim end
    opts = opt(opts, name)
    return core.reduce(name, a, dim, opts.keepdim, opts.variant, want_idx and dim ~= nil, opts.out, opts.idx)
  end
  ck[name] = f
  M[name] = f
end

-- Elementwise: functions, methods and in-place methods.
local UNARY = {"neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "floor", "ceil", "sign"}
local BINARY = {"add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge"}
ck.unary_ops, ck.binary_ops = UNARY, BINARY

for _, name in ipairs(UNARY) do
  ck[name] = function(a, opts) opts = opt(opts); return core.unary(name, a, opts.out, 0, 0, opts.variant) end
  M[name] = ck[name]
  M[name .. "_"] = function(a, opts) return core.unary(name, a, a, 0, 0, opt(opts).variant) end
end
for _, name in ipairs(BINARY) do
  ck[name] = function(a, b, opts) opts = opt(opts); return core.binary(name, a, b, opts.out, opts.variant) end
  if name ~= "sub" then M[name] = ck[name] end -- a:sub{...} is slicing; use ck.sub(a, b) or a - b
  M[name .. "_"] = function(a, b, opts) return core.binary(name, a, b, a, opt(opts).variant) end
end
M.minus = ck.sub

--- pow(a, b): b a number (a .^ s) or an array (elementwise, broadcast).
function ck.pow(a, b, opts)
  opts = opt(opts)
  if type(b) == "number" and is_array(a) then return core.unary("pows", a, opts.out, b, 0, opts.variant) end
  return core.binary("pow", a, b, opts.out, opts.variant)
end
M.pow = ck.pow
function M.pow_(a, b, opts)
  if type(b) == "number" then return core.unary("pows", a, a, b, 0, opt(opts).variant) end
  return core.binary("pow", a, b, a, opt(opts).variant)
end

function ck.clamp(a, lo, hi, opts)
  opts = opt(opts)
  return core.unary("clamp", a, opts.out, lo or -math.huge, hi or math.huge, opts.variant)
end
M.clamp = ck.clamp
function M.clamp_(a, lo, hi) return core.unary("clamp", a, a, lo or -math.huge, hi or math.huge) end

-- ---------------------------------------------------------------- operators
-- MATLAB conventions: * is the matrix product (a number on either side scales), the rest are elementwise.
MT.__add = function(a, b) return core.binary("add", a, b) end
MT.__sub = function(a, b) return core.binary("sub", a, b) end
MT.__div = function(a, b) return core.binary("div", a, b) end
MT.__unm = function(a) return core.unary("neg", a) end
MT.__pow = function(a, b) return ck.pow(a, b) end
MT.__mul = function(a, b)
  if type(a) == "number" or type(b) == "number" then return core.binary("mul", a, b) end
  return core.matmul(a, b)
end
MT.__eq = nil -- arrays compare by identity; use ck.eq for elementwise equality

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

function ck.format(a)
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
MT.__tostring = ck.format

-- ---------------------------------------------------------------- run-time kernels

--- ck.kernel(source, entry, signature [, nvrtc_options]) compiles CUDA C++ at run time (NVRTC) for this GPU.
-- signature lists the parameter types: "f32*", "const f64*", "i32*", "void*", "f32", "f64", "i32", "i64", "u32".
-- Launch with k:launch(grid, block, args... [, {smem = bytes}]); arrays pass their device pointer (with offset).
function ck.kernel(src, entry, sig, options)
  return core.kernel(src, entry, sig, type(options) == "table" and table.concat(options, " ") or options)
end

-- ---------------------------------------------------------------- benchmarks (lazy: cukern.bench is optional)

function ck.bench(...) return require("cukern.bench").run(...) end
function ck.launch_overhead(...) return require("cukern.bench").launch_overhead(...) end

require("cukern.io").install(ck) -- ck.save, ck.savez, ck.load (lua/cukern/io.lua)
require("cukern.map").install(ck) -- ck.map, ck.reduce_map, ck.kernel_build, ... (lua/cukern/map.lua)

return ck
