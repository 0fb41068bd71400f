--- One rank of spec/dist_spec.lua's runs: `bin/ckrun -n N spec/dist_child.lua <mode> <seed> <device> <dir>`.
--   mode   coll     every collective against what this rank computes itself from every rank's inputs (each
--                   derived from the rank and the seed), arrays over 1 MiB (chunked through the store), barrier
--          checked  CUKERN_DIST_CHECK=1: rank 1 calls all_gather while the others call all_reduce; each prints
--                   "checked-error <message>" and exits 3
--          early    rank <leaver> (default 1) leaves right after init; the others' next collective must fail (a
--                   timeout or a lost connection, not a hang): they print "early-error <message>" and exit 0
--   device "host" (the store backend) or "cuda" (NCCL: one GPU per rank)
--   dir    a scratch directory all ranks see (the barrier check writes a file there)
--   leaver (early) the rank that leaves
-- One line per check (spec/child_harness.lua), prefixed by ckrun with "[rank i] ".
local T = require "spec.child_harness"
local ck = require "cukern"

local mode, SEED, DEVICE, DIR = arg[1], tonumber(arg[2]), arg[3] or "host", arg[4] or "/tmp"
local LEAVER = tonumber(arg[5]) or 1
local check, eq, ok, raises = T.check, T.eq, T.ok, T.raises
local fmt = string.format
T.prefix = ""

local comm = ck.dist.init{device = DEVICE}
local R, N = comm.rank, comm.size
T.prefix = fmt("%s n=%d rank %d: ", DEVICE, N, R)

if mode == "early" then
  if R == LEAVER then comm:destroy(); os.exit(0) end -- leaves without a word
  local t0 = os.time()
  local okc, err = pcall(comm.all_reduce, comm, ck.ones(4, {device = comm.device}), "sum")
  check("a collective with a rank gone fails, not hangs", function()
    ok(not okc, "the all_reduce returned")
    ok(os.time() - t0 < 60, "it took " .. (os.time() - t0) .. " s")
    ok(tostring(err):find("comm:all_reduce", 1, true), "names the call: " .. tostring(err))
    io.write("early-error ", (tostring(err):gsub("\n", " ")), "\n")
  end)
  T.finish()
end

if mode == "checked" then
  local a = ck.ones(3, {device = comm.device})
  local okc, err
  if R == 1 then okc, err = pcall(comm.all_gather, comm, a)
  else okc, err = pcall(comm.all_reduce, comm, a, "sum") end
  io.write("checked-result ", tostring(okc), "\n")
  if not okc then io.write("checked-error ", (tostring(err):gsub("\n", " ")), "\n") end
  io.flush()
  os.exit(okc and 0 or 3)
end

-- ---------------------------------------------------------------- mode coll

check("the communicator: rank, size, device, backend", function()
  eq(N, tonumber(os.getenv("CUKERN_WORLD_SIZE")), "size")
  eq(R, tonumber(os.getenv("CUKERN_RANK")), "rank")
  if DEVICE == "host" then
    eq(comm.backend, "store"); eq(comm.device, "host:0")
  else
    local ncuda = 0
    for _, d in ipairs(ck.devices()) do if d.backend == "cuda" then ncuda = ncuda + 1 end end
    eq(comm.backend, "nccl"); eq(comm.device, "cuda:" .. (R % ncuda))
  end
  ok(tostring(comm):find(fmt("rank %d of %d", R, N), 1, true), tostring(comm))
end)

local function wrap32(v) return ((v + 0x80000000) & 0xffffffff) - 0x80000000 end
local EPS = {f32 = 2.0 ^ -23, f64 = 2.0 ^ -52, f16 = 2.0 ^ -10, bf16 = 2.0 ^ -7}

