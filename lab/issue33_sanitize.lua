-- Issue 33: every rung of the scan, sort, histogram and searchsorted ladders once on small cases (one tile, several tiles, rows, leading
-- dims, odd sizes), each result checked against the host oracle — the run compute-sanitizer (memcheck,
-- racecheck, synccheck, initcheck) watches in lab/issue33-gpu.sh. Ends with "issue33_sanitize: N runs, M bad".
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
assert(ck.has_cuda(), "needs a CUDA device")
ck.seed(33)
local runs, bad = 0, 0
local function same(a, b)
  local x, y = a:host():to("f64"):flat(), b:to("f64"):flat()
  if #x ~= #y then return false end
  for i = 1, #y do if x[i] ~= y[i] and not (x[i] ~= x[i] and y[i] ~= y[i]) then return false end end
  return true
end
local function report(ok, what)
  runs = runs + 1
  if not ok then bad = bad + 1; print("BAD " .. what) end
end
-- SAN_QUICK=1 (racecheck, the slow tool): fewer shapes and dtypes, every rung still
local QUICK = os.getenv("SAN_QUICK") == "1"
local shapes = QUICK and {{{1023}, 1}, {{9000}, 1}, {{300, 40}, 1}, {{3, 5000}, 2}}
  or {{{1}, 1}, {{1023}, 1}, {{9000}, 1}, {{40, 300}, 2}, {{300, 40}, 1}, {{3, 5000}, 2}}
local SCAN_DT = QUICK and {"f32"} or {"f32", "i32", "f16"}
local SORT_DT = QUICK and {"f32", "u8"} or {"f32", "i32", "u8", "f64"}
for _, v in ipairs(ck.variants("scan")) do
  for _, c in ipairs(shapes) do
    for _, op in ipairs {"cumsum", "cummax"} do
      for _, dt in ipairs(SCAN_DT) do
        local hx = ((ck.rand(c[1], {device = "host"}) * 8):floor() - 4):to(dt)
        local ref = ck[op](hx, c[2], {exclusive = true})
        local ok, got = pcall(ck[op], hx:to("cuda"), c[2], {exclusive = true, variant = v.name})
        report(ok and same(got, ref), ("scan %s %s %s %s: %s"):format(v.name, op, dt, table.concat(c[1], "x"),
          ok and "differs" or tostring(got)))
      end
    end
  end
end
for _, v in ipairs(ck.variants("sort")) do
  for _, c in ipairs(shapes) do
    for _, dt in ipairs(SORT_DT) do
      local hx = ((ck.rand(c[1], {device = "host", dtype = "f64"}) * 200):floor()):to(dt)
      local rv, ri = ck.sort(hx, c[2])
      local ok, gv, gi = pcall(ck.sort, hx:to("cuda"), c[2], {variant = v.name})
      report(ok and same(gv, rv) and same(gi, ri), ("sort %s %s %s: %s"):format(v.name, dt, table.concat(c[1], "x"),
        ok and "differs" or tostring(gv)))
    end
  end
end
-- topk (radix_select and the rungs that sort): values and indices against the host's
for _, v in ipairs(ck.variants("sort")) do
  for _, c in ipairs(shapes) do
    local hx = ((ck.rand(c[1], {device = "host", dtype = "f64"}) * 200):floor()):to("f32")
    local k = math.min(7, c[1][c[2]])
    local rv, ri = ck.topk(hx, k, c[2])
    local ok, gv, gi = pcall(ck.topk, hx:to("cuda"), k, c[2], {variant = v.name})
    report(ok and same(gv, rv) and same(gi, ri), ("topk %s %s k=%d: %s"):format(v.name, table.concat(c[1], "x"), k,
      ok and "differs" or tostring(gv)))
  end
end
for _, v in ipairs(ck.variants("histogram")) do
  for _, n in ipairs {1, 1023, 70000} do
    local hx = ck.rand({n}, {device = "host"})
    local ok, got = pcall(ck.histc, hx:to("cuda"), 37, 0.1, 0.9, {variant = v.name})
    report(ok and same(got, ck.histc(hx, 37, 0.1, 0.9)), ("histc %s n=%d: %s"):format(v.name, n, ok and "differs" or tostring(got)))
  end
end
for _, v in ipairs(ck.variants("searchsorted")) do
  for _, n in ipairs {1, 1023, 70000} do
    local s, x = ck.sort(ck.rand({n}, {device = "host"})), ck.rand({999}, {device = "host"})
    local ok, got = pcall(ck.searchsorted, s:to("cuda"), x:to("cuda"), {variant = v.name})
    report(ok and same(got, ck.searchsorted(s, x)), ("searchsorted %s n=%d: %s"):format(v.name, n, ok and "differs" or tostring(got)))
  end
end
print(("issue33_sanitize: %d runs, %d bad"):format(runs, bad))
os.exit(bad == 0 and 0 or 1)
