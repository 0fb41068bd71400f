-- Bench specs: JSON round trips, statistics on known lists, tables and results files, and bench.run on
-- the host backend. The JSON/statistics parts need no C module; the timing parts use it when it is built.

package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath

local json = require "cukern.json"
local bench = require "cukern.bench"
local files = require "cukern.report_files"

local has_ck, ck = pcall(require, "cukern")
local function needs_ck(fn)
  return function(...)
    if not has_ck then return pending("cukern.core is not built: " .. tostring(ck):match("^[^\n]*")) end
    return fn(...)
  end
end

local function tmpdir()
  local p = os.tmpname()
  os.remove(p)
  assert(os.execute("mkdir -p '" .. p .. "'"))
  return p
end

-- os.getenv as bench sees it, with CUKERN_RESULTS set to `value` (nil: unset) while fn runs
local function with_results_env(value, fn)
  local real = os.getenv
  os.getenv = function(k)
    if k == "CUKERN_RESULTS" then return value end
    return real(k)
  end
  local ok, err = pcall(fn)
  os.getenv = real
  assert(ok, err)
end

-- ---------------------------------------------------------------------------------------------------

describe("cukern.json", function()
  it("round-trips nested values exactly", function()
    local v = {
      ladder = "matmul",
      rows = { { variant = "naive", m = 4097, ms = 12.345678901234567, shape = { 4097, 4095 } },
        { variant = "cublas", tflops = 51.5, ok = true, flag = false } },
      nested = { { 1, { 2, { 3, {} } } }, {} },
      s = "tab\tnewline\nquote\"backslash\\ ctrl\1 utf8 é ✓ 😀",
      neg = -0.001, tiny = 5e-324, big = 1.7976931348623157e308, third = 1 / 3,
      int = 9007199254740993, -- above 2^53: stays an integer
    }
    local text = json.encode(v)
    local back = json.decode(text)
    assert.same(v.rows, back.rows)
    assert.same(v.nested, back.nested)
    assert.equal(v.s, back.s)
    for _, k in ipairs({ "neg", "tiny", "big", "third", "int" }) do assert.equal(v[k], back[k], k) end
    assert.equal("integer", math.type(back.int))
    assert.equal(text, json.encode(back)) -- stable
  end)

  it("decodes \\u escapes, surrogate pairs included", function()
    assert.equal("é😀A/", json.decode([["\u00e9\ud83d\ude00\u0041\/"]]))
    assert.equal("\u{FFFD}", json.decode([["\ud800"]]))
    assert.equal('"\\\b\f\n\r\t', json.decode([["\"\\\b\f\n\r\t"]]))
  end)

  it("keeps empty arrays and empty objects apart", function()
    local back = json.decode('{"a": [], "b": {}, "c": [[], {}, [[]]]}')
    assert.equal('{"a":[],"b":{},"c":[[],{},[[]]]}', json.encode(back, { indent = false }))
    assert.equal("[]", json.encode(json.array()))
    assert.equal("{}", json.encode({}))
    assert.equal("[1,2]", json.encode(json.array({ 1, 2 }), { indent = false }))
  end)

  it("sorts keys, indents by 2, writes NaN/inf as null and integral floats without .0", function()
    local text = json.encode({ z = 1, a = { b = 2.0, c = 0 / 0, d = 1 / 0, e = -1 / 0 }, m = { 1, 2.5 } })
    assert.equal('{\n  "a": {\n    "b": 2,\n    "c": null,\n    "d": null,\n    "e": null\n  },\n' ..
      '  "m": [1, 2.5],\n  "z": 1\n}', text)
    assert.equal("93.4", json.encode(93.4))
    assert.equal("0.1", json.encode(0.1))
    assert.equal("4096", json.encode(4096.0))
  end)

  it("decodes null as json.null, numbers as integers or floats", function()
    local v = json.decode('[null, 1, 1.5, -2e3, 0, true, false, " x "]')
    assert.is_true(json.isnull(v[1]))
    assert.equal("integer", math.type(v[2]))
    assert.equal(1.5, v[3])
    assert.equal(-2000, v[4])
    assert.same({ 0, true, false, " x " }, { v[5], v[6], v[7], v[8] })
  end)

  it("reports errors with a position and refuses what JSON cannot hold", function()
    for _, bad in ipairs({ "[1,2", '{"a" 1}', "[1,]", "tru", '"unterminated', "{} x", "", "[01x]", "'a'" }) do
      local ok, err = pcall(json.decode, bad)
      assert.is_false(ok, bad)
      assert.truthy(tostring(err):find("json.decode", 1, true), bad)
    end
    local ok, err = pcall(json.decode, '{"a": [1, 2,\n  @]}')
    assert.is_false(ok)
    assert.truthy(err:find("line 2", 1, true), err)
    local cyc = {}
    cyc.self = cyc
    assert.has_error(function() json.encode(cyc) end)
    assert.has_error(function() json.encode({ f = print }) end)
  end)
end)

