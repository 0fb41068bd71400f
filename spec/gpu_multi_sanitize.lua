--- The several-GPU paths in one quick process, for compute-sanitizer (lab/issue31-gpu.sh stage c): the specs of
-- issue 31 start child processes and take minutes under memcheck; this runs the same device code once, small:
-- peer copies of strided views both ways (with casts), ops on the second device, every collective on NCCL and
-- every all-reduce rung, and sharded arrays, each checked against values computed on the host.
-- Prints one line per mismatch and a last line "gpu_multi_sanitize: N cases, M mismatches"; exits non-zero on
-- any. Without two CUDA devices it says so and exits 0; CUKERN_GPU_SANITIZE_HOST=1 runs it on host devices
-- (with CUKERN_HOST_DEVICES=2 or more) to check the script itself.
package.path = "./lua/?.lua;./lua/?/init.lua;./?.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"

local kind = os.getenv("CUKERN_GPU_SANITIZE_HOST") == "1" and "host" or "cuda"
local devs = {}
for _, d in ipairs(ck.devices()) do if d.backend == kind then devs[#devs + 1] = d.id end end
if #devs < 2 then
  print(("gpu_multi_sanitize: needs 2 %s devices, found %d; nothing to do"):format(kind, #devs))
  os.exit(0)
end
local d0, d1 = devs[1], devs[2]
local cases, bad = 0, 0
ck.seed(tonumber(os.getenv("CUKERN_SPEC_SEED")) or os.time())

local function flat(a) return a:to("host:0"):to("f64"):contiguous():reshape(a:numel()):totable() end
local function check(label, got, want, tol)
  cases = cases + 1
  local g, w = flat(got), flat(want)
  for i = 1, #w do
    if math.abs(g[i] - w[i]) > (tol or 0) * (1 + math.abs(w[i])) then
      bad = bad + 1
      print(("MISMATCH %s at %d: %g vs %g"):format(label, i, g[i], w[i]))
      return
    end
  end
end

-- peer copies: strided views both ways, with and without a cast
for _, shape in ipairs {{1}, {37, 5}, {64, 130}} do
  local a = ck.randn(shape, {device = d0})
  for _, v in ipairs {a, #shape == 2 and a:t() or a, #shape == 2 and a:narrow(1, 1, math.max(1, shape[1] // 2)) or a} do
    check("to " .. d1, v:to(d1), v)
    check("to " .. d1 .. " f16", v:to(d1, "f16"), v:to("f16"))
    local dst = ck.full(v:shape(), 0 / 0, {device = d1})
    dst:copy_(v)
    check("copy_ " .. d0 .. " -> " .. d1, dst, v)
    local vs = v:shape()
    local back = #vs == 2 and ck.full({vs[2], vs[1]}, 0 / 0, {device = d0}):t() or ck.full(vs, 0 / 0, {device = d0})
    back:copy_(dst)
    check("copy_ back into a transposed view", back, v)
  end
end

-- ops on the second device, right after a peer copy
do
  local a = ck.randn(96, 64, {device = d0})
  local b = a:to(d1)
  check("matmul on " .. d1, ck.matmul(b, b:t()), ck.matmul(a, a:t()), 1e-5)
  check("sum on " .. d1, ck.sum(b, 2), ck.sum(a, 2), 1e-5)
  check("add on " .. d1, b + b, a + a)
end

-- collectives: every kind on NCCL, all_reduce on every rung
local variants = {}
for _, v in ipairs(ck.nccl.variants()) do variants[#variants + 1] = v.name end
for _, n in ipairs {1, 1000, 65537} do
  local host = {}
  local function fresh()
    local l = {}
    for k, d in ipairs(devs) do
      host[k] = host[k] or ck.rand(n, {device = "host:0"})
      l[k] = host[k]:to(d):clone() -- (a fresh copy: :to on the same device is the array itself)
    end
    return l
  end
  fresh()
  local total = host[1]
  for k = 2, #devs do total = total + host[k] end
  for _, v in ipairs(variants) do
    local l = fresh()
    ck.nccl.all_reduce(l, "sum", {variant = kind == "cuda" and v or nil})
    for k = 1, #devs do check(("all_reduce %s n=%d on %s"):format(v, n, devs[k]), l[k], total, 1e-6 * #devs) end
  end
  local l = fresh()
  local g = ck.nccl.all_gather(l)
  cases = cases + 1
  if g[2]:numel() ~= n * #devs then bad = bad + 1; print("MISMATCH all_gather size") end
  ck.nccl.broadcast(l, 2)
  check("broadcast", l[1], host[2])
  if n % #devs == 0 then
    local rs = ck.nccl.reduce_scatter(fresh(), "max")
    cases = cases + 1
    if rs[1]:numel() * #devs ~= n then bad = bad + 1; print("MISMATCH reduce_scatter size") end
  end
  local r = fresh()
  ck.nccl.reduce(r, "sum", 1)
  check("reduce", r[1], total, 1e-6 * #devs)
end
ck.nccl.wait()

-- sharded arrays
do
  local a = ck.randn(13, 7, {device = d0})
  local s = ck.shard(a, {devices = devs, dim = 1})
  check("shard/gather", s:gather(d0), a)
  check("shard elementwise", (s * 2 + 1):gather(d0), a * 2 + 1, 1e-6)
  check("shard sum", ck.sum(s), ck.sum(a), 1e-5)
  local b = ck.randn(7, 5, {device = d0})
  check("shard matmul", s:matmul(ck.replicate(b, devs)):gather(d0), ck.matmul(a, b), 1e-5)
end

ck.sync("all")
print(("gpu_multi_sanitize: %d cases, %d mismatches (%s: %s)"):format(cases, bad, kind, table.concat(devs, ", ")))
os.exit(bad == 0 and 0 or 1)
