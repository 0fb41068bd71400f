-- lab/scan_probe.lua: each scan rung once on 2^20+1 elements and on 300x5000 (both dims), timed one by one with
-- a flush after each, so that a slow or stuck rung is named (scan_spec's large GPU test ran past 110 s).
local ck = require "cukern"
local core = require "cukern.core"
local function now() return core.clock() end
for _, case in ipairs {{{2 ^ 20 + 1}, 1}, {{300, 5000}, 1}, {{300, 5000}, 2}} do
  for _, dt in ipairs {"f32", "i32", "f16"} do
    local a = ck.rand(case[1], {device = "cuda"}):mul(8):floor():to(dt)
    for _, v in ipairs(ck.variants("scan")) do
      for _, op in ipairs {"cumsum", "cummax"} do
        local c0 = now()
        local ok, err = pcall(ck[op], a, case[2], {variant = v.name})
        ck.sync()
        io.write(("%-18s %-6s %-4s %-10s dim %d %s %.3f s %s\n"):format(v.name, op, dt, table.concat(case[1], "x"),
          case[2], ok and "ok" or "err", now() - c0, ok and "" or tostring(err):sub(1, 80)))
        io.stdout:flush()
      end
    end
  end
end
