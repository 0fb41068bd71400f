--- io reliability: hand-broken files and freed arrays must give a clear Lua error, raised at the caller's line,
-- naming the public function, the file (and the member or variable) and the problem: never a crash, never a
-- silent load. Each broken file starts as a valid one written by ck.save from fresh random values and is
-- then patched byte by byte; the unpatched (or harmlessly patched) files must still load exactly.
local H = require "spec.helpers"
local ck = H.ck

local HAVE = ck.io_formats()

-- ---------------------------------------------------------------- scratch directory and bytes

local DIR = os.tmpname()
os.remove(DIR)
assert(os.execute("mkdir -p '" .. DIR .. "'"))
local function P(name) return DIR .. "/" .. name end

local write_file = H.write_file

local read_file = H.read_file

--- s with every occurrence of `from` replaced by `to` (plain bytes, same length); fails unless found `count` times.
local function patch(s, from, to, count)
  assert(#from == #to)
  local out, n, at = {}, 0, 1
  while true do
    local i = s:find(from, at, true)
    if not i then break end
    out[#out + 1] = s:sub(at, i - 1) .. to
    at, n = i + #from, n + 1
  end
  out[#out + 1] = s:sub(at)
  assert(n == (count or 1), ("expected %d occurrence(s) of the bytes to patch, found %d"):format(count or 1, n))
  return table.concat(out)
end

local function i32le(...)
  local t = {}
  for i, v in ipairs{...} do t[i] = string.pack("<i4", v) end
  return table.concat(t)
end

-- A .mat dims sub-element as libmatio writes it (miINT32 tag, 8 bytes, two dims).
local function dims_elem(d1, d2) return i32le(5, 8, d1, d2) end

--- Call ck[fname](...) and expect an error raised at this file's line of the call, naming ck.<fname> and
-- holding every plain string in `wants`; returns the message.
local function refuses(wants, fname, ...)
  local line = debug.getinfo(1, "l").currentline + 1
  local ok, err = pcall(ck[fname], ...)
  assert.is_false(ok, "ck." .. fname .. " accepted it (seed " .. H.seed .. ")")
  err = tostring(err)
  local at = ("io_reliability_spec.lua:%d: ck.%s: "):format(line, fname)
  assert.truthy(err:find(at, 1, true), "not raised at the caller's line naming ck." .. fname .. ": " .. err)
  for _, w in ipairs(wants) do assert.truthy(err:find(w, 1, true), "missing '" .. w .. "' in: " .. err) end
  return err
end

-- A .npy with the given header dict (padded to 128 bytes as NumPy pads) and data bytes.
local function npy(dict, data)
  local body = dict .. string.rep(" ", 118 - #dict) .. "\n"
  return "\147NUMPY\1\0" .. string.char(#body % 256, #body // 256) .. body .. data
end

-- ---------------------------------------------------------------- .mat dims against the data

describe("io reliability: .mat dims must match the data", function()
  local function mat_cases(dtype, esize)
    local a = H.rand({3, 4}, dtype)
    local path = P("good_" .. dtype .. ".mat")
    ck.save(path, {A = a})
    return a, read_file(path), 12 * esize
  end

  for _, c in ipairs{{"f64", 8, "double"}, {"f32", 4, "single"}, {"i32", 4, "int32"}} do
    local dtype, esize, class = c[1], c[2], c[3]
    it("refuses a " .. class .. " variable whose dims were edited to 1x1, 0x(2^31-1), negative or overflowing", function()
      if not HAVE.mat then return pending("this build has no .mat support (libmatio)") end
      local a, s, bytes = mat_cases(dtype, esize)
      H.assert_equal(ck.load(P("good_" .. dtype .. ".mat")).A, a, "the unpatched file")
      local cases = {
        {"one", dims_elem(1, 1), "[1x1]"},
        {"zero", dims_elem(0, 2147483647), "[0x2147483647]"},
        {"neg", dims_elem(-1, 0), "[-1x0]"},
        {"neg2", dims_elem(-3, -4), "[-3x-4]"},
        {"huge", dims_elem(2147483647, 2147483647), "[2147483647x2147483647]"},
      }
      for _, k in ipairs(cases) do
        local path = P(k[1] .. "_" .. dtype .. ".mat")
        write_file(path, patch(s, dims_elem(3, 4), k[2]))
        refuses({path, "variable 'A'", k[3], bytes .. " bytes"}, "load", path)
      end
    end)
  end

  it("still loads a variable whose dims were changed to others of the same element count", function()
    if not HAVE.mat then return pending("this build has no .mat support (libmatio)") end
    local a, s = mat_cases("f64", 8)
    write_file(P("re.mat"), patch(s, dims_elem(3, 4), dims_elem(2, 6)))
    -- the data as stored is a's column-major order; as [2x6] column-major it is that order reshaped [6x2], transposed
    local colmajor = ck.array(a:t():contiguous():flat(), {dtype = "f64"})
    H.assert_equal(ck.load(P("re.mat")).A, colmajor:reshape(6, 2):t(), "dims [2x6]")
  end)

  it("names the variable among several, and loads none of them", function()
    if not HAVE.mat then return pending("this build has no .mat support (libmatio)") end
    local a, b = H.rand({3, 4}, "f64"), H.rand({5, 7}, "f32")
    ck.save(P("two.mat"), {A = a, B = b})
    local s = read_file(P("two.mat"))
    write_file(P("two_b.mat"), patch(s, dims_elem(5, 7), dims_elem(7, 7)))
    refuses({P("two_b.mat"), "variable 'B'", "[7x7]", "140 bytes"}, "load", P("two_b.mat"))
  end)

  it("refuses edited dims inside a compressed (-v7) variable too", function()
    if not HAVE.mat then return pending("this build has no .mat support (libmatio)") end
    local PY = os.execute("command -v python3 >/dev/null 2>&1") and "python3"
    if not PY then return pending("python3 (for zlib) is not installed here") end
    local a = H.rand({3, 4}, "f32")
    ck.save(P("z.mat"), {A = a}, {compress = true})
    H.assert_equal(ck.load(P("z.mat")).A, a, "the unpatched compressed file")
    -- inflate the one miCOMPRESSED element, patch its dims, deflate it again (zlib is in Python's stdlib)
    write_file(P("z.py"), ([[
import struct, sys, zlib
s = open(sys.argv[1], 'rb').read()
typ, n = struct.unpack('<II', s[128:136])
assert typ == 15, typ
raw = zlib.decompress(s[136:136 + n])
old = struct.pack('<4i', 5, 8, 3, 4)
assert raw.count(old) == 1
z = zlib.compress(raw.replace(old, struct.pack('<4i', 5, 8, int(sys.argv[3]), int(sys.argv[4]))))
open(sys.argv[2], 'wb').write(s[:128] + struct.pack('<II', 15, len(z)) + z + s[136 + n:])
]]))
    for _, d in ipairs{{1, 1}, {0, 2147483647}, {2, 6}} do
      local path = P(("z_%d_%d.mat"):format(d[1], d[2]))
      assert(os.execute(("%s '%s' '%s' '%s' %d %d"):format(PY, P("z.py"), P("z.mat"), path, d[1], d[2])))
      if d[1] * d[2] == 12 then
        local colmajor = ck.array(a:t():contiguous():flat(), {dtype = "f32"})
        H.assert_equal(ck.load(path).A, colmajor:reshape(6, 2):t(), "compressed, dims [2x6]")
      else
        refuses({path, "variable 'A'", ("[%dx%d]"):format(d[1], d[2]), "48 bytes"}, "load", path)
      end
    end
  end)

  it("refuses dims and name tags claiming gigabytes before libmatio allocates them", function()
    if not HAVE.mat then return pending("this build has no .mat support (libmatio)") end
    local a = H.rand({3, 4}, "f64")
    ck.save(P("big.mat"), {Longname = a})
    local s = read_file(P("big.mat"))
    H.assert_equal(ck.load(P("big.mat")).Longname, a, "the unpatched file")
    write_file(P("bigdims.mat"), patch(s, i32le(5, 8, 3, 4), i32le(5, 2147483640, 3, 4)))
    refuses({P("bigdims.mat"), "dims claim 2147483640 bytes"}, "load", P("bigdims.mat"))
    -- a name of more than 4 bytes has its own element: miINT8 tag, length, the name padded to 8
    write_file(P("bigname.mat"), patch(s, i32le(1, 8) .. "Longname", i32le(1, 2147483647) .. "Longname"))
    refuses({P("bigname.mat"), "name claims 2147483647 bytes"}, "load", P("bigname.mat"))
  end)
end)

-- ---------------------------------------------------------------- two arrays of one name

describe("io reliability: two arrays of one name", function()
  for _, compress in ipairs{false, true} do
    it("refuses an .npz archive holding two members of the same name" .. (compress and " (deflated)" or ""), function()
      if not HAVE.npz then return pending("this build has no .npz support (libzip)") end
      local a, b = H.rand({3, 5}, "f32"), H.rand({7}, "f64")
      ck.savez(P("two.npz"), {a = a, b = b}, {compress = compress})
      local t = ck.load(P("two.npz"))
      H.assert_equal(t.a, a, "the unpatched archive")
      H.assert_equal(t.b, b, "the unpatched archive")
      -- the name is in the local header and in the central directory; the CRCs cover only the data
      write_file(P("dup.npz"), patch(read_file(P("two.npz")), "b.npy", "a.npy", 2))
      refuses({P("dup.npz"), "member 'a.npy'", "twice"}, "load", P("dup.npz"))
    end)
  end

  it("refuses a .mat file holding two variables of the same name", function()
    if not HAVE.mat then return pending("this build has no .mat support (libmatio)") end
    local a, b = H.rand({2, 3}, "f64"), H.rand({4}, "i32")
    ck.save(P("dup.mat"), {A = a, B = b})
    -- a name of at most 4 bytes is a small data element: miINT8 (1), 1 byte, then the name padded to 4
    local s = patch(read_file(P("dup.mat")), "\1\0\1\0B\0\0\0", "\1\0\1\0A\0\0\0")
    write_file(P("dup2.mat"), s)
    refuses({P("dup2.mat"), "variable 'A'", "twice"}, "load", P("dup2.mat"))
  end)
end)

-- ---------------------------------------------------------------- .npy header text

describe("io reliability: .npy header text", function()
  it("refuses a NUL or other control byte inside the header's strings, naming the field", function()
    local a = H.rand({2}, "f32")
    local data = string.pack("<ff", table.unpack(a:flat()))
    write_file(P("ok.npy"), npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data))
    H.assert_equal(ck.load(P("ok.npy")), a, "the hand-made header")
    local cases = {
      {"nul.npy", "{'descr': '<f4\0', 'fortran_order': False, 'shape': (2,), }", "'descr'"},
      {"nul2.npy", "{'descr': '<f4\0junk', 'fortran_order': False, 'shape': (2,), }", "'descr'"},
      {"ctl.npy", "{'descr': '<f4\1', 'fortran_order': False, 'shape': (2,), }", "'descr'"},
      {"key.npy", "{'descr\0': '<f4', 'fortran_order': False, 'shape': (2,), }", "key"},
    }
    for _, c in ipairs(cases) do
      write_file(P(c[1]), npy(c[2], data))
      refuses({P(c[1]), "printable", c[3]}, "load", P(c[1]))
    end
    if HAVE.npz then -- the same header as an .npz member
      ck.savez(P("m.npz"), {m = a})
      local s = read_file(P("m.npz"))
      -- the member is stored, so its header lies in the archive as written; the header is refused before libzip
      -- reaches the member's end, where it would find the CRC no longer matches
      write_file(P("mnul.npz"), patch(s, "'descr': '<f4'", "'descr': '<f\0'"))
      refuses({P("mnul.npz"), "member 'm.npy'", "printable", "'descr'"}, "load", P("mnul.npz"))
    end
  end)
end)

-- ---------------------------------------------------------------- saving freed arrays

describe("io reliability: saving freed arrays", function()
  local function freed()
    local f = H.rand({2, 3}, "f32")
    f:free()
    return f
  end

  it("ck.save of a freed array to .npy names ck.save and says the array was freed", function()
    local a = H.rand({4, 3}, "f64")
    ck.save(P("keep.npy"), a)
    local err = refuses({P("keep.npy"), "freed"}, "save", P("keep.npy"), freed())
    assert.falsy(err:find("cukern.core", 1, true), err)
    assert.falsy(err:find("bad argument", 1, true), err)
    H.assert_equal(ck.load(P("keep.npy")), a, "the file the failed save left")
  end)

  it("a table of named arrays names the freed entry, for .npz and .mat, through ck.save and ck.savez", function()
    local a = H.rand({3}, "f32")
    for _, ext in ipairs{"npz", "mat"} do
      if HAVE[ext] then
        local path = P("f." .. ext)
        for _, fname in ipairs(ext == "npz" and {"save", "savez"} or {"save"}) do
          local err = refuses({path, "entry 'A' is a freed array"}, fname, path, {A = freed(), b = a})
          assert.falsy(err:find("not a name", 1, true), err)
          assert.falsy(err:find("entry 1", 1, true), err)
        end
      end
    end
    if HAVE.npz then -- a sequence is named as np.savez names it
      refuses({P("s.npz"), "entry 'arr_1' is a freed array"}, "savez", P("s.npz"), {a, freed()})
    end
    -- a key that is no name still says so
    refuses({P("k.npz"), "neither a name nor a positive integer"}, "save", P("k.npz"), {[2.5] = a})
  end)

  it("the binding keeps its not-a-name error for a list of names that holds no string", function()
    local a = H.rand({3}, "f32")
    local ok, err = pcall(ck.core.io_save_named, "npz", P("c.npz"), {7}, {a}, false)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("entry 1 is not a name", 1, true), tostring(err))
    ok, err = pcall(ck.core.io_save_named, "npz", P("c.npz"), {"x"}, {"y"}, false)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("entry 'x' is not a cukern array", 1, true), tostring(err))
  end)
end)

teardown(function() os.execute("rm -rf '" .. DIR .. "'") end)
