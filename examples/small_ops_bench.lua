-- Host time per small op, the way a script issues them: a Lua loop of N ops (results dropped, so the GC and
-- the allocator are in the figure), then one sync (which includes the device time of the batched launches);
-- µs per op, median of 7 rounds; each case with batching on (the default) and off. Cases: fill on 16
-- elements, a + b (new result), a:add_(b), the sum of 16 elements, an 8x8 matmul. With --torch, PyTorch
-- runs the same cases in the same process tree on the same GPU (python3 -c ...), so the ratio is measured in
-- one run.
--   lua5.4 examples/small_ops_bench.lua [--json path] [--torch]
local here = arg[0]:match("^(.*)/") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
local ck = require "cukern"

local json_path, with_torch
for i = 1, #arg do
  if arg[i] == "--json" then json_path = arg[i + 1] end
  if arg[i] == "--torch" then with_torch = true end
end

local dev = ck.has_cuda() and "cuda" or "host"
local clock = ck.core.clock
local N, ROUNDS = 20000, 7
local a, b = ck.rand(4, 4, {device = dev}), ck.rand(4, 4, {device = dev})
local m1, m2 = ck.rand(8, 8, {device = dev}), ck.rand(8, 8, {device = dev})
local cases = {
  {"fill (16 elements)", function() a:fill(1) end},
  {"a + b (new result)", function() local _ = a + b end},
  {"a:add_(b)", function() a:add_(b) end},
  {"sum of 16 elements", function() local _ = ck.sum(a) end},
  {"8x8 matmul", function() local _ = m1 * m2 end},
}

-- µs per op of f (which issues `ops` ops): warm-up, then ROUNDS rounds of n calls, each ended by one sync;
-- the median and the fastest round.
local function time_per_op(f, n, ops, warm)
  for _ = 1, warm do f() end
  ck.sync()
  local us = {}
  for r = 1, ROUNDS do
    local t0 = clock()
    for _ = 1, n do f() end
    ck.sync()
    us[r] = (clock() - t0) * 1e6 / (n * ops)
  end
  table.sort(us)
  return us[(#us + 1) // 2], us[1]
end

-- Each case twice: as a script issues it (small ops batched, kernels/batched/: one launch per up to 56 ops),
-- and with batching off (ck.batching(false): one launch per op, the launching rungs).
local rows = {}
for _, c in ipairs(cases) do
  local med, min = time_per_op(c[2], N, 1, 2000)
  ck.batching(false)
  local emed = time_per_op(c[2], N, 1, 2000)
  ck.batching(true)
  rows[#rows + 1] = {case = c[1], us_per_op = med, us_min = min, us_eager = emed}
end

-- A chain of 20 small elementwise ops, issued one by one vs replayed as one CUDA graph (ck.graph), µs per op.
local chain_rows = {}
if dev == "cuda" and ck.graph then
  local x, y = ck.rand(16, {device = dev}), ck.rand(16, {device = dev})
  local function chain()
    for _ = 1, 5 do x:add_(y); x:mul_(0.5); x:sub_(y); x:abs_() end
  end
  local g = ck.graph(chain)
  ck.batching(false)
  local eager = time_per_op(chain, 1000, 20, 200)
  ck.batching(true)
  chain_rows = {{case = "20-op chain, issued op by op", us_per_op = (time_per_op(chain, 1000, 20, 200)), us_eager = eager},
                {case = "20-op chain, graph replay", us_per_op = (time_per_op(function() g:replay() end, 1000, 20, 200)),
                 nodes = g:nodes()}}
end

if with_torch and dev == "cuda" then
  local py = [[
import time, torch
d = "cuda"
a, b = torch.rand(4, 4, device=d), torch.rand(4, 4, device=d)
m1, m2 = torch.rand(8, 8, device=d), torch.rand(8, 8, device=d)
cases = [lambda: a.fill_(1), lambda: a + b, lambda: a.add_(b), lambda: a.sum(), lambda: m1 @ m2]
for f in cases:
    for _ in range(2000): f()
    torch.cuda.synchronize()
    us = []
    for r in range(7):
        t0 = time.perf_counter()
        for _ in range(20000): f()
        torch.cuda.synchronize()
        us.append((time.perf_counter() - t0) * 1e6 / 20000)
    us.sort()
    print(us[3])
]]
  local p = io.popen("python3 -c '" .. py .. "' 2>/dev/null")
  local i = 0
  for line in p:lines() do
    i = i + 1
    if rows[i] then rows[i].torch_us = tonumber(line) end
  end
  p:close()
end

-- ratio: cukern (batched, the default) / PyTorch; eager: cukern with batching off / PyTorch
print(("%-22s %10s %10s %10s %8s %8s"):format("case (" .. dev .. ")", "cukern us", "eager us", "torch us", "ratio", "eager"))
local function ratio(a, b) return (a and b) and ("%.2f"):format(a / b) or "-" end
for _, r in ipairs(rows) do
  print(("%-22s %10.2f %10.2f %10s %8s %8s"):format(r.case, r.us_per_op, r.us_eager,
    r.torch_us and ("%.2f"):format(r.torch_us) or "-", ratio(r.us_per_op, r.torch_us), ratio(r.us_eager, r.torch_us)))
end
for _, r in ipairs(chain_rows) do
  print(("%-30s %10.2f us/op%s%s"):format(r.case, r.us_per_op,
    r.us_eager and (" (batching off: %.2f)"):format(r.us_eager) or "", r.nodes and (" (%d graph nodes)"):format(r.nodes) or ""))
  rows[#rows + 1] = r
end
if json_path then
  local ok, json = pcall(require, "cukern.json")
  local f = assert(io.open(json_path, "w"))
  if ok then
    local bok, bench = pcall(require, "cukern.bench") -- device, driver, date, commit of the run
    f:write(json.encode({device = ck.device().name, backend = dev, n = N, rounds = ROUNDS, rows = rows,
                         meta = bok and bench.meta() or nil}))
  else
    for _, r in ipairs(rows) do f:write(("%s\t%.3f\n"):format(r.case, r.us_per_op)) end
  end
  f:close()
end
