-- Puts this checkout's Lua modules (lua/) and C module (cukern/core.so) first on the module paths, wherever
-- an example is started from (`lua5.4 examples/x.lua` in the root, `lua5.4 x.lua` in examples/, or an
-- absolute path). Every example begins with
--   local paths = dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")
-- and gets {root = the checkout's root (".": started from it), lua_path =, lua_cpath =} back; demo.lua
-- hands lua_path and lua_cpath on to the ladders it starts.
local dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
local root = dir == "examples" and "." or dir:match("^(.*)/examples$") or (dir .. "/..")
local paths = {
  root = root,
  lua_path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua",
  lua_cpath = root .. "/?.so",
}
package.path = paths.lua_path .. ";" .. package.path
package.cpath = paths.lua_cpath .. ";" .. package.cpath
return paths
