--- cukern.ops: the ops as functions and methods: ck.matmul, ck.gemm, ck.transpose, the reductions (ck.sum ...,
-- a:sum ...), the elementwise ops the core lists (ck.<op>, a:<op>, a:<op>_), ck.pow, ck.clamp, and the
-- whole-array comparisons ck.equal and ck.allclose. The operators (lua/cukern/operators.lua) use EW_ID and pow.
local core = require "cukern.core"
local errors, args = require "cukern.errors", require "cukern.args"
local raise, call, fail, where_of = errors.raise, errors.call, errors.fail, errors.where_of
local is_array, is_opts, check_opts = args.is_array, args.is_opts, args.check_opts
local check_array, check_operand, check_live = args.check_array, args.check_operand, args.check_live
local check_number, check_dim, show = args.check_number, args.check_dim, args.show
local OP, INPLACE, MATMUL, GEMM, REDUCE, REDUCE_IDX = args.OP, args.INPLACE, args.MATMUL, args.GEMM, args.REDUCE,
  args.REDUCE_IDX

local O = {}
local type, pcall, ipairs = type, pcall, ipairs
local fmt = string.format
local M = core.methods

-- The ops used in loops (matmul, reductions, elementwise, operators) call the core first and check their
-- arguments only when it fails, to say precisely what was wrong: a successful call costs one pcall more than
-- calling the core directly. Options are checked before (only when given): the core ignores unknown keys.
local core_matmul, core_reduce, core_unary, core_binary = core.matmul, core.reduce, core.unary, core.binary

-- The core takes an op by name or by id (its row in core.ew_ops(), from 0); the functions made here pass
-- the id, which costs the core no string compares.
local EW_ID = {}
for i, op in ipairs(core.ew_ops()) do EW_ID[op.name] = i - 1 end
O.EW_ID = EW_ID

-- Complex operands (issue 35): the real ladders take real dtypes; when the core refuses a call and an operand is
-- complex, lua/cukern/complex.lua (which sets O.complex) runs it (the fused complex ops, core.complex_op).
local function complex_of(a, b)
  local h = O.complex
  if h and (h.is_complex(a) or h.is_complex(b)) then return h end
end
O.complex_of = complex_of

local function unary_fn(name, where, inplace)
  where_of(where)
  local id = EW_ID[name]
  local what = where:match("^a:") and "the array" or "argument 1"
  local allowed = inplace and INPLACE or OP
  return function(a, opts)
    local out, variant
    if opts ~= nil then opts = check_opts(where, opts, allowed); out, variant = opts.out, opts.variant end
    if inplace then out = a end
    local ok, r = pcall(core_unary, id, a, out, 0, 0, variant)
    if ok then return r end
    local cx = complex_of(a)
    if cx then return cx.unary(where, name, a, out) end
    check_array(where, a, what)
    fail(where, r)
  end
end

local function binary_fn(name, where, inplace)
  where_of(where)
  local id = EW_ID[name]
  local method = where:match("^a:") ~= nil
  local what1, what2 = method and "the array" or "argument 1", method and "argument 1" or "argument 2"
  local allowed = inplace and INPLACE or OP
  return function(a, b, opts)
    local out, variant
    if opts ~= nil then opts = check_opts(where, opts, allowed); out, variant = opts.out, opts.variant end
    if inplace then out = a end
    local ok, r = pcall(core_binary, id, a, b, out, variant)
    if ok then return r end
    local cx = complex_of(a, b)
    if cx then return cx.binary(where, name, a, b, out) end
    if method then check_array(where, a, what1) else check_operand(where, a, what1) end
    check_operand(where, b, what2)
    if type(a) == "number" and type(b) == "number" then
      raise(fmt("%s: at least one operand must be a cukern array (both are numbers)", where))
    end
    fail(where, r)
  end
end

