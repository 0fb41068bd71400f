--- Fused expression kernels against the memcpy bound and against chains of built-in ops.
--
--   lua5.4 examples/saxpy.lua [N]        (env CUKERN_SAXPY_N; default 2^28 f32 on a GPU, 2^20 on the host)
--
-- Rows (every one validated on slices against the host evaluator before it is timed):
--   memcpy                        device-to-device copy of one array: the bound (N read + N written)
--   map a*x+y                     ck.map("a * x + y") into a preallocated out: 2N read + N written
--   map a*x+y in place            the same with out = y
--   y:add_(x * 2)                 the unfused form: two launches, 5N of traffic for the same result
--   map x*y + z*w                 a 4-input fused expression (4N read + N written)
--   chain mul, mul, add           the built-in ops it replaces (three launches, two temporaries)
--   torch.add(y, x, alpha=2)      PyTorch in a python3 subprocess, when it is there (CUKERN_SAXPY_TORCH=0: skip)
-- GB/s counts the bytes the fused form must move (3N or 5N words), so unfused rows show their real cost as a
-- lower effective rate. Then: compile times cold (NVRTC), from the disk cache, and from the in-memory cache.
-- Writes $CUKERN_RESULTS/saxpy-<device slug>.json (default bench/results) and prints the table last.
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
local bench = require "cukern.bench"

local dev = ck.device()
local gpu = dev.backend == "cuda"
local device = gpu and "cuda" or "host"
local N = math.tointeger(tonumber(arg and arg[1] or os.getenv("CUKERN_SAXPY_N") or (gpu and 2 ^ 28 or 2 ^ 20)))
local REPS, WARMUP = gpu and 20 or 3, gpu and 5 or 1
local F32 = 4
local clock = ck.core.clock or os.clock

-- ---------------------------------------------------------------- validation against the host evaluator

