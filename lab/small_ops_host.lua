-- Host-side instruction count per small op (for callgrind): one op of the small-op table in a loop on
-- HOST arrays, so the Lua -> binding -> dispatcher -> allocator path runs without CUDA.
--   valgrind --tool=callgrind lua5.4 lab/small_ops_host.lua <case> <n>
--   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=lua_resume lua5.4 ... <case> <n>
-- Cases: fill, add, add_, sum, matmul, none (an empty loop). Per op = Ir / n (minus none's).
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
local case, n = arg[1] or "none", tonumber(arg[2] or "0")
local a, b = ck.rand(4, 4, {device = "host"}), ck.rand(4, 4, {device = "host"})
local m1, m2 = ck.rand(8, 8, {device = "host"}), ck.rand(8, 8, {device = "host"})
local f = ({
  fill = function() a:fill(1) end,
  add = function() local _ = a + b end,
  add_ = function() a:add_(b) end,
  sum = function() local _ = ck.sum(a) end,
  matmul = function() local _ = m1 * m2 end,
  none = function() end,
  -- the core directly, without init.lua's wrappers (for their share)
  add_core = function() local _ = ck.core.binary(16, a, b) end,
  sum_core = function() local _ = ck.core.reduce("sum", a) end,
})[case]
-- the loop runs in a coroutine so that callgrind can count it alone: --toggle-collect=lua_resume
for _ = 1, 200 do f() end
coroutine.wrap(function() for _ = 1, n do f() end end)()
