-- spec/gpu_multi_sanitize.lua is what compute-sanitizer runs over the several-GPU paths on the GPU host
-- (lab/issue31-gpu.sh stage c); here it runs on three host devices, so that the script itself cannot rot.
describe("the several-GPU sanitizer script", function()
  it("runs clean on host devices (CUKERN_GPU_SANITIZE_HOST=1, CUKERN_HOST_DEVICES=3)", function()
    local lua = os.getenv("LUA") or "lua5.4"
    local p = assert(io.popen(("CUKERN_GPU_SANITIZE_HOST=1 CUKERN_HOST_DEVICES=3 %s spec/gpu_multi_sanitize.lua 2>&1; echo \"rc=$?\"")
      :format(lua)))
    local out = p:read("a")
    p:close()
    assert.matches("gpu_multi_sanitize: %d+ cases, 0 mismatches %(host: host:0, host:1, host:2%)", out)
    assert.matches("rc=0", out)
  end)
end)
