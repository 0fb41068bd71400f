--- Quick all-variant acceptance run for compute-sanitizer (spec/gpu_sanitize.sh, `make gpu-sanitize`):
-- every rung of every ladder (ck.variants(op), bench-only rows left out) on small and tail-heavy shapes,
-- plain, transposed, broadcast (stride 0) and batched operands, each result checked against the host
-- backend. Prints one line per mismatch and a last line "gpu_sanitize: N cases, M mismatches, K errors";
-- exits non-zero on any mismatch or error. Without a GPU it says so and exits 0.
package.path = "./lua/?.lua;./lua/?/init.lua;./?.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"

-- CUKERN_GPU_SANITIZE_HOST=1 runs the same cases on host arrays (to check this script without a GPU)
local DEV = os.getenv("CUKERN_GPU_SANITIZE_HOST") == "1" and "host" or "cuda"
if DEV == "cuda" and not ck.has_cuda() then
  print("gpu_sanitize: no CUDA device (" .. tostring(ck.device().why_host) .. "); nothing to do")
  os.exit(0)
end

local seed = tonumber(os.getenv("CUKERN_SPEC_SEED")) or os.time()
ck.seed(seed)
math.randomseed(seed)
local cases, bad, errs = 0, 0, 0

local function rnd(shape, dt) return (ck.rand(shape, {dtype = dt, device = DEV}) * 2 - 1) end
local function poison(shape, dt) return ck.full(shape, 0 / 0, {dtype = dt, device = DEV}) end

local function close(got, ref, rtol, atol)
  local g, r = got:to("host"):to("f64"):flat(), ref:to("host"):to("f64"):flat()
  if #g ~= #r then return false, ("%d values, expected %d"):format(#g, #r) end
  for i = 1, #r do
    local a, b = g[i], r[i]
    if not ((b ~= b and a ~= a) or math.abs(a - b) <= atol + rtol * math.abs(b)) then
      return false, ("element %d: %.9g vs %.9g"):format(i, a, b)
    end
  end
  return true
end

local function check(label, fn, ref_fn, rtol, atol)
  cases = cases + 1
  local ok, got = pcall(fn)
  if not ok then
    -- a variant that declines a case says so and falls back; any raised error is reported
    errs = errs + 1
    print(("ERROR %s: %s"):format(label, tostring(got)))
    return
  end
  ck.sync()
  local ok2, why = close(got, ref_fn(), rtol, atol)
  if not ok2 then bad = bad + 1; print(("MISMATCH %s (ran %s): %s"):format(label, ck.last_ran().name, why)) end
end

-- CUKERN_GPU_SANITIZE_VARIANTS="wgmma_tma persistent" limits the run to those variants (of any ladder)
local ONLY
if os.getenv("CUKERN_GPU_SANITIZE_VARIANTS") then
  ONLY = {}
  for w in os.getenv("CUKERN_GPU_SANITIZE_VARIANTS"):gmatch("[%w_]+") do ONLY[w] = true end
