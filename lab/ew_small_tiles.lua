-- Where the elementwise ladder's tiled rung stops paying (kernels/elementwise/03_tiled.cu's supports(): it declines
-- below a quarter of a tile used): y = -x:transpose(2, 3) into a contiguous y, for batches of small and thin
-- matrices, on the strided and on the tiled rung, each asked for by name, with CUKERN_EW_TILE_FILL=0 set so that the
-- tiled rung takes every case. Median of 20 (CUDA events, L2 flushed), GB/s counting bytes read + written.
--   CUKERN_EW_TILE_FILL=0 lua5.4 lab/ew_small_tiles.lua
dofile("examples/paths.lua")
local ck = require "cukern"
local bench = require "cukern.bench"
assert(os.getenv("CUKERN_EW_TILE_FILL") == "0", "run with CUKERN_EW_TILE_FILL=0 (the tiled rung then takes every case)")
print("device: " .. ck.device().name)
local SHAPES = {{10000, 8, 8}, {10000, 8, 24}, {10000, 16, 16}, {4096, 24, 24}, {4096, 32, 32}, {1000, 64, 64},
                {1000, 48, 48}, {64, 8, 4096}, {64, 4096, 8}, {16, 16, 4096}, {4, 32, 8192}, {1, 2, 1 << 22}}
print(("%-6s %-18s %10s %10s %9s %9s %s"):format("dtype", "shape", "strided us", "tiled us", "str GB/s", "til GB/s", "tiled/strided time"))
for _, dt in ipairs {"f32", "f64", "f16"} do
  local es = dt == "f64" and 8 or dt == "f32" and 4 or 2
  for _, sh in ipairs(SHAPES) do
    local x = ck.rand(sh, {dtype = dt, device = "cuda"})
    local xt = x:transpose(2, 3)
    local y = ck.empty({sh[1], sh[3], sh[2]}, {dtype = dt, device = "cuda"})
    local bytes = 2 * es * sh[1] * sh[2] * sh[3]
    local r = {}
    for _, v in ipairs {"strided", "tiled"} do
      ck.neg(xt, {out = y, variant = v})
      assert(ck.last_ran().name == v, v .. " did not run: " .. ck.last_ran().name)
      r[v] = bench.run {fn = function() ck.neg(xt, {out = y, variant = v}) end, device = "cuda", bytes = bytes}
    end
    print(("%-6s %-18s %10.1f %10.1f %9.0f %9.0f %.2f"):format(dt, table.concat(sh, "x"), r.strided.ms * 1e3,
      r.tiled.ms * 1e3, r.strided.gbps, r.tiled.gbps, r.tiled.ms / r.strided.ms))
    x:free(); y:free()
  end
end
