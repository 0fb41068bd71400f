--- Elementwise ladder benchmark: c = a + b and the chain y:add_(x * 2) on N f32 elements, contiguous and
-- transposed (a:t() views of a square matrix), for each variant, against device-to-device memcpy measured
-- in the same run. GB/s counts every byte read and written. Every case is validated before it is timed.
--
--   lua5.4 examples/elementwise_bench.lua [N] [--host-small]   (env CUKERN_EW_N; default 2^28 on a GPU, 2^20
--                                                              on the host backend)
--
-- Writes <results>/elementwise-<device slug>.json (bench/results on the GPU, bench/results/host/ on the
-- host, $CUKERN_RESULTS if set) with rows {id, variant, op, dtype, shape, ms, gbps, pct_of_ref, correct}
-- and prints the table last.
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")
local ck = require "cukern"
local bench = require "cukern.bench"

local device = bench.target(arg)
local gpu = device == "cuda"
local size_arg
for _, a in ipairs(arg or {}) do if tonumber(a) then size_arg = a end end
local N = math.tointeger(tonumber(size_arg or os.getenv("CUKERN_EW_N") or (gpu and 2 ^ 28 or 2 ^ 20)))
local side = math.tointeger(math.floor(math.sqrt(N)))
local REPS, WARMUP = gpu and 20 or 5, gpu and 5 or 1
local F32 = 4

