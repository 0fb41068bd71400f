--- Child process of spec/badinput_spec.lua: runs bad-input cases and reports each on stdout, flushing as it
-- goes, so that the parent can tell which case a crash happened in and continue after it.
--   lua5.4 spec/badinput_child.lua <cases file> <first case>
-- The cases file returns a list of {code = "..."}; each case runs as its own chunk named "caller.lua", with
-- the fixtures below set up first and the call on the line before the chunk's last. Output, one line each:
--   BEGIN <i>
--   RES <i> <"error"|"silent"> <line the call is on> <message with newlines as \n>
package.path = "./lua/?.lua;./lua/?/init.lua;./?.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"

local cases = dofile(arg[1])
local first = tonumber(arg[2]) or 1

-- Fixtures every case can use: A f32 [3x4], B f32 [4x5], V f32 [3], I i32 [3], D f64 [3x4], F freed, S 0-d.
local PRELUDE = table.concat({
  "local ck = ...",
  "local A, B, V = ck.rand(3, 4), ck.rand(4, 5), ck.rand(3)",
  "local I, D, S = ck.array({1, 2, 3}, {dtype = 'i32'}), ck.rand(3, 4, {dtype = 'f64'}), ck.scalar(2)",
  "local F = ck.rand(2, 2); F:free()",
  "local E = ck.zeros(1):expand(3)",
  "local X = setmetatable({}, {__index = function() error('metatable probe') end})",
}, " ")

local function esc(s) return (tostring(s):gsub("\\", "\\\\"):gsub("\n", "\\n")) end

for i = first, #cases do
  io.write("BEGIN ", i, "\n")
  io.flush()
  local c = cases[i]
  -- not `return <call>`: a tail call would drop the caller's frame, and with it the line to point at
  local src = PRELUDE .. "\n" .. (c.setup and (c.setup .. "\n") or "") .. "local r = " .. c.code .. "\nreturn r\n"
  local line = select(2, src:gsub("\n", "")) - 1 -- the line of the call
  local chunk, cerr = load(src, "=caller.lua", "t")
  if not chunk then
    io.write("RES ", i, " syntax ", line, " ", esc(cerr), "\n")
  else
    local ok, err = pcall(chunk, ck)
    if ok then io.write("RES ", i, " silent ", line, " -\n")
    else io.write("RES ", i, " error ", line, " ", esc(err), "\n") end
  end
  io.flush()
  collectgarbage()
end
io.write("DONE\n")
