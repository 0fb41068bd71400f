--- Bad-input catalogue (issue 18): every public function of `ck` and every array method, called with wrong
-- types, out-of-range values, freed arrays, overflowing sizes, unknown options and variants. Each case runs
-- in a child process (spec/badinput_child.lua, batched; after a crash the rest run in a new child), so a
-- crash is counted, not fatal. Every case must raise a Lua error (not crash, not pass silently) whose
-- message names the public function and points at the caller's line ("caller.lua:<line>:").
--
-- The list of names comes from the module itself: a new function or method without an entry here fails.
-- Cases whose fix belongs to another branch carry `item` (issue 18 item and owner) and are reported as
-- pending ("expected to fail until merged") while they still fail; once clean, the spec says to drop the tag.
-- A case can carry `norun` (listed, not run): none would run for hours since the host backend refuses work
-- past a documented limit (issue 18 item 6, src/ops/dispatch.c host_work_ok), but a case whose fixture needs a
-- file format this build lacks (`needs = "npz"`) is not run there.
--
--   CUKERN_BADINPUT_VERBOSE=1   print every case with its outcome
local H = require "spec.helpers"
local ck = H.ck

local LEAD, INIT = "lead", "init.lua/l_array.c owner"
local function tag(item, owner, why, sanitizer_only)
  return {item = item, owner = owner, why = why, sanitizer_only = sanitizer_only}
end

-- ---------------------------------------------------------------- generic cases

local BAD_TYPES = {'"x"', "{}", "true", "print", "F"}

-- Fixtures (badinput_child.lua): A f32[3x4], B f32[4x5], V f32[3], I i32[3], D f64[3x4], S 0-d f32,
-- F freed, E expanded [3] (stride 0), X a table whose every field access raises.
local CAT = {}
local function add(name, cases) CAT[name] = CAT[name] or {}; for _, c in ipairs(cases) do table.insert(CAT[name], c) end end
local function C(code, t) t = t or {}; t.code = code; return t end

-- creation: shapes
for _, f in ipairs {"empty", "zeros", "ones", "rand", "randn"} do
  add("ck." .. f, {
    C(("ck.%s(-1)"):format(f)), C(("ck.%s(2.5)"):format(f)), C(("ck.%s('x')"):format(f)),
    C(("ck.%s(0/0)"):format(f)), C(("ck.%s(2^62, 4)"):format(f)), C(("ck.%s(2^31, 2^31, 2^31)"):format(f)),
    C(("ck.%s({2^62, 2^62})"):format(f)), C(("ck.%s({1,1,1,1,1,1,1,1,1})"):format(f)),
    C(("ck.%s(1,1,1,1,1,1,1,1,1)"):format(f)), C(("ck.%s({-3})"):format(f)), C(("ck.%s({'a'})"):format(f)),
    C(("ck.%s(3, {dtype = 'f17'})"):format(f)), C(("ck.%s(3, {dtype = 7})"):format(f)),
    C(("ck.%s(3, {device = 'tpu'})"):format(f)), C(("ck.%s(3, {bogus = 1})"):format(f)),
    C(("ck.%s(3, {variant = 'x'})"):format(f)),
    C(("ck.%s(setmetatable({}, {__len = function() return 2^40 end}))"):format(f)),
    C(("ck.%s(setmetatable({}, {__len = function() return (1 << 32) + 2 end}))"):format(f)),
    -- X raises from its own __index: any error is right, its message is X's
    C(("ck.%s(X)"):format(f), {any_error = true}),
  })
end
add("ck.rand", {C("ck.rand(3, {dtype = 'i32'})")})
add("ck.randn", {C("ck.randn(3, {dtype = 'i32'})")})
add("ck.full", {
  C("ck.full(nil, 1)"), C("ck.full({2}, 'x')"),
  C("ck.full({2}, nil)"), C("ck.full({-2}, 1)"), C("ck.full({2^62, 2^62}, 1)"), C("ck.full('x', 1)"),
  C("ck.full({2}, 1, {bogus = 1})"), C("ck.full({2}, 1, 'f64')"),
})
add("ck.eye", {
  C("ck.eye()"), C("ck.eye(-1)"), C("ck.eye('x')"),
  C("ck.eye(2^62, 2^62)"), C("ck.eye(2.5)"), C("ck.eye(3, {bogus = 1})"), C("ck.eye(3, 'x')"),
})
add("ck.arange", {
  C("ck.arange(0/0)"), C("ck.arange(1, 10, 0)"),
  C("ck.arange('x')"), C("ck.arange()"), C("ck.arange(2^62)"), C("ck.arange(0, 1/0)"),
  C("ck.arange(math.mininteger, math.maxinteger)"),
  C("ck.arange(3, {bogus = 1})"), C("ck.arange(3, {dtype = 'x'})"),
  -- issue 29: an i32 result that cannot hold its values
  C("ck.arange(math.mininteger, math.mininteger + 3, {dtype = 'i32'})"), C("ck.arange(0, 2^40, 2^38, {dtype = 'i32'})"),
})
add("ck.linspace", {
  C("ck.linspace(0, 1, -1)"), C("ck.linspace('a', 1, 3)"), C("ck.linspace(0, 1, 2.5)"), C("ck.linspace(0, 1, 2^62)"),
  C("ck.linspace(0, 1, 3, {bogus = 1})"), C("ck.linspace()"), C("ck.linspace(0, 3e9, 4, {dtype = 'i32'})"),
})
add("ck.array", {
  C("ck.array({1, {2}})"), C("ck.array({{1, 2}, {3}})"), C("ck.array({'a'})"), C("ck.array(print)"),
  C("ck.array({1}, {dtype = 'x'})"), C("ck.array({1}, {bogus = 1})"), C("ck.array(F)"), C("ck.array('x')"),
  C("ck.array({1}, 'f64')"),
  C("ck.array({1, true, false})"), C("ck.array({true, 1})"), C("ck.array({{true}}, {dtype = 'i32'})"), -- (issue 32)
})
add("ck.scalar", {C("ck.scalar('x')"), C("ck.scalar(1, {dtype = 'x'})"), C("ck.scalar(F)"),
  C("ck.scalar({})")})

-- module functions
add("ck.default_device", {C("ck.default_device('tpu')"), C("ck.default_device(7)"), C("ck.default_device('cuda:99')"),
  C("ck.default_device('host:9')"), C("ck.default_device('cuda:-1')"), C("ck.default_device('host:x')")})
add("ck.devices", {C("ck.devices(1)"), C("ck.devices('cuda')")})
add("ck.with_device", {C("ck.with_device()"), C("ck.with_device('tpu', function() end)"), C("ck.with_device('host', 7)"),
  C("ck.with_device('host:5')"), C("ck.with_device(1, function() end)")})
add("ck.sync_mode", {C("ck.sync_mode({}, 'x') + 1")})
add("ck.batching", {C("ck.batching('on')"), C("ck.batching(1)"), C("ck.batching({})")})
add("ck.seed", {C("ck.seed('x')"), C("ck.seed(0/0)"), C("ck.seed({})")})
add("ck.variants", {C("ck.variants('nope')"), C("ck.variants()"), C("ck.variants(7)")})
-- extra arguments are errors, not ignored (issue 29): ck.memory(a) may have meant something else
for _, f in ipairs {"device", "has_cuda", "sync", "memory", "empty_cache", "last_ran"} do
  add("ck." .. f, {C(("ck.%s(A)"):format(f)), C(("ck.%s(1, 2)"):format(f))})
end
add("ck.sync", {C("ck.sync('tpu')"), C("ck.sync('host:7')")})
add("ck.memory", {C("ck.memory('cuda:64')")})
add("ck.is_array", {C("ck.is_array(A, 2)"), C("ck.is_array()")})
add("ck.format", {C("ck.format('x')"), C("ck.format(nil)"), C("ck.format({})")})
add("ck.kernel", {
  C("ck.kernel('garbage', 'f', {'f32*'})"), C("ck.kernel(nil, 'f', {})"), C("ck.kernel('x', nil, {})"),
  C("ck.kernel('x', 'f', {'f99'})"), C("ck.kernel('x', 'f', 'f32*')"),
})
add("ck.bench", {
  C("ck.bench()"), C("ck.bench{spec = {op = 'nope', a = A}}"), C("ck.bench{spec = {op = 'matmul', a = A, b = A}}"),
  C("ck.bench{spec = {op = 'add', a = F, b = F}}"), C("ck.bench{spec = {op = 'add', a = A, b = A}, reps = -1}"),
  C("ck.bench{spec = {op = 'add', a = A, b = A}, reps = 'x'}"),
  C("ck.bench{spec = {op = 'add', a = A, b = A}, reps = 2^32 + 1}"), C("ck.bench{spec = {op = 'add', a = A}}"),
  C("ck.bench{spec = {op = 'add', a = A, b = A}, bogus = 1}"),
  C("ck.bench{spec = {op = 'add', a = A, b = A, variant = 'nope'}}"), C("ck.bench{spec = {op = 'add', a = A, b = A, variant = 99}}"),
  C("ck.bench{spec = {op = 'add', a = A, b = A}, warmup = 2^32 + 1}"),
})
add("ck.launch_overhead", {C("ck.launch_overhead('x')"),
  C("ck.launch_overhead(-5)")})
add("ck.core.time_op", {
  C("ck.core.time_op({op = 'add', a = A, b = F}, 1, 2, 0)"), C("ck.core.time_op({op = 'nope', a = A}, 1, 2, 0)"),
  C("ck.core.time_op({op = 'add', a = A, b = A}, -1, 2, 0)"), C("ck.core.time_op({op = 'add', a = A, b = A}, 1, 0, 0)"),
  C("ck.core.time_op('x', 1, 2, 0)"), C("ck.core.time_op({op = 'add', a = A, b = A}, 1, 2^40, 0)"),
  -- fields through a metatable, each a fresh array that a full GC may collect as soon as it is popped
  C("ck.core.time_op(setmetatable({}, {__index = function(t, k) collectgarbage() if k == 'op' then return 'add' elseif k == 'a' or k == 'b' then return ck.rand(3) end end}), 1, 2, -1)"),
  -- the same with flush 0, so that the fields are read (and the fresh arrays popped and collected) before the
  -- op fails on shapes: under `make sanitize` a kept pointer is a use-after-free (issue 18 item 3)
  C("ck.core.time_op(setmetatable({}, {__index = function(t, k) collectgarbage() if k == 'op' then return 'add' elseif k == 'a' then return ck.rand(3) elseif k == 'b' then return ck.rand(4) end end}), 1, 2, 0)"),
  C("ck.core.time_op(setmetatable({}, {__index = function(t, k) collectgarbage() if k == 'op' then return 'add' elseif k == 'a' or k == 'b' then return ck.rand(3) elseif k == 'variant' then return 'no' .. 'pe' end end}), 1, 2, 0)"),
  C("ck.core.time_op({op = 'add', a = A, b = A}, 2^32 + 1, 2, 0)"),
})