end
local function names(op)
  local t = {}
  for _, v in ipairs(ck.variants(op)) do
    if not v.bench_only and (not ONLY or ONLY[v.name]) then t[#t + 1] = v.name end
  end
  return t
end

-- tensor-core rungs (f16/bf16 in and out): small and tail-heavy shapes, B plain and transposed. Rows of a
-- multiple of 8 elements reach the Hopper rungs' TMA path (12-14), the others their fallback; every other
-- rung declines f16/bf16 and falls back too. Tolerance: a few units of the output's roundoff on |c| and on
-- the size of the sum (sqrt(k) terms of size ~1/3).
local TC = {{8, 8, 8}, {17, 40, 24}, {130, 264, 328}, {65, 63, 17}, {1, 257, 3}}
for _, v in ipairs(names("matmul")) do
  for _, s in ipairs(TC) do
    local m, n, k = s[1], s[2], s[3]
    for _, dt in ipairs {"f16", "bf16"} do
      local a, b, bt = rnd({m, k}, "f32"):to(dt), rnd({k, n}, "f32"):to(dt), rnd({n, k}, "f32"):to(dt):t()
      local ah, bh, bth = a:to("host"), b:to("host"), bt:to("host")
      local u = dt == "f16" and 2 ^ -11 or 2 ^ -8
      for _, pair in ipairs {{b, bh, "B"}, {bt, bth, "B^T"}} do
        check(("matmul %s %s %dx%dx%d %s"):format(v, dt, m, n, k, pair[3]), function()
          return ck.matmul(a, pair[1], {variant = v, out = poison({m, n}, dt)})
        end, function() return ck.matmul(ah, pair[2]) end, 4 * u, 4 * u * math.sqrt(k))
      end
    end
  end
end

-- matmul: tail-heavy m, n, k; B plain, transposed, broadcast rows (stride 0), and batched
local MM = {{1, 1, 1}, {3, 5, 7}, {17, 33, 65}, {64, 64, 16}, {65, 63, 17}, {127, 129, 33}, {128, 128, 128},
            {1, 257, 3}, {200, 3, 130}, {33, 4, 1}, {5, 3, 2}}
for _, v in ipairs(names("matmul")) do
  for _, s in ipairs(MM) do
    local m, n, k = s[1], s[2], s[3]
    for _, dt in ipairs {"f32", "f64"} do
      local a, b = rnd({m, k}, dt), rnd({k, n}, dt)
      local bt = rnd({n, k}, dt):t()
      local bx = rnd({1, n}, dt):expand(k, n)
      local ah, bh, bth, bxh = a:to("host"), b:to("host"), bt:to("host"), bx:to("host")
      local tol = dt == "f32" and 1e-4 or 1e-10
      for _, pair in ipairs {{b, bh, "B"}, {bt, bth, "B^T"}, {bx, bxh, "B expanded"}} do
        check(("matmul %s %s %dx%dx%d %s"):format(v, dt, m, n, k, pair[3]), function()
          local out = poison({m, n}, dt)
          return ck.matmul(a, pair[1], {variant = v, out = out})
        end, function() return ck.matmul(ah, pair[2]) end, tol, tol * k)
      end
    end
    local a3, b3 = rnd({2, m, k}, "f32"), rnd({k, n}, "f32")
    check(("matmul %s f32 batch 2 x 2-D %dx%dx%d"):format(v, m, n, k), function()
      return ck.matmul(a3, b3, {variant = v})
    end, function() return ck.matmul(a3:to("host"), b3:to("host")) end, 1e-4, 1e-4 * k)
  end
end

-- reduce: every op along every dim and all, shapes around the warp/block/row-kernel thresholds
local RS = {{1}, {7}, {1000}, {1025}, {4097}, {3, 5}, {33, 1000}, {1000, 33}, {2049, 3}, {3, 2049}, {2, 3, 5}}
for _, v in ipairs(names("reduce")) do
  for _, s in ipairs(RS) do
    for _, op in ipairs {"sum", "max", "argmax", "mean", "min", "prod"} do
      local x = rnd(s, "f32")
      local xh = x:to("host")
      local dims = {false}
      for d = 1, #s do dims[#dims + 1] = d end
      for _, d in ipairs(dims) do
        local tol = op == "prod" and 1e-3 or 1e-4
        check(("%s %s [%s] dim %s"):format(op, v, table.concat(s, "x"), tostring(d)), function()
          if d then return (ck[op](x, d, {variant = v})) end
          return (ck[op](x, {variant = v}))
        end, function()
          if d then return (ck[op](xh, d)) end
          return (ck[op](xh))
        end, tol, tol * (op == "sum" and 30 or 1))
      end
    end
  end
end

-- transpose
local TS = {{1, 1}, {3, 5}, {31, 33}, {64, 64}, {65, 127}, {2, 33, 65}, {1, 1000}, {1000, 1}}
for _, v in ipairs(names("transpose")) do
  for _, s in ipairs(TS) do
    for _, dt in ipairs {"f32", "f64", "i32"} do
      local x = dt == "i32" and rnd(s, "f32"):mul(100):to("i32") or rnd(s, dt)
      check(("transpose %s %s [%s]"):format(v, dt, table.concat(s, "x")), function()
        return ck.transpose(x, {variant = v})
      end, function() return ck.transpose(x:to("host")) end, 0, 0)
    end
  end
end

-- elementwise: broadcasting, transposed and in-place operands
local ES = {{{7}, {7}}, {{33, 65}, {65}}, {{1000, 37}, {37}}, {{5, 1, 3}, {4, 1}}, {{4097}, {}}}
for _, v in ipairs(names("elementwise")) do
  for _, p in ipairs(ES) do
    local a, b = rnd(p[1], "f32"), rnd(p[2], "f32")
    local ah, bh = a:to("host"), b:to("host")
    check(("add %s [%s]+[%s]"):format(v, table.concat(p[1], "x"), table.concat(p[2], "x")), function()
      return ck.add(a, b, {variant = v})
    end, function() return ck.add(ah, bh) end, 1e-6, 1e-6)
    check(("exp %s [%s]"):format(v, table.concat(p[1], "x")), function()
      return ck.exp(a, {variant = v})
    end, function() return ck.exp(ah) end, 1e-6, 1e-6)
    if #p[1] >= 2 then
      check(("maximum %s transposed [%s]"):format(v, table.concat(p[1], "x")), function()
        return ck.maximum(a:transpose(1, 2), a:transpose(1, 2), {variant = v})
      end, function() return ck.maximum(ah:transpose(1, 2), ah:transpose(1, 2)) end, 0, 0)
    end
  end
end

print(("gpu_sanitize: %d cases, %d mismatches, %d errors (seed %d)"):format(cases, bad, errs, seed))
os.exit((bad == 0 and errs == 0) and 0 or 1, true) -- close the state: every array is freed, so memcheck's leak check means something
