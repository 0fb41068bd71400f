--- Compile ck.map's and ck.reduce_map's generated CUDA for every real dtype with nvcc (no GPU needed): catches
-- generation bugs (types, conversions, half helpers) where NVRTC is not at hand or to see nvcc's warnings.
-- Run from the repository root: lua5.4 lab/map_dtypes_nvcc.lua [outdir]   (needs nvcc on PATH)
package.path = "./lua/?.lua;./lua/?/init.lua;./?.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
ck.default_device("host")
local dir = arg[1] or os.tmpname() .. ".d"
assert(os.execute("mkdir -p " .. dir))
local DT = {"bool", "u8", "i8", "i16", "i32", "u32", "i64", "f16", "bf16", "f32", "f64"}
local EXPRS = {"x + y * 3", "x * y - x / y % 5", "max(x, y) < 2 ? -x : abs(y)", "clamp(x, y, 2) + sign(x)",
  "where(x != 0 && !(y > x), x, y)", "u8(x) + i64(y) * 2 + f16(x) * bf16(y) + bool(x)"}
local n, bad = 0, 0
local function build(name, src)
  local path = dir .. "/" .. name .. ".cu"
  local f = assert(io.open(path, "w"))
  f:write(src)
  f:close()
  n = n + 1
  if not os.execute(("nvcc -arch=sm_90a -c -x cu -w -o %s.o %s 2>%s.log"):format(path, path, path)) then
    bad = bad + 1
    io.stderr:write("FAILED: " .. path .. " (log: " .. path .. ".log)\n")
  end
end
for _, dx in ipairs(DT) do
  for _, dy in ipairs(DT) do
    local x, y = ck.ones({4, 8}, {dtype = dx}), ck.ones({8}, {dtype = dy})
    for e, expr in ipairs(EXPRS) do
      local strided = e % 2 == 0
      local src = ck.map_source(expr, {x = strided and x:t() or x, y = strided and ck.ones({1, 4}, {dtype = dy}) or y})
      build(("map_%s_%s_%d"):format(dx, dy, e), src)
    end
  end
  local src, info = ck.map_source({map = "x * 2", reduce = "a + b", identity = 0, post = "r / n"},
    {x = ck.ones({100000}, {dtype = dx})})
  build("rmap_" .. dx, src)
  if info.finisher then build("rfin_" .. dx, info.finisher) end
  build("rrows_" .. dx, (ck.map_source({map = "x", reduce = "max(a, b)", identity = -math.huge},
    {x = ck.ones({40, 300}, {dtype = dx})}, {dim = 2})))
end
print(("%d programs compiled with nvcc -arch=sm_90a, %d failed (sources in %s)"):format(n, bad, dir))
os.exit(bad == 0)
