--- NVTX ranges (issue 36): ck.nvtx.range/push/pop and CUKERN_NVTX=1's range per op, named after the calling Lua line,
-- as a profiler sees them. A child process runs a script with spec/c/nvtx_log.c as its NVTX injection library (what
-- Nsight loads the same way), which writes every push and pop to a file; no GPU or profiler needed.

local H = require "spec.helpers"
local sh = H.sh -- (ok, output)

local SCRIPT = [[
local ck = require "cukern"
local x = ck.rand(10, {device = "host"})
local y = x + 1
ck.nvtx.range("frame", function() return ck.sum(y) end)
ck.nvtx.push("outer"); local z = y * 2; ck.nvtx.pop()
]]

describe("NVTX ranges (an injection library records them)", function()
  local log
  setup(function()
    if os.getenv("CUKERN_SANITIZE") then return end
    local ok, out = sh((os.getenv("MAKE") or "make") .. " -s build/nvtx_log.so")
    assert(ok, "building the NVTX injection library failed:\n" .. out)
    local script, logf = os.tmpname(), os.tmpname()
    local f = assert(io.open(script, "w")); f:write(SCRIPT); f:close()
    ok, out = sh(("env NVTX_INJECTION64_PATH=%s/build/nvtx_log.so NVTX_LOG=%s CUKERN_NVTX=1 %s %s"):format(
      os.getenv("PWD") or ".", logf, os.getenv("LUA") or "lua5.4", script))
    assert(ok, "the script failed:\n" .. out)
    f = assert(io.open(logf)); log = f:read("a"); f:close()
    log = log:gsub(script:gsub("%p", "%%%0"), "script") -- (the temporary name, as the script's name)
    os.remove(script); os.remove(logf)
  end)

  it("CUKERN_NVTX=1 names one range per op after the Lua line that called it, nested in ck.nvtx's ranges", function()
    if os.getenv("CUKERN_SANITIZE") then return pending("make sanitize runs from a stage without the Makefile") end
    assert.equals(table.concat({
      "push script:3 add", "pop",
      "push frame", "push script:4 sum", "pop", "pop",
      "push outer", "push script:5 mul", "pop", "pop", ""}, "\n"), log)
  end)
end)
