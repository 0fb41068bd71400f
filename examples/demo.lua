-- The main job: run every ladder, then build the report.
--
--   lua5.4 examples/demo.lua [--host] [--only matmul,reduce,...] [--no-report] [--readme]
--
-- On a GPU the ladders run at their full sizes (sized to fill the device) and write bench/results/*.json.
-- Without a GPU, or with --host, they run on the host backend at small sizes (CUKERN_SIZES=small and
-- --host-small) and write bench/results/host/, so a laptop or CI run never overwrites committed GPU
-- results; the report then builds bench/results/host/index.html and leaves README.md alone. Each ladder
-- runs as its own process: a crash in one does not stop the others, and each starts with a clean device.
-- Ladder scripts that do not exist yet are skipped with a note. CUKERN_RESULTS overrides the output
-- directory (bench.results_dir: for a host run, never bench/results itself).

local paths = dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")
local root = paths.root

local report = require "cukern.report"
local bench = require "cukern.bench"
local files = require "cukern.report_files"

local LADDERS = {
  { name = "matmul", script = "examples/matmul_ladder.lua" },
  { name = "reduce", script = "examples/reduce_ladder.lua" },
  { name = "transpose", script = "examples/transpose_ladder.lua" },
  { name = "elementwise", script = "examples/elementwise_bench.lua" },
  { name = "overhead", script = "examples/overhead_bench.lua" },
  -- issue 33: the scan, sort and histogram ladders; issue 32: selection and assembly; issue 34: the LU ladder
  { name = "scan", script = "examples/scan_ladder.lua" },
  { name = "sort", script = "examples/sort_ladder.lua" },
  { name = "histogram", script = "examples/histogram_ladder.lua" },
  { name = "select", script = "examples/select_bench.lua" },
  { name = "lu", script = "examples/linalg_bench.lua" },
  -- issue 35: the FFT ladder and complex arrays; issue 37: the row-op and attention ladders, FP8 GEMM (the FP8 and
  -- complex benches need a GPU: on the host they say so and write nothing)
  { name = "fft", script = "examples/fft_ladder.lua" },
  { name = "rows", script = "examples/rows_ladder.lua" },
  { name = "attention", script = "examples/attention_ladder.lua" },
  { name = "fp8", script = "examples/fp8_bench.lua" },
  { name = "complex", script = "examples/complex_bench.lua" },
  -- several GPUs (issue 31): with fewer than 2 CUDA devices it says so and writes nothing
  { name = "allreduce", script = "examples/allreduce_ladder.lua" },
}

local force_host, only, do_report, readme = false, nil, true, false
for _, a in ipairs(arg or {}) do
  if a == "--host" then
    force_host = true
  elseif a:match("^%-%-only=") then
    only = {}
    for n in a:match("^%-%-only=(.*)$"):gmatch("[^,]+") do only[n] = true end
  elseif a == "--no-report" then
    do_report = false
  elseif a == "--readme" then
    readme = true
  elseif a == "-h" or a == "--help" then
    print("usage: lua5.4 examples/demo.lua [--host] [--only=matmul,reduce,...] [--no-report] [--readme]")
    os.exit(0)
  else
    io.stderr:write("demo: unknown option ", a, "\n")
    os.exit(2)
  end
end

local q, exists = files.shell_quote, files.exists

local function under_root(p)
  if p:match("^/") then return p end
  return root .. "/" .. p
end

local function clock()
  local ok, ck = pcall(require, "cukern")
  if ok and ck.core and ck.core.clock then return ck.core.clock() end
  return os.time()
end

-- ---------------------------------------------------------------------------------------------------
-- where are we

local ok, ck = pcall(require, "cukern")
if not ok then
  io.stderr:write("demo: cannot load cukern (build it first with `make`):\n  ", tostring(ck), "\n")
  os.exit(1)
end
local dev = ck.device()
local on_gpu = ck.has_cuda() and not force_host
local results = bench.results_dir(on_gpu and "cuda" or "host")

print(string.rep("=", 78))
if on_gpu then
  print(string.format("cukern demo on %s (cc %s, %.0f GiB, driver %s, runtime %s)", tostring(dev.name),
    tostring(dev.cc), (tonumber(dev.total_mem) or 0) / 2 ^ 30, tostring(dev.driver), tostring(dev.runtime)))
  print("ladders run at full sizes; results go to " .. results)
else
  print("cukern demo on the HOST CPU BACKEND" ..
    (force_host and " (--host)" or (dev.why_host and (": " .. tostring(dev.why_host)) or ": no GPU")))
  print("small sizes, functional run only (not GPU performance); results go to " .. results)
end
print(string.rep("=", 78))

-- ---------------------------------------------------------------------------------------------------
-- the ladders

local lua = (arg and arg[-1]) or "lua5.4"
local lua_path = paths.lua_path .. ";" .. (os.getenv("LUA_PATH") or ";")
local lua_cpath = paths.lua_cpath .. ";" .. (os.getenv("LUA_CPATH") or ";")

local summary = {}
local failures = 0
for _, l in ipairs(LADDERS) do
  if only and not only[l.name] then
    summary[#summary + 1] = { ladder = l.name, status = "not selected" }
  elseif not exists(root .. "/" .. l.script) then
    print(string.format("\n-- %s: %s does not exist yet, skipped", l.name, l.script))
    summary[#summary + 1] = { ladder = l.name, status = "skipped (no script)" }
  else
    print(string.format("\n-- %s: %s%s", l.name, l.script, on_gpu and "" or " (host, small sizes)"))
    local envs = {
      "CUKERN_RESULTS=" .. q(results),
      "LUA_PATH=" .. q(lua_path),
      "LUA_CPATH=" .. q(lua_cpath),
    }
    local args = ""
    if not on_gpu then
      envs[#envs + 1] = "CUKERN_SIZES=" .. q(os.getenv("CUKERN_SIZES") or "small")
      envs[#envs + 1] = "CUKERN_HOST_SMALL=1"
      envs[#envs + 1] = "CUKERN_DEVICE=host"
      -- the flag only for scripts that take it (others read their first argument as a size)
      local f = io.open(under_root(l.script), "r")
      local src = f and f:read("a") or ""
      if f then f:close() end
      if src:find("--host-small", 1, true) then args = " --host-small" end
    end
    local cmd = string.format("cd %s && %s %s %s%s", q(root), table.concat(envs, " "), q(lua), q(l.script), args)
    local t0 = clock()
    local okrun, how, code = os.execute(cmd)
    local secs = clock() - t0
    local status = okrun and "ok" or string.format("FAILED (%s %s)", tostring(how), tostring(code))
    if not okrun then failures = failures + 1 end
    local out = results .. "/" .. l.name .. "-" .. bench.slug(on_gpu and dev.name or "host") .. ".json"
    summary[#summary + 1] = { ladder = l.name, status = status, seconds = secs,
      results = exists(under_root(out)) and out or "-" }
  end
end

if on_gpu then
  local okov, us = pcall(bench.launch_overhead, { n = 10000 })
  if okov then
    print(string.format("\nlaunch overhead: %.2f us of host time per small op (a:fill on 16 elements)", us))
  end
end

print("\n" .. string.rep("-", 78))
bench.table(summary, {
  { key = "ladder" }, { key = "status" }, { key = "seconds", title = "s", fmt = "%.1f" }, { key = "results" },
})

-- ---------------------------------------------------------------------------------------------------
-- the report

if do_report then
  local okb, written = pcall(report.build, under_root(results), under_root(results),
    { backend = on_gpu and "cuda" or "host" })
  if not okb then
    io.stderr:write("demo: report failed: ", tostring(written), "\n")
    os.exit(1)
  end
  print(string.format("\nreport: %d charts written", #written - 1))
  if readme and on_gpu then
    local okr, err = pcall(report.update_readme, root .. "/README.md", under_root(results), { link_dir = results })
    print(okr and "README results section updated" or ("README not updated: " .. tostring(err)))
  end
  print("open " .. files.absolute(written[#written]))
end

os.exit(failures == 0 and 0 or 1)
