--- The rendezvous store's own C test (spec/c/store_test*.c, `make store-test`, mk/dist_store.mk) run as part of the
-- specs: built with make (the same rule and flags as `make store-test`), then run once per kind of store ("file"
-- and "tcp", its argument), the two at once to keep the time down (most of it is waiting: timeouts, other ranks).
-- One `it` per "ok - ..." / "not ok - ..." line it prints; the run must end with "PASS: 0 checks failed".
-- Also bin/ckrun's own checks (spec/ckrun_test.sh, `make ckrun-test`: about 4 s), the same way.
local H = require "spec.helpers"

local BIN = "build/spec/store_test"

local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local ok, how, code = p:close()
  return ok, out, how, code
end

-- `make sanitize` runs the specs from a stage without the Makefile (build-asan/stage): the store's C test has its own
-- sanitizer targets (make store-test-asan, store-test-valgrind) and runs in make test; skipped there.
local STAGE = not io.open("Makefile")
local built, build_out = false, "no Makefile here (the make sanitize stage)"
if not STAGE then built, build_out = sh("make -s " .. BIN) end

local RESULTS = {}
if built then
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -m 700 " .. dir))
  -- both kinds at once; each writes its own output and exit status
  os.execute(("(timeout 120 %s file >%s/file.out 2>&1; echo $? >%s/file.rc) & " ..
              "(timeout 120 %s tcp >%s/tcp.out 2>&1; echo $? >%s/tcp.rc) & wait"):format(BIN, dir, dir, BIN, dir, dir))
  for _, kind in ipairs {"file", "tcp"} do
    local out = H.read_file(dir .. "/" .. kind .. ".out")
    local rc = tonumber((H.read_file(dir .. "/" .. kind .. ".rc"):match("%d+")))
    RESULTS[#RESULTS + 1] = {kind = kind, out = out, rc = rc}
  end
  os.execute("rm -rf " .. dir)
end

local LUA = os.getenv("LUA") or "lua5.4"
local CKRUN_OK, CKRUN_OUT = true, ""
if not STAGE then CKRUN_OK, CKRUN_OUT = sh(("LUA=%q timeout 120 sh spec/ckrun_test.sh"):format(LUA)) end

describe("bin/ckrun (spec/ckrun_test.sh, as `make ckrun-test` runs it)", function()
  if STAGE then -- (its C helper is compiled by cc, which the stage's preloaded libasan would instrument too)
    it("runs in make test", function() pending("make sanitize runs from a stage without the Makefile; ckrun's checks "
      .. "(a shell script and a plain C helper, no cukern core) run in make test") end)
    return
  end
  for line in CKRUN_OUT:gmatch("[^\n]+") do
    local st, rest = line:match("^(not ok) %- (.*)$")
    if not st then st, rest = line:match("^(ok) %- (.*)$") end
    if st then it(rest, function() assert(st == "ok", line) end) end
  end
  it("passes", function() assert(CKRUN_OK, "spec/ckrun_test.sh failed:\n" .. CKRUN_OUT:sub(-3000)) end)
end)

describe("the rendezvous store (spec/c/store_test.c, as `make store-test` runs it)", function()
  if STAGE then
    it("runs in make test", function() pending("make sanitize runs from a stage without the Makefile; the store's C "
      .. "test runs in make test, and under ASan/UBSan and valgrind with make store-test-asan / store-test-valgrind") end)
    return
  end
  it("builds", function()
    assert(built, "make " .. BIN .. " failed:\n" .. tostring(build_out))
  end)
  for _, r in ipairs(RESULTS) do
    describe(r.kind .. " run", function()
      local seen = {}
      for line in r.out:gmatch("[^\n]+") do
        local st, rest = line:match("^(not ok) %- (.*)$")
        if not st then st, rest = line:match("^(ok) %- (.*)$") end
        if st and not seen[rest] then
          seen[rest] = true
          it(rest, function() assert(st == "ok", line) end)
        end
      end
      it("passes: exit status 0 and PASS: 0 checks failed", function()
        assert(r.rc == 0 and r.out:find("PASS: 0 checks failed", 1, true),
          ("store_test %s: exit status %s\n%s"):format(r.kind, tostring(r.rc), r.out:sub(-3000)))
      end)
    end)
  end
end)
