-- Where the tiled transposes stop paying, on batches of small and thin matrices: y = -x:transpose(2, 3) into a
-- contiguous y. Median of 20 (CUDA events, L2 flushed); GB/s counts bytes read + written.
--   CUKERN_EW_TILE_FILL=0 lua5.4 lab/ew_small_tiles.lua   the elementwise ladder's strided and tiled rungs, each asked
--                                                          for by name, the tiled one taking every case (the knob turns
--                                                          off its rule: kernels/elementwise/03_tiled.cu's supports())
--   lua5.4 lab/ew_small_tiles.lua                          with the rules on: the strided rung, y:copy_(x:transpose(2, 3))
--                                                          as ck_copy runs it by default (the transpose ladder through
--                                                          ck_copy_permuted, or the elementwise copy where that declines),
--                                                          and the transpose ladder's default rung by name (ck.transpose;
--                                                          aligned, wide for 2-byte dtypes)
dofile("examples/paths.lua")
local ck = require "cukern"
local bench = require "cukern.bench"
local forced = os.getenv("CUKERN_EW_TILE_FILL") == "0"
print("device: " .. ck.device().name .. (forced and " (CUKERN_EW_TILE_FILL=0)" or " (default rules)"))
local SHAPES = {{10000, 8, 8}, {10000, 8, 24}, {10000, 16, 16}, {4096, 24, 24}, {4096, 32, 32}, {1000, 64, 64},
                {1000, 48, 48}, {64, 8, 4096}, {64, 4096, 8}, {16, 16, 4096}, {4, 32, 8192}, {1, 2, 1 << 22}}
print(("%-6s %-18s %10s %10s %9s %9s"):format("dtype", "shape", "strided us", forced and "tiled us" or "copy_ us",
  forced and "til/str" or "copy/str", forced and "" or "tr-rung us"))
for _, dt in ipairs {"f32", "f64", "f16"} do
  for _, sh in ipairs(SHAPES) do
    local x = ck.rand(sh, {dtype = dt, device = "cuda"})
    local xt = x:transpose(2, 3)
    local y = ck.empty({sh[1], sh[3], sh[2]}, {dtype = dt, device = "cuda"})
    local function rung(v)
      ck.neg(xt, {out = y, variant = v})
      assert(ck.last_ran().name == v, v .. " did not run: " .. ck.last_ran().name)
      return bench.run {fn = function() ck.neg(xt, {out = y, variant = v}) end, device = "cuda"}.ms * 1e3
    end
    local s = rung("strided")
    if forced then
      local t = rung("tiled")
      print(("%-6s %-18s %10.1f %10.1f %9.2f"):format(dt, table.concat(sh, "x"), s, t, t / s))
    else
      local cp = bench.run {fn = function() y:copy_(xt) end, device = "cuda"}.ms * 1e3
      local trv = dt == "f16" and "wide" or "aligned"
      local tr = bench.run {fn = function() ck.transpose(x, {out = y, variant = trv}) end, device = "cuda"}.ms * 1e3
      print(("%-6s %-18s %10.1f %10.1f %9.2f %9.1f"):format(dt, table.concat(sh, "x"), s, cp, cp / s, tr))
    end
    x:free(); y:free()
  end
end
