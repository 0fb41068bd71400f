--- Every public function, called once with a bad argument: the error names the function as the user wrote
-- it (`ck.sum`, `a:narrow`, `a + b`) and points at the user's line, never into lua/cukern/*.lua.
local H = require "spec.helpers"
local ck = H.ck

local ENV = setmetatable({ck = ck}, {__index = _G})

-- Runs `code` as line 3 of a chunk named "user" (lines 1-2 set up arrays) and returns the error message.
local SETUP = "local a, b, z, i = ...\nlocal r\n"
local function err_of(code, ...)
  local chunk = assert(load(SETUP .. "r = " .. code .. "\nreturn r", "=user", "t", ENV))
  local ok, e = pcall(chunk, ...)
  assert(not ok, code .. ": expected an error, got " .. tostring(e))
  return tostring(e)
end
local function stmt_err_of(code, ...) -- for statements (assignments)
  local chunk = assert(load(SETUP .. code .. "\nreturn r", "=user", "t", ENV))
  local ok, e = pcall(chunk, ...)
  assert(not ok, code .. ": expected an error")
  return tostring(e)
end

local function fresh()
  local shape = {math.random(2, 5), math.random(2, 5)}
  local a = H.rand(shape, "f32")
  local b = H.rand(shape, "f32")
  local z = H.rand(shape, "f32"); z:free()
  local i = ck.empty(shape[1], {dtype = "i32"})
  return a, b, z, i
end

