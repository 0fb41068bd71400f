--- cukern.dist: several devices (issue 31).
--   ck.nccl  collectives over a list of arrays, one per device, in one process (NCCL on cuda:N; the host oracle on
--            host:N, which CI runs with CUKERN_HOST_DEVICES=N)
--   ck.dist  several processes, one device each: ck.dist.init{} returns a communicator with rank, size and the
--            same collectives (NCCL on CUDA, the rendezvous store on the host)
-- MPI/NCCL/PyTorch names: all_reduce (MPI_Allreduce, torch.distributed.all_reduce), all_gather, reduce_scatter,
-- broadcast, reduce. Lists are 1-based like every Lua list; a process's rank is 0-based, as NCCL, MPI and
-- CUKERN_RANK count (docs/several-gpus.md).
local core = require "cukern.core"
local errors, args = require "cukern.errors", require "cukern.args"

local D = {}
local fmt = string.format
local raise, call, where_of = errors.raise, errors.call, errors.where_of
local is_array, show = args.is_array, args.show

local OPS = {sum = true, prod = true, max = true, min = true, avg = true}

local function check_list(where, arrays)
  if type(arrays) ~= "table" or is_array(arrays) then
    raise(fmt("%s: the first argument must be a list of arrays, one per device, got %s", where, show(arrays)))
  end
  if #arrays == 0 then raise(fmt("%s: the list of arrays is empty", where)) end
  for i = 1, #arrays do
    if not is_array(arrays[i]) then raise(fmt("%s: entry %d of the list is %s, not an array", where, i, show(arrays[i]))) end
  end
end

local function check_op(where, op)
  if op ~= nil and not OPS[op] then raise(fmt("%s: op must be \"sum\", \"prod\", \"max\", \"min\" or \"avg\", got %s", where, show(op))) end
  return op or "sum"
end

