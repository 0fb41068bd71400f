--- Issue order (issue 29): small ops wait in the batch queue (kernels/batched/), so every other piece of device
-- work must run the queue first, or it reads memory the queued ops have not written yet. The core has one
-- launch function for that (ck_submit, src/core/context.c); this spec checks it two ways:
--
--   * on every machine: the C core has no launch around it (a source scan: launchers are called only through
--     ck_submit, and the raw CUDA calls that put work on a stream sit only inside launcher functions);
--   * on a GPU: a matrix of producers (every kind of op the batch holds, writing part of an array) against
--     consumers (every op family and rung, copies, contiguous, to, save, map, reduce_map, run-time kernels,
--     graph capture and replay, time_op), each consumer's result compared with the same ops replayed on the
--     host. A producer that did not join the batch would test nothing: the spec counts those that did.
--
-- The suite runs with CUKERN_CHECK_ORDER=1 (spec/run.sh), under which the launchers below ck_submit also
-- report any launch that finds the queue non-empty.
local H = require "spec.helpers"
local ck = H.ck

-- ---------------------------------------------------------------- the source scan

local read = H.read_file

local function c_files()
  local files = {}
  local p = io.popen("ls src/*/*.c kernels/*.c 2>/dev/null")
  for line in p:lines() do files[#files + 1] = line end
  p:close()
  return files
end

-- Raw calls that put work on a stream. Outside launcher functions (int f(const void *, const ck_env *env))
-- they would bypass ck_submit.
local RAW = {"cudaMemcpyAsync", "cudaMemsetAsync", "cudaLaunchKernel", "cudaGraphLaunch", "cuLaunchKernel",
             "cudaMemcpy2DAsync", "cudaMemcpyPeerAsync"}

describe("issue order: the C core", function()
  it("calls launchers only through ck_submit, and raw stream work only inside launcher functions", function()
    local bad = {}
    local list = c_files()
    assert(#list > 20, "the C sources are not where this scan looks (src/*/*.c, kernels/*.c)")
    for _, path in ipairs(list) do
      local src = read(path)
      local lineno, current = 0, nil
      for line in (src .. "\n"):gmatch("(.-)\n") do
        lineno = lineno + 1
        local header = line:match("^[%w_ ]*%f[%w_]([%w_]+)%(([^)]*)%)%s*{%s*$")
        if header then current = line elseif line:match("^}") then current = nil end
        if not line:match("^%s*/?%*") and not line:match("^%s*//") then
          if line:find("->launch(", 1, true) or line:find("%.launch%(") then
            bad[#bad + 1] = ("%s:%d calls a launcher directly: %s"):format(path, lineno, line)
          end
          for _, fn in ipairs(RAW) do
            if line:find(fn .. "(", 1, true) and not (current and current:find("const ck_env %*env")) and
              path ~= "kernels/launch.c" then
              bad[#bad + 1] = ("%s:%d puts work on a stream outside a launcher: %s"):format(path, lineno, line)
            end
          end
          if line:find("ck_batch_flush(", 1, true) and path ~= "src/core/context.c" then
            bad[#bad + 1] = ("%s:%d launches the batch outside ck_flush: %s"):format(path, lineno, line)
          end
        end
      end
    end
    assert(#bad == 0, "launches around ck_submit (src/core/context.c):\n" .. table.concat(bad, "\n"))
  end)

  it("runs with CUKERN_CHECK_ORDER on in the suite", function()
    if os.getenv("CUKERN_CHECK_ORDER") == "0" then return pending("turned off by CUKERN_CHECK_ORDER=0") end
    assert.equal("1", os.getenv("CUKERN_CHECK_ORDER"), "spec/run.sh exports CUKERN_CHECK_ORDER=1")
  end)
end)

-- ---------------------------------------------------------------- producers x consumers (GPU)

-- CUKERN_ORDER_QUICK=1: every third producer only (for compute-sanitizer runs)
local QUICK = os.getenv("CUKERN_ORDER_QUICK") == "1"
local N = 100 -- 10^4 elements: whole-array consumers are past the batch's 4096-element limit, so they launch

local function variants(op)
  local t = {}
  for _, v in ipairs(ck.variants(op)) do
    if not v.bench_only and not v.batched then t[#t + 1] = v.name end
  end
  return t
end

-- Producers: batched ops (at most 4096 elements each) writing part of x. `mk(dev)` makes their inputs;
-- each input set is made for the host first and copied, so the host replay sees the same values.
local PRODUCERS = {
  {"fill", function(x) x:narrow(1, 1, 10):fill(1) end},
  {"add_ number", function(x) x:narrow(1, 2, 6):add_(1) end},
  {"mul out=", function(x, s) ck.mul(s.a2, s.b2, {out = x:narrow(1, 3, 4)}) end},
  {"neg out=", function(x, s) ck.neg(s.a2, {out = x:narrow(1, 3, 4)}) end},
  {"copy_ small", function(x, s) x:narrow(1, 5, 7):copy_(s.a3) end},
  {"copy_ cast f64", function(x, s) x:narrow(1, 1, 2):copy_(s.d2) end},
  {"sum out=", function(x, s) ck.sum(s.r7, 1, {keepdim = true, out = x:narrow(1, 4, 4)}) end},
  {"matmul out=", function(x, s) ck.matmul(s.m1, s.m2, {out = x:narrow(1, 6, 6)}) end},
  {"arange", function(x) ck.core.generate(x:narrow(1, 8, 8), "arange", -3, 0.5) end},
}

local function producer_inputs()
  local h = {a2 = H.rand({2, N}), b2 = H.rand({2, N}), a3 = H.rand({3, N}), d2 = H.rand({2, N}, "f64"),
             r7 = H.rand({7, N}), m1 = H.rand({1, 5}), m2 = H.rand({5, N})}
  local c = {}
  for k, v in pairs(h) do c[k] = v:cuda() end
  return h, c
end

local SCALE = [[
extern "C" __global__ void scale2(float *y, const float *x, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}]]

local TMP = os.tmpname()

-- Consumers: prep(x) makes what the consumer needs beyond x (before the producer runs: making arrays on the
-- device can itself flush the queue); run(x, p) reads x and returns an array; ref(xh) is the host result.
-- Most refs are the same call on host arrays; tol is derived per consumer (f32 results).
local F32 = {rtol = 2e-6, atol = 1e-6}
local WH, YH -- host operands of the matmul and add consumers (made in the test, shared by its runs)
local function consumers()
  local list = {}
  local function add(name, prep, run, ref, tol) list[#list + 1] = {name, prep, run, ref, tol or F32} end
  local same = function(run) return function(xh, ph) return run(xh, ph) end end
  local function dst(dev) return ck.empty(N, N, {device = dev}) end

  local c_run = function(x) return x:t():contiguous() end
  add("contiguous of a:t()", nil, c_run, same(c_run))
  local p_run = function(x) return x:reshape(N, 4, N // 4):permute(3, 1, 2):contiguous() end
  add("contiguous of a 3-D permutation", nil, p_run, same(p_run))
  add("copy_ of a:t() into an array", function(dev) return {d = dst(dev)} end,
    function(x, p) return p.d:copy_(x:t()) end, function(xh) return xh:t():contiguous() end)
  add("copy_ (memcpy)", function(dev) return {d = dst(dev)} end, function(x, p) return p.d:copy_(x) end,
    function(xh) return xh:clone() end)
  add("clone", nil, function(x) return x:clone() end, function(xh) return xh:clone() end)
  -- (the values are f32 ones; the producers' sums and products may differ by an f32 rounding between the
  -- backends, so every consumer compares at f32's tolerance, this one too)
  add("to f64", nil, function(x) return x:to("f64") end, function(xh) return xh:to("f64") end)
  add("to host", nil, function(x) return x:to("host") end, function(xh) return xh:clone() end)
  for _, v in ipairs(variants("transpose")) do
    add("transpose " .. v, nil, function(x) return ck.transpose(x, {variant = v}) end,
      function(xh) return ck.transpose(xh) end)
  end
  for _, v in ipairs(variants("reduce")) do
    for _, d in ipairs {0, 1, 2} do
      local dim = d > 0 and d or nil
      -- a sum of N (or N^2) terms of magnitude <= 51 in f32: rounding grows with the number of terms
      local tol = {rtol = 1e-5, atol = (d > 0 and N or N * N) * 51 * 2 ^ -23 * 4}
      add(("sum dim %s %s"):format(dim or "all", v), nil, function(x) return ck.sum(x, dim, {variant = v}) end,
        function(xh) return ck.sum(xh, dim) end, tol)
    end
  end
  for _, v in ipairs(variants("matmul")) do
    add("matmul " .. v, function(dev) return {w = dev == "host" and WH or WH:cuda()} end,
      function(x, p) return ck.matmul(x, p.w, {variant = v}) end,
      function(xh, ph) return ck.matmul(xh, ph.w) end,
      {rtol = 1e-4, atol = N * 51 * 2 ^ -10}) -- (tf32 rungs fall back or run exact; 10 bits covers both)
  end
  for _, v in ipairs(variants("elementwise")) do
    add("add " .. v, function(dev) return {y = dev == "host" and YH or YH:cuda()} end,
      function(x, p) return ck.add(x, p.y, {variant = v}) end, function(xh, ph) return xh + ph.y end)
  end
  add("ck.map", nil, function(x) return ck.map("y = x * 2 + 1", {x = x}) end,
    function(xh) return xh * 2 + 1 end)
  add("ck.reduce_map", nil,
    function(x) return ck.reduce_map({map = "x * x", reduce = "a + b", identity = 0}, {x = x}, {dim = 2}) end,
    function(xh) return ck.sum(ck.mul(xh, xh), 2) end, {rtol = 1e-5, atol = N * 51 * 51 * 2 ^ -23 * 4})
  add("k:launch", function(dev)
      if dev == "host" then return {} end
      return {k = ck.kernel(SCALE, "scale2", {"f32*", "const f32*", "i64"}), o = dst(dev)}
    end,
    function(x, p) p.k:launch(math.ceil(N * N / 256), 256, p.o, x, N * N); return p.o end,
    function(xh) return xh * 2 end)
  add("graph replay", function(dev, x)
      if dev == "host" then return {} end
      local p = {o = dst(dev)}
      p.g = ck.graph(function() p.o:copy_(x * 3) end) -- recorded before the producer, replayed after it
      return p
    end,
    function(_, p) p.g:replay(); return p.o end, function(xh) return xh * 3 end)
  add("graph capture", nil, function(x)
      local r
      local g = ck.graph(function() r = x + 1 end)
      g:replay()
      return r
    end, function(xh) return xh + 1 end)
  add("core.time_op", function(dev) return {o = dst(dev)} end,
    function(x, p) ck.core.time_op({op = "add", a = x, b = x, out = p.o}, 0, 1, 0); return p.o end,
    function(xh) return xh + xh end)
  add("save / load", nil, function(x) ck.save(TMP .. ".npy", x); return ck.load(TMP .. ".npy") end,
    function(xh) return xh:clone() end)
  return list
end

describe("issue order on the GPU: batched producers x consumers", function()
  it("every consumer sees every producer's writes", H.gpu(function()
    assert.is_true(ck.batching(), "batching is on by default (CUKERN_BATCH unset)")
    WH, YH = H.rand({N, 40}), H.rand({N, N})
    local fails, batched, runs = {}, {}, 0
    for _, c in ipairs(consumers()) do
      local name, prep, run, ref, tol = table.unpack(c)
      for pi, pr in ipairs(PRODUCERS) do
        if QUICK and pi % 3 ~= 1 then goto next end
        local pname, produce = pr[1], pr[2]
        -- fresh values; nothing of the old ones may survive (a stale read would match by chance otherwise)
        local xh = H.rand({N, N})
        local x = xh:cuda()
        local ih, ic = producer_inputs()
        local ph = prep and prep("host", xh) or {}
        local pc = prep and prep("cuda", x) or {}
        ck.sync("cuda")
        produce(x, ic) -- queued
        local lr = ck.last_ran()
        if lr and lr.name == "batched" then batched[pname] = true end
        local ok, got = pcall(run, x, pc) -- must run the queue first
        produce(xh, ih)
        local want = ref(xh, ph)
        runs = runs + 1
        if not ok then
          fails[#fails + 1] = ("%s after %s: error %s"):format(name, pname, tostring(got))
        else
          local good, msg = H.allclose(got, want, tol)
          if not good then fails[#fails + 1] = ("%s after %s: %s"):format(name, pname, msg) end
        end
        ::next::
      end
    end
    local nb, names = 0, {}
    for k in pairs(batched) do nb = nb + 1; names[#names + 1] = k end
    table.sort(names)
    io.write(("\n[order] %d consumer x producer runs; producers that joined the batch: %s\n"):format(runs,
      table.concat(names, ", ")))
    assert(#fails == 0, ("%d of %d runs read stale values:\n  %s"):format(#fails, runs,
      table.concat(fails, "\n  ", 1, math.min(#fails, 40))))
    assert(nb >= (QUICK and 2 or 5), ("only %d of %d producers joined the batch: the matrix does not test the queue")
      :format(nb, #PRODUCERS))
    os.remove(TMP .. ".npy")
  end))
end)
