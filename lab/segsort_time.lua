-- Sorts of many short lines (issue 33's segmented target: 65536 lines of 1024 >= torch.sort), each default rung
-- beside the others and CUB, CUDA events through cukern.bench (warm-up, median of 10), every result checked
-- against CUB's first (the spec checks the rungs against the host; sorting 2^26 elements on the host here would
-- take longer than the timings). With --torch FILE: torch.sort's times from the same session, beside ours.
--   lua5.4 lab/segsort_time.lua [--torch t.json]
local ck = require "cukern"
local bench = require "cukern.bench"
local json = require "cukern.json"
local torch = {}
for i = 1, #arg do
  if arg[i] == "--torch" then
    local f = io.open(arg[i + 1])
    if f then torch = json.decode(f:read("a")); f:close() end
  end
end
local dev = ck.has_cuda() and "cuda" or "host"
print(("segmented sorts on %s"):format(bench.meta{device = dev}.device))
for _, shape in ipairs {{65536, 1024}, {16384, 4096}, {32768, 2048}, {131072, 512}, {262144, 256}, {4096, 4097}} do
  local n = shape[1] * shape[2]
  local gx = ck.rand(shape, {device = dev}) * 2 - 1
  local rv, ri = ck.sort(gx, 2, {variant = "cub"})
  local label = ("%dx%d f32 dim 2"):format(shape[1], shape[2])
  local line = {}
  for _, v in ipairs {"rows_block", "onesweep", "cub"} do
    local out, idx = ck.empty(shape, {device = dev}), ck.empty(shape, {dtype = "i64", device = dev})
    local ok = pcall(ck.sort, gx, 2, {variant = v, out = out, idx = idx})
    local ran = ck.last_ran().name
    if ok and ran == v then
      assert(ck.equal(out, rv) and ck.equal(idx, ri), label .. " " .. v .. ": differs from CUB's")
      local r = bench.run{spec = {op = "sort", x = gx, dim = 2, variant = v, out = out, idx = idx}, warmup = 3, reps = 10,
                          bytes = 4 * n + 12 * n}
      line[#line + 1] = ("%s %.3f ms"):format(v, r.ms)
    else
      line[#line + 1] = v .. " declined"
    end
    out:free(); idx:free()
  end
  local t = torch[label]
  print(("  %-26s %s%s"):format(label, table.concat(line, "   "), t and ("   torch.sort %.3f ms"):format(t) or ""))
end
-- topk along dim 2 of many short rows: radix select (topk's first rung) beside rows_block (a whole sort per row,
-- the first k written) and torch.topk
for _, c in ipairs {{65536, 1024, 10}, {65536, 1024, 256}, {16384, 4096, 10}} do
  local shape, k = {c[1], c[2]}, c[3]
  local gx = ck.rand(shape, {device = dev}) * 2 - 1
  local rv, ri = ck.topk(gx, k, 2, {variant = "cub"})
  local label = ("topk %dx%d k=%d"):format(c[1], c[2], k)
  local line = {}
  for _, v in ipairs {"radix_select", "rows_block"} do
    local gv, gi = ck.topk(gx, k, 2, {variant = v})
    assert(ck.equal(gv, rv) and ck.equal(gi, ri), label .. " " .. v .. ": differs from CUB's")
    local r = bench.run{spec = {op = "sort", x = gx, k = k, dim = 2, variant = v}, warmup = 3, reps = 10, bytes = 4 * c[1] * c[2]}
    line[#line + 1] = ("%s %.3f ms"):format(v, r.ms)
  end
  local t = torch[label]
  print(("  %-26s %s%s"):format(label, table.concat(line, "   "), t and ("   torch.topk %.3f ms"):format(t) or ""))
end
-- unique of 2^26 i32 in [0, 2^20) with counts and inverse (issue 33: unique >= PyTorch), checked against the
-- sort it is made of: the values strictly increase and the counts sum to n
do
  local n = math.tointeger(2 ^ 26)
  local u = ck.randint(0, 2 ^ 20 - 1, n, {device = dev})
  local v, c, j = ck.unique(u, {counts = true, inverse = true})
  assert(ck.sum(c):item() == n and v:numel() <= 2 ^ 20 and j:numel() == n, "unique: counts or sizes wrong")
  assert(ck.equal(v:index_select(1, j), u), "unique: v[j] differs from the input")
  v, c, j = nil, nil, nil
  local r = bench.run{fn = function() ck.unique(u, {counts = true, inverse = true}) end, device = dev, warmup = 3, reps = 10}
  local t = torch["unique i32 n=2^26 (counts, inverse)"]
  print(("  %-26s ck.unique %.3f ms%s"):format("unique i32 2^26", r.ms, t and ("   torch.unique %.3f ms"):format(t) or ""))
end