describe("bench statistics", function()
  it("median, quartiles (linear interpolation), min, max", function()
    local s = bench.stats({ 5, 1, 4, 2, 3 })
    assert.same({ ms = 3, min = 1, max = 5, q1 = 2, q3 = 4, reps = 5 }, s)
    s = bench.stats({ 4, 1, 3, 2 })
    assert.equal(2.5, s.ms)
    assert.equal(1.75, s.q1)
    assert.equal(3.25, s.q3)
    s = bench.stats({ 7 })
    assert.same({ ms = 7, min = 7, max = 7, q1 = 7, q3 = 7, reps = 1 }, s)
    -- numpy.percentile([10, 20, 30, 40, 50, 60, 70, 80, 90, 1000], [25, 50, 75]) = 32.5, 55, 77.5
    s = bench.stats({ 1000, 90, 80, 70, 60, 50, 40, 30, 20, 10 })
    assert.near(32.5, s.q1, 1e-12)
    assert.near(55, s.ms, 1e-12)
    assert.near(77.5, s.q3, 1e-12)
    assert.equal(1000, s.max)
  end)

  it("does not reorder the caller's list", function()
    local t = { 3, 1, 2 }
    bench.stats(t)
    assert.same({ 3, 1, 2 }, t)
  end)

  it("quantile at the ends", function()
    local sorted = { 1, 2, 4, 8 }
    assert.equal(1, bench.quantile(sorted, 0))
    assert.equal(8, bench.quantile(sorted, 1))
    assert.is_nil(bench.quantile({}, 0.5))
  end)
end)

