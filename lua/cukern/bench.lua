-- cukern.bench: timing, statistics, progress and results files for the experiment scripts.
--
-- Timing happens in C where it can: `bench.run{spec=...}` hands a time_op spec to ck.core.time_op, which
-- loops warmup + reps launches on the stream with CUDA events (or a monotonic clock on the host) and
-- writes 2 x L2 of scratch between reps so every rep starts cold. `bench.run{fn=...}` times a Lua function
-- instead (one timer around each call, after a sync), for things that are not a single op.
--
-- "cukern" is required lazily, inside the functions that need it: init.lua requires this module, and the
-- statistics, tables and JSON helpers work without the C module at all.
--
--   bench.run{spec= | fn=, warmup=5, reps=20, flush=true, flops=, bytes=, device=}
--       -> {ms=median, min=, max=, q1=, q3=, reps=, tflops=, gbps=, device=, timer=, times={...}}
--   bench.stats(list_of_ms)           -> {ms=, min=, max=, q1=, q3=, reps=}
--   bench.quantile(sorted, p)         linear interpolation between closest ranks (NumPy's default)
--   bench.launch_overhead{n=10000}    -> microseconds of host time per small op
--   bench.table(rows, cols [, out])   aligned text table; cols = {{key=, title=, fmt=}, ...}
--   bench.shape_str(shape), bench.numel(shape)   "4096x4096", 16777216
--   bench.print_tables(tables, cols)  a ladder's tables {{title=, rows=}}: -> rows that failed validation
--   bench.finish(path, failures)      "wrote <path>"; exits 1 with a note when a variant failed validation
--   bench.progress(i, n, label)       progress bar on stderr
--   bench.target(arg)                 where a ladder runs: "cuda" (full sizes) or "host" (small), host_small
--   bench.meta([{device=}])           device, driver, runtime, date, commit, host, cukern version; device =
--                                     "host" labels a run on the host backend of a GPU machine as a host run
--   bench.slug(name)                  "NVIDIA H200" -> "nvidia-h200"
--   bench.results_dir([backend])      where results go: $CUKERN_RESULTS, else bench/results for GPU runs and
--                                     bench/results/host for host runs (never bench/results itself)
--   bench.results_path(ladder [, meta]) <results_dir for meta.backend>/<ladder>-<device slug>.json
--   bench.write_json(path, doc), bench.read_json(path)   write_json also records the name in manifest.txt
-- (table, print_tables, finish, progress, shape_str and numel are in lua/cukern/bench_text.lua, exported here.)

local files = require "cukern.report_files"
local json = require "cukern.json"

local bench = {}

local ck_module
local function ck()
  if not ck_module then ck_module = require "cukern" end
  return ck_module
end

-- ---------------------------------------------------------------------------------------------------
-- statistics

function bench.quantile(sorted, p)
  local n = #sorted
  if n == 0 then return nil end
  local h = (n - 1) * p + 1
  local lo = math.floor(h)
  if lo >= n then return sorted[n] end
  return sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo])
end

function bench.stats(times)
  local s = {}
  for i, v in ipairs(times) do s[i] = v end
  table.sort(s)
  local n = #s
  if n == 0 then return { reps = 0 } end
  return {
    ms = bench.quantile(s, 0.5),
    min = s[1],
    max = s[n],
    q1 = bench.quantile(s, 0.25),
    q3 = bench.quantile(s, 0.75),
    reps = n,
  }
end

-- ---------------------------------------------------------------------------------------------------
-- timing

local ARRAY_FIELDS = { "a", "x", "src", "dst", "b", "out" }

-- "cuda:1" -> "cuda": the backend of a device name (benchmarks label results by backend).
local function kind(d) return type(d) == "string" and d:match("^(%a+)") or d end

-- The device a time_op spec runs on is the device of its arrays (its backend: "cuda" or "host").
local function spec_device(spec)
  for _, k in ipairs(ARRAY_FIELDS) do
    local v = spec[k]
    if type(v) == "userdata" or type(v) == "table" then
      local ok, d = pcall(function() return v:device() end)
      if ok and (kind(d) == "cuda" or kind(d) == "host") then return kind(d) end
    end
  end
  return kind(ck().default_device and ck().default_device() or ck().device().backend)
end

local function l2_flush_bytes(device, flush)
  if not flush or device ~= "cuda" then return 0 end
  local ok, dev = pcall(function() return ck().device() end)
  local l2 = ok and dev.l2_bytes or 0
  return 2 * (tonumber(l2) or 0)
