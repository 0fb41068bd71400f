--- io: ck.save / ck.savez / ck.load (.npy, .npz, .mat) against NumPy and GNU Octave themselves.
-- NumPy writes files of every dtype, byte order, order and format version that cukern loads, and loads and
-- checks what cukern saves; Octave loads a .mat cukern saved, computes on it, saves -v6 and -v7, and cukern
-- checks the results. Reference values cross as text (%.17g / repr), never through the code under test.
-- Fresh random inputs each run (the seed is in every failure), awkward shapes (0, 1, primes, up to 5-D),
-- views (transposed, sliced, permuted) and device arrays (GPU cases pending where there is no GPU).
-- Bad files (fuzzed headers, truncations, wrong types) must give a Lua error naming the file.
local H = require "spec.helpers"
local ck = H.ck

local gpu = H.gpu

-- ---------------------------------------------------------------- scratch directory and programs

local DIR = os.tmpname()
os.remove(DIR)
assert(os.execute("mkdir -p '" .. DIR .. "'"))
local function P(name) return DIR .. "/" .. name end

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

local write_file = H.write_file

local read_file = H.read_file

local function listdir() local _, out = sh("ls -A '" .. DIR .. "'"); return out end

-- Debian's python3 (python3-numpy) first: a python3 earlier on PATH may lack NumPy.
local PYTHON
for _, cand in ipairs{"/usr/bin/python3", "python3"} do
  if not PYTHON and sh(cand .. " -c 'import numpy'") then PYTHON = cand end
end
local OCTAVE = sh("command -v octave-cli") and "octave-cli" or (sh("command -v octave") and "octave" or nil)
local HAVE = ck.io_formats()

local function needs(what, have, fn)
  return function(...)
    if not have then
      return pending(what .. " is not installed here (`make test` installs it from Debian where apt-get works)")
    end
    return fn(...)
  end
end

local PY_PRELUDE = [[
import sys, os, numpy as np
os.chdir(sys.argv[1])
rng = np.random.default_rng(int(sys.argv[2]))
def lua_dump(path, arrays):
    with open(path, 'w') as f:
        f.write('return {\n')
        for k, a in arrays.items():
            flat = np.ascontiguousarray(a).reshape(-1)
            if a.dtype.kind in 'fc':
                vals = ','.join(repr(float(x)) for x in flat)
            else:
                vals = ','.join(str(int(x)) for x in flat)
            f.write('[%r]={shape={%s},values={%s}},\n' % (k, ','.join(map(str, a.shape)), vals))
        f.write('}\n')
def read_ref(path):
    lines = open(path).read().split('\n')
    dt, order = lines[0].split()
    shape = tuple(int(x) for x in lines[1].split())
    vals = np.array([float(x) for x in lines[2:] if x], dtype=np.float64).reshape(shape)
    return dt, order, shape, vals
DT = {'f32': np.float32, 'f64': np.float64, 'i32': np.int32}
def check(a, ref_path, label):
    dt, order, shape, vals = read_ref(ref_path)
    assert a.dtype == DT[dt], '%s: dtype %s, expected %s' % (label, a.dtype, dt)
    assert a.shape == shape, '%s: shape %s, expected %s' % (label, a.shape, shape)
    assert np.array_equal(a.astype(np.float64), vals), '%s: values differ:\n%s\nexpected\n%s' % (label, a, vals)
    if order == 'F':
        assert np.isfortran(a), '%s: expected a Fortran-order array' % label
]]

-- Run a Python script (after the prelude) in DIR with the spec's seed; fails the spec on a non-zero exit.
local function python(body)
  write_file(P("script.py"), PY_PRELUDE .. body)
  local ok, out = sh(("%s '%s' '%s' %d"):format(PYTHON, P("script.py"), DIR, H.seed % 2 ^ 31))
  assert(ok, "python3 failed (seed " .. H.seed .. "):\n" .. out)
  return out
end

local function octave(body)
  write_file(P("script.m"), body)
  local ok, out = sh(("cd '%s' && %s --no-gui -q --norc script.m"):format(DIR, OCTAVE))
  -- octave-cli 7 may print a spurious exception note at exit: the script's "OCTAVE-DONE" line decides.
  assert(out:find("OCTAVE%-DONE"), "octave failed (seed " .. H.seed .. ", exit ok " .. tostring(ok) .. "):\n" .. out)
  return out
end

