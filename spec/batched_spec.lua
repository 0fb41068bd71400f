-- The batch of small ops (kernels/batched/): small dense elementwise ops, reductions and matmuls are queued
-- and run by one launch per batch, in issue order. These specs issue many ops before reading anything (so
-- batches really hold many records, and overflow), mix them with work that must flush the batch first
-- (larger ops, copies, reads, run-time kernels, graphs), and compare everything with the host backend.
-- Single ops on the `batched` variant of every op and dtype are in the ladders' own specs (elementwise,
-- half, reduce, matmul: they loop over every registry row).
local H = require "spec.helpers"
local ck = H.ck

local TOL = {f32 = {rtol = 1e-4, atol = 1e-5}, f64 = {rtol = 1e-11, atol = 1e-12}, i32 = {rtol = 0, atol = 0},
             f16 = {rtol = 4e-3, atol = 4e-3}, bf16 = {rtol = 3e-2, atol = 3e-2}}

-- A pair of mirrors: the same array on the host and on cuda.
local function pair(shape, dt)
  local h = H.rand(shape, dt, "host")
  return {h = h, c = h:cuda(), dt = dt}
end

describe("batched small ops", function()
  it("is on by default and can be turned off and on", function()
    assert.is_true(ck.batching())
    assert.is_false(ck.batching(false))
    assert.is_true(ck.batching(true))
    assert.is_true(ck.batching())
  end)

  it("many dependent ops per launch (and more than one batch) match the host, in issue order", H.gpu(function()
    local shapes = {{4, 4}, {1}, {7, 13}, {64, 64}, {3, 5, 7}, {4096}}
    for _, dt in ipairs {"f32", "f64", "i32", "f16", "bf16"} do
      local xs = {}
      for i, s in ipairs(shapes) do xs[i] = {pair(s, dt), pair(s, dt)} end
      -- ~40 ops per shape, 240 in all, read only at the end: several full batches of dependent records
      for _, p in ipairs(xs) do
        local x, y = p[1], p[2]
        for r = 1, 5 do
          for _, side in ipairs {"h", "c"} do
            local a, b = x[side], y[side]
            a:add_(b)
            a:mul_(dt == "i32" and 3 or 0.5)
            a:sub_(b)
            a:abs_()
            local t = a + b -- a result made, used and dropped inside the batch
            b:copy_(t)
            b:maximum_(a)
            if dt ~= "i32" then a:sqrt_() end
            if r == 3 then a:fill(dt == "i32" and 7 or 0.25) end
          end
        end
      end
      for i, p in ipairs(xs) do
        for j = 1, 2 do
          local label = ("%s [%s] operand %d"):format(dt, table.concat(shapes[i], "x"), j)
          H.assert_close(p[j].c, p[j].h, TOL[dt], label)
        end
      end
    end
  end))

  it("reductions, matmuls and casting copies join the batch and feed later ops", H.gpu(function()
    for _, dt in ipairs {"f32", "f64"} do
      local a, b, v = pair({8, 8}, dt), pair({8, 8}, dt), pair({5, 7}, dt)
      local out = {}
      for _, side in ipairs {"h", "c"} do
        local A, B, V = a[side], b[side], v[side]
        local c = A * B               -- matmul 8x8x8
        c:add_(A)                     -- reads the product
        local s = ck.sum(c)           -- whole-array sum of it
        local rows = ck.max(V, 2)     -- per-row max (thread-per-output records)
        local cols, idx = ck.min(V, 1) -- values and 1-based indices
        local mean = ck.mean(c, 1)
        local h16 = c:to("f16")       -- casting copy
        local back = h16:to(dt)
        out[side] = {c, s, rows, cols, idx, mean, back}
        out[side].ran = ck.last_ran().name -- (before the comparisons: their copies to the host set last_ran too)
      end
      local names = {"matmul + a", "sum", "max rows", "min cols", "argmin cols", "mean", "f16 round trip"}
      for k = 1, #names do
        local tol = k == 5 and {rtol = 0, atol = 0} or (k == 7 and TOL.f16 or TOL[dt])
        H.assert_close(out.c[k], out.h[k], tol, dt .. " " .. names[k])
      end
      assert.equals("batched", out.c.ran)
    end
  end))

  it("flushes before the work that does not join it: larger ops, copies, views, transposes, run-time kernels", H.gpu(function()
    local x = pair({16, 16}, "f32")
    local big = pair({100, 100}, "f32")
    for _, side in ipairs {"h", "c"} do
      local X, Big = x[side], big[side]
      X:mul_(2)                                   -- batched
      Big:narrow(1, 1, 16):narrow(2, 1, 16):copy_(X) -- strided copy into a big array: not batched
      Big:add_(1)                                 -- 10000 elements: contiguous rung
      X:add_(Big:narrow(1, 1, 16):narrow(2, 1, 16):contiguous()) -- batched again, reads the big op's result
      X:copy_(X:t():contiguous())                 -- transpose rung, then a batched copy
    end
    H.assert_close(x.c, x.h, TOL.f32, "x")
    H.assert_close(big.c, big.h, TOL.f32, "big")

    -- a run-time kernel reads what queued ops wrote
    local k = ck.kernel([[
extern "C" __global__ void axpy(float *y, const float *x, float a, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}]], "axpy", {"f32*", "const f32*", "f32", "i64"})
    local y, z = pair({100}, "f32"), pair({100}, "f32")
    z.c:mul_(3); z.h:mul_(3)
    y.c:fill(1); y.h:fill(1)
    k:launch(1, 128, y.c, z.c, 2.0, 100)
    y.c:add_(z.c) -- queued after the kernel
    H.assert_close(y.c, y.h + z.h * 2 + z.h, TOL.f32, "axpy between batched ops")
  end))

  it("temporaries collected while their ops are still queued do not corrupt later results", H.gpu(function()
    local x, acc = pair({32}, "f64"), pair({32}, "f64")
    local before = ck.memory("cuda").in_use
    for i = 1, 300 do
      for _, side in ipairs {"h", "c"} do
        local t = x[side] * i -- dropped at once: its block goes back to the cache and is reused
        acc[side]:add_(t)
      end
      if i % 50 == 0 then collectgarbage() end
    end
    H.assert_close(acc.c, acc.h, TOL.f64, "sum of temporaries")
    collectgarbage()
    assert.truthy(ck.memory("cuda").in_use <= before + 4096, "no device memory kept: " .. ck.memory("cuda").in_use - before)
  end))

  it("a graph records its ops one launch each, and ops queued before the capture are not in it", H.gpu(function()
    local x = ck.empty(64, {device = "cuda"})
    x:fill(1) -- queued before the capture: runs once, before it, and is not replayed
    local g = ck.graph(function() x:mul_(2) end) -- recorded (a capture does not run anything)
    assert.equals(1, g:nodes())
    g:replay()
    g:replay()
    x:add_(0.5) -- queued after the replays
    H.assert_close(x, ck.full({64}, 4.5), {rtol = 0, atol = 0}, "fill, two replays of *2, +0.5")
  end))

  it("says which variant ran: batched up to 4096 elements, launching rungs past it or when turned off", H.gpu(function()
    local a = H.rand({4096}, "f32", "cuda")
    local _ = a + 1
    assert.equals("batched", ck.last_ran().name)
    local b = H.rand({4097}, "f32", "cuda")
    _ = b + 1
    assert.equals("contiguous", ck.last_ran().name)
    _ = ck.add(b, 1, {variant = "batched"})
    assert.equals("contiguous", ck.last_ran().name)
    assert.matches("4096", ck.last_ran().note, 1, true)
    ck.batching(false)
    _ = a + 1
    assert.equals("contiguous", ck.last_ran().name)
    local got = ck.add(a, 1, {variant = "batched"}) -- asked for by name: its one record runs at once
    assert.equals("batched", ck.last_ran().name)
    H.assert_close(got, a:host() + 1, TOL.f32, "batched with batching off")
    ck.batching(true)
    ck.sync_mode(true) -- CUKERN_SYNC: every op launches and is checked at once
    _ = a + 1
    assert.equals("contiguous", ck.last_ran().name)
    ck.sync_mode(false)
  end))
end)
