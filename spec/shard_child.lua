--- Child process of spec/shard_spec.lua: ck.shard and ck.replicate (lua/cukern/shard.lua) over the devices of one
-- backend, every result compared with the plain computation on one device (the first of the backend, HOME).
--   lua5.4 spec/shard_child.lua <host|cuda> <seed>     (host devices: CUKERN_HOST_DEVICES=N makes host:0..N-1)
-- Output, one line per check, then the count:  ok <name> | FAIL <name>\t<message, newlines as \n> ... DONE <n>
--
-- Tolerances (eps = 2^-24 for f32, 2^-53 for f64; i32 is exact): elementwise results are the same operation on
-- the same elements, so they must agree to the last bit (4 eps allowed for a different kernel path); a sum of n
-- terms in another order errs by at most n*eps*sum|x| (sum, mean; prod relative n*eps); max and min are exact;
-- a matrix product's entries by 4*eps*k*max(|A| @ |B|) (spec/matmul_spec.lua's argument).
package.path = "./lua/?.lua;./lua/?/init.lua;./?.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"

local backend, seed = arg[1] or "host", math.tointeger(tonumber(arg[2])) or os.time()
ck.seed(seed)
math.randomseed(seed)

local ALL = {}
for _, d in ipairs(ck.devices()) do if d.backend == backend then ALL[#ALL + 1] = d.id end end
local HOME = ALL[1]
local function devs(k) return table.move(ALL, 1, k, 1, {}) end
local KS = {} -- device counts to try: 1, 2, 3 (as many as there are)
for k = 1, math.min(#ALL, 3) do KS[#KS + 1] = k end

local count = 0
local function check(name, fn)
  count = count + 1
  local ok, err = xpcall(fn, debug.traceback)
  if ok then io.write("ok ", name, "\n") else io.write("FAIL ", name, "\t", (tostring(err):gsub("\n", "\\n")), "\n") end
  io.flush()
end

-- ---------------------------------------------------------------- inputs and comparisons

local EPS = {f32 = 2 ^ -24, f64 = 2 ^ -53, i32 = 0}

--- Fresh random values on HOME: floats of magnitude in [0.5, 1.5) with random signs (never 0), ints in [-m, m].
local function R(shape, dt, m)
  if dt == "i32" then
    m = m or 50
    return (ck.rand(shape, {dtype = "f64", device = HOME}) * (2 * m + 1) - m):floor():to("i32")
  end
  local v = ck.rand(shape, {dtype = dt or "f32", device = HOME}) * 2 - 1
  return v + v:sign() * 0.5
end

local function shp(a) return table.concat(a:shape(), "x") end

local function close(got, ref, rtol, atol, label)
  assert(ck.is_array(got), label .. ": not a plain array: " .. tostring(got))
  assert(shp(got) == shp(ref), ("%s: shape %s, expected %s"):format(label, shp(got), shp(ref)))
  assert(got:dtype() == ref:dtype(), ("%s: dtype %s, expected %s"):format(label, got:dtype(), ref:dtype()))
  if not ck.allclose(got, ref, rtol, atol) then
    local d = (got:to(HOME):to("f64") - ref:to(HOME):to("f64")):abs():max():item()
    error(("%s: max |diff| %.4g > atol %.4g + rtol %.4g * |ref| (seed %d)"):format(label, d, atol, rtol, seed), 2)
  end
end
local function same(got, ref, label) close(got, ref, 0, 0, label) end
local function ew_close(got, ref, label) close(got, ref, 4 * (EPS[ref:dtype()] or 0), 0, label) end

--- n * eps * sum|x|: what summing a's n elements in any order may err by.
local function sum_tol(a) return a:numel() * EPS[a:dtype()] * a:to("f64"):abs():sum():item() end

local function same_list(a, b, label)
  assert(#a == #b and table.concat(a, ",") == table.concat(b, ","), ("%s: {%s}, expected {%s}"):format(label,
    table.concat(a, ", "), table.concat(b, ", ")))
end

--- fn must raise a message matching pat, at its own line (the caller's line) in this file.
local function raises(fn, pat)
  local ok, e = pcall(fn)
  assert(not ok, "no error; expected one matching " .. pat)
  e = tostring(e)
  local line = debug.getinfo(fn, "S").linedefined
  assert(e:find("shard_child%.lua:" .. line .. ": "), ("not raised at the caller's line %d: %s"):format(line, e))
  assert(e:find(pat), ("message does not match %q: %s"):format(pat, e))
end

--- The block sizes the split must have: near-equal, the first ones larger.
local function expected_blocks(n, k)
  local t = {}
  for i = 1, k do t[i] = n // k + (i <= n % k and 1 or 0) end
  return t
end

local function check_layout(s, a, dim, ds, label)
  assert(s.kind == "shard" and s.dim == dim, label .. ": kind/dim " .. tostring(s.kind) .. "/" .. tostring(s.dim))
  same_list(s.devices, ds, label .. ": devices")
  same_list(s:shape(), a:shape(), label .. ": global shape")
  assert(s:numel() == a:numel() and s:ndim() == a:ndim() and s:dtype() == a:dtype(), label .. ": numel/ndim/dtype")
  local sizes = {}
  for i, p in ipairs(s.parts) do
    assert(p:device() == ds[i], ("%s: part %d on %s, expected %s"):format(label, i, p:device(), ds[i]))
    assert(p:storage_id() ~= a:storage_id(), label .. ": a part shares the input's memory")
    sizes[i] = p:shape()[dim]
  end
  same_list(sizes, expected_blocks(a:shape()[dim], #ds), label .. ": block sizes")
end

-- ---------------------------------------------------------------- split and gather

local CASES = { -- shape, dim, how the input is made
  {{7, 5}, 1}, {{7, 5}, 2}, {{7, 5}, -1}, {{3, 5}, 1}, {{8, 3}, 1}, {{10}, 1}, {{4, 3, 5}, 1}, {{4, 3, 5}, 3},
  {{5, 7}, 1, "transposed"}, {{5, 7}, 2, "transposed"}, {{3, 6, 4}, 2, "sliced"},
}
local function input(c, dt)
  if c[3] == "transposed" then return R({c[1][2], c[1][1]}, dt):transpose() end
  if c[3] == "sliced" then return R({c[1][1], c[1][2] + 2, c[1][3]}, dt):slice {{}, {2, c[1][2] + 1}} end
  return R(c[1], dt)
end

for _, k in ipairs(KS) do
  for _, dt in ipairs {"f32", "f64", "i32"} do
    check(("split and gather back exactly: %d device(s), %s"):format(k, dt), function()
      for _, c in ipairs(CASES) do
        local a = input(c, dt)
        local label = ("%s[%s] dim %d%s"):format(dt, shp(a), c[2], c[3] and (" " .. c[3]) or "")
        local s = ck.shard(a, {devices = devs(k), dim = c[2]})
        check_layout(s, a, c[2] < 0 and a:ndim() + 1 + c[2] or c[2], devs(k), label)
        same(s:gather(), a, label .. ": gather")
        assert(s:gather():device() == HOME, label .. ": gather goes to the first device")
        local g = s:gather(ALL[k])
        assert(g:device() == ALL[k], label .. ": gather(" .. ALL[k] .. ") on " .. g:device())
        same(g, a, label .. ": gather(" .. ALL[k] .. ")")
        assert(#s == a:shape()[1], label .. ": #s")
      end
    end)
  end
  check(("tostring, copies of their own, an input on another device, ck.shard(a, devices): %d device(s)"):format(k), function()
    local a = R({7, 5})
    local s = ck.shard(a, {devices = devs(k)})
    local want = ({"7", "4+3", "3+2+2"})[k]
    assert(tostring(s):find("^cukern%.shard f32%[7x5%] split along dim 1 as " .. want:gsub("%+", "%%+") .. " over " ..
      ALL[1]), tostring(s))
    local ref = a:clone()
    a:fill(7) -- the parts are copies: changing the input changes nothing
    same(s:gather(), ref, "after the input changed")
    local b = ref:to(ALL[k])
    same(ck.shard(b, devs(k)):gather(), ref, "input on " .. ALL[k])
  end)
  check(("replicate: a copy on every device, gather, tostring: %d device(s)"):format(k), function()
    for _, dt in ipairs {"f32", "i32"} do
      local a = R({4, 3}, dt)
      local r = ck.replicate(a, devs(k))
      assert(r.kind == "replicate" and r.dim == nil, "kind/dim")
      same_list(r.devices, devs(k), "devices")
      same_list(r:shape(), {4, 3}, "shape")
      for i, p in ipairs(r.parts) do
        assert(p:device() == ALL[i] and p:storage_id() ~= a:storage_id(), "part " .. i)
        same(p, a, "part " .. i)
      end
      same(r:gather(), a, "gather")
      same(r:gather(ALL[k]), a, "gather on " .. ALL[k])
      assert(tostring(r):find("^cukern%.replicate " .. dt .. "%[4x3%] replicated on " .. ALL[1]), tostring(r))
    end
  end)
end

check("the default devices: every CUDA device, or without one every host device", function()
  local want = {}
  for _, d in ipairs(ck.devices()) do if d.backend == (ck.has_cuda() and "cuda" or "host") then want[#want + 1] = d.id end end
  local a = R({math.max(#want, 1) * 2 + 1, 3})
  same_list(ck.shard(a).devices, want, "ck.shard")
  same_list(ck.replicate(a).devices, want, "ck.replicate")
end)

-- ---------------------------------------------------------------- elementwise

for _, k in ipairs(KS) do
  for _, dt in ipairs {"f32", "f64"} do
    check(("elementwise with sharded, replicated and number operands: %d device(s), %s"):format(k, dt), function()
      local D = devs(k)
      for _, c in ipairs {{{7, 5}, 1}, {{7, 5}, 2}, {{4, 3, 5}, 2}, {{5, 7}, 1, "transposed"}} do
        local a, b = input(c, dt), input(c, dt)
        local full, row = R(a:shape(), dt), R({a:shape()[a:ndim()]}, dt)
        local s, t = ck.shard(a, {devices = D, dim = c[2]}), ck.shard(b, {devices = D, dim = c[2]})
        local rf, rr = ck.replicate(full, D), ck.replicate(row, D)
        local label = ("%s[%s] dim %d: "):format(dt, shp(a), c[2])
        local cases = {
          {"s + t", s + t, a + b}, {"s - rf", s - rf, a - full}, {"rf - s", rf - s, full - a},
          {"s + rr", s + rr, a + row}, {"s * 2.5", s * 2.5, a * 2.5}, {"-3 * s", -3 * s, a * -3},
          {"s / t", s / t, a / b}, {"1 / s", 1 / s, 1 / a}, {"s ^ 2", s ^ 2, a ^ 2}, {"-s", -s, -a},
          {"s:exp()", s:exp(), a:exp()}, {"s:abs():sqrt()", s:abs():sqrt(), a:abs():sqrt()},
          {"s:tanh()", s:tanh(), a:tanh()}, {"s:sigmoid()", s:sigmoid(), a:sigmoid()},
          {"s:maximum(rf)", s:maximum(rf), a:maximum(full)}, {"s:minimum(0.1)", s:minimum(0.1), a:minimum(0.1)},
          {"s:clamp(-0.7, 0.7)", s:clamp(-0.7, 0.7), a:clamp(-0.7, 0.7)}, {"s:pow(3)", s:pow(3), a:pow(3)},
          {"s // 0.3", s // 0.3, a // 0.3}, {"s % t", s % t, a % b}, {"s:lt(t)", s:lt(t), a:lt(b)},
          {"s:map(p * x + q)", s:map(function(p, q, x) return p * x + q end, t, 2), a * 2 + b},
          {"s:map(p * max r)", s:map(function(p, r) return p:abs():mul(r:max()) end, rr), a:abs():mul(row:max())},
        }
        for _, cs in ipairs(cases) do
          local got = cs[2]
          assert(getmetatable(got) == getmetatable(s) and got.kind == "shard", label .. cs[1] .. ": not a shard")
          assert(got.dim == s.dim, label .. cs[1] .. ": dim " .. tostring(got.dim))
          ew_close(got:gather(), cs[3], label .. cs[1])
        end
      end
      -- a replicated operand with more dims: the result gains a leading dim and the split dim moves with it
      local a, c3 = R({7, 5}, dt), R({2, 7, 5}, dt)
      local u = ck.shard(a, {devices = D}) + ck.replicate(c3, D)
      assert(u.dim == 2, "broadcast to 3-D: split dim " .. tostring(u.dim))
      ew_close(u:gather(), a + c3, "s + replicated 2x7x5")
      local one = R({1, 5}, dt) -- size 1 along the split dim: used whole, broadcast
      ew_close(ck.shard(a, {devices = D}):mul(ck.replicate(one, D)):gather(), a:mul(one), "s:mul(replicated 1x5)")
      -- replicated with replicated stays replicated
      local r = ck.replicate(a, D) + ck.replicate(c3, D)
      assert(r.kind == "replicate", "replicated + replicated")
      ew_close(r:gather(ALL[k]), a + c3, "replicated + replicated")
      -- a map whose results do not keep the layout gives the list of parts
      local sums = ck.shard(a, {devices = D}):map(function(p) return p:sum() end)
      assert(getmetatable(sums) == nil and #sums == k, "map to 0-d results: a list")
      local total = 0
      for i, v in ipairs(sums) do assert(v:device() == D[i]); total = total + v:item() end
      assert(math.abs(total - a:sum():item()) <= sum_tol(a), "map sums")
    end)
  end
  check(("elementwise on i32, exactly: %d device(s)"):format(k), function()
    local D = devs(k)
    local a, b = R({7, 5}, "i32"), R({7, 5}, "i32")
    local s, t, r = ck.shard(a, {devices = D}), ck.shard(b, {devices = D}), ck.replicate(b, D)
    for _, cs in ipairs {{"s + t", s + t, a + b}, {"s * 3", s * 3, a * 3}, {"s - r", s - r, a - b},
                         {"s // 4", s // 4, a // 4}, {"s % 7", s % 7, a % 7}, {"-s", -s, -a}, {"s / 2", s / 2, a / 2},
                         {"s:abs()", s:abs(), a:abs()}, {"s:to('f64')", s:to("f64"), a:to("f64")}} do
      same(cs[2]:gather(), cs[3], "i32 " .. cs[1])
    end
  end)
end

-- ---------------------------------------------------------------- reductions

for _, k in ipairs(KS) do
  for _, dt in ipairs {"f32", "f64", "i32"} do
    check(("reductions with and without a dim, keepdim, against one device: %d device(s), %s"):format(k, dt), function()
      local D = devs(k)
      for _, c in ipairs {{{7, 5}, 1}, {{7, 5}, 2}, {{4, 6, 5}, 2}, {{5, 7}, 1, "transposed"}} do
        local a = dt == "i32" and R(c[1], dt, 3) or input(c, dt)
        if c[3] == "transposed" and dt == "i32" then a = R({5, 7}, dt, 3):transpose() end
        local s = ck.shard(a, {devices = D, dim = c[2]})
        local label = ("%s[%s] split along %d: "):format(dt, shp(a), c[2])
        for _, name in ipairs {"sum", "max", "min", "mean", "prod"} do
          if not (name == "mean" and dt == "i32") then
            local function cmp(got, ref, what, count)
              local tol = 0
              if name == "sum" or name == "mean" then tol = sum_tol(a) / (name == "mean" and count or 1) end
              close(got, ref, name == "prod" and 2 * a:numel() * EPS[dt] or 0, tol, label .. what)
            end
            if not (name == "prod" and dt == "i32") then
              local got = s[name](s)
              assert(ck.is_array(got) and got:device() == HOME and got:ndim() == 0, label .. name .. "(): a 0-d array on HOME")
              cmp(got, a[name](a), name .. "()", a:numel())
              cmp(ck[name](s), a[name](a), "ck." .. name .. "(s)", a:numel())
            end
            for d = 1, a:ndim() do
              for _, keep in ipairs {false, true} do
                local o = {keepdim = keep}
                local what = ("%s(%d, keepdim=%s)"):format(name, d, keep)
                local got, idx = s[name](s, d, o)
                local ref, ridx = a[name](a, d, o)
                if d == c[2] then
                  assert(ck.is_array(got) and got:device() == HOME, label .. what .. ": a plain array on HOME")
                else
                  assert(got.kind == "shard", label .. what .. ": a shard")
                  local want = (keep or d > c[2]) and c[2] or c[2] - 1
                  assert(got.dim == want, ("%s%s: split dim %s, expected %d"):format(label, what, tostring(got.dim), want))
                  got, idx = got:gather(), idx and idx:gather()
                end
                cmp(got, ref, what, a:shape()[d])
                if ridx then same(idx, ridx, label .. what .. " indices") end
              end
            end
            local got = s[name](s, -1)
            cmp(ck.is_array(got) and got or got:gather(), a[name](a, -1), name .. "(-1)", a:shape()[a:ndim()])
          end
        end
      end
    end)
  end
  check(("max and min along the split dim: ties go to the first occurrence across devices: %d device(s)"):format(k), function()
    local a = R({9, 4}, "i32", 1) -- values in {-1, 0, 1}: ties everywhere
    local s = ck.shard(a, {devices = devs(k)})
    for _, name in ipairs {"max", "min"} do
      local v, i = s[name](s, 1)
      local rv, ri = a[name](a, 1)
      same(v, rv, name .. " values")
      same(i, ri, name .. " indices")
    end
  end)
  check(("reductions of a replicated value: every copy reduced: %d device(s)"):format(k), function()
    local a = R({4, 5})
    local r = ck.replicate(a, devs(k))
    local got = r:sum(2)
    assert(got.kind == "replicate", "a replicated result")
    close(got:gather(ALL[k]), a:sum(2), 0, sum_tol(a), "sum(2)")
    close(ck.mean(r):gather(), a:mean(), 0, sum_tol(a), "ck.mean(r)")
    local v, i = r:max(1)
    same(v:gather(), (a:max(1)), "max values")
    same(i:gather(), select(2, a:max(1)), "max indices")
  end)
end

-- ---------------------------------------------------------------- matrix products

--- The tolerance of A @ B: 4 eps k max(|A| @ |B|).
local function mm_tol(A, B)
  local k = A:shape()[A:ndim()]
  return 4 * EPS[A:dtype()] * k * ck.matmul(A:abs(), B:abs()):max():item()
end

for _, k in ipairs(KS) do
  for _, dt in ipairs {"f32", "f64"} do
    check(("matmul: batch-, row- and column-sharded against replicated: %d device(s), %s"):format(k, dt), function()
      local D = devs(k)
      local cases = { -- left, its split dim (or "rep"), right, its split dim (or "rep"), the result's split dim
        {{5, 3, 4}, 1, {4, 2}, "rep", 1}, {{5, 3, 4}, 1, {5, 4, 2}, "rep", 1}, {{5, 3, 4}, 1, {1, 4, 2}, "rep", 1},
        {{5, 3, 4}, 1, {5, 4, 2}, 1, 1}, {{7, 4}, 1, {4, 3}, "rep", 1}, {{7, 4}, 1, {5, 4, 3}, "rep", 2},
        {{5, 7, 4}, 2, {4, 3}, "rep", 2}, {{3, 4}, "rep", {4, 6}, 2, 2}, {{3, 3, 4}, "rep", {3, 4, 5}, 1, 1},
        {{5, 3}, "rep", {4, 3, 7}, 3, 3},
      }
      for _, c in ipairs(cases) do
        local A, B = R(c[1], dt), R(c[3], dt)
        local function lay(x, d) return d == "rep" and ck.replicate(x, D) or ck.shard(x, {devices = D, dim = d}) end
        local x, y = lay(A, c[2]), lay(B, c[4])
        local label = ("[%s]%s @ [%s]%s"):format(shp(A), c[2], shp(B), c[4])
        local ref, tol = A * B, mm_tol(A, B)
        for _, got in ipairs {x * y, ck.matmul(x, y), x:matmul(y), ck.matmul(x, y, {precision = "exact"})} do
          assert(got.kind == "shard" and got.dim == c[5], ("%s: split dim %s, expected %d"):format(label, tostring(got.dim), c[5]))
          close(got:gather(), ref, 4 * EPS[dt], tol, label)
        end
      end
      -- a strided (transposed) input, and replicated @ replicated
      local At, B = R({4, 7}, dt):transpose(), R({4, 3}, dt)
      close((ck.shard(At, {devices = D}) * ck.replicate(B, D)):gather(), At * B, 4 * EPS[dt], mm_tol(At, B), "transposed")
      local rr = ck.replicate(At, D) * ck.replicate(B, D)
      assert(rr.kind == "replicate", "replicated @ replicated")
      close(rr:gather(ALL[k]), At * B, 4 * EPS[dt], mm_tol(At, B), "replicated @ replicated")
    end)
  end
end

-- ---------------------------------------------------------------- the rest of the methods

check("to, sync, free; plain arrays keep ck.sum / ck.matmul / operators as they were", function()
  local a = R({7, 5})
  local s = ck.shard(a, {devices = devs(#KS)})
  local d = s:to("f64")
  assert(d:dtype() == "f64" and d.dim == 1, "to f64")
  same(d:gather(), a:to("f64"), "to f64")
  s:sync()
  assert(ck.sum(a):item() == a:sum():item() and ck.matmul(a, a:transpose()):ndim() == 2, "plain ck.sum / ck.matmul")
  same(a + a, a * 2, "plain operators")
  s:free()
  raises(function() local _ = s:gather() end, "s:gather: the array was freed")
  raises(function() local _ = s + 1 end, "s %+ t: the left operand was freed")
  assert(tostring(s):find("^cukern%.shard %(freed%) over " .. ALL[1]), tostring(s))
end)

-- ---------------------------------------------------------------- errors

check("errors: bad arguments to ck.shard and ck.replicate, at the caller's line", function()
  local a = R({7, 5})
  local s = ck.shard(a, {devices = devs(1)})
  raises(function() local _ = ck.shard(a, {dim = 3}) end, "ck%.shard: dim out of range: 3 for a 2%-D array")
  raises(function() local _ = ck.shard(a, {dim = 0}) end, "ck%.shard: dim out of range")
  raises(function() local _ = ck.shard(a, {dim = 1.5}) end, "ck%.shard: option dim must be an integer")
  raises(function() local _ = ck.shard(a, {bogus = 1}) end, "ck%.shard: unknown option \"bogus\"")
  raises(function() local _ = ck.shard(a, {devices = {}}) end, "ck%.shard: devices must be a non%-empty list")
  raises(function() local _ = ck.shard(a, {devices = {HOME, HOME}}) end, "ck%.shard: device " .. HOME .. " is listed twice")
  raises(function() local _ = ck.shard(a, {devices = {"nowhere:0"}}) end, "ck%.shard: ")
  raises(function() local _ = ck.shard(a, {devices = {7}}) end, "ck%.shard: device 1 of the list must be a device name")
  raises(function() local _ = ck.shard(ck.scalar(2)) end, "ck%.shard: a 0%-d array has no dim")
  raises(function() local _ = ck.shard("x") end, "ck%.shard: argument 1 must be a cukern array")
  raises(function() local _ = ck.shard(s) end, "ck%.shard: the array is already spread over devices")
  raises(function() local _ = ck.shard(a, {}, 3) end, "ck%.shard: takes %(a, ")
  raises(function() local _ = ck.replicate(a, "host") end, "ck%.replicate: devices must be a non%-empty list")
  raises(function() local _ = ck.replicate(s) end, "ck%.replicate: the array is already spread")
  if #ALL >= 2 then
    local n = #ALL - 1
    raises(function() local _ = ck.shard(R({n, 3}), {devices = devs(#ALL)}) end,
      ("ck%%.shard: %d devices but dim 1 of f32%%[%dx3%%] on %s has only %d entries"):format(#ALL, n, HOME, n))
  end
end)

check("errors: mixed layouts, plain arrays, contracting dims, bad methods, at the caller's line", function()
  local k = #ALL >= 2 and 2 or 1
  local D = devs(k)
  local a, b = R({7, 5}), R({5, 3})
  local s, s2, r = ck.shard(a, {devices = D}), ck.shard(a, {devices = D, dim = 2}), ck.replicate(b, D)
  raises(function() local _ = s + s2 end, "s %+ t: mixed layouts: f32%[7x5%] split along dim 1 as .* and f32%[7x5%] split along dim 2")
  raises(function() local _ = s:add(ck.shard(R({6, 5}), {devices = D})) end, "s:add: mixed layouts")
  raises(function() local _ = s + a end, "s %+ t: the right operand is a plain array %(f32%[7x5%] on .*ck%.replicate%(x, devices%) it first")
  raises(function() local _ = a - s end, "s %- t: the left operand is a plain array")
  raises(function() local _ = s * a end, "s %* t: the right operand is a plain array")
  raises(function() local _ = a * s end, "s %* t: the left operand is a plain array")
  raises(function() local _ = ck.matmul(s, a) end, "ck%.matmul: the right operand is a plain array")
  raises(function() local _ = s:map(function(p, q) return p + q end, a) end, "s:map: argument 2 is a plain array")
  raises(function() local _ = s + "x" end, "s %+ t: the right operand must be a sharded or replicated array or a number")
  raises(function() local _ = s + ck.replicate(R({4, 5}), D) end, "s %+ t: the replicated operand .* does not match")
  raises(function() local _ = s2 * ck.replicate(R({5, 3}), D) end,
    "s %* t: the left operand is split along dim 2, the dim the product contracts %(its columns%); split it along its rows %(dim 1%)")
  raises(function() local _ = ck.matmul(s2, ck.replicate(R({5, 3}), D)) end, "ck%.matmul: the left operand is split along dim 2")
  raises(function() local _ = ck.shard(R({3, 4, 5}), {devices = D, dim = 3}):matmul(ck.replicate(R({5, 2}), D)) end,
    "s:matmul: the left operand is split along dim 3, .* or its batch dim")
  raises(function() local _ = ck.replicate(R({3, 7}), D) * s end, "s %* t: the right operand is split along dim 1, the dim the product contracts %(its rows%)")
  raises(function() local _ = s * ck.shard(R({5, 3}), {devices = D}) end, "s %* t: both operands are split")
  raises(function() local _ = s:matmul(2) end, "s:matmul: the right operand is a number")
  raises(function() local _ = s:sum(3) end, "s:sum: dim out of range: 3 for a 2%-D array")
  raises(function() local _ = ck.max(s, 0) end, "ck%.max: dim out of range")
  raises(function() local _ = s:mean({bogus = true}) end, "s:mean: unknown option \"bogus\"")
  raises(function() local _ = ck.sum("x") end, "ck%.sum: argument 1 must be a cukern array")
  raises(function() local _ = ck.shard(R({4, 3}, "i32"), {devices = D}):mean({keepdim = 3}) end, "s:mean: ")
  raises(function() local _ = s:item() end, "s:item: not defined for sharded or replicated arrays")
  raises(function() local _ = s:gather("nowhere:3") end, "s:gather: ")
  raises(function() local _ = s:to(HOME) end, "s:to: takes a dtype")
  raises(function() local _ = s.gather(a) end, "s:gather: call it as s:gather%(%.%.%.%) on a sharded or replicated array")
  raises(function() local _ = s:exp({out = a}) end, "s:exp: unknown option \"out\"")
  if k >= 2 then
    local rev = {D[2], D[1]}
    raises(function() local _ = s + ck.shard(a, {devices = rev}) end, "s %+ t: mixed layouts: .* over " .. D[2] .. ", " .. D[1])
    raises(function() local _ = s * ck.replicate(b, rev) end, "s %* t: mixed layouts")
    raises(function() local _ = s:sub(ck.replicate(a, {D[1]})) end, "s:sub: mixed layouts")
  end
end)

io.write("DONE ", count, "\n")
