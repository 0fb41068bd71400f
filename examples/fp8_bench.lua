--- examples/fp8_bench.lua — FP8 GEMM (issue 37): e4m3 x e4m3 -> bf16 through cukern's matmul rows, cuBLASLt's
-- (rung 16, the reference) and ours (rung 18, wgmma_fp8), timed in alternating rounds on the same shapes, beside
-- cuBLAS bf16 (rung 0), in the same run; with --torch FILE the rows of bench/torch_fp8.py (torch._scaled_mm with
-- and without use_fast_accum, and torch.matmul on bf16, run just before on the same device) stand beside them.
-- Rung 18 keeps the running sum in the tensor core over the whole k, as use_fast_accum = True does; cuBLASLt's
-- row runs its default (no fast accumulation), so both torch rows are shown.
-- Writes bench/results/<backend>/fp8-<device>.json: own rows with pct_of_ref (% of the cuBLASLt row, same run)
-- and ratio_to_torch (torch ms / ours, against _scaled_mm with use_fast_accum for rung 18), peer rows with
-- peer = true, the reference rows with reference = true.
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
  local function run(v) return function() ck.matmul(a, bt:t(), {out = c, variant = v}) end end
  -- three alternating rounds of (cuBLASLt, ours); the median of each row's three medians
  local ref_ms, own_ms, own = {}, {}, nil
  for r = 1, 3 do
    ref_ms[r] = time(run("cublaslt_fp8"), 10)
    own_ms[r] = time(run("wgmma_fp8"), 10)
    own = own or ck.last_ran().name
  end
  table.sort(ref_ms); table.sort(own_ms)
  local ms8, msown = ref_ms[2], own_ms[2]
  local ab, bb = a:to("bf16"), bt:t():to("bf16")
  local ms16 = time(function() ck.matmul(ab, bb, {out = c, variant = "cublas"}) end, 10)
  local shape = ("%dx%dx%d"):format(m, n, k)
  local t8, t8f, t16 = torch["e4m3_" .. shape], torch["e4m3_" .. shape .. "_fastacc"], torch["bf16_" .. shape]
  rows[#rows + 1] = {case = "e4m3_" .. shape, variant = "cublaslt_fp8", reference = true, ms = ms8,
                     tflops = flops / ms8 / 1e9, ratio_to_torch = t8 and t8.ms / ms8 or nil}
  if own == "wgmma_fp8" then
    rows[#rows + 1] = {case = "e4m3_" .. shape, variant = "wgmma_fp8", ms = msown, tflops = flops / msown / 1e9,
                       pct_of_ref = 100 * ms8 / msown, ratio_to_torch = t8f and t8f.ms / msown or nil,
                       ratio_to_torch_default = t8 and t8.ms / msown or nil}
  end
  rows[#rows + 1] = {case = "bf16_" .. shape, variant = "cublas", ms = ms16, tflops = flops / ms16 / 1e9,
                     fp8_speedup = ms16 / ms8, ratio_to_torch = t16 and t16.ms / ms16 or nil}
  print(("%-18s cublaslt %7.3f ms %7.1f TF | %s %7.3f ms %7.1f TF = %5.1f%% of cuBLASLt%s | bf16 cublas %7.3f ms %7.1f TF"):format(
    shape, ms8, flops / ms8 / 1e9, own, msown, flops / msown / 1e9, 100 * ms8 / msown,
    (t8 and t8f) and (" | torch %.3f, fast_accum %.3f ms"):format(t8.ms, t8f.ms) or "", ms16, flops / ms16 / 1e9))
end
for name, r in pairs(torch) do rows[#rows + 1] = {case = name, peer = true, ms = r.ms, tflops = r.tflops} end

local meta = bench.meta()
local path = bench.results_path("fp8", meta)
bench.mkdir(path:match("^(.*)/"))
bench.write_json(path, {meta = meta, ladder = "fp8", reference = "cublaslt_fp8", own = "wgmma_fp8",
                        torch = torch_file and json.read(torch_file).meta or nil, rows = rows})
print("wrote " .. path)
