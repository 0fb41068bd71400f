-- Matmul rung 17 (dmma, f64 on the tensor cores) beside cuBLAS DGEMM and rung 5 (blocktile_2d, the best f64 rung
-- before it) in one process: square sizes, the LU trailing-update shape (n x n x 128) and odd shapes, each checked
-- against cuBLAS's result (relative Frobenius error) before it is timed (CUDA events, bench.run: 3 warm-ups, median
-- of 7, L2 not flushed).
--   lua5.4 lab/dmma_bench.lua [CUKERN_MM_CFG=i picks a configuration of dmma]
dofile("examples/paths.lua")
local ck = require "cukern"
local bench = require "cukern.bench"
local function rel_err(x, y)
  local d = x - y
  return math.sqrt(ck.sum(ck.mul(d, d)):item() / ck.sum(ck.mul(y, y)):item())
end
local shapes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}, {8064, 8064, 128},
  {4000, 4000, 128}, {1000, 1000, 1000}, {4097, 4095, 33}, {300, 257, 129}}
for _, s in ipairs(shapes) do
  local m, n, k = s[1], s[2], s[3]
  local A = ck.randn(m, k, {dtype = "f64", device = "cuda"})
  local B = ck.randn(k, n, {dtype = "f64", device = "cuda"})
  local ref = ck.matmul(A, B, {variant = "cublas"})
  local line = {("%5d x %5d x %5d"):format(m, n, k)}
  local tref
  for _, v in ipairs {"cublas", "dmma", "blocktile_2d"} do
    if v ~= "blocktile_2d" or m * n * k <= 4096 ^ 3 then
      local C = ck.matmul(A, B, {variant = v})
      local ran = ck.last_ran().name
      local err = rel_err(C, ref)
      local r = bench.run{fn = function() ck.matmul(A, B, {variant = v, out = C}) end, warmup = 3, reps = 7, flush = false}
      tref = tref or r.ms
      line[#line + 1] = ("%s(%s) %8.3f ms %6.2f TF/s %5.1f%% err %.1e"):format(v, ran, r.ms, 2 * m * n * k / r.ms / 1e9,
        100 * tref / r.ms, err)
    end
  end
  print(table.concat(line, " | "))
end
