--- Child of spec/collectives_spec.lua: ck.nccl's collectives (issue 31) in a process with CUKERN_HOST_DEVICES=4.
--   host oracle: every collective x op {sum, prod, max, min, avg} x dtype {f32, f64, i32, f16, bf16} x n devices
--                {1..4} x awkward shapes (0-d, 1 element, 7x5, 3-D) x layouts (packed; strided views of a poisoned
--                parent, written in place), against a reference computed here, in Lua, from the inputs' values
--                (doubles; i32 wrapping mod 2^32 exactly; floats within a tolerance from n and the dtype's eps);
--                the error cases.
--   GPUs (>= 2): the same on cuda devices against the host oracle, NCCL and each rung of the all-reduce ladder.
-- One line per check (spec/child_harness.lua).   env CUKERN_HOST_DEVICES=4 lua5.4 spec/collectives_child.lua [seed]
local T = require "spec.child_harness"
local ck = require "cukern"

local SEED = tonumber(arg[1]) or os.time()
ck.seed(SEED)
math.randomseed(SEED)
local check, eq, ok, raises = T.check, T.eq, T.ok, T.raises
local fmt = string.format

local DTYPES = {"f32", "f64", "i32", "f16", "bf16"}
local OPS = {"sum", "prod", "max", "min", "avg"}
local EPS = {f32 = 2.0 ^ -23, f64 = 2.0 ^ -52, f16 = 2.0 ^ -10, bf16 = 2.0 ^ -7}
local TINY = {f32 = 2.0 ^ -149, f64 = 0, f16 = 2.0 ^ -24, bf16 = 2.0 ^ -133} -- the smallest subnormal
local POISON = {i32 = -2147483648}
local function poison_of(dt) return POISON[dt] or 0 / 0 end

local function wrap32(v) return ((v + 0x80000000) & 0xffffffff) - 0x80000000 end

local function shape_str(s) return "[" .. table.concat(s, "x") .. "]" end

-- ---------------------------------------------------------------- inputs

--- Fresh random values of shape s on device d: floats from randn (never all zeros), i32 over its whole range
-- (so that sums and products wrap).
local function random(dt, s, d)
  if dt == "i32" then return ck.randint(-2147483648, 2147483647, s, {device = d, dtype = "i32"}) end
  return ck.randn(s, {device = d, dtype = dt})
end

--- A view of logical shape s inside a poisoned parent (strided: reversed dims, offset by one), or a packed array.
-- Returns the array to pass, and a function that checks that the parent outside the view is still poison.
local function make(dt, s, d, strided)
  local x = random(dt, s, d)
  if not strided then return x, function() end end
  local n = #s
  local pshape, view = {}, nil
  if n == 0 then
    pshape = {3}
    view = function(p) return p:select(1, 2) end
  elseif n == 1 then
    pshape = {s[1] + 2}
    view = function(p) return p:narrow(1, 2, s[1] + 1) end
  else
    for k = 1, n do pshape[k] = s[n + 1 - k] + 1 end
    view = function(p)
      for k = 1, n do p = p:narrow(k, 2, pshape[k]) end
      local perm = {}
      for k = 1, n do perm[k] = n + 1 - k end
      return p:permute(perm)
    end
  end
  local parent = ck.full(pshape, poison_of(dt), {device = d, dtype = dt})
  local v = view(parent)
  v:copy_(x)
  ok(not v:is_contiguous() or n < 2, "the view is strided")
  local function outside_untouched(what)
    local c = parent:clone()
    view(c):fill(poison_of(dt))
    for i, val in ipairs(T.flat(c)) do
      local p = poison_of(dt)
      if not (val == p or (val ~= val and p ~= p)) then
        error(fmt("%s: the parent of the strided view was written outside the view (flat %d = %.17g)", what, i, val), 3)
      end
    end
  end
  return v, outside_untouched
end

-- ---------------------------------------------------------------- the reference

local function reduce_ref(op, dt, X, n)
  local m = #X[1]
  local R, S = {}, {}
  for e = 1, m do
    local acc = X[1][e]
    local abs = math.abs(acc)
    if dt == "i32" then acc = math.tointeger(acc) end
    for i = 2, n do
      local v = X[i][e]
      abs = abs + math.abs(v)
      if dt == "i32" then
        v = math.tointeger(v)
        if op == "sum" then acc = wrap32(acc + v)
        elseif op == "prod" then acc = wrap32(acc * v) -- (Lua integers wrap mod 2^64: the low 32 bits are exact)
        elseif op == "max" then acc = math.max(acc, v)
        elseif op == "min" then acc = math.min(acc, v) end
      else
        if op == "sum" or op == "avg" then acc = acc + v
        elseif op == "prod" then acc = acc * v
        elseif op == "max" then acc = math.max(acc, v)
        elseif op == "min" then acc = math.min(acc, v) end
      end
    end
    if op == "avg" then acc, abs = acc / n, abs / n end
    R[e], S[e] = acc, abs
  end
  return R, S
end

--- |got - ref| within the bound of n roundings in the dtype: sum/avg n*eps*sum|x| (+ one rounding of the
-- result), prod (n+1)*eps*|ref|, max/min and i32 exact. `slack` multiplies it (the GPUs round every step).
local function close(dt, op, n, got, ref, S, what, slack)
  for e = 1, #ref do
    local g, r = got[e], ref[e]
    local tol
    if dt == "i32" or op == "max" or op == "min" or op == nil then tol = 0
    elseif op == "prod" then tol = (n + 1) * EPS[dt] * math.abs(r) * (slack or 1) + TINY[dt]
    else tol = ((n + 1) * EPS[dt] * S[e] + EPS[dt] * math.abs(r)) * (slack or 1) + TINY[dt] end
    if not (g == r or math.abs(g - r) <= tol) then
      error(fmt("%s: flat index %d of %d: got %.17g, expected %.17g (tolerance %.3g, seed %d)", what, e, #ref, g, r,
        tol, SEED), 3)
    end
  end
end

local function flat_as(a) return T.flat(a) end

-- ---------------------------------------------------------------- one case on the host oracle

local SHAPES = {{}, {1}, {7, 5}, {3, 2, 4}}
local function scatter_shapes(n) return {{n}, {2 * n, 5}, {n, 3, 2}} end

-- random subset of n of the devices, in random order (list order = rank order)
local function pick_devices(list, n)
  local l = {table.unpack(list)}
  for i = #l, 2, -1 do local j = math.random(i); l[i], l[j] = l[j], l[i] end
  return {table.unpack(l, 1, n)}
end

local HOSTS = {"host:0", "host:1", "host:2", "host:3"}

local NCASES = 0
local function run_case(kind, op, dt, devs, s, strided, slack)
  NCASES = NCASES + 1
  local n = #devs
  local arrays, checks, X = {}, {}, {}
  for i = 1, n do
    arrays[i], checks[i] = make(dt, s, devs[i], strided)
    X[i] = flat_as(arrays[i])
  end
  local what = fmt("%s %s %s n=%d %s %s on %s", kind, op or "-", dt, n, shape_str(s), strided and "strided" or "packed",
    table.concat(devs, ","))
  local m = #X[1]
  if kind == "all_reduce" then
    local res = ck.nccl.all_reduce(arrays, op)
    eq(#res, n, what .. ": results")
    local R, S = reduce_ref(op, dt, X, n)
    for i = 1, n do
      ok(res[i] == arrays[i], what .. ": returns its (in-place) arrays")
      eq(arrays[i]:device(), devs[i], what)
      eq(shape_str(arrays[i]:shape()), shape_str(s), what .. ": shape")
      close(dt, op, n, flat_as(arrays[i]), R, S, what .. " array " .. i, slack)
      checks[i](what)
    end
  elseif kind == "reduce" then
    local root = math.random(n)
    ck.nccl.reduce(arrays, op, root)
    local R, S = reduce_ref(op, dt, X, n)
    for i = 1, n do
      if i == root then close(dt, op, n, flat_as(arrays[i]), R, S, what .. " root " .. root, slack)
      else T.same_values(arrays[i], ck.array(X[i], {dtype = dt}):reshape(s), what .. ": non-root " .. i .. " untouched") end
      checks[i](what)
    end
  elseif kind == "broadcast" then
    local root = math.random(n)
    ck.nccl.broadcast(arrays, root)
    for i = 1, n do
      close(dt, nil, n, flat_as(arrays[i]), X[root], nil, what .. " root " .. root .. " -> " .. i)
      checks[i](what)
    end
  elseif kind == "all_gather" then
    local res = ck.nccl.all_gather(arrays)
    local want = {}
    for i = 1, n do for e = 1, m do want[#want + 1] = X[i][e] end end
    local oshape = #s == 0 and {n} or {s[1] * n, table.unpack(s, 2)}
    for i = 1, n do
      eq(res[i]:device(), devs[i], what .. ": output device")
      eq(res[i]:dtype(), dt, what .. ": output dtype")
      eq(shape_str(res[i]:shape()), shape_str(oshape), what .. ": output shape")
      close(dt, nil, n, flat_as(res[i]), want, nil, what .. " output " .. i)
      T.same_values(arrays[i], ck.array(X[i], {dtype = dt}):reshape(s), what .. ": input " .. i .. " untouched")
      checks[i](what)
    end
  elseif kind == "reduce_scatter" then
    local res = ck.nccl.reduce_scatter(arrays, op)
    local R, S = reduce_ref(op, dt, X, n)
    local oshape = {s[1] // n, table.unpack(s, 2)}
    local part = m // n
    for i = 1, n do
      eq(res[i]:device(), devs[i], what .. ": output device")
      eq(shape_str(res[i]:shape()), shape_str(oshape), what .. ": output shape")
      local r, sb = {}, {}
      for e = 1, part do r[e], sb[e] = R[(i - 1) * part + e], S[(i - 1) * part + e] end
      close(dt, op, n, flat_as(res[i]), r, sb, what .. " block " .. i, slack)
      T.same_values(arrays[i], ck.array(X[i], {dtype = dt}):reshape(s), what .. ": input " .. i .. " untouched")
      checks[i](what)
    end
  end
end

local WITH_OP = {all_reduce = true, reduce = true, reduce_scatter = true}
local KINDS = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"}

check(fmt("the process has 4 host devices (seed %d)", SEED), function()
  local n = 0
  for _, d in ipairs(ck.devices()) do if d.backend == "host" then n = n + 1 end end
  eq(n, 4, "host devices")
end)

for _, kind in ipairs(KINDS) do
  for _, dt in ipairs(DTYPES) do
    check(fmt("host oracle: %s %s, n = 1..4, every op, 0-d/1/7x5/3-D, packed and strided in place", kind, dt), function()
      for n = 1, 4 do
        local shapes = kind == "reduce_scatter" and scatter_shapes(n) or SHAPES
        for _, op in ipairs(WITH_OP[kind] and OPS or {false}) do
          op = op or nil
          for _, s in ipairs(shapes) do
            for _, strided in ipairs {false, true} do
              local devs = pick_devices(HOSTS, n)
              if op == "avg" and dt == "i32" then
                local arrays = {}
                for i = 1, n do arrays[i] = random(dt, s, devs[i]) end
                local before = flat_as(arrays[1])
                local e = raises(function() return ck.nccl[kind](arrays, "avg") end,
                  {"ck.nccl." .. kind, "avg needs a float dtype", "i32"})
                ok(not e:find("cukern/[%w_]+%.lua"), e)
                T.same_values(arrays[1], ck.array(before, {dtype = dt}):reshape(s), "a refused avg wrote nothing")
              else
                run_case(kind, op, dt, devs, s, strided)
              end
            end
          end
        end
      end
    end)
  end
end

check("host oracle: the matrix above ran", function()
  ok(NCASES >= 5 * 5 * 4 * 2 * 3, NCASES .. " cases")
  io.write("# ", NCASES, " host-oracle cases compared with the Lua reference\n")
end)

check("host oracle: i32 sums and products wrap mod 2^32 exactly (values near the limits)", function()
  local big = {2147483647, 2147483647, -2147483648, 1}
  local arrays = {}
  for i = 1, 4 do arrays[i] = ck.full({3}, big[i], {device = HOSTS[i], dtype = "i32"}) end
  ck.nccl.all_reduce(arrays, "sum")
  for i = 1, 4 do eq(arrays[i]:totable()[1], wrap32(2147483647 + 2147483647 - 2147483648 + 1), "sum " .. i) end
  for i = 1, 4 do arrays[i] = ck.full({2}, ({65536, 65536, 3, -1})[i], {device = HOSTS[i], dtype = "i32"}) end
  ck.nccl.all_reduce(arrays, "prod")
  eq(arrays[1]:totable()[1], 0, "65536 * 65536 wraps to 0")
  for i = 1, 2 do arrays[i] = ck.full({1}, ({46341, 46341})[i], {device = HOSTS[i], dtype = "i32"}) end
  ck.nccl.all_reduce({arrays[1], arrays[2]}, "prod")
  eq(arrays[2]:totable()[1], wrap32(46341 * 46341), "46341^2")
end)

check("host oracle: arrays over 1 MiB, and ck.last_ran() says the host ran", function()
  local m = (1 << 18) + 3
  for _, dt in ipairs {"f32", "i32"} do
    local arrays, X = {}, {}
    for i = 1, 4 do arrays[i] = random(dt, {m}, HOSTS[i]); X[i] = arrays[i]:flat() end
    ck.nccl.all_reduce(arrays, "sum")
    eq(ck.last_ran().name, "host")
    local R, S = reduce_ref("sum", dt, X, 4)
    close(dt, "sum", 4, arrays[3]:flat(), R, S, dt .. " 1 MiB all_reduce")
    local g = ck.nccl.all_gather(arrays)
    eq(g[2]:numel(), 4 * m)
  end
end)

-- ---------------------------------------------------------------- errors

local function arr(d, s, dt) return random(dt or "f32", s or {4}, d) end

check("errors: the storage dtypes are refused and nothing is written (no combining through a narrower type)", function()
  for _, dt in ipairs {"bool", "i16"} do -- (NCCL has no bool or 16-bit integer type; u8 i8 u32 i64 work since issue 32)
    for _, kind in ipairs(KINDS) do
      local vals = dt == "bool" and {true, false} or {2 ^ 5 + 1, 3} -- (i64: exact; every dtype holds these)
      if dt == "i64" then vals = {2 ^ 40 + 1, 3} end
      local l = {ck.array(vals, {dtype = dt, device = "host:0"}), ck.array(vals, {dtype = dt, device = "host:1"})}
      raises(ck.nccl[kind], {"ck.nccl." .. kind, "dtype " .. dt .. " is not supported", "the dtypes NCCL has", "a:to(\"i32\")"}, l)
      for k = 1, 2 do
        local got = l[k]:totable()
        assert(got[1] == vals[1] and got[2] == vals[2], ("%s %s: array %d was written"):format(kind, dt, k))
      end
    end
  end
end)

check("u8, i8, u32 and i64 combine exactly (issue 32: the integer types NCCL has)", function()
  for _, dt in ipairs {"u8", "i8", "u32", "i64"} do
    local v = dt == "i64" and (1 << 40) + 1 or 100
    local l = {ck.array({v, 3}, {dtype = dt, device = "host:0"}), ck.array({v, 4}, {dtype = dt, device = "host:1"})}
    ck.nccl.all_reduce(l)
    local want = dt == "i8" and ((2 * v + 128) % 256) - 128 or 2 * v -- (i8 wraps: 200 -> -56)
    for k = 1, 2 do
      local got = l[k]:totable()
      assert(got[1] == want and got[2] == 7, ("%s: array %d is {%s, %s}, expected {%s, 7}"):format(dt, k, got[1], got[2], want))
    end
  end
end)

check("errors: two arrays on one device", function()
  for _, kind in ipairs(KINDS) do
    raises(ck.nccl[kind], {"ck.nccl." .. kind, "arrays 1 and 3 are both on host:1", "one array per device"},
      {arr("host:1"), arr("host:2"), arr("host:1")})
  end
end)

check("errors: shape and dtype mismatches name both arrays", function()
  for _, kind in ipairs(KINDS) do
    raises(ck.nccl[kind], {"ck.nccl." .. kind, "same dtype and shape", "f32[4] host:0", "f32[5] host:1"},
      {arr("host:0"), arr("host:1", {5})})
    raises(ck.nccl[kind], {"same dtype and shape", "f64[4] host:2"}, {arr("host:1"), arr("host:2", {4}, "f64")})
    raises(ck.nccl[kind], {"same dtype and shape", "f32[2x2]"}, {arr("host:1"), arr("host:2", {2, 2})})
  end
end)

check("errors: unknown op, unknown variant, root out of range, avg on i32", function()
  for _, kind in ipairs {"all_reduce", "reduce", "reduce_scatter"} do
    for _, bad in ipairs {"xor", "SUM", 1, true} do
      raises(ck.nccl[kind], {"ck.nccl." .. kind, 'op must be "sum", "prod", "max", "min" or "avg"'},
        {arr("host:0"), arr("host:1")}, bad)
    end
  end
  raises(ck.nccl.all_reduce, {"unknown variant 'bogus'", "0 nccl", "3 ring"}, {arr("host:0"), arr("host:1")}, "sum",
    {variant = "bogus"})
  raises(ck.nccl.all_reduce, {"variant must be a string"}, {arr("host:0")}, "sum", {variant = 2})
  raises(ck.nccl.all_reduce, {"unknown option"}, {arr("host:0")}, "sum", {varient = "ring"})
  for _, root in ipairs {0, 3, -1, 1.5, "1"} do
    raises(ck.nccl.broadcast, {"ck.nccl.broadcast", "root must be an integer 1..2"}, {arr("host:0"), arr("host:1")}, root)
    raises(ck.nccl.reduce, {"ck.nccl.reduce", "root must be an integer 1..2"}, {arr("host:0"), arr("host:1")}, "sum", root)
  end
  for _, kind in ipairs {"all_reduce", "reduce", "reduce_scatter"} do
    raises(ck.nccl[kind], {"avg needs a float dtype", "i32"}, {arr("host:0", {4}, "i32"), arr("host:1", {4}, "i32")}, "avg")
  end
end)

check("errors: reduce_scatter needs dim 1 divisible by the number of arrays", function()
  raises(ck.nccl.reduce_scatter, {"ck.nccl.reduce_scatter", "dim 1 (5) must be divisible by the number of arrays (2)"},
    {arr("host:0", {5, 2}), arr("host:1", {5, 2})})
  raises(ck.nccl.reduce_scatter, {"dim 1 (4) must be divisible by the number of arrays (3)"},
    {arr("host:0"), arr("host:1"), arr("host:2")})
  raises(ck.nccl.reduce_scatter, {"must be divisible"}, {arr("host:0", {}), arr("host:1", {})})
end)

check("errors: lists that are not lists of live arrays; extra arguments", function()
  for _, kind in ipairs(KINDS) do
    local f = ck.nccl[kind]
    raises(f, {"ck.nccl." .. kind, "the list of arrays is empty"}, {})
    raises(f, {"must be a list of arrays"}, arr("host:0"))
    raises(f, {"must be a list of arrays"}, nil)
    raises(f, {"entry 2 of the list is"}, {arr("host:0"), "x"})
    local z = arr("host:1"); z:free()
    raises(f, {"freed"}, {arr("host:0"), z})
  end
  raises(ck.nccl.all_gather, {"takes one list of arrays"}, {arr("host:0")}, "sum")
  raises(ck.nccl.all_reduce, {"takes (arrays, op, options)"}, {arr("host:0")}, "sum", nil, 1)
end)

check("errors: a refused collective writes nothing", function()
  local a, b = arr("host:0"), arr("host:0")
  local before = T.flat(a)
  pcall(ck.nccl.all_reduce, {a, arr("host:1"), b})
  T.same_values(a, ck.array(before), "a after a refused all_reduce")
end)

check("ck.nccl.variants() lists the ladder: 0 nccl (the reference), then the hand-written rungs", function()
  local v = ck.nccl.variants()
  ok(#v >= 2, "at least NCCL and one rung")
  eq(v[1].id, 0); eq(v[1].name, "nccl")
  local names = {}
  for i, r in ipairs(v) do
    eq(r.id, i - 1, "ids in order")
    ok(type(r.summary) == "string" and #r.summary > 0, r.name .. ": a summary")
    names[r.name] = true
  end
  for _, want in ipairs {"gather", "oneshot", "ring"} do ok(names[want], "rung " .. want) end
end)

check("ck.nccl.info() says whether NCCL is there, and ck.nccl.wait returns on host devices", function()
  local info = ck.nccl.info()
  ok(type(info.available) == "boolean", "available")
  if info.available then ok(info.version:match("^%d+%.%d+%.%d+$"), "version " .. tostring(info.version))
  else ok(type(info.why) == "string" and #info.why > 0, "why") end
  ck.nccl.wait()
  ck.nccl.wait({arr("host:1")}, 5)
  ck.nccl.wait({"host:2"})
  raises(ck.nccl.wait, {"ck.nccl.wait", "timeout must be a number"}, nil, "x")
  raises(ck.nccl.wait, {"ck.nccl.wait", "list of arrays or devices"}, 5)
end)

-- ---------------------------------------------------------------- GPUs

local NCUDA = 0
for _, d in ipairs(ck.devices()) do if d.backend == "cuda" then NCUDA = NCUDA + 1 end end

if NCUDA >= 1 then
  check("errors: a list mixing host and cuda arrays", function()
    raises(ck.nccl.all_reduce, {"all be on cuda devices or all on host devices", "cuda:0", "host:1"},
      {arr("cuda:0"), arr("host:1")})
  end)
else
  T.pending("errors: a list mixing host and cuda arrays", "needs a CUDA device: this machine has none (" ..
    tostring(ck.device("host").why_host) .. ")")
end

-- one GPU: a list of one array with every variant (the rungs queue nothing for one device; avg divides by 1)
if NCUDA >= 1 then
  check("GPU (one device): all_reduce of a list of one, every variant and op, leaves the values", function()
    for _, v in ipairs(ck.nccl.variants()) do
      if v.name ~= "nccl" or ck.nccl.info().available then
        for _, dt in ipairs(DTYPES) do
          for _, op in ipairs(OPS) do
            if not (op == "avg" and dt == "i32") then
              local x = random(dt, {37, 3}, "host:0")
              local g = x:to("cuda:0")
              ck.nccl.all_reduce({g}, op, {variant = v.name})
              T.same_values(g, x, fmt("%s %s %s", v.name, dt, op))
              eq(ck.last_ran().name, v.name, "ck.last_ran()")
            end
          end
        end
      end
    end
  end)
else
  T.pending("GPU (one device): all_reduce of a list of one, every variant and op, leaves the values",
    "needs a CUDA device: this machine has none (" .. tostring(ck.device("host").why_host) .. ")")
end

local GPU_REASON = NCUDA < 2 and fmt("needs 2 CUDA devices: this machine has %d (%s)", NCUDA,
  NCUDA == 0 and tostring(ck.device("host").why_host) or ck.device("cuda:0").name) or nil
local NCCL_OK = ck.nccl.info().available

-- The same inputs on cuda:0..n-1 and on host:0..n-1 (the oracle); compares every cuda result with the oracle's
-- (floats within a bound that allows a rounding per step, integers exactly). Returns false, why when refused.
local function gpu_case(kind, op, dt, n, s, variant, strided)
  local cdev, hdev = {}, {}
  for i = 1, n do cdev[i], hdev[i] = "cuda:" .. (i - 1), HOSTS[i] end
  local ca, ha, X = {}, {}, {}
  for i = 1, n do
    local x = random(dt, s, "host:0")
    X[i] = x:flat()
    ha[i] = x:to(hdev[i])
    if strided then
      ca[i] = make(dt, s, cdev[i], true)
      ca[i]:copy_(x:to(cdev[i]))
    else
      ca[i] = x:to(cdev[i])
    end
  end
  local root = math.random(n)
  local what = fmt("%s %s %s n=%d %s%s %s", kind, op or "-", dt, n, shape_str(s), strided and " strided" or "",
    variant or "nccl")
  local okc, cres = pcall(function()
    if kind == "all_reduce" then return ck.nccl.all_reduce(ca, op, variant and {variant = variant} or nil)
    elseif kind == "reduce" then return ck.nccl.reduce(ca, op, root)
    elseif kind == "broadcast" then return ck.nccl.broadcast(ca, root)
    elseif kind == "all_gather" then return ck.nccl.all_gather(ca)
    else return ck.nccl.reduce_scatter(ca, op) end
  end)
  if not okc then
    -- a rung that reads peers' memory is refused where two GPUs cannot reach each other: listed, not failed; any
    -- other refusal is a failure (every dtype and op here is one the ladder takes)
    if tostring(cres):find("cannot access each other", 1, true) then return false, what .. ": " .. tostring(cres) end
    error(what .. ": " .. tostring(cres), 0)
  end
  local hres
  if kind == "all_reduce" then hres = ck.nccl.all_reduce(ha, op)
  elseif kind == "reduce" then hres = ck.nccl.reduce(ha, op, root)
  elseif kind == "broadcast" then hres = ck.nccl.broadcast(ha, root)
  elseif kind == "all_gather" then hres = ck.nccl.all_gather(ha)
  else hres = ck.nccl.reduce_scatter(ha, op) end
  ck.nccl.wait(nil, 60)
  local R, S = reduce_ref(op or "sum", dt, X, n)
  for i = 1, n do
    eq(cres[i]:device(), cdev[i], what .. ": device")
    local g, h = cres[i]:to("host:0"):flat(), hres[i]:to("host:0"):flat()
    local sb = S
    if kind == "reduce_scatter" then
      sb = {}
      local part = #S // n
      for e = 1, part do sb[e] = S[(i - 1) * part + e] end
    end
    if kind == "broadcast" or kind == "all_gather" or (kind == "reduce" and i ~= root) then
      close(dt, nil, n, g, h, nil, what .. " array " .. i)
    else
      close(dt, op, n, g, h, sb, what .. " array " .. i .. " vs the host oracle", 2)
      if kind ~= "reduce_scatter" then close(dt, op, n, g, R, S, what .. " array " .. i .. " vs Lua", 2) end
    end
  end
  return true
end

-- sizes 1, odd, 2-D (strided on the GPU side) and, for sum and the collectives without an op on the most devices, a
-- few MiB (odd)
local function gpu_sizes(dt, op, n)
  local esz = ({f32 = 4, f64 = 8, i32 = 4, f16 = 2, bf16 = 2})[dt]
  local s = {{1}, {7}, {1001}, {33, 17}}
  if (op == "sum" or not op) and n == math.min(NCUDA, 4) then s[#s + 1] = {(3 << 20) // esz + 1} end
  return s
end

local GPU = {}
for _, dt in ipairs(DTYPES) do
  GPU[#GPU + 1] = {fmt("GPU: all_reduce %s, every op, NCCL and every rung of the ladder, vs the host oracle", dt),
    function(refused)
      for n = 2, math.min(NCUDA, 4) do
        for _, op in ipairs(OPS) do
          if not (op == "avg" and dt == "i32") then
            for _, v in ipairs(ck.nccl.variants()) do
              if v.name ~= "nccl" or NCCL_OK then
                for _, s in ipairs(gpu_sizes(dt, op, n)) do
                  local done, why = gpu_case("all_reduce", op, dt, n, s, v.name, #s == 2)
                  if not done then refused[#refused + 1] = why end
                end
              end
            end
          end
        end
      end
    end}
end
for _, kind in ipairs {"all_gather", "reduce_scatter", "broadcast", "reduce"} do
  GPU[#GPU + 1] = {fmt("GPU: %s on NCCL, every dtype and op, vs the host oracle", kind), function()
    if not NCCL_OK then error("NCCL is not available: " .. tostring(ck.nccl.info().why), 0) end
    for n = 2, math.min(NCUDA, 4) do
      for _, dt in ipairs(DTYPES) do
        for _, op in ipairs(WITH_OP[kind] and OPS or {false}) do
          if not (op == "avg" and dt == "i32") then
            for _, s in ipairs(gpu_sizes(dt, op or nil, n)) do
              if kind == "reduce_scatter" then s = {s[1] * n, table.unpack(s, 2)} end
              gpu_case(kind, op or nil, dt, n, s, nil, #s == 2)
            end
          end
        end
      end
    end
  end}
end
GPU[#GPU + 1] = {"GPU: ck.nccl.wait() returns after collectives, with and without a list and a timeout", function()
  local a = {}
  for i = 1, NCUDA do a[i] = random("f32", {1 << 20}, "cuda:" .. (i - 1)) end
  ck.nccl.all_reduce(a, "sum")
  ck.nccl.wait()
  ck.nccl.all_reduce(a, "max")
  ck.nccl.wait(a, 30)
  ck.nccl.wait({"cuda:0", "cuda:1"}, 30)
  eq(a[1]:max():item(), a[2]:max():item(), "after wait")
end}

for _, g in ipairs(GPU) do
  if GPU_REASON then T.pending(g[1], GPU_REASON)
  else
    local refused = {}
    check(g[1], g[2], refused)
    if #refused > 0 then
      T.pending(g[1] .. " (rungs that read peers' memory)", fmt("%d case(s) refused, e.g. %s", #refused, refused[1]))
    end
  end
end

T.finish()
