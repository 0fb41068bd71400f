--- cukern.operators: the array metatable's operators.
-- MATLAB conventions: * is the matrix product (a number on either side scales), the rest are elementwise.
-- Lua 5.4 semantics: / always gives a float result (an i32 array gives f64, as NumPy's true divide), // is
-- floor division and % the modulo with the divisor's sign (Lua's rules); & | ~ << >> are elementwise bit
-- operations on integer and bool arrays; ==, <, <= and .. cannot be elementwise in Lua (see docs/api.md):
-- use a:eq(b), a:lt(b), ... (bool arrays) and ck.equal(a, b).
-- Operators run the core first and check their operands only when it fails (as the ops in ops.lua do).
local core = require "cukern.core"
local errors, args, ops = require "cukern.errors", require "cukern.args", require "cukern.ops"
local raise, fail, where_of = errors.raise, errors.fail, errors.where_of
local check_array, check_operand, check_live = args.check_array, args.check_operand, args.check_live
local EW_ID, pow, complex_of = ops.EW_ID, ops.pow, ops.complex_of

local P = {}
local type, pcall, pairs = type, pcall, pairs
local M, MT = core.methods, core.array_mt
local core_matmul, core_unary, core_binary = core.matmul, core.unary, core.binary

local function operands(where, a, b)
  check_operand(where, a, "the left operand")
  check_operand(where, b, "the right operand")
end

local function binop(name, where)
  where_of(where)
  local id = EW_ID[name]
  return function(a, b)
    local ok, r = pcall(core_binary, id, a, b)
    if ok then return r end
    local cx = complex_of(a, b)
    if cx then return cx.binary(where, name, a, b) end
    operands(where, a, b)
    fail(where, r)
  end
end

local function unop(name, where)
  where_of(where)
  local id = EW_ID[name]
  return function(a)
    local ok, r = pcall(core_unary, id, a)
    if ok then return r end
    local cx = complex_of(a)
    if cx then return cx.unary(where, name, a) end
    check_array(where, a, "the operand")
    fail(where, r)
  end
end

local function refuse(where, why) where_of(where); return function() raise(where .. ": " .. why) end end

function P.install(ck)
  MT.__add = binop("add", "a + b")
  MT.__sub = binop("sub", "a - b")
  MT.__idiv = binop("idiv", "a // b")
  MT.__mod = binop("mod", "a % b")

  do
    local where = where_of("a / b")
    local dtype, EW_DIV = M.dtype, EW_ID.div
    -- An integer (or bool) array divided by a number or another integer array divides in f64 (with a float
    -- array, the core promotes the integer side to that float dtype).
    local FLOAT = {f32 = true, f64 = true, f16 = true, bf16 = true, c64 = true, c128 = true} -- (complex: not cast)
    local function div(a, b)
      local da = type(a) ~= "number" and dtype(a)
      local db = type(b) ~= "number" and dtype(b)
      if not FLOAT[da] and not FLOAT[db] then
        if da then a = a:to("f64") end
        if db then b = b:to("f64") end
      end
      return core_binary(EW_DIV, a, b)
    end
    MT.__div = function(a, b)
      local ok, r = pcall(div, a, b)
      if ok then return r end
      local cx = complex_of(a, b)
      if cx then return cx.binary(where, "div", a, b) end
      operands(where, a, b)
      if type(a) ~= "number" then check_live(where, a, "the left operand") end
      if type(b) ~= "number" then check_live(where, b, "the right operand") end
      fail(where, r)
    end
  end

  MT.__unm = unop("neg", "-a")

  do
    local where = where_of("a ^ b")
    MT.__pow = function(a, b) return pow(where, a, b) end
  end

  do
    local where = where_of("a * b")
    local EW_MUL = EW_ID.mul
    local function mul(a, b)
      if type(a) == "number" or type(b) == "number" then return core_binary(EW_MUL, a, b) end
      return core_matmul(a, b)
    end
    MT.__mul = function(a, b)
      local ok, r = pcall(mul, a, b)
      if ok then return r end
      local cx = complex_of(a, b)
      if cx then
        if type(a) == "number" or type(b) == "number" then return cx.binary(where, "mul", a, b) end
        return cx.matmul(where, a, b)
      end
      operands(where, a, b)
      fail(where, r)
    end
  end

  MT.__eq = nil -- arrays compare by identity; ck.equal(a, b) compares values, a:eq(b) elementwise

  MT.__lt = refuse("a < b", "Lua turns the result of < into one boolean, so it cannot compare elementwise; " ..
    "use a:lt(b) (a bool array: true where a < b), or ck.equal / ck.allclose for whole arrays")
  MT.__le = refuse("a <= b", "Lua turns the result of <= into one boolean, so it cannot compare elementwise; " ..
    "use a:le(b) (a bool array: true where a <= b)")
  MT.__concat = refuse("a .. b", "`..` joins strings and is not defined for arrays; for text use " ..
    "tostring(a) .. s; to join arrays copy them into views: c[{{1, n}}] = a")
  -- Lua 5.4's bitwise operators, elementwise on integer and bool arrays (issue 32); floats are an error
  MT.__band = binop("bitand", "a & b")
  MT.__bor = binop("bitor", "a | b")
  MT.__bxor = binop("bitxor", "a ~ b")
  MT.__shl = binop("lshift", "a << b")
  MT.__shr = binop("rshift", "a >> b")
  MT.__bnot = unop("bitnot", "~a")
  return ck
end

return P
