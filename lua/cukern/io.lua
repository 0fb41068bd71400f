--- cukern.io: arrays to and from files (docs/io.md). The format follows the file's extension:
--   .npy  one array (NumPy)                 ck.save("a.npy", a)            ck.load("a.npy") -> a, info
--   .npz  named arrays (NumPy np.savez)     ck.savez("x.npz", {a = a})     ck.load("x.npz") -> {a = a}, infos
--   .mat  named arrays (Octave/MATLAB)      ck.save("x.mat", {A = a})      ck.load("x.mat") -> {A = a}, infos
-- Loading takes {device = "cuda"|"host"} (default: the default device); saving .npz/.mat takes
-- {compress = true | level 0..9} (zlib; .mat compresses at libmatio's one level whatever the number).
local M = {}

local core, is_array

local function ext_of(path) return (path:match("%.(%w+)$") or ""):lower() end

-- Errors are raised at the line that called ck.save/ck.load (cukern.errors). Core errors come as plain messages
-- naming the file, and keep their text as it is (call_plain).
local errors = require "cukern.errors"
local raise, call = errors.raise, errors.call_plain
local function fail(what, msg) raise(what .. ": " .. msg) end

local function check_path(what, path)
  if type(path) ~= "string" then fail(what, "bad argument #1 (file name expected, got " .. type(path) .. ")") end
end

local DEVICES = {cuda = true, gpu = true, host = true, cpu = true}

-- Options go through the one validator (lua/cukern/options.lua).
local options = require "cukern.options"
local function check_opts(what, opts, allowed)
  local problem = options.problem(what, opts, allowed)
  if problem then fail(what, problem) end
end
local LOAD_OPTS, SAVE_OPTS = options.set("device"), options.set("compress")

local function device_of(what, opts)
  check_opts(what, opts, LOAD_OPTS)
  if opts == nil then return nil end
  if opts.device ~= nil and not DEVICES[opts.device] then
    fail(what, ("unknown device '%s' (cuda, host)"):format(tostring(opts.device)))
  end
  return opts.device
end

-- opts.compress: true (zlib's default level, as np.savez_compressed), false, or a zlib level 0..9.
local function compress_of(what, opts)
  check_opts(what, opts, SAVE_OPTS) -- compress: true, false or a zlib level 0..9 (options.RULES)
  return opts and opts.compress or false
end

-- {name = array, ...} or {array, ...} (named arr_0, arr_1, ... as np.savez does) -> sorted names, arrays.
local function named(what, path, t)
  if type(t) ~= "table" or is_array(t) then
    fail(what, path .. ": expected a table of named arrays, {name = array, ...}, got " ..
      (is_array(t) and "one array" or type(t)))
  end
  local keys = {}
  for k, v in pairs(t) do
    if not is_array(v) then fail(what, ("%s: entry '%s' is a %s, not a cukern array"):format(path, tostring(k), type(v))) end
    if math.type(k) == "integer" and k >= 1 then keys[#keys + 1] = {name = "arr_" .. (k - 1), key = k}
    elseif type(k) == "string" then keys[#keys + 1] = {name = k, key = k}
    else fail(what, ("%s: key %s is neither a name nor a positive integer"):format(path, tostring(k))) end
  end
  table.sort(keys, function(x, y) return x.name < y.name end)
  local names, arrays = {}, {}
  for i, e in ipairs(keys) do
    if i > 1 and keys[i - 1].name == e.name then fail(what, path .. ": two arrays would both be named " .. e.name) end
    names[i], arrays[i] = e.name, t[e.key]
  end
  return names, arrays
end

local function unknown(what, path)
  fail(what, ("cannot tell the format of '%s' from its extension (.npy, .npz or .mat)"):format(path))
end

--- ck.save(path, a) for .npy; ck.save(path, {name = a, ...} [, {compress = true}]) for .npz and .mat.
function M.save(path, x, opts)
  check_path("ck.save", path)
  local ext = ext_of(path)
  local compress = compress_of("ck.save", opts)
  if ext == "npy" then
    if not is_array(x) then fail("ck.save", path .. ": .npy holds one array; got a " .. type(x) .. " (use .npz or .mat for several)") end
    call("ck.save", core.io_save_npy, path, x)
  elseif ext == "npz" or ext == "mat" then
    if ext == "npz" and is_array(x) then x = {x} end
    local names, arrays = named("ck.save", path, x)
    call("ck.save", core.io_save_named, ext, path, names, arrays, compress)
  else
    unknown("ck.save", path)
  end
end

--- ck.savez(path, {name = a, ...} [, {compress = true}]): NumPy's savez / savez_compressed.
function M.savez(path, t, opts)
  check_path("ck.savez", path)
  local names, arrays = named("ck.savez", path, t)
  call("ck.savez", core.io_save_named, "npz", path, names, arrays, compress_of("ck.savez", opts))
end

--- ck.load(path [, {device = "cuda"}]) -> array, info (.npy) or {name = array}, {name = info} (.npz, .mat).
function M.load(path, opts)
  check_path("ck.load", path)
  local ext, dev = ext_of(path), device_of("ck.load", opts)
  if ext == "npy" then return call("ck.load", core.io_load_npy, path, dev) end
  if ext == "npz" or ext == "mat" then return call("ck.load", core.io_load_named, ext, path, dev) end
  unknown("ck.load", path)
end

--- Which formats this build reads and writes: {npy = true, npz = bool, mat = bool}.
function M.formats() return core.io_formats() end

function M.install(ck)
  core, is_array = ck.core, ck.is_array
  ck.save, ck.savez, ck.load, ck.io_formats = M.save, M.savez, M.load, M.formats
  return ck
end

return M