-- files (lua/cukern/io.lua, src/io_*.c): paths under the scratch directory T; W/NPY write fixtures by hand
add("ck.save", {
  C("ck.save()"), C("ck.save(7, A)"), C("ck.save({}, A)"), C("ck.save(A, A)"),
  C("ck.save(T .. '/a.npy')"), C("ck.save(T .. '/a.npy', 'x')"), C("ck.save(T .. '/a.npy', F)"),
  C("ck.save(T .. '/a.npy', {A})"), C("ck.save(T .. '/a.npy', {a = A})"),
  C("ck.save(T .. '/a.txt', A)"), C("ck.save(T .. '/a', A)"), C("ck.save(T, A)"),
  C("ck.save(T .. '/no/such/dir/a.npy', A)"), C("ck.save('/proc/a.npy', A)"),
  C("ck.save(T .. '/d.npy', A)", {setup = "os.execute('mkdir ' .. T .. '/d.npy')"}),
  C("ck.save(T .. '/a.npy', A, {compress = 'x'})"), C("ck.save(T .. '/a.npz', {a = A}, {compress = 10})"),
  C("ck.save(T .. '/a.npz', {a = A}, {compress = -1})"), C("ck.save(T .. '/a.npz', {a = A}, {compress = 2.5})"),
  C("ck.save(T .. '/a.npz', {a = 'x'})"), C("ck.save(T .. '/a.npz', {a = F})"), C("ck.save(T .. '/a.npz', 'x')"),
  C("ck.save(T .. '/a.npz', {[2.5] = A})"), C("ck.save(T .. '/a.npz', {[true] = A})"),
  C("ck.save(T .. '/a.npz', {A, arr_0 = B})"), C("ck.save(T .. '/a.npz', {a = A, b = X})", {any_error = true}),
  C("ck.save(T .. '/a.mat', A)"), C("ck.save(T .. '/a.mat', {['1bad'] = A})"), C("ck.save(T .. '/a.mat', {['a b'] = A})"),
  C("ck.save(T .. '/a.mat', {[string.rep('a', 64)] = A})"), C("ck.save(T .. '/a.mat', {a = F})"),
  C("ck.save(T .. '/a.npz', {a = A}, 'x')"), C("ck.save(T .. '/a.npz', {a = A}, {bogus = 1})"),
})
add("ck.savez", {
  C("ck.savez()"), C("ck.savez(7, {a = A})"), C("ck.savez(T .. '/a.npz')"), C("ck.savez(T .. '/a.npz', A)"),
  C("ck.savez(T .. '/a.npz', 'x')"), C("ck.savez(T .. '/a.npz', {a = 'x'})"), C("ck.savez(T .. '/a.npz', {a = F})"),
  C("ck.savez(T .. '/a.npz', {[2.5] = A})"), C("ck.savez(T .. '/a.npz', {A, arr_0 = B})"),
  C("ck.savez(T .. '/no/such/dir/a.npz', {a = A})"),
  C("ck.savez(T .. '/d.npz', {a = A})", {setup = "os.execute('mkdir ' .. T .. '/d.npz')"}),
  C("ck.savez(T .. '/a.npz', {a = A}, {compress = 'yes'})"), C("ck.savez(T .. '/a.npz', {a = A}, {compress = 99})"),
  C("ck.savez(T .. '/a.npz', {a = A}, 'x')"), C("ck.savez(T .. '/a.npz', {a = A}, {bogus = 1})"),
})
add("ck.load", {
  C("ck.load()"), C("ck.load(7)"), C("ck.load({})"), C("ck.load(A)"),
  C("ck.load(T .. '/missing.npy')"), C("ck.load(T .. '/missing.npz')"), C("ck.load(T .. '/missing.mat')"),
  C("ck.load(T .. '/a.txt')", {setup = "W('a.txt', 'x')"}), C("ck.load(T)"),
  C("ck.load(T .. '/d.npy')", {setup = "os.execute('mkdir ' .. T .. '/d.npy')"}),
  C("ck.load(W('e.npy', ''))"), C("ck.load(W('g.npy', 'garbage, not a .npy file'))"),
  C("ck.load(W('h.npy', '\\147NUMPY\\1\\0\\255\\255{'))"), C("ck.load(W('v.npy', '\\147NUMPY\\9\\0\\16\\0{}              \\n'))"),
  C([[ck.load(NPY('c.npy', "{'descr': '<c32', 'fortran_order': False, 'shape': (2,), }", string.rep('\0', 64)))]]),
  C([[ck.load(NPY('o.npy', "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", string.rep('\0', 16)))]]),
  C([[ck.load(NPY('u.npy', "{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", string.rep('\0', 24)))]]),
  C([[ck.load(NPY('m.npy', "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", string.rep('\0', 8)))]]),
  C([[ck.load(NPY('k.npy', "{'descr': '<f4', 'shape': (2,), }", string.rep('\0', 8)))]]),
  C([[ck.load(NPY('s.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", string.rep('\0', 8)))]]),
  C([[ck.load(NPY('l.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", string.rep('\0', 8)))]]),
  C([[ck.load(NPY('n.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 2), }", string.rep('\0', 8)))]]),
  C([[ck.load(NPY('b.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", ''))]]),
  C([[ck.load(NPY('p.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 2147483648, 2147483648), }", ''))]]),
  C([[ck.load(NPY('q.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", ''))]]),
  C([[ck.load(NPY('9.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", string.rep('\0', 4)))]]),
  C([[ck.load(NPY('i.npy', "{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }", string.pack('<i8', math.mininteger + 5)))]]),
  C("ck.load(W('g.npz', 'PK\\3\\4 garbage, not a zip file'))"), C("ck.load(W('g.mat', string.rep('garbage ', 40)))"),
  -- a saved .npz with one data byte changed (CRC mismatch), a .mat cut inside its variable
  -- (their fixtures are written by the format itself: listed, not run, in a build without it)
  C("ck.load(T .. '/c.npz')", {needs = "npz", setup = "ck.savez(T .. '/c.npz', {a = A}); local s = R('c.npz'); " ..
    "W('c.npz', s:sub(1, 170) .. string.char((s:byte(171) + 1) % 256) .. s:sub(172))"}),
  C("ck.load(T .. '/t.npz')", {needs = "npz",
    setup = "ck.savez(T .. '/t.npz', {a = A}); local s = R('t.npz'); W('t.npz', s:sub(1, #s // 2))"}),
  C("ck.load(T .. '/t.mat')", {needs = "mat",
    setup = "ck.save(T .. '/t.mat', {a = ck.rand(50, 50)}); local s = R('t.mat'); W('t.mat', s:sub(1, #s - 100))"}),
  C("ck.load(T .. '/t.npy')", {setup = "ck.save(T .. '/t.npy', A); local s = R('t.npy'); W('t.npy', s:sub(1, #s - 5))"}),
  C("ck.load(T .. '/a.npy', {device = 'tpu'})", {setup = "ck.save(T .. '/a.npy', A)"}),
  C("ck.load(T .. '/a.npy', 'cuda')", {setup = "ck.save(T .. '/a.npy', A)"}),
  C("ck.load(T .. '/a.npy', {bogus = 1})", {setup = "ck.save(T .. '/a.npy', A)"}),
})
-- sharded and replicated arrays (lua/cukern/shard.lua; only host:0 exists in the child: host:1 is an unknown device)
add("ck.shard", {
  C("ck.shard()"), C("ck.shard('x')"), C("ck.shard(F)"), C("ck.shard(S)"), C("ck.shard(A, 'host')"),
  C("ck.shard(A, {dim = 3})"), C("ck.shard(A, {dim = 0})"), C("ck.shard(A, {dim = 1.5})"), C("ck.shard(A, {bogus = 1})"),
  C("ck.shard(A, {devices = {}})"), C("ck.shard(A, {devices = {'tpu'}})"), C("ck.shard(A, {devices = {7}})"),
  C("ck.shard(A, {devices = {'host:0', 'host:0'}})"), C("ck.shard(A, {devices = {'host:0', 'host:1'}})"),
  C("ck.shard(A, {devices = {'host:0', x = 1}})"), C("ck.shard(A, {devices = A})"), C("ck.shard(A, {}, 1)"),
  C("ck.shard(ck.shard(A, {devices = {'host:0'}}))"), C("ck.shard(A, X)", {any_error = true}),
})
add("ck.replicate", {
  C("ck.replicate()"), C("ck.replicate('x')"), C("ck.replicate(F)"), C("ck.replicate(A, 'host')"),
  C("ck.replicate(A, {})"), C("ck.replicate(A, {'host:0', 'host:0'})"), C("ck.replicate(A, {'host:9'})"),
  C("ck.replicate(A, {7})"), C("ck.replicate(A, nil, 1)"), C("ck.replicate(ck.replicate(A, {'host:0'}))"),
})
-- ck.io_formats() and the introspection below take no arguments
CAT["ck.io_formats"] = {none = "takes no argument that can be wrong (extra arguments are ignored, as in Lua)"}

-- fused kernels (lua/cukern/map.lua, src/lua/l_map.c, src/fused/expr_*.c, src/fused/map.c)
local SPEC = "{map = 'x', reduce = 'a + b', identity = 0}"
add("ck.map", {
  C("ck.map()"), C("ck.map({}, {x = A})"), C("ck.map(print)"), C("ck.map(A, {x = A})"),
  C("ck.map('a * (x + y', {a = 2, x = A, y = A})"), C("ck.map('x +', {x = A})"), C("ck.map('x $ 2', {x = A})"),
  C("ck.map('', {x = A})"), C("ck.map(';;', {x = A})"), C("ck.map('x ^ 2', {x = A})"), C("ck.map('1x', {x = A})"),
  C("ck.map('z + 1', {x = A})"), C("ck.map('x + 1')"), C("ck.map('foo(x)', {x = A})"), C("ck.map('max(x)', {x = A})"),
  C("ck.map('clamp(x, 1)', {x = A})"), C("ck.map('exp(x)', {x = I})"), C("ck.map('_t = x', {x = A})"),
  C("ck.map('x', 'x')"), C("ck.map('x', A)"), C("ck.map('x', {x = 'x'})"), C("ck.map('x', {x = F})"),
  C("ck.map('x', {x = print})"), C("ck.map('x', {x = A, [1] = A})"), C("ck.map('x', {x = X})", {any_error = true}),
  C("ck.map('x + y', {x = A, y = ck.rand(5)})"),
  C("ck.map(string.rep('(', 1000000) .. 'x' .. string.rep(')', 1000000), {x = A})"),
  C("ck.map(string.rep('-', 1000000) .. 'x', {x = A})"),
  C("ck.map('x', setmetatable({}, {__index = function() return A end}))"),
  C("ck.map('x', (function() local t = {} for i = 1, 65 do t['x' .. i] = 1 end t.x = A return t end)())"),
  C("ck.map((function() local t = {} for i = 1, 17 do t[i] = 'o' .. i .. ' = x' end return table.concat(t, ';') end)(), {x = A})"),
  C("ck.map('x', {x = A}, 'x')"), C("ck.map('x', {x = A}, {bogus = 1})"), C("ck.map('x', {x = A}, {dtype = 'c64'})"),
  C("ck.map('x', {x = A}, {dtype = 7})"), C("ck.map('x', {x = A}, {variant = 'nope'})"),
  C("ck.map('x', {x = A}, {out = 'x'})"), C("ck.map('x', {x = A}, {out = F})"), C("ck.map('x', {x = A}, {out = ck.rand(7)})"),
  C("ck.map('x', {x = A}, {out = E})"), C("ck.map('x', {x = A}, {out = ck.zeros(3, 4, {dtype = 'i32'})})"),
  C("ck.map('s = x + 1; d = x - 1', {x = A}, {out = ck.rand(3, 4)})"),
  C("ck.map('s = x + 1; d = x - 1', {x = A}, {out = {s = ck.rand(3, 4), q = ck.rand(3, 4)}})"),
  C("ck.map('s = x + 1; d = x - 1', {x = A}, {out = {s = 'x'}})"),
})
add("ck.reduce_map", {
  C("ck.reduce_map()"), C("ck.reduce_map('x', {x = A})"), C("ck.reduce_map(A, {x = A})"),
  C("ck.reduce_map({reduce = 'a + b', identity = 0}, {x = A})"), C("ck.reduce_map({map = 'x', identity = 0}, {x = A})"),
  C("ck.reduce_map({map = 'x', reduce = 'a + b'}, {x = A})"), C("ck.reduce_map({map = 'x', reduce = 'a + b', identity = 'x'}, {x = A})"),
  C("ck.reduce_map({map = {}, reduce = 'a + b', identity = 0}, {x = A})"),
  C("ck.reduce_map({map = 'x *', reduce = 'a + b', identity = 0}, {x = A})"),
  C("ck.reduce_map({map = 'x', reduce = 'a + c', identity = 0}, {x = A})"),
  C("ck.reduce_map({map = 'x', reduce = 'a + b', identity = 0, post = 'r + q'}, {x = A})"),
  C("ck.reduce_map({map = 'x', reduce = 'a + b', identity = 0, post = 'r +'}, {x = A})"),
  C("ck.reduce_map({map = 'z', reduce = 'a + b', identity = 0}, {x = A})"),
  C("ck.reduce_map({map = 's = x; t = x', reduce = 'a + b', identity = 0}, {x = A})"),
  C("ck.reduce_map({map = 'x', reduce = 'a + b', identity = 0, bogus = 1}, {x = A})"),
  C("ck.reduce_map({map = 'x *', reduce = 'a + b', identity = 0})"),
  C("ck.reduce_map(" .. SPEC .. ")('x')"), C("ck.reduce_map(" .. SPEC .. ")({x = F})"),
  C("ck.reduce_map(" .. SPEC .. ")({x = A}, {dim = 3})"),
  C("ck.reduce_map(" .. SPEC .. ", 'x')"), C("ck.reduce_map(" .. SPEC .. ", {x = F})"), C("ck.reduce_map(" .. SPEC .. ", {x = 'x'})"),
  C("ck.reduce_map(" .. SPEC .. ", {y = A})"), C("ck.reduce_map(" .. SPEC .. ", {x = A}, 'x')"),
  C("ck.reduce_map(" .. SPEC .. ", {x = A}, {dim = 3})"), C("ck.reduce_map(" .. SPEC .. ", {x = A}, {dim = -3})"),
  C("ck.reduce_map(" .. SPEC .. ", {x = A}, {dim = 0})"), C("ck.reduce_map(" .. SPEC .. ", {x = A}, {dim = 1.5})"),
  C("ck.reduce_map(" .. SPEC .. ", {x = A}, {dim = 'x'})"), C("ck.reduce_map(" .. SPEC .. ", {x = A}, {dim = 1 << 40})"),
  C("ck.reduce_map(" .. SPEC .. ", {x = A}, {dim = (1 << 32) + 1})"), C("ck.reduce_map(" .. SPEC .. ", {x = A}, {dim = math.mininteger})"),
  C("ck.reduce_map(" .. SPEC .. ", {x = A}, {bogus = 1})"), C("ck.reduce_map(" .. SPEC .. ", {x = A}, {dtype = 'c64'})"),
  C("ck.reduce_map(" .. SPEC .. ", {x = A}, {keepdim = 'yes'})"),
  C("ck.reduce_map(" .. SPEC .. ", {x = A}, {out = 'x'})"), C("ck.reduce_map(" .. SPEC .. ", {x = A}, {out = F})"),
  C("ck.reduce_map(" .. SPEC .. ", {x = A}, {out = ck.rand(7)})"),
  C("ck.reduce_map(" .. SPEC .. ", {x = A}, {dim = 2, out = E})"),
})
for _, f in ipairs {"map_info", "map_source"} do
  add("ck." .. f, {
    C(("ck.%s()"):format(f)), C(("ck.%s({}, {x = A})"):format(f)), C(("ck.%s(print)"):format(f)),
    C(("ck.%s('a * (x + y', {a = 2, x = A, y = A})"):format(f)), C(("ck.%s('z + 1', {x = A})"):format(f)),
    C(("ck.%s('exp(x)', {x = I})"):format(f)), C(("ck.%s('x', 'x')"):format(f)), C(("ck.%s('x', {x = F})"):format(f)),
    C(("ck.%s('x', {x = 'x'})"):format(f)), C(("ck.%s('x + y', {x = A, y = ck.rand(5)})"):format(f)),
    C(("ck.%s('x', {x = A}, 'x')"):format(f)), C(("ck.%s('x', {x = A}, {bogus = 1})"):format(f)),
    C(("ck.%s('x', {x = A}, {dtype = 'c64'})"):format(f)), C(("ck.%s('x', {x = A}, {out = F})"):format(f)),
    C(("ck.%s('x', {x = A}, {out = ck.rand(7)})"):format(f)),
  })
end
add("ck.map_source", {
  C("ck.map_source({map = 'x *', reduce = 'a + b', identity = 0}, {x = A})"),
  C("ck.map_source({map = 'x', reduce = 'a + b'}, {x = A})"),
  C("ck.map_source(" .. SPEC .. ", {x = F})"), C("ck.map_source(" .. SPEC .. ", {x = A}, {dim = 3})"),
  C("ck.map_source(" .. SPEC .. ", {x = A}, {bogus = 1})"), C("ck.map_source(" .. SPEC .. ", {x = A}, {dtype = 'c64'})"),
})
local KSRC = [['extern "C" __global__ void f(float *p) { p[0] = 1; }']]
add("ck.kernel_build", {
  C("ck.kernel_build()"), C("ck.kernel_build(" .. KSRC .. ")"), C("ck.kernel_build({}, 'f')"), C("ck.kernel_build(A, 'f')"),
  C("ck.kernel_build(" .. KSRC .. ", {})"),
  C("ck.kernel_build('garbage', 'f', {arch = 'sm_90'})"),
  C("ck.kernel_build('extern \"C\" __global__ void f() { undefined_thing(); }', 'f', {arch = 'sm_90'})"),
  C("ck.kernel_build(" .. KSRC .. ", 'nope', {arch = 'sm_90'})"), C("ck.kernel_build(" .. KSRC .. ", '', {arch = 'sm_90'})"),
  C("ck.kernel_build(" .. KSRC .. ", 'f', {arch = 'sm_1'})"), C("ck.kernel_build(" .. KSRC .. ", 'f', {arch = 'bogus'})"),
  C("ck.kernel_build(" .. KSRC .. ", 'f', {arch = {}})"), C("ck.kernel_build(" .. KSRC .. ", 'f', {arch = 7})"),
  C("ck.kernel_build(" .. KSRC .. ", 'f', {arch = 'sm_90', options = {'--no-such-option'}})"),
  C("ck.kernel_build(" .. KSRC .. ", 'f', {arch = 'sm_90', options = '--no-such-option'})"),
  C("ck.kernel_build(" .. KSRC .. ", 'f', {arch = 'sm_90', options = {{}}})"),
  C("ck.kernel_build(" .. KSRC .. ", 'f', {arch = 'sm_90', options = print})"),
  C("ck.kernel_build(" .. KSRC .. ", 'f', {arch = 'sm_90', bogus = 1})"), C("ck.kernel_build(" .. KSRC .. ", 'f', 'sm_90')"),
})
add("ck.cache_dir", {
  C("ck.cache_dir(true)"), C("ck.cache_dir({})"), C("ck.cache_dir(print)"), C("ck.cache_dir(A)"),
  C("ck.cache_dir(T .. '/a\\0b')"), C("ck.cache_dir(T .. '/' .. string.rep('a', 2000))"),
})
CAT["ck.kernel_header"] = {none = "takes no argument that can be wrong (extra arguments are ignored, as in Lua)"}
CAT["ck.map_cache_size"] = {none = "takes no argument that can be wrong (extra arguments are ignored, as in Lua)"}

-- several devices (issue 31, lua/cukern/dist.lua, src/lua/l_dist.c, src/dist/coll.c, pcomm.c): collectives over a list
-- of arrays, one per device (the fixtures all sit on one device, so a list of two is already wrong), and ck.dist
local LIST65 = "(function() local t = {} for i = 1, 65 do t[i] = A end return t end)()"
local function coll_list_cases(f)
  return {
    C(("ck.nccl.%s()"):format(f)), C(("ck.nccl.%s(A)"):format(f)), C(("ck.nccl.%s({})"):format(f)),
    C(("ck.nccl.%s('x')"):format(f)), C(("ck.nccl.%s({A, 'x'})"):format(f)), C(("ck.nccl.%s({F})"):format(f)),
    C(("ck.nccl.%s({A, A})"):format(f)), C(("ck.nccl.%s({A, B})"):format(f)), C(("ck.nccl.%s({A, D})"):format(f)),
    C(("ck.nccl.%s({X})"):format(f), {any_error = true}), C(("ck.nccl.%s(%s)"):format(f, LIST65)),
    C(("ck.nccl.%s(setmetatable({}, {__len = function() return 2^40 end}))"):format(f)),
  }
end
for _, f in ipairs {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"} do
  add("ck.nccl." .. f, coll_list_cases(f))
end
add("ck.nccl.all_reduce", {
  C("ck.nccl.all_reduce({A}, 'xor')"), C("ck.nccl.all_reduce({A}, 7)"), C("ck.nccl.all_reduce({I}, 'avg')"),
  C("ck.nccl.all_reduce({A}, 'sum', {variant = 'nope'})"), C("ck.nccl.all_reduce({A}, 'sum', {variant = 7})"),
  C("ck.nccl.all_reduce({A}, 'sum', {variant = '99'})"),
  C("ck.nccl.all_reduce({A}, 'sum', {bogus = 1})"), C("ck.nccl.all_reduce({A}, 'sum', 'x')"),
  C("ck.nccl.all_reduce({A}, 'sum', {}, 1)"), C("ck.nccl.all_reduce({E})"),
})
add("ck.nccl.all_gather", {C("ck.nccl.all_gather({A}, 'sum')")})
add("ck.nccl.reduce_scatter", {
  C("ck.nccl.reduce_scatter({S})"), C("ck.nccl.reduce_scatter({A}, 'xor')"), C("ck.nccl.reduce_scatter({I}, 'avg')"),
  C("ck.nccl.reduce_scatter({A}, 'sum', 1)"),
})
add("ck.nccl.broadcast", {
  C("ck.nccl.broadcast({A}, 0)"), C("ck.nccl.broadcast({A}, 2)"), C("ck.nccl.broadcast({A}, 1.5)"),
  C("ck.nccl.broadcast({A}, 'x')"), C("ck.nccl.broadcast({A}, 2^40)"), C("ck.nccl.broadcast({A}, 1, 2)"),
  C("ck.nccl.broadcast({E})"),
})
add("ck.nccl.reduce", {
  C("ck.nccl.reduce({A}, 'sum', 0)"), C("ck.nccl.reduce({A}, 'sum', 2)"), C("ck.nccl.reduce({A}, 'xor')"),
  C("ck.nccl.reduce({I}, 'avg')"), C("ck.nccl.reduce({A}, 'sum', 1, 1)"), C("ck.nccl.reduce({E})"),
})
add("ck.nccl.wait", {
  C("ck.nccl.wait('x')"), C("ck.nccl.wait(5)"), C("ck.nccl.wait(nil, 'x')"), C("ck.nccl.wait(nil, 0/0)"),
  C("ck.nccl.wait(nil, 1, 2)"), C("ck.nccl.wait({'tpu'})"), C("ck.nccl.wait({'host:99'})"),
})
add("ck.nccl.info", {C("ck.nccl.info(1)"), C("ck.nccl.info({})")})
add("ck.nccl.variants", {C("ck.nccl.variants('all_reduce')"), C("ck.nccl.variants(A)")})
-- (no case may wait for another rank: every init here is a world of one, or fails before the rendezvous)
add("ck.dist.init", {
  C("ck.dist.init('x')"), C("ck.dist.init(A)"), C("ck.dist.init({bogus = 1})"), C("ck.dist.init({}, 1)"),
  C("ck.dist.init({rank = -1})"), C("ck.dist.init({rank = 1.5})"), C("ck.dist.init({rank = 'x'})"),
  C("ck.dist.init({rank = 2^40})"), C("ck.dist.init({world = 0})"), C("ck.dist.init({world = -3})"),
  C("ck.dist.init({rank = 1, world = 1})"), C("ck.dist.init({timeout = -5})"), C("ck.dist.init({timeout = 0/0})"),
  C("ck.dist.init({timeout = 'x'})"), C("ck.dist.init({checked = 'yes'})"), C("ck.dist.init({store = 7})"),
  C("ck.dist.init({store = 'ftp://x', rank = 0, world = 1})"),
  C("ck.dist.init({store = 'tcp://127.0.0.1:0', rank = 0, world = 1})"),
  C("ck.dist.init({store = 'file://' .. T .. '/no/such/dir', rank = 0, world = 1})"),
  C("ck.dist.init({device = 'tpu'})"), C("ck.dist.init({device = 5})"), C("ck.dist.init({device = 'host:99'})"),
  C("ck.dist.init(X)", {any_error = true}),
})
-- the communicator's methods: a world of one on the host (HA, HI: host arrays, whatever the default device)
local COMM = "local c = ck.dist.init{device = 'host'}; local HA, HI = ck.rand(4, 3, {device = 'host'}), " ..
  "ck.array({1, 2, 3}, {dtype = 'i32', device = 'host'})"
local function CC(code, t) t = t or {}; t.setup = COMM; return C(code, t) end
local function comm_cases(m)
  return {CC(("c:%s(3)"):format(m)), CC(("c:%s(F)"):format(m)), CC(("c:%s('x')"):format(m)),
    CC(("c.%s(HA)"):format(m)), CC(("c.%s({}, HA)"):format(m)),
    CC(("(function() c:destroy(); return c:%s(HA) end)()"):format(m))}
end
for _, m in ipairs {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"} do add("comm:" .. m, comm_cases(m)) end
add("comm:all_reduce", {CC("c:all_reduce(HA, 'xor')"), CC("c:all_reduce(HI, 'avg')"), CC("c:all_reduce(HA, 'sum', {bogus = 1})"),
  CC("c:all_reduce(HA, 'sum', 'x')"), CC("c:all_reduce(ck.zeros(1, {device = 'host'}):expand(3))")})
add("comm:all_gather", {CC("c:all_gather(HA, {bogus = 1})"), CC("c:all_gather(HA, 'x')")})
add("comm:reduce_scatter", {CC("c:reduce_scatter(ck.scalar(1, {device = 'host'}))"), CC("c:reduce_scatter(HA, 'xor')"),
  CC("c:reduce_scatter(HI, 'avg')")})
add("comm:broadcast", {CC("c:broadcast(HA, 1)"), CC("c:broadcast(HA, -1)"), CC("c:broadcast(HA, 0.5)"),
  CC("c:broadcast(HA, 'x')"), CC("c:broadcast(HA, 0, {bogus = 1})")})
add("comm:reduce", {CC("c:reduce(HA, 'sum', 1)"), CC("c:reduce(HA, 'xor', 0)"), CC("c:reduce(HI, 'avg', 0)"),
  CC("c:reduce(HA, 'sum', 0, 'x')")})
add("comm:barrier", {CC("c.barrier(7)"), CC("c.barrier()"), CC("(function() c:destroy(); return c:barrier() end)()")})
add("comm:destroy", {CC("c.destroy(7)"), CC("c.destroy()")})

-- ops
local function op_cases(f, arity, variant_ok, second)
  local call = {
    [1] = function(a, o) return ("ck.%s(%s%s)"):format(f, a, o and (", " .. o) or "") end,
    [2] = function(a, o) return ("ck.%s(%s, %s%s)"):format(f, a, second or "A", o and (", " .. o) or "") end,
  }
  local t = {}
  -- (logic and bit ops take Lua booleans as bool scalars: mask & true, ck.logical_and(true, m))
  local takes_bool = ({logical_and = 1, logical_or = 1, logical_xor = 1, bitand = 1, bitor = 1, bitxor = 1,
                       lshift = 1, rshift = 1})[f]
  for _, bad in ipairs(BAD_TYPES) do
    if not (takes_bool and bad == "true") then t[#t + 1] = C(call[arity](bad)) end
  end
  t[#t + 1] = C(call[arity]("A", "{bogus = 1}"))
  t[#t + 1] = C(call[arity]("A", "'x'"))
  t[#t + 1] = C(call[arity]("A", "{out = 'x'}"))
  t[#t + 1] = C(call[arity]("A", "{out = F}"))
  t[#t + 1] = C(call[arity]("A", "{out = ck.rand(7)}"))
  t[#t + 1] = C(call[arity]("A", "{out = E}"))
  if variant_ok then
    t[#t + 1] = C(call[arity]("A", "{variant = 'nope'}"))
    t[#t + 1] = C(call[arity]("A", "{variant = 99}"))
    t[#t + 1] = C(call[arity]("A", "{variant = {}}"))
  end
  return t
end
local FLOAT_ONLY = {exp = 1, log = 1, sqrt = 1, sin = 1, cos = 1, tanh = 1, sigmoid = 1}
for _, f in ipairs(ck.unary_ops) do
  add("ck." .. f, op_cases(f, 1, true))
  if FLOAT_ONLY[f] then add("ck." .. f, {C(("ck.%s(I)"):format(f))}) end
  add("ck." .. f, {C(("ck.%s(A, {dtype = 'f64'})"):format(f))})
end
for _, f in ipairs(ck.binary_ops) do
  add("ck." .. f, op_cases(f, 2, true))
  add("ck." .. f, {
    C(("ck.%s(A, ck.rand(5))"):format(f)), C(("ck.%s(1, 2)"):format(f)), C(("ck.%s(A, 'x')"):format(f)),
    C(("ck.%s(A, F)"):format(f)), C(("ck.%s(A, A, {out = ck.zeros(3, 4, {dtype = 'i32'})})"):format(f)),
    C(("ck.%s(A, A, {dtype = 'f64'})"):format(f)),
  })
end
add("ck.pow", op_cases("pow", 2, true))
add("ck.pow", {C("ck.pow(A, 'x')"), C("ck.pow(A, ck.rand(5))"), C("ck.pow(A, F)")})
add("ck.clamp", op_cases("clamp", 1, true))
add("ck.clamp", {C("ck.clamp(A, 'x', 1)"), C("ck.clamp(A, 0, {})"),
  C("ck.clamp(A, 0/0, 1)"), C("ck.clamp(A, 0, 0/0)"), C("ck.clamp(A, 1)")})
for _, f in ipairs {"sum", "prod", "mean", "max", "min", "argmax", "argmin"} do
  add("ck." .. f, op_cases(f, 1, true))
  add("ck." .. f, {
    C(("ck.%s(A, 3)"):format(f)), C(("ck.%s(A, 0)"):format(f)), C(("ck.%s(A, -3)"):format(f)),
    C(("ck.%s(A, 1.5)"):format(f)), C(("ck.%s(A, 'x')"):format(f)), C(("ck.%s(A, 2^40)"):format(f)),
    C(("ck.%s(A, 1, {keepdim = 'yes'})"):format(f)),
    C(("ck.%s(A, 1, {out = ck.rand(5)})"):format(f)),
  })
end
for _, f in ipairs {"max", "min", "argmax", "argmin"} do add("ck." .. f, {C(("ck.%s(ck.zeros(0, 3), 1)"):format(f))}) end
add("ck.mean", {C("ck.mean(ck.zeros(0, 3), 1, {out = ck.zeros(2)})")}) -- (the mean of integers is f64 now: issue 32)
for _, f in ipairs {"any", "all", "count_nonzero"} do
  add("ck." .. f, {C(("ck.%s('x')"):format(f)), C(("ck.%s(A, 3)"):format(f)), C(("ck.%s(A, 1, {out = A})"):format(f)),
    C(("ck.%s(A, 1, {keepdim = 'yes'})"):format(f)), C(("ck.%s(F)"):format(f)), C(("ck.%s(A, 'x')"):format(f))})
end
-- scans and sorts (issue 33)
for _, f in ipairs {"cumsum", "cumprod", "cummax", "cummin", "sort", "argsort"} do
  add("ck." .. f, op_cases(f, 1, true))
  add("ck." .. f, {
    C(("ck.%s(A, 3)"):format(f)), C(("ck.%s(A, 0)"):format(f)), C(("ck.%s(A, -3)"):format(f)),
    C(("ck.%s(A, 1.5)"):format(f)), C(("ck.%s(A, 'x')"):format(f)), C(("ck.%s(A, 2^40)"):format(f)),
    C(("ck.%s(A, 1, {out = ck.rand(5)})"):format(f)), C(("ck.%s(A, 1, {keepdim = true})"):format(f)),
  })
end
add("ck.cumsum", {C("ck.cumsum(A, 1, {exclusive = 'yes'})"), C("ck.cumsum(A, 1, {out = ck.zeros(3, 4, {dtype = 'i64'})})")})
add("ck.cumprod", {C("ck.cumprod(I, 1, {out = ck.zeros(3, 4, {dtype = 'i32'})})")})
add("ck.sort", {C("ck.sort(A, 1, {descending = 1})"), C("ck.sort(A, 1, {idx = ck.zeros(3, 4, {dtype = 'i32'})})"),
  C("ck.sort(A, 2, (function() local o = ck.zeros(3, 4, {dtype = 'i64'}) return {out = o, idx = o} end)())"),
  C("ck.sort(A, 1, {idx = F})")})
add("ck.argsort", {C("ck.argsort(A, 1, {descending = 'no'})"), C("ck.argsort(A, 1, {out = ck.zeros(3, 4)})")})
add("ck.topk", {C("ck.topk(A, 5)"), C("ck.topk(A, -1)"), C("ck.topk(A, 1.5)"), C("ck.topk(A, 'x')"), C("ck.topk(F, 1)"),
  C("ck.topk(A, 1, 3)"), C("ck.topk(A, 1, 0)"), C("ck.topk(A, 1, 1, {variant = 'nope'})"),
  C("ck.topk(A, 1, 1, {descending = true})"), C("ck.topk(1, 1)"), C("ck.topk(A, 2^40)"),
  C("ck.topk(A, 1, 2, {out = ck.rand(3, 2)})")})
add("ck.histc", {C("ck.histc(A, 0, 0, 1)"), C("ck.histc(A, -1, 0, 1)"), C("ck.histc(A, 1.5, 0, 1)"),
  C("ck.histc(A, 'x', 0, 1)"), C("ck.histc(A, 3, 1, 0)"), C("ck.histc(A, 3, 0, 0/0)"), C("ck.histc(A, 3, -1/0, 1)"),
  C("ck.histc(A, 3)"), C("ck.histc(F, 3, 0, 1)"), C("ck.histc(1, 3, 0, 1)"), C("ck.histc(A, 3, 0, 1, {out = ck.rand(3)})"),
  C("ck.histc(A, 3, 0, 1, {variant = 'nope'})"), C("ck.histc(A, 3, 0, 1, {dim = 1})"), C("ck.histc(A, 2^40, 0, 1)")})
-- complex (issue 35)
add("ck.complex", {C("ck.complex('x', 1)"), C("ck.complex(A, ck.rand(5))"), C("ck.complex(F, 1)"),
  C("ck.complex(A, 1, {dtype = 'f32'})"), C("ck.complex(ck.complex(A, 1), 1)"), C("ck.complex(A, 1, {bogus = 1})")})
for _, f in ipairs {"real", "imag", "conj", "angle", "iscomplex", "isreal", "view_as_real", "view_as_complex"} do
  add("ck." .. f, {C(("ck.%s('x')"):format(f)), C(("ck.%s(F)"):format(f)), C(("ck.%s(A, 1)"):format(f)),
    C(("ck.%s()"):format(f))})
end
add("ck.view_as_bytes", {C("ck.view_as_bytes('x')"), C("ck.view_as_bytes(F)"), C("ck.view_as_bytes(A, 1)"),
  C("ck.view_as_bytes()")})
-- FP8 (issue 37)
add("ck.finfo", {C("ck.finfo()"), C("ck.finfo('u8')"), C("ck.finfo(A)"), C("ck.finfo(3)")})
add("ck.quantize", {C("ck.quantize(A)"), C("ck.quantize(A, 'f32')"), C("ck.quantize(F, 'e4m3')"), C("ck.quantize('x', 'e4m3')"),
  C("ck.quantize(A, 'e4m3', {scale = 0})"), C("ck.quantize(A, 'e4m3', {scale = 0/0})"), C("ck.quantize(A, 'e5m2', {scale = 'x'})"),
  C("ck.quantize(A, 'e4m3', {bogus = 1})")})
add("ck.dequantize", {C("ck.dequantize(A)"), C("ck.dequantize(A, 0)"), C("ck.dequantize(A, -1/0)"), C("ck.dequantize(F, 1)"),
  C("ck.dequantize('x', 1)"), C("ck.dequantize(A, 1, {dtype = 'nope'})"), C("ck.dequantize(A, 1, {device = 'cuda'})")})
add("ck.view_as_real", {C("ck.view_as_real(A)")})
add("ck.view_as_complex", {C("ck.view_as_complex(A)"), C("ck.view_as_complex(ck.rand(3, 2):t())"),
  C("ck.view_as_complex(ck.zeros(3, 2, {dtype = 'i32'}))")})
add("ck.unique", {C("ck.unique('x')"), C("ck.unique(A, {count = true})"), C("ck.unique(A, {inverse = 'yes'})"),
  C("ck.unique(F)"), C("ck.unique(A, 3)")})
add("ck.searchsorted", {C("ck.searchsorted(A, A)"), C("ck.searchsorted(V)"), C("ck.searchsorted(F, V)"),
  C("ck.searchsorted(V, F)"), C("ck.searchsorted(V, 1)"), C("ck.searchsorted(1, V)"), C("ck.searchsorted(V, V, {side = 'up'})"),
  C("ck.searchsorted(V, V:to('f64'))"), C("ck.searchsorted(V, V, {variant = 'nope'})"), C("ck.searchsorted(V, V, {out = A})"),
  C("ck.searchsorted(V, V, {dim = 1})")})
-- the FFT and convolution (issue 35)
for _, f in ipairs {"fft", "ifft", "rfft", "irfft"} do
  add("ck." .. f, {C(("ck.%s('x')"):format(f)), C(("ck.%s(F)"):format(f)), C(("ck.%s(S)"):format(f)),
    C(("ck.%s(A, 0)"):format(f)), C(("ck.%s(A, -3)"):format(f)), C(("ck.%s(A, 2.5)"):format(f)), C(("ck.%s(A, 'x')"):format(f)),
    C(("ck.%s(A, nil, 3)"):format(f)), C(("ck.%s(A, nil, 1.5)"):format(f)), C(("ck.%s(A, {norm = 'x'})"):format(f)),
    C(("ck.%s(A, {bogus = 1})"):format(f)), C(("ck.%s(A, {variant = 'nope'})"):format(f)),
    C(("ck.%s(A, 4, 2, {out = ck.rand(5)})"):format(f)), C(("ck.%s(E, 2^40)"):format(f))})
end
add("ck.rfft", {C("ck.rfft(ck.fft(A))")})
for _, f in ipairs {"fft2", "ifft2", "fftn", "ifftn"} do
  add("ck." .. f, {C(("ck.%s('x')"):format(f)), C(("ck.%s(F)"):format(f)), C(("ck.%s(V, {2, 2})"):format(f)),
    C(("ck.%s(A, 3)"):format(f)), C(("ck.%s(A, {3, 'x'})"):format(f)), C(("ck.%s(A, {0, 4})"):format(f)),
    C(("ck.%s(A, nil, {1, 1})"):format(f)), C(("ck.%s(A, nil, {1, 3})"):format(f)), C(("ck.%s(A, nil, 'x')"):format(f)),
    C(("ck.%s(A, {norm = 1})"):format(f)), C(("ck.%s(A, {out = A})"):format(f))})
end
for _, f in ipairs {"fftshift", "ifftshift"} do
  add("ck." .. f, {C(("ck.%s('x')"):format(f)), C(("ck.%s(F)"):format(f)), C(("ck.%s(A, 3)"):format(f)),
    C(("ck.%s(A, {1.5})"):format(f)), C(("ck.%s(A, 'x')"):format(f))})
end
add("ck.fftfreq", {C("ck.fftfreq(0)"), C("ck.fftfreq(-1)"), C("ck.fftfreq('x')"), C("ck.fftfreq(2.5)"), C("ck.fftfreq(4, 0)"),
  C("ck.fftfreq(4, 'x')"), C("ck.fftfreq(4, 1, {dtype = 'f17'})"), C("ck.fftfreq(4, {bogus = 1})"), C("ck.fftfreq(2^62)")})
for _, f in ipairs {"conv", "conv2"} do
  add("ck." .. f, {C(("ck.%s('x', A)"):format(f)), C(("ck.%s(A, F)"):format(f)), C(("ck.%s(A, A, {mode = 'x'})"):format(f)),
    C(("ck.%s(A, A, {variant = 'nope'})"):format(f)), C(("ck.%s(A, A, {bogus = 1})"):format(f)),
    C(("ck.%s(A, ck.zeros(0, 2))"):format(f)), C(("ck.%s(ck.rand(2, 2, 2), A)"):format(f)), C(("ck.%s(A, A, 3)"):format(f))})
end
add("ck.conv", {C("ck.conv(A, V)")})
-- softmax, normalisation, attention (issue 37)
for _, f in ipairs {"softmax", "log_softmax"} do
  add("ck." .. f, op_cases(f, 1, true))
  add("ck." .. f, {C(("ck.%s(A, 3)"):format(f)), C(("ck.%s(A, 0)"):format(f)), C(("ck.%s(A, 2^40)"):format(f)),
    C(("ck.%s(I)"):format(f)), C(("ck.%s(A, 1, {dim = 1})"):format(f)), C(("ck.%s(A, 2, {out = D})"):format(f))})
end
for _, f in ipairs {"layer_norm", "rms_norm"} do
  add("ck." .. f, {C(("ck.%s('x')"):format(f)), C(("ck.%s(F)"):format(f)), C(("ck.%s(I)"):format(f)),
    C(("ck.%s(A, V)"):format(f)), C(("ck.%s(A, F)"):format(f)), C(("ck.%s(A, 'x')"):format(f)), C(("ck.%s(A, A)"):format(f)),
    C(("ck.%s(A, nil, -1)"):format(f)), C(("ck.%s(A, {dim = 3})"):format(f)), C(("ck.%s(A, {dim = 'x'})"):format(f)),
    C(("ck.%s(A, {bogus = 1})"):format(f)), C(("ck.%s(A, {variant = 'nope'})"):format(f)),
    C(("ck.%s(A, {out = ck.rand(7)})"):format(f)), C(("ck.%s(A, {out = E})"):format(f))})
end
add("ck.layer_norm", {C("ck.layer_norm(A, nil, V)"), C("ck.layer_norm(A, nil, 'x')"), C("ck.layer_norm(A, nil, nil, 0/0)"),
  C("ck.layer_norm(A, nil, nil, 'x')")})
add("ck.rms_norm", {C("ck.rms_norm(A, nil, 0/0)"), C("ck.rms_norm(A, nil, 'x')")})
local Q4 = "ck.rand(1, 2, 3, 4)"
add("ck.attention", {C("ck.attention(A, A, A)"), C("ck.attention('x', A, A)"), C("ck.attention(F, F, F)"),
  C(("ck.attention(%s, %s)"):format(Q4, Q4)), C(("ck.attention(%s, ck.rand(1, 2, 5, 3), %s)"):format(Q4, Q4)),
  C(("ck.attention(%s, %s, ck.rand(1, 2, 5, 4))"):format(Q4, Q4)), C(("ck.attention(%s, %s, %s:to('f64'))"):format(Q4, Q4, Q4)),
  C(("ck.attention(I, I, I)")), C(("ck.attention(%s, %s, %s, {causal = 1})"):format(Q4, Q4, Q4)),
  C(("ck.attention(%s, %s, %s, {scale = 'x'})"):format(Q4, Q4, Q4)),
  C(("ck.attention(%s, %s, %s, {scale = 0/0})"):format(Q4, Q4, Q4)),
  C(("ck.attention(%s, %s, %s, {mask = 'x'})"):format(Q4, Q4, Q4)),
  C(("ck.attention(%s, %s, %s, {mask = ck.rand(4, 4)})"):format(Q4, Q4, Q4)),
  C(("ck.attention(%s, %s, %s, {mask = I})"):format(Q4, Q4, Q4)),
  C(("ck.attention(%s, %s, %s, {variant = 'nope'})"):format(Q4, Q4, Q4)),
  C(("ck.attention(%s, %s, %s, {bogus = 1})"):format(Q4, Q4, Q4)),
  C(("ck.attention(%s, %s, %s, {out = ck.rand(3)})"):format(Q4, Q4, Q4)), C(("ck.attention(%s, %s, %s, 'x')"):format(Q4, Q4, Q4))})
add("ck.histogram", {C("ck.histogram(A, {bins = 0})"), C("ck.histogram(A, {range = {1}})"), C("ck.histogram(A, 3)"),
  C("ck.histogram(F)"), C("ck.histogram(1)"), C("ck.histogram(A, {range = {2, 1}})"),
  C("ck.histogram(A, {variant = 'nope'})"), C("ck.histogram(ck.full({3}, 0/0))")})
add("ck.max", {
  C("ck.max(A, {idx = ck.zeros(1, {dtype = 'i32'})})"),
  C("ck.max(A, 2, {idx = ck.rand(3)})"),
  C("ck.max(A, 2, {out = ck.zeros(3, {dtype = 'i32'}), idx = ck.zeros(3, {dtype = 'i32'})})"),
})
add("ck.argmax", {C("ck.argmax(A, 2, {out = ck.rand(3)})"), C("ck.argmax(A, 2, {out = ck.zeros(4, {dtype = 'i32'})})")})
add("ck.argmin", {C("ck.argmin(A, 2, {out = ck.zeros(4, {dtype = 'i32'})})")})
-- out and idx the same array (issue 18 item 4): refused
add("ck.max", {C("ck.max(A, 2, (function() local o = ck.zeros(3, {dtype = 'i32'}) return {out = o, idx = o} end)())"),
  C("ck.max(A, 2, (function() local o = ck.zeros(3) return {out = o, idx = o} end)())")})
add("ck.min", {C("ck.min(A, 2, (function() local o = ck.zeros(3, {dtype = 'i32'}) return {out = o, idx = o} end)())")})
add("ck.matmul", op_cases("matmul", 2, true, "B"))
add("ck.matmul", {
  C("ck.matmul(A, A)"), C("ck.matmul(V, V)"), C("ck.matmul(A, ck.rand(5, 4, {dtype = 'f64'}))"),
  C("ck.matmul(ck.rand(2, 2, 3, 4), B)"), C("ck.matmul(S, S)"), C("ck.matmul(ck.rand(2, 3, 4), ck.rand(3, 4, 5))"),
  C("ck.matmul(A, B, {out = ck.rand(5, 3)})"), C("ck.matmul(A, F)"),
  C("ck.matmul(A, B, {keepdim = true})"),
})
add("ck.gemm", {
  C("ck.gemm(nil, A, B)"),
  C("ck.gemm(A, A, B)"), C("ck.gemm(ck.rand(3, 5), A, B, 'x')"), C("ck.gemm(ck.rand(3, 5), A, B, 1, 'x')"),
  C("ck.gemm(F, A, B)"), C("ck.gemm(ck.rand(3, 5), A, B, 1, 0, {bogus = 1})"),
  C("ck.gemm(ck.rand(3, 5), A, B, 1, 0, {variant = 'nope'})"), C("ck.gemm(ck.rand(5):expand(3, 5), A, B)"),
  C("ck.gemm(ck.zeros(3, 5, {dtype = 'i32'}), A, B)"),
  -- issue 29: i32 products with a NaN or infinite alpha/beta (undefined behaviour on the host before)
  C("ck.gemm(ck.zeros(2, 2, {dtype = 'i32', device = 'host'}), ck.ones(2, 2, {dtype = 'i32', device = 'host'}), " ..
    "ck.ones(2, 2, {dtype = 'i32', device = 'host'}), 0/0)"),
  C("ck.gemm(ck.zeros(2, 2, {dtype = 'i32', device = 'host'}), ck.ones(2, 2, {dtype = 'i32', device = 'host'}), " ..
    "ck.ones(2, 2, {dtype = 'i32', device = 'host'}), 1, 1/0)"),
  C("ck.gemm(ck.ones(1, 4):expand(3, 4):narrow(1, 2, 2), ck.rand(1, 2), ck.rand(2, 4))"),
})
add("ck.transpose", op_cases("transpose", 1, true))
add("ck.equal", {C("ck.equal(A)"), C("ck.equal(A, 1)"), C("ck.equal('x', A)"), C("ck.equal(A, F)"), C("ck.equal(F, A)")})
add("ck.allclose", {C("ck.allclose(A)"), C("ck.allclose(A, 'x')"), C("ck.allclose(A, A, -1)"), C("ck.allclose(A, A, 0, 'x')"),
  C("ck.allclose(A, F)"), C("ck.allclose(A, ck.rand(5))")})
add("ck.randint", {C("ck.randint()"), C("ck.randint('x', 3)"), C("ck.randint(6, 1, 3)"), C("ck.randint(0, 2^40, 3)"),
  C("ck.randint(0, 5, -1)"), C("ck.randint(0, 5, 3, {bogus = 1})"),
  C("ck.randint(0.5, 5, 3)")})
-- streams, events, pinned memory, NVTX (issue 36)
add("ck.stream", {C("ck.stream(1)"), C("ck.stream('tpu')"), C("ck.stream('host:9')"), C("ck.stream('host', 2)")})
add("ck.with_stream", {C("ck.with_stream()"), C("ck.with_stream(1, function() end)"), C("ck.with_stream(A)"),
  C("ck.with_stream(ck.stream('host'), 7)")})
add("ck.event", {C("ck.event(1)"), C("ck.event('tpu')"), C("ck.event('host', 1)")})
add("A:pin", {C("A:pin('x')"), C("F:pin()"), C("A:pin({bogus = 1})")})
add("A:is_pinned", {C("A:is_pinned('x')"), C("F:is_pinned()"), C("A:is_pinned({bogus = 1})")})
add("ck.nvtx.range", {C("ck.nvtx.range()"), C("ck.nvtx.range(1, function() end)"), C("ck.nvtx.range('r', 2)")})
add("ck.nvtx.push", {C("ck.nvtx.push()"), C("ck.nvtx.push({})")})
add("ck.nvtx.pop", {C("ck.nvtx.pop(1)")})
add("ck.graph", {C("ck.graph()"), C("ck.graph(1)"), C("ck.graph(A)"), C("ck.graph(function() error('inside') end)"),
  C("ck.graph(function() return A:item() end)"), C("ck.graph(function() ck.graph(function() end) end)")})
add("ck.transpose", {C("ck.transpose(V)"), C("ck.transpose(S)"), C("ck.transpose(A, {variant = 'memcpy'})"),
  C("ck.transpose(A, {out = ck.rand(3, 4)})")})

-- assembly (issue 32, lua/cukern/assembly.lua)
add("ck.cat", {
  C("ck.cat()"), C("ck.cat(A)"), C("ck.cat({})"), C("ck.cat({A, B})"), C("ck.cat({A, 'x'})"), C("ck.cat({A, F})"),
  C("ck.cat({A, A}, 3)"), C("ck.cat({A, A}, 0)"), C("ck.cat({A, A}, 'x')"), C("ck.cat({A, A}, 1.5)"),
  C("ck.cat({S, S})"), C("ck.cat({A, V})"), C("ck.cat({A}, 1, {bogus = 1})"), C("ck.cat({A}, 1, {dtype = 'f17'})"),
  C("ck.cat({A}, 1, 'f64')"), C("ck.cat({A, x = A})"), C("ck.cat({A}, 1, nil, 4)"), C("ck.cat({A, E}, 2)"),
  C("ck.cat({A, A}, 2^40)"), C("ck.cat({A, nil, A})"),
})
add("ck.stack", {
  C("ck.stack()"), C("ck.stack(A)"), C("ck.stack({})"), C("ck.stack({A, D:t()})"), C("ck.stack({A, A}, 4)"),
  C("ck.stack({A, A}, -4)"), C("ck.stack({A, F})"), C("ck.stack({A}, 1, {bogus = 1})"), C("ck.stack({V, 1})"),
  C("ck.stack({A, A}, 0)"), C("ck.stack({S, V})"),
})
add("ck.split", {
  C("ck.split(A)"), C("ck.split(A, 0)"), C("ck.split(A, -1)"), C("ck.split(A, 1.5)"), C("ck.split(A, {1, 1})"),
  C("ck.split(A, {4, -1})"), C("ck.split(A, {'x'})"), C("ck.split(A, 1, 3)"), C("ck.split(S, 1)"),
  C("ck.split(F, 1)"), C("ck.split('x', 1)"), C("ck.split(A, A)"), C("ck.split(A, {3, x = 1})"),
  C("ck.split(A, 1, 1, 1)"),
})
add("ck.chunk", {C("ck.chunk(A)"), C("ck.chunk(A, 0)"), C("ck.chunk(A, 2, 3)"), C("ck.chunk(S, 2)"),
  C("ck.chunk(F, 2)"), C("ck.chunk(A, 'x')"), C("ck.chunk(A, 2^0.5)")})
-- selection and masks (lua/cukern/select.lua): index dtypes, ranges, repeats, mask shapes and dtypes, devices
add("ck.index_select", {C("ck.index_select(A, 1, A)"), C("ck.index_select(A, 1, I:reshape(3, 1))"), C("ck.index_select(A, 9, I)"),
  C("ck.index_select(A, 1, ck.array({4}, {dtype = 'i32'}))"), C("ck.index_select(F, 1, I)"), C("ck.index_select(A, 1, F)")})
add("ck.gather", {C("ck.gather(A, 1, I)"), C("ck.gather(A, 1, ck.array({{0}}, {dtype = 'i64'}))"), C("ck.gather(A, 1, 'x')")})
add("ck.take", {C("ck.take(A, ck.array({13}, {dtype = 'i32'}))"), C("ck.take(A, V)"), C("ck.take(A)")})
add("ck.scatter", {C("ck.scatter(A, 1, ck.array({{1}, {1}}, {dtype = 'i32'}), ck.ones(2, 1))"), C("ck.scatter(A, 1, I, A)"),
  C("ck.scatter(A, 1, ck.array({{9}}, {dtype = 'i32'}), A)"), C("ck.scatter(A, 1, ck.array({{1}}, {dtype = 'i32'}), 'x')")})
add("ck.scatter_add", {C("ck.scatter_add(A, 1, ck.array({{0}}, {dtype = 'i32'}), A)"), C("ck.scatter_add(A, 1, V, A)")})
add("ck.index_add", {C("ck.index_add(A, 2, I, A)"), C("ck.index_add(A, 1, ck.array({4}, {dtype = 'i32'}), ck.ones(1, 4))")})
add("ck.index_copy", {C("ck.index_copy(A, 1, ck.array({1, 1}, {dtype = 'i32'}), ck.ones(2, 4))"), C("ck.index_copy(A, 1, V, 0)")})
add("ck.put", {C("ck.put(A, ck.array({1, 1}, {dtype = 'i32'}), ck.ones(2))"), C("ck.put(A, I, ck.ones(5))"), C("ck.put(A, S, 1)")})
add("ck.where", {C("ck.where(A, 1, 0)"), C("ck.where(ck.zeros({5}, {dtype = 'bool'}), A, 0)"), C("ck.where(ck.zeros({3}, {dtype = 'bool'}), 'x', 0)")})
add("ck.masked_select", {C("ck.masked_select(A, V)"), C("ck.masked_select(A, ck.zeros({5}, {dtype = 'bool'}))"), C("ck.masked_select(F, F)")})
add("ck.nonzero", {C("ck.nonzero(F)"), C("ck.nonzero('x')"), C("ck.nonzero(A, 1)")})
add("ck.find", {C("ck.find(F)"), C("ck.find({})"), C("ck.find(A, 1)")})
add("ck.tile", {
  C("ck.tile(A)"), C("ck.tile(A, -1)"), C("ck.tile(A, {2, 'x'})"), C("ck.tile(A, {2^40, 2^40})"),
  C("ck.tile(A, {2^62, 1})"), C("ck.tile(A, {1, 1, 1, 1, 1, 1, 1, 1, 1})"), C("ck.tile(F, 2)"), C("ck.tile(A, A)"),
  C("ck.tile(A, 1.5)"), C("ck.tile('x', 2)"),
})
add("ck.flip", {C("ck.flip(A, 3)"), C("ck.flip(A, {1, 1})"), C("ck.flip(A, 'x')"), C("ck.flip(A, {0})"),
  C("ck.flip(F)"), C("ck.flip('x')"), C("ck.flip(S, 1)"), C("ck.flip(A, {1, -2})"), C("ck.flip(A, A)")})
add("ck.roll", {
  C("ck.roll(A)"), C("ck.roll(A, 'x')"), C("ck.roll(A, {1, 2})"), C("ck.roll(A, 1, 3)"),
  C("ck.roll(A, {1, 2}, {1, 2, 1})"), C("ck.roll(A, 1.5, 1)"), C("ck.roll(F, 1)"), C("ck.roll(A, 1, {})"),
  C("ck.roll('x', 1)"), C("ck.roll(S, 1, 1)"),
})
for _, f in ipairs {"tril", "triu"} do
  add("ck." .. f, {C(("ck.%s(V)"):format(f)), C(("ck.%s(S)"):format(f)), C(("ck.%s(A, 'x')"):format(f)),
    C(("ck.%s(A, 0.5)"):format(f)), C(("ck.%s(F)"):format(f)), C(("ck.%s('x')"):format(f)),
    C(("ck.%s(A, 1, 2)"):format(f))})
end
-- linear algebra (issue 34; lua/cukern/linalg.lua): A is 3 x 4 f32 (not square), V 1-D, S 0-d
for _, f in ipairs {"inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "eig", "eigvals"} do
  add("ck." .. f, {C(("ck.%s(A)"):format(f)), C(("ck.%s(V)"):format(f)), C(("ck.%s(F)"):format(f)),
    C(("ck.%s('x')"):format(f)), C(("ck.%s(ck.ones(3, 3, {dtype = 'i32'}))"):format(f)), C(("ck.%s(A, {bogus = 1})"):format(f))})
end
for _, f in ipairs {"svd", "svdvals", "qr", "lu", "matrix_rank", "pinv"} do
  add("ck." .. f, {C(("ck.%s(V)"):format(f)), C(("ck.%s(F)"):format(f)), C(("ck.%s('x')"):format(f)),
    C(("ck.%s(A, {bogus = 1})"):format(f)), C(("ck.%s(ck.ones(3, 3, {dtype = 'f16'}))"):format(f))})
end
for _, f in ipairs {"solve", "cholesky_solve", "triangular_solve", "lstsq"} do
  add("ck." .. f, {C(("ck.%s(ck.eye(4), A)"):format(f)), C(("ck.%s(ck.eye(3), F)"):format(f)),
    C(("ck.%s(F, ck.ones(3))"):format(f)), C(("ck.%s(ck.eye(3), 'x')"):format(f)), C(("ck.%s(V, V)"):format(f)),
    C(("ck.%s(ck.eye(3), ck.ones(3), {bogus = 1})"):format(f))})
end
add("ck.norm", {C("ck.norm(F)"), C("ck.norm(A, 'x')"), C("ck.norm(V, 'fro')"), C("ck.norm(A, 3, {-2, -1})"),
  C("ck.norm(A, 2, {1, 1})"), C("ck.norm('x')")})
add("ck.cond", {C("ck.cond(V)"), C("ck.cond(F)"), C("ck.cond(A, 1)"), C("ck.cond('x')")})
CAT["ck.linalg_available"] = {none = "takes no argument that can be wrong (extra arguments are ignored, as in Lua)"}
add("ck.diag", {C("ck.diag(S)"), C("ck.diag(ck.rand(2, 2, 2))"), C("ck.diag(A, 'x')"), C("ck.diag(F)"),
  C("ck.diag(V, 2^62)"), C("ck.diag(V, math.mininteger)"), C("ck.diag('x')"), C("ck.diag(A, 1, 2)")})
add("ck.pad", {
  C("ck.pad(A)"), C("ck.pad(A, -1)"), C("ck.pad(A, {1, 2})"), C("ck.pad(A, {{1, 1}})"),
  C("ck.pad(A, {{1, 1}, {1, -1}})"), C("ck.pad(A, 1, 'x')"), C("ck.pad(A, 1, true)"), C("ck.pad(F, 1)"),
  C("ck.pad(A, {{2^62, 2^62}, {0, 0}})"), C("ck.pad(A, {{1, 1}, {1, 1}, x = 1})"), C("ck.pad(A, {{1, 1}, {1, 1, 1}})"),
  C("ck.pad('x', 1)"), C("ck.pad(A, 2^62)"),
})

-- ---------------------------------------------------------------- methods

local ALWAYS_OK_ON_FREED = {is_freed = true, free = true}
local METHOD_CASES = {
  size = {"A:size(0)", "A:size(3)", "A:size('x')", "A:size(2^40)"},
  to = {"A:to('tpu')", "A:to('f17')", "A:to(7)", "A:to('host', 'x')"},
  copy_ = {"A:copy_(ck.rand(5))", "A:copy_('x')", "A:copy_(F)", "E:copy_(V)", "E:select(1, 2):copy_(S)"},
  fill = {"A:fill('x')", "A:fill()", "A:fill({})", "E:fill(1)", "A:fill(true)",
          "E:narrow(1, 2, 2):fill(1)", "ck.ones(1, 4):expand(3, 4):select(1, 2):fill(1)"},
  item = {"A:item()", "ck.zeros(0):item()"},
  t = {"V:t()", "ck.rand(2, 3, 4):t()"},
  transpose = {"A:transpose(1, 3)", "A:transpose(0, 1)", "A:transpose('x', 1)", "A:transpose(1, 2^40)"},
  permute = {"A:permute(1)", "A:permute(1, 1)", "A:permute(1, 3)", "A:permute('x', 1)", "A:permute(1, 2, 3)"},
  narrow = {"A:narrow(1, 2, 5)", "A:narrow(3, 1, 1)", "A:narrow(1, 'x', 2)", "A:narrow(1, 2^62, 2^62 + 2)",
            "A:narrow(1, -2^62, 2)", "A:narrow(1, 3, 1)", "A:narrow(1, 1, math.maxinteger)", "A:narrow(1, 2)"},
  select = {"A:select(1, 4)", "A:select(1, 0)", "A:select(3, 1)", "A:select(1, -4)", "A:select(1, 2^62)",
            "S:select(1, 1)", "A:select(1, 'x')"},
  reshape = {"A:reshape(5)", "A:reshape(-1, -1)", "A:reshape(-2, 6)", "A:reshape(2^62, 4, -1)",
             "A:t():reshape(12)", "A:reshape('x')", "A:reshape({1,1,1,1,1,1,1,1,1,12})", "A:reshape(2^31, 2^31, 0)"},
  view = {"A:view(5)", "A:view(2^62, 4, -1)", "A:t():view(12)"},
  expand = {"A:expand(3, 5)", "A:expand(4)", "A:expand(2^62, 3, 4)", "A:expand('x')", "A:expand(-2, 3, 4)",
            "A:expand(1,1,1,1,1,1,1,3,4)"},
  sub = {"A:sub{{1, 2, 3}}", "A:sub{{1, 9}}", "A:sub{1, 2, 3}", "A:sub('x')", "A:sub{{'a', 2}}", "A:sub{0}"},
  slice = {"A:slice({bogus = 1})", "A:slice{{1, 2, 3}}", "A:slice{{1, 9}}", "A:slice{1, 2, 3}", "A:slice('x')",
           "A:slice{{'a', 2}}", "A:slice{0}", "A:slice()", "A:slice(A)"},
  clamp_ = {"A:clamp_('x', 1)", "E:clamp_(0, 1)"},
  pow_ = {"A:pow_('x')", "E:pow_(2)", "I:pow_(A)"},
  max = {"A:max(3)"}, min = {"A:min(3)"}, sum = {"A:sum(3)"}, prod = {"A:prod(3)"}, mean = {"A:mean(3)"},
  any = {"A:any(3)"}, all = {"A:all(3)"}, count_nonzero = {"A:count_nonzero(0)"},
  argmax = {"A:argmax(3)"}, argmin = {"A:argmin(3)"},
}
local METHOD_TAGS = {
  -- (none: every bug tagged here has been fixed; add one with tag(item, owner, why) and a repro)
}
local NO_ARGS = {shape = 1, strides = 1, offset = 1, dtype = 1, numel = 1, ndim = 1, device = 1, is_contiguous = 1,
  is_freed = 1, storage_id = 1, totable = 1, flat = 1, clone = 1, contiguous = 1, free = 1, cuda = 1, host = 1}

for name in pairs(ck.core.methods) do
  local t = {}
  -- a wrong self, and a freed self
  t[#t + 1] = C(("A.%s('x')"):format(name))
  if not ALWAYS_OK_ON_FREED[name] then t[#t + 1] = C(("F:%s()"):format(name)) end
  if METHOD_CASES[name] then
    for _, code in ipairs(METHOD_CASES[name]) do t[#t + 1] = C(code, METHOD_TAGS[code]) end
  elseif not NO_ARGS[name] and not name:match("_$") then
    -- elementwise and reduction methods: options and operands
    t[#t + 1] = C(("A:%s({bogus = 1})"):format(name))
    t[#t + 1] = C(("A:%s('x')"):format(name))
  end
  if name:match("_$") and not METHOD_CASES[name] then
    local base = name:sub(1, -2)
    local binary = false
    for _, b in ipairs(ck.binary_ops) do if b == base then binary = true end end
    if binary then
      t[#t + 1] = C(("A:%s('x')"):format(name))
      t[#t + 1] = C(("A:%s(ck.rand(5))"):format(name))
      t[#t + 1] = C(("A:%s(D)"):format(name))
      t[#t + 1] = C(("E:%s(1)"):format(name))
      t[#t + 1] = C(("A:%s(A, {variant = 'nope'})"):format(name))
    else
      t[#t + 1] = C(("E:%s()"):format(name))
      t[#t + 1] = C(("A:%s({variant = 'nope'})"):format(name))
      t[#t + 1] = C(("A:%s('x')"):format(name))
      if FLOAT_ONLY[base] then t[#t + 1] = C(("I:%s()"):format(name)) end
    end
  end
  CAT["A:" .. name] = t
end
add("A:free", {C("A.free(nil)"), C("A.free('x')")})
add("A:is_freed", {C("A.is_freed(nil)")})

-- item 6: host work past the documented limit (2^33 elements per op, 2^38 matmul multiply-adds) is refused
-- (no elementwise case: its 2^33-element result fails to allocate first)
-- (the limit is the host backend's: the arrays are made there explicitly, since on a GPU machine the default
-- device is cuda, where these are ordinary, valid ops)
add("ck.sum", {C("ck.zeros(1, {device = 'host'}):expand(2^40):sum()"),
  C("ck.zeros(1, {device = 'host'}):expand(2^33 + 1):sum(1)")})
add("ck.prod", {C("ck.zeros(1, 1, {device = 'host'}):expand(2^17, 2^17):prod(2)")})
add("ck.matmul", {C("ck.matmul(ck.zeros(1, 1, {device = 'host'}):expand(2^6, 2^27), " ..
  "ck.zeros(1, 1, {device = 'host'}):expand(2^27, 2^6))")})

-- operators (metamethods)
add("operators", {
  C("A + 'x'"), C("A + {}"), C("A + ck.rand(5)"), C("A - F"), C("F + A"), C("A * A"), C("A * 'x'"), C("A / print"),
  C("A ^ 'x'"), C("-F"), C("A * F"), C("#F"), C("A + nil"), C("A * ck.rand(5, 4, {dtype = 'f64'})"),
  C("tostring(F) .. nil"),
  -- indexing (issue 29): keys that are not indices, and writes into (part of) an expanded view
  C("A[{x = 1}]"), C("A['x']"), C("A[true]"), C("A[{1, y = 2}]"), C("(function() A[{x = 1}] = 3 end)()"),
  C("(function() A[1] = true end)()"), C("(function() E[2] = 7 end)()"),
  C("(function() local e = ck.ones(1, 4):expand(3, 4); e[{2, 3}] = 9 end)()"),
  C("(function() local e = ck.ones(1, 4):expand(3, 4); e[2] = 7 end)()"),
  C("(function() local e = ck.ones(1, 4):expand(3, 4); e[{{1, 2}}] = ck.rand(2, 4) end)()"),
})

-- Bugs these cases found in the file I/O and fused-kernel bindings (src/lua/l_map.c, src/fused/rtc.c, lua/cukern/io.lua;
-- the lead's), by code. One-line repros in docs/reliability.md.
local SPEC_ = "{map = 'x', reduce = 'a + b', identity = 0}"
local FOUND = {
  -- (none: every bug tagged here has been fixed; add one with tag(item, owner, why) and a repro)
}

-- Tags by pattern for the generic cases (explicit tags above win).
local PATTERN_TAGS = {
  -- (none: every bug tagged here has been fixed; add one with tag(item, owner, why) and a repro)
}

-- ---------------------------------------------------------------- enumerate the module

local function public_names()
  local names = {}
  for k, v in pairs(ck) do if type(v) == "function" then names[#names + 1] = "ck." .. k end end
  for k in pairs(ck.core.methods) do names[#names + 1] = "A:" .. k end
  names[#names + 1] = "ck.core.time_op" -- documented in docs/api.md
  -- the tables of functions (issue 31): ck.nccl.*, ck.dist.*, and the methods of a communicator (comm:*)
  for _, t in ipairs {"nccl", "dist", "nvtx"} do
    for k, v in pairs(ck[t]) do if type(v) == "function" then names[#names + 1] = "ck." .. t .. "." .. k end end
  end
  local c = ck.dist.init{device = "host"}
  for k, v in pairs(getmetatable(c)) do
    if type(v) == "function" and not k:find("^__") then names[#names + 1] = "comm:" .. k end
  end
  c:destroy()
  names[#names + 1] = "operators"
  table.sort(names)
  return names
end

-- ---------------------------------------------------------------- run the cases in children

local function short(name) return name:match("[%.:]([%w_]+)$") or name end

local HAVE_FORMAT = ck.io_formats()

local function flatten()
  local list = {}
  for _, name in ipairs(public_names()) do
    for _, c in ipairs(CAT[name] or {}) do
      c.fn = name
      if not c.item and FOUND[c.code] then
        c.item, c.owner, c.why = FOUND[c.code].item, FOUND[c.code].owner, FOUND[c.code].why
      end
      if not c.item then
        for _, pt in ipairs(PATTERN_TAGS) do
          if c.code:find(pt[1]) then c.item, c.owner, c.why = pt[2].item, pt[2].owner, pt[2].why; break end
        end
      end
      if c.needs and not HAVE_FORMAT[c.needs] then c.norun = true end
      list[#list + 1] = c
    end
  end
  return list
end

local function run_children(list)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write("return {\n")
  for _, c in ipairs(list) do
    -- a case marked norun is replaced by a no-op so that the numbering stays; its result is set below
    f:write(("  {code = %q, setup = %s},\n"):format(c.norun and "nil" or c.code, c.setup and ("%q"):format(c.setup) or "nil"))
  end
  f:write("}\n")
  f:close()
  local lua = os.getenv("LUA") or "lua5.4"
  -- a scratch directory for the files the cases write (ck.save, ck.load's fixtures, the kernel cache)
  local scratch = os.tmpname()
  os.remove(scratch)
  assert(os.execute("mkdir -m 700 " .. scratch), "cannot make a scratch directory " .. scratch)
  local results, first, children = {}, 1, 0
  while first <= #list do
    children = children + 1
    local p = assert(io.popen(("timeout 300 %s spec/badinput_child.lua %s %d %s 2>&1"):format(lua, path, first, scratch)))
    local current, done, lines = nil, false, {}
    for line in p:lines() do
      lines[#lines + 1] = line
      local b = line:match("^BEGIN (%d+)$")
      if b then current = tonumber(b) end
      local i, st, ln, msg = line:match("^RES (%d+) (%a+) (%d+) (.*)$")
      if i then results[tonumber(i)] = {status = st, line = tonumber(ln), msg = msg:gsub("\\n", "\n")}; current = nil end
      if line == "DONE" then done = true end
    end
    local _, how, code = p:close()
    if done then break end
    if not current then error("badinput child failed before any case: " .. table.concat(lines, "\n"), 0) end
    -- the child died inside case `current`: record a crash and go on after it
    local tail = {}
    for k = math.max(1, #lines - 4), #lines do tail[#tail + 1] = lines[k] end
    results[current] = {status = "crash", msg = ("%s %s; last output: %s"):format(tostring(how), tostring(code),
      table.concat(tail, " | "))}
    first = current + 1
  end
  os.remove(path)
  os.execute("rm -rf " .. scratch)
  for i, c in ipairs(list) do if c.norun then results[i] = {status = "notrun", msg = "not run"} end end
  return results, children
end

-- Message quality (names the public function, at the caller's line) is required of every case once the
-- owners' fixes are in (they are): the message check below is now a failure, not a pending note.
local STRICT_MESSAGES = os.getenv("CUKERN_BADINPUT_STRICT") == "1"

-- Run everything at load time, so that each group of known failures gets its own pending line.
local LIST = flatten()
local RESULTS, CHILDREN = run_children(LIST)
local verbose = os.getenv("CUKERN_BADINPUT_VERBOSE") == "1"
local stats = {tried = 0, clean = 0, wrong = 0, crashed = 0, named = 0, at_line = 0, errored = 0}
local hard, groups, group_order, fixed, msg_bad = {}, {}, {}, {}, {}
for i, c in ipairs(LIST) do
  local r = RESULTS[i] or {status = "missing", msg = "no result"}
  stats.tried = stats.tried + 1
  local named, at_line = false, false
  if r.status == "error" then
    stats.errored = stats.errored + 1
    named = r.msg:find(short(c.fn), 1, true) ~= nil or c.fn == "operators"
    at_line = r.msg:find("^caller%.lua:" .. r.line .. ":") ~= nil
    if named then stats.named = stats.named + 1 end
    if at_line then stats.at_line = stats.at_line + 1 end
  elseif r.status == "crash" then stats.crashed = stats.crashed + 1
  elseif r.status == "notrun" then stats.notrun = (stats.notrun or 0) + 1
  else stats.wrong = stats.wrong + 1 end
  if r.status == "error" and c.any_error then named, at_line = true, true end
  local clean = r.status == "error" and named and at_line
  if clean then stats.clean = stats.clean + 1 end
  local what = r.status == "error" and ((not named and "message does not name " .. short(c.fn) or "") ..
    (not named and not at_line and "; " or "") .. (not at_line and "not at the caller's line" or ""))
    or (r.status == "silent" and "no error (silently accepted)") or (r.status == "notrun" and "not run") or r.status
  local line = ("%s  %s  ->  %s%s"):format(c.fn, c.code, clean and "clean" or what,
    r.status == "error" and ("  [" .. r.msg:gsub("\n.*", "") .. "]") or (r.status == "crash" and (" " .. r.msg) or ""))
  if verbose then io.write("\n", line) end
  local raised = r.status == "error"
  if r.status == "notrun" then
    -- listed, not run (its fixture needs a file format this build lacks): nothing to judge
  elseif c.item and not (raised and (clean or not STRICT_MESSAGES)) then
    local key = ("issue 18 item %s (%s): %s%s"):format(c.item, c.owner, c.why, r.status == "crash" and " (crashed here)" or "")
    if not groups[key] then groups[key] = {}; group_order[#group_order + 1] = key end
    table.insert(groups[key], line)
  elseif not raised then
    hard[#hard + 1] = line
  elseif not clean then
    if STRICT_MESSAGES then hard[#hard + 1] = line else msg_bad[#msg_bad + 1] = line end
  end
  if c.item and raised and clean and not c.sanitizer_only then fixed[#fixed + 1] = line end
end

describe("bad-input catalogue #badinput", function()
  it("has an entry for every public function and method, and none for a function that is gone", function()
    local missing, stale = {}, {}
    local known = {}
    for _, n in ipairs(public_names()) do
      known[n] = true
      if not CAT[n] then missing[#missing + 1] = n end
    end
    for n in pairs(CAT) do if not known[n] then stale[#stale + 1] = n end end
    table.sort(missing); table.sort(stale)
    assert(#missing == 0, "no bad-input cases for: " .. table.concat(missing, ", ") .. " (add them to spec/badinput_spec.lua)")
    assert(#stale == 0, "bad-input cases for functions that no longer exist: " .. table.concat(stale, ", "))
  end)

  it("every bad input raises a Lua error: no crash, no silent acceptance", function()
    io.write(("\n[badinput] %d cases in %d child process(es): %d clean, %d raised an error (%d name the function, " ..
      "%d at the caller's line), %d silently accepted, %d crashed, %d not run\n"):format(stats.tried, CHILDREN, stats.clean,
      stats.errored, stats.named, stats.at_line, stats.wrong, stats.crashed, stats.notrun or 0))
    if #fixed > 0 then
      io.write("[badinput] tagged cases now clean (drop their tag in spec/badinput_spec.lua):\n  " ..
        table.concat(fixed, "\n  ") .. "\n")
    end
    assert(#hard == 0, ("%d bad inputs not handled:\n  %s"):format(#hard, table.concat(hard, "\n  ")))
  end)

  it("error messages name the public function and point at the caller's line", function()
    assert(#msg_bad == 0, ("%d of %d errors do not name the public function or are not raised at the caller's " ..
      "line:\n  %s"):format(#msg_bad, stats.errored, table.concat(msg_bad, "\n  ")))
  end)

  for _, key in ipairs(group_order) do
    it(key, function()
      if verbose then io.write("\n[badinput] " .. key .. ":\n  " .. table.concat(groups[key], "\n  ") .. "\n") end
      pending(("%s -- %d case(s), expected to fail until merged: %s"):format(key, #groups[key],
        (groups[key][1]:gsub("  %->.*", ""))))
    end)
  end
end)