local function check(got, expr, inputs)
  for _, s in ipairs {1, math.max(1, N // 2 - 1000), math.max(1, N - 2047)} do
    local last = math.min(N, s + 2047)
    local hin = {}
    for k, v in pairs(inputs) do hin[k] = ck.is_array(v) and v:narrow(1, s, last):host() or v end
    local ref = ck.map(expr, hin)
    local g, r = got:narrow(1, s, last):host():to("f64"):flat(), ref:to("f64"):flat()
    for i = 1, #r do
      if not (math.abs(g[i] - r[i]) <= 1e-6 + 1e-5 * math.abs(r[i])) then
        return false, ("element %d: got %.9g, expected %.9g"):format(s + i - 1, g[i], r[i])
      end
    end
  end
  return true
end

-- ---------------------------------------------------------------- cases

local rows = {}
local ref_gbps
local function add(r)
  r.gbps = r.ms and r.bytes / r.ms / 1e6 or nil
  r.pct_of_ref = ref_gbps and r.gbps and 100 * r.gbps / ref_gbps or nil
  rows[#rows + 1] = r
  bench.progress(#rows, 8, r.op)
end

local x = ck.rand(N, {device = device})
local y = ck.rand(N, {device = device})
local z = ck.rand(N, {device = device})
local w = ck.rand(N, {device = device})
local out = ck.empty(N, {device = device})

do
  local ok, r = pcall(bench.run, {spec = {op = "memcpy", dst = out, src = x}, warmup = WARMUP, reps = REPS})
  if ok then
    ref_gbps = 2 * N * F32 / r.ms / 1e6
    add {op = "memcpy", ms = r.ms, bytes = 2 * N * F32, correct = true, iqr = r.q3 - r.q1}
  else
    io.stderr:write("memcpy bound not available: " .. tostring(r) .. "\n")
  end
end

local function time(fn) return bench.run {fn = fn, warmup = WARMUP, reps = REPS, device = device} end

-- fused SAXPY
local SAXPY = "a * x + y"
local inputs = {a = 2.0, x = x, y = y}
out:fill(0 / 0)
ck.map(SAXPY, inputs, {out = out})
local info = ck.map_info(SAXPY, inputs, {out = out})
local ok, msg = check(out, SAXPY, inputs)
if not ok then io.stderr:write("INVALID map a*x+y: " .. msg .. "\n") end
local r = time(function() ck.map(SAXPY, inputs, {out = out}) end)
add {op = "map a*x+y", layout = info.layout, ms = r.ms, bytes = 3 * N * F32, correct = ok, iqr = r.q3 - r.q1,
  regs = info.kernel.registers, occupancy = info.kernel.occupancy}

-- in place: y = a * x + y (y changes every repetition; validated once on a copy)
local y2 = y:clone()
ck.map(SAXPY, {a = 2.0, x = x, y = y2}, {out = y2})
ok, msg = check(y2, SAXPY, inputs)
if not ok then io.stderr:write("INVALID map in place: " .. msg .. "\n") end
r = time(function() ck.map(SAXPY, {a = 2.0, x = x, y = y2}, {out = y2}) end)
add {op = "map a*x+y in place", layout = info.layout, ms = r.ms, bytes = 3 * N * F32, correct = ok, iqr = r.q3 - r.q1}

-- unfused: y:add_(x * 2)
y2:copy_(y)
y2:add_(ck.mul(x, 2))
ok, msg = check(y2, SAXPY, inputs)
if not ok then io.stderr:write("INVALID y:add_(x * 2): " .. msg .. "\n") end
r = time(function() y2:add_(ck.mul(x, 2)) end)
add {op = "y:add_(x * 2)", layout = "2 launches", ms = r.ms, bytes = 3 * N * F32, correct = ok, iqr = r.q3 - r.q1}

-- four inputs
local FOUR = "x * y + z * w"
local in4 = {x = x, y = y, z = z, w = w}
out:fill(0 / 0)
ck.map(FOUR, in4, {out = out})
local info4 = ck.map_info(FOUR, in4, {out = out})
ok, msg = check(out, FOUR, in4)
if not ok then io.stderr:write("INVALID map x*y+z*w: " .. msg .. "\n") end
r = time(function() ck.map(FOUR, in4, {out = out}) end)
add {op = "map x*y + z*w", layout = info4.layout, ms = r.ms, bytes = 5 * N * F32, correct = ok, iqr = r.q3 - r.q1,
  regs = info4.kernel.registers, occupancy = info4.kernel.occupancy}

local t1, t2 = ck.empty(N, {device = device}), ck.empty(N, {device = device})
local function chain()
  ck.mul(x, y, {out = t1})
  ck.mul(z, w, {out = t2})
  ck.add(t1, t2, {out = out})
end
out:fill(0 / 0)
chain()
ok, msg = check(out, FOUR, in4)
if not ok then io.stderr:write("INVALID chain: " .. msg .. "\n") end
r = time(chain)
add {op = "chain mul, mul, add", layout = "3 launches", ms = r.ms, bytes = 5 * N * F32, correct = ok, iqr = r.q3 - r.q1}
t1:free(); t2:free()

-- PyTorch in the same run (optional)
local torch_ms
if gpu and os.getenv("CUKERN_SAXPY_TORCH") ~= "0" then
  local py = ([[
import torch
n = %d
x = torch.rand(n, device="cuda"); y = torch.rand(n, device="cuda"); o = torch.empty_like(y)
for _ in range(5): torch.add(y, x, alpha=2, out=o)
ts = []
for _ in range(20):
    a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
    a.record(); torch.add(y, x, alpha=2, out=o); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
ts.sort(); print("TORCH_MS", ts[len(ts) // 2], torch.__version__)
]]):format(N)
  local f = io.open("/tmp/cukern_saxpy_torch.py", "w")
  f:write(py); f:close()
  local p = io.popen("python3 /tmp/cukern_saxpy_torch.py 2>&1")
  local txt = p:read("a"); p:close()
  local ms, ver = txt:match("TORCH_MS ([%d%.e%-]+) (%S+)")
  if ms then
    torch_ms = tonumber(ms)
    add {op = "torch.add(y, x, alpha=2)", layout = "torch " .. ver, ms = torch_ms, bytes = 3 * N * F32, correct = true}
  else
    io.stderr:write("PyTorch comparison skipped: " .. txt:sub(1, 200) .. "\n")
  end
end

-- ---------------------------------------------------------------- compile times

local compile = {}
if gpu then
  local dir = os.tmpname()
  os.remove(dir)
  local old = ck.cache_dir()
  ck.cache_dir(dir)
  -- a fresh expression (a literal nobody has compiled) on small arrays: compile + load + launch
  local expr = ("a * x + y * %d.5"):format(os.time() % 100000)
  local xs, ys = ck.rand(1024, {device = "cuda"}), ck.rand(1024, {device = "cuda"})
  local t0 = clock()
  ck.map(expr, {a = 2, x = xs, y = ys}); ck.sync()
  compile.cold_ms = (clock() - t0) * 1e3
  t0 = clock()
  ck.map(expr, {a = 3, x = xs, y = ys}); ck.sync()
  compile.memory_ms = (clock() - t0) * 1e3
  local src, si = ck.map_source(expr, {a = 2, x = xs, y = ys})
  local opt = {options = "--fmad=false"} -- as ck.map compiles: the entry the first call wrote is found
  t0 = clock()
  local b = ck.kernel_build(src, si.entry, opt)
  compile.disk_ms = (clock() - t0) * 1e3
  compile.disk_cache = b.cache
  ck.cache_dir("off")
  b = ck.kernel_build(src, si.entry, opt)
  compile.nvrtc_ms = b.compile_ms
  ck.cache_dir(old ~= "" and old or false)
  os.execute("rm -rf '" .. dir .. "'")
end

-- ---------------------------------------------------------------- report

local meta = bench.meta()
local path = bench.write_json(bench.results_path("saxpy", meta),
  {meta = meta, ladder = "saxpy", n = N, rows = rows, compile = compile})
print(("fused kernels on %s (%s), N = %d f32%s"):format(meta.device, device, N,
  ref_gbps and (", memcpy %.0f GB/s"):format(ref_gbps) or ""))
if compile.cold_ms then
  print(("compile: cold %.1f ms (NVRTC alone %.1f ms), disk cache %.2f ms (%s), in-memory %.3f ms (call + launch)")
    :format(compile.cold_ms, compile.nvrtc_ms or 0, compile.disk_ms, compile.disk_cache, compile.memory_ms))
end
print("results: " .. path)
bench.table(rows, {
  {key = "op", title = "op"},
  {key = "layout", title = "layout"},
  {key = "ms", title = "ms", fmt = "%.3f"},
  {key = "iqr", title = "iqr", fmt = "%.3f"},
  {key = "gbps", title = "GB/s", fmt = "%.0f"},
  {key = "pct_of_ref", title = "% memcpy", fmt = "%.1f"},
  {key = "regs", title = "regs", fmt = "%d"},
  {key = "occupancy", title = "occ", fmt = "%.2f"},
  {key = "correct", title = "ok", fmt = function(v) return v and "yes" or "NO" end},
})
