-- The FFT ladder (issue 35): the naive DFT, radix-2 per stage, Stockham in shared memory and radix-8 Stockham with
-- twiddles in registers, against cuFFT (the reference) and the copy bandwidth.
--
--   lua5.4 examples/fft_ladder.lua [--host-small]      (on a machine without a GPU: host-sized cases)
--
-- Cases: batched 1-D c64 transforms along the last dim, n = 256, 512, 1024, 2048, 4096, 2^28 elements in all
-- (2^28 / n lines). Each rung's output is checked against cuFFT's before it is timed (real and imaginary parts
-- within 8 eps (log2 n + 1) sqrt(n) max|x|, the naive DFT within n instead of log2 n + 1), then timed in C with CUDA
-- events (bench.run: warm-ups, the median of the reps, L2 flushed). GB/s counts the one read and one write of every
-- element that a batched transform needs (16 bytes per c64 element). Per case: step and cumulative speedup, % of
-- the memcpy bandwidth measured in this run, % of cuFFT (pct_of_ref), registers, shared memory, occupancy. Rows go
-- to <results>/fft-<device>.json (bench.results_path). The naive DFT (O(n^2)) runs 3 reps.
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")

local ck = require "cukern"
local bench = require "cukern.bench"

local device = bench.target(arg)
local on_gpu = device == "cuda"
local TOTAL = on_gpu and 2 ^ 28 or 2 ^ 16

local cases = {}
for _, n in ipairs {256, 512, 1024, 2048, 4096} do cases[#cases + 1] = {n = n, shape = {math.tointeger(TOTAL // n), n}} end

local variants = {}
if on_gpu then
  for _, v in ipairs(ck.variants("fft")) do variants[#variants + 1] = v end
  table.sort(variants, function(a, b) return (a.id == 0 and 1e9 or a.id) < (b.id == 0 and 1e9 or b.id) end)
else
  variants = {{id = -1, name = "host"}}
end

local memcpy_gbps
if on_gpu then
  local n = 2 ^ 28
  local src, dst = ck.empty(n, {device = "cuda"}):fill(1), ck.empty(n, {device = "cuda"})
  memcpy_gbps = bench.run{spec = {op = "memcpy", dst = dst, src = src}, warmup = 5, reps = 20, bytes = 2 * 4 * n}.gbps
  src:free(); dst:free()
  io.stderr:write(("memcpy D2D 1 GiB: %.0f GB/s (read+write)\n"):format(memcpy_gbps))
end

local function label(c) return ("fft c64 n=%d x %d"):format(c.n, c.shape[1]) end

-- The largest difference of real or imaginary parts between a and b (one reduction each, on the device).
local function maxdiff(a, b)
  return math.max((a:real() - b:real()):abs():max():item(), (a:imag() - b:imag()):abs():max():item())
end

local rows, tables = {}, {}
local total, step = #cases * #variants, 0
for ci, c in ipairs(cases) do
  ck.seed(5150 + ci)
  local x = ck.complex(ck.rand(c.shape, {device = device}) * 2 - 1, ck.rand(c.shape, {device = device}) * 2 - 1)
  local ref = ck.fft(x, nil, 2, on_gpu and {variant = "cufft"} or nil)
  local numel = c.shape[1] * c.n
  local case_rows = {}
  for _, v in ipairs(variants) do
    step = step + 1
    bench.progress(step, total, label(c) .. " " .. v.name)
    local row = {id = v.id, variant = v.name, op = "fft", dtype = "c64", shape = c.shape, dim = 2, n = c.n,
                 case = label(c), numel = numel}
    local out = ck.empty(c.shape, {dtype = "c64", device = device}):fill(0 / 0)
    local vopt = on_gpu and v.name or nil
    local okrun, err = pcall(ck.fft, x, nil, 2, {variant = vopt, out = out})
    local growth = v.name == "naive" and c.n or math.log(c.n, 2) + 1
    if not okrun then
      row.ok, row.correct, row.error = false, false, tostring(err)
    elseif on_gpu and ck.last_ran().name ~= v.name then
      row = nil -- its supports() declined this length
    else
      local d, tol = maxdiff(out, ref), 8 * 2 ^ -24 * growth * math.sqrt(c.n)
      if not (d <= tol) then
        row.ok, row.correct, row.error = false, false, ("differs from cuFFT by %.3g (tol %.3g)"):format(d, tol)
      else
        row.ok, row.correct, row.maxdiff = true, true, d
        local slow = v.name == "naive"
        local r = bench.run{spec = {op = "fft", kind = "fft", x = x, n = c.n, dim = 2, out = out, variant = vopt},
                            warmup = slow and 1 or 5, reps = slow and 3 or (on_gpu and 20 or 3), bytes = 2 * 8 * numel}
        row.ms, row.q1, row.q3, row.gbps = r.ms, r.q1, r.q3, r.gbps
        bench.kernel_fields(row, ck.last_ran())
        if memcpy_gbps then row.pct_of_memcpy = 100 * r.gbps / memcpy_gbps end
      end
    end
    if row then case_rows[#case_rows + 1] = row end
    out:free()
  end
  x:free(); ref:free()
  for _, r in ipairs(bench.ladder_ratios(case_rows)) do rows[#rows + 1] = r end
  tables[#tables + 1] = {title = label(c), rows = case_rows}
end

local meta = bench.meta{device = device}
local doc = {meta = meta, ladder = "fft", reference = on_gpu and "cufft" or nil, memcpy_gbps = memcpy_gbps,
             headline = on_gpu and label(cases[3]) or nil, rows = rows}
local path = bench.results_path("fft", meta)
bench.write_json(path, doc)

print(("\nFFT ladder on %s%s"):format(on_gpu and meta.device or "the HOST CPU backend",
  on_gpu and ("; memcpy %.0f GB/s (read+write, 1 GiB)"):format(memcpy_gbps) or " (small sizes, not GPU performance)"))
local cols = bench.with_kernel_cols({
  {key = "id", title = "#"}, {key = "variant"}, {key = "ms", fmt = "%.4f"}, {key = "gbps", title = "GB/s", fmt = "%.0f"},
  {key = "step_speedup", title = "step", fmt = "%.2fx"}, {key = "cum_speedup", title = "cumulative", fmt = "%.2fx"},
  {key = "pct_of_memcpy", title = "% memcpy", fmt = "%.1f"}, {key = "pct_of_ref", title = "% cuFFT", fmt = "%.1f"},
  {key = "error", title = "check"},
}, "error")
bench.finish(path, bench.print_tables(tables, cols))
