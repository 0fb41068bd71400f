--- cukern.map: fused expression kernels and the run-time compiler's extras, installed into ck.
--   ck.map(expr, inputs [, {out =, dtype =}])           elementwise, one kernel for the whole expression
--   ck.reduce_map(spec, inputs [, {dim =, keepdim =, out =, dtype =}])  map + reduce + post in one pass
--   ck.reduce_map(spec)                                   a reusable function f(inputs [, opts])
--   ck.map_info(expr, inputs [, opts])                    runs it once; what ran (layout, kernel, registers...)
--   ck.map_source(expr or spec, inputs [, opts])          the CUDA source the GPU runs (works on the host)
--   ck.kernel_build(src, entry [, {arch =, options =}])   compile only (no GPU needed for a given arch)
--   ck.cache_dir([dir | "off" | false])                   the on-disk kernel cache
--   ck.kernel_header()                                    cukern.h, pre-included in run-time kernels (CkArray<T>)
-- The functions are the C ones (errors point at the caller's line); see docs/map.md.
local M = {}

-- Every function is guarded (cukern.errors): its checks and the C call run under pcall, and an error comes back
-- as "ck.<name>: <what was wrong>" at the caller's line (C's own argument errors and the names of inner
-- helpers, "ck.map:" inside ck.map_info, are rewritten to the function the user called).
local errors = require "cukern.errors"
local function guard(name, f) return errors.guard(errors.where_of(name), f) end
local function show(v) return type(v) == "string" and ("%q"):format(v) or tostring(v) end
local function want(i, what, v, ok)
  if not ok then error(("argument %d must be %s, got %s"):format(i, what, show(v)), 0) end
end
local function opt_table(i, v) want(i, "a table (or nil)", v, v == nil or type(v) == "table") end

-- Options go through the one validator (lua/cukern/options.lua); `out` may also name several outputs.
local options = require "cukern.options"
local MAP_OPTS = options.set("out", "dtype")
local REDUCE_OPTS = options.set("dim", "keepdim", "out", "dtype")
local SOURCE_OPTS = options.set("out", "dtype", "dim", "keepdim")
local MAP_RULES = {out = function(v)
  local ok = options.RULES.out(v)
  if not ok and type(v) == "table" and getmetatable(v) == nil then
    ok = next(v) ~= nil
    for _, o in pairs(v) do ok = ok and options.RULES.out(o) end
  end
  return ok, "a (live) cukern array, or a table of them by output name"
end}
local function check_opts(where, i, opts, allowed)
  opt_table(i, opts)
  local problem = options.problem(where, opts, allowed, MAP_RULES)
  if problem then error(problem, 0) end
end

function M.install(ck)
  local core = ck.core
  local function expr_fn(name, f)
    return guard("ck." .. name, function(expr, inputs, opts, ...)
      want(1, "an expression (a string)", expr, type(expr) == "string")
      opt_table(2, inputs)
      check_opts("ck." .. name, 3, opts, MAP_OPTS)
      return f(expr, inputs, opts, ...)
    end)
  end
  ck.map = expr_fn("map", core.map)
  ck.map_info = expr_fn("map_info", core.map_info)
  ck.map_source = guard("ck.map_source", function(spec, inputs, opts, ...)
    want(1, "an expression (a string) or a reduce_map spec (a table)", spec, type(spec) == "string" or type(spec) == "table")
    opt_table(2, inputs)
    check_opts("ck.map_source", 3, opts, SOURCE_OPTS)
    return core.map_source(spec, inputs, opts, ...)
  end)
  ck.reduce_map = guard("ck.reduce_map", function(spec, inputs, opts, ...)
    want(1, "a spec table {map =, reduce =, identity =, post =}", spec, type(spec) == "table")
    if inputs == nil then -- ck.reduce_map(spec): a reusable function f(inputs [, opts])
      local f = core.reduce_map(spec)
      return guard("ck.reduce_map", function(inputs2, opts2, ...)
        opt_table(1, inputs2)
        check_opts("ck.reduce_map", 2, opts2, REDUCE_OPTS)
        return f(inputs2, opts2, ...)
      end)
    end
    opt_table(2, inputs)
    check_opts("ck.reduce_map", 3, opts, REDUCE_OPTS)
    return core.reduce_map(spec, inputs, opts, ...)
  end)
  ck.kernel_build = guard("ck.kernel_build", function(src, entry, opts, ...)
    want(1, "CUDA source (a string)", src, type(src) == "string")
    want(2, "the entry point's name (a string)", entry, type(entry) == "string")
    opt_table(3, opts)
    for k, v in pairs(opts or {}) do
      local ok = false
      if k == "arch" then ok = type(v) == "string"
      elseif k == "options" then
        ok = type(v) == "string"
        if type(v) == "table" then
          ok = true
          for _, o in ipairs(v) do ok = ok and type(o) == "string" end
        end
      else error(("unknown option '%s' (arch, options)"):format(tostring(k)), 0) end
      if not ok then error(("option %s must be %s"):format(k, k == "arch" and 'a string such as "sm_90"'
        or "a string or a list of strings"), 0) end
    end
    return core.kernel_build(src, entry, opts, ...)
  end)
  ck.cache_dir = guard("ck.cache_dir", function(...)
    local dir = ...
    want(1, 'a directory (a string), "off", false or nil', dir,
      select("#", ...) == 0 or dir == nil or dir == false or type(dir) == "string")
    if type(dir) == "string" and (dir:find("\0", 1, true) or #dir > 1000) then
      error("the path must be at most 1000 bytes and hold no NUL byte", 0)
    end
    return core.cache_dir(...)
  end)
  ck.map_cache_size = core.map_cache_size
  ck.kernel_header = core.kernel_header
  -- ck.kernel: the C side takes array descriptors ("f32[]", "const f64[]") besides pointers and numbers and
  -- gives k:info() and k:ptx(); here a signature may also be one string, "f32[], const f32[], f32".
  local kernel = ck.kernel
  if kernel then
    ck.kernel = function(src, entry, sig, options)
      if type(sig) == "string" then
        local list = {}
        for t in sig:gmatch("[^,]+") do list[#list + 1] = t:match("^%s*(.-)%s*$") end
        sig = list
      end
      return kernel(src, entry, sig, options) -- a tail call: errors point at the caller's line
    end
  end
  return ck
end

return M
