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

function M.install(ck)
  local core = ck.core
  ck.map = core.map
  ck.reduce_map = core.reduce_map
  ck.map_info = core.map_info
  ck.map_source = core.map_source
  ck.kernel_build = core.kernel_build
  ck.cache_dir = core.cache_dir
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
