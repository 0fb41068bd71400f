-- The same headline rows on every CUDA device (issue 31): a context per device must not cost speed. Per device: the
-- matmul ladder's headline (bf16 8192^3, the default rung: the persistent wgmma one on Hopper), the f32 matmul
-- headline (8192^3, the default), and the reduction's (f32 full sum of 2^28), each timed in C with CUDA events on
-- that device's stream (bench.run: 5 warm-ups, 20 reps, L2 flushed), and its ratio to cuda:0 in the same run.
--   lua5.4 examples/device_parity.lua [--out file.json]
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")
local ck = require "cukern"
local bench = require "cukern.bench"

local out = arg[1] == "--out" and arg[2] or nil
local devs = {}
for _, d in ipairs(ck.devices()) do if d.backend == "cuda" then devs[#devs + 1] = d.id end end
if #devs < 2 then print("device_parity: needs 2 CUDA devices; this machine has " .. #devs); os.exit(0) end

local cases = {
  {name = "matmul bf16 8192^3", make = function(d)
    ck.seed(1)
    local a, b = ck.randn(8192, 8192, {device = d, dtype = "bf16"}), ck.randn(8192, 8192, {device = d, dtype = "bf16"})
    return {op = "matmul", a = a, b = b}, 2 * 8192 ^ 3, nil end},
  {name = "matmul f32 8192^3", make = function(d)
    ck.seed(2)
    local a, b = ck.randn(8192, 8192, {device = d}), ck.randn(8192, 8192, {device = d})
    return {op = "matmul", a = a, b = b}, 2 * 8192 ^ 3, nil end},
  {name = "sum f32 2^28", make = function(d)
    ck.seed(3)
    return {op = "reduce", fn = "sum", x = ck.rand(2 ^ 28, {device = d})}, nil, 4 * 2 ^ 28 end},
}
local rows = {}
for _, c in ipairs(cases) do
  local base
  for _, d in ipairs(devs) do
    local spec, flops, bytes = c.make(d)
    local r = bench.run {spec = spec, warmup = 5, reps = 20, flops = flops, bytes = bytes}
    base = base or r.ms
    rows[#rows + 1] = {case = c.name, device = d, ms = r.ms, ran = r.ran, tflops = r.tflops, gbps = r.gbps,
                       ratio_to_cuda0 = r.ms / base}
    print(("  %-20s %-7s %-14s %9.4f ms  %s  x%.3f of cuda:0's time"):format(c.name, d, r.ran or "?", r.ms,
      r.tflops and ("%.0f TFLOP/s"):format(r.tflops) or ("%.0f GB/s"):format(r.gbps), r.ms / base))
    local input = spec.a or spec.x
    input:free()
    if spec.b then spec.b:free() end
  end
end
local meta = bench.meta {device = "cuda"}
meta.gpus = #devs
local path = out or bench.results_path(#devs == 2 and "device-parity" or ("device-parity-" .. #devs .. "gpu"), meta)
bench.write_json(path, {meta = meta, rows = rows})
print("device parity -> " .. path)
