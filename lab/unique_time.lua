-- ck.unique and ck.sort without indices on 2^26 i32 (issue 33), each result checked first, timed with CUDA events
-- through cukern.bench (warm-up 3, median of 10), beside lab/unique_torch.py's JSON from the same session.
--   lua5.4 lab/unique_time.lua [torch.json]
local ck, bench, json = require "cukern", require "cukern.bench", require "cukern.json"
local f = arg[1] and io.open(arg[1])
local t = f and json.decode(f:read("a")) or {}
if f then f:close() end
local n = math.tointeger(2 ^ 26)
local u = ck.randint(0, 2 ^ 20 - 1, n, {device = "cuda"})
local v, c, j = ck.unique(u, {counts = true, inverse = true})
assert(ck.sum(c):item() == n and ck.equal(v:index_select(1, j), u), "unique: wrong")
assert(ck.equal(ck.unique(u), v), "unique without inverse differs")
local _, j2 = ck.unique(u, {inverse = true, inverse_by = "search"})
assert(ck.equal(j2, j), "unique's inverse by search differs from the scatter's")
local w = ck.randint(-(1 << 31), (1 << 31) - 1, n, {device = "cuda"})
local sv = ck.sort(w, 1, {indices = false})
local ran = ck.last_ran().name
assert(ran == "cub" and ck.equal(sv, (ck.sort(w))), "sort values only: " .. ran .. " or differs")
for _, o in ipairs {{function() ck.unique(u, {counts = true, inverse = true}) end, "unique i32 n=2^26 (counts, inverse)"},
                    {function() ck.unique(u, {counts = true, inverse = true, inverse_by = "search"}) end,
                     "unique i32 n=2^26 (counts, inverse by search)", "unique i32 n=2^26 (counts, inverse)"},
                    {function() ck.unique(u) end, "unique i32 n=2^26"},
                    {function() ck.unique(u, {counts = true}) end, "unique i32 n=2^26 (counts)"},
                    {function() ck.sort(w, 1, {indices = false}) end, "sort i32 n=2^26 values"},
                    {function() ck.sort(w) end, "sort i32 n=2^26 values and indices (ours only)"}} do
  local r = bench.run{fn = o[1], device = "cuda", warmup = 3, reps = 10}
  local tt = t[o[3] or o[2]] -- (the torch row it stands beside)
  print(("%s: cukern %.3f ms, torch %s ms%s"):format(o[2], r.ms, tt and ("%.3f"):format(tt) or "-",
    tt and (" (%.2fx)"):format(tt / r.ms) or ""))
end
-- the composition's steps (lua/cukern/sorting.lua), each timed alone on its real inputs
local s, perm = ck.sort(u)
local hi, lo = s:narrow(1, 2, n), s:narrow(1, 1, n - 1)
local starts = ck.ones({n}, {dtype = "bool", device = "cuda"})
starts:narrow(1, 2, n):copy_(ck.ne(hi, lo))
local first = ck.find(starts)
local k = first:numel()
local group = ck.cumsum(starts)
local e = ck.full({k}, n + 1, {dtype = "i64", device = "cuda"})
assert(e:device() == "cuda:0" and ck.equal(e:host(), ck.full({k}, n + 1, {dtype = "i64", device = "host"})), "ck.full i64 on cuda")
for _, o in ipairs {
  {"sort with indices", function() ck.sort(u) end},
  {"sort without indices", function() ck.sort(u, 1, {indices = false}) end},
  {"starts (ne, copy_ into ones)", function()
    local st = ck.ones({n}, {dtype = "bool", device = "cuda"}); st:narrow(1, 2, n):copy_(ck.ne(hi, lo)) end},
  {"find(starts)", function() ck.find(starts) end},
  {"index_select of the values", function() s:index_select(1, first) end},
  {"counts: full, copy_, sub", function()
    local ends = ck.full({k}, n + 1, {dtype = "i64", device = "cuda"})
    ends:narrow(1, 1, k - 1):copy_(first:narrow(1, 2, k)); ck.sub(ends, first) end},
  {"cumsum(starts) bool -> i64", function() ck.cumsum(starts) end},
  {"searchsorted of u in the values (inverse_by = search)", function() ck.searchsorted(s:index_select(1, first), u) end},
  {"scatter of the group numbers through perm", function()
    ck.scatter(ck.empty({n}, {dtype = "i64", device = "cuda"}), 1, perm, group) end},
} do
  local r = bench.run{fn = o[2], device = "cuda", warmup = 2, reps = 7}
  print(("  step %-44s %8.3f ms  (%s)"):format(o[1], r.ms, ck.last_ran().name))
end
