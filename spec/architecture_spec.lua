--- The layers of the C core (issue 30; docs/architecture.md): src/ is a folder per layer, and includes only
-- point down — kernels/ < core < host < ops < fused, io < lua. Checked from the sources, so that a shortcut
-- upwards fails here rather than growing into the include circle the flat src/ had. Also the size budget:
-- no C file over 600 lines and no Lua file over 500 (generated tables aside); the files still over it are
-- listed with the size they may not grow past, until they are split.
local H = require "spec.helpers"

-- dist (several devices and processes: collectives, NCCL loaded at run time, the rendezvous store) runs ops and
-- copies, so it sits beside fused and io; its store files include nothing of cukern at all. linalg (issue 34: solve,
-- lu, qr, svd, ... on LAPACKE and cuSOLVER) runs copies and ops around its library calls, so it sits there too.
local RANK = {kernels = 0, core = 1, host = 2, ops = 3, fused = 4, io = 4, dist = 4, linalg = 4, lua = 5}

local function files(pattern)
  local t = {}
  local p = io.popen("ls " .. pattern .. " 2>/dev/null")
  for line in p:lines() do t[#t + 1] = line end
  p:close()
  return t
end

local function layer_of(path)
  if path:match("^kernels/") then return "kernels" end
  return path:match("^src/([%w_]+)/")
end

-- Where a bare #include "x" resolves: the including file's folder first, then the -I list of the Makefile
-- (src/<layer> for every layer, then kernels/).
local INC_DIRS = {"src/core", "src/dist", "src/host", "src/ops", "src/fused", "src/io", "src/linalg", "src/lua", "src",
                  "kernels"}
local function exists(p) local f = io.open(p, "r"); if f then f:close(); return true end; return false end
local function resolve(from, name)
  local here = from:match("^(.*)/")
  if exists(here .. "/" .. name) then return here .. "/" .. name end
  for _, d in ipairs(INC_DIRS) do
    if exists(d .. "/" .. name) then return d .. "/" .. name end
  end
end

describe("the C core's layers", function()
  it("has no C file directly in src/ and one folder per layer", function()
    assert.same({}, files("src/*.c"))
    for l in pairs(RANK) do
      if l ~= "kernels" then assert.truthy(#files("src/" .. l .. "/*.[ch]") > 0, "src/" .. l .. "/ is empty") end
    end
  end)

  it("includes only the same layer or those below it (kernels/ includes nothing from src/)", function()
    local bad = {}
    local all = {}
    for _, pat in ipairs {"src/*/*.c", "src/*/*.h", "kernels/*.c", "kernels/*.h", "kernels/*/*.c", "kernels/*/*.cu",
                          "kernels/*/*.cuh", "kernels/*/*.h"} do
      for _, f in ipairs(files(pat)) do all[#all + 1] = f end
    end
    for _, f in ipairs(all) do
      local from = layer_of(f)
      local n = 0
      for line in io.lines(f) do
        n = n + 1
        local name = line:match('^%s*#%s*include%s+"([^"]+)"')
        if name then
          local target = resolve(f, name)
          if not target then
            bad[#bad + 1] = ("%s:%d includes %q, which is in no layer's folder"):format(f, n, name)
          else
            local to = layer_of(target) or "src"
            if to == "src" then to = "lua" end -- src/cukern.h, the public embedding header, is the binding's
            if RANK[to] > RANK[from] then
              bad[#bad + 1] = ("%s:%d (%s) includes %s (%s): arrows point down only"):format(f, n, from, target, to)
            end
          end
        end
      end
    end
    assert(#bad == 0, "includes upwards:\n" .. table.concat(bad, "\n"))
  end)

  -- files over the budget, with the size they had when this list was made: they may shrink, never grow; a file
  -- not listed may not pass the budget at all
  local OVER = {
    -- (none: every file is within the budget since issue 30; add one only with the size it has, to split)
  }
  it("keeps C files within 600 lines and Lua files within 500 (the listed ones may not grow)", function()
    local bad = {}
    for _, pat in ipairs {"src/*/*.c", "src/*/*.h", "kernels/*.c", "kernels/*.h", "kernels/*/*.c", "kernels/*/*.cu",
                          "kernels/*/*.cuh", "lua/cukern/*.lua"} do
      for _, f in ipairs(files(pat)) do
        local n = #H.read_file(f):gsub("[^\n]", "")
        local budget = f:match("%.lua$") and 500 or 600
        local cap = OVER[f] or budget
        if n > cap then
          bad[#bad + 1] = ("%s: %d lines (%s %d)"):format(f, n, OVER[f] and "it had" or "budget", cap)
        end
      end
    end
    assert(#bad == 0, "over the size budget (split along a seam instead):\n" .. table.concat(bad, "\n"))
  end)
end)

describe("the rung tables (kernels/<op>/rungs.def)", function()
  it("give each order dense, unique ranks, and each rung its file", function()
    local bad = {}
    for _, op in ipairs {"matmul", "reduce", "transpose", "elementwise", "index", "rows", "attention", "complex"} do
      local path = "kernels/" .. op .. "/rungs.def"
      local src = H.read_file(path)
      local seen = {{}, {}, {}, {}}
      local n = 0
      for id, name, ranks in src:gmatch("\nCK_RUNG%((%d+), ([%w_]+), [SN], [^\n]-, (%([%d, ]+%)),") do
        n = n + 1
        local col = 0
        for r in ranks:gmatch("%d+") do
          col = col + 1
          r = tonumber(r)
          if r > 0 then
            if seen[col][r] then bad[#bad + 1] = ("%s: %s and %s share rank %d of order %d"):format(path, seen[col][r], name, r, col) end
            seen[col][r] = name
          end
        end
        local file = ("kernels/%s/%02d_%s.cu"):format(op, tonumber(id), name)
        if name ~= "batched" and not io.open(file) then bad[#bad + 1] = path .. ": no file " .. file end
      end
      if n == 0 then bad[#bad + 1] = path .. ": no rows read" end
      for col = 1, 4 do
        local k = 0
        for r in pairs(seen[col]) do k = math.max(k, r) end
        for r = 1, k do
          if not seen[col][r] then bad[#bad + 1] = ("%s: order %d has no rank %d"):format(path, col, r) end
        end
      end
    end
    assert(#bad == 0, table.concat(bad, "\n"))
  end)
end)
