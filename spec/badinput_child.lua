--- Child process of spec/badinput_spec.lua: runs bad-input cases and reports each on stdout, flushing as it
-- goes, so that the parent can tell which case a crash happened in and continue after it.
--   lua5.4 spec/badinput_child.lua <cases file> <first case> <scratch directory>
-- The cases file returns a list of {code = "..."}; each case runs as its own chunk named "caller.lua", with
-- the fixtures below set up first and the call on the line before the chunk's last. Output, one line each:
--   BEGIN <i>
--   RES <i> <"error"|"silent"> <line the call is on> <message with newlines as \n>
package.path = "./lua/?.lua;./lua/?/init.lua;./?.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"

local cases = dofile(arg[1])
local first = tonumber(arg[2]) or 1
-- Files the cases write or read (ck.save/ck.load) go under a scratch directory the parent made and removes;
-- so does the kernel disk cache, set again after every case (a case may change it).
local T = arg[3] or "."
local function reset_cache() if ck.cache_dir then ck.cache_dir(T .. "/cache") end end
reset_cache()

-- Fixtures every case can use: A f32 [3x4], B f32 [4x5], V f32 [3], I i32 [3], D f64 [3x4], F freed, S 0-d,
-- T the scratch directory; W(name, bytes) writes T/name and returns its path, R(name) reads it back;
-- NPY(name, header dict, data) writes a .npy file by hand (version 1.0, the header padded as NumPy pads it).
local PRELUDE = table.concat({
  "local ck, T = ...",
  "local function W(n, s) local f = assert(io.open(T .. '/' .. n, 'wb')); f:write(s); f:close(); return T .. '/' .. n end",
  "local function R(n) local f = assert(io.open(T .. '/' .. n, 'rb')); local s = f:read('a'); f:close(); return s end",
  "local function NPY(n, h, data) h = h .. string.rep(' ', 63 - (10 + #h) % 64) .. '\\n';" ..
    " return W(n, '\\147NUMPY\\1\\0' .. string.pack('<I2', #h) .. h .. (data or '')) end",
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
    local ok, err = pcall(chunk, ck, T)
    if ok then io.write("RES ", i, " silent ", line, " -\n")
    else io.write("RES ", i, " error ", line, " ", esc(err), "\n") end
  end
  io.flush()
  reset_cache()
  collectgarbage()
end
io.write("DONE\n")
