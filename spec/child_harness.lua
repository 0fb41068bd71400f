--- The checks of a spec that runs in a child process (spec/*_child.lua: a process with its own environment, such
-- as CUKERN_HOST_DEVICES=N, or one rank of bin/ckrun). One line per check on stdout, which the parent spec turns
-- into one `it` each (spec/helpers.lua H.child_checks):
--   ok - <name>
--   not ok - <name><TAB><why, newlines as \n>
--   pending - <name><TAB><why>
--   done <failed count>          (last: the child reached its end)
-- T.finish() exits with status 1 when a check failed.
package.path = "./lua/?.lua;./lua/?/init.lua;./?.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath

local T = {failed = 0, passed = 0, prefix = ""}

local function esc(s) return (tostring(s):gsub("\\", "\\\\"):gsub("\n", "\\n"):gsub("\t", " ")) end

-- The traceback's lines in the child files only (where the check failed), after the message.
local function trace(err)
  local msg = type(err) == "string" and err or ("(error object) " .. tostring(err))
  local tb, lines = debug.traceback("", 2), {}
  for l in tb:gmatch("[^\n]+") do
    if l:find("_child%.lua:%d+") and not l:find("child_harness") then lines[#lines + 1] = l:gsub("^%s+", "") end
  end
  if #lines > 0 then msg = msg .. "\n  at " .. table.concat(lines, "\n  at ") end
  return msg
end

--- Runs fn(...) as the check `name`: it passes when fn returns without raising.
function T.check(name, fn, ...)
  name = T.prefix .. name
  local ok, err = xpcall(fn, trace, ...)
  if ok then
    T.passed = T.passed + 1
    io.write("ok - ", esc(name), "\n")
  else
    T.failed = T.failed + 1
    io.write("not ok - ", esc(name), "\t", esc(err), "\n")
  end
  io.flush()
  return ok
end

function T.pending(name, why)
  io.write("pending - ", esc(T.prefix .. name), "\t", esc(why), "\n")
  io.flush()
end

function T.finish()
  io.write("done ", T.failed, "\n")
  io.flush()
  os.exit(T.failed == 0 and 0 or 1)
end

-- ---------------------------------------------------------------- assertions (plain errors, level 2)

function T.eq(got, want, what)
  if got ~= want then
    error(("%sgot %s, expected %s"):format(what and (what .. ": ") or "", tostring(got), tostring(want)), 2)
  end
end

function T.ok(cond, what) if not cond then error(what or "assertion failed", 2) end end

--- f(...) must raise; every pattern (plain text, not a Lua pattern) must be in the message. Returns the message.
function T.raises(f, plains, ...)
  local ok, err = pcall(f, ...)
  if ok then error("expected an error, got none", 2) end
  err = tostring(err)
  for _, p in ipairs(type(plains) == "table" and plains or {plains}) do
    if not err:find(p, 1, true) then error(("expected %q in the error, got: %s"):format(p, err), 2) end
  end
  return err
end

--- Same as T.raises, with Lua patterns.
function T.raises_match(f, pats, ...)
  local ok, err = pcall(f, ...)
  if ok then error("expected an error, got none", 2) end
  err = tostring(err)
  for _, p in ipairs(type(pats) == "table" and pats or {pats}) do
    if not err:find(p) then error(("expected /%s/ in the error, got: %s"):format(p, err), 2) end
  end
  return err
end

--- Flat list of an array's values (row-major, any device, any view) as Lua numbers.
function T.flat(a)
  local out = {}
  local function walk(t)
    if type(t) ~= "table" then out[#out + 1] = t; return end
    for i = 1, #t do walk(t[i]) end
  end
  walk(a:totable())
  return out
end

--- Exact equality of two arrays' values (NaN equal to NaN), shapes included.
function T.same_values(got, want, what)
  local gs, ws = table.concat(got:shape(), "x"), table.concat(want:shape(), "x")
  if gs ~= ws then error(("%sshape %s, expected %s"):format(what and what .. ": " or "", gs, ws), 2) end
  local g, w = T.flat(got), T.flat(want)
  for i = 1, #w do
    if not (g[i] == w[i] or (g[i] ~= g[i] and w[i] ~= w[i])) then
      error(("%sflat index %d: got %.17g, expected %.17g"):format(what and what .. ": " or "", i, g[i], w[i]), 2)
    end
  end
end

return T
