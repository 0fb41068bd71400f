--- cukern.fp8: the 8-bit float dtypes e4m3 and e5m2 (issue 37) with per-tensor scales, as Hopper's FP8 GEMMs
-- take them: ck.quantize(x, "e4m3" [, {scale =}]) gives q and the scale with x ~ q * scale, ck.dequantize(q, scale)
-- the values back, ck.finfo(dtype) the numbers of a float dtype (NumPy's finfo). Casts (a:to("e4m3")) saturate to
-- the largest finite value and keep NaN (kernels/fp8.h); the dtypes are storage: arithmetic casts them first.
local core = require "cukern.core"
local errors, args = require "cukern.errors", require "cukern.args"
local raise, call, where_of = errors.raise, errors.call, errors.where_of
local check_live, check_opts, show = args.check_live, args.check_opts, args.show
local fmt = string.format

local F = {}

-- largest finite, smallest normal, machine epsilon (2^-mantissa bits), mantissa bits
local FINFO = {
  e4m3 = {max = 448, tiny = 2 ^ -6, eps = 2 ^ -3, bits = 8, mant = 3},
  e5m2 = {max = 57344, tiny = 2 ^ -14, eps = 2 ^ -2, bits = 8, mant = 2},
  f16 = {max = 65504, tiny = 2 ^ -14, eps = 2 ^ -10, bits = 16, mant = 10},
  bf16 = {max = (2 - 2 ^ -7) * 2 ^ 127, tiny = 2 ^ -126, eps = 2 ^ -7, bits = 16, mant = 7},
  f32 = {max = (2 - 2 ^ -23) * 2 ^ 127, tiny = 2 ^ -126, eps = 2 ^ -23, bits = 32, mant = 23},
  f64 = {max = 1.7976931348623157e308, tiny = 2 ^ -1022, eps = 2 ^ -52, bits = 64, mant = 52},
}
local FP8 = {e4m3 = true, e5m2 = true}

function F.install(ck)
  do
    local where = where_of("ck.finfo")
    --- finfo(dtype): {max, tiny, eps, bits, mant} of a float dtype (NumPy's np.finfo; MATLAB's realmax, realmin, eps)
    function ck.finfo(dt)
      local t = FINFO[dt]
      if not t then raise(fmt("%s: %s is not a float dtype (%s)", where, show(dt), "f64, f32, f16, bf16, e4m3, e5m2")) end
      local r = {dtype = dt}
      for k, v in pairs(t) do r[k] = v end
      return r
    end
  end

  do
    local where = where_of("ck.quantize")
    --- quantize(x, dtype [, {scale = s}]): q = saturate(x / s) in e4m3/e5m2, and s. Without a scale, s maps the
    -- largest |x| to the format's largest value (Transformer Engine's "amax" recipe; 1 for an all-zero x).
    function ck.quantize(x, dt, opts)
      check_live(where, x, "argument 1")
      if not FP8[dt] then raise(fmt("%s: argument 2 must be \"e4m3\" or \"e5m2\", got %s", where, show(dt))) end
      opts = check_opts(where, opts, args.QUANT)
      local s = opts.scale
      if s == nil then
        local amax = call(where, function() return ck.max(ck.abs(x:to("f64"))):item() end)
        s = (amax > 0 and amax < math.huge) and amax / FINFO[dt].max or 1
      end
      return call(where, function() return (x:to("f64") / s):to(dt) end), s
    end
  end

  do
    local where = where_of("ck.dequantize")
    --- dequantize(q, scale [, {dtype = "f32"}]): q * scale in a wider dtype
    function ck.dequantize(q, s, opts)
      check_live(where, q, "argument 1")
      if type(s) ~= "number" or not (s > 0 and s < math.huge) then
        raise(fmt("%s: argument 2 (the scale) must be a finite number > 0, got %s", where, show(s)))
      end
      opts = check_opts(where, opts, args.DEQUANT)
      local dt = opts.dtype or "f32"
      return call(where, function() return q:to(dt) * s end)
    end
  end
  return ck
end

return F
