--- cukern.rows: softmax, normalisation and attention (issue 37) as functions and methods.
--   ck.softmax(a [, dim] [, {variant, out}])          and ck.log_softmax; a:softmax(...), a:log_softmax(...)
--   ck.layer_norm(x [, w [, b [, eps]]] [, {dim, variant, out}])   (x - mean) / sqrt(var + eps) * w + b, eps 1e-5
--   ck.rms_norm(x [, w [, eps]] [, {dim, variant, out}])          x / sqrt(mean(x^2) + eps) * w, eps 1e-6
--   ck.attention(q, k, v [, {causal, scale, mask, variant, out}])  softmax(q k^T * scale (+ mask)) v
-- dim defaults to the last (torch.softmax needs one; MATLAB's softmax works down columns). The norms normalise
-- along one dim (torch's layer_norm over the last, normalized_shape of one dim); w and b are vectors of that
-- length, nil for none. The core does the work (core.rows, core.attention: src/ops/op_rows.c, op_attn.c); here
-- are the names, the options and the messages.
local core = require "cukern.core"
local errors, args, options = require "cukern.errors", require "cukern.args", require "cukern.options"
local raise, fail, where_of = errors.raise, errors.fail, errors.where_of
local is_array, check_live, check_dim = args.is_array, args.check_live, args.check_dim

local R = {}
local type, pcall = type, pcall
local fmt = string.format
local M = core.methods
local core_rows, core_attention = core.rows, core.attention

local RULES = {
  causal = function(v) return type(v) == "boolean", "true or false" end,
  scale = function(v) return type(v) == "number" and v == v and v > -math.huge and v < math.huge, "a finite number" end,
  mask = function(v) return is_array(v) and not v:is_freed(), "a (live) bool or float cukern array" end,
  dim = function(v) return math.type(v) == "integer", "an integer" end,
}
local SOFTMAX = options.set("variant", "out")
local NORM = options.set("dim", "variant", "out")
local ATTENTION = options.set("causal", "scale", "mask", "variant", "out")
local NONE = {}

local function check_opts(where, opts, allowed)
  local problem = options.problem(where, opts, allowed, RULES)
  if problem then raise(where .. ": " .. problem) end
  return opts or NONE
end

local function explain(where, a, what, dim, e)
  check_live(where, a, what)
  if dim ~= nil then check_dim(where, a, dim) end
  fail(where, e)
end

local function softmax_fn(name, where, what)
  where_of(where)
  return function(a, dim, opts)
    dim, opts = args.dim_opts(dim, opts)
    local o = opts ~= nil and check_opts(where, opts, SOFTMAX) or NONE
    local ok, r = pcall(core_rows, name, a, dim, nil, nil, nil, o.variant, o.out)
    if ok then return r end
    explain(where, a, what, dim, r)
  end
end

-- An optional array argument (nil, or a cukern array), and an optional number.
local function opt_array(where, v, what)
  if v ~= nil and not is_array(v) then raise(fmt("%s: %s must be a cukern array or nil, got %s", where, what, options.show(v))) end
  return v
end
local function opt_eps(where, v, default)
  if v == nil then return default end
  if type(v) ~= "number" or not (v >= 0) then raise(fmt("%s: eps must be a number >= 0, got %s", where, options.show(v))) end
  return v
end

-- The options table is the last argument given, in any optional position: ck.layer_norm(x, {dim = 1}), (x, w, {..}).
local function split_opts(n, ...)
  local t = table.pack(...)
  local last = t.n
  while last > 0 and t[last] == nil do last = last - 1 end
  local o
  if last > 0 and type(t[last]) == "table" and not is_array(t[last]) then o, t[last] = t[last], nil end
  return o, table.unpack(t, 1, n)
end

-- layer_norm(x [, w [, b [, eps]]] [, opts]) and rms_norm(x [, w [, eps]] [, opts])
local function norm_fn(name, where, what, has_bias, default_eps)
  where_of(where)
  return function(x, ...)
    local opts, w, b, eps = split_opts(has_bias and 3 or 2, ...)
    if not has_bias then b, eps = nil, b end
    local o = check_opts(where, opts, NORM)
    opt_array(where, w, "the weight w")
    opt_array(where, b, "the bias b")
    eps = opt_eps(where, eps, default_eps)
    local ok, r = pcall(core_rows, name, x, o.dim, w, b, eps, o.variant, o.out)
    if ok then return r end
    explain(where, x, what, o.dim, r)
  end
end

local function attention_fn(where)
  where_of(where)
  return function(q, k, v, opts)
    local o = opts ~= nil and check_opts(where, opts, ATTENTION) or NONE
    local ok, r = pcall(core_attention, q, k, v, o.mask, o.causal, o.scale, o.variant, o.out)
    if ok then return r end
    check_live(where, q, "q")
    check_live(where, k, "k")
    check_live(where, v, "v")
    fail(where, r)
  end
end

function R.install(ck)
  for _, name in ipairs {"softmax", "log_softmax"} do
    ck[name] = softmax_fn(name, "ck." .. name, "argument 1")
    M[name] = softmax_fn(name, "a:" .. name, "the array")
  end
  for name, norm in pairs {layer_norm = {true, 1e-5}, rms_norm = {false, 1e-6}} do
    ck[name] = norm_fn(name, "ck." .. name, "argument 1", norm[1], norm[2])
    M[name] = norm_fn(name, "a:" .. name, "the array", norm[1], norm[2])
  end
  ck.attention = attention_fn("ck.attention")
end

return R
