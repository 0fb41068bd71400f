--- The caching device allocator's own C test (spec/c/alloc_test.c, `make alloc-test`, mk/alloc_test.mk) run as part
-- of the specs, so that the allocator's carving of small blocks from segments, its free lists and ck.empty_cache are
-- checked in CI, where there is no GPU: storage.c runs there against a fake device heap that refuses a cudaFree of a
-- pointer it did not hand out and of memory still in use. One `it` per "ok - ..." / "not ok - ..." line; the run
-- must end with PASSED and exit 0.
local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

-- `make sanitize` runs the specs from a stage without the Makefile (build-asan/stage): skipped there, as the store's
-- C test is (its sanitizer build is `make alloc-test-asan`)
local STAGE = not io.open("Makefile")

describe("the caching allocator (spec/c/alloc_test.c, no GPU)", function()
  if STAGE then
    pending("runs with make (not in the make sanitize stage, which has no Makefile: make alloc-test-asan there)")
    return
  end
  local built, build_out = sh("make -s build/spec/alloc_test")
  local ok, out = false, build_out
  if built then ok, out = sh("timeout 120 build/spec/alloc_test") end
  it("builds and exits 0 with PASSED", function()
    assert.is_true(built, "build failed:\n" .. build_out)
    assert.is_true(ok and out:find("\nPASSED\n", 1, true) ~= nil, out)
  end)
  for line in out:gmatch("[^\n]+") do
    local good, what = line:match("^(n?o?t? ?ok) %- (.*)$")
    if good then
      it(what, function() assert.equals("ok", good, line) end)
    end
  end
  -- the same under AddressSanitizer and UBSan, with the leak check (ck_alloc_destroy with blocks still in use)
  local abuilt, aout = sh("make -s build/spec/alloc_test_asan")
  if abuilt then
    local aok, arun = sh("ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 " ..
      "timeout 300 build/spec/alloc_test_asan")
    it("runs clean under AddressSanitizer and UBSan, leaks included", function()
      assert.is_true(aok and arun:find("\nPASSED\n", 1, true) ~= nil, arun)
    end)
  else
    pending("the AddressSanitizer build (no libasan here?): " .. aout:sub(1, 200))
  end
end)
