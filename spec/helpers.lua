--- Shared spec helpers: tolerances, comparisons against the host reference, poison, random inputs.
package.path = "./lua/?.lua;./lua/?/init.lua;./?.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath

local ck = require "cukern"
local H = {ck = ck}

H.has_cuda = ck.has_cuda()
H.no_cuda_reason = H.has_cuda and nil or ("no CUDA device here (" .. tostring(ck.device().why_host) ..
  "); GPU specs run on the GPU host via `make gpu-check`")

function H.devices() return H.has_cuda and {"host", "cuda"} or {"host"} end

--- The integer dtypes: {bits, signed}; and a Lua integer wrapped to one of them (modulo 2^bits, two's complement),
-- the oracle of integer arithmetic and casts (issue 32). Lua's own integers are i64.
H.INT_BITS = {u8 = {8, false}, i8 = {8, true}, i16 = {16, true}, i32 = {32, true}, u32 = {32, false}, i64 = {64, true}}
--- The smallest and largest value of an integer dtype (Lua integers).
function H.int_range(dt)
  local bits, signed = H.INT_BITS[dt][1], H.INT_BITS[dt][2]
  if bits == 64 then return math.mininteger, math.maxinteger end
  if signed then return -(1 << (bits - 1)), (1 << (bits - 1)) - 1 end
  return 0, (1 << bits) - 1
end

function H.wrap_int(dt, v)
  local bits, signed = H.INT_BITS[dt][1], H.INT_BITS[dt][2]
  if bits == 64 then return v end
  v = v & ((1 << bits) - 1)
  if signed and v >= (1 << (bits - 1)) then v = v - (1 << bits) end
  return v
end

--- Wrap an `it` body that needs the GPU: it is marked pending, with the reason, where there is none.
-- busted puts `pending` in the spec file's environment, not in this module's: take it from the caller's _ENV.
local function caller_env(level)
  local f = debug.getinfo(level + 1, "f").func
  for i = 1, 255 do
    local name, val = debug.getupvalue(f, i)
    if not name then break end
    if name == "_ENV" then return val end
  end
  return _ENV
end

-- The host backend is the oracle: inside the body the default device is the host, so a reference made without a
-- device is a host result, and the GPU side must say "cuda". A body that then made no array on any GPU compared
-- the host with itself, and fails (opts.alloc = false for the few that check only errors or records).
local function cuda_allocations()
  local n = 0
  for _, d in ipairs(ck.devices()) do
    if d.id:match("^cuda") then n = n + ck.memory(d.id).allocations end
  end
  return n
end

function H.gpu(fn, opts)
  local env = caller_env(2)
  return function(...)
    if not H.has_cuda then return env.pending(H.no_cuda_reason) end
    local prev = ck.default_device()
    env.finally(function() ck.default_device(prev) end)
    ck.default_device("host")
    local before = cuda_allocations()
    fn(...)
    if not (opts and opts.alloc == false) then
      assert(cuda_allocations() > before, "this GPU test made no array on a GPU: it compared the host with itself " ..
        "(make the GPU side with device = \"cuda\" or :to(\"cuda\"))")
    end
  end
end

-- Fresh inputs on every run unless CUKERN_SPEC_SEED pins them (the seed is printed on failure).
H.seed = tonumber(os.getenv("CUKERN_SPEC_SEED")) or (os.time() * 1000 + math.floor(os.clock() * 1e6) % 1000)
math.randomseed(H.seed)
ck.seed(H.seed)

local TOL = {f32 = {rtol = 1e-5, atol = 1e-6}, f64 = {rtol = 1e-12, atol = 1e-13}, i32 = {rtol = 0, atol = 0}}
function H.tol(dtype) local t = TOL[dtype]; return {rtol = t.rtol, atol = t.atol} end

local function flat_f64(a) return a:to("host"):to("f64"):flat() end

local function shape_str(a) return "[" .. table.concat(a:shape(), "x") .. "]" end

--- Compare got with ref (any devices, same shape): |got - ref| <= atol + rtol * |ref| everywhere; NaN only
-- where the reference is NaN. Returns ok, message (the worst element, its index and error).
-- Arrays above 2^16 elements are first checked with the host backend's own f64 ops (the element loop below
-- costs ~0.3 s per million elements, which made the 2^20-element ladder specs run for minutes on the GPU host);
-- the loop still checks a strided sample of them, so a wrong host comparison cannot pass a wrong result alone,
-- and any failure falls through to the loop for the message.
local function close_vectorised(got, ref, tol)
  local g, r = got:to("host"):to("f64"), ref:to("host"):to("f64")
  local near = ck.le(ck.abs(g - r), tol.atol + tol.rtol * ck.abs(r))
  return ck.all(near | ck.eq(g, r) | (ck.isnan(g) & ck.isnan(r)))