-- {name the message must start with, code (an expression), a pattern the rest must match}
local CASES = {
  -- module
  {"ck.default_device", [[ck.default_device("tpu")]], "unknown device 'tpu'"},
  {"ck.default_device", [[ck.default_device("host:9")]], "device host:9 does not exist %(there is 1 host device"},
  {"ck.devices", [[ck.devices(1)]], "takes no arguments"},
  {"ck.with_device", [[ck.with_device("host:7", function() end)]], "device host:7 does not exist"},
  {"ck.with_device", [[ck.with_device("host", 1)]], "must be a function"},
  {"ck.stream", [[ck.stream("host:7")]], "device host:7 does not exist"},
  {"ck.with_stream", [[ck.with_stream("s", function() end)]], "argument 1 must be a stream"},
  {"ck.event", [[ck.event(1)]], "the device must be a string"},
  {"s:wait", [[ck.stream("host"):wait(1)]], "cukern.event expected"},
  {"e:elapsed", [[ck.event("host"):elapsed(ck.event("host"))]], "must be recorded first"},
  {"e:record", [[ck.event("host"):record(1)]], "cukern.stream expected"},
  {"ck.nvtx.range", [[ck.nvtx.range("r", 1)]], "argument 2 must be a function"},
  {"ck.nvtx.push", [[ck.nvtx.push(1)]], "the range's name must be a string"},
  {"ck.nvtx.pop", [[ck.nvtx.pop(1)]], "takes no arguments"},
  {"a:pin", [[a:pin(1)]], "takes no arguments"},
  {"a:is_pinned", [[z:is_pinned()]], "freed"},
  {"ck.seed", [[ck.seed("x")]], "number expected"},
  {"ck.shard", [[ck.shard(a, {dim = 3})]], "dim out of range: 3 for a 2%-D array"},
  {"ck.replicate", [[ck.replicate(a, {"host:9"})]], "device host:9 does not exist"},
  {"ck.batching", [[ck.batching("on")]], "boolean expected"},
  {"ck.variants", [[ck.variants("nope")]], "unknown op 'nope'"},
  {"ck.variants", [[ck.variants(1)]], "must be a string"},
  -- creation
  {"ck.empty", [[ck.empty(-1)]], "dim 1 is negative"},
  {"ck.zeros", [[ck.zeros(2, "x")]], "dim 2 is \"x\", not an integer"},
  {"ck.ones", [[ck.ones(2, {dtype = "f17"})]], "unknown dtype 'f17'"},
  {"ck.full", [[ck.full(nil, 1)]], "shape must be"},
  {"ck.full", [[ck.full({2}, "x")]], "value must be a number"},
  {"ck.eye", [[ck.eye()]], "n must be an integer >= 0, got nil"},
  {"ck.arange", [[ck.arange(0/0)]], "stop must be a finite number, got NaN"},
  {"ck.arange", [[ck.arange(math.mininteger, math.maxinteger)]], "too many"},
  {"ck.linspace", [[ck.linspace(0, 1, -1)]], "n must be an integer >= 0"},
  {"ck.rand", [[ck.rand(2, {dtype = "i32"})]], "makes floating%-point .* ck%.randint"},
  {"ck.randn", [[ck.randn(2, {variant = "x"})]], "unknown option \"variant\" %(ck.randn takes dtype, device, pinned%)"},
  {"ck.randint", [[ck.randint(6, 1, 3)]], "hi %(1%) is less than lo %(6%)"},
  {"ck.array", [[ck.array({{1, 2}, {3}})]], "ragged"},
  {"ck.array", [[ck.array("x")]], "must be a %(nested%) table"},
  {"ck.scalar", [[ck.scalar({1})]], "must be a number"},
  -- ops
  {"ck.matmul", [[ck.matmul(a, 1)]], "argument 2 %(b%) must be a cukern array, got 1"},
  {"ck.matmul", [[ck.matmul(a, b, {keepdim = true})]], "unknown option \"keepdim\""},
  {"ck.gemm", [[ck.gemm(nil, a, b)]], "argument 1 %(c%) must be the output array"},
  {"ck.transpose", [[ck.transpose(1)]], "must be a cukern array"},
  {"ck.sum", [[ck.sum(a, 3)]], "dim out of range: 3 for a 2%-D array"},
  {"ck.any", [[ck.any(a, 3)]], "dim out of range: 3 for a 2%-D array"},
  {"ck.all", [[ck.all("x")]], "argument 1 must be a cukern array"},
  {"ck.count_nonzero", [[ck.count_nonzero(a, 1, {out = a})]], "unknown option"},
  {"a:any", [[a:any(0)]], "dim out of range"},
  {"a:all", [[a:all(1, {keepdim = 3})]], "keepdim"},
  {"a:count_nonzero", [[a:count_nonzero(5)]], "dim out of range"},
  {"ck.prod", [[ck.prod(a, 1, {keepdim = 1})]], "option keepdim must be true or false"},
  {"ck.mean", [[ck.mean(a, "x")]], "dim must be an integer"},
  {"ck.max", [[ck.max(a, {idx = i})]], "option idx needs a dim"},
  {"ck.min", [[ck.min(z)]], "freed"},
  {"ck.argmax", [[ck.argmax(a, 0)]], "dim out of range"},
  {"ck.argmin", [[ck.argmin(a, 1, {idx = i})]], "unknown option \"idx\""},
  {"ck.add", [[ck.add(a, z)]], "freed array"},
  {"ck.pow", [[ck.pow(a, "x")]], "argument 2 must be a cukern array or a number"},
  {"ck.clamp", [[ck.clamp(a, "lo")]], "lo must be a number"},
  {"ck.equal", [[ck.equal(a, 1)]], "argument 2 must be a cukern array"},
  {"ck.allclose", [[ck.allclose(a, b, -1)]], "rtol and atol must be >= 0"},
  {"ck.format", [[ck.format(a:shape())]], "argument 1 must be a cukern array, got table"},
  {"ck.kernel", [[ck.kernel(1)]], "source must be a string"},
  {"ck.bench", [[ck.bench(1)]], "takes a table"},
  -- files (lua/cukern/io.lua) and fused kernels (lua/cukern/map.lua)
  {"ck.save", [[ck.save(1, a)]], "file name expected, got number"},
  {"ck.savez", [[ck.savez(os.tmpname() .. ".npz", 1)]], "expected a table of named arrays"},
  {"ck.load", [[ck.load("/nonexistent/cukern-x.npy")]], "cannot open"},
  {"ck.map", [[ck.map("a +", {a = a})]], "at position 4"},
  {"ck.map_info", [[ck.map_info(1)]], "argument 1 must be an expression"},
  {"ck.map_source", [[ck.map_source(1)]], "argument 1 must be an expression"},
  {"ck.reduce_map", [[ck.reduce_map(1)]], "argument 1 must be a spec table"},
  {"ck.kernel_build", [[ck.kernel_build("x", 1)]], "argument 2 must be the entry point"},
  {"ck.cache_dir", [[ck.cache_dir(1)]], "argument 1 must be a directory"},
  {"ck.graph", [[ck.graph(1)]], "argument 1 must be a function"},
  {"ck.launch_overhead", [[ck.launch_overhead(1)]], "takes nil or a table"},
  -- several devices (issue 31): ck.nccl, ck.dist and the communicator (a world of one on the host)
  {"ck.nccl.all_reduce", [[ck.nccl.all_reduce({a, b})]], "arrays 1 and 2 are both on host:0; a collective takes one array per device"},
  {"ck.nccl.all_reduce", [[ck.nccl.all_reduce({a}, "xor")]], "op must be \"sum\", \"prod\", \"max\", \"min\" or \"avg\", got \"xor\""},
  {"ck.nccl.all_reduce", [[ck.nccl.all_reduce({a}, "sum", {variant = "nope"})]], "unknown variant 'nope' %(the all%-reduce ladder has: 0 nccl"},
  {"ck.nccl.all_reduce", [[ck.nccl.all_reduce({i}, "avg")]], "avg needs a float dtype %(the arrays are i32%)"},
  {"ck.nccl.all_gather", [[ck.nccl.all_gather(a)]], "the first argument must be a list of arrays, one per device, got a cukern array"},
  {"ck.nccl.reduce_scatter", [[ck.nccl.reduce_scatter({a:sum()})]], "dim 1 %(0%) must be divisible by the number of arrays %(1%)"},
  {"ck.nccl.broadcast", [[ck.nccl.broadcast({a}, 2)]], "root must be an integer 1..1, got 2"},
  {"ck.nccl.reduce", [[ck.nccl.reduce({z})]], "freed"},
  {"ck.nccl.wait", [[ck.nccl.wait(nil, "x")]], "timeout must be a number of seconds, got \"x\""},
  {"ck.dist.init", [[ck.dist.init({rank = -1})]], "option rank must be an integer 0..2147483647, got %-1"},
  {"ck.dist.init", [[ck.dist.init({bogus = 1})]], "unknown option \"bogus\""},
  {"comm:all_reduce", [[ck.dist.init{device = "host"}:all_reduce(1)]], "the first argument must be an array, got 1"},
  {"comm:all_reduce", [[ck.dist.init{device = "host"}:all_reduce(ck.array({1}, {dtype = "i16"}))]],
   "dtype i16 is not supported %(collectives take f32, f64, i32, f16, bf16, u8, i8, u32 and i64"},
  {"comm:all_gather", [[ck.dist.init{device = "host"}:all_gather(z)]], "freed"},
  {"comm:reduce_scatter", [[ck.dist.init{device = "host"}:reduce_scatter(a:sum())]], "must be divisible by the world size 1"},
  {"comm:broadcast", [[ck.dist.init{device = "host"}:broadcast(a, 1)]], "root must be an integer 0..0, got 1"},
  {"comm:reduce", [[ck.dist.init{device = "host"}:reduce(a, "xor")]], "op must be"},
  {"comm:barrier", [[ck.dist.init{device = "host"}.barrier(a)]], "call it as comm:barrier%(...%)"},
  {"comm:destroy", [[ck.dist.init{device = "host"}.destroy(1)]], "call it as comm:destroy%(...%)"},
  -- selection and masks (lua/cukern/select.lua)
  {"ck.index_select", [[ck.index_select(a, 3, a)]], "dim out of range: 3 for a 2%-D array"},
  {"ck.gather", [[ck.gather(a, 1, b)]], "the index is f32 %[%d+x%d+%]"},
  {"ck.take", [[ck.take(a, ck.array({1000000}, {dtype = "i32"}))]], "index 1000000 at idx%[1%] is out of range: the source has %d+ elements"},
  {"ck.scatter", [[ck.scatter(a, 1, ck.array({{99}}, {dtype = "i32"}), a)]], "index 99 at idx%[1, 1%] is out of range for dim 1"},
  {"ck.scatter_add", [[ck.scatter_add(a, 1, ck.array({{1}}, {dtype = "i32"}), "x")]], "the source must be a number or a cukern array"},
  {"ck.index_add", [[ck.index_add(a, 1, ck.array({{1}}, {dtype = "i32"}), a)]], "the index must be 1%-D"},
  {"ck.index_copy", [[ck.index_copy(z, 1, 1, 1)]], "freed"},
  {"ck.put", [[ck.put(a, ck.array({1, 1}, {dtype = "i64"}), ck.ones(2))]], "idx%[1%] and idx%[2%] write the same element"},
  {"ck.where", [[ck.where(a, 1, 0)]], "the condition is f32 %[%d+x%d+%]; masks are bool arrays"},
  {"ck.masked_select", [[ck.masked_select(a, 1)]], "the mask must be a bool array, got 1"},
  {"ck.nonzero", [[ck.nonzero(z)]], "freed"},
  {"ck.find", [[ck.find(1)]], "the array must be a cukern array"},
  {"a:index_select", [[a:index_select(1, ck.array({0}, {dtype = "i32"}))]], "index 0 at idx%[1%] is out of range"},
  {"a:gather", [[a:gather(1)]], "the index must be an i32 or i64 array"},
  {"a:take", [[a:take(z)]], "freed"},
  {"a:scatter_", [[a:scatter_(1, ck.array({{1}, {1}}, {dtype = "i32"}), ck.ones(2, 1))]], "write the same element"},
  {"a:scatter_add_", [[a:scatter_add_(0, ck.array({{1}}, {dtype = "i32"}), a)]], "dim out of range"},
  {"a:index_add_", [[a:index_add_(1, ck.array({1}, {dtype = "i32"}), ck.ones(2, 4))]], "the source must have the destination's shape"},
  {"a:index_copy_", [[a:index_copy_(1, ck.array({1}, {dtype = "u8"}), 0)]], "the index is u8"},
  {"a:put_", [[a:put_(ck.array({0}, {dtype = "i32"}), 1)]], "index 0 at idx%[1%] is out of range"},
  {"a:masked_fill_", [[a:masked_fill_(ck.zeros({7, 9, 11}, {dtype = "bool"}), 1)]], "the mask must broadcast to the array's shape"},
  {"a:masked_select", [[a:masked_select(a)]], "the mask is f32"},
  {"a:nonzero", [[a:nonzero(1)]], "takes at most 0 arguments"},
  -- assembly (lua/cukern/assembly.lua)
  {"ck.cat", [[ck.cat({a, ck.rand(7, 7)})]], "list%[2%] is %[7x7%] and list%[1%] is %[%dx%d%]; the shapes must agree except along dim 1"},
  {"ck.stack", [[ck.stack({a, ck.rand(9)})]], "stack needs arrays of one shape"},
  {"ck.split", [[ck.split(a, 0)]], "the size must be an integer >= 1, got 0"},
  {"ck.chunk", [[ck.chunk(a, 2, 3)]], "dim out of range: 3 for a 2%-D array"},
  {"ck.tile", [[ck.tile(a, "x")]], "reps must be an integer or a list of integers"},
  {"ck.flip", [[ck.flip(a, {1, 1})]], "dim 1 is listed twice"},
  {"ck.roll", [[ck.roll(a, {1, 2})]], "without dims the shift must be an integer"},
  {"ck.solve", [[ck.solve(a:narrow(2, 1, 1):narrow(1, 1, 1), z)]], "freed"},
  {"ck.inv", [[ck.inv(i)]], "i32"},
  {"ck.det", [[ck.det(a:sum(1))]], "it needs a matrix"},
  {"ck.slogdet", [[ck.slogdet(z)]], "freed"},
  {"ck.lu", [[ck.lu(a, {variant = "nope"})]], "unknown variant 'nope'"},
  {"ck.cholesky", [[ck.cholesky(ck.mul(ck.eye(3), -1))]], "not positive definite"},
  {"ck.cholesky_solve", [[ck.cholesky_solve(ck.eye(3), ck.ones(4))]], "B needs 3 rows"},
  {"ck.triangular_solve", [[ck.triangular_solve(ck.eye(3), ck.ones(3), {side = 1})]], "unknown option"},
  {"ck.qr", [[ck.qr(a, {mode = 1})]], "option mode must be"},
  {"ck.lstsq", [[ck.lstsq(a, z)]], "freed"},
  {"ck.svd", [[ck.svd(z)]], "freed"},
  {"ck.svdvals", [[ck.svdvals(a:sum(1))]], "it needs a matrix"},
  {"ck.eigh", [[ck.eigh(a, {uplo = "X"})]], "option uplo must be"},
  {"ck.eigvalsh", [[ck.eigvalsh(z)]], "freed"},
  {"ck.eig", [[ck.eig(a, {bogus = 1})]], "unknown option"},
  {"ck.eigvals", [[ck.eigvals(a, {vectors = true})]], "unknown option"},
  {"ck.norm", [[ck.norm(a, "x")]], "p must be a number"},
  {"ck.cond", [[ck.cond(z)]], "freed"},
  {"ck.matrix_rank", [[ck.matrix_rank(a, {tol = -1})]], "option tol must be"},
  {"ck.pinv", [[ck.pinv(a, {rtol = "x"})]], "option rtol must be"},
  {"ck.tril", [[ck.tril(a:sum(1))]], "needs an array of at least 2 dims"},
  {"ck.triu", [[ck.triu(z)]], "freed"},
  {"ck.diag", [[ck.diag(a, 0.5)]], "k must be an integer, got 0.5"},
  {"ck.pad", [[ck.pad(a, {1, 2})]], "widths%[1%] must be a pair {before, after}"},
  -- methods written in C
  {"a:shape", [[a.shape()]], "call it on a cukern array with a colon"},
  {"a:size", [[a:size(9)]], "dim out of range: 9"},
  {"a:strides", [[z:strides()]], "freed"},
  {"a:offset", [[z:offset()]], "freed"},
  {"a:dtype", [[z:dtype()]], "freed"},
  {"a:numel", [[z:numel()]], "freed"},
  {"a:ndim", [[z:ndim()]], "freed"},
  {"a:device", [[z:device()]], "freed"},
  {"a:is_contiguous", [[z:is_contiguous()]], "freed"},
  {"a:is_freed", [[a.is_freed(1)]], "call it on a cukern array"},
  {"a:storage_id", [[z:storage_id()]], "freed"},
  {"a:totable", [[z:totable()]], "freed"},
  {"a:flat", [[z:flat()]], "freed"},
  {"a:item", [[a:item()]], "needs exactly 1"},
  {"a:clone", [[z:clone()]], "freed"},
  {"a:contiguous", [[z:contiguous()]], "freed"},
  {"a:to", [[a:to("f17")]], "neither a device"},
  {"a:copy_", [[a:copy_(1)]], "the source must be a cukern array"},
  {"a:fill", [[a:fill("x")]], "value must be a number"},
  {"a:t", [[a:reshape(-1):t()]], "needs a 2%-D array"},
  {"a:transpose", [[a:transpose(1, 3)]], "dim d2 out of range"},
  {"a:permute", [[a:permute(1, 1)]], "repeated"},
  {"a:narrow", [[a:narrow(5, 1, 1)]], "dim out of range: 5"},
  {"a:select", [[a:select(1, 99)]], "index 99 is out of bounds for dim 1"},
  {"a:reshape", [[a:reshape(a:numel() + 1)]], "cannot view"},
  {"a:view", [[a:view(-2)]], "negative"},
  {"a:expand", [[a:expand(7, 7)]], "cannot expand"},
  -- methods written in Lua
  {"a:host", [[z:host()]], "freed"},
  {"a:slice", [[a:slice(1)]], "takes a table"},
  {"a:sub", [[a:sub{{1, 2}}]], "a:slice"},
  {"a:sum", [[a:sum(-3)]], "dim out of range: %-3"},
  {"a:max", [[a:max(1, {out = 1})]], "option out must be a %(live%) cukern array"},
  {"a:min", [[a:min(1, {out = z})]], "option out must be a %(live%) cukern array"},
  {"a:prod", [[a:prod(1, 2, 3)]], "options must be a table"},
  {"a:mean", [[a:mean({variant = {}})]], "option variant must be a variant name or id"},
  {"a:argmax", [[a:argmax(1, {keepdim = "yes"})]], "option keepdim must be true or false"},
  {"a:argmin", [[z:argmin()]], "freed"},
  -- scans and sorts (issue 33)
  {"ck.cumsum", [[ck.cumsum(a, 3)]], "dim out of range: 3 for a 2%-D array"},
  {"ck.cumprod", [[ck.cumprod(a, 1, {exclusive = 1})]], "option exclusive must be true or false"},
  {"ck.cummax", [[ck.cummax(a, 1, {keepdim = true})]], "unknown option \"keepdim\""},
  {"ck.cummin", [[ck.cummin(z)]], "freed"},
  {"ck.sort", [[ck.sort(a, 1, {descending = "yes"})]], "option descending must be true or false"},
  {"ck.argsort", [[ck.argsort(a, 0)]], "dim out of range: 0"},
  {"ck.topk", [[ck.topk(a, 99)]], "k = 99 is larger than the %d+ elements along dim 2"},
  {"a:cumsum", [[a:cumsum(-3)]], "dim out of range: %-3"},
  {"a:cumprod", [[z:cumprod()]], "freed"},
  {"a:cummax", [[a:cummax(1, {variant = "nope"})]], "unknown variant 'nope'"},
  {"a:cummin", [[a:cummin(1, 2)]], "options must be a table"},
  {"a:sort", [[a:sort(1, {idx = 1})]], "option idx must be a %(live%) i64 cukern array"},
  {"a:argsort", [[a:argsort(1, {idx = a})]], "unknown option \"idx\""},
  {"a:topk", [[a:topk(-1)]], "k must be an integer >= 0"},
  {"ck.histc", [[ck.histc(a, 4, 1, 0)]], "must be finite with lo < hi"},
  {"ck.searchsorted", [[ck.searchsorted(a, a)]], "the sorted array must be 1%-D"},
  {"ck.unique", [[ck.unique(a, {counts = 1})]], "counts must be true or false"},
  {"ck.unique", [[ck.unique(a, {inverse = true, inverse_by = "sort"})]], 'inverse_by must be "scatter" or "search"'},
  {"ck.unique", [[ck.unique(a, {inverse_by = "search"})]], "ask for it with inverse = true"},
  {"ck.complex", [[ck.complex(a, "x")]], "argument 2 must be a cukern array, got"},
  {"ck.real", [[ck.real("x")]], "argument 1 must be a cukern array"},
  {"ck.imag", [[ck.imag(a, 1)]], "takes only the array"},
  {"ck.conj", [[ck.conj(nil)]], "argument 1 must be a cukern array"},
  {"ck.angle", [[ck.angle({})]], "argument 1 must be a cukern array"},
  {"ck.iscomplex", [[ck.iscomplex(1)]], "argument 1 must be a cukern array"},
  {"ck.isreal", [[ck.isreal("z")]], "argument 1 must be a cukern array"},
  {"ck.view_as_real", [[ck.view_as_real(a)]], "is not complex"},
  {"ck.view_as_complex", [[ck.view_as_complex(a:t())]], "must end in a dim of 2"},
  {"ck.view_as_bytes", [[ck.view_as_bytes(7)]], "argument 1 must be a cukern array"},
  {"ck.finfo", [[ck.finfo("i32")]], "is not a float dtype"},
  {"ck.quantize", [[ck.quantize(a, "f16")]], "argument 2 must be \"e4m3\" or \"e5m2\""},
  {"ck.dequantize", [[ck.dequantize(a, -1)]], "argument 2 %(the scale%) must be a finite number > 0"},
  {"a:real", [[a:real(2)]], "takes only the array"},
  {"a:imag", [[a:imag({})]], "takes only the array"},
  {"a:conj", [[a:conj(1)]], "takes only the array"},
  {"a:angle", [[a:angle("x")]], "takes only the array"},
  {"ck.histogram", [[ck.histogram(a, {bins = 2.5})]], "option bins must be an integer >= 1"},
  {"a:histc", [[a:histc("x", 0, 1)]], "bins must be an integer >= 1"},
  {"a:histogram", [[a:histogram({range = 1})]], "option range must be a table {lo, hi} of numbers"},
  -- the FFT and convolution (issue 35)
  {"ck.fft", [[ck.fft(a, 0)]], "n must be an integer >= 1, got 0"},
  {"ck.ifft", [[ck.ifft(a, nil, 3)]], "dim out of range: 3"},
  {"ck.rfft", [[ck.rfft(a, {norm = "both"})]], "option norm must be \"backward\", \"ortho\" or \"forward\""},
  {"ck.irfft", [[ck.irfft(z)]], "freed"},
  {"ck.fft2", [[ck.fft2(a, {3})]], "s has 1 lengths for 2 dims"},
  {"ck.ifft2", [[ck.ifft2(a, nil, {1, 1})]], "dim 1 is listed twice"},
  {"ck.fftn", [[ck.fftn(a, nil, {1, 3})]], "dim out of range: 3"},
  {"ck.ifftn", [[ck.ifftn(a, 5)]], "s must be a table of lengths"},
  {"ck.fftshift", [[ck.fftshift(a, "x")]], "dims must be an integer or a table of dims"},
  {"ck.ifftshift", [[ck.ifftshift(a, 3)]], "dim out of range: 3"},
  {"ck.fftfreq", [[ck.fftfreq(0)]], "n must be an integer >= 1, got 0"},
  {"ck.conv", [[ck.conv(a, b, {mode = "middle"})]], "option mode must be"},
  {"ck.conv2", [[ck.conv2(a, z)]], "freed"},
  -- softmax, normalisation, attention (issue 37)
  {"ck.softmax", [[ck.softmax(a, 3)]], "dim out of range: 3 for a 2%-D array"},
  {"ck.log_softmax", [[ck.log_softmax(a, 1, {keepdim = true})]], "unknown option \"keepdim\""},
  {"ck.layer_norm", [[ck.layer_norm(a, ck.rand(99))]], "the weight must be a vector of %d+ elements"},
  {"ck.rms_norm", [[ck.rms_norm(a, nil, -1)]], "eps must be a number >= 0, got %-1"},
  {"ck.attention", [[ck.attention(a, a, a)]], "q, k, v must be 4%-D"},
  {"a:softmax", [[a:softmax(1, {variant = "nope"})]], "unknown variant 'nope'"},
  {"a:log_softmax", [[z:log_softmax()]], "freed"},
  {"a:layer_norm", [[a:layer_norm("x")]], "the weight w must be a cukern array or nil"},
  {"a:rms_norm", [[a:rms_norm(nil, nil, {dim = 3})]], "dim out of range: 3"},
  {"a:pow", [[a:pow("x")]], "must be a cukern array or a number"},
  {"a:pow_", [[a:pow_({})]], "must be a cukern array or a number"},
  {"a:clamp", [[a:clamp(0, "x")]], "hi must be a number"},
  {"a:clamp_", [[a:clamp_(0, 1, 5)]], "options must be a table"},
  -- operators and indexing
  {"a + b", [[a + "x"]], "the right operand must be a cukern array or a number, got \"x\""},
  {"a - b", [[{} - a]], "the left operand"},
  {"a + b", [[z + a]], "freed array"},
  {"a / b", [[a / z]], "freed array"},
  {"a * b", [[a * ck.rand(7, 7)]], "inner dimensions"},
  {"a / b", [[a / ck.rand(7)]], "cannot be broadcast"},
  {"a // b", [[a // true]], "the right operand"},
  {"a % b", [[a % "x"]], "the right operand"},
  {"a ^ b", [[a ^ {}]], "argument 2"},
  {"-a", [[-z]], "freed"},
  {"a .. b", [[a .. "x"]], "tostring%(a%)"},
  {"a < b", [[a < b]], "a:lt%(b%)"},
  {"a <= b", [[a <= 1]], "a:le%(b%)"},
  {"a & b", [[a & 1]], "integer and bool dtypes only"},
  {"~a", [[~a]], "integer and bool dtypes only"},
  {"#a", [[#z]], "freed"},
  {"a[i]", [[a[0] ]], "index 0 is out of range for dim 1 %(size %d+%)"},
  {"a[i]", [[a[1.5] ]], "must be an integer"},
  {"a[i]", [[a[b] ]], "the index is f32 %[%d+x%d+%]; indices are 1%-based i32 or i64 arrays"},
  {"a[{...}]", [[a[{1, 99}] ]], "index 99 is out of range for dim 2 %(size %d+%)"},
  {"a[{...}]", [[a[{{2, 1000}}] ]], "range {2, 1000} is out of range for dim 1"},
  {"a[{...}]", [[a[{1, 1, 1}] ]], "3 indices for a 2%-D array"},
}

local STATEMENTS = {
  {"s:sync", [[local s = ck.stream("host"); s:free(); s:sync()]], "the stream was freed"},
  {"a[i] = v", [[a[99] = 1]], "index 99 is out of range for dim 1"},
  {"a[i] = v", [[a[1] = "x"]], "must be a number or a cukern array"},
  {"a[i] = v", [[a.foo = 1]], "cannot set \"foo\""},
  {"a[{...}] = v", [[a[{1, {1, 2}}] = ck.rand(3)]], "cannot be broadcast"},
  {"a[{...}] = v", [[a[{1, 1}] = z]], "freed"},
}

-- Each elementwise op the core lists gets a bad call as function, method and in-place method.
for _, op in ipairs(ck.core.ew_ops()) do
  if op.lua == "unary" then
    CASES[#CASES + 1] = {"ck." .. op.name, ("ck.%s(\"x\")"):format(op.name), "argument 1 must be a cukern array"}
    CASES[#CASES + 1] = {"a:" .. op.name, ("a:%s(1)"):format(op.name), "options must be a table"}
    CASES[#CASES + 1] = {"a:" .. op.name .. "_", ("z:%s_()"):format(op.name), "freed"}
  elseif op.lua == "binary" then
    CASES[#CASES + 1] = {"ck." .. op.name, ("ck.%s(a, \"x\")"):format(op.name), "argument 2 must be a cukern array or a number"}
    CASES[#CASES + 1] = {"a:" .. op.name, ("a:%s(nil)"):format(op.name), "argument 1 must be a cukern array or a number, got nil"}
    CASES[#CASES + 1] = {"a:" .. op.name .. "_", ("a:%s_(b, {out = b})"):format(op.name), "unknown option \"out\""}
  end
end

local function check(case, msg)
  local name, code, pattern = case[1], case[2], case[3]
  local prefix = "user:3: " .. name .. ": "
  assert(msg:sub(1, #prefix) == prefix, ("%s\n  expected the message to start with %q\n  got %q"):format(code, prefix, msg))
  assert(msg:find(pattern, #prefix + 1), ("%s\n  expected %q in %q"):format(code, pattern, msg))
  assert(not msg:find("cukern/[%w_]+%.lua"), code .. ": message points into cukern's modules: " .. msg)
end

describe("errors", function()
  -- host-only cases: arrays made without a device go to the host here, also on a machine with a GPU
  local prev_default
  setup(function() prev_default = ck.default_device(); ck.default_device("host") end)
  teardown(function() ck.default_device(prev_default) end)
  it("name the public function and point at the user's line, for one bad call of each", function()
    for _, case in ipairs(CASES) do check(case, err_of(case[2], fresh())) end
    for _, case in ipairs(STATEMENTS) do check(case, stmt_err_of(case[2], fresh())) end
  end)

  it("cover every public function and method (the list above is complete)", function()
    local named = {}
    for _, c in ipairs(CASES) do named[c[1]] = true end
    for _, c in ipairs(STATEMENTS) do named[c[1]] = true end
    -- functions that take no arguments or accept anything cannot be called badly
    local no_bad_call = {device = true, has_cuda = true, sync = true, sync_mode = true, memory = true,
      empty_cache = true, last_ran = true, is_array = true, core = true, version = true, unary_ops = true,
      binary_ops = true, io_formats = true, kernel_header = true, map_cache_size = true, linalg_available = true}
    local missing = {}
    for k, v in pairs(ck) do
      if not no_bad_call[k] and type(v) == "function" and not named["ck." .. k] then missing[#missing + 1] = "ck." .. k end
    end
    -- the tables of functions (issue 31) and the communicator's methods
    local nested_no_bad_call = {["ck.nccl.info"] = true, ["ck.nccl.variants"] = true, }
    for _, t in ipairs {"nccl", "dist", "nvtx"} do
      for k, v in pairs(ck[t]) do
        local name = "ck." .. t .. "." .. k
        if type(v) == "function" and not nested_no_bad_call[name] and not named[name] then missing[#missing + 1] = name end
      end
    end
    local c = ck.dist.init{device = "host"}
    for k, v in pairs(getmetatable(c)) do
      if type(v) == "function" and not k:find("^__") and not named["comm:" .. k] then missing[#missing + 1] = "comm:" .. k end
    end
    c:destroy()
    local methods_no_bad_call = {free = true, cuda = true} -- free is idempotent; cuda needs a GPU to succeed
    for k in pairs(ck.core.methods) do
      if not methods_no_bad_call[k] and not named["a:" .. k] then missing[#missing + 1] = "a:" .. k end
    end
    table.sort(missing)
    assert(#missing == 0, "no bad-call case for: " .. table.concat(missing, ", "))
  end)

  it("a:cuda() without a GPU says why, at the user's line", function()
    if ck.has_cuda() then return pending("this machine has a GPU") end
    local msg = err_of("a:cuda()", fresh())
    assert.matches("^user:3: a:cuda: ", msg)
  end)

  it("errors raised through pcall(f, ...) point at the line of the pcall", function()
    local chunk = assert(load("local a = ...\nlocal ok, e = pcall(ck.sum, a, 9)\nreturn e", "=user", "t", ENV))
    local msg = chunk(fresh())
    assert.matches("^user:2: ck.sum: dim out of range: 9", msg)
    -- the same for the functions of map.lua and io.lua (one raise, lua/cukern/errors.lua)
    chunk = assert(load("local ok, e = pcall(ck.map, 1)\nreturn e", "=user", "t", ENV))
    assert.matches("^user:1: ck.map: argument 1 must be an expression", chunk())
    chunk = assert(load("local ok, e = pcall(ck.load, 1)\nreturn e", "=user", "t", ENV))
    assert.matches("^user:1: ck.load: bad argument #1", chunk())
  end)

  -- Errors raised in C (ckl_raise_at_user) skip the frames of the modules listed in src/lua/lcukern.c; errors
  -- raised in Lua (lua/cukern/errors.lua) skip every module of lua/cukern/. Every module that calls the core or
  -- raises through errors.lua must be on the C list, or C errors raised inside it would point into it.
  it("the C side skips every Lua module that calls the core or raises", function()
    local src = H.read_file("src/lua/lcukern.c")
    local list = src:match("static const char %*const OWN%[%] = (%b{})")
    assert.is_not_nil(list, "OWN[] not found in src/lua/lcukern.c")
    local own = {}
    for name in list:gmatch('"cukern/([%w_]+)%.lua"') do own[name] = true end
    local p = io.popen("ls lua/cukern/*.lua")
    local missing = {}
    for f in p:lines() do
      local name = f:match("([%w_]+)%.lua$")
      local text = H.read_file(f)
      local needs = name == "errors" or text:find('require%s*%(?%s*"cukern"') or text:find('require%s*%(?%s*"cukern%.core"')
        or text:find('require%s*%(?%s*"cukern%.errors"')
      if needs and not own[name] then missing[#missing + 1] = f end
    end
    p:close()
    assert(#missing == 0, "not in OWN[] of src/lua/lcukern.c: " .. table.concat(missing, ", "))
  end)
end)