local variants = {}
if gpu then
  for _, v in ipairs(ck.variants("elementwise")) do
    if not v.bench_only then variants[#variants + 1] = v end
  end
else
  variants = {{id = -1, name = "host"}}
end
local function vopt(v) return gpu and v.name or nil end

-- ---------------------------------------------------------------- validation

--- Compare a few slices of `got` (a 1-D or 2-D result on any device) with the same slices computed on
-- the host from the inputs: a whole-array host reference of 2^28 elements would take minutes in Lua.
local function slices(n, len)
  len = math.min(n, len)
  return {1, math.max(1, n // 2 - len // 2), math.max(1, n - len + 1)}, len
end

local function close(g, r)
  local gf, rf = g:to("f64"):flat(), r:to("f64"):flat()
  for i = 1, #rf do
    local d = math.abs(gf[i] - rf[i])
    if not (d <= 1e-6 + 1e-5 * math.abs(rf[i])) then
      return false, ("element %d: got %.9g, expected %.9g"):format(i, gf[i], rf[i])
    end
  end
  return true
end

--- got and each input are 1-D (n) or 2-D (rows sliced); `ref` computes the host reference on slices.
local function validate(got, inputs, ref)
  local n = got:shape()[1]
  local starts, len = slices(n, got:ndim() == 2 and 4 or 2048)
  for _, s in ipairs(starts) do
    local last = math.min(n, s + len - 1)
    local hin = {}
    for i, x in ipairs(inputs) do hin[i] = x:narrow(1, s, last):to("host") end
    local ok, msg = close(got:narrow(1, s, last):to("host"), ref(table.unpack(hin)))
    if not ok then return false, msg end
  end
  return true
end

-- ---------------------------------------------------------------- cases

local rows = {}
local function add_row(r) rows[#rows + 1] = r end

local a = ck.rand(N, {device = device})
local b = ck.rand(N, {device = device})
local c = ck.empty(N, {device = device})

-- the bound: raw device-to-device copy of one array (N read + N written)
local ref_gbps
do
  local ok, r = pcall(bench.run, {spec = {op = "memcpy", dst = c, src = a}, warmup = WARMUP, reps = REPS,
    bytes = 2 * N * F32})
  if ok then
    ref_gbps = r.gbps
    add_row {id = -2, variant = "memcpy", op = "memcpy", layout = "contiguous", dtype = "f32", shape = {N}, ms = r.ms,
      gbps = r.gbps, pct_of_ref = 100, correct = true}
  else
    io.stderr:write("memcpy bound not available: " .. tostring(r) .. "\n")
  end
end
local function pct(g) return ref_gbps and g and 100 * g / ref_gbps or nil end

local sq_a = ck.rand(side, side, {device = device})
local sq_b = ck.rand(side, side, {device = device})
local sq_c = ck.empty(side, side, {device = device})

-- "transposed": c = a:t() + b:t() writes c in the operands' memory order (as the op allocates it), so the
-- pass streams; "mixed": the same sum into a row-major c, which is a transpose as well as an add.
local cases = {
  {op = "add", layout = "contiguous", a = a, b = b, out = c, shape = {N}, bytes = 3 * N * F32},
  {op = "add", layout = "transposed", a = sq_a:t(), b = sq_b:t(), out = sq_c:t(), shape = {side, side},
   bytes = 3 * side * side * F32},
  {op = "add", layout = "mixed", a = sq_a:t(), b = sq_b:t(), out = sq_c, shape = {side, side},
   bytes = 3 * side * side * F32},
  {op = "add", layout = "one transposed", a = sq_a, b = sq_b:t(), out = sq_c, shape = {side, side},
   bytes = 3 * side * side * F32},
}
local total = #cases * #variants + 3 * #variants
local step = 0

for _, cs in ipairs(cases) do
  for _, v in ipairs(variants) do
    step = step + 1
    bench.progress(step, total, cs.op .. " " .. cs.layout .. " " .. v.name)
    local spec = {op = cs.op, a = cs.a, b = cs.b, out = cs.out, variant = vopt(v)}
    cs.out:fill(0 / 0)
    ck.add(cs.a, cs.b, {out = cs.out, variant = vopt(v)})
    local ran = ck.last_ran()
    local ok, msg = validate(cs.out, {cs.a, cs.b}, function(x, y) return x + y end)
    if not ok then io.stderr:write(("INVALID %s %s %s: %s\n"):format(cs.op, cs.layout, v.name, msg)) end
    local r = bench.run {spec = spec, warmup = WARMUP, reps = REPS, bytes = cs.bytes}
    add_row(bench.kernel_fields({id = ran.id, variant = ran.name, asked = v.name, op = "c = a + b",
      layout = cs.layout, dtype = "f32", shape = cs.shape, ms = r.ms, gbps = r.gbps, pct_of_ref = pct(r.gbps),
      correct = ok, note = ran.note ~= "" and ran.note or nil}, ck.last_ran()))
  end
end

-- the chain y:add_(x * 2): two launches, N read + N written, then 2N read + N written
local chains = {
  {layout = "contiguous", x = a, y = c, shape = {N}, n = N},
  {layout = "transposed", x = sq_a:t(), y = sq_c:t(), shape = {side, side}, n = side * side},
}
for _, ch in ipairs(chains) do
  for _, v in ipairs(variants) do
    step = step + 1
    bench.progress(step, total, "chain " .. ch.layout .. " " .. v.name)
    local opt = {variant = vopt(v)}
    local function run() ch.y:add_(ck.mul(ch.x, 2, opt), opt) end
    ch.y:fill(1)
    local tmp = ck.mul(ch.x, 2, opt)
    local ran1 = ck.last_ran()
    ch.y:add_(tmp, opt)
    local ran2 = ck.last_ran()
    tmp:free()
    local ok, msg = validate(ch.y, {ch.x}, function(x) return x * 2 + 1 end)
    if not ok then io.stderr:write(("INVALID chain %s %s: %s\n"):format(ch.layout, v.name, msg)) end
    local r = bench.run {fn = run, warmup = WARMUP, reps = REPS, bytes = 5 * ch.n * F32, device = device}
    local note = (ran1.note ~= "" and ran1.note) or (ran2.note ~= "" and ran2.note) or nil
    add_row {id = ran2.id, variant = ran1.name == ran2.name and ran1.name or (ran1.name .. "+" .. ran2.name),
      asked = v.name, op = "y:add_(x*2)", layout = ch.layout, dtype = "f32", shape = ch.shape, ms = r.ms,
      gbps = r.gbps, pct_of_ref = pct(r.gbps), correct = ok, note = note}
  end
end

-- y:copy_(x:t() * 2) into a row-major y: the product follows x:t()'s memory order (a dense pass on the asked
-- rung), the copy is a transpose (a:copy_ takes ck_copy's path: the transpose ladder's default rung);
-- N read + N written twice
for _, v in ipairs(variants) do
  step = step + 1
  bench.progress(step, total, "copy_(x:t() * 2) " .. v.name)
  local opt = {variant = vopt(v)}
  local x, y = sq_a:t(), sq_c
  local function run() y:copy_(ck.mul(x, 2, opt), opt) end
  y:fill(0 / 0)
  local tmp = ck.mul(x, 2, opt)
  local ran1 = ck.last_ran()
  y:copy_(tmp, opt)
  tmp:free()
  local ok, msg = validate(y, {x}, function(u) return u * 2 end)
  if not ok then io.stderr:write(("INVALID copy_(x:t()*2) %s: %s\n"):format(v.name, msg)) end
  local r = bench.run {fn = run, warmup = WARMUP, reps = REPS, bytes = 4 * side * side * F32, device = device}
  local note = ran1.note ~= "" and ran1.note or nil
  add_row {id = ran1.id, variant = ran1.name .. " + copy_", asked = v.name, op = "y:copy_(x:t()*2)", layout = "mixed",
    dtype = "f32", shape = {side, side}, ms = r.ms,
    gbps = r.gbps, pct_of_ref = pct(r.gbps), correct = ok, note = note}
end

-- ---------------------------------------------------------------- report

local meta = bench.meta{device = device}
local out_rows = {}
for i, r in ipairs(rows) do
  out_rows[i] = {id = r.id, variant = r.variant, asked = r.asked, op = r.op, layout = r.layout, dtype = r.dtype,
    shape = r.shape, ms = r.ms, gbps = r.gbps, pct_of_ref = r.pct_of_ref, correct = r.correct, note = r.note,
    regs = r.regs, smem = r.smem, occ = r.occ, spill = r.spill, kernels = r.kernels}
end
local path = bench.write_json(bench.results_path("elementwise", meta),
  {meta = meta, ladder = "elementwise", reference = "memcpy", n = N, rows = out_rows})

print(("elementwise on %s (%s), N = %d f32%s"):format(meta.device, device, N,
  ref_gbps and (", memcpy %.0f GB/s"):format(ref_gbps) or ""))
for _, r in ipairs(rows) do
  if r.note and r.note ~= "" then print(("  note (%s %s): %s"):format(r.op, r.layout, r.note)) end
end
print("results: " .. path)
bench.table(rows, bench.with_kernel_cols({
  {key = "id", title = "id"},
  {key = "variant", title = "variant"},
  {key = "op", title = "op"},
  {key = "layout", title = "layout"},
  {key = "shape", title = "shape"},
  {key = "ms", title = "ms", fmt = "%.3f"},
  {key = "gbps", title = "GB/s", fmt = "%.0f"},
  {key = "pct_of_ref", title = "% memcpy", fmt = "%.1f"},
  {key = "correct", title = "ok", fmt = function(v) return v and "yes" or "NO" end},
}, "correct"))