local function check_opts(where, o, keys)
  if o == nil then return {} end
  if type(o) ~= "table" or is_array(o) then raise(fmt("%s: options must be a table, got %s", where, show(o))) end
  for k in pairs(o) do
    if not keys[k] then
      local list = {}
      for name in pairs(keys) do list[#list + 1] = name end
      table.sort(list)
      raise(fmt("%s: unknown option %s (known: %s)", where, show(k), table.concat(list, ", ")))
    end
  end
  return o
end

local function check_root(where, root, n, base)
  if root == nil then return base end
  if math.type(root) ~= "integer" or root < base or root > n + base - 1 then
    raise(fmt("%s: root must be an integer %d..%d, got %s", where, base, n + base - 1, show(root)))
  end
  return root
end

function D.install(ck)
  local nccl = {}
  ck.nccl = nccl

  --- ck.nccl.all_reduce(arrays [, op [, {variant}]]): op ("sum" default, "prod", "max", "min", "avg") over the
  -- arrays, written into every one of them (in place); returns the list. variant: "nccl" (default) or a rung of
  -- the all-reduce ladder ("gather", "oneshot", "ring"; ck.nccl.variants()).
  do
    local where = where_of("ck.nccl.all_reduce")
    function nccl.all_reduce(arrays, op, o, ...)
      if select("#", ...) > 0 then raise(fmt("%s: takes (arrays, op, options), got %d arguments", where, 3 + select("#", ...))) end
      check_list(where, arrays)
      op = check_op(where, op)
      o = check_opts(where, o, {variant = true})
      if o.variant ~= nil and type(o.variant) ~= "string" then raise(fmt("%s: variant must be a string, got %s", where, show(o.variant))) end
      return call(where, core.coll, "all_reduce", arrays, op, 1, o.variant)
    end
  end

  --- ck.nccl.all_gather(arrays): new arrays, one per device, each the inputs stacked along dim 1 ([n*d1, ...]).
  do
    local where = where_of("ck.nccl.all_gather")
    function nccl.all_gather(arrays, ...)
      if select("#", ...) > 0 then raise(fmt("%s: takes one list of arrays, got %d arguments", where, 1 + select("#", ...))) end
      check_list(where, arrays)
      return call(where, core.coll, "all_gather", arrays)
    end
  end

  --- ck.nccl.reduce_scatter(arrays [, op]): new arrays; array i is block i (along dim 1) of op over the inputs.
  do
    local where = where_of("ck.nccl.reduce_scatter")
    function nccl.reduce_scatter(arrays, op, ...)
      if select("#", ...) > 0 then raise(fmt("%s: takes (arrays, op), got %d arguments", where, 2 + select("#", ...))) end
      check_list(where, arrays)
      return call(where, core.coll, "reduce_scatter", arrays, check_op(where, op))
    end
  end

  --- ck.nccl.broadcast(arrays [, root]): array `root` (1-based position, default 1) copied into all (in place).
  do
    local where = where_of("ck.nccl.broadcast")
    function nccl.broadcast(arrays, root, ...)
      if select("#", ...) > 0 then raise(fmt("%s: takes (arrays, root), got %d arguments", where, 2 + select("#", ...))) end
      check_list(where, arrays)
      return call(where, core.coll, "broadcast", arrays, "sum", check_root(where, root, #arrays, 1))
    end
  end

  --- ck.nccl.reduce(arrays [, op [, root]]): op over the arrays into array `root` (default 1) only (in place).
  do
    local where = where_of("ck.nccl.reduce")
    function nccl.reduce(arrays, op, root, ...)
      if select("#", ...) > 0 then raise(fmt("%s: takes (arrays, op, root), got %d arguments", where, 3 + select("#", ...))) end
      check_list(where, arrays)
      op = check_op(where, op)
      return call(where, core.coll, "reduce", arrays, op, check_root(where, root, #arrays, 1))
    end
  end

  --- ck.nccl.wait([arrays_or_devices [, timeout_s]]): waits for the devices (all by default), polling NCCL's
  -- asynchronous errors; past the timeout the communicators are aborted and an error says so (no hang).
  do
    local where = where_of("ck.nccl.wait")
    function nccl.wait(list, timeout, ...)
      if select("#", ...) > 0 then raise(fmt("%s: takes (list, timeout), got %d arguments", where, 2 + select("#", ...))) end
      if list ~= nil and type(list) ~= "table" then raise(fmt("%s: the first argument must be a list of arrays or devices, got %s", where, show(list))) end
      if timeout ~= nil and (type(timeout) ~= "number" or timeout ~= timeout) then raise(fmt("%s: timeout must be a number of seconds, got %s", where, show(timeout))) end
      return call(where, core.coll_wait, list, timeout or 0)
    end
  end

  --- ck.nccl.info(): {available, version, path} or {available = false, why}.
  function nccl.info(...)
    if select("#", ...) > 0 then raise(fmt("ck.nccl.info: takes no arguments, got %d", select("#", ...))) end
    return core.nccl_info()
  end
  --- ck.nccl.variants(): the all-reduce ladder's rows {id, name, summary} (0 = NCCL, the reference).
  function nccl.variants(...)
    if select("#", ...) > 0 then raise(fmt("ck.nccl.variants: takes no arguments, got %d", select("#", ...))) end
    return core.allreduce_rungs()
  end

  -- ---------------------------------------------------------------- several processes

  local dist = {}
  ck.dist = dist
  local COMM = {}
  COMM.__index = COMM

  local function comm_method(name, f)
    local where = where_of("comm:" .. name)
    COMM[name] = function(self, ...)
      if getmetatable(self) ~= COMM then raise(fmt("%s: call it as comm:%s(...)", where, name)) end
      return f(where, self, ...)
    end
  end

  local function run(where, self, kind, a, op, root, o)
    if not is_array(a) then raise(fmt("%s: the first argument must be an array, got %s", where, show(a))) end
    o = check_opts(where, o, {async = true})
    return call(where, self.handle.run, self.handle, kind, a, op, root, o.async)
  end
  comm_method("all_reduce", function(where, self, a, op, o) return run(where, self, "all_reduce", a, check_op(where, op), 0, o) end)
  comm_method("all_gather", function(where, self, a, o) return run(where, self, "all_gather", a, nil, 0, o) end)
  comm_method("reduce_scatter", function(where, self, a, op, o) return run(where, self, "reduce_scatter", a, check_op(where, op), 0, o) end)
  comm_method("broadcast", function(where, self, a, root, o)
    return run(where, self, "broadcast", a, nil, check_root(where, root, self.size, 0), o) end)
  comm_method("reduce", function(where, self, a, op, root, o)
    return run(where, self, "reduce", a, check_op(where, op), check_root(where, root, self.size, 0), o) end)
  comm_method("barrier", function(where, self) return call(where, self.handle.barrier, self.handle) end)
  comm_method("destroy", function(where, self) return call(where, self.handle.destroy, self.handle) end)
  COMM.__close = function(self) self.handle:destroy() end
  COMM.__tostring = function(self) return fmt("cukern.dist communicator: rank %d of %d on %s (%s)", self.rank, self.size,
    self.device, self.backend) end

  --- ck.dist.init{store, rank, world, device, timeout, checked}: joins the other processes. Defaults come from the
  -- environment that bin/ckrun (or mpirun) sets: CUKERN_RANK, CUKERN_WORLD_SIZE, CUKERN_STORE (file:///dir or
  -- tcp://host:port). device: "cuda" (cuda:(local rank % devices), the default with a GPU), "cuda:N", "host".
  do
    local where = where_of("ck.dist.init")
    local KEYS = {store = true, rank = true, world = true, device = true, timeout = true, checked = true}
    function dist.init(o, ...)
      if select("#", ...) > 0 then raise(fmt("%s: takes one options table, got %d arguments", where, 1 + select("#", ...))) end
      o = check_opts(where, o, KEYS)
      -- (the core reads -1 / 0 / nil as "from the environment", and an int: checked here, so that a negative rank,
      -- a huge one cut to 32 bits or a timeout of NaN is an error, not a silent default)
      local function int_opt(k, lo)
        local v = o[k]
        if v ~= nil and not (type(v) == "number" and v == math.floor(v) and v >= lo and v <= 0x7fffffff) then
          raise(fmt("%s: option %s must be an integer %d..2147483647, got %s", where, k, lo, show(v)))
        end
      end
      int_opt("rank", 0)
      int_opt("world", 1)
      if o.rank and o.world and o.rank >= o.world then
        raise(fmt("%s: rank %s of a world of %s (ranks are 0 .. world - 1)", where, show(o.rank), show(o.world)))
      end
      if o.timeout ~= nil and (type(o.timeout) ~= "number" or not (o.timeout > 0) or o.timeout == math.huge) then
        raise(fmt("%s: option timeout must be a positive number of seconds, got %s", where, show(o.timeout)))
      end
      if o.checked ~= nil and type(o.checked) ~= "boolean" then
        raise(fmt("%s: option checked must be true or false, got %s", where, show(o.checked)))
      end
      for _, k in ipairs {"store", "device"} do
        if o[k] ~= nil and type(o[k]) ~= "string" then raise(fmt("%s: option %s must be a string, got %s", where, k, show(o[k]))) end
      end
      local h = call(where, core.dist_init, o)
      local info = h:info()
      return setmetatable({handle = h, rank = info.rank, size = info.size, device = info.device, backend = info.backend}, COMM)
    end
  end
end

return D
