-- The attention ladder (issue 37): S materialised (cuBLAS, the softmax ladder, cuBLAS), then fused on mma.sync
-- in FlashAttention-1's and FlashAttention-2's work splits, against PyTorch's SDPA (flash and cuDNN backends).
--
--   lua5.4 examples/attention_ladder.lua [--host-small]  (CUKERN_PEERS=peers.json: bench/torch_rows_attention.py's rows)
--
-- Cases: bf16, 16 heads of dim 128 and 32 heads of dim 64, seq 4096 and 16384 with the batch chosen for 16k
-- tokens, causal and not. Validation before timing: the naive rung's first 8 queries of head 1 against the
-- host oracle (f64), the fused rungs' whole output against the naive rung's, within the bound
-- spec/attention_spec.lua derives (2 u of bf16, relative and absolute: P rounded to bf16, the output rounded).
-- Timed in C with CUDA events (bench.run: 2 warm-ups, 5 reps, L2 flushed); TFLOP/s counts 4*b*h*s^2*d, halved
-- when causal. Own rows carry ratio_to_torch (the fastest SDPA backend's time / ours) where the peers file has the
-- case; peer rows carry peer = true. Rows go to <results>/attention-<device>.json.
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")

local ck = require "cukern"
local bench = require "cukern.bench"

local device = bench.target(arg)
local on_gpu = device == "cuda"

local cases = {}
for _, hd in ipairs {{16, 128}, {32, 64}} do
  for _, seq in ipairs(on_gpu and {4096, 16384} or {128}) do
    for _, causal in ipairs {false, true} do
      local tokens = on_gpu and 16384 or 256
      cases[#cases + 1] = {heads = hd[1], d = hd[2], seq = seq, batch = math.max(1, tokens // seq), causal = causal}
    end
  end
end
local function label(c)
  return ("attention bf16 b%d h%d s%d d%d%s"):format(c.batch, c.heads, c.seq, c.d, c.causal and " causal" or "")
end

local variants = on_gpu and ck.variants("attention") or {{id = -1, name = "host"}}

-- the peers of this run (bench/torch_rows_attention.py): the fastest backend per case, and every row
local best, peer_rows = {}, {}
if os.getenv("CUKERN_PEERS") then
  local ok, doc = pcall(bench.read_json, os.getenv("CUKERN_PEERS"))
  for _, r in ipairs(ok and doc.rows or {}) do
    if r.op == "attention" then
      if not best[r.case] or r.ms < best[r.case].ms then best[r.case] = r end
      peer_rows[#peer_rows + 1] = {peer = true, variant = r.peer, case = r.case, ms = r.ms, tflops = r.tflops}
    end
  end
end

local U = 2 ^ -8 -- bf16's unit roundoff, doubled: spec/attention_spec.lua's bound
local rows, tables = {}, {}
local total, step = #cases * #variants, 0
for ci, c in ipairs(cases) do
  ck.seed(4242 + ci)
  local shape = {c.batch, c.heads, c.seq, c.d}
  local q, k, v = (ck.randn(shape, {device = device, dtype = "bf16"})), ck.randn(shape, {device = device, dtype = "bf16"}),
                  ck.randn(shape, {device = device, dtype = "bf16"})
  local flops = 4 * c.batch * c.heads * c.seq * c.seq * c.d / (c.causal and 2 or 1)
  local ref -- the naive rung's output (GPU), checked against the host on a slice
  local case_rows = {}
  for _, vr in ipairs(variants) do
    step = step + 1
    bench.progress(step, total, label(c) .. " " .. vr.name)
    local row = {id = vr.id, variant = vr.name, op = "attention", dtype = "bf16", case = label(c), batch = c.batch,
                 heads = c.heads, seq = c.seq, head_dim = c.d, causal = c.causal}
    local out = ck.empty(shape, {device = device, dtype = "bf16"}):fill(0 / 0)
    local vopt = on_gpu and vr.name or nil
    local okrun, err = pcall(ck.attention, q, k, v, {causal = c.causal, variant = vopt, out = out})
    local good, why = okrun, tostring(err)
    if okrun and on_gpu and ck.last_ran().name ~= vr.name then
      out:free()
      goto continue -- its supports() declined this case
    end
    if okrun and (vr.name == "naive" or not on_gpu) then
      local sl = function(a) return a:narrow(1, 1, 1):narrow(2, 1, 1):host() end
      local h = ck.attention(sl(q):narrow(3, 1, 8):contiguous(), sl(k), sl(v), {causal = c.causal})
      good = ck.allclose(sl(out):narrow(3, 1, 8):to("f64"), h:to("f64"), 2 * U, 2 * U)
      why = "differs from the host oracle"
      ref = out
    elseif okrun then
      good = ref ~= nil and ck.allclose(out:to("f32"), ref:to("f32"), 2 * U, 2 * U)
      why = "differs from the naive rung"
    end
    if not good then
      row.ok, row.correct, row.error = false, false, why
    else
      row.ok, row.correct = true, true
      local r = bench.run{spec = {op = "attention", q = q, k = k, v = v, causal = c.causal, variant = vopt, out = out},
                          warmup = 2, reps = on_gpu and 5 or 2, flops = flops}
      row.ms, row.q1, row.q3, row.tflops = r.ms, r.q1, r.q3, r.tflops
      bench.kernel_fields(row, ck.last_ran())
      if best[row.case] then row.ratio_to_torch, row.torch_best = best[row.case].ms / r.ms, best[row.case].peer end
    end
    case_rows[#case_rows + 1] = row
    if out ~= ref then out:free() end
    ::continue::
  end
  if ref then ref:free() end
  q:free(); k:free(); v:free()
  for _, r in ipairs(bench.ladder_ratios(case_rows)) do rows[#rows + 1] = r end
  tables[#tables + 1] = {title = label(c) .. (best[label(c)] and ("  (%s %.0f TFLOP/s)"):format(best[label(c)].peer,
    best[label(c)].tflops) or ""), rows = case_rows}
end
for _, r in ipairs(peer_rows) do rows[#rows + 1] = r end

local meta = bench.meta{device = device}
local doc = {meta = meta, ladder = "attention", headline = on_gpu and "attention bf16 b4 h16 s4096 d128" or nil, rows = rows}
local path = bench.results_path("attention", meta)
bench.write_json(path, doc)

print(("\nattention ladder on %s"):format(on_gpu and meta.device or "the HOST CPU backend (small sizes, not GPU performance)"))
local cols = bench.with_kernel_cols({
  {key = "id", title = "#"}, {key = "variant"}, {key = "ms", fmt = "%.3f"}, {key = "tflops", title = "TFLOP/s", fmt = "%.1f"},
  {key = "step_speedup", title = "step", fmt = "%.2fx"}, {key = "cum_speedup", title = "cumulative", fmt = "%.2fx"},
  {key = "ratio_to_torch", title = "x torch", fmt = "%.2f"}, {key = "error", title = "check"},
}, "error")
bench.finish(path, bench.print_tables(tables, cols))
