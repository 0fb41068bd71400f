--- Child of spec/assembly_spec.lua: the assembly functions with inputs on different devices, in a process with
-- CUKERN_HOST_DEVICES=2 (host:0 and host:1: distinct devices on the host backend). One line per check
-- (spec/child_harness.lua).   CUKERN_HOST_DEVICES=2 lua5.4 spec/assembly_child.lua
local T = require "spec.child_harness"
local ck = require "cukern"

T.check("two host devices", function() T.eq(ck.device("host:1").id, "host:1") end)

T.check("ck.cat and ck.stack refuse arrays on two devices, naming both and the :to that fixes it", function()
  local a, b = ck.rand(2, 3, {device = "host:0"}), ck.rand(2, 3, {device = "host:1"})
  T.raises(function() return ck.cat({a, b}) end,
    {"ck.cat: list[1] is on host:0 and list[2] on host:1", "list[2]:to(\"host:0\")"})
  T.raises(function() return ck.stack({a, a, b}, 2) end,
    {"ck.stack: list[1] is on host:0 and list[3] on host:1", "list[3]:to(\"host:0\")"})
end)

T.check("one device other than the default: the result stays there", function()
  local b = ck.rand(2, 3, {device = "host:1"})
  local results = {ck.cat({b, b}, 2), ck.stack({b, b}), ck.tile(b, {2, 1}), ck.flip(b), ck.roll(b, 1, 2),
    ck.tril(b), ck.triu(b, 1), ck.diag(b), ck.pad(b, 1), ck.split(b, 1)[1], ck.chunk(b, 2, 2)[1]}
  for i, r in ipairs(results) do T.eq(r:device(), "host:1", "result " .. i) end
  T.same_values(ck.cat({b, b}, 2):narrow(2, 4, 6), b, "cat on host:1")
  T.same_values(ck.flip(ck.flip(b)), b, "flip twice on host:1")
end)

T.finish()