-- Rank r's input of case k: the same on every rank (drawn on the host from a seed of the case and r).
local function input(k, r, dt, shape)
  ck.seed(SEED * 1000 + k * 64 + r)
  local x
  if dt == "i32" then x = ck.randint(-2147483648, 2147483647, shape, {device = "host:0", dtype = "i32"})
  else x = ck.randn(shape, {device = "host:0", dtype = dt}) end
  return x
end

local function combine(op, dt, X)
  local m = #X[1]
  local out, S = {}, {}
  for e = 1, m do
    local acc, abs = X[1][e], math.abs(X[1][e])
    if dt == "i32" then acc = math.tointeger(acc) end
    for r = 2, #X do
      local v = X[r][e]
      abs = abs + math.abs(v)
      if dt == "i32" then
        v = math.tointeger(v)
        if op == "sum" then acc = wrap32(acc + v) elseif op == "prod" then acc = wrap32(acc * v)
        elseif op == "max" then acc = math.max(acc, v) else acc = math.min(acc, v) end
      elseif op == "sum" or op == "avg" then acc = acc + v
      elseif op == "prod" then acc = acc * v
      elseif op == "max" then acc = math.max(acc, v) else acc = math.min(acc, v) end
    end
    if op == "avg" then acc, abs = acc / #X, abs / #X end
    out[e], S[e] = acc, abs
  end
  return out, S
end

local function close(dt, op, got, want, S, what, first)
  first = first or 0
  for e = 1, #got do
    local g, w = got[e], want[first + e]
    local tol = 0
    if dt ~= "i32" and op and op ~= "max" and op ~= "min" then
      tol = op == "prod" and 2 * (N + 1) * EPS[dt] * math.abs(w) or 2 * ((N + 1) * EPS[dt] * S[first + e] + EPS[dt] * math.abs(w))
      tol = tol + 2.0 ^ -24
    end
    if not (g == w or math.abs(g - w) <= tol) then
      error(fmt("%s: flat %d: got %.17g, expected %.17g (tolerance %.3g, seed %d)", what, e, g, w, tol, SEED), 2)
    end
  end
end

local K = 0
local function each_case(fn)
  for _, dt in ipairs {"f32", "f64", "i32", "f16", "bf16"} do
    for _, shape in ipairs {{}, {1}, {2 * N, 3}, {N, 2, 3}} do
      K = K + 1
      fn(K, dt, shape)
    end
  end
end

local function inputs(k, dt, shape)
  local X = {}
  for r = 0, N - 1 do X[r + 1] = input(k, r, dt, shape):flat() end
  return X, input(k, R, dt, shape):to(comm.device)
end

check("all_reduce: every op and dtype, 0-d to 3-D, in place, also on a transposed view", function()
  each_case(function(k, dt, shape)
    for _, op in ipairs {"sum", "prod", "max", "min", "avg"} do
      if dt == "i32" and op == "avg" then
        raises(comm.all_reduce, {"comm:all_reduce", "avg needs a float dtype"}, comm, ck.zeros(2, {dtype = "i32", device = comm.device}), "avg")
      else
        local X, a = inputs(k, dt, shape)
        local res = comm:all_reduce(a, op)
        ok(res == a, "in place: returns its array")
        close(dt, op, a:flat(), combine(op, dt, X), select(2, combine(op, dt, X)), fmt("all_reduce %s %s", op, dt))
      end
    end
    if #shape == 2 then -- a transposed view of a [3 x 2N] array, reduced in place
      local X, a = inputs(k, dt, shape)
      local t = ck.empty(shape[2], shape[1], {dtype = dt, device = comm.device})
      local v = t:t()
      v:copy_(a)
      comm:all_reduce(v, "max")
      close(dt, "max", v:flat(), combine("max", dt, X), nil, "all_reduce on a transposed view " .. dt)
    end
  end)
end)