describe("bench helpers", function()
  it("slug", function()
    assert.equal("nvidia-h200", bench.slug("NVIDIA H200"))
    assert.equal("nvidia-h100-80gb-hbm3", bench.slug("NVIDIA H100 80GB HBM3"))
    assert.equal("host", bench.slug("host"))
    assert.equal("unknown", bench.slug(nil))
    assert.equal("unknown", bench.slug("  ***  "))
  end)

  it("results_dir: GPU results in bench/results, host results in bench/results/host, CUKERN_RESULTS wins", function()
    with_results_env(nil, function()
      assert.equal("bench/results", bench.results_dir("cuda"))
      assert.equal("bench/results/host", bench.results_dir("host"))
    end)
    with_results_env("", function()
      assert.equal("bench/results/host", bench.results_dir("host"))
    end)
    with_results_env("/tmp/out", function()
      assert.equal("/tmp/out", bench.results_dir("cuda")) -- .ci/gpu-check: CUKERN_RESULTS=$OUT
      assert.equal("/tmp/out", bench.results_dir("host"))
    end)
  end)

  it("a host run never writes into bench/results itself, however CUKERN_RESULTS names it", function()
    local real = io.stderr
    io.stderr = { write = function() end, flush = function() end } -- the note it prints
    local ok, err = pcall(function()
      local here = (os.getenv("PWD") or ".") .. "/bench/results"
      for _, d in ipairs({ "bench/results", "./bench/results", "bench/results/", here }) do
        with_results_env(d, function()
          assert.equal("bench/results/host", bench.results_dir("host"), d)
          assert.equal(d, bench.results_dir("cuda"), d)
        end)
      end
    end)
    io.stderr = real
    assert(ok, err)
  end)

  it("results_path puts a file by the backend its meta names", function()
    with_results_env(nil, function()
      assert.equal("bench/results/matmul-nvidia-h200.json",
        bench.results_path("matmul", { backend = "cuda", device = "NVIDIA H200" }))
      assert.equal("bench/results/host/matmul-host.json",
        bench.results_path("matmul", { backend = "host", device = "host" }))
    end)
    with_results_env("/tmp/out", function()
      assert.equal("/tmp/out/reduce-nvidia-h200.json",
        bench.results_path("reduce", { backend = "cuda", device = "NVIDIA H200" }))
    end)
  end)

  it("table aligns columns: numbers right, text left, missing as '-'", function()
    local text = bench.table({
      { variant = "naive", ms = 12.3456, tflops = 0.4 },
      { variant = "cublas", ms = 1.1, tflops = 51.5, shape = { 4096, 4096 } },
    }, {
      { key = "variant" }, { key = "shape" }, { key = "ms", fmt = "%.3f" },
      { key = "tflops", title = "TFLOP/s", fmt = function(v) return string.format("%.1f", v) end },
    }, false)
    local lines = {}
    for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal(4, #lines)
    assert.equal("variant  shape          ms  TFLOP/s", lines[1])
    assert.equal("naive    -          12.346      0.4", lines[3])
    assert.equal("cublas   4096x4096   1.100     51.5", lines[4])
  end)

  it("shape_str and numel", function()
    assert.equal("4096x4096", bench.shape_str({ 4096, 4096.0 }))
    assert.equal("7", bench.shape_str({ 7 }))
    assert.equal(16777216, bench.numel({ 4096, 4096.0 }))
    assert.equal("integer", math.type(bench.numel({ 4096, 4096.0 })))
    assert.equal(1, bench.numel({}))
  end)

  it("print_tables prints each case and counts the rows that failed; finish exits 1 on failures", function()
    local G = package.loaded._G -- the globals bench.lua sees (busted gives a spec file its own environment)
    local real_print, real_stdout, real_stderr, real_exit = G.print, io.stdout, io.stderr, os.exit
    local out, code = {}, nil
    local fake = { write = function(_, ...) for _, x in ipairs({ ... }) do out[#out + 1] = x end end }
    G.print = function(s) out[#out + 1] = tostring(s) .. "\n" end
    io.stdout, io.stderr = fake, fake
    os.exit = function(c) code = c end
    local ok, err = pcall(function()
      local n = bench.print_tables({
        { title = "case A", rows = { { variant = "v1", correct = true }, { variant = "v2", correct = false } } },
        { title = "case B", rows = { { variant = "v3", ok = false }, { variant = "v4" } } },
      }, { { key = "variant" } })
      assert.equal(2, n)
      bench.finish("x.json", 0)
      assert.is_nil(code)
      bench.finish("x.json", n)
      assert.equal(1, code)
    end)
    G.print, io.stdout, io.stderr, os.exit = real_print, real_stdout, real_stderr, real_exit
    assert(ok, err)
    local text = table.concat(out)
    assert.truthy(text:find("\ncase A\n", 1, true))
    assert.truthy(text:find("\ncase B\n", 1, true))
    assert.truthy(text:find("v3", 1, true))
    assert.truthy(text:find("wrote x.json", 1, true))
    assert.truthy(text:find("2 variant(s) failed validation", 1, true))
  end)

  it("progress writes to stderr only", function()
    local real = io.stderr
    local got = {}
    io.stderr = { write = function(_, ...) for _, s in ipairs({ ... }) do got[#got + 1] = s end end, flush = function() end }
    local ok, err = pcall(function() for i = 1, 50 do bench.progress(i, 50, "step") end end)
    io.stderr = real
    assert.is_true(ok, err)
    local all = table.concat(got)
    if os.getenv("CUKERN_PROGRESS") ~= "0" then assert.truthy(all:find("100%", 1, true)) end
  end)

  it("write_json creates the directory, reads back and records the file in manifest.txt", function()
    local dir = tmpdir()
    local path = dir .. "/a/b/matmul-test.json"
    local doc = { meta = { device = "x" }, ladder = "matmul", rows = { { variant = "v", ms = 1.25 } } }
    assert.equal(path, bench.write_json(path, doc))
    assert.same(doc, bench.read_json(path))
    bench.write_json(dir .. "/a/b/elementwise-test.json", doc)
    bench.write_json(path, doc) -- again: listed once
    assert.same({ "elementwise-test.json", "matmul-test.json" }, files.manifest(dir .. "/a/b"))
    local f = assert(io.open(dir .. "/a/b/manifest.txt"))
    assert.equal("elementwise-test.json\nmatmul-test.json\n", f:read("a"))
    f:close()
    os.execute("rm -rf " .. files.shell_quote(dir))
  end)

  it("meta labels a run on the host backend as a host run, and its results go under host/", needs_ck(function()
    local m = bench.meta { device = "host" }
    assert.equal("host", m.backend)
    assert.equal("host", m.device)
    if ck.has_cuda() then assert.is_string(m.gpu_present) end
    with_results_env(nil, function()
      assert.equal("bench/results/host/x-host.json", bench.results_path("x", m))
    end)
  end))

  it("target: the GPU at full size, or the host with --host-small, CUKERN_DEVICE=host or no GPU", needs_ck(function()
    assert.equal("host", (bench.target({ "--host-small" })))
    local small_env = os.getenv("CUKERN_SIZES") == "small" or os.getenv("CUKERN_HOST_SMALL") == "1"
    local device, small = bench.target({ "4096" })
    assert.equal(small_env, small)
    local gpu = ck.has_cuda() and not small_env and os.getenv("CUKERN_DEVICE") ~= "host"
    assert.equal(gpu and "cuda" or "host", device)
  end))

  it("meta has the fields a results file needs", function()
    local m = bench.meta()
    assert.truthy(m.date:match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$"), m.date)
    assert.is_string(m.commit)
    assert.is_string(m.host)
    assert.is_string(m.device)
    assert.truthy(m.backend == "cuda" or m.backend == "host")
    assert.same(m, json.decode(json.encode(m)))
  end)
end)

describe("bench.run", function()
  it("times a Lua function on the host with the host clock", function()
    local calls = 0
    local r = bench.run { fn = function() calls = calls + 1 end, warmup = 3, reps = 7, device = "host",
      flops = 2e9, bytes = 4e6 }
    assert.equal(10, calls)
    assert.equal("host", r.device)
    assert.equal("host clock", r.timer)
    assert.equal(7, r.reps)
    assert.equal(7, #r.times)
    assert.truthy(r.min <= r.q1 and r.q1 <= r.ms and r.ms <= r.q3 and r.q3 <= r.max)
    if r.ms > 0 then
      assert.near(2e9 / r.ms / 1e9, r.tflops, 1e-9)
      assert.near(4e6 / r.ms / 1e6, r.gbps, 1e-9)
    end
  end)

  it("measures time that passes", function()
    local clock = has_ck and ck.core and ck.core.clock or os.clock
    local r = bench.run { fn = function()
      local t0 = clock()
      while clock() - t0 < 0.002 do end
    end, warmup = 0, reps = 3, device = "host" }
    assert.truthy(r.ms >= 1.9 and r.ms < 200, r.ms)
  end)

  it("wants spec= or fn=", function()
    assert.has_error(function() bench.run {} end)
  end)

  it("runs a core time_op spec on the host", needs_ck(function()
    if not (ck.core and ck.core.time_op) then return pending("ck.core.time_op not implemented yet") end
    local a = ck.ones(64, 64, { device = "host" })
    local b = ck.ones(64, 64, { device = "host" })
    local c = ck.empty(64, 64, { device = "host" })
    local r = bench.run { spec = { op = "add", a = a, b = b, out = c }, warmup = 1, reps = 5, bytes = 3 * 64 * 64 * 4 }
    assert.equal("host", r.device)
    assert.equal("host clock", r.timer)
    assert.equal(5, r.reps)
    assert.truthy(r.ms >= 0)
    assert.equal(2, c:totable()[1][1])
  end))

  it("ck.bench and ck.launch_overhead are wired", needs_ck(function()
    assert.is_function(ck.bench)
    local us = ck.launch_overhead { n = 2000, device = "host" }
    assert.truthy(us > 0 and us < 1e5, us)
  end))
end)
