--- Elementwise ladder benchmark: c = a + b and the chain y:add_(x * 2) on N f32 elements, contiguous and
-- transposed (a:t() views of a square matrix), operands in mixed memory orders (2-D, 3-D batched and
-- permuted, a scalar operand, f16), for each variant, against device-to-device memcpy measured in the same
-- run. GB/s counts every byte read and written. Every case is validated before it is timed.
--
--   lua5.4 examples/elementwise_bench.lua [N] [--host-small]   (env CUKERN_EW_N; default 2^28 on a GPU, 2^20
--                                                              on the host backend)
--   env CUKERN_EW_VARIANTS=tiled,strided   time only these variants (default: every variant)
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
  local only = os.getenv("CUKERN_EW_VARIANTS")
  for _, v in ipairs(ck.variants("elementwise")) do
    if not v.bench_only and not v.batched and (not only or ("," .. only .. ","):find("," .. v.name .. ",", 1, true)) then
      variants[#variants + 1] = v
    end
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
  local rtol = (g:dtype() == "f16" or g:dtype() == "bf16") and 1e-2 or 1e-5
  for i = 1, #rf do
    local d = math.abs(gf[i] - rf[i])
    if not (d <= 1e-6 + rtol * math.abs(rf[i])) then
      return false, ("element %d: got %.9g, expected %.9g"):format(i, gf[i], rf[i])
    end
  end
  return true
end

--- got and each input are 1-D (n) or 2-D (rows sliced) or 3-D (a few rows of a few batch entries);
-- `ref` computes the host reference on slices.
local function validate(got, inputs, ref)
  if got:ndim() == 3 then
    local nb = got:shape()[1]
    for _, bi in ipairs {1, math.max(1, nb // 2), nb} do
      local sub = {}
      for i, x in ipairs(inputs) do sub[i] = type(x) == "number" and x or x[bi] end
      local ok, msg = validate(got[bi], sub, ref)
      if not ok then return false, ("batch %d: %s"):format(bi, msg) end
    end
    return true
  end
  local n = got:shape()[1]
  local starts, len = slices(n, got:ndim() == 2 and 4 or 2048)
  for _, s in ipairs(starts) do
    local last = math.min(n, s + len - 1)
    local hin = {}
    for i, x in ipairs(inputs) do hin[i] = type(x) == "number" and x or x:narrow(1, s, last):to("host") end
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
-- mixed memory orders beyond a + b:t(): a scalar operand (y = x:t() * 2 into a row-major y, the one-input
-- case of the tiled rung), 3-D operands (batched transpose; a permutation with the batch dim between the
-- two tiled dims), and f16. The 3-D arrays are views of the 1-D ones (B x S3 x S3 elements of them).
do
  cases[#cases + 1] = {op = "mul", layout = "x:t() * 2", a = sq_a:t(), b = 2, out = sq_c, shape = {side, side},
    bytes = 2 * side * side * F32}
  local B = 16
  local S3 = math.tointeger(math.floor(math.sqrt(N // B)))
  local n3 = B * S3 * S3
  local a3 = a:narrow(1, 1, n3):reshape(B, S3, S3)
  local b3 = b:narrow(1, 1, n3):reshape(B, S3, S3)
  local c3 = c:narrow(1, 1, n3):reshape(B, S3, S3)
  cases[#cases + 1] = {op = "add", layout = "3-D a + b:transpose(2,3)", a = a3, b = b3:transpose(2, 3), out = c3,
    shape = {B, S3, S3}, bytes = 3 * n3 * F32}
  -- b3 read as (S3, B, S3) = (M, B, N); permute(3, 2, 1) is (N, B, M) with unit stride along N
  local bm = b:narrow(1, 1, n3):reshape(S3, B, S3)
  local cm = c:narrow(1, 1, n3):reshape(S3, B, S3)
  local am = a:narrow(1, 1, n3):reshape(S3, B, S3)
  cases[#cases + 1] = {op = "add", layout = "3-D a + b:permute(3,2,1)", a = am, b = bm:permute(3, 2, 1), out = cm,
    shape = {S3, B, S3}, bytes = 3 * n3 * F32}
  local h_a, h_b, h_c = sq_a:to("f16"), sq_b:to("f16"), ck.empty(side, side, {dtype = "f16", device = device})
  cases[#cases + 1] = {op = "add", layout = "f16 one transposed", dtype = "f16", a = h_a, b = h_b:t(), out = h_c,
    shape = {side, side}, bytes = 3 * side * side * 2}
  -- beside it, the same add with both operands in the output's order (the contiguous rung: what the 2-byte
  -- arithmetic alone costs), and bf16
  cases[#cases + 1] = {op = "add", layout = "f16 contiguous", dtype = "f16", a = h_a, b = h_b, out = h_c,
    shape = {side, side}, bytes = 3 * side * side * 2}
  local g_a, g_b = sq_a:to("bf16"), sq_b:to("bf16")
  cases[#cases + 1] = {op = "add", layout = "bf16 one transposed", dtype = "bf16", a = g_a, b = g_b:t(),
    out = ck.empty(side, side, {dtype = "bf16", device = device}), shape = {side, side}, bytes = 3 * side * side * 2}
  -- the integer dtypes of issue 32 (they compute in 64 bits and store modulo their width): u8 and i64, dense,
  -- and a comparison (f32 in, bool out)
  local u_a, u_b = (a * 250):to("u8"), (b * 250):to("u8")
  cases[#cases + 1] = {op = "add", layout = "u8 contiguous", dtype = "u8", a = u_a, b = u_b,
    out = ck.empty(N, {dtype = "u8", device = device}), shape = {N}, bytes = 3 * N}
  local l_a, l_b = (a * 2 ^ 40):to("i64"), (b * 2 ^ 40):to("i64")
  cases[#cases + 1] = {op = "add", layout = "i64 contiguous", dtype = "i64", a = l_a, b = l_b,
    out = ck.empty(N, {dtype = "i64", device = device}), shape = {N}, bytes = 3 * N * 8}
  cases[#cases + 1] = {op = "gt", layout = "f32 -> bool contiguous", dtype = "f32>bool", a = a, b = b,
    out = ck.empty(N, {dtype = "bool", device = device}), shape = {N}, bytes = 2 * N * F32 + N}
end
local total = #cases * #variants + 3 * #variants
local step = 0

for _, cs in ipairs(cases) do
  for _, v in ipairs(variants) do
    step = step + 1
    bench.progress(step, total, cs.op .. " " .. cs.layout .. " " .. v.name)
    local spec = {op = cs.op, a = cs.a, b = cs.b, out = cs.out, variant = vopt(v)}
    cs.out:fill(cs.out:dtype():match("^[fb]") and cs.out:dtype() ~= "bool" and 0 / 0 or 1)
    ck[cs.op](cs.a, cs.b, {out = cs.out, variant = vopt(v)})
    local ran = ck.last_ran()
    local ok, msg = validate(cs.out, {cs.a, cs.b}, function(x, y) return ck[cs.op](x, y) end)
    if not ok then io.stderr:write(("INVALID %s %s %s: %s\n"):format(cs.op, cs.layout, v.name, msg)) end
    local r = bench.run {spec = spec, warmup = WARMUP, reps = REPS, bytes = cs.bytes}
    add_row(bench.kernel_fields({id = ran.id, variant = ran.name, asked = v.name,
      op = cs.op == "add" and "c = a + b" or ("c = " .. cs.op .. "(a, b)"),
      layout = cs.layout, dtype = cs.dtype or "f32", shape = cs.shape, ms = r.ms, gbps = r.gbps, pct_of_ref = pct(r.gbps),
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
