--- cukern.errors: the one way cukern's Lua modules raise errors. A message reads
--   "<caller>:<line>: <public name>: <message>"     e.g. "train.lua:12: ck.sum: dim out of range: ..."
-- where <caller>:<line> is the user's line: the first frame that is neither C (pcall, a metamethod's C
-- caller) nor one of cukern's own Lua modules (every file in the folder this one was loaded from), and the
-- public name is the function as the user wrote it (`ck.sum`, `a:narrow`, `a + b`, `a[i]`).
-- Errors raised in C go through the C twin, ckl_raise_at_user (src/lua/lcukern.c): the same position, the
-- same frames skipped (its list of modules names every file here that raises or calls the core).
--
--   E.raise(msg)                 raise msg at the user's line
--   E.where_of(name)             registers a public name (so that clean strips it) and returns it
--   E.clean(e)                   a caught message without its position, "bad argument" wrapper and inner name
--   E.fail(where, e)             raise "where: " .. clean(e); an error that is not a string passes on untouched
--   E.call(where, f, ...)        f(...), any error re-raised by fail (what every public function wraps the core in)
--   E.guard(where, f)            f wrapped in call(where, ...), as a function
--   E.call_plain(where, f, ...)  as call, with the message kept as it is (io's messages start with a file name,
--                                which clean could take for a position or a name: "data:v2.npy: cannot open")
local E = {}

local type, error, pcall, tostring, getinfo = type, error, pcall, tostring, debug.getinfo

-- cukern's own modules are the files beside this one: their sources start with this folder and go no deeper
-- (a module is always found as .../cukern/<name>.lua, since it is required as cukern.<name>).
local DIR = debug.getinfo(1, "S").source:match("^(.*[/\\])[^/\\]*$") or "@"
local function own(source)
  return source:sub(1, #DIR) == DIR and not source:find("[/\\]", #DIR + 1)
end

--- Raise msg at the first frame outside cukern's Lua modules (C frames such as pcall are skipped too).
local function raise(msg)
  local level = 2
  while true do
    local info = getinfo(level, "Sl")
    if not info then error(msg, 0) end
    if info.what ~= "C" and info.currentline > 0 and not own(info.source) then error(msg, level) end
    level = level + 1
  end
end
E.raise = raise

-- The user-facing names errors are raised under (ck.sum, a:sum, a + b ...), so that a message that already
-- carries one (a public function used by another) is re-labelled, not labelled twice.
local WHERE = {}
function E.where_of(name) WHERE[name] = true; return name end

--- A core or Lua error message without its position and without the internal name it starts with:
-- "init.lua:12: bad argument #3 to 'reduce' (dim ...)" -> "dim ...", "user:3: add: shapes ..." -> "shapes ...",
-- "caller.lua:5: ck.map: unknown name 'z' ..." -> "unknown name 'z' ...", "u:2: a:to: no CUDA ..." -> "no CUDA ...".
local function clean(e)
  local pos_less = e:match("^[^\n:]*:%d+: (.*)$") or e:match("^%[string .-%]:%d+: (.*)$")
  e = pos_less or e
  e = e:match("^bad argument #%d+ to '[^']*' %((.*)%)$") or e
  local head, rest = e:match("^([^:]-): (.*)$")
  if head and (WHERE[head] or head:match("^[%w_]+$")) then return rest end
  head, rest = e:match("^(%a+:[%w_]+): (.*)$") -- a method's name (a:to, s:gather): registered ones only
  if head and WHERE[head] then return rest end
  return e
end
E.clean = clean

local function fail(where, e)
  if type(e) ~= "string" then error(e, 0) end -- not ours (e.g. an error object): pass it on untouched
  raise(where .. ": " .. clean(e))
end
E.fail = fail

local function finish(where, ok, ...)
  if ok then return ... end
  fail(where, (...))
end

--- f(...) with any error re-raised as "where: message" at the user's line.
local function call(where, f, ...) return finish(where, pcall(f, ...)) end
E.call = call

function E.guard(where, f) return function(...) return finish(where, pcall(f, ...)) end end

local function finish_plain(where, ok, ...)
  if ok then return ... end
  raise(where .. ": " .. tostring((...)))
end

function E.call_plain(where, f, ...) return finish_plain(where, pcall(f, ...)) end

return E
