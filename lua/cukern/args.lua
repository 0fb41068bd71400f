--- cukern.args: the argument checks of the public functions (creation, ops, indexing, ...). Each takes the
-- public name `where` and raises "where: <what was wrong>" at the user's line (cukern.errors); each returns
-- the value it checked. Also the options: which tables are options tables, the key sets, and check_opts
-- (through the one validator, lua/cukern/options.lua).
local core = require "cukern.core"
local raise = require("cukern.errors").raise
local options = require "cukern.options"

local A = {}
local MT = core.array_mt
local type, getmetatable, tointeger, next = type, getmetatable, math.tointeger, next
local fmt = string.format

local function is_array(x) return getmetatable(x) == MT end
A.is_array = is_array

--- The complex dtypes and the real dtype of their parts: the one table every module that treats complex arrays
-- apart reads (complex.lua, complex_fns.lua, assembly.lua, indexing.lua, linalg.lua, conv.lua, display.lua).
A.COMPLEX_PART = {c64 = "f32", c128 = "f64"}
--- a live complex array
function A.is_complex(x) return is_array(x) and not x:is_freed() and A.COMPLEX_PART[x:dtype()] ~= nil end

--- (a, dim, opts) or (a, opts): dim may be left out before an options table (reductions, scans, sorts)
function A.dim_opts(dim, opts)
  if type(dim) == "table" and opts == nil and not is_array(dim) then return nil, dim end
  return dim, opts
end

--- What a value is, for messages: numbers and strings show themselves.
local show = options.show
A.show = show

-- (Freed arrays are left to the core, which says "use of a freed array": these checks are on every op's path.)
local function check_array(where, x, what)
  if getmetatable(x) ~= MT then raise(fmt("%s: %s must be a cukern array, got %s", where, what, show(x))) end
  return x
end
A.check_array = check_array

function A.check_operand(where, x, what)
  if type(x) ~= "number" and getmetatable(x) ~= MT then
    raise(fmt("%s: %s must be a cukern array or a number, got %s", where, what, show(x)))
  end
  return x
end

function A.check_live(where, x, what)
  check_array(where, x, what)
  if x:is_freed() then raise(fmt("%s: %s is a freed array", where, what)) end
  return x
end

function A.check_number(where, x, what, default)
  if x == nil and default ~= nil then return default end
  if type(x) ~= "number" then raise(fmt("%s: %s must be a number, got %s", where, what, show(x))) end
  return x
end

function A.check_count(where, x, what)
  local v = type(x) == "number" and tointeger(x)
  if not v or v < 0 then raise(fmt("%s: %s must be an integer >= 0, got %s", where, what, show(x))) end
  return v
end

--- A 1-based dim of a (negative counts from the end); returns it as given (the core converts).
function A.check_dim(where, a, d, what)
  local v = type(d) == "number" and tointeger(d)
  if not v then raise(fmt("%s: %s must be an integer, got %s", where, what or "dim", show(d))) end
  local nd = a:ndim()
  if nd == 0 then raise(fmt("%s: %s is %d but a 0-d array has no dims", where, what or "dim", v)) end
  if v == 0 or v > nd or v < -nd then
    raise(fmt("%s: %s out of range: %d for a %d-D array (1..%d, or -%d..-1 from the end)", where, what or "dim",
      v, nd, nd, nd))
  end
  return v
end

-- ---------------------------------------------------------------- options

-- An options table is a table that is not a list (shape tables are lists). An empty table after other
-- arguments is an (empty) options table; alone it is an empty shape (a 0-d array).
local function is_opts(t) return type(t) == "table" and not is_array(t) and t[1] == nil and next(t) ~= nil end
A.is_opts = is_opts
function A.is_trailing_opts(t, n) return is_opts(t) or (n > 1 and type(t) == "table" and not is_array(t) and next(t) == nil) end

local opt_set = options.set
A.CREATE, A.OP, A.INPLACE = opt_set("dtype", "device", "pinned"), opt_set("variant", "out"), opt_set("variant")
A.QUANT, A.DEQUANT = opt_set("scale"), opt_set("dtype") -- ck.quantize, ck.dequantize (lua/cukern/fp8.lua)
-- matmul: f32 through the tensor cores' TF32 mode only when asked ({precision = "tf32"}), never silently
A.MATMUL, A.GEMM = opt_set("variant", "out", "precision", "scale_a", "scale_b"), opt_set("variant", "precision")
A.REDUCE, A.REDUCE_IDX = opt_set("keepdim", "variant", "out"), opt_set("keepdim", "variant", "out", "idx")
A.TEST = opt_set("keepdim") -- any, all, count_nonzero
local NONE = {}

--- Options table `opts` of a function that takes the keys in `allowed`: unknown keys and wrong types are errors.
function A.check_opts(where, opts, allowed)
  local problem = options.problem(where, opts, allowed)
  if problem then raise(where .. ": " .. problem) end
  return opts or NONE
end

return A
