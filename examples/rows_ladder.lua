-- The row-op ladder (issue 37): softmax, layer_norm and rms_norm, from a thread per row reading it three times to
-- rows held in registers with 16-byte accesses, against a memcpy of the same bytes and PyTorch.
--
--   lua5.4 examples/rows_ladder.lua [--host-small]     (CUKERN_PEERS=peers.json: bench/torch_rows_attention.py's rows)
--
-- Cases: 2^28 elements in rows of 1024 and 8192 (f32; softmax also bf16), along the last dim. Each rung is
-- validated before it is timed: its output's first 64 rows against the host oracle (f64 statistics), within
-- the bound spec/rows_spec.lua derives. Timed in C with CUDA events (bench.run: 3 warm-ups, 10 reps, L2
-- flushed); GB/s counts one read and one write of every element. Per case: step and cumulative speedup, % of
-- the memcpy bandwidth of the same bytes measured in this run, and ratio_to_torch (torch's time / ours) where
-- the peers file has the case. Rows go to <results>/rows-<device>.json; peer rows carry peer = true.
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")

local ck = require "cukern"
local bench = require "cukern.bench"

local device = bench.target(arg)
local on_gpu = device == "cuda"
local N = on_gpu and 2 ^ 28 or 2 ^ 16

local cases = {}
for _, c in ipairs {{"softmax", "f32"}, {"layer_norm", "f32"}, {"rms_norm", "f32"}, {"softmax", "bf16"}} do
  for _, len in ipairs(on_gpu and {1024, 8192} or {1024}) do
    cases[#cases + 1] = {fn = c[1], dtype = c[2], shape = {math.tointeger(N // len), len}}
  end
end
local function label(c) return ("%s %s %s"):format(c.fn, c.dtype, bench.shape_str(c.shape)) end

local variants = on_gpu and ck.variants("rows") or {{id = -1, name = "host"}}

-- the peers of this run (bench/torch_rows_attention.py), by case
local peers, peer_rows = {}, {}
if os.getenv("CUKERN_PEERS") then
  local ok, doc = pcall(bench.read_json, os.getenv("CUKERN_PEERS"))
  for _, r in ipairs(ok and doc.rows or {}) do
    if r.op ~= "attention" then
      peers[r.case] = r
      peer_rows[#peer_rows + 1] = {peer = true, variant = r.peer, case = r.case, ms = r.ms, gbps = r.gbps}
    end
  end
end

local memcpy_gbps = {}
local function memcpy(dt)
  if not on_gpu or memcpy_gbps[dt] then return memcpy_gbps[dt] end
  local src, dst = ck.empty(N, {device = "cuda", dtype = dt}):fill(1), ck.empty(N, {device = "cuda", dtype = dt})
  local es = dt == "bf16" and 2 or 4
  memcpy_gbps[dt] = bench.run{spec = {op = "memcpy", dst = dst, src = src}, warmup = 3, reps = 10, bytes = 2 * es * N}.gbps
  src:free(); dst:free()
  io.stderr:write(("memcpy D2D %s x 2^%d: %.0f GB/s (read+write)\n"):format(dt, math.floor(math.log(N, 2)), memcpy_gbps[dt]))
  return memcpy_gbps[dt]
end

-- the bound of spec/rows_spec.lua: n roundings of the f32 statistics, the output's rounding, 2x
local U_OUT = {f32 = 2 ^ -24, bf16 = 2 ^ -8}
local function tol(dt, n) local t = 2 * ((8 + n) * 2 ^ -24 + U_OUT[dt]); return t end

local function run(c, x, w, b, v, out)
  local o = {variant = v, out = out}
  if c.fn == "softmax" then return ck.softmax(x, 2, o) end
  if c.fn == "layer_norm" then return ck.layer_norm(x, w, b, 1e-5, o) end
  return ck.rms_norm(x, w, 1e-6, o)
end

local rows, tables = {}, {}
local total, step = #cases * #variants, 0
for ci, c in ipairs(cases) do
  ck.seed(777 + ci)
  local len, n = c.shape[2], N
  local x = (ck.rand(c.shape, {device = device, dtype = c.dtype}) * 2 - 1)
  local w = c.fn ~= "softmax" and ck.rand({len}, {device = device, dtype = c.dtype}) + 0.5 or nil
  local b = c.fn == "layer_norm" and ck.rand({len}, {device = device, dtype = c.dtype}) - 0.5 or nil
  local head = math.min(64, c.shape[1])
  local ref = run(c, x:narrow(1, 1, head):host(), w and w:host(), b and b:host())
  local es = c.dtype == "bf16" and 2 or 4
  local bw = memcpy(c.dtype)
  local case_rows = {}
  for _, v in ipairs(variants) do
    step = step + 1
    bench.progress(step, total, label(c) .. " " .. v.name)
    local row = {id = v.id, variant = v.name, op = c.fn, dtype = c.dtype, shape = c.shape, case = label(c), numel = n}
    local out = ck.empty(c.shape, {device = device, dtype = c.dtype}):fill(0 / 0)
    local vopt = on_gpu and v.name or nil
    local okrun, err = pcall(run, c, x, w, b, vopt, out)
    if not okrun then
      row.ok, row.correct, row.error = false, false, tostring(err)
    elseif on_gpu and ck.last_ran().name ~= v.name then
      row = nil -- its supports() declined this shape: not part of this case
    elseif not ck.allclose(out:narrow(1, 1, head):host():to("f64"), ref:to("f64"), tol(c.dtype, len), tol(c.dtype, len)) then
      row.ok, row.correct, row.error = false, false, "differs from the host oracle"
    else
      row.ok, row.correct = true, true
      local slow = v.name == "naive" or v.name == "online"
      local r = bench.run{spec = {op = "rows", fn = c.fn, x = x, dim = 2, w = w, b = b,
                                  eps = c.fn == "rms_norm" and 1e-6 or 1e-5, variant = vopt, out = out},
                          warmup = slow and 1 or 3, reps = (on_gpu and not slow) and 10 or 3, bytes = 2 * es * n}
      row.ms, row.q1, row.q3, row.gbps = r.ms, r.q1, r.q3, r.gbps
      bench.kernel_fields(row, ck.last_ran())
      if bw then row.pct_of_memcpy = 100 * r.gbps / bw end
      if peers[row.case] then row.ratio_to_torch = peers[row.case].ms / r.ms end
    end
    if row then case_rows[#case_rows + 1] = row end
    out:free()
  end
  x:free()
  for _, r in ipairs(bench.ladder_ratios(case_rows)) do rows[#rows + 1] = r end
  tables[#tables + 1] = {title = label(c) .. (peers[label(c)] and ("  (torch %.0f GB/s)"):format(peers[label(c)].gbps) or ""),
                         rows = case_rows}
end
for _, r in ipairs(peer_rows) do rows[#rows + 1] = r end

local meta = bench.meta{device = device}
local doc = {meta = meta, ladder = "rows", memcpy_gbps = memcpy_gbps.f32, memcpy_gbps_bf16 = memcpy_gbps.bf16,
             headline = on_gpu and "softmax f32 32768x8192" or nil, rows = rows}
local path = bench.results_path("rows", meta)
bench.write_json(path, doc)

print(("\nrow-op ladder on %s%s"):format(on_gpu and meta.device or "the HOST CPU backend",
  on_gpu and ("; memcpy %.0f GB/s (f32, read+write)"):format(memcpy_gbps.f32) or " (small sizes, not GPU performance)"))
local cols = bench.with_kernel_cols({
  {key = "id", title = "#"}, {key = "variant"}, {key = "ms", fmt = "%.4f"}, {key = "gbps", title = "GB/s", fmt = "%.0f"},
  {key = "step_speedup", title = "step", fmt = "%.2fx"}, {key = "cum_speedup", title = "cumulative", fmt = "%.2fx"},
  {key = "pct_of_memcpy", title = "% memcpy", fmt = "%.1f"}, {key = "ratio_to_torch", title = "x torch", fmt = "%.2f"},
  {key = "error", title = "check"},
}, "error")
bench.finish(path, bench.print_tables(tables, cols))