end

local function host_clock()
  local ok, m = pcall(ck)
  if ok and m.core and m.core.clock then return m.core.clock end
  return os.clock -- CPU time: only without the core, where there is nothing asynchronous to wait for
end

local function sync()
  local ok, m = pcall(ck)
  if ok and m.sync then m.sync() end
end

local function time_fn(fn, warmup, reps, device, flush)
  local times = {}
  for _ = 1, warmup do fn() end
  sync()
  local timer, flushbuf
  if device == "cuda" then
    local core = ck().core
    -- events on the stream; without them, the host clock around fn + sync (an upper bound)
    if core.timer then timer = core.timer() end
    local fb = l2_flush_bytes(device, flush)
    if fb > 0 then flushbuf = ck().empty(fb // 4, { device = "cuda" }) end
  end
  local clock = timer == nil and host_clock() or nil
  -- With events, as core.time_op times in C and the PyTorch peers time theirs: after a wait for every stream of the
  -- device (work fn left on another stream stays out of the next rep), the flush is queued, then the start event, fn
  -- and the stop event, with no wait between (the timer's start runs earlier batched ops first, its stop waits for the
  -- stop event): the GPU is busy with the flush while the host issues fn, so the time is the device's. Without a
  -- flush the GPU is idle at the start, and the host's issue time of fn is inside the span.
  for i = 1, reps do
    if timer then sync() end
    if flushbuf then flushbuf:fill(i) end
    if timer then
      timer:start()
      fn()
      times[i] = timer:stop()
    else
      sync()
      local t0 = clock()
      fn()
      sync()
      times[i] = (clock() - t0) * 1e3
    end
  end
  if flushbuf and flushbuf.free then flushbuf:free() end
  return times, timer and "cuda events" or "host clock"
end

local RUN_KEYS = {spec = true, fn = true, warmup = true, reps = true, flush = true, device = true, flops = true,
                  bytes = true}

function bench.run(o)
  assert(type(o) == "table", "bench.run: expects a table {spec= or fn=, ...}")
  for k in pairs(o) do
    if not RUN_KEYS[k] then
      error(("bench.run: unknown key '%s' (spec, fn, warmup, reps, flush, device, flops, bytes)"):format(tostring(k)), 2)
    end
  end
  local warmup = o.warmup or 5
  local reps = o.reps or 20
  local flush = o.flush ~= false
  assert(reps >= 1, "bench.run: reps must be >= 1")
  local times, device, timer_kind, ran
  if o.spec then
    device = o.device or spec_device(o.spec)
    times, ran = ck().core.time_op(o.spec, warmup, reps, l2_flush_bytes(device, flush))
    timer_kind = device == "cuda" and "cuda events" or "host clock"
  elseif o.fn then
    assert(type(o.fn) == "function", "bench.run: fn must be a function")
    if o.device then
      device = o.device
    else
      local ok, m = pcall(ck)
      device = ok and (m.default_device and m.default_device() or m.device().backend) or "host"
    end
    times, timer_kind = time_fn(o.fn, warmup, reps, device, flush)
  else
    error("bench.run: give spec= (a time_op spec) or fn= (a Lua function)", 2)
  end
  local r = bench.stats(times)
  r.times = times
  r.device = device
  r.timer = timer_kind
  if type(ran) == "table" then
    -- the variant that actually ran (the dispatcher may have fallen back)
    r.ran, r.ran_id = ran.name, ran.id
    if ran.note and ran.note ~= "" then r.ran_note = ran.note end
  end
  if r.ms and r.ms > 0 then
    if o.flops then r.tflops = o.flops / r.ms / 1e9 end
    if o.bytes then r.gbps = o.bytes / r.ms / 1e6 end
  end
  return r
end

-- What the kernels that ran look like (ck.last_ran() or time_op's record), as flat fields of a result row:
-- regs, smem (static + dynamic bytes per block), occ (theoretical occupancy, 0..1), spill (local bytes per
-- thread) of the rung's main kernel (the first it launched; finishing passes come after), and kernels, the
-- full records of every kernel it launched. A library reference (cuBLAS, CUB, geam) has kernel = "library"
-- and none of ours to describe; host runs have nothing. Copies into `row` and returns it.
local KERNEL_KEYS = {"name", "registers", "static_smem", "dynamic_smem", "local_bytes", "block", "occupancy"}
function bench.kernel_fields(row, ran)
  if type(ran) ~= "table" or type(ran.kernels) ~= "table" then return row end
  local ks = {}
  for i, k in ipairs(ran.kernels) do
    local c = {}
    for _, key in ipairs(KERNEL_KEYS) do c[key] = k[key] end
    ks[i] = c
  end
  row.kernels = ks
  local k = ks[1]
  if k then
    row.regs, row.smem, row.occ, row.spill = k.registers, k.static_smem + k.dynamic_smem, k.occupancy, k.local_bytes
  end
  if ran.library then row.kernel = "library" end
  return row
end

-- The columns bench.table prints for bench.kernel_fields (dropped when no row has them: host runs).
bench.KERNEL_COLS = {
  {key = "regs", optional = true}, {key = "smem", optional = true},
  {key = "occ", fmt = "%.2f", optional = true}, {key = "spill", optional = true},
}
-- cols followed by bench.KERNEL_COLS, inserted before the first column named in `before` (or at the end).
function bench.with_kernel_cols(cols, before)
  local out, done = {}, false
  for _, c in ipairs(cols) do
    if not done and before and c.key == before then
      for _, k in ipairs(bench.KERNEL_COLS) do out[#out + 1] = k end
      done = true
    end
    out[#out + 1] = c
  end
  if not done then for _, k in ipairs(bench.KERNEL_COLS) do out[#out + 1] = k end end
  return out
end

-- Host time per small op: what a Lua loop of tiny launches costs, queueing included.
--- A ladder case's timed rows (each with ms and id; id 0 = the library reference), in ladder order: step and
-- cumulative speedups of the own rungs (the first own rung is 1.00x), pct_of_ref = % of the reference's rate
-- (reference time / row time) and reference = true on its row. Rows without a time are left as they are.
function bench.ladder_ratios(rows)
  local ref, first, prev
  for _, r in ipairs(rows) do if r.id == 0 and r.ms then ref = r end end
  for _, r in ipairs(rows) do
    if r.ms then
      if r.id ~= 0 then
        first = first or r
        r.step_speedup = prev and prev.ms / r.ms or 1
        r.cum_speedup = first.ms / r.ms
        prev = r
      end
      if ref then r.pct_of_ref = 100 * ref.ms / r.ms; r.pct = r.pct_of_ref end
      if r.id == 0 then r.reference = true end
    end
  end
  return rows
end

function bench.launch_overhead(o)
  if o ~= nil and type(o) ~= "table" then error("launch_overhead: takes nil or a table {n =, device =}", 2) end
  o = o or {}
  local n = o.n or 10000
  local m = ck()
  local a = o.device and m.empty(16, { device = o.device }) or m.empty(16)
  for _ = 1, math.min(n, 100) do a:fill(1) end
  m.sync()
  local clock = m.core.clock
  local t0 = clock()
  for _ = 1, n do a:fill(1) end
  m.sync()
  local us = (clock() - t0) / n * 1e6
  if a.free then a:free() end
  return us
end

-- ---------------------------------------------------------------------------------------------------
-- text output (lua/cukern/bench_text.lua)

local text = require "cukern.bench_text"
bench.shape_str, bench.numel, bench.table = text.shape_str, text.numel, text.table
bench.print_tables, bench.finish, bench.progress = text.print_tables, text.finish, text.progress

-- ---------------------------------------------------------------------------------------------------
-- metadata and results files

local function shell(cmd)
  local p = io.popen(cmd .. " 2>/dev/null")
  if not p then return nil end
  local s = p:read("a")
  p:close()
  s = s and s:gsub("%s+$", "")
  if s == nil or s == "" then return nil end
  return s
end

local function version_string(v)
  -- CUDA encodes versions as 1000*major + 10*minor (13000 -> "13.0").
  if math.type(v) == "integer" and v >= 1000 then
    return string.format("%d.%d", v // 1000, (v % 1000) // 10)
  end
  return v
end

function bench.meta(opts)
  local m = {
    date = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    -- CUKERN_COMMIT for checkouts without .git (a copied tree on the GPU host)
    commit = (os.getenv("CUKERN_COMMIT") ~= "" and os.getenv("CUKERN_COMMIT")) or shell("git rev-parse --short HEAD")
        or "unknown",
    host = os.getenv("HOSTNAME") or shell("hostname") or "unknown",
  }
  local ok, mod = pcall(ck)
  if ok then
    local dok, dev = pcall(mod.device, opts and opts.device or nil)
    if dok and type(dev) == "table" then
      -- a GPU machine told to run on the host (CUKERN_DEVICE=host) labels its results as host runs
      local default = kind((opts and opts.device) or dev.default or (mod.default_device and mod.default_device()))
      if default == "host" and mod.has_cuda and mod.has_cuda() then
        local gok, gpu = pcall(mod.device, "cuda")
        dev = gok and gpu or dev
        m.gpu_present = dev.name
        dev = { backend = "host", name = "host", driver = dev.driver, runtime = dev.runtime }
      end
      m.backend = dev.backend
      m.device = dev.backend == "host" and "host" or dev.name
      m.host_cpu = dev.backend == "host" and type(dev.name) == "string" and not dev.name:match("^host") and dev.name or nil
      m.cc = dev.cc
      m.driver = version_string(dev.driver)
      -- the kernel driver's own version (nvidia-smi), which the CUDA API does not report
      local nd = os.getenv("CUKERN_NVIDIA_DRIVER")
      if nd and nd ~= "" then m.nvidia_driver = nd end
      m.runtime = version_string(dev.runtime)
      m.why_host = dev.why_host
    end
    m.cukern = mod._VERSION or mod.version or (mod.core and mod.core.version)
  end
  m.device = m.device or "unknown"
  m.backend = m.backend or "host"
  return m
end

function bench.slug(name)
  local s = tostring(name or "unknown"):lower():gsub("[^%w]+", "-"):gsub("^%-+", ""):gsub("%-+$", "")
  return s == "" and "unknown" or s
end

local GPU_RESULTS, HOST_RESULTS = "bench/results", "bench/results/host"

-- The backend a results file is for when the caller does not say: the default device's.
local function default_backend()
  local ok, m = pcall(ck)
  if not ok then return "host" end
  local d = kind(m.default_device and m.default_device() or m.device().backend)
  return d == "cuda" and "cuda" or "host"
end

-- Is `dir` the committed GPU results directory (relative, ./-prefixed or absolute under $PWD)?
local function is_gpu_results(dir)
  local p = dir:gsub("/+$", ""):gsub("^%./", "")
  local pwd = os.getenv("PWD")
  if pwd and p:sub(1, #pwd + 1) == pwd .. "/" then p = p:sub(#pwd + 2) end
  return p == GPU_RESULTS
end

function bench.results_dir(backend)
  backend = backend or default_backend()
  local d = os.getenv("CUKERN_RESULTS")
  if d == nil or d == "" then d = backend == "cuda" and GPU_RESULTS or HOST_RESULTS end
  if backend ~= "cuda" and is_gpu_results(d) then
    -- bench/results holds the committed GPU results: a host run never writes there
    io.stderr:write("bench: host results go to ", HOST_RESULTS, "/, not ", d, "\n")
    d = HOST_RESULTS
  end
  return d
end

bench.mkdir = files.mkdir

-- Writes the JSON (atomically) and records its name in the directory's manifest.txt, which is how the
-- report finds results files without listing the directory.
function bench.write_json(path, doc)
  local dir, name = path:match("^(.*)/([^/]*)$")
  if dir == "" then dir = "/" end
  if dir then bench.mkdir(dir) end
  local ok, err = json.write(path, doc)
  if not ok then error("bench.write_json: " .. tostring(err), 2) end
  ok, err = files.record(dir or ".", name or path)
  if not ok then error("bench.write_json: " .. path .. " written but not recorded in " .. files.MANIFEST .. ": " ..
    tostring(err), 2) end
  return path
end

function bench.read_json(path)
  return json.read(path)
end

-- `<ladder>-<device slug>.json` in the results directory of the run's backend (meta.backend).
function bench.results_path(ladder, meta)
  meta = meta or bench.meta()
  local backend = meta.backend == "cuda" and "cuda" or "host"
  return bench.results_dir(backend) .. "/" .. ladder .. "-" .. bench.slug(meta.device) .. ".json"
end

-- Where a ladder script runs: on the GPU at full size, or on the host backend at small sizes when there
-- is no GPU or with CUKERN_DEVICE=host, CUKERN_SIZES=small, CUKERN_HOST_SMALL=1 or --host-small among the
-- script's arguments. Returns "cuda" or "host", and whether small sizes were asked for.
function bench.target(args)
  local host_small = os.getenv("CUKERN_SIZES") == "small" or os.getenv("CUKERN_HOST_SMALL") == "1"
  for _, a in ipairs(args or {}) do
    if a == "--host-small" then host_small = true end
  end
  local on_gpu = ck().has_cuda() and not host_small and os.getenv("CUKERN_DEVICE") ~= "host"
  return on_gpu and "cuda" or "host", host_small
end

return bench
