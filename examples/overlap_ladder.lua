--- The overlap ladder (issue 36): one batched workload — upload a chunk, an elementwise chain plus a sum on it,
-- download the result — run four ways, each against the bound max(upload, compute, download) measured alone in the
-- same run:
--   1 serial_pageable   one stream, pageable host memory: every copy waits
--   2 pinned            one stream, pinned memory, asynchronous copies (overlap with the host only)
--   3 two_streams       chunks alternate over two streams (double-buffered): chunk i's upload overlaps i-1's compute
--   4 three_streams     three streams, pipelined: one stream a stage (uploads, computes, downloads) with events
--                       between them and three device buffers, so upload, compute and download of three chunks run at
--                       once and the uploads wait only for a buffer to come free
-- Every rung's results are checked against the host oracle before it is timed. Results: overlap-<device>.json (in
-- $CUKERN_RESULTS or bench/results). Without a GPU it runs on the host (the rungs then cannot overlap).
-- Diagnostic rows (id -1) beside the bound: duplex_alone, the uploads and the downloads alone but at once on two
-- streams (what the copy engines and the link give in both directions together), and three_streams_per_chunk,
-- rung 4's first form: chunks round-robin over three streams, each stream doing a chunk's upload, compute and
-- download in order (H100, session 11, three runs: 80.2, 85.9, 84.2% of the bound; the stage streams 96.7, 87.9,
-- and 72.2 with 48 chunks of 8 MiB, where the host's issue time per chunk shows).
--   lua5.4 examples/overlap_ladder.lua [--chunks K] [--mb MiB] [--chain C] [--reps R] [--bufs B (rung 4's buffers)]
local ck = require "cukern"
local bench = require "cukern.bench"

-- 24 chunks of 16 MiB (384 MiB in all): the pipeline's fill and drain cost about one chunk each, so more, smaller
-- chunks bring the three-stream rung closer to the bound (H100, one run, 46b451a: 12 x 32 MiB 79.5%, 24 x 16 MiB
-- 83.7% of the bound)
local K, MB, CHAIN, REPS, NBUF = 24, 16, 8, 9, 3
for i = 1, #arg do
  if arg[i] == "--bufs" then NBUF = math.tointeger(tonumber(arg[i + 1])) end
  if arg[i] == "--chunks" then K = tonumber(arg[i + 1]) end
  if arg[i] == "--mb" then MB = tonumber(arg[i + 1]) end
  if arg[i] == "--chain" then CHAIN = tonumber(arg[i + 1]) end
  if arg[i] == "--reps" then REPS = tonumber(arg[i + 1]) end
end
assert(NBUF and NBUF >= 1, "overlap_ladder: --bufs must be an integer >= 1")
local DEV = ck.has_cuda() and "cuda" or "host"
local N = MB * 1024 * 1024 // 4
local clock = ck.core.clock

-- the compute step, in place on a device buffer: CHAIN multiply-adds, then a sum (kept so it is not dead work)
local function compute(d)
  for _ = 1, CHAIN do d:mul_(1.0001):add_(0.0001) end
  return ck.sum(d)
end

local src, pin_src, out_pg, out_pin = {}, {}, {}, {}
for i = 1, K do
  src[i] = ck.rand(N, {device = "host"})
  pin_src[i] = src[i]:pin()
  out_pg[i] = ck.empty(N, {device = "host"})
  out_pin[i] = ck.empty(N, {device = "host", pinned = true})
end

local function streams(n) local s = {}; for i = 1, n do s[i] = ck.stream(DEV) end; return s end

-- One pass over the K chunks with `ns` streams (0: the device's own stream, synchronous pageable copies).
local function pass(ns, pinned, bufs, st)
  local outs = pinned and out_pin or out_pg
  local ins = pinned and pin_src or src
  for i = 1, K do
    local k = ns == 0 and 1 or (i - 1) % ns + 1
    local function chunk()
      local d = bufs[k]
      d:copy_(ins[i])  -- pinned: asynchronous on this stream; pageable: waits
      compute(d)
      outs[i]:copy_(d) -- into pinned memory: asynchronous on this stream
    end
    if ns == 0 then chunk() else ck.with_stream(st[k], chunk) end
  end
  if ns == 0 then ck.sync(DEV) else for _, s in ipairs(st) do s:sync() end end
end

local function buffers(n, st)
  local b = {}
  for k = 1, math.max(n, 1) do
    if st and st[k] then b[k] = ck.with_stream(st[k], function() return ck.empty(N, {device = DEV}) end)
    else b[k] = ck.empty(N, {device = DEV}) end
  end
  return b
end

local function median(t) table.sort(t); return t[(#t + 1) // 2] end
local function timed(f) local t = {}; f(); for r = 1, REPS do local t0 = clock(); f(); t[r] = (clock() - t0) * 1e3 end; return median(t) end

-- the oracle of one chunk, on the host
local function check(outs, what)
  for _, i in ipairs {1, K} do
    local ref = src[i]:clone()
    compute(ref)
    local ok, why = pcall(ck.allclose, outs[i], ref, 1e-5, 1e-4)
    assert(ok and why, what .. ": chunk " .. i .. " differs from the host oracle " .. tostring(why))
  end
end

local rows = {}
local function row(variant, id, ms, bound)
  local gbs = 2 * K * N * 4 / (ms * 1e-3) / 1e9
  rows[#rows + 1] = {case = ("%d x %d MiB, chain %d"):format(K, MB, CHAIN), variant = variant, id = id, ms = ms,
                     bound_ms = bound, pct_of_bound = bound and 100 * bound / ms,
                     gbps = gbs, chunks = K, mib = MB, chain = CHAIN}
  print(("%-18s %9.3f ms  %7.1f GB/s%s"):format(variant, ms, gbs, bound and ("  %5.1f%% of the bound"):format(100 * bound / ms) or ""))
end

-- the parts alone (pinned, one stream): the bound is the slowest of them
local one = buffers(1)
local up = timed(function() for i = 1, K do one[1]:copy_(pin_src[i]) end; ck.sync(DEV) end)
local comp = timed(function() for _ = 1, K do compute(one[1]) end; ck.sync(DEV) end)
local down = timed(function() for i = 1, K do out_pin[i]:copy_(one[1]) end; ck.sync(DEV) end)
local bound = math.max(up, comp, down)
row("bound", -1, bound) -- the reference row: max of the three parts alone
row("upload_alone", -1, up)
row("compute_alone", -1, comp)
row("download_alone", -1, down)
if DEV == "cuda" then -- both directions at once: uploads on one stream, downloads (of another buffer) on a second
  local two = streams(2)
  local ub = buffers(2, two)
  ub[2]:fill(0) -- (the downloads read it: written once, so compute-sanitizer's initcheck has nothing to say)
  row("duplex_alone", -1, timed(function()
    ck.with_stream(two[1], function() for i = 1, K do ub[1]:copy_(pin_src[i]) end end)
    ck.with_stream(two[2], function() for i = 1, K do out_pin[i]:copy_(ub[2]) end end)
    two[1]:sync(); two[2]:sync()
  end))
end

-- Rung 4: st[1] uploads, st[2] computes, st[3] downloads; chunk i uses buffer (i - 1) % nb + 1, whose upload waits
-- for the download of the chunk that used it last.
local function pass_staged(bufs, st, nb)
  local freed = {}
  for i = 1, K do
    local b = (i - 1) % nb + 1
    if freed[b] then st[1]:wait(freed[b]) end
    ck.with_stream(st[1], function() bufs[b]:copy_(pin_src[i]) end)
    local up_done = ck.event(DEV); up_done:record(st[1])
    st[2]:wait(up_done)
    ck.with_stream(st[2], function() compute(bufs[b]) end)
    local comp_done = ck.event(DEV); comp_done:record(st[2])
    st[3]:wait(comp_done)
    ck.with_stream(st[3], function() out_pin[i]:copy_(bufs[b]) end)
    freed[b] = ck.event(DEV); freed[b]:record(st[3])
  end
  for _, s in ipairs(st) do s:sync() end
end

local RUNGS = {{"serial_pageable", 1, 0, false}, {"pinned", 2, 0, true}, {"two_streams", 3, 2, true},
  {"three_streams_per_chunk", -1, 3, true}, {"three_streams", 4, 3, true}}
for _, r in ipairs(RUNGS) do
  local name, id, ns, pinned = r[1], r[2], r[3], r[4]
  local st = ns > 0 and streams(ns) or nil
  local go
  if id == 4 and DEV == "cuda" then
    local bufs = buffers(NBUF, nil)
    go = function() pass_staged(bufs, st, NBUF) end
  else
    local bufs = buffers(ns, st)
    go = function() pass(ns, pinned, bufs, st) end
  end
  go()
  check(pinned and out_pin or out_pg, name)
  row(name, id, timed(go), bound)
end

local meta = bench.meta()
local path = bench.results_path("overlap", meta)
bench.write_json(path, {meta = meta, ladder = "overlap", reference = "bound", bound_ms = bound, rows = rows})
print("wrote " .. path)
