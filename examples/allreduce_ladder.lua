-- The all-reduce ladder (issue 31): gather to one GPU, a one-shot kernel that loads every peer's memory over NVLink,
-- a ring of peer copies, against NCCL (rung 0); plus the peer-copy bandwidth of a:to("cuda:1").
--
--   lua5.4 examples/allreduce_ladder.lua [--max-mib N] [--reps R] [--nccl-c file.jsonl] [--peer-c file.jsonl]
--                                        [--scaling file.json]
--
-- Every CUDA device of the machine takes part (the GPU count comes from the machine). Per size (1 MiB .. 1 GiB of
-- f32 per device) every rung is first validated against NCCL's result on the same inputs (|diff| <= n * eps * sum|x|,
-- the bound spec/collectives_spec.lua derives), then timed: 3 warm-ups, then R reps, each between ck.sync("all")
-- calls on the host clock (at 1 MiB and up the host's share is < 1% of a rep). algbw = bytes / time, busbw = algbw *
-- 2(n-1)/n (the nccl-tests convention: what each link carries). --nccl-c / --peer-c: the JSON lines of
-- bench/c/nccl_ref and bench/c/peer_ref run in the same session, put beside ours as % of the C reference;
-- --scaling: examples/scaling_bench.lua's output, merged into the same results file.
-- Results: <results>/allreduce-<device>.json with meta.gpus; rows {variant, bytes, algbw, busbw, ms}. Without two
-- CUDA devices it runs on host devices (CUKERN_HOST_DEVICES, at most 4 MiB) to show the flow; such runs are
-- written under bench/results/host/ and never committed as results.
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")

local ck = require "cukern"
local bench = require "cukern.bench"
local json = require "cukern.json"

local opt = {max_mib = 1024, reps = 20}
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--max-mib" then opt.max_mib = tonumber(arg[i + 1]); i = i + 1
  elseif a == "--reps" then opt.reps = math.tointeger(tonumber(arg[i + 1])); i = i + 1
  elseif a == "--nccl-c" then opt.nccl_c = arg[i + 1]; i = i + 1
  elseif a == "--peer-c" then opt.peer_c = arg[i + 1]; i = i + 1
  elseif a == "--scaling" then opt.scaling = arg[i + 1]; i = i + 1
  else error("allreduce_ladder: unknown argument " .. a) end
  i = i + 1
end

-- ---------------------------------------------------------------- devices

local mg = dofile((arg[0]:match("^(.*)/") or ".") .. "/multi_gpu.lua")
local devs, on_gpu = mg.devices()
if #devs < 2 then
  print("allreduce_ladder: needs 2 devices (CUDA, or CUKERN_HOST_DEVICES=2 on the host); this machine has "
    .. #devs .. " device(s) of its kind")
  os.exit(0)
end
local n = #devs
if not on_gpu then opt.max_mib = math.min(opt.max_mib, 4) end
local sizes = {}
for _, mib in ipairs(on_gpu and {1, 4, 16, 64, 256, 1024} or {0.25, 1, 4}) do
  if mib <= opt.max_mib then sizes[#sizes + 1] = math.tointeger(mib * 2 ^ 20) end
end
local variants = {}
for _, v in ipairs(ck.nccl.variants()) do
  if on_gpu or v.id == 0 then variants[#variants + 1] = v end -- (on the host: the oracle only)
end
local nccl_ok = ck.nccl.info().available
print(("all-reduce ladder: %d devices (%s), NCCL %s"):format(n, table.concat(devs, ", "),
  nccl_ok and ck.nccl.info().version or "missing: " .. tostring(ck.nccl.info().why)))

local function inputs(count, seed)
  local list = {}
  for k, d in ipairs(devs) do
    ck.seed(seed + k)
    list[k] = ck.rand(count, {device = d})
  end
  return list
end

-- ---------------------------------------------------------------- the ladder

local rows, checks = {}, {}
for _, bytes in ipairs(sizes) do
  local count = bytes // 4
  -- validation: every rung against rung 0 on the same inputs
  local ref = inputs(count, 1000)
  local sumabs = 0
  for _, a in ipairs(ref) do sumabs = math.max(sumabs, ck.max(ck.abs(a)):item()) end
  ck.nccl.all_reduce(ref, "sum", {variant = on_gpu and "nccl" or nil})
  for _, v in ipairs(variants) do
    if v.id ~= 0 then
      local x = inputs(count, 1000)
      ck.nccl.all_reduce(x, "sum", {variant = v.name})
      local worst = 0
      for k = 1, n do worst = math.max(worst, ck.max(ck.abs(x[k] - ref[k])):item()) end
      local tol = n * 2 ^ -23 * n * sumabs * 2
      checks[#checks + 1] = {variant = v.name, bytes = bytes, max_abs_diff = worst, tol = tol, ok = worst <= tol}
      if worst > tol then print(("  NOT OK %s at %d bytes: |diff| %.3g > %.3g"):format(v.name, bytes, worst, tol)) end
      for k = 1, n do x[k]:free() end
    end
  end
  for k = 1, n do ref[k]:free() end
  -- timing
  local bufs = inputs(count, 7)
  for _, v in ipairs(variants) do
    local o = {variant = on_gpu and v.name or nil}
    local ms = mg.time(function() ck.nccl.all_reduce(bufs, "sum", o) end, opt.reps)
    local algbw = bytes / (ms * 1e-3) / 1e9
    rows[#rows + 1] = {variant = on_gpu and v.name or "host", id = v.id, bytes = bytes, ms = ms, algbw = algbw,
                       busbw = algbw * 2 * (n - 1) / n, gpus = n}
    print(("  %-8s %10d B  %9.4f ms  algbw %7.1f GB/s  busbw %7.1f GB/s"):format(rows[#rows].variant, bytes, ms, algbw,
      rows[#rows].busbw))
  end
  for k = 1, n do bufs[k]:free() end
end

-- ---------------------------------------------------------------- peer copies (a:to and copy_ into a buffer)

local peer = {}
if on_gpu then
  for _, bytes in ipairs(sizes) do
    local src = ck.rand(bytes // 4, {device = devs[1]})
    local dst = ck.empty(bytes // 4, {device = devs[2]})
    for _, how in ipairs {"copy_", "to"} do
      local f = how == "copy_" and function() dst:copy_(src) end or function() local r = src:to(devs[2]); r:free() end
      local ms = mg.time(f, opt.reps)
      peer[#peer + 1] = {variant = "ck " .. how, src = devs[1], dst = devs[2], bytes = bytes, ms = ms,
                         gbps = bytes / (ms * 1e-3) / 1e9}
    end
    assert(ck.equal(dst, src:to(devs[2])), "peer copy: values differ")
    src:free(); dst:free()
  end
end

-- ---------------------------------------------------------------- the C references of this session

local function read_lines(path)
  local out = {}
  local f = path and io.open(path)
  if not f then return out end
  for line in f:lines() do
    local ok, v = pcall(json.decode, line)
    if ok and type(v) == "table" and not v.skip then out[#out + 1] = v end
  end
  f:close()
  return out
end
local nccl_c, peer_c = read_lines(opt.nccl_c), read_lines(opt.peer_c)
local function c_ref(list, bytes, key)
  for _, r in ipairs(list) do
    if r.bytes == bytes and (not r.gpus or r.gpus == n) and (not r.src or r.src == 0) then return r[key] end
  end
end
for _, r in ipairs(rows) do
  local c = c_ref(nccl_c, r.bytes, "busbw")
  if c then r.pct_of_nccl_c = 100 * r.busbw / c end
end
for _, r in ipairs(peer) do
  local c = c_ref(peer_c, r.bytes, "gbps")
  if c then r.pct_of_memcpy_peer = 100 * r.gbps / c end
end

local meta = bench.meta {device = on_gpu and "cuda" or "host"}
meta.gpus = n
meta.devices = devs
meta.nccl = nccl_ok and ck.nccl.info().version or nil
local doc = {meta = meta, rows = rows, checks = checks, peer = peer, nccl_c = nccl_c, peer_c = peer_c}
if opt.scaling then
  local f = io.open(opt.scaling)
  if f then
    local ok, s = pcall(json.decode, f:read("a"))
    f:close()
    if ok and type(s) == "table" then doc.scaling = s.rows; doc.scaling_meta = s.meta end
  end
end
-- (2 GPUs: allreduce-<device>.json, issue 31; more: allreduce-<n>gpu-<device>.json, the scaling run of issue 38)
local path = bench.results_path(n == 2 and "allreduce" or ("allreduce-" .. n .. "gpu"), meta)
bench.write_json(path, doc)

print(("\nall-reduce f32 sum, %d GPUs (%s), busbw GB/s (%% of NCCL from C, same run):"):format(n, meta.device))
for _, r in ipairs(rows) do
  if r.bytes == sizes[#sizes] then
    print(("  %-8s %7.1f%s"):format(r.variant, r.busbw, r.pct_of_nccl_c and ("  (%.1f%%)"):format(r.pct_of_nccl_c) or ""))
  end
end
for _, r in ipairs(peer) do
  if r.bytes == sizes[#sizes] then
    print(("  peer %-7s %7.1f GB/s%s"):format(r.variant:sub(4), r.gbps,
      r.pct_of_memcpy_peer and ("  (%.1f%% of cudaMemcpyPeerAsync)"):format(r.pct_of_memcpy_peer) or ""))
  end
end
local bad = 0
for _, c in ipairs(checks) do if not c.ok then bad = bad + 1 end end
print(("checks: %d of %d rung results within tolerance of NCCL's -> %s"):format(#checks - bad, #checks, path))
if bad > 0 then os.exit(1) end