check("all_gather: rank order, stacked along dim 1", function()
  each_case(function(k, dt, shape)
    local X, a = inputs(k, dt, shape)
    local g = comm:all_gather(a)
    eq(g:device(), comm.device)
    eq(g:size(1), (#shape == 0 and 1 or shape[1]) * N, "dim 1")
    local want = {}
    for r = 1, N do for _, v in ipairs(X[r]) do want[#want + 1] = v end end
    close(dt, nil, g:flat(), want, nil, "all_gather " .. dt)
  end)
end)

check("reduce_scatter: this rank's block of the reduction", function()
  each_case(function(k, dt, shape)
    if #shape == 0 or shape[1] % N ~= 0 then return end
    for _, op in ipairs {"sum", "max", "min"} do
      local X, a = inputs(k, dt, shape)
      local out = comm:reduce_scatter(a, op)
      eq(out:size(1), shape[1] // N, "dim 1")
      local want, S = combine(op, dt, X)
      close(dt, op, out:flat(), want, S, "reduce_scatter " .. op .. " " .. dt, R * out:numel())
    end
  end)
  if N > 1 then
    raises(comm.reduce_scatter, {"comm:reduce_scatter", "divisible by the world size " .. N}, comm,
      ck.zeros(N + 1, {device = comm.device}))
  end
end)

check("broadcast and reduce from every root", function()
  each_case(function(k, dt, shape)
    for root = 0, N - 1 do
      local X, a = inputs(k, dt, shape)
      comm:broadcast(a, root)
      close(dt, nil, a:flat(), X[root + 1], nil, fmt("broadcast from %d %s", root, dt))
      local Y, b = inputs(k, dt, shape)
      comm:reduce(b, "sum", root)
      if R == root then close(dt, "sum", b:flat(), combine("sum", dt, Y), select(2, combine("sum", dt, Y)), "reduce at root")
      else close(dt, nil, b:flat(), Y[R + 1], nil, "reduce: not the root, untouched") end
    end
  end)
  raises(comm.broadcast, {"comm:broadcast", "root must be an integer 0.." .. (N - 1)}, comm, ck.zeros(1, {device = comm.device}), N)
end)

check("arrays over 1 MiB go through the store in chunks (all_reduce, all_gather)", function()
  local m = (1 << 18) * 3 + 7 -- 3 MiB of f32 and a bit
  local X, a = inputs(999, "f32", {m})
  comm:all_reduce(a, "sum")
  local want, S = combine("sum", "f32", X)
  close("f32", "sum", a:flat(), want, S, "1 MiB all_reduce")
  local Y, b = inputs(998, "i32", {(1 << 18) + 1})
  local g = comm:all_gather(b)
  local flat = g:flat()
  local w = {}
  for r = 1, N do for _, v in ipairs(Y[r]) do w[#w + 1] = v end end
  close("i32", nil, flat, w, nil, "1 MiB all_gather")
end)

check("barrier: no rank passes it before every rank reached it", function()
  local path = DIR .. "/barrier_reached"
  if R == 0 then
    local t = os.clock() + 0.3
    while os.clock() < t do end -- rank 0 is late
    local f = assert(io.open(path, "w")); f:write("x"); f:close()
  end
  comm:barrier()
  local f = io.open(path, "r")
  ok(f, "passed the barrier before rank 0 reached it")
  if f then f:close() end
  comm:barrier()
  comm:barrier()
end)

check("errors: an array on another device, a destroyed communicator", function()
  if #ck.devices() > 1 and DEVICE ~= "host" then
    raises(comm.all_reduce, {"comm:all_reduce", "move it with :to"}, comm, ck.zeros(2, {device = "host:0"}))
  end
  raises(comm.all_reduce, {"comm:all_reduce", "must be an array"}, comm, 3)
  raises(comm.all_reduce, {"comm:all_reduce", "op must be"}, comm, ck.zeros(2, {device = comm.device}), "xor")
end)

comm:barrier()
comm:destroy()
check("a destroyed communicator says so", function()
  raises(comm.all_reduce, {"comm:all_reduce", "destroyed"}, comm, ck.zeros(2, {device = comm.device}))
end)
T.finish()
