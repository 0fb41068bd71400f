-- Report specs: the SVGs are well-formed XML and draw exactly the numbers in the results JSON; the HTML
-- index and README section are built from the same files; update_readme touches only its section; host
-- results never reach the GPU section or a GPU index; the report lists no directory (manifest.txt).
-- Pure Lua: runs without the C module (no spec.helpers here on purpose).

package.path = "lua/?.lua;lua/?/init.lua;" .. package.path

local json = require "cukern.json"
local report = require "cukern.report"
local files = require "cukern.report_files"
local results = require "cukern.report_results"
local svg = require "cukern.report_svg"
local text = require "cukern.report_text"

-- ---------------------------------------------------------------------------------------------------
-- a small XML well-formedness checker and tree builder

local ENTITIES = { amp = "&", lt = "<", gt = ">", quot = '"', apos = "'" }

local function xml_parse(s)
  local pos, n = 1, #s
  local root
  local stack = {}
  local function fail(msg)
    error(string.format("xml: %s at byte %d near %q", msg, pos, s:sub(pos, pos + 40)), 0)
  end
  local function check_chars(t)
    local i = 1
    while true do
      local a = t:find("&", i, true)
      if not a then break end
      local ent = t:match("^&([#%w]+);", a)
      if not ent or not (ENTITIES[ent] or ent:match("^#%d+$") or ent:match("^#x%x+$")) then
        fail("bad or unescaped entity")
      end
      i = a + 1
    end
    if t:find("<", 1, true) then fail("raw '<' in text or attribute") end
  end
  local function decode(t)
    return (t:gsub("&(#?x?%w+);", function(e)
      if ENTITIES[e] then return ENTITIES[e] end
      if e:match("^#x") then return utf8.char(tonumber(e:sub(3), 16)) end
      return utf8.char(tonumber(e:sub(2)))
    end))
  end
  local NAME = "[%a_:][%w_:%.%-]*"
  while pos <= n do
    if s:find("^<%?", pos) then
      local e = s:find("?>", pos, true) or fail("unterminated processing instruction")
      pos = e + 2
    elseif s:find("^<!%-%-", pos) then
      local e = s:find("-->", pos + 4, true) or fail("unterminated comment")
      pos = e + 3
    elseif s:find("^</", pos) then
      local name, stop = s:match("^</(" .. NAME .. ")%s*>()", pos)
      if not name then fail("bad end tag") end
      local top = table.remove(stack)
      if not top then fail("end tag </" .. name .. "> with nothing open") end
      if top.name ~= name then fail("</" .. name .. "> closes <" .. top.name .. ">") end
      pos = stop
    elseif s:sub(pos, pos) == "<" then
      local name = s:match("^<(" .. NAME .. ")", pos)
      if not name then fail("bad tag name") end
      if #stack == 0 and root then fail("second root element") end
      local node = { name = name, attrs = {}, children = {}, text = "" }
      pos = pos + 1 + #name
      local closed = false
      while true do
        local ws = s:match("^%s*", pos)
        pos = pos + #ws
        if s:find("^/>", pos) then pos, closed = pos + 2, true break end
        if s:find("^>", pos) then pos = pos + 1 break end
        if #ws == 0 then fail("attributes must be separated by white space") end
        local an = s:match("^(" .. NAME .. ")", pos)
        if not an then fail("bad attribute name") end
        pos = pos + #an
        local eq = s:match("^%s*=%s*", pos)
        if not eq then fail("attribute " .. an .. " without '='") end
        pos = pos + #eq
        local quote = s:sub(pos, pos)
        if quote ~= '"' and quote ~= "'" then fail("unquoted attribute " .. an) end
        local e = s:find(quote, pos + 1, true) or fail("unterminated attribute value")
        local raw = s:sub(pos + 1, e - 1)
        check_chars(raw)
        if node.attrs[an] ~= nil then fail("duplicate attribute " .. an) end
        node.attrs[an] = decode(raw)
        pos = e + 1
      end
      if #stack > 0 then table.insert(stack[#stack].children, node) else root = node end
      if not closed then stack[#stack + 1] = node end
    else
      local e = s:find("<", pos, true) or (n + 1)
      local t = s:sub(pos, e - 1)
      if #stack == 0 then
        if t:find("%S") then fail("text outside the root element") end
      else
        check_chars(t)
        stack[#stack].text = stack[#stack].text .. decode(t)
      end
      pos = e
    end
  end
  if #stack > 0 then fail("unclosed <" .. stack[#stack].name .. ">") end
  if not root then fail("no root element") end
  return root
end

local function walk(node, fn)
  fn(node)
  for _, ch in ipairs(node.children) do walk(ch, fn) end
end

local function with_attr(root, attr)
  local out = {}
  walk(root, function(nd) if nd.attrs[attr] ~= nil then out[#out + 1] = nd end end)
  return out
end

local function child_text(node, name)
  for _, ch in ipairs(node.children) do
    if ch.name == name then return ch.text end
  end
  return nil
end

-- ---------------------------------------------------------------------------------------------------
-- fixtures (what the ladder scripts write)

local META = { device = "NVIDIA H200", backend = "cuda", cc = "9.0", driver = "13.0", runtime = "13.0",
  date = "2026-11-21T10:00:00Z", commit = "abc1234", host = "gpu1", cukern = "0.1.0" }

local function matmul_doc()
  local rows = {}
  local steps = { { 0, "cublas", 1 }, { 1, "naive", 0.004 }, { 2, "coalesced", 0.031 }, { 3, "smem", 0.052 },
    { 5, "blocktile_2d", 0.613 }, { 7, "warptile", 0.934 } }
  for _, m in ipairs({ 128, 1000, 4096, 8192 }) do
    for _, v in ipairs(steps) do
      local t = 51.5 * v[3] * (m / 8192) ^ 0.3 + math.random() * 1e-3
      local ms = 2 * m ^ 3 / t / 1e9
      rows[#rows + 1] = { variant = v[2], id = v[1], m = m, n = m, k = m, dtype = "f32", ms = ms, q1 = ms * 0.99,
        q3 = ms * 1.02, tflops = t }
    end
  end
  -- a variant that failed validation at one size must never be plotted
  rows[#rows + 1] = { variant = "broken", id = 9, m = 4096, n = 4096, k = 4096, ok = false,
    error = "max abs err 3.1 at (1,2)", tflops = 99 }
  return { meta = META, ladder = "matmul", headline = "m=4096", rows = rows }
end

local function transpose_doc()
  local rows = {}
  for _, nn in ipairs({ 1023, 4096, 16384 }) do
    for _, v in ipairs({ { 0, "memcpy", 1 }, { 1, "naive", 0.27 }, { 4, "padded", 3.36 } }) do
      rows[#rows + 1] = { variant = v[2], id = v[1], shape = { nn, nn }, gbps = 1150 * v[3], ms = 0.1 }
    end
  end
  return { meta = META, ladder = "transpose", rows = rows }
end

local function reduce_doc()
  local rows = {}
  for _, sh in ipairs({ { 1024, 1024 }, { 16384, 16384 }, { 1048576, 256 } }) do
    for _, dim in ipairs({ false, 2 }) do
      for _, v in ipairs({ { 0, "cub", 4300 }, { 1, "interleaved", 900 }, { 5, "cascade", 4100 } }) do
        rows[#rows + 1] = { variant = v[2], id = v[1], fn = "sum", shape = sh, dim = dim or nil, gbps = v[3] }
      end
    end
  end
  return { meta = META, ladder = "reduce", rows = rows }
end

-- Names that need escaping everywhere they appear.
local function nasty_doc()
  local meta = {}
  for k, v in pairs(META) do meta[k] = v end
  meta.device = [[A&B <GPU> "quoted" 'single']]
  return {
    meta = meta, ladder = "elementwise",
    rows = {
      { variant = "ref<&>", id = 0, op = "add", shape = { 1 << 20 }, gbps = 4000 },
      { variant = [[v "1" & 'x']], id = 1, op = "add", shape = { 1 << 20 }, gbps = 3000, note = "a < b & c" },
      { variant = "ref<&>", id = 0, op = "add", shape = { 1 << 24 }, gbps = 4100 },
      { variant = [[v "1" & 'x']], id = 1, op = "add", shape = { 1 << 24 }, gbps = 3900 },
    },
  }
end

local function tmpdir()
  local p = os.tmpname()
  os.remove(p)
  assert(os.execute("mkdir -p '" .. p .. "'"))
  return p
end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function spit(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- As bench.write_json does: the file, and its name in the directory's manifest.txt.
local function write_results(dir, docs)
  for name, doc in pairs(docs) do
    spit(dir .. "/" .. name .. ".json", json.encode(doc))
    assert(files.record(dir, name .. ".json"))
  end
end

local function chart(charts, kind)
  local out = {}
  for _, ch in ipairs(charts) do if ch.kind == kind then out[#out + 1] = ch end end
  return out
end

-- Round-trip through JSON text first: the report reads files, not Lua tables.
local function via_json(doc) return json.decode(json.encode(doc)) end

-- ---------------------------------------------------------------------------------------------------

describe("xml checker (the spec's own)", function()
  it("accepts well-formed documents", function()
    local root = xml_parse([[<?xml version="1.0"?><a x="1" y='&amp;&#60;&#x3e;'><b/><!-- c --><c>t &lt; u</c></a>]])
    assert.equal("a", root.name)
    assert.equal("&<>", root.attrs.y)
    assert.equal("t < u", root.children[2].text)
  end)
  it("rejects what is not", function()
    for _, bad in ipairs({ "<a><b></a>", "<a x=1/>", "<a>&foo;</a>", "<a>x & y</a>", '<a x="1" x="2"/>',
      '<a x="<"/>', "<a>", "<a/><b/>", "text<a/>", '<a x="1"y="2"/>', "</a>" }) do
      assert.has_error(function() xml_parse(bad) end, nil, bad)
    end
  end)
end)

describe("report.svg_bar / svg_lines", function()
  it("are well-formed and carry every value as data-value and a tooltip", function()
    local items = {
      { label = "00 ref", value = 100 }, { label = "01 <slow> & \"odd\"", value = 12.5 },
      { label = "02 fast", value = 250.25 }, { label = "03 missing", value = nil },
    }
    local root = xml_parse(report.svg_bar("t & <title>", items, { ref = 100, subtitle = "sub'title" }))
    assert.equal("svg", root.name)
    assert.equal("t & <title>", child_text(root, "title"))
    local bars = with_attr(root, "data-value")
    assert.equal(3, #bars)
    local want = { ["00 ref"] = 100, ["01 <slow> & \"odd\""] = 12.5, ["02 fast"] = 250.25 }
    for _, b in ipairs(bars) do
      assert.equal(want[b.attrs["data-label"]], tonumber(b.attrs["data-value"]))
      assert.truthy(child_text(b, "title"), "tooltip")
    end
  end)

  it("lines: one circle per finite point, x on log2, values exact", function()
    local series = {
      { name = "a & b", points = { { x = 1024, y = 1.5 }, { x = 4096, y = 3.25 }, { x = 2 ^ 20, y = 0 } } },
      { name = "c", dashed = true, points = { { x = 7, y = 0 / 0 }, { x = 8, y = 1 / 3 } } },
      { name = "single", points = { { x = 100, y = 2 } } },
    }
    local root = xml_parse(report.svg_lines("lines", series, { xlabel = "x", ylabel = "y" }))
    local pts = with_attr(root, "data-value")
    assert.equal(5, #pts)
    local seen = {}
    for _, p in ipairs(pts) do
      seen[p.attrs["data-series"] .. "@" .. p.attrs["data-x"]] = tonumber(p.attrs["data-value"])
      assert.truthy(child_text(p, "title"))
    end
    assert.equal(1.5, seen["a & b@1024"])
    assert.equal(3.25, seen["a & b@4096"])
    assert.equal(0, seen["a & b@1048576"])
    assert.equal(1 / 3, seen["c@8"])
    assert.equal(2, seen["single@100"])
  end)

  it("survive empty input", function()
    xml_parse(report.svg_bar("empty", {}, {}))
    xml_parse(report.svg_lines("empty", {}, {}))
    xml_parse(report.svg_lines("zeros", { { name = "z", points = { { x = 1, y = 0 }, { x = 2, y = 0 } } } }, {}))
  end)
end)

describe("charts of a results file", function()
  it("matmul: bars are % of cuBLAS at the headline case, lines are TFLOP/s per size", function()
    local doc = via_json(matmul_doc())
    local charts, A = report.charts(doc, "matmul-test")
    assert.equal("m=4096", A.headline)
    local bar = chart(charts, "bar")[1]
    local root = xml_parse(bar.svg)
    local title = child_text(root, "title")
    assert.truthy(title:find("NVIDIA H200", 1, true), title)
    assert.truthy(title:find("2026-11-21", 1, true), title)
    assert.truthy(title:find("4096", 1, true), title)
    -- independent computation from the rows
    local ref
    for _, r in ipairs(doc.rows) do if r.variant == "cublas" and r.m == 4096 then ref = r.tflops end end
    local bars = with_attr(root, "data-value")
    assert.equal(6, #bars) -- 'broken' failed validation: not plotted
    for _, b in ipairs(bars) do
      local v = b.attrs["data-variant"]
      assert.are_not.equal("broken", v)
      local row
      for _, r in ipairs(doc.rows) do if r.variant == v and r.m == 4096 then row = r end end
      assert.truthy(row, v)
      assert.near(row.tflops / ref * 100, tonumber(b.attrs["data-value"]), 1e-9)
      assert.equal(row.tflops, tonumber(b.attrs["data-rate"]))
      assert.equal(row.ms, tonumber(b.attrs["data-ms"]))
    end

    local lines = chart(charts, "lines")
    assert.equal(1, #lines)
    local lroot = xml_parse(lines[1].svg)
    local pts = with_attr(lroot, "data-value")
    local valid = 0
    for _, r in ipairs(doc.rows) do if r.ok ~= false then valid = valid + 1 end end
    assert.equal(valid, #pts)
    for _, p in ipairs(pts) do
      local name = p.attrs["data-series"]:match("^%d+ (.*)$")
      local m = tonumber(p.attrs["data-x"])
      local found
      for _, r in ipairs(doc.rows) do
        if r.variant == name and r.m == m then found = r end
      end
      assert.truthy(found, p.attrs["data-series"] .. " at " .. m)
      assert.equal(found.tflops, tonumber(p.attrs["data-value"]))
    end
  end)

  it("uses a row's own pct when the ladder wrote one, and allows more than 100 %", function()
    local doc = via_json(transpose_doc())
    doc.rows[#doc.rows].pct = 123.456 -- padded at 16384²: the ladder's number wins
    local charts = report.charts(doc, "t")
    local root = xml_parse(chart(charts, "bar")[1].svg)
    local got = {}
    for _, b in ipairs(with_attr(root, "data-value")) do got[b.attrs["data-variant"]] = tonumber(b.attrs["data-value"]) end
    assert.equal(100, got.memcpy)
    assert.near(27, got.naive, 1e-9)
    assert.equal(123.456, got.padded)
  end)

  it("transpose at 336 % of the bound still draws inside the frame", function()
    local charts = report.charts(via_json(transpose_doc()), "t")
    local root = xml_parse(chart(charts, "bar")[1].svg)
    local W = tonumber(root.attrs.width)
    for _, b in ipairs(with_attr(root, "data-value")) do
      local x, w = tonumber(b.attrs.x), tonumber(b.attrs.width)
      assert.truthy(x >= 0 and w >= 0 and x + w <= W, b.attrs["data-variant"])
    end
  end)

  it("reduce: one line chart per reduction kind, cases by shape and dim", function()
    local charts, A = report.charts(via_json(reduce_doc()), "r")
    assert.equal(2, #chart(charts, "lines"))
    assert.equal(6, #A.case_order)
    for _, ch in ipairs(charts) do xml_parse(ch.svg) end
  end)

  it("escapes names in SVG text and attributes", function()
    local doc = via_json(nasty_doc())
    local charts = report.charts(doc, "nasty")
    assert.truthy(#charts >= 2)
    for _, ch in ipairs(charts) do
      local root = xml_parse(ch.svg)
      assert.truthy(child_text(root, "title"):find([[A&B <GPU> "quoted" 'single']], 1, true))
      local names = {}
      for _, nd in ipairs(with_attr(root, "data-value")) do
        names[nd.attrs["data-variant"] or nd.attrs["data-series"]] = true
      end
      local odd = [[v "1" & 'x']]
      assert.truthy(names["ref<&>"] or names["00 ref<&>"])
      assert.truthy(names[odd] or names["01 " .. odd])
    end
  end)

  it("a bound measured in its own case (elementwise memcpy) is the reference of its size", function()
    local N = 1 << 20
    local doc = via_json({ meta = META, ladder = "elementwise", rows = {
      { id = 0, variant = "memcpy", op = "memcpy", shape = { N }, gbps = 4000, correct = true },
      { id = 1, variant = "generic", op = "c = a + b", shape = { N }, gbps = 3000, correct = true },
      { id = 2, variant = "vec4", op = "c = a + b", shape = { N }, gbps = 3900, pct_of_ref = 97.5, correct = true },
      { id = 3, variant = "wrong", op = "c = a + b", shape = { N }, gbps = 9999, correct = false },
    } })
    local charts, A = report.charts(doc, "e")
    assert.equal("c = a + b 1048576", A.headline)
    local root = xml_parse(chart(charts, "bar")[1].svg)
    local got = {}
    for _, b in ipairs(with_attr(root, "data-value")) do got[b.attrs["data-variant"]] = tonumber(b.attrs["data-value"]) end
    assert.same({ memcpy = 100, generic = 75, vec4 = 97.5 }, got)
    assert.equal(1, #with_attr(root, "stroke-dasharray")) -- the 100 % line
  end)

  it("without a reference (host runs) the bars are the rates", function()
    local doc = via_json({ meta = { device = "host", backend = "host", date = "2026-11-21T00:00:00Z" },
      ladder = "reduce", rows = {
        { id = -1, variant = "host", fn = "sum", shape = { 1024 }, dim = "all", gbps = 1.25 },
        { id = -1, variant = "host", fn = "sum", shape = { 4096 }, dim = "all", gbps = 2.5 },
      } })
    local charts = report.charts(doc, "h")
    local bar = chart(charts, "bar")[1]
    assert.equal("rate", bar.measure)
    local bars = with_attr(xml_parse(bar.svg), "data-value")
    assert.equal(1, #bars)
    assert.equal(2.5, tonumber(bars[1].attrs["data-value"]))
    assert.equal(1, #chart(charts, "lines"))
  end)

  it("labels host runs as the host backend", function()
    local doc = transpose_doc()
    doc.meta = { device = "host", backend = "host", date = "2026-11-21T00:00:00Z" }
    local bar = chart(report.charts(via_json(doc), "h"), "bar")[1]
    assert.truthy(child_text(xml_parse(bar.svg), "title"):find("host CPU backend", 1, true))
  end)
end)

describe("report.build / markdown / update_readme", function()
  local dir
  before_each(function()
    dir = tmpdir()
    write_results(dir, {
      ["matmul-nvidia-h200"] = matmul_doc(), ["transpose-nvidia-h200"] = transpose_doc(),
      ["reduce-nvidia-h200"] = reduce_doc(), ["elementwise-nvidia-h200"] = nasty_doc(),
      ["overhead-nvidia-h200"] = { meta = META, ladder = "overhead", us_per_op = 3.25, rows = {} },
    })
    spit(dir .. "/notes.txt", "not json")
  end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("writes the SVGs and an index.html that shows them and the tables", function()
    local out = dir .. "/out"
    local written = report.build(dir, out)
    assert.equal(out .. "/index.html", written[#written])
    local html = slurp(out .. "/index.html")
    local nsvg = 0
    for _, f in ipairs(written) do
      if f:match("%.svg$") then
        nsvg = nsvg + 1
        xml_parse(slurp(f))
        local name = f:match("[^/]+$")
        assert.truthy(html:find('<img src="' .. name .. '"', 1, true), name)
      end
    end
    assert.truthy(nsvg >= 8)
    assert.truthy(html:find("<table>", 1, true))
    assert.truthy(html:find("51.50", 1, true)) -- the cuBLAS row at 8192 is in the full table
    assert.falsy(html:find("<script", 1, true))
    assert.falsy(html:find('<GPU>', 1, true)) -- escaped
  end)

  it("markdown: a table of the headline case and the chart links per ladder", function()
    local md = report.markdown(dir, { link_dir = "bench/results" })
    for _, ladder in ipairs({ "matmul", "reduce", "transpose", "elementwise" }) do
      assert.truthy(md:find("### " .. ladder, 1, true), ladder)
      assert.truthy(md:find("](bench/results/" .. ladder .. "-nvidia-h200-bar.svg)", 1, true), ladder)
    end
    assert.truthy(md:find("| 00 cublas |", 1, true))
    assert.truthy(md:find("% of cublas", 1, true))
    assert.truthy(md:find("us_per_op = 3.250", 1, true)) -- a file without rows shows its numbers
    -- ladder order: matmul first
    assert.truthy(md:find("### matmul", 1, true) < md:find("### reduce", 1, true))
  end)

  it("update_readme rewrites only the text between the markers", function()
    local readme = dir .. "/README.md"
    local before = "# cukern\n\nIntro & text.\n\n" .. report.BEGIN .. "\nold results\n"
    local after = report.END .. "\n\n## API\nmore text <!-- results:end --> trailing\n"
    spit(readme, before .. "stale stuff\n" .. after)
    assert.is_true(report.update_readme(readme, dir))
    local text = slurp(readme)
    local prefix = before:sub(1, #before - #"\nold results\n")
    assert.equal(prefix, text:sub(1, #prefix))
    assert.equal(after, text:sub(-#after))
    assert.truthy(text:find("### matmul", 1, true))
    assert.falsy(text:find("stale stuff", 1, true))
    -- idempotent
    assert.is_false(report.update_readme(readme, dir))
    assert.equal(text, slurp(readme))
  end)

  it("update_readme refuses a file without markers and leaves it alone", function()
    local readme = dir .. "/README.md"
    spit(readme, "# no markers here\n")
    assert.has_error(function() report.update_readme(readme, dir) end)
    assert.equal("# no markers here\n", slurp(readme))
    spit(readme, "x " .. report.END .. " " .. report.BEGIN .. " y\n")
    assert.has_error(function() report.update_readme(readme, dir) end)
  end)

  it("an empty results directory gives an index that says so", function()
    local empty = tmpdir()
    local written = report.build(empty, empty)
    assert.equal(1, #written)
    assert.truthy(slurp(written[1]):find("No results yet", 1, true))
    assert.truthy(report.markdown(empty):find("No GPU results", 1, true))
    os.execute("rm -rf '" .. empty .. "'")
  end)
end)

describe("report modules", function()
  it("the facade hands out the modules' own functions", function()
    assert.equal(svg.bar, report.svg_bar)
    assert.equal(svg.lines, report.svg_lines)
    assert.equal(results.analyse, report.analyse)
    assert.equal(results.load, report.load)
    assert.equal(text.escape, report.escape)
    for _, k in ipairs({ "charts", "headline_items", "series", "headline_rows", "build", "markdown", "update_readme",
      "device_label", "rate_key", "fmt", "size_label" }) do
      assert.is_function(report[k], k)
    end
  end)

  it("report_text: escaping, and numbers that read back exactly", function()
    assert.equal("a&amp;b &lt;c&gt; &quot;d&quot; &apos;e&apos;", text.escape([[a&b <c> "d" 'e']] .. "\1"))
    for _, x in ipairs({ 1 / 3, 93.4, 5e-324, 1.7976931348623157e308, -0.001, 4096, 51.5 }) do
      assert.equal(x, tonumber(text.number(x)))
    end
    assert.equal("4096", text.number(4096.0))
    assert.equal("97.5%", text.pct(97.5))
    assert.equal("-", text.fmt(0 / 0))
    assert.equal("16M", text.size(2 ^ 24))
  end)

  it("report_svg: the bars and points of a results file are its JSON numbers", function()
    local doc = via_json(reduce_doc())
    local A = results.analyse(doc)
    -- every valid row is one point of one line chart, at its size, with its rate
    local drawn = 0
    for _, g in ipairs(A.groups) do
      local root = xml_parse(svg.lines("g", report.series(A, g), {}))
      for _, p in ipairs(with_attr(root, "data-value")) do
        drawn = drawn + 1
        local found = false
        for _, r in ipairs(g.rows) do
          local _, _, size = A.info.case(r)
          if size == tonumber(p.attrs["data-x"]) and r.gbps == tonumber(p.attrs["data-value"]) and
              p.attrs["data-series"]:find(r.variant, 1, true) then
            found = true
          end
        end
        assert.truthy(found, p.attrs["data-series"] .. " @ " .. p.attrs["data-x"])
      end
    end
    assert.equal(#doc.rows, drawn)
  end)

  it("report_files: manifest kept sorted and unique; writes are atomic", function()
    local dir = tmpdir()
    assert.same({}, files.manifest(dir))
    assert(files.record(dir, "b.json"))
    assert(files.record(dir, "a.json"))
    assert(files.record(dir, "b.json"))
    assert.same({ "a.json", "b.json" }, files.manifest(dir))
    assert(files.write(dir .. "/x.txt", "hello"))
    assert.equal("hello", slurp(dir .. "/x.txt"))
    assert.is_false(files.exists(dir .. "/x.txt.tmp"))
    assert.is_nil((files.write(dir .. "/no/such/dir/x", "y")))
    assert.equal([['it'\''s']], files.shell_quote("it's"))
    os.execute("rm -rf " .. files.shell_quote(dir))
  end)
end)

describe("results directories", function()
  local dir
  local host_meta = { device = "host", backend = "host", host_cpu = "Some CPU", date = "2026-11-22T09:00:00Z",
    commit = "def5678" }
  local function host_reduce()
    return { meta = host_meta, ladder = "reduce", rows = {
      { id = -1, variant = "hostvariant", fn = "sum", shape = { 1024 }, dim = "all", gbps = 1.25, ms = 0.003 },
      { id = -1, variant = "hostvariant", fn = "sum", shape = { 4096 }, dim = "all", gbps = 2.5, ms = 0.006 },
    } }
  end
  local function quiet(fn)
    local real = io.stderr
    local said = {}
    io.stderr = { write = function(_, ...) for _, x in ipairs({ ... }) do said[#said + 1] = tostring(x) end end,
      flush = function() end }
    local ok, err = pcall(fn)
    io.stderr = real
    assert(ok, err)
    return table.concat(said)
  end
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf " .. files.shell_quote(dir)) end)

  it("host results never reach the README section or an index of GPU results", function()
    write_results(dir, { ["reduce-nvidia-h200"] = reduce_doc(), ["reduce-host"] = host_reduce() })
    local said = quiet(function()
      local md = report.markdown(dir, { link_dir = "bench/results" })
      assert.truthy(md:find("### reduce — NVIDIA H200", 1, true))
      assert.falsy(md:find("host", 1, true), md)
      assert.falsy(md:find("hostvariant", 1, true))
      local readme = dir .. "/README.md"
      spit(readme, "# x\n" .. report.BEGIN .. "\n" .. report.END .. "\n")
      report.update_readme(readme, dir)
      local section = slurp(readme)
      assert.falsy(section:find("hostvariant", 1, true))
      assert.falsy(section:find("reduce-host", 1, true))
      local written = report.build(dir, dir .. "/out")
      local html = slurp(written[#written])
      assert.truthy(html:find("cub", 1, true))
      assert.falsy(html:find("hostvariant", 1, true))
      assert.falsy(html:find("host CPU backend", 1, true))
      for _, f in ipairs(written) do assert.falsy(f:find("reduce-host", 1, true), f) end
    end)
    assert.truthy(said:find("reduce-host.json", 1, true), "says which file it left out")
  end)

  it("a directory of host results (bench/results/host) gets its own index, still no README section", function()
    write_results(dir, { ["reduce-host"] = host_reduce() })
    local written = report.build(dir, dir)
    local html = slurp(written[#written])
    assert.truthy(html:find("hostvariant", 1, true))
    assert.truthy(html:find("host CPU backend", 1, true))
    local said = quiet(function() assert.truthy(report.markdown(dir):find("No GPU results", 1, true)) end)
    assert.truthy(said:find("leaving out", 1, true))
  end)

  it("the files are the manifest's, or those the directory's last index.html drew; no directory listing", function()
    write_results(dir, { ["matmul-nvidia-h200"] = matmul_doc(), ["transpose-nvidia-h200"] = transpose_doc() })
    spit(dir .. "/stray-nvidia-h200.json", json.encode(reduce_doc())) -- not written through bench: not listed
    local real_popen = io.popen
    io.popen = function(cmd) error("the report shelled out: " .. tostring(cmd)) end
    local ok, err = pcall(function()
      assert.same({ "matmul-nvidia-h200.json", "transpose-nvidia-h200.json" }, results.list(dir))
      local ladders = {}
      for _, d in ipairs(report.load(dir)) do ladders[#ladders + 1] = d.doc.ladder end
      assert.same({ "matmul", "transpose" }, ladders)
      report.build(dir, dir)
      report.markdown(dir)
      -- a directory from before manifest.txt: its index.html names the files it drew
      os.remove(dir .. "/" .. files.MANIFEST)
      assert.same({ "matmul-nvidia-h200.json", "transpose-nvidia-h200.json" }, results.list(dir))
      assert.equal(2, #report.load(dir))
      -- a listed file that is gone is passed over
      os.remove(dir .. "/transpose-nvidia-h200.json")
      assert.equal(1, #report.load(dir))
    end)
    io.popen = real_popen
    assert(ok, err)
  end)
end)
