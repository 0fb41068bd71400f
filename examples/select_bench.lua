--- examples/select_bench.lua — selection, masks and assembly (issue 32) against the memcpy bound and PyTorch.
-- Every case times our op (the default rung, and each rung that takes it) and a device-to-device memcpy of the
-- bytes the op moves, in the same run; with --torch FILE the rows of bench/torch_select.py (run just before, on
-- the same device, same shapes) stand beside them. Writes bench/results/<cuda|host>/select-<device>.json.
--   lua5.4 examples/select_bench.lua [--torch torch.json] [--host-small]
-- "bytes moved": index_select/gather: index + source rows read + output written; cat/stack: 2 x output; where:
-- mask + x + y + out; masked_select: mask + source + selected; nonzero/find: mask + positions written.
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
local bench = require "cukern.bench"
local json = require "cukern.json"
local core = ck.core

local torch_file
for i, a in ipairs(arg) do if a == "--torch" then torch_file = arg[i + 1] end end
local backend, small = bench.target(arg)
local dev = backend
local S = (backend == "cuda" and not small) and 1 or 1 / 512 -- host: tiny sizes

local function time(fn, reps)
  fn(); fn()
  ck.sync()
  local t = core.timer()
  local ms = {}
  for r = 1, reps do
    t:start(); fn(); ms[r] = t:stop()
  end
  table.sort(ms)
  return ms[(#ms + 1) // 2]
end

local function memcpy_ms(bytes) -- a copy of bytes / 2 moves `bytes` (read + write)
  local n = math.max(1, bytes // 8)
  local a, b = ck.empty({n}, {device = dev}), ck.empty({n}, {device = dev})
  if backend ~= "cuda" then return time(function() b:copy_(a) end, 5) end
  local ms = core.time_op({op = "memcpy", dst = b, src = a}, 3, 10)
  table.sort(ms)
  return ms[(#ms + 1) // 2]
end

local torch = {}
if torch_file then
  for _, r in ipairs(json.read(torch_file).rows or {}) do torch[r.case] = r end
end

local rows = {}
local function case(name, bytes, fn, variants)
  local mc = memcpy_ms(bytes)
  for _, v in ipairs(variants or {false}) do
    local ms = time(function() fn(v or nil) end, 10)
    local ran = ck.last_ran()
    local row = {case = name, variant = v or ran.name, ms = ms, bytes = bytes, gbs = bytes / ms / 1e6,
                 memcpy_ms = mc, pct_memcpy = 100 * mc / ms}
    local t = torch[name]
    if t then row.torch_ms, row.vs_torch = t.ms, t.ms / ms end
    rows[#rows + 1] = row
    print(string.format("%-28s %-8s %9.3f ms %8.1f GB/s %6.1f%% of memcpy%s", name, row.variant, ms, row.gbs,
      row.pct_memcpy, t and string.format("  torch %.3f ms (%.2fx)", t.ms, row.vs_torch) or ""))
  end
end

ck.seed(1)
local function perm(n, m) -- m random rows of n, i64 (1-based)
  return ck.randint(1, n, {m}, {dtype = "i32", device = dev}):to("host"):to("i64"):to(dev)
end

do -- index_select of rows: [R x C] f32, R rows picked
  local R, C = math.floor(65536 * S), 2048
  local a, ix = ck.rand(R, C, {device = dev}), perm(R, R)
  case("index_select_rows", 2 * R * C * 4 + R * 8, function() return ck.index_select(a, 1, ix) end)
end
do -- gather of rows: idx[i, j] = p[i] (i64), along dim 1
  local R, C = math.floor(16384 * S), 4096
  local a = ck.rand(R, C, {device = dev})
  local p = perm(R, R)
  local ix = p:to("host"):reshape(R, 1):expand(R, C):contiguous():to(dev) -- (no strided i64 copy on cuda yet)
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
local N = math.floor((1 << 27) * S)
local x, y = ck.rand(N, {device = dev}), ck.rand(N, {device = dev})
local m = ck.rand(N, {device = "host"}):to("f64") -- a 50% mask, made on the host (comparisons give bool after issue 32's other half)
m = ck.array((function() local t = {}; for i, v in ipairs(m:totable()) do t[i] = v < 0.5 end; return t end)(), {device = dev})
local nnz = ck.find(m):numel()
case("where", N * (1 + 4 + 4 + 4), function() return ck.where(m, x, y) end)
case("masked_select", N * (1 + 4) + nnz * 4, function() return ck.masked_select(x, m) end)
case("nonzero", N + nnz * 8 * 1, function() return ck.nonzero(m) end)
case("find", N + nnz * 8, function() return ck.find(m) end)

local meta = bench.meta()
local doc = {meta = meta, ladder = "select", reference = "memcpy", torch = torch_file and json.read(torch_file).meta or nil,
             rows = rows}
local path = bench.results_path("select", meta)
bench.mkdir(path:match("^(.*)/"))
bench.write_json(path, doc)
print("wrote " .. path)
