-- The linear-algebra layer's one-kernel paths on small batches (issue 34): ck.cholesky (potrf_small) at orders 1, 8,
-- 17, 32, 40 and 64 (the last two one block a matrix), lower and upper, f32 and f64, and ck.solve (gesv_small) at 5
-- and 16 (A also through a transposed view, read in place) and ck.inv, each checked against the host
-- backend (LAPACK) within a loose bound — the run compute-sanitizer (memcheck, initcheck) watches in
-- lab/round14-e.sh (there, in session 14, the inputs were made on the default device, the GPU, and the script stopped at its
-- first comparison with a host array: the sanitizer saw no error but the kernels were not checked; fixed since, not
-- rerun). Ends with "la_small_sanitize: N runs, M bad".
local ck = require "cukern"
assert(ck.has_cuda(), "needs a CUDA device")
ck.seed(34)
local runs, bad = 0, 0
local function report(ok, what)
  runs = runs + 1
  if not ok then bad = bad + 1; print("BAD " .. what) end
end
local EPS = {f32 = 2.0 ^ -23, f64 = 2.0 ^ -52}
for _, dt in ipairs {"f32", "f64"} do
  for _, n in ipairs {1, 8, 17, 32, 40, 64} do
    local R = ck.rand({37, n, n}, {dtype = dt, device = "host"})
    local G = ck.add(ck.matmul(R, R:transpose(2, 3)), ck.mul(ck.eye(n, {dtype = dt, device = "host"}), n))
    for _, upper in ipairs {false, true} do
      local want = ck.cholesky(G, {upper = upper})
      local ok, got = pcall(ck.cholesky, G:cuda(), {upper = upper})
      local e = ok and ck.max(ck.abs(ck.sub(got:host(), want)):contiguous():reshape(-1), 1):item() or math.huge
      report(e <= 1e3 * n * EPS[dt] * n, ("cholesky %s n=%d upper=%s: %s"):format(dt, n, tostring(upper), ok and e or tostring(got)))
    end
  end
  for _, n in ipairs {5, 16} do
    local A = ck.add(ck.rand({37, n, n}, {dtype = dt, device = "host"}), ck.mul(ck.eye(n, {dtype = dt, device = "host"}), n))
    local B = ck.rand({37, n, 3}, {dtype = dt, device = "host"})
    local want = ck.solve(A, B)
    local ok, got = pcall(ck.solve, A:cuda(), B:cuda())
    local e = ok and ck.max(ck.abs(ck.sub(got:host(), want)):contiguous():reshape(-1), 1):item() or math.huge
    report(e <= 1e3 * n * EPS[dt], ("solve %s n=%d: %s"):format(dt, n, ok and e or tostring(got)))
    -- A read in place through a transposed view, and inv's identity made in registers
    want = ck.solve(A:transpose(2, 3), B)
    ok, got = pcall(ck.solve, A:cuda():transpose(2, 3), B:cuda())
    e = ok and ck.max(ck.abs(ck.sub(got:host(), want)):contiguous():reshape(-1), 1):item() or math.huge
    report(e <= 1e3 * n * EPS[dt], ("solve A^T %s n=%d: %s"):format(dt, n, ok and e or tostring(got)))
    want = ck.inv(A)
    ok, got = pcall(ck.inv, A:cuda())
    e = ok and ck.max(ck.abs(ck.sub(got:host(), want)):contiguous():reshape(-1), 1):item() or math.huge
    report(e <= 1e3 * n * EPS[dt], ("inv %s n=%d: %s"):format(dt, n, ok and e or tostring(got)))
  end
end
print(("la_small_sanitize: %d runs, %d bad"):format(runs, bad))
os.exit(bad == 0 and 0 or 1)
