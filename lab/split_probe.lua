-- Where the two-GPU split of a bf16 batched product (examples/scaling_bench.lua, issue 31) loses to PyTorch's: each
-- device's time alone, the host time to issue one product (no sync inside), and the split done by hand in both
-- orders. Host clock between ck.sync("all") calls (examples/multi_gpu.lua); a diagnosis, not a benchmark.
--   lua5.4 lab/split_probe.lua            (a host with two or more GPUs)
local ck = require "cukern"
local mg = dofile("examples/multi_gpu.lua")
local devs, on_gpu = mg.devices()
assert(on_gpu, "split_probe: needs two GPUs")
local d0, d1 = devs[1], devs[2]
local A = ck.randn(16, 4096, 4096, {device = d0, dtype = "bf16"})
local B = ck.randn(16, 4096, 4096, {device = d0, dtype = "bf16"})
local A1, B1 = A:to(d1), B:to(d1)
local function t(label, f) print(("%-34s %9.3f ms"):format(label, mg.time(f, 10))) end
local function issue(label, f)
  for _ = 1, 2 do f() end
  local us = {}
  for i = 1, 7 do
    ck.sync("all"); local t0 = ck.core.clock(); f(); us[i] = (ck.core.clock() - t0) * 1e6; ck.sync("all")
  end
  print(("%-34s %9.1f us (median of 7; first %.1f)"):format(label, mg.median({table.unpack(us)}), us[1]))
end
t("16x4096^3 on " .. d0, function() ck.matmul(A, B):free() end)
print("  ran " .. ck.last_ran().name)
t("16x4096^3 on " .. d1, function() ck.matmul(A1, B1):free() end)
local h0, b0, h1, b1 = A:narrow(1, 1, 8), B:narrow(1, 1, 8), A1:narrow(1, 9, 16), B1:narrow(1, 9, 16)
t("8x4096^3 on " .. d0, function() ck.matmul(h0, b0):free() end)
t("8x4096^3 on " .. d1, function() ck.matmul(h1, b1):free() end)
local sA, rB = ck.shard(A, {devices = devs, dim = 1}), ck.replicate(B, devs)
t("shard matmul (2 GPUs)", function() sA:matmul(rB):free() end)
t("by hand d0 then d1", function() local x, y = ck.matmul(h0, b0), ck.matmul(h1, b1); x:free(); y:free() end)
t("by hand d1 then d0", function() local y, x = ck.matmul(h1, b1), ck.matmul(h0, b0); x:free(); y:free() end)
t("by hand, outputs kept", function() ck.matmul(h0, b0); ck.matmul(h1, b1) end)
local s = ck.randn(16, 64, 64, {device = d0, dtype = "bf16"})
issue("issue 16x64^3 on " .. d0, function() ck.matmul(s, s):free() end)
issue("issue 8x4096^3 on " .. d0, function() ck.matmul(h0, b0):free() end)
issue("issue 8x4096^3 on " .. d1, function() ck.matmul(h1, b1):free() end)
issue("issue shard matmul", function() sA:matmul(rB):free() end)
issue("issue ck.sync('all') alone", function() end)
-- what the issue time is made of: the rung (forced), the output's allocation (out= given), a tiny product
local c0 = ck.empty({8, 4096, 4096}, {device = d0, dtype = "bf16"})
for _, v in ipairs {"persistent", "warp_specialized", "wgmma_tma", "cublas"} do
  issue("issue 8x4096^3 " .. v, function() ck.matmul(h0, b0, {variant = v}):free() end)
  issue("issue 8x4096^3 " .. v .. " out=", function() ck.matmul(h0, b0, {variant = v, out = c0}) end)
  t("8x4096^3 " .. v .. " (2 GPUs: by hand)", function()
    local x, y = ck.matmul(h0, b0, {variant = v}), ck.matmul(h1, b1, {variant = v}); x:free(); y:free() end)
end
local e0 = ck.empty({8, 4096, 4096}, {device = d0, dtype = "bf16"})
issue("issue ck.empty 8x4096^2 bf16 + free", function() ck.empty({8, 4096, 4096}, {device = d0, dtype = "bf16"}):free() end)
issue("issue e0:fill(1)", function() e0:fill(1) end)
local x = ck.randn(1024, {device = d0})
issue("issue x + 1 on " .. d0, function() local _ = x + 1 end)
