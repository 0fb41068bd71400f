-- CUDA graphs from Lua (ck.graph): record once, replay with one launch; arrays made and read during the
-- capture stay alive with the graph; host work during a capture is refused and the capture abandoned.
local H = require "spec.helpers"
local ck = H.ck

describe("ck.graph", function()
  it("without a GPU says why", function()
    if ck.has_cuda() then return pending("this machine has a GPU") end
    local ok, err = pcall(ck.graph, function() end)
    assert.is_false(ok)
    assert.matches("ck.graph: no CUDA device", tostring(err), 1, true)
  end)

  it("replays a chain of ops on new input values, into the arrays it made", H.gpu(function()
    local x = H.rand({1000}, "f32", "cuda")
    local y = ck.empty(1000, {device = "cuda"})
    local z
    local g = ck.graph(function()
      y:copy_((x * 2 + 1):exp_())     -- temporaries made and dropped inside
      z = ck.sum(y:reshape(10, 100), 2) -- a result made inside: alive with the graph
    end)
    assert.truthy(g:nodes() >= 3)
    for _ = 1, 3 do
      local v = H.rand({1000}, "f32", "cuda")
      x:copy_(v) -- new values, same memory
      H.poison(y)
      g:replay()
      local want_y = ((v:host() * 2 + 1):exp_())
      H.assert_close(y, want_y, {rtol = 1e-5, atol = 1e-6}, "replayed y")
      H.assert_close(z, ck.sum(want_y:reshape(10, 100), 2), {rtol = 1e-5, atol = 1e-5}, "replayed z")
    end
  end))

  it("records the small-op paths (driver-API launches: fill, dense elementwise, tiny sum and matmul)", H.gpu(function()
    local a, b = H.rand({4, 4}, "f32", "cuda"), H.rand({4, 4}, "f32", "cuda")
    local m1, m2 = H.rand({8, 8}, "f32", "cuda"), H.rand({8, 8}, "f32", "cuda")
    local f = ck.empty({4, 4}, {device = "cuda"})
    local s, c, d
    local g = ck.graph(function()
      f:fill(3)
      d = a + b
      d:add_(f)
      s = ck.sum(d)
      c = m1 * m2
    end)
    assert.truthy(g:nodes() >= 5, "nodes: " .. g:nodes())
    for _ = 1, 3 do
      local va, vm = H.rand({4, 4}, "f32", "host"), H.rand({8, 8}, "f32", "host")
      a:copy_(va)
      m1:copy_(vm)
      H.poison(f); H.poison(d); H.poison(s); H.poison(c)
      g:replay()
      local want_d = va + b:host() + 3
      H.assert_close(f, ck.full({4, 4}, 3), {rtol = 0, atol = 0}, "replayed fill")
      H.assert_close(d, want_d, {rtol = 1e-6, atol = 1e-6}, "replayed a + b + f")
      H.assert_close(s, ck.sum(want_d), {rtol = 1e-5, atol = 1e-5}, "replayed sum")
      H.assert_close(c, vm * m2:host(), {rtol = 1e-5, atol = 1e-5}, "replayed matmul")
    end
  end))

  it("keeps what it recorded alive after Lua drops it, and gives it back when freed", H.gpu(function()
    local x = H.rand({4096}, "f32", "cuda")
    local out
    local g = ck.graph(function() out = x + 1 end)
    collectgarbage(); collectgarbage() -- earlier specs' garbage must not count in `before`
    local before = ck.memory("cuda").in_use
    g:replay() -- recording ran nothing: out holds x + 1 only after a replay
    local keep = out:to("host")
    out = nil
    collectgarbage(); collectgarbage()
    local junk = {}
    for i = 1, 20 do junk[i] = ck.zeros(4096, {device = "cuda"}) end -- would reuse a freed block
    g:replay()
    for i = 1, 20 do assert.equal(0, ck.sum(junk[i]):item(), "a replay wrote into memory it no longer owned") end
    assert.truthy(ck.memory("cuda").in_use >= before)
    g:free()
    H.assert_close(keep, x:host() + 1)
  end))

  it("refuses host work during a capture, abandons it, and the stream works after", H.gpu(function()
    local x = H.rand({16}, "f32", "cuda")
    for _, bad in ipairs {
      function() return x:item() end,
      function() return x:totable() end,
      function() return ck.sync("cuda") end,
      function() return ck.rand(4, {device = "host"}) + 1 end,
    } do
      local ok, err = pcall(ck.graph, function() local _ = x * 3; return bad() end)
      assert.is_false(ok)
      assert.matches("ck.graph", tostring(err), 1, true)
      assert.is_false(ck.core.capturing())
      H.assert_close((x * 2):host(), x:host() * 2) -- the stream still works
    end
    local ok, err = pcall(ck.graph, function() ck.graph(function() end) end)
    assert.is_false(ok)
    assert.matches("do not nest", tostring(err), 1, true)
  end))
end)
