-- Issue 37: every rung of the row-op and attention ladders once on small cases (short, long and odd rows, a
-- leading dim; odd sequence lengths, causal, head dims 64 and 128), each result checked against the host oracle
-- within the specs' bounds — the run compute-sanitizer (memcheck, racecheck, synccheck) watches in
-- lab/issue37-gpu.sh. Ends with "issue37_sanitize: N runs, M bad".
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
assert(ck.has_cuda(), "needs a CUDA device")
ck.seed(37)
local runs, bad = 0, 0
local function report(ok, what)
  runs = runs + 1
  if not ok then bad = bad + 1; print("BAD " .. what) end
end
local U = {f32 = 2 ^ -24, f64 = 2 ^ -53, f16 = 2 ^ -11, bf16 = 2 ^ -8}
for _, v in ipairs(ck.variants("rows")) do
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
for _, v in ipairs(ck.variants("attention")) do
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
print(("issue37_sanitize: %d runs, %d bad"):format(runs, bad))
os.exit(bad == 0 and 0 or 1)
