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

-- Argument checks in Lua, then a tail call into C (so that C's own errors still point at the caller's line).
local function want(name, i, what, v, ok)
  if not ok then
    error(("%s: argument %d must be %s, got %s"):format(name, i, what, type(v) == "string" and ("%q"):format(v) or tostring(v)), 3)
  end
end
local function opt_table(name, i, v) want(name, i, "a table (or nil)", v, v == nil or type(v) == "table") end

function M.install(ck)
  local core = ck.core
  local function expr_call(name, f)
    return function(expr, inputs, opts, ...)
      want("ck." .. name, 1, "an expression (a string)", expr, type(expr) == "string")
      opt_table("ck." .. name, 2, inputs)
      opt_table("ck." .. name, 3, opts)
      return f(expr, inputs, opts, ...)
    end
  end
  ck.map = expr_call("map", core.map)
  ck.map_info = expr_call("map_info", core.map_info)
  local map_source = core.map_source
  ck.map_source = function(spec, inputs, opts, ...)
    want("ck.map_source", 1, "an expression (a string) or a reduce_map spec (a table)", spec,
      type(spec) == "string" or type(spec) == "table")
    opt_table("ck.map_source", 2, inputs)
    return map_source(spec, inputs, opts, ...)
  end
  local reduce_map = core.reduce_map
  ck.reduce_map = function(spec, ...)
    want("ck.reduce_map", 1, "a spec table {map =, reduce =, identity =, post =}", spec, type(spec) == "table")
    return reduce_map(spec, ...)
  end
  local kernel_build = core.kernel_build
  ck.kernel_build = function(src, entry, opts, ...)
    want("ck.kernel_build", 1, "CUDA source (a string)", src, type(src) == "string")
    want("ck.kernel_build", 2, "the entry point's name (a string)", entry, type(entry) == "string")
    opt_table("ck.kernel_build", 3, opts)
    return kernel_build(src, entry, opts, ...)
  end
  local cache_dir = core.cache_dir
  ck.cache_dir = function(...)
    local dir = ...
    want("ck.cache_dir", 1, 'a directory (a string), "off", false or nil', dir,
      select("#", ...) == 0 or dir == nil or dir == false or type(dir) == "string")
    return cache_dir(...)
  end
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