-- A reference array from a Lua literal dumped by Python or Octave: {shape = {...}, values = {...}} (C order).
local function from_dump(e, dtype)
  if #e.shape == 0 then return ck.scalar(e.values[1], {dtype = dtype}) end
  return ck.array(e.values, {dtype = dtype}):reshape(e.shape)
end

-- Values of a as text for Python's read_ref: "dtype order", the shape, then one value per line.
local function write_ref(path, a, order)
  local lines = {a:dtype() .. " " .. order, table.concat(a:shape(), " ")}
  for _, v in ipairs(a:to("host"):flat()) do lines[#lines + 1] = ("%.17g"):format(v) end
  write_file(path, table.concat(lines, "\n") .. "\n")
end

local function rev(s) local r = {} for i = #s, 1, -1 do r[#r + 1] = s[i] end return r end
local function sstr(s) return "[" .. table.concat(s, "x") .. "]" end
local function numel(s) local n = 1 for _, d in ipairs(s) do n = n * d end return n end

-- ---------------------------------------------------------------- arrays to save: shapes x views

local SHAPES = {{}, {0}, {1}, {13}, {1, 1}, {3, 5}, {0, 4}, {7, 1}, {2, 3, 5}, {2, 1, 3, 1, 5}, {31, 17}}
local DTYPES = {"f32", "f64", "i32"}

--- The array of logical shape `shape` as a view of the given kind; "F" when it lies column-major.
local function make(kind, shape, dtype, device)
  local nd = #shape
  if kind == "contiguous" or nd < 2 then return H.rand(shape, dtype, device), "C" end
  if kind == "transposed" then -- column-major: the reversed shape, all dims reversed
    local p = {}
    for i = 1, nd do p[i] = nd + 1 - i end
    return H.rand(rev(shape), dtype, device):permute(table.unpack(p)), "F"
  end
  if kind == "sliced" then -- a window of a larger array
    local big = {table.unpack(shape)}
    big[nd] = shape[nd] + 4
    return H.rand(big, dtype, device):narrow(nd, 3, shape[nd] + 2), "C"
  end
  -- "permuted": the first two dims swapped (neither row- nor column-major for nd > 2)
  local s = {table.unpack(shape)}
  s[1], s[2] = shape[2], shape[1]
  local p = {2, 1}
  for i = 3, nd do p[i] = i end
  return H.rand(s, dtype, device):permute(table.unpack(p)), nd > 2 and "C" or "F"
end
local KINDS = {"contiguous", "transposed", "sliced", "permuted"}

-- ---------------------------------------------------------------- round trips within cukern

--- Save a (as "v" beside a second copy "w" for .npz/.mat), load it back (on `device`), shaped like a:
-- MATLAB has no 0-d or 1-d arrays, so .mat gives 1x1 and 1xn for those.
local function round_trip(ext, path, a, compress, device)
  local b
  if ext == "npy" then
    ck.save(path, a)
    b = ck.load(path, device and {device = device})
  else
    ck.save(path, {v = a, w = a}, {compress = compress})
    local t = ck.load(path, device and {device = device})
    assert(ck.is_array(t.w))
    b = t.v
  end
  if ext == "mat" and a:ndim() < 2 then b = b:reshape(a:ndim() == 0 and {} or a:shape()) end
  return b
end

describe("io round trips", function()
  for _, ext in ipairs{"npy", "npz", "mat"} do
    it("saves and loads ." .. ext .. " exactly for every dtype, awkward shape and view", function()
      if not HAVE[ext] then return pending("this build has no ." .. ext .. " support") end
      for _, dtype in ipairs(DTYPES) do
        for _, shape in ipairs(SHAPES) do
          for _, kind in ipairs(KINDS) do
            local a = make(kind, shape, dtype)
            local path, label = P("rt." .. ext), ("%s %s %s .%s"):format(dtype, sstr(shape), kind, ext)
            local b = round_trip(ext, path, a, kind == "sliced")
            H.assert_equal(b, a, label)
          end
        end
      end
    end)
  end

  it("loads a column-major .npy as a transposed view of the data, not a copy", function()
    local a = H.rand({3, 4, 5}, "f64"):permute(3, 2, 1)
    ck.save(P("f.npy"), a)
    local b, info = ck.load(P("f.npy"))
    assert.is_true(info.fortran_order)
    assert.same({5, 4, 3}, b:shape())
    assert.same({1, 5, 20}, b:strides())
    H.assert_equal(b, a)
  end)

  it("savez names positional arrays arr_0, arr_1 (as np.savez) and loads 0 arrays from an empty archive", function()
    if not HAVE.npz then return pending("this build has no .npz support") end
    local a, b = H.rand({4}, "f32"), H.rand({2, 2}, "i32")
    ck.savez(P("pos.npz"), {a, b})
    local t = ck.load(P("pos.npz"))
    H.assert_equal(t.arr_0, a)
    H.assert_equal(t.arr_1, b)
    ck.savez(P("empty.npz"), {})
    assert.same({}, (ck.load(P("empty.npz"))))
  end)

  it("leaves no temporary files and replaces an existing file", function()
    local a, b = H.rand({5, 6}, "f32"), H.rand({2}, "f64")
    ck.save(P("same.npy"), a)
    ck.save(P("same.npy"), b)
    H.assert_equal(ck.load(P("same.npy")), b)
    assert.is_nil(listdir():find("%.tmp%-"), listdir())
  end)

  it("loads to and saves from the GPU: C and Fortran order, views, every format", gpu(function()
    for _, ext in ipairs{"npy", "npz", "mat"} do
      if HAVE[ext] then
        for _, dtype in ipairs(DTYPES) do
          for _, shape in ipairs{{0, 3}, {1}, {17, 33}, {2, 3, 5, 7}, {1000, 37}} do
            for _, kind in ipairs(KINDS) do
              local a = make(kind, shape, dtype, "cuda")
              local path, label = P("gpu." .. ext), ("%s %s %s .%s cuda"):format(dtype, sstr(shape), kind, ext)
              local b = round_trip(ext, path, a, kind == "sliced", "cuda")
              assert.equal("cuda:0", b:device(), label)
              H.assert_equal(b:to("host"), a:to("host"), label)
              H.assert_equal(round_trip(ext, path, a, false, "host"), a:to("host"), label .. " (loaded to the host)")
            end
          end
        end
      end
    end
  end))
end)

-- ---------------------------------------------------------------- NumPy

describe("io against NumPy", function()
  it("loads .npy that NumPy wrote: every dtype, byte order, C/Fortran order and version 1.0-3.0",
    needs("python3-numpy", PYTHON, function()
      python [[
cases, dumps = [], {}
dts = ['<f4', '>f4', '<f8', '>f8', '<i4', '>i4', '<f2', '>f2', '|i1', '<i2', '>i2', '<i8', '>i8',
       '|u1', '<u2', '>u4', '<u8', '|b1']
shapes = [(), (0,), (1,), (7,), (3, 5), (0, 4), (2, 3, 5), (2, 1, 3, 1, 5), (13, 11)]
k = 0
for dt in dts:
    for shape in shapes:
        for order in 'CF':
            if order == 'F' and len(shape) < 2:
                continue
            kind = np.dtype(dt).kind
            if kind == 'b':
                a = rng.random(shape) > 0.5
            elif kind == 'f':
                a = rng.standard_normal(shape) * 100
            elif kind == 'u':  # every value of the type (u64: those below 2^63, which load as i64)
                a = rng.integers(0, min(int(np.iinfo(dt).max), 2**63 - 1), size=shape, endpoint=True, dtype=np.uint64)
            else:
                info = np.iinfo(dt)
                a = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np.int64)
            a = np.asarray(a).astype(dt)
            a = np.asfortranarray(a) if order == 'F' else np.ascontiguousarray(a)
            version = (1 + k % 3, 0)
            name = 'np%d.npy' % k
            with open(name, 'wb') as f:
                np.lib.format.write_array(f, a, version=version)
            dumps[name] = a
            cases.append((name, dt, '%d.0' % version[0], order == 'F' and a.ndim >= 2 and not a.flags.c_contiguous))
            k += 1
# one array larger than the reader's conversion chunk (65536 elements), big-endian int16
a = rng.integers(-2**15, 2**15 - 1, size=(301, 257), endpoint=True).astype('>i2')
np.save('big.npy', a)
dumps['big.npy'] = a
cases.append(('big.npy', '>i2', '1.0', False))
lua_dump('np_ref.lua', dumps)
with open('np_cases.lua', 'w') as f:
    f.write('return {\n' + ''.join('{%r,%r,%r,%s},\n' % (n, d, v, 'true' if fo else 'false') for n, d, v, fo in cases) + '}\n')
]]
      local refs, cases = dofile(P("np_ref.lua")), dofile(P("np_cases.lua"))
      -- f16 loads as f16 once cukern has the dtype, as f32 (exactly) until then
      local f16 = pcall(ck.empty, {1}, {dtype = "f16"}) and "f16" or "f32"
      -- every integer type keeps its type (issue 32) except u16 (widened to i32) and u64 (i64, below 2^63)
      local TARGET = {f4 = "f32", f8 = "f64", i4 = "i32", f2 = f16, i1 = "i8", i2 = "i16", i8 = "i64", u1 = "u8",
        u2 = "i32", u4 = "u32", u8 = "i64", b1 = "bool"}
      assert.is_true(#cases > 200)
      for _, c in ipairs(cases) do
        local name, descr, version, fortran = c[1], c[2], c[3], c[4]
        local code = descr:sub(2)
        local want = assert(TARGET[code], code)
        local a, info = ck.load(P(name))
        local label = ("%s (%s, version %s, fortran %s)"):format(name, descr, version, tostring(fortran))
        assert.equal(want, a:dtype(), label)
        assert.equal(descr, info.stored, label)
        assert.equal(version, info.version, label)
        local native = code ~= "u2" and code ~= "u8" and (code ~= "f2" or want == "f16")
        if native then assert.is_nil(info.converted, label) else assert.truthy(info.converted, label) end
        if fortran then assert.is_false(a:is_contiguous(), label .. ": Fortran order should load as a view") end
        H.assert_equal(a, from_dump(refs[name], want), label)
      end
    end))

  it("writes .npy and .npz that NumPy reads back exactly (views, Fortran order, compressed or not)",
    needs("python3-numpy", PYTHON, function()
      local names, k = {}, 0
      for _, dtype in ipairs(DTYPES) do
        for _, shape in ipairs(SHAPES) do
          for _, kind in ipairs(KINDS) do
            local a, order = make(kind, shape, dtype)
            if a:is_contiguous() or numel(shape) == 0 then order = "C" end -- NumPy calls those C order too
            k = k + 1
            ck.save(P(("ck%d.npy"):format(k)), a)
            write_ref(P(("ck%d.ref"):format(k)), a, order)
            names[#names + 1] = "ck" .. k
          end
        end
      end
      local za, zb, zc = make("transposed", {7, 9}, "f64"), make("sliced", {2, 3, 5}, "i32"), H.rand({11}, "f32")
      if HAVE.npz then
        ck.savez(P("ck.npz"), {za = za, zb = zb, zc = zc})
        ck.savez(P("ckc.npz"), {za = za, zb = zb, zc = zc}, {compress = true})
      end
      write_ref(P("za.ref"), za, "C")
      write_ref(P("zb.ref"), zb, "C")
      write_ref(P("zc.ref"), zc, "C")
      local out = python(([[
names = %q.split()
for n in names:
    a = np.load(n + '.npy')
    check(a, n + '.ref', n)
    with open(n + '.npy', 'rb') as f:
        assert np.lib.format.read_magic(f) == (1, 0), n
if %s:
    for z in ['ck.npz', 'ckc.npz']:
        d = np.load(z)
        assert sorted(d.files) == ['za', 'zb', 'zc'], d.files
        for m in d.files:
            check(d[m], m + '.ref', z + ':' + m)
print('OK', len(names))
]]):format(table.concat(names, " "), HAVE.npz and "True" or "False"))
      assert.truthy(out:find("OK " .. #names), out)
    end))

  it("loads .npz that NumPy wrote with savez and savez_compressed", needs("python3-numpy", PYTHON, function()
    if not HAVE.npz then return pending("this build has no .npz support (libzip)") end
    python [[
a = rng.standard_normal((5, 7)).astype(np.float32)
b = np.asfortranarray(rng.integers(-1000, 1000, size=(3, 4, 2)))
c = rng.standard_normal(()).astype('>f8')
d = (rng.random(17) > 0.5)
np.savez('np.npz', a, b, c=c, d=d)
np.savez_compressed('npc.npz', a, b, c=c, d=d)
lua_dump('npz_ref.lua', {'arr_0': a, 'arr_1': b, 'c': c, 'd': d})
]]
    local ref = dofile(P("npz_ref.lua"))
    for _, f in ipairs{"np.npz", "npc.npz"} do
      local t, info = ck.load(P(f))
      H.assert_equal(t.arr_0, from_dump(ref.arr_0, "f32"), f)
      H.assert_equal(t.arr_1, from_dump(ref.arr_1, "i64"), f)
      H.assert_equal(t.c, from_dump(ref.c, "f64"), f)
      H.assert_equal(t.d, from_dump(ref.d, "bool"), f)
      assert.is_nil(info.arr_1.converted) -- (i64 and bool keep their types since issue 32)
      assert.is_nil(info.d.converted)
      assert.is_true(info.arr_1.fortran_order)
    end
  end))

  it("refuses NumPy files it cannot represent, naming the file and the reason", needs("python3-numpy", PYTHON, function()
    python [[
np.save('obj.npy', np.array([1, 'a', None], dtype=object), allow_pickle=True)
np.save('cplx.npy', (rng.standard_normal(3) + 1j).astype(np.clongdouble))
np.save('rec.npy', np.zeros(3, dtype=[('x', '<f4'), ('y', '<i4')]))
np.save('str.npy', np.array(['ab', 'cd']))
a = rng.integers(0, 100, size=(4, 6)).astype(np.uint64); a[2, 3] = 2**63 + 5
np.save('big64.npy', a)
np.save('f128.npy', np.ones(2, dtype=np.longdouble))
np.save('dt.npy', np.array(['2020-01-01'], dtype='datetime64[D]'))
np.save('d9.npy', np.ones((1,) * 9))
if True:
    import zipfile
    with zipfile.ZipFile('txt.npz', 'w') as z:
        z.writestr('readme.txt', 'hello')
        z.writestr('a.npy', b'')
    np.savez('ok.npz', a=np.arange(6.0))
]]
    local function refuses(name, pattern)
      local ok, err = pcall(ck.load, P(name))
      assert.is_false(ok, name .. " loaded")
      assert.truthy(err:find(name, 1, true), err)
      assert.truthy(err:find(pattern), name .. ": " .. err)
    end
    refuses("obj.npy", "object array")
    refuses("cplx.npy", "only complex64 and complex128") -- (complex64/128 load: spec/complex_spec.lua)
    refuses("rec.npy", "structured")
    refuses("str.npy", "string")
    refuses("big64.npy", "u64 value 9223372036854775813 at element 16 does not fit in i64")
    refuses("f128.npy", "unsupported dtype")
    refuses("dt.npy", "datetime")
    refuses("d9.npy", "more than 8 dims")
    if HAVE.npz then
      refuses("txt.npz", "not a .npy array")
      -- a flipped byte in a stored member's data: libzip's CRC check catches it
      local s = read_file(P("ok.npz"))
      local at = s:find("\0\0\0\0\0\0\240\63", 1, true) -- 1.0 in f64, inside the member data
      assert.truthy(at)
      write_file(P("crc.npz"), s:sub(1, at - 1) .. "\1" .. s:sub(at + 1))
      refuses("crc.npz", "CRC")
    end
  end))
end)

-- ---------------------------------------------------------------- bad files (no external program needed)

describe("io bad input", function()
  local function expect_error(path, pattern, ...)
    local ok, err = pcall(ck.load, path, ...)
    assert.is_false(ok, path .. " loaded")
    assert.truthy(err:find(path, 1, true), "error does not name the file: " .. err)
    if pattern then assert.truthy(err:find(pattern), err) end
    return err
  end

  it("names the file and what is wrong: missing, empty, bad magic, bad version, truncated, trailing bytes", function()
    expect_error(P("missing.npy"), "cannot open")
    write_file(P("empty.npy"), "")
    expect_error(P("empty.npy"), "not a .npy file")
    write_file(P("magic.npy"), "PK\3\4 this is a zip, not an npy")
    expect_error(P("magic.npy"), "bad magic")
    local a = H.rand({6, 7}, "f64")
    ck.save(P("good.npy"), a)
    local s = read_file(P("good.npy"))
    assert.equal(128 + 6 * 7 * 8, #s) -- NumPy's 64-byte header alignment
    write_file(P("ver.npy"), s:sub(1, 6) .. "\4\0" .. s:sub(9))
    expect_error(P("ver.npy"), "version 4.0")
    for _, cut in ipairs{5, 9, 10, 40, 127, 128, 129, 200, #s - 1} do
      write_file(P("cut.npy"), s:sub(1, cut))
      local err = expect_error(P("cut.npy"))
      assert.truthy(err:find("truncated") or err:find("not a .npy"), cut .. ": " .. err)
    end
    write_file(P("long.npy"), s .. "\0")
    expect_error(P("long.npy"), "size mismatch")
    local err = expect_error(P("x.txt"), "from its extension")
    assert.truthy(err:find("^[^:]*io_spec.lua:%d+: ck.load: "), "not raised at the caller's line: " .. err)
  end)

  it("survives fuzzed headers: every mutation loads consistently or raises an error naming the file", function()
    local a = H.rand({3, 4}, "f32")
    ck.save(P("fz.npy"), a)
    local s = read_file(P("fz.npy"))
    local alphabet = "{}()[],:'\" 0123456789TrueFalsdcbfiu<>|=L\n\0\255-"
    local loaded, refused = 0, 0
    for trial = 1, 600 do
      local b = {s:byte(1, -1)}
      for _ = 1, math.random(1, 4) do
        local at = math.random(1, 80)
        b[at] = trial % 3 == 0 and math.random(0, 255) or alphabet:byte(math.random(1, #alphabet))
      end
      local fz = string.char(table.unpack(b))
      if math.random() < 0.2 then fz = fz:sub(1, math.random(0, #fz)) end
      write_file(P("fz2.npy"), fz)
      local ok, r = pcall(ck.load, P("fz2.npy"))
      if ok then
        loaded = loaded + 1
        assert.truthy(ck.is_array(r))
      else
        refused = refused + 1
        assert.truthy(r:find(P("fz2.npy"), 1, true), r)
      end
    end
    assert.is_true(refused > 300, "few mutations were refused: " .. refused)
  end)

  it("refuses malformed headers with the reason", function()
    local function hdr(dict)
      local body = dict .. string.rep(" ", 118 - #dict) .. "\n"
      return "\147NUMPY\1\0" .. string.char(#body % 256, #body // 256) .. body
    end
    local cases = {
      {"{'descr': '<f4', 'fortran_order': False, }", "'shape' is missing"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", "non%-negative integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "found 'extra'"},
      {"{'descr': '<x4', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype '<x4'"},
      {"{'descr': '<c32', 'fortran_order': False, 'shape': (2,), }", "complex"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", "object array"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", "structured"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,3 }", "',' or '%)'"},
      {"['descr', '<f4']", "expected '{'"},
    }
    for i, c in ipairs(cases) do
      local path = P(("h%d.npy"):format(i))
      write_file(path, hdr(c[1]) .. string.rep("\0", 8))
      expect_error(path, c[2])
    end
    write_file(P("hl.npy"), "\147NUMPY\2\0\255\255\255\127{")
    expect_error(P("hl.npy"), "implausible")
  end)

  it("refuses bad .npz and .mat files, naming them", function()
    write_file(P("junk.npz"), "not a zip at all, just some text")
    write_file(P("junk.mat"), string.rep("not a mat file ", 20))
    write_file(P("short.mat"), "MATLAB 5.0")
    if HAVE.npz then
      expect_error(P("junk.npz"), "not an .npz")
      ck.savez(P("t.npz"), {a = H.rand({50, 50}, "f64"), b = H.rand({9}, "f32")}, {compress = true})
      local s = read_file(P("t.npz"))
      for _, cut in ipairs{0, 30, #s // 2, #s - 10} do
        write_file(P("tc.npz"), s:sub(1, cut))
        expect_error(P("tc.npz"))
      end
    else
      expect_error(P("junk.npz"), "libzip")
    end
    if HAVE.mat then
      expect_error(P("junk.mat"), "not a MAT file")
      expect_error(P("short.mat"), "shorter than the 128%-byte")
      for _, compress in ipairs{false, true} do
        ck.save(P("t.mat"), {A = H.rand({40, 30}, "f64"), B = H.rand({7}, "i32")}, {compress = compress})
        local s = read_file(P("t.mat"))
        for _, cut in ipairs{200, #s // 2, #s - 8} do
          write_file(P("tc.mat"), s:sub(1, cut))
          expect_error(P("tc.mat"))
        end
      end
      -- dims that claim far more data than the file holds (libmatio would allocate and read them)
      ck.save(P("d.mat"), {A = H.rand({3, 4}, "f64")})
      local s = read_file(P("d.mat"))
      local dims = "\5\0\0\0\8\0\0\0\3\0\0\0\4\0\0\0"
      local at = s:find(dims, 1, true)
      assert.truthy(at)
      write_file(P("dims.mat"), s:sub(1, at + 11) .. "\255\255\255\127" .. s:sub(at + 16))
      expect_error(P("dims.mat"), "dims claim 6442450941 elements")
    else
      expect_error(P("junk.mat"), "libmatio")
    end
  end)

  it("survives fuzzed .npz and .mat files: each loads or raises an error naming the file", function()
    local a, b = H.rand({5, 7}, "f32"), H.rand({6}, "i32")
    for _, ext in ipairs{"npz", "mat"} do
      for _, compress in ipairs{false, true} do
        if HAVE[ext] then
          ck.save(P("fz." .. ext), {A = a, B = b}, {compress = compress})
          local s = read_file(P("fz." .. ext))
          for _ = 1, 150 do
            local bytes = {s:byte(1, -1)}
            for _ = 1, math.random(1, 6) do
              local r = math.random()
              bytes[math.random(1, #bytes)] = r < 0.3 and 0 or r < 0.5 and 255 or math.random(0, 255)
            end
            write_file(P("fz2." .. ext), string.char(table.unpack(bytes)))
            local ok, r = pcall(ck.load, P("fz2." .. ext))
            if ok then assert.equal("table", type(r))
            else assert.truthy(r:find(P("fz2." .. ext), 1, true), r) end
          end
        end
      end
    end
  end)

  it("refuses bad arguments and leaves an existing file intact when a save fails", function()
    local a = H.rand({3, 3}, "f32")
    local function save_error(pattern, ...)
      local ok, err = pcall(ck.save, ...)
      assert.is_false(ok)
      assert.truthy(err:find(pattern), err)
    end
    save_error("holds one array", P("x.npy"), {a = a})
    save_error("from its extension", P("x.csv"), a)
    save_error("not a cukern array", P("x.npz"), {a = 1})
    save_error("compress must be", P("x.npz"), {a = a}, {compress = "yes"})
    save_error("cannot create a temporary file", P("no/such/dir/x.npy"), a)
    local freed = H.rand({2}, "f32")
    freed:free()
    ck.save(P("keep.npy"), a)
    save_error("freed", P("keep.npy"), freed)
    if HAVE.mat then
      ck.save(P("keep.mat"), {A = a})
      save_error("not a MATLAB variable name", P("keep.mat"), {["1bad"] = a})
      H.assert_equal(ck.load(P("keep.mat")).A, a)
    end
    H.assert_equal(ck.load(P("keep.npy")), a)
    assert.is_nil(listdir():find("%.tmp%-"), listdir())
  end)
end)

-- ---------------------------------------------------------------- GNU Octave

describe("io against GNU Octave", function()
  it("Octave loads a .mat cukern saved, computes, saves -v6 and -v7; cukern checks every value",
    needs("octave", OCTAVE, function()
      if not HAVE.mat then return pending("this build has no .mat support (libmatio)") end
      local A = make("transposed", {5, 7}, "f32")  -- column-major already: written as it lies
      local B = H.rand({2, 3, 4}, "f64")
      local C = make("sliced", {4, 3}, "i32")
      local D = H.rand({7}, "f64")
      local E = H.rand({}, "f64")
      local Z = H.rand({0, 3}, "f32")
      ck.save(P("in.mat"), {A = A, B = B, C = C, D = D, E = E, Z = Z})
      ck.save(P("inc.mat"), {A = A, B = B, C = C, D = D, E = E, Z = Z}, {compress = true})
      octave(([[
1;
function dump(fid, name, X)
  v = permute(X, ndims(X):-1:1)(:);
  s = strjoin(arrayfun(@(x) sprintf('%%.17g', double(x)), v', 'UniformOutput', false), ',');
  fprintf(fid, '%%s={shape={%%s},values={%%s}},\n', name, strjoin(arrayfun(@num2str, size(X), 'UniformOutput', false), ','), s);
end
rand('state', %d);
for f = {'in.mat', 'inc.mat'}
  S = load(f{1});
  assert(isa(S.A, 'single') && isa(S.B, 'double') && isa(S.C, 'int32'));
  assert(isequal(size(S.A), [5 7]) && isequal(size(S.B), [2 3 4]) && isequal(size(S.D), [1 7]));
  assert(isequal(size(S.E), [1 1]) && isequal(size(S.Z), [0 3]));
end
load('inc.mat');
At = A';
A2 = A * 2 + 1;
Bsum = sum(B, 3);
B2 = B(:, :, 2);
C3 = C * 3;
szB = size(B);
Dsq = D .^ 2;
I8 = int8(randi([-128, 127], 3, 4));
U16 = uint16(randi([0, 65535], 2, 5));
L = rand(4, 3) > 0.5;
I64 = int64(randi([-1e6, 1e6], 3, 2));
U8 = uint8(randi([0, 255], 2, 2, 3));
Lg = rand(6, 5);
save('-v7', 'out7.mat', 'At', 'A2', 'Bsum', 'B2', 'C3', 'szB', 'Dsq', 'E', 'Z', 'I8', 'U16', 'L', 'I64', 'U8', 'Lg');
save('-v6', 'out6.mat', 'At', 'A2', 'Bsum', 'B2', 'C3', 'szB', 'Dsq', 'E', 'Z', 'I8', 'U16', 'L', 'I64', 'U8', 'Lg');
save('-mat', 'outm.mat', 'Lg', 'I8');
Zc = [1+2i, 3];
St.x = 1;
Ch = 'hello';
Ce = {1, 2};
Sp = sparse([1 0; 0 2]);
save('-v7', 'cplx.mat', 'Zc'); save('-v7', 'struct.mat', 'St'); save('-v7', 'char.mat', 'Ch');
save('-v7', 'cell.mat', 'Ce'); save('-v6', 'sparse.mat', 'Sp');
fid = fopen('oct_ref.lua', 'w');
fprintf(fid, 'return {\n');
dump(fid, 'I8', I8); dump(fid, 'U16', U16); dump(fid, 'L', L); dump(fid, 'I64', I64); dump(fid, 'U8', U8); dump(fid, 'Lg', Lg);
fprintf(fid, '}\n');
fclose(fid);
disp('OCTAVE-DONE');
]]):format(H.seed % 2 ^ 31))
      local ref = dofile(P("oct_ref.lua"))
      for _, f in ipairs{"out7.mat", "out6.mat"} do
        local t, info = ck.load(P(f))
        H.assert_equal(t.At, A:t(), f .. " At")
        H.assert_equal(t.A2, A * 2 + 1, f .. " A2")
        H.assert_close(t.Bsum, B:sum(3), {rtol = 1e-14, atol = 1e-15}, f .. " Bsum")
        H.assert_equal(t.B2, B:select(3, 2), f .. " B2")
        H.assert_equal(t.C3, C * 3, f .. " C3")
        H.assert_equal(t.szB, ck.array({{2, 3, 4}}, {dtype = "f64"}), f .. " szB")
        H.assert_equal(t.Dsq, D:mul(D):reshape(1, 7), f .. " Dsq")
        H.assert_equal(t.E, E:reshape(1, 1), f .. " E")
        assert.same({0, 3}, t.Z:shape())
        for name, dt in pairs{I8 = "i8", U16 = "i32", L = "bool", I64 = "i64", U8 = "u8", Lg = "f64"} do
          H.assert_equal(t[name], from_dump(ref[name], dt), f .. " " .. name)
        end
        assert.equal("int8", info.I8.stored)
        assert.is_nil(info.I8.converted) -- (kept since issue 32; u16 still widens)
        assert.equal("u16 -> i32", info.U16.converted)
        assert.equal("logical", info.L.stored)
        assert.is_nil(info.L.converted)
        assert.equal("5", info.Lg.version)
      end
      H.assert_equal(ck.load(P("outm.mat")).Lg, from_dump(ref.Lg, "f64"), "save -mat")
      local cases = {["cplx.mat"] = "complex", ["struct.mat"] = "struct", ["char.mat"] = "char array",
        ["cell.mat"] = "cell array", ["sparse.mat"] = "sparse"}
      for name, pattern in pairs(cases) do
        local ok, err = pcall(ck.load, P(name))
        assert.is_false(ok, name)
        assert.truthy(err:find(name, 1, true) and err:find(pattern), name .. ": " .. err)
      end
    end))

  it("loads Octave's .mat straight to the GPU", gpu(needs("octave", OCTAVE, function()
    if not HAVE.mat then return pending("this build has no .mat support (libmatio)") end
    octave([[
rand('state', 7); X = rand(33, 17); Y = single(rand(4, 5, 6));
save('-v7', 'g.mat', 'X', 'Y');
fid = fopen('g_ref.lua', 'w');
fprintf(fid, 'return {X={%s}, Y={%s}}\n', sprintf('%.17g,', X(:)), sprintf('%.17g,', double(Y(:))));
fclose(fid);
disp('OCTAVE-DONE');
]])
    local ref = dofile(P("g_ref.lua"))
    local t = ck.load(P("g.mat"), {device = "cuda"})
    assert.equal("cuda:0", t.X:device())
    -- the dump is column-major: as a reversed-shape C array, permuted back
    H.assert_equal(t.X:to("host"), ck.array(ref.X, {dtype = "f64"}):reshape(17, 33):t())
    H.assert_equal(t.Y:to("host"), ck.array(ref.Y, {dtype = "f32"}):reshape(6, 5, 4):permute(3, 2, 1))
  end)))
end)

teardown(function() os.execute("rm -rf '" .. DIR .. "'") end)
