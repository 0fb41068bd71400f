-- The short table the GPU-host check prints last: per ladder and case, the reference, the best own variant
-- and its share of the reference, read back from the results JSON (the files the ladders recorded in the
-- directory's manifest.txt).
--   lua5.4 examples/summary.lua [results_dir]
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")
local json = require "cukern.json"
local results = require "cukern.report_results"

local dir = arg[1] or os.getenv("CUKERN_RESULTS") or "bench/results"

local function case_of(row)
  local shape = row.shape
  if type(shape) == "table" then shape = table.concat(shape, "x") end
  if row.m then shape = ("%dx%dx%d"):format(row.m, row.n, row.k) end
  return table.concat({row.op or "", row.dtype or "", shape or "", row.layout ~= "contiguous" and row.layout or "", row.dim and ("dim " .. tostring(row.dim)) or ""}, " ")
    :gsub("%s+", " "):gsub("^ ", "")
end

local lines = {}
for _, name in ipairs(results.list(dir)) do
  local path = dir .. "/" .. name
  local ok, doc = pcall(json.read, path)
  if ok and type(doc) == "table" and doc.us_per_op then
    lines[#lines + 1] = ("%-11s %-34s %-16s %9s %-18s %9.2f us/op"):format("overhead", (doc.case or "a:fill(1)"):sub(1, 34),
      "-", "-", "cukern", doc.us_per_op)
  elseif ok and type(doc) == "table" and doc.rows then
    local ladder = doc.ladder or path:match("([%w_]+)%-[^/]*%.json$") or "?"
    local rk = results.rate_key(ladder)
    local cases, order = {}, {}
    for _, r in ipairs(doc.rows) do
      if type(r[rk]) == "number" then
        local c = case_of(r)
        if not cases[c] then cases[c] = {}; order[#order + 1] = c end
        local e = cases[c]
        -- id 0: the library reference; variant "memcpy" (id -2): the bandwidth bound, timed the same way in
        -- every ladder; the matmul ladder's "a * b (Lua loop, default dispatch)" row times whatever the
        -- dispatcher picks (cuBLAS for f32): not an own variant; the best own variant is the best of the rest
        local bound = r.variant == "memcpy"
        local dispatch = type(r.variant) == "string" and r.variant:find("default dispatch", 1, true)
        if bound and not e.bound then e.bound = r end
        if r.id == 0 and not bound and not e.lib then e.lib = r end
        if r.id ~= 0 and not bound and not dispatch and r.correct ~= false and (not e.best or r[rk] > e.best[rk]) then
          e.best = r
        end
      end
    end
    for _, c in ipairs(order) do
      local e = cases[c]
      e.ref = (doc.reference == "memcpy" and e.bound) or e.lib or e.bound
      local b = e.best or {}
      lines[#lines + 1] = ("%-11s %-34s %-16s %9s %-18s %9s %7s %5s %7s %4s"):format(ladder, c:sub(1, 34),
        e.ref and e.ref.variant or "-", e.ref and ("%.1f"):format(e.ref[rk]) or "-",
        b.variant or "-", b[rk] and ("%.1f"):format(b[rk]) or "-",
        b.pct_of_ref and ("%.1f%%"):format(b.pct_of_ref) or "-", math.tointeger(b.regs) or "-",
        math.tointeger(b.smem) or "-", type(b.occ) == "number" and ("%.0f%%"):format(100 * b.occ) or "-")
    end
  end
end
print(("%-11s %-34s %-16s %9s %-18s %9s %7s %5s %7s %4s"):format("ladder", "case", "reference", "rate", "best own", "rate",
  "% ref", "regs", "smem B", "occ"))
for _, l in ipairs(lines) do print(l) end
print("(rate: TFLOP/s for matmul, GB/s otherwise; % ref: best own variant vs the reference in the same run; regs, "
  .. "shared memory per block and theoretical occupancy of its main kernel, where the results recorded them)")
