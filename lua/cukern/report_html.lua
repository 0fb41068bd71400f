-- cukern.report_html: the static index.html of a results directory — per results file its charts (SVG files
-- written next to it), the headline table and all rows, with the device, driver and commit they came from.
-- No script, no external resource: the page works from a file:// URL and from the repository browser.
--
--   html.build(results_dir [, out_dir [, {backend=}]])   -> list of written files, index.html last

local json = require "cukern.json"
local charts = require "cukern.report_charts"
local files = require "cukern.report_files"
local results = require "cukern.report_results"
local tables = require "cukern.report_tables"
local text = require "cukern.report_text"

local html = {}

local esc = text.escape

local function write_or_fail(path, ok, err)
  if not ok then error("report: cannot write " .. tostring(path) .. ": " .. tostring(err), 0) end
end

local CSS = [[
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { margin-top: 2.2em; border-bottom: 1px solid #ddd; padding-bottom: .2em; }
.meta { color: #555; font-size: .92em; }
img { max-width: 100%; height: auto; display: block; margin: 1em 0; border: 1px solid #eee; }
table { border-collapse: collapse; margin: .8em 0; font-size: .9em; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: left; white-space: nowrap; }
th { background: #f4f4f4; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.ref td { background: #f7f7f7; font-weight: 600; } tr.failed td { color: #b00; }
details { margin: .5em 0 1.5em; } summary { cursor: pointer; color: #245; }
.host { background: #fff4d6; border: 1px solid #e8c46a; padding: .4em .8em; display: inline-block; }
]]

local function meta_line(meta)
  local p = {}
  local function add(k, label)
    local v = meta[k]
    if v ~= nil and v ~= json.null then p[#p + 1] = label .. " " .. tostring(v) end
  end
  add("device", "device")
  add("cc", "cc")
  add("nvidia_driver", "driver")
  add("driver", "CUDA driver API")
  add("runtime", "CUDA runtime")
  add("date", "date")
  add("commit", "commit")
  add("host", "host")
  add("cukern", "cukern")
  return table.concat(p, " · ")
end

-- SVGs next to index.html in out_dir (default: the results directory itself, so they are committed with
-- the JSON). opts.backend: "auto" (default: the GPU results if the directory has any, else its host
-- results), "cuda" or "host". Returns the list of written paths; index.html is the last.
function html.build(results_dir, out_dir, opts)
  results_dir = results_dir or "bench/results"
  out_dir = out_dir or results_dir
  write_or_fail(out_dir, files.mkdir(out_dir))
  local docs = results.load(results_dir, { backend = opts and opts.backend or "auto" })
  local written = {}
  local page = {
    "<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    "<title>cukern benchmark results</title>", "<style>", CSS, "</style></head><body>",
    "<h1>cukern benchmark results</h1>",
    string.format('<p class="meta">%d results file%s from <code>%s</code>, report built %s.</p>', #docs,
      #docs == 1 and "" or "s", esc(results_dir), esc(os.date("!%Y-%m-%dT%H:%M:%SZ"))),
  }
  if #docs == 0 then
    page[#page + 1] = "<p>No results yet: run <code>make demo</code> (on a GPU host for GPU numbers).</p>"
  else
    page[#page + 1] = "<ul>"
    for _, d in ipairs(docs) do
      page[#page + 1] = string.format('<li><a href="#%s">%s — %s</a></li>', esc(d.base), esc(d.doc.ladder),
        esc(results.device_label(d.doc.meta)))
    end
    page[#page + 1] = "</ul>"
  end
  for _, d in ipairs(docs) do
    local drawn, A = charts.charts(d.doc, d.base)
    page[#page + 1] = string.format('<section id="%s">', esc(d.base))
    page[#page + 1] = string.format("<h2>%s — %s</h2>", esc(A.ladder), esc(results.device_label(A.meta)))
    if results.is_host(A.meta) then
      page[#page + 1] = '<p class="host">Host CPU backend at small sizes: a functional run, not GPU performance.</p>'
    end
    page[#page + 1] = string.format('<p class="meta">%s · source <code>%s</code></p>', esc(meta_line(A.meta)),
      esc(d.base .. ".json"))
    for _, ch in ipairs(drawn) do
      local path = out_dir .. "/" .. ch.name
      write_or_fail(path, files.write(path, ch.svg))
      written[#written + 1] = path
      page[#page + 1] = string.format('<img src="%s" alt="%s">', esc(ch.name), esc(ch.title))
    end
    local cs = A.cases[A.headline]
    if cs then
      page[#page + 1] = string.format("<h3>%s</h3>", esc(cs.label))
      page[#page + 1] = tables.html(A, results.headline_rows(A), true)
    end
    if #d.doc.rows > 0 then
      page[#page + 1] = string.format("<details><summary>all %d rows (%d cases)</summary>", #(d.doc.rows),
        #A.case_order)
      page[#page + 1] = tables.html(A, d.doc.rows)
      page[#page + 1] = "</details>"
    else
      page[#page + 1] = "<table><tbody>"
      for _, kv in ipairs(tables.scalars(d.doc)) do
        page[#page + 1] = string.format("<tr><th>%s</th><td>%s</td></tr>", esc(kv[1]), esc(kv[2]))
      end
      page[#page + 1] = "</tbody></table>"
    end
    page[#page + 1] = "</section>"
  end
  page[#page + 1] = "</body></html>"
  local index = out_dir .. "/index.html"
  write_or_fail(index, files.write(index, table.concat(page, "\n") .. "\n"))
  written[#written + 1] = index
  return written
end

return html
