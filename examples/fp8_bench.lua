--- examples/fp8_bench.lua — FP8 GEMM (issue 37): e4m3 x e4m3 -> bf16 through cukern's matmul (the cuBLASLt row,
-- rung 16), beside cuBLAS bf16 (rung 0) on the same shapes, in the same run; with --torch FILE the rows of
-- bench/torch_fp8.py (torch._scaled_mm and torch.matmul, run just before on the same device) stand beside them.
-- Writes bench/results/<backend>/fp8-<device>.json: rows with ratio_to_torch (torch ms / ours), peer rows with
-- peer = true. An own FP8 rung (wgmma) would add pct_of_ref against the cuBLASLt row; there is none yet.
--   lua5.4 examples/fp8_bench.lua [--torch torch_fp8.json]
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
local bench = require "cukern.bench"
local json = require "cukern.json"

local torch_file
for i, a in ipairs(arg) do if a == "--torch" then torch_file = arg[i + 1] end end
local backend = bench.target(arg)
if backend ~= "cuda" then print("fp8_bench: needs a GPU (the host has no FP8 GEMM to time); nothing written"); return end

local function time(fn, reps)
  for _ = 1, 3 do fn() end
  ck.sync()
  local t, ms = ck.core.timer(), {}
  for r = 1, reps do t:start(); fn(); ms[r] = t:stop() end
  table.sort(ms)
  return ms[(#ms + 1) // 2]
end

local torch = {}
if torch_file then for _, r in ipairs(json.read(torch_file).rows or {}) do torch[r.case] = r end end

local rows = {}
local SHAPES = {{8192, 8192, 8192}, {4096, 4096, 4096}, {16384, 8192, 8192}, {2048, 14336, 4096}}
ck.seed(1)
for _, s in ipairs(SHAPES) do
  local m, n, k = s[1], s[2], s[3]
  local flops = 2 * m * n * k
  local a = (ck.rand({m, k}, {device = "cuda"}) * 2 - 1):to("e4m3")
  local bt = (ck.rand({n, k}, {device = "cuda"}) * 2 - 1):to("e4m3")
  local c = ck.empty({m, n}, {dtype = "bf16", device = "cuda"})
  local ms8 = time(function() ck.matmul(a, bt:t(), {out = c}) end, 10)
  local ran = ck.last_ran().name
  local ab, bb = a:to("bf16"), bt:t():to("bf16")
  local ms16 = time(function() ck.matmul(ab, bb, {out = c, variant = "cublas"}) end, 10)
  local shape = ("%dx%dx%d"):format(m, n, k)
  local t8, t16 = torch["e4m3_" .. shape], torch["bf16_" .. shape]
  -- (no FP8 rung of ours yet: this row is the cuBLASLt reference itself, so it carries no pct_of_ref)
  rows[#rows + 1] = {case = "e4m3_" .. shape, variant = ran, ms = ms8, tflops = flops / ms8 / 1e9,
                     ratio_to_torch = t8 and t8.ms / ms8 or nil}
  rows[#rows + 1] = {case = "bf16_" .. shape, variant = "cublas", ms = ms16, tflops = flops / ms16 / 1e9,
                     fp8_speedup = ms16 / ms8, ratio_to_torch = t16 and t16.ms / ms16 or nil}
  print(("%-22s e4m3 %-13s %8.3f ms %7.1f TFLOP/s%s | bf16 cublas %8.3f ms %7.1f TFLOP/s (FP8 %.2fx)"):format(
    shape, ran, ms8, flops / ms8 / 1e9, t8 and (" torch %.3f ms (%.2fx)"):format(t8.ms, t8.ms / ms8) or "",
    ms16, flops / ms16 / 1e9, ms16 / ms8))
end
for name, r in pairs(torch) do rows[#rows + 1] = {case = name, peer = true, ms = r.ms, tflops = r.tflops} end

local meta = bench.meta()
local path = bench.results_path("fp8", meta)
bench.mkdir(path:match("^(.*)/"))
bench.write_json(path, {meta = meta, ladder = "fp8", reference = "cublaslt_fp8",
                        torch = torch_file and json.read(torch_file).meta or nil, rows = rows})
print("wrote " .. path)