--- pow(a, b): b a number (a .^ s) or an array (elementwise, broadcast).
local function pow(where, a, b, opts)
  check_operand(where, a, "argument 1")
  check_operand(where, b, "argument 2")
  if type(a) == "number" and type(b) == "number" then
    raise(fmt("%s: at least one operand must be a cukern array (both are numbers)", where))
  end
  opts = check_opts(where, opts, OP)
  local cx = complex_of(a, b)
  if cx then
    if type(b) == "number" then return cx.unary(where, "pows", a, opts.out, b) end
    return cx.binary(where, "pow", a, b, opts.out)
  end
  if type(b) == "number" then return call(where, core.unary, "pows", a, opts.out, b, 0, opts.variant) end
  return call(where, core.binary, "pow", a, b, opts.out, opts.variant)
end
O.pow = pow

-- Both bounds are required (-math.huge / math.huge leave a side open; ck.maximum / ck.minimum take one), and
-- a NaN bound is an error: it would bound nothing.
local function clamp(where, a, lo, hi, out, variant)
  for _, b in ipairs {{"lo", lo}, {"hi", hi}} do
    local v = b[2]
    if type(v) ~= "number" then
      raise(fmt("%s: %s must be a number, got %s (both bounds are needed; use -math.huge or math.huge for an " ..
        "open side, or ck.maximum / ck.minimum)", where, b[1], show(v)))
    end
    if v ~= v then raise(fmt("%s: %s is NaN; a bound must be a number or +-math.huge", where, b[1])) end
  end
  return call(where, core.unary, "clamp", a, out, lo, hi, variant)
end

