--- examples/select_bench.lua — selection, masks and assembly (issue 32) against the memcpy bound and PyTorch.
-- Every case times our op (its default rung; ck.last_ran() names it) and a device-to-device memcpy of the bytes
-- the op moves, in the same run; with --torch FILE the rows of bench/torch_select.py (run just before, on the same
-- device, the same cases and shapes) stand beside them. Prints one table with the issue's target per case and
-- writes bench/results/<cuda|host>/select-<device>.json.
--   lua5.4 examples/select_bench.lua [--torch torch.json] [--host-small] [--only PATTERN,PATTERN...] [--reps N]
-- On the GPU host the whole comparison is one command: `bash lab/select.sh b` (PyTorch's side, then this).
--
-- Timing: a CUDA event before and after each call of the op as a script makes it (the Lua call included: checks,
-- allocation, launches, and the read-backs that compactions and checked gathers need), after two warm-up calls;
-- the median of --reps (default 20). PyTorch's side is timed the same way. Each result is freed right after its
-- stop event, outside the timed span, as PyTorch's caching allocator gets its blocks back when the result dies
-- (a Lua result waits for the collector); the column `mallocs` counts cudaMalloc calls inside the timed reps,
-- which should be 0.
-- "bytes moved": index_select/gather: index + source rows read + output written; cat/stack: 2 x output; where:
-- mask + x + y + out; masked_select: mask + source + selected; nonzero/find: mask + the positions or subscripts
-- written (8 bytes each).
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
local bench = require "cukern.bench"
local json = require "cukern.json"
local core = ck.core

local torch_file, only, reps = nil, nil, 20
for i, a in ipairs(arg) do
  if a == "--torch" then torch_file = arg[i + 1] end
  if a == "--only" then only = arg[i + 1] end
  if a == "--reps" then reps = tonumber(arg[i + 1]) end
end
local backend, small = bench.target(arg)
local dev = backend
local S = (backend == "cuda" and not small) and 1 or 1 / 512 -- host: tiny sizes

local function mallocs() return backend == "cuda" and ck.memory("cuda").cuda_mallocs or 0 end

--- Median ms of fn over `reps` calls, each between two CUDA events (a host clock on the host); the result of each
-- call is freed after its stop event. Also the cudaMallocs counted inside the timed calls.
local function time(fn)
  for _ = 1, 2 do local r = fn(); ck.sync(); if r then r:free() end end
  ck.sync()
  local t = core.timer()
  local ms, m0 = {}, mallocs()
  for k = 1, reps do
    t:start()
    local r = fn()
    ms[k] = t:stop()
    if r then r:free() end
  end
  local m = mallocs() - m0
  table.sort(ms)
  return ms[(#ms + 1) // 2], m
end

local function memcpy_ms(bytes) -- a copy of bytes / 2 moves `bytes` (read + write)
  local n = math.max(1, bytes // 8)
  local a, b = ck.empty({n}, {device = dev}), ck.empty({n}, {device = dev})
  local ms
  if backend ~= "cuda" then
    ms = time(function() b:copy_(a) end)
  else
    local l = core.time_op({op = "memcpy", dst = b, src = a}, 3, 10)
    table.sort(l)
    ms = l[(#l + 1) // 2]
  end
  a:free(); b:free()
  return ms
end

local torch, torch_meta = {}, nil
if torch_file then
  local doc = json.read(torch_file)
  torch_meta = doc.meta
  for _, r in ipairs(doc.rows or {}) do torch[r.case] = r end
end

-- The issue's targets: assembly and gathers at >= 90% of a memcpy of their bytes, where at 95%; the compactions at PyTorch's
-- speed or better (a compaction is two passes and a read-back: a memcpy is not its bound).
local TARGET = {cat = {pct = 90}, stack = {pct = 90}, index_select = {pct = 90}, gather = {pct = 90},
                where = {pct = 95}, nonzero = {torch = 1}, find = {torch = 1}, masked_select = {torch = 1}}
local function target_of(name)
  for prefix, t in pairs(TARGET) do if name:sub(1, #prefix) == prefix then return t end end
end

local rows = {}
local function case(name, bytes, fn)
  if only then -- a comma-separated list of Lua patterns
    local hit = false
    for pat in only:gmatch("[^,]+") do hit = hit or name:find(pat) ~= nil end
    if not hit then return end
  end
  collectgarbage() -- (the inputs of earlier cases go back to the cache before this one allocates)
  local mc = memcpy_ms(bytes)
  local ms, nm = time(fn)
  local ran = ck.last_ran()
  local row = {case = name, variant = ran.name, ms = ms, bytes = bytes, gbs = bytes / ms / 1e6, memcpy_ms = mc,
               pct_memcpy = 100 * mc / ms, mallocs = nm}
  local t = torch[name]
  if t then row.torch_ms, row.vs_torch = t.ms, t.ms / ms end
  local tg = target_of(name)
  if tg then
    row.target = tg.pct and (">=" .. tg.pct .. "% memcpy") or (">=" .. tg.torch .. "x torch")
    if tg.pct then row.met = row.pct_memcpy >= tg.pct and "yes" or "NO"
    elseif row.vs_torch then row.met = row.vs_torch >= tg.torch and "yes" or "NO" end
  end
  rows[#rows + 1] = row
  io.stderr:write(("%-24s %9.3f ms  %6.1f%% of memcpy%s\n"):format(name, ms, row.pct_memcpy,
    t and (" torch %.3f ms (%.2fx)"):format(t.ms, row.vs_torch) or ""))
end

ck.seed(1)
local function perm(n, m) -- m random rows of n, i64 (1-based)
  return ck.randint(1, n, {m}, {dtype = "i64", device = dev})
end

do -- index_select of rows: [R x C] f32, R rows picked
  local R, C = math.floor(65536 * S), 2048
  local a, ix = ck.rand(R, C, {device = dev}), perm(R, R)
  case("index_select_rows", 2 * R * C * 4 + R * 8, function() return ck.index_select(a, 1, ix) end)
end
do -- gather of rows: idx[i, j] = p[i] (i64), along dim 1
  local R, C = math.floor(16384 * S), 4096
  local a = ck.rand(R, C, {device = dev})
  local ix = perm(R, R):reshape(R, 1):expand(R, C):contiguous()
  case("gather_rows", R * C * (8 + 4 + 4), function() return ck.gather(a, 1, ix) end)
end
for _, k in ipairs {2, 8, 64} do -- cat along dim 2 of k [R x C/k] f32 arrays, and along dim 1
  local R, C = math.floor(8192 * S), 8192
  local list = {}
  for i = 1, k do list[i] = ck.rand(R, C // k, {device = dev}) end
  case("cat" .. k .. "_dim2", 2 * R * C * 4, function() return ck.cat(list, 2) end)
  local list1 = {}
  for i = 1, k do list1[i] = ck.rand(R // k, C, {device = dev}) end
  case("cat" .. k .. "_dim1", 2 * R * C * 4, function() return ck.cat(list1, 1) end)
end
do
  local R, C, k = math.floor(8192 * S), 8192, 16
  local list = {}
  for i = 1, k do list[i] = ck.rand(R // k, C, {device = dev}) end
  case("stack16", 2 * R * C * 4, function() return ck.stack(list, 1) end)
end
do -- where and masked_select over 2^27 elements, a 50% mask
  local N = math.floor((1 << 27) * S)
  local x, y = ck.rand(N, {device = dev}), ck.rand(N, {device = dev})
  local m = ck.rand(N, {device = dev}):lt(0.5)
  local nnz = ck.find(m):numel()
  case("where", N * (1 + 4 + 4 + 4), function() return ck.where(m, x, y) end)
  case("masked_select", N * (1 + 4) + nnz * 4, function() return ck.masked_select(x, m) end)
end
do -- nonzero over 2^26 elements: dense (50%) and sparse (1%) masks, 1-D and [8192 x 8192]
  local N = math.floor((1 << 26) * S)
  local side = math.floor(8192 * math.sqrt(S))
  for _, c in ipairs {{"dense", 0.5}, {"sparse", 0.01}} do
    local m1 = ck.rand(N, {device = dev}):lt(c[2])
    local m2 = ck.rand(side, side, {device = dev}):lt(c[2])
    local n1, n2 = ck.find(m1):numel(), ck.find(m2):numel()
    case("nonzero_1d_" .. c[1], N + n1 * 8, function() return ck.nonzero(m1) end)
    case("nonzero_2d_" .. c[1], side * side + n2 * 16, function() return ck.nonzero(m2) end)
    case("find_" .. c[1], N + n1 * 8, function() return ck.find(m1) end)
    -- (no target: the count alone, through the reduce ladder's sum of bool, no read-back; what a compaction's
    -- first pass costs at this size)
    case("count_nonzero_1d_" .. c[1], N + 8, function() return ck.count_nonzero(m1) end)
  end
end

print(("\nselect bench on %s (%s), median of %d calls, %s around each call as a script makes it%s"):format(
  bench.meta().device, backend, reps, core.timer():kind(), torch_meta and (", beside PyTorch " .. tostring(torch_meta.torch)) or ""))
bench.table(rows, {
  {key = "case", title = "case"}, {key = "variant", title = "rung"}, {key = "ms", title = "ms", fmt = "%.3f"},
  {key = "memcpy_ms", title = "memcpy ms", fmt = "%.3f"}, {key = "pct_memcpy", title = "% memcpy", fmt = "%.1f"},
  {key = "torch_ms", title = "torch ms", fmt = "%.3f", optional = true},
  {key = "vs_torch", title = "vs torch", fmt = "%.2fx", optional = true},
  {key = "target", title = "target"}, {key = "met", title = "met", optional = true},
  {key = "mallocs", title = "mallocs"},
})

local meta = bench.meta()
local doc = {meta = meta, ladder = "select", reference = "memcpy", torch = torch_meta, reps = reps, rows = rows}
local path = bench.results_path("select", meta)
bench.mkdir(path:match("^(.*)/"))
bench.write_json(path, doc)
print("wrote " .. path)
