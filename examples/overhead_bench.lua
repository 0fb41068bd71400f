-- Host time per small op: `a:fill(1)` on 16 elements in a Lua loop (queueing included, then one sync),
-- the figure a small PyTorch op is compared with (6.4 µs on the GPU host). Median of several rounds.
--   lua5.4 examples/overhead_bench.lua [n_per_round]
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")
local ck = require "cukern"
local bench = require "cukern.bench"

local n = tonumber(arg[1]) or 20000
local rounds = {}
for r = 1, 9 do rounds[r] = bench.launch_overhead{n = n} end
table.sort(rounds)
local med = rounds[5]
local meta = bench.meta()
local doc = {meta = meta, ladder = "overhead", case = "a:fill(1) on 16 elements, Lua loop", n = n,
  us_per_op = med, us_min = rounds[1], us_max = rounds[9], target_us = 4.0, torch_small_op_us = 6.4,
  rows = {}}
local path = bench.results_path("overhead", meta) -- host runs: under bench/results/host/
bench.write_json(path, doc)
print(("host time per small op on %s (%s): median %.2f µs (min %.2f, max %.2f) over 9 rounds of %d; target <= 4 µs")
  :format(meta.device, ck.device().backend, med, rounds[1], rounds[9], n))
print("wrote " .. path)