function O.install(ck)
  do
    local where = where_of("ck.matmul")
    --- matmul(a, b [, {out, variant, precision, scale_a, scale_b}]): FP8 operands' per-tensor scales multiply
    -- the product (they fold into alpha: (sa A)(sb B) = sa sb AB)
    function ck.matmul(a, b, opts)
      local out, variant, precision, alpha = nil, nil, nil, 1
      if opts ~= nil then
        opts = check_opts(where, opts, MATMUL); out, variant, precision = opts.out, opts.variant, opts.precision
        alpha = (opts.scale_a or 1) * (opts.scale_b or 1)
      end
      local ok, r = pcall(core_matmul, a, b, out, alpha, 0, variant, precision)
      if ok then return r end
      local cx = complex_of(a, b)
      if cx then return cx.matmul(where, a, b, out, variant) end
      check_array(where, a, "argument 1 (a)")
      check_array(where, b, "argument 2 (b)")
      fail(where, r)
    end
  end

  do
    local where = where_of("ck.gemm")
    --- gemm(c, a, b [, alpha = 1 [, beta = 0]] [, opts]): c = alpha * a @ b + beta * c, in place.
    function ck.gemm(c, a, b, alpha, beta, opts)
      if is_opts(alpha) then alpha, beta, opts = nil, nil, alpha elseif is_opts(beta) then beta, opts = nil, beta end
      if c == nil then raise(where .. ": argument 1 (c) must be the output array (updated in place), got nil; use ck.matmul(a, b) for a new array") end
      check_array(where, c, "argument 1 (c)")
      check_array(where, a, "argument 2 (a)")
      check_array(where, b, "argument 3 (b)")
      alpha = check_number(where, alpha, "alpha", 1)
      beta = check_number(where, beta, "beta", 0)
      opts = check_opts(where, opts, GEMM)
      return call(where, core.matmul, a, b, c, alpha, beta, opts.variant, opts.precision)
    end
  end

  do
    local where = where_of("ck.transpose")
    function ck.transpose(a, opts)
      check_array(where, a, "argument 1")
      opts = check_opts(where, opts, OP)
      return call(where, core.transpose, a, opts.out, opts.variant)
    end
  end

  -- Reductions, one per row of the core's table (kernels/reduce/reduce_ops.def, core.reduce_ops()):
  -- ck.sum(a [, dim] [, opts]); max/min with a dim return values and 1-based indices.
  for _, op in ipairs(core.reduce_ops()) do
    local name = op.name
    local arg = op.indexed -- argmax, argmin: the result is the indices
    local want_idx = op.gives_indices and not arg -- max, min
    local allowed = want_idx and REDUCE_IDX or REDUCE
    local function make(where, what)
      where_of(where)
      return function(a, dim, opts)
        dim, opts = args.dim_opts(dim, opts)
        local keepdim, variant, out, idx
        if opts ~= nil then
          opts = check_opts(where, opts, allowed)
          keepdim, variant, out, idx = opts.keepdim, opts.variant, opts.out, opts.idx
          if idx and dim == nil then
            raise(fmt("%s: option idx needs a dim (without one, %s reduces everything and gives no indices)", where, name))
          end
          if out and idx and out:storage_id() == idx:storage_id() then
            raise(where .. ": options out and idx must be different arrays")
          end
          if arg then out, idx = nil, out end -- argmax's result is the index array
        end
        local two = want_idx and dim ~= nil -- values and indices
        local ok, r1, r2 = pcall(core_reduce, name, a, dim, keepdim, variant, two, out, idx)
        if ok then
          if two then return r1, r2 end
          return r1
        end
        local cx = complex_of(a)
        if cx then return cx.reduce(where, name, a, dim, keepdim, out) end
        check_live(where, a, what)
        if dim ~= nil then check_dim(where, a, dim) end
        fail(where, r1)
      end
    end
    ck[name] = make("ck." .. name, "argument 1")
    M[name] = make("a:" .. name, "the array")
  end

  -- Truth tests (issue 32; MATLAB any/all/nnz, NumPy any/all/count_nonzero), with an optional dim: the count
  -- of nonzero elements (NaN counts, as in NumPy) is a sum of the bool a ~= 0 (i64); any is count > 0 and all
  -- is count == the number reduced, so empty reductions give false and true as in NumPy.
  for _, name in ipairs {"any", "all", "count_nonzero"} do
    local function make(where, what)
      where_of(where)
      local NE, GT, EQ = EW_ID.ne, EW_ID.gt, EW_ID.eq
      local function run(a, dim, keepdim)
        local nz = M.dtype(a) == "bool" and a or core_binary(NE, a, 0)
        local count = core_reduce("sum", nz, dim, keepdim, nil, false, nil, nil)
        if name == "count_nonzero" then return count end
        if name == "any" then return core_binary(GT, count, 0) end
        local n = dim == nil and a:numel() or a:shape()[dim < 0 and a:ndim() + 1 + dim or dim]
        return core_binary(EQ, count, n)
      end
      return function(a, dim, opts)
        dim, opts = args.dim_opts(dim, opts)
        local keepdim
        if opts ~= nil then keepdim = check_opts(where, opts, args.TEST).keepdim end
        local ok, r = pcall(run, a, dim, keepdim)
        if ok then return r end
        check_live(where, a, what)
        if dim ~= nil then check_dim(where, a, dim) end
        fail(where, r)
      end
    end
    ck[name] = make("ck." .. name, "argument 1")
    M[name] = make("a:" .. name, "the array")
  end

  -- Elementwise: functions, methods and in-place methods for every op the core lists (core.ew_ops()).
  ck.unary_ops, ck.binary_ops = {}, {}
  for _, op in ipairs(core.ew_ops()) do
    local name = op.name
    local make = op.lua == "unary" and unary_fn or op.lua == "binary" and binary_fn or nil
    if make then
      local list = op.lua == "unary" and ck.unary_ops or ck.binary_ops
      list[#list + 1] = name
      ck[name] = make(name, "ck." .. name)
      M[name] = make(name, "a:" .. name)
      M[name .. "_"] = make(name, "a:" .. name .. "_", true)
    end
  end

  -- a:sub(b) is subtraction like a:add(b); slicing is a:slice{...} or a[{...}] (a:sub{...} was slicing once).
  do
    local where, sub = "a:sub", M.sub
    function M.sub(a, b, ...)
      if type(b) == "table" and not is_array(b) then
        raise(where .. ": a:sub(b) subtracts (like a:add, a:mul); to take a part of an array use a:slice{...} or a[{...}]")
      end
      return sub(a, b, ...)
    end
  end

  do
    local where = where_of("ck.pow")
    function ck.pow(a, b, opts) return pow(where, a, b, opts) end
    local mwhere, iwhere = where_of("a:pow"), where_of("a:pow_")
    function M.pow(a, b, opts) check_array(mwhere, a, "the array"); return pow(mwhere, a, b, opts) end
    function M.pow_(a, b, opts)
      check_array(iwhere, a, "the array")
      check_operand(iwhere, b, "argument 1")
      opts = check_opts(iwhere, opts, INPLACE)
      if type(b) == "number" then return call(iwhere, core.unary, "pows", a, a, b, 0, opts.variant) end
      return call(iwhere, core.binary, "pow", a, b, a, opts.variant)
    end
  end

  do
    local where, mwhere, iwhere = where_of("ck.clamp"), where_of("a:clamp"), where_of("a:clamp_")
    function ck.clamp(a, lo, hi, opts)
      check_array(where, a, "argument 1")
      opts = check_opts(where, opts, OP)
      return clamp(where, a, lo, hi, opts.out, opts.variant)
    end
    function M.clamp(a, lo, hi, opts)
      check_array(mwhere, a, "the array")
      opts = check_opts(mwhere, opts, OP)
      return clamp(mwhere, a, lo, hi, opts.out, opts.variant)
    end
    function M.clamp_(a, lo, hi, opts)
      check_array(iwhere, a, "the array")
      opts = check_opts(iwhere, opts, INPLACE)
      return clamp(iwhere, a, lo, hi, a, opts.variant)
    end
  end

  -- whole-array comparisons
  do
    local where = where_of("ck.equal")
    --- equal(a, b) -> true when a and b have the same shape and equal values (NaN is not equal to NaN, as in
    -- NumPy's array_equal); dtypes and devices may differ.
    function ck.equal(a, b)
      check_live(where, a, "argument 1")
      check_live(where, b, "argument 2")
      local sa, sb = a:shape(), b:shape()
      if #sa ~= #sb then return false end
      for i = 1, #sa do if sa[i] ~= sb[i] then return false end end
      if a:numel() == 0 then return true end
      if b:device() ~= a:device() then b = call(where, b.to, b, a:device()) end
      return call(where, core.reduce, "max", call(where, core.binary, "ne", a, b)):item() == false
    end
  end

  do
    local where = where_of("ck.allclose")
    --- allclose(a, b [, rtol = 1e-5 [, atol = 1e-8]]) -> true when |a - b| <= atol + rtol * |b| everywhere
    -- (NumPy's rule and defaults; b may be a number or broadcast; NaN is never close; equal infinities are).
    function ck.allclose(a, b, rtol, atol)
      check_live(where, a, "argument 1")
      check_operand(where, b, "argument 2")
      rtol = check_number(where, rtol, "rtol", 1e-5)
      atol = check_number(where, atol, "atol", 1e-8)
      if rtol < 0 or atol < 0 then raise(where .. ": rtol and atol must be >= 0") end
      local fa = call(where, a.to, a, "f64")
      local fb = b
      if is_array(b) then
        fb = call(where, b.to, b, a:device(), "f64")
      end
      local diff = call(where, core.unary, "abs", call(where, core.binary, "sub", fa, fb))
      local tol = type(fb) == "number" and atol + rtol * math.abs(fb)
        or call(where, core.binary, "add", call(where, core.binary, "mul", call(where, core.unary, "abs", fb), rtol), atol)
      local ok = call(where, core.binary, "logical_or", call(where, core.binary, "le", diff, tol),
        call(where, core.binary, "eq", fa, fb))
      if ok:numel() == 0 then return true end
      return call(where, core.reduce, "min", ok):item() == true
    end
  end
  return ck
end

return O