end

local function close_at(a, b, tol)
  if b ~= b then return a ~= a end
  if b == math.huge or b == -math.huge then return a == b end
  return a == a and math.abs(a - b) <= tol.atol + tol.rtol * math.abs(b)
end

function H.allclose(got, ref, tol)
  tol = tol or H.tol(ref:dtype())
  if shape_str(got) ~= shape_str(ref) then
    return false, ("shape %s, expected %s"):format(shape_str(got), shape_str(ref))
  end
  if ref:numel() > 65536 and close_vectorised(got, ref, tol) then
    local gs, rs = got:to("host"):reshape({-1}), ref:to("host"):reshape({-1})
    local step = ref:numel() // 4096
    local idx = ck.arange(1, ref:numel(), step, {dtype = "i64", device = "host"})
    local g, r = ck.take(gs, idx):to("f64"):flat(), ck.take(rs, idx):to("f64"):flat()
    local sample_ok = true
    for i = 1, #r do sample_ok = sample_ok and close_at(g[i], r[i], tol) end
    if sample_ok then return true end
  end
  local g, r = flat_f64(got), flat_f64(ref)
  local worst, wi, bad, nbad = -1, nil, nil, 0
  for i = 1, #r do
    local a, b = g[i], r[i]
    if not close_at(a, b, tol) then
      nbad = nbad + 1
      local e = (a ~= a) and math.huge or math.abs(a - b)
      if e > worst then worst, wi, bad = e, i, {a, b} end
    end
  end
  if nbad == 0 then return true end
  return false, ("%d of %d elements differ; worst at flat index %d: got %.17g, expected %.17g (rtol %g, atol %g, seed %d)")
    :format(nbad, #r, wi, bad[1], bad[2], tol.rtol, tol.atol, H.seed)
end

function H.assert_close(got, ref, tol, label)
  local ok, msg = H.allclose(got, ref, tol)
  assert(ok, (label and (label .. ": ") or "") .. tostring(msg))
end

--- Exact equality, NaN matching NaN, in the arrays' own dtype (for copies and transposes: bits move).
function H.assert_equal(got, ref, label)
  assert(shape_str(got) == shape_str(ref), ("%sshape %s, expected %s"):format(label and label .. ": " or "",
    shape_str(got), shape_str(ref)))
  assert(got:dtype() == ref:dtype(), (label or "") .. ": dtype " .. got:dtype() .. " vs " .. ref:dtype())
  local g, r = got:to("host"):flat(), ref:to("host"):flat()
  for i = 1, #r do
    if not (g[i] == r[i] or (g[i] ~= g[i] and r[i] ~= r[i])) then
      error(("%sflat index %d: got %.17g, expected %.17g (seed %d)"):format(label and label .. ": " or "", i, g[i],
        r[i], H.seed), 2)
    end
  end
end

--- Raise the first (up to 12) of a list of failure messages, with the seed (acceptance loops over rungs).
function H.report(failures)
  if #failures > 0 then
    local show = {}
    for k = 1, math.min(#failures, 12) do show[k] = failures[k] end
    error(("%d failures (seed %d):\n  %s"):format(#failures, H.seed, table.concat(show, "\n  ")), 2)
  end
end

--- Poison: NaN for floats, INT32_MIN for i32, so that unwritten outputs show.
function H.poison(a)
  return a:fill(a:dtype() == "i32" and -2147483648 or 0 / 0)
end

--- Fresh random values: floats uniform in [-1, 1) (never all zeros), ints in [-50, 50].
function H.rand(shape, dtype, device)
  dtype, device = dtype or "f32", device or "host"
  local u = ck.rand(shape, {dtype = dtype == "i32" and "f64" or dtype, device = device})
  if dtype == "i32" then return (u * 101 - 50):floor():to("i32") end
  return u * 2 - 1
end

--- A file's bytes, and bytes to a file (binary; errors raise).
function H.read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
function H.write_file(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

--- Runs a child process whose checks print lines (spec/child_harness.lua) and returns
-- {checks = {{status = "ok"|"not ok"|"pending", name, why}, ...}, done = bool, done_count (processes that reached
--  their end: the ranks of a bin/ckrun run, whose "[rank i] " prefixes are dropped), rc = true|false, out = all
--  output, seconds}. `cmd` is a command for timeout(1) (environment: `env VAR=value cmd`); its stderr goes into `out` too.
function H.child_checks(cmd, timeout_s)
  local t0 = os.time()
  local p = assert(io.popen(("timeout %d %s 2>&1"):format(timeout_s or 120, cmd)))
  local res = {checks = {}, done = false, lines = {}}
  local function unesc(x) return (x:gsub("\\(.)", function(c) return c == "n" and "\n" or c end)) end
  res.done_count = 0
  for line in p:lines() do
    res.lines[#res.lines + 1] = line
    line = line:gsub("^%[rank %d+%] ", "") -- (bin/ckrun's prefix)
    local st, rest = line:match("^(not ok) %- (.*)$")
    if not st then st, rest = line:match("^(ok) %- (.*)$") end
    if not st then st, rest = line:match("^(pending) %- (.*)$") end
    if st then
      local name, why = rest, nil
      if st ~= "ok" then name, why = rest:match("^(.-)\t(.*)$"); name = name or rest end
      res.checks[#res.checks + 1] = {status = st, name = unesc(name), why = why and unesc(why)}
    elseif line:match("^done %d+$") then res.done, res.done_count = true, res.done_count + 1 end
  end
  local ok, how, code = p:close()
  res.rc, res.how, res.code = ok, how, code
  res.seconds = os.time() - t0
  res.out = table.concat(res.lines, "\n")
  return res
end

--- One `it` per check of H.child_checks' result, plus one that the child reached its end and exited 0. `env` is
-- the spec file's environment (for `it` and `pending`: pass _ENV).
function H.child_its(env, res, what)
  for _, c in ipairs(res.checks) do
    env.it(c.name, function()
      if c.status == "pending" then return env.pending(c.why) end
      if c.status ~= "ok" then error(c.why or "failed", 0) end
    end)
  end
  env.it(what .. ": the child process ran to its end and exited 0", function()
    local tail = {}
    for i = math.max(1, #res.lines - 30), #res.lines do tail[#tail + 1] = res.lines[i] end
    assert(res.done and res.rc, ("%s: %s %s (done: %s); last output:\n%s"):format(what, tostring(res.how),
      tostring(res.code), tostring(res.done), table.concat(tail, "\n")))
  end)
end

H.shapes_awkward = {{1, 1}, {1, 7}, {7, 1}, {3, 5}, {31, 33}, {64, 64}, {127, 255}, {1000, 37}, {37, 1000}}

--- A fresh temporary directory (its path) and a shell command's (ok, output with stderr) — for specs that talk to
-- other programs (Octave, Python).
function H.tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p '" .. d .. "'"))
  return d
end
function H.sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  return p:close(), out
end

return H
