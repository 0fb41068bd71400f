-- Issue 37: every rung of the row-op and attention ladders once on small cases (short, long and odd rows, a
-- leading dim; odd sequence lengths, causal, head dims 64 and 128), and the FP8 matmul rows (pairings, tails), each result checked against the host oracle
-- within the specs' bounds — the run compute-sanitizer (memcheck, racecheck, synccheck) watches in
-- lab/issue37-gpu.sh. Ends with "issue37_sanitize: N runs, M bad".
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
assert(ck.has_cuda(), "needs a CUDA device")
ck.seed(37)
local runs, bad = 0, 0
local only = os.getenv("SAN_ONLY") -- "fp8": the FP8 matmul rows alone
local function report(ok, what)
  runs = runs + 1
  if not ok then bad = bad + 1; print("BAD " .. what) end
end
local U = {f32 = 2 ^ -24, f64 = 2 ^ -53, f16 = 2 ^ -11, bf16 = 2 ^ -8}
for _, v in ipairs(only == "fp8" and {} or ck.variants("rows")) do
  for _, c in ipairs {{{1, 1}, 2}, {{5, 7}, 2}, {{3, 1024}, 2}, {{2, 1000}, 2}, {{2, 9000}, 2}, {{40, 9}, 1}} do
    for _, fn in ipairs {"softmax", "layer_norm"} do
      for _, dt in ipairs {"f32", "bf16", "f64"} do
        local hx = (ck.rand(c[1], {device = "host", dtype = dt}) * 2 - 1)
        local len = c[1][c[2]]
        local w = fn == "layer_norm" and ck.rand({len}, {device = "host", dtype = dt}) or nil
        local o = {dim = c[2]}
        local ref = fn == "softmax" and ck.softmax(hx, c[2]) or ck.layer_norm(hx, w, nil, 1e-5, o)
        local ok, got = pcall(function()
          local g = {dim = c[2], variant = v.name}
          if fn == "softmax" then return ck.softmax(hx:to("cuda"), c[2], {variant = v.name}) end
          return ck.layer_norm(hx:to("cuda"), w:to("cuda"), nil, 1e-5, g)
        end)
        local t = 2 * ((8 + len) * (dt == "f64" and U.f64 or U.f32) + U[dt])
        report(ok and ck.allclose(got:host():to("f64"), ref:to("f64"), t, t),
          ("rows %s %s %s %s: %s"):format(v.name, fn, dt, table.concat(c[1], "x"), ok and "differs" or tostring(got)))
      end
    end
  end
end
for _, v in ipairs(only == "fp8" and {} or ck.variants("attention")) do
  for _, c in ipairs {{1, 2, 7, 7, 64}, {1, 1, 129, 70, 128}, {2, 1, 65, 129, 64}} do
    for _, causal in ipairs {false, true} do
      local B, Hh, Sq, Skv, D = table.unpack(c)
      local q, k = ck.randn({B, Hh, Sq, D}, {device = "host", dtype = "bf16"}), ck.randn({B, Hh, Skv, D}, {device = "host", dtype = "bf16"})
      local vv = ck.randn({B, Hh, Skv, D}, {device = "host", dtype = "bf16"})
      local ref = ck.attention(q, k, vv, {causal = causal})
      local ok, got = pcall(ck.attention, q:to("cuda"), k:to("cuda"), vv:to("cuda"), {causal = causal, variant = v.name})
      report(ok and ck.last_ran().name == v.name and ck.allclose(got:host():to("f64"), ref:to("f64"), 2 * U.bf16, 2 * U.bf16),
        ("attention %s %s causal=%s: %s"):format(v.name, table.concat(c, "x"), tostring(causal), ok and ("differs or ran " .. ck.last_ran().name) or tostring(got)))
    end
  end
end
-- the FP8 rows of the matmul ladder (cuBLASLt's, ours), asked for by name: tails in m, n, k, a C that no TMA map
-- takes (n = 20), a batch; checked against the host's f64 product within fp8_spec's bound for fast accumulation
for _, v in ipairs(ck.variants("matmul")) do
  local fp8 = false
  for _, d in ipairs(v.dtypes) do fp8 = fp8 or d == "e4m3" end
  if fp8 then
    for _, c in ipairs {{1, 65, 20, 48}, {1, 129, 264, 160}, {2, 64, 32, 32}} do
      for _, pr in ipairs {{"e4m3", "e4m3"}, {"e4m3", "e5m2"}, {"e5m2", "e5m2"}} do
        local B, m, n, k = table.unpack(c)
        local a = (ck.rand({B, m, k}, {device = "host"}) * 4 - 2):to(pr[1])
        local bt = (ck.rand({B, n, k}, {device = "host"}) * 4 - 2):to(pr[2])
        local a64, b64 = a:to("f64"), bt:to("f64"):transpose(2, 3)
        local ref, mag = ck.matmul(a64, b64), ck.matmul(ck.abs(a64), ck.abs(b64))
        local ok, got = pcall(ck.matmul, a:to("cuda"), bt:to("cuda"):transpose(2, 3), {variant = v.name, out = ck.empty({B, m, n}, {device = "cuda", dtype = "f32"})})
        local ran = ok and ck.last_ran().name or "?"
        if ok and ran ~= v.name then
          runs = runs + 1 -- a decline (cuBLASLt has no e5m2 x e5m2): said, not checked
        else
          local tol = mag * (math.ceil(k / 32) * 2 ^ -12 + k * 2 ^ -12 + 2 ^ -23)
          report(ok and ck.le(ck.abs(got:host():to("f64") - ref), tol):all():item(),
            ("matmul %s %s x %s %s: %s"):format(v.name, pr[1], pr[2], table.concat(c, "x"), ok and "differs" or tostring(got)))
        end
      end
    end
  end
end
print(("issue37_sanitize: %d runs, %d bad"):format(runs, bad))
os.exit(bad == 0 and 0 or 1)
