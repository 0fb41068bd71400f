--- examples/complex_bench.lua — complex arrays (issue 35) on the GPU: the fused c64 add, multiply, divide and sum of
-- 2^26 elements (the complex ladder, kernels/complex/: one pass each) against a device memcpy of the bytes they move
-- (2 reads + 1 write of 8 bytes; the sum: 1 read), validated against the host first, and the c64
-- matrix product (cuBLAS cgemm, matmul rung 0, and the Gauss form) in TFLOP/s (8 real flops per complex
-- multiply-add), all in one run; with --torch FILE the rows of bench/torch_complex.py stand beside them.
-- Writes bench/results/<backend>/complex-<device>.json.   lua5.4 examples/complex_bench.lua [--torch FILE]
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
local bench = require "cukern.bench"
local json = require "cukern.json"
local core = ck.core

local torch_file
for i, a in ipairs(arg) do if a == "--torch" then torch_file = arg[i + 1] end end
local backend = bench.target(arg)
if backend ~= "cuda" then print("complex_bench: needs a GPU; nothing written"); return end
local torch = {}
if torch_file then for _, r in ipairs(json.read(torch_file).rows or {}) do torch[r.case] = r end end

local function time(fn, reps)
  fn(); fn(); ck.sync()
  local t, ms = core.timer(), {}
  for r = 1, reps do t:start(); fn(); ms[r] = t:stop() end
  table.sort(ms)
  return ms[(#ms + 1) // 2]
end
local function memcpy_ms(bytes)
  local n = math.max(1, bytes // 8)
  local a, b = ck.empty({n}, {device = "cuda"}), ck.empty({n}, {device = "cuda"})
  local ms = core.time_op({op = "memcpy", dst = b, src = a}, 3, 10)
  table.sort(ms)
  return ms[(#ms + 1) // 2]
end

local rows = {}
local function row(name, ms, extra)
  local r = extra or {}
  r.case, r.ms = name, ms
  local t = torch[name]
  if t then r.torch_ms, r.ratio_to_torch = t.ms, t.ms / ms end
  rows[#rows + 1] = r
  print(("%-22s %9.3f ms%s%s"):format(name, ms, r.pct_memcpy and (" %6.1f%% of memcpy"):format(r.pct_memcpy) or
    r.tflops and (" %7.1f TFLOP/s"):format(r.tflops) or "", t and (" torch %.3f ms (%.2fx)"):format(t.ms, r.ratio_to_torch) or ""))
end

ck.seed(1)
local n = 1 << 26
local a = ck.complex(ck.randn({n}, {device = "cuda"}), ck.randn({n}, {device = "cuda"}))
local b = ck.complex(ck.randn({n}, {device = "cuda"}), ck.randn({n}, {device = "cuda"}))
local mc3, mc1 = memcpy_ms(3 * 8 * n), memcpy_ms(8 * n)
-- the fused ops (kernels/complex/, one pass each), timed from C between CUDA events (core.time_op, L2 flushed)
local function op_ms(spec)
  local ms = core.time_op(spec, 3, 10)
  table.sort(ms)
  return ms[(#ms + 1) // 2]
end
local out = ck.empty({n}, {dtype = "c64", device = "cuda"})
for _, c in ipairs {{"c64_add", "add"}, {"c64_mul", "mul"}, {"c64_div", "div"}} do
  assert(ck.allclose(ck.view_as_real(ck.core.complex_op(c[2], a, b)):to("host"),
    ck.view_as_real(ck.core.complex_op(c[2], a:to("host"), b:to("host"))), 1e-5, 1e-5), c[1] .. ": cuda differs from the host")
  local ms = op_ms({op = "complex_op", fn = c[2], a = a, b = b, out = out})
  row(c[1], ms, {bytes = 3 * 8 * n, pct_memcpy = 100 * mc3 / ms, composed = false, variant = ck.last_ran().name})
end
local sum = ck.empty({}, {dtype = "c64", device = "cuda"})
local ms = op_ms({op = "complex_op", fn = "sum", a = a, out = sum})
row("c64_sum", ms, {bytes = 8 * n, pct_memcpy = 100 * mc1 / ms, composed = false, variant = ck.last_ran().name})
for _, s in ipairs {2048, 4096} do
  local x = ck.complex(ck.randn({s, s}, {device = "cuda"}), ck.randn({s, s}, {device = "cuda"}))
  local y = ck.complex(ck.randn({s, s}, {device = "cuda"}), ck.randn({s, s}, {device = "cuda"}))
  local flops = 8 * s * s * s
  local m0 = time(function() return x * y end, 10)
  row("c64_matmul_" .. s, m0, {variant = ck.last_ran().name, tflops = flops / m0 / 1e9})
  local mg = time(function() return ck.matmul(x, y, {variant = "gauss"}) end, 5)
  row("c64_matmul_" .. s .. "_gauss", mg, {variant = "gauss", tflops = flops / mg / 1e9, pct_of_ref = 100 * m0 / mg})
end
local meta = bench.meta()
local path = bench.results_path("complex", meta)
bench.mkdir(path:match("^(.*)/"))
bench.write_json(path, {meta = meta, ladder = "complex", reference = "memcpy / cublas", rows = rows,
                        torch = torch_file and json.read(torch_file).meta or nil})
print("wrote " .. path)
