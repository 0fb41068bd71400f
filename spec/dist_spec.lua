--- Several processes (issue 31: ck.dist.init{} and the communicator's collectives), run by bin/ckrun with
-- spec/dist_child.lua as every rank:
--   2 and 3 ranks over the file store and over the tcp store, on the host (the store backend): every collective
--   against what each rank computes itself from every rank's inputs, arrays over 1 MiB, barrier;
--   checked mode (CUKERN_DIST_CHECK=1) with ranks that disagree: both fail naming the disagreement, ckrun exits
--   nonzero, quickly; a rank that leaves early: the other gets an error within CUKERN_STORE_TIMEOUT, not a hang.
-- In this process: ck.dist.init{} without any environment (a world of one).
-- GPU part: the same child on cuda devices (NCCL), where the machine has two GPUs; pending elsewhere.
local H = require "spec.helpers"
local ck = H.ck

local LUA = os.getenv("LUA") or "lua5.4"
local ENV = ("env LUA=%q LUA_PATH=%q LUA_CPATH=%q"):format(LUA, "./lua/?.lua;./lua/?/init.lua;./?.lua;;", "./?.so;;")

local function scratch()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -m 700 " .. d))
  return d
end

local function ckrun(n, store, mode, device, extra_env, extra_args)
  local dir = scratch()
  local t0 = os.time()
  local cmd = ("%s %s bin/ckrun -n %d --store %s spec/dist_child.lua %s %d %s %s %s"):format(ENV, extra_env or "", n,
    store, mode, H.seed, device, dir, extra_args or "")
  local res = H.child_checks(cmd, 120)
  res.seconds = os.time() - t0
  os.execute("rm -rf " .. dir)
  return res
end

local function ncuda()
  local n = 0
  for _, d in ipairs(ck.devices()) do if d.backend == "cuda" then n = n + 1 end end
  return n
end

-- Run everything at load time: one `it` per check of every rank.
local RUNS = {}
for _, store in ipairs {"file", "tcp"} do
  for _, n in ipairs {2, 3} do
    RUNS[#RUNS + 1] = {label = ("%d ranks, %s store, host"):format(n, store), n = n, res = ckrun(n, store, "coll", "host")}
  end
end

describe("ck.dist: several processes through bin/ckrun (seed " .. H.seed .. ")", function()
  for _, r in ipairs(RUNS) do
    describe(r.label, function()
      H.child_its(_ENV, r.res, "bin/ckrun -n " .. r.n)
      it("every rank reached its end", function()
        assert.equals(r.n, r.res.done_count, "ranks done; output:\n" .. r.res.out)
      end)
    end)
  end

  for _, store in ipairs {"file", "tcp"} do
    it("checked mode: rank 1's all_gather against rank 0's all_reduce fails on both, naming it (" .. store .. " store)",
      function()
        local t0 = os.time()
        local res = ckrun(2, store, "checked", "host", "CUKERN_DIST_CHECK=1 CUKERN_STORE_TIMEOUT=20")
        assert.is_true(os.time() - t0 < 20, "took " .. (os.time() - t0) .. " s")
        assert.is_false(res.rc == true, "ckrun exited 0:\n" .. res.out)
        assert.equals("exit", res.how)
        assert.is_true(res.code ~= 0 and res.code ~= 124, "ckrun exit status " .. tostring(res.code) .. ":\n" .. res.out)
        for _, rank in ipairs {0, 1} do
          local line = res.out:match("%[rank " .. rank .. "%] checked%-error ([^\n]*)")
          assert.is_not_nil(line, "rank " .. rank .. " printed no error:\n" .. res.out)
          local mine = rank == 0 and "comm:all_reduce" or "comm:all_gather"
          assert.is_truthy(line:find(mine, 1, true), line)
          assert.is_truthy(line:find("checked mode", 1, true), line)
          assert.is_truthy(line:find("disagree", 1, true), line)
          assert.is_truthy(line:find('"all_gather f32[3]', 1, true), line)
          assert.is_truthy(line:find('"all_reduce f32[3]', 1, true), line)
        end
        assert.matches("ckrun: rank %d failed", res.out)
      end)
  end

  for _, case in ipairs {{"file", 1}, {"tcp", 0}} do
    local store, leaver = case[1], case[2]
    it(("a rank that exits early (rank %d, %s store): the other gets an error, not a hang"):format(leaver, store), function()
      local t0 = os.time()
      local res = ckrun(2, store, "early", "host", "CUKERN_STORE_TIMEOUT=5", tostring(leaver))
      local took = os.time() - t0
      assert.is_true(took < 30, "took " .. took .. " s")
      assert.is_true(res.rc == true, "ckrun failed:\n" .. res.out)
      local other = 1 - leaver
      local line = res.out:match("%[rank " .. other .. "%] early%-error ([^\n]*)")
      assert.is_not_nil(line, "no error on rank " .. other .. ":\n" .. res.out)
      assert.is_truthy(line:find("comm:all_reduce", 1, true), line)
      if leaver == 1 then assert.is_truthy(line:find("not set within 5 s", 1, true), line) end
      assert.is_truthy(res.out:find("ok - host n=2 rank " .. other .. ": a collective with a rank gone fails", 1, true), res.out)
    end)
  end
end)

describe("ck.dist in this process", function()
  local env_set = os.getenv("CUKERN_RANK") or os.getenv("CUKERN_STORE") or os.getenv("OMPI_COMM_WORLD_RANK")
    or os.getenv("PMI_RANK")

  it("ck.dist.init{} without any environment is a world of one", function()
    if env_set then return pending("a rendezvous environment is set in this run") end
    if H.has_cuda and not ck.nccl.info().available then
      local ok, err = pcall(ck.dist.init, {})
      assert.is_false(ok); assert.matches("needs NCCL", err)
      return
    end
    local c <close> = ck.dist.init{}
    assert.equals(0, c.rank)
    assert.equals(1, c.size)
    assert.equals(H.has_cuda and "nccl" or "store", c.backend)
    assert.equals(H.has_cuda and "cuda:0" or "host:0", c.device)
    assert.matches("rank 0 of 1", tostring(c))
    local a = H.rand({5, 3}, "f32", c.device)
    local want = a:clone()
    assert.equals(a, c:all_reduce(a, "sum"))
    H.assert_equal(a, want, "all_reduce")
    H.assert_equal(c:all_gather(a), want, "all_gather")
    H.assert_equal(c:reduce_scatter(a, "max"), want, "reduce_scatter")
    c:broadcast(a, 0)
    c:reduce(a, "prod", 0)
    H.assert_equal(a, want, "broadcast, reduce")
    c:barrier()
  end)

  it("ck.dist.init{device = 'host'} and its errors", function()
    if env_set then return pending("a rendezvous environment is set in this run") end
    local c = ck.dist.init{device = "host"}
    assert.equals("store", c.backend); assert.equals("host:0", c.device)
    local ok, err = pcall(c.broadcast, c, ck.zeros(2, {device = "host"}), 1)
    assert.is_false(ok); assert.matches("comm:broadcast: root must be an integer 0..0, got 1", err)
    ok, err = pcall(c.all_reduce, c, ck.zeros(2, {device = "host", dtype = "i32"}), "avg")
    assert.is_false(ok); assert.matches("avg needs a float dtype", err)
    c:destroy()
    c:destroy() -- (twice is harmless)
    ok, err = pcall(c.barrier, c)
    assert.is_false(ok); assert.matches("comm:barrier: the communicator was destroyed", err)
    ok, err = pcall(ck.dist.init, {rank = 1, world = 1})
    assert.is_false(ok); assert.matches("rank 1 of a world of 1", err)
    ok, err = pcall(ck.dist.init, {bogus = 1})
    assert.is_false(ok); assert.matches("unknown option", err)
    -- values the core would read as "from the environment" (-1, <= 0) or cut to 32 bits are errors, not defaults
    for _, o in ipairs {{rank = -1}, {world = -3}, {rank = 2 ^ 40}, {world = 0}, {rank = 1.5}, {timeout = -5},
                        {timeout = 0 / 0}, {checked = "yes"}, {store = 7}, {device = 5}} do
      ok, err = pcall(ck.dist.init, o)
      assert.is_false(ok, "accepted " .. next(o))
      assert.matches("ck.dist.init: option " .. next(o) .. " must be", err)
    end
  end)
end)

describe("ck.dist on GPUs", function()
  local n = ncuda()
  local reason = n < 2 and ("needs 2 CUDA devices: this machine has %d (%s)"):format(n,
    n == 0 and tostring(ck.device("host").why_host) or ck.device("cuda:0").name)
    or (not ck.nccl.info().available and ("NCCL is not available: " .. tostring(ck.nccl.info().why)))
  if reason then
    it("2 ranks on cuda:0 and cuda:1 (NCCL): every collective, checked, barrier", function() pending(reason) end)
    return
  end
  local res = ckrun(2, "file", "coll", "cuda")
  H.child_its(_ENV, res, "bin/ckrun -n 2 (cuda)")
  it("2 ranks on cuda: both reached their end", function() assert.equals(2, res.done_count, res.out) end)
  it("2 ranks on cuda (NCCL), tcp store, checked mode: the disagreement is an error on both", function()
    local r = ckrun(2, "tcp", "checked", "cuda", "CUKERN_DIST_CHECK=1 CUKERN_STORE_TIMEOUT=20")
    assert.is_false(r.rc == true, r.out)
    assert.matches("%[rank 0%] checked%-error [^\n]*disagree", r.out)
    assert.matches("%[rank 1%] checked%-error [^\n]*disagree", r.out)
  end)
end)
