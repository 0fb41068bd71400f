--- cukern: GPU arrays for Lua 5.4, with a ladder of CUDA kernel variants behind every op.
-- This file is the friendly API over the C module cukern.core; its parts are modules beside it, each
-- installed into ck below: creation (ck.zeros, ck.arange, ...), ops (ck.matmul, ck.sum, the elementwise ops,
-- ...), operators (a + b, a * b, ...), indexing (a[i], a[{...}], a:slice), display (tostring(a), ck.format),
-- io (ck.save, ck.load) and map (ck.map, ck.reduce_map, ...). Everything that touches data is in C.
--
-- Errors: every public function checks its arguments and names itself as the user wrote it (`ck.sum`,
-- `a:narrow`, `a + b`, `a[i]`); errors from the core are caught and re-raised under that name. Either way the
-- error points at the user's line: frames inside cukern's modules are skipped (lua/cukern/errors.lua).
local core = require "cukern.core"
local errors, args = require "cukern.errors", require "cukern.args"
local display = require "cukern.display"
local RECORD_MT, SEQ_MT = display.RECORD_MT, display.SEQ_MT

local ck = {core = core, version = core.version}
local M = core.methods       -- array methods

local type, select, setmetatable, pcall, error = type, select, setmetatable, pcall, error
local fmt, concat = string.format, table.concat
local raise, clean, call, where_of = errors.raise, errors.clean, errors.call, errors.where_of
local is_array, show, check_array = args.is_array, args.show, args.check_array

function ck.is_array(...)
  local n = select("#", ...)
  if n ~= 1 then raise(fmt("ck.is_array: takes one value, got %d arguments", n)) end
  return is_array((...))
end

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
for k, nmax in pairs {has_cuda = 0, default_device = 1, sync = 1, sync_mode = 1, batching = 1, seed = 1,
                      empty_cache = 0} do module_fn(k, nmax) end
for k, nmax in pairs {device = 1, memory = 1, last_ran = 0} do module_fn(k, nmax, true) end

--- ck.devices(): every device, cuda:0 .. cuda:N-1 then host:0 .. host:M-1, each a record like ck.device(d)'s.
do
  local where = where_of("ck.devices")
  function ck.devices(...)
    if select("#", ...) > 0 then raise(fmt("%s: takes no arguments, got %d", where, select("#", ...))) end
    local list = call(where, core.devices)
    for _, r in ipairs(list) do setmetatable(r, RECORD_MT) end
    return setmetatable(list, SEQ_MT)
  end
end

--- ck.with_device(d, fn, ...): runs fn(...) with d as the default device (arrays made without a device go there),
-- and restores the previous default afterwards, also when fn raises; returns fn's results.
--- ck.with_device(d): the same as a guard for a block: `local _ <close> = ck.with_device("cuda:1")`.
do
  local where = where_of("ck.with_device")
  local GUARD_MT = {__close = function(g) if not g.done then g.done = true; core.default_device(g.prev) end end,
                    __name = "cukern.device_guard"}
  function ck.with_device(d, fn, ...)
    if type(d) ~= "string" then raise(fmt("%s: the device must be a string (\"cuda:1\", \"host\"), got %s", where, show(d))) end
    if fn ~= nil and type(fn) ~= "function" then raise(fmt("%s: the second argument must be a function, got %s", where, show(fn))) end
    local prev = core.default_device()
    call(where, core.default_device, d)
    local guard = setmetatable({prev = prev}, GUARD_MT)
    if fn == nil then return guard end
    local res = table.pack(pcall(fn, ...))
    GUARD_MT.__close(guard)
    if not res[1] then error(res[2], 0) end
    return table.unpack(res, 2, res.n)
  end
end
do
  local where = where_of("ck.variants")
  function ck.variants(op)
    if type(op) ~= "string" then raise(fmt("%s: op must be a string (matmul, reduce, transpose, elementwise), got %s", where, show(op))) end
    local list = (op == "conv" or op == "conv2") and require("cukern.conv").variant_list() or call(where, core.variants, op)
    for _, v in ipairs(list) do setmetatable(v, RECORD_MT); setmetatable(v.dtypes, SEQ_MT) end
    return list
  end
end

require("cukern.creation").install(ck) -- ck.empty, zeros, ones, full, eye, arange, linspace, rand, ..., array, scalar
require("cukern.indexing").install(ck) -- a[i], a[{...}], a[i] = v, a:slice
require("cukern.ops").install(ck) -- ck.matmul, gemm, transpose, the reductions and elementwise ops, pow, clamp, ...
require("cukern.operators").install(ck) -- a + b, a * b, -a, ... and the operators arrays refuse
display.install(ck) -- tostring(a), ck.format

-- ---------------------------------------------------------------- methods written in Lua

do
  local cuda, host = where_of("a:cuda"), where_of("a:host")
  function M.cuda(a) check_array(cuda, a, "the array"); return call(cuda, a.to, a, "cuda") end
  function M.host(a) check_array(host, a, "the array"); return call(host, a.to, a, "host") end
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
require("cukern.dist").install(ck) -- ck.nccl (collectives over devices), ck.dist (processes) (lua/cukern/dist.lua)
require("cukern.shard").install(ck) -- ck.shard, ck.replicate: arrays spread over devices (lua/cukern/shard.lua)
require("cukern.linalg").install(ck) -- ck.solve, inv, det, lu, qr, svd, eigh, norm, ... (lua/cukern/linalg.lua)
require("cukern.select").install(ck) -- ck.index_select, gather, take, scatter, put, where, masked_select, nonzero (lua/cukern/select.lua)
require("cukern.assembly").install(ck) -- ck.cat, stack, split, chunk, tile, flip, roll; tril, triu, diag, pad (assembly_matrix.lua)
require("cukern.sorting").install(ck) -- ck.cumsum, cumprod, cummax, cummin, sort, argsort, topk (lua/cukern/sorting.lua)
require("cukern.complex").install(ck) -- c64/c128: ck.complex, real, imag, conj, angle and the ops on complex operands (lua/cukern/complex.lua)
require("cukern.fp8").install(ck) -- e4m3/e5m2 scales: ck.quantize, dequantize, finfo (lua/cukern/fp8.lua)
require("cukern.streams").install(ck) -- ck.stream, with_stream, event, nvtx, a:pin (lua/cukern/streams.lua)
require("cukern.fft").install(ck) -- ck.fft, ifft, rfft, irfft, fft2, ifft2, fftn, ifftn, fftshift, ifftshift, fftfreq, conv, conv2
require("cukern.rows").install(ck) -- ck.softmax, log_softmax, layer_norm, rms_norm, attention (lua/cukern/rows.lua)

for k in pairs(M) do where_of("a:" .. k) end -- the methods' own names (C's too), relabelled when used inside others

return ck
