-- cukern.report_readme: the README's "Results on the GPU host" section — per GPU results file its headline
-- table and links to its charts — written between two markers; nothing else in the README changes.
-- Host results (meta.backend "host") are never part of it, even in a directory that holds some.
--
--   readme.markdown(results_dir [, {link_dir=}])   -> the section's markdown
--   readme.update(readme_path, results_dir [, opts]) rewrites the text between readme.BEGIN and readme.END;
--                                                   true if the file changed

local charts = require "cukern.report_charts"
local files = require "cukern.report_files"
local results = require "cukern.report_results"
local tables = require "cukern.report_tables"

local readme = {}

readme.BEGIN = "<!-- results:begin -->"
readme.END = "<!-- results:end -->"

-- The README section: per results file, the headline table and links to its charts.
-- opts.link_dir: how the README reaches the SVGs (default: results_dir as given).
function readme.markdown(results_dir, opts)
  opts = opts or {}
  results_dir = results_dir or "bench/results"
  local link = (opts.link_dir or results_dir):gsub("^%./", ""):gsub("/+$", "")
  -- the GPU host's section: host results never appear here, whatever the directory holds
  local docs = results.load(results_dir, { backend = "cuda" })
  if #docs == 0 then
    return "_No GPU results committed yet: run `make demo` on a GPU host, then `make report`._"
  end
  -- the newest run's commit: sections from other commits say that they are older runs
  local newest, newest_date = nil, ""
  for _, d in ipairs(docs) do
    local m = d.doc.meta or {}
    local date = tostring(m.date or "")
    if date > newest_date then newest, newest_date = m.commit, date end
  end
  local out = {}
  for _, d in ipairs(docs) do
    local drawn, A = charts.charts(d.doc, d.base)
    out[#out + 1] = string.format("### %s — %s", A.ladder, results.device_label(A.meta))
    out[#out + 1] = ""
    local keys = #A.headlines > 0 and A.headlines or {A.headline}
    local cs = A.cases[A.headline]
    local p = {}
    if cs then
      local labels = {}
      for _, k in ipairs(keys) do labels[#labels + 1] = "**" .. A.cases[k].label .. "**" end
      p[#p + 1] = (#labels > 1 and "Headline cases " or "Headline case ") .. table.concat(labels, " and ")
    end
    p[#p + 1] = results.date_of(A.meta)
    if A.meta.nvidia_driver then p[#p + 1] = "driver " .. tostring(A.meta.nvidia_driver) end
    if A.meta.driver then p[#p + 1] = "CUDA driver API " .. tostring(A.meta.driver) end
    if A.meta.runtime then p[#p + 1] = "CUDA runtime " .. tostring(A.meta.runtime) end
    if A.meta.commit then p[#p + 1] = "commit `" .. tostring(A.meta.commit) .. "`" end
    if newest and A.meta.commit and A.meta.commit ~= newest then
      p[1] = "_An older run (not re-run at `" .. tostring(newest) .. "`)._ " .. p[1]
    end
    if #d.doc.rows > 0 then
      p[#p + 1] = string.format("[all %d rows](%s/index.html#%s)", #d.doc.rows, link, d.base)
    end
    out[#out + 1] = table.concat(p, " · ") .. "."
    out[#out + 1] = ""
    if #d.doc.rows == 0 then
      local kv = {}
      for _, e in ipairs(tables.scalars(d.doc)) do kv[#kv + 1] = e[1] .. " = " .. tables.md_cell(e[2]) end
      if #kv > 0 then
        out[#out + 1] = table.concat(kv, " · ")
        out[#out + 1] = ""
      end
    end
    for _, k in ipairs(cs and keys or {}) do
      if #keys > 1 then
        out[#out + 1] = "**" .. A.cases[k].label .. "**"
        out[#out + 1] = ""
      end
      out[#out + 1] = tables.markdown(A, results.headline_rows(A, k), true)
      out[#out + 1] = ""
    end
    for _, ch in ipairs(drawn) do
      out[#out + 1] = string.format("![%s](%s/%s)", (ch.title:gsub("[%[%]]", "")), link, ch.name)
    end
    out[#out + 1] = ""
  end
  return (table.concat(out, "\n"):gsub("%s+$", ""))
end

-- Replace what lies between the markers; nothing else in the file changes. Returns true if it wrote.
function readme.update(readme_path, results_dir, opts)
  local text = files.read(readme_path)
  if not text then error("report.update_readme: cannot read " .. tostring(readme_path), 2) end
  local b0, b1 = text:find(readme.BEGIN, 1, true)
  if not b0 then error("report.update_readme: no " .. readme.BEGIN .. " marker in " .. readme_path, 2) end
  local e0 = text:find(readme.END, b1 + 1, true)
  if not e0 then error("report.update_readme: no " .. readme.END .. " marker after the begin marker in " ..
    readme_path, 2) end
  local md = readme.markdown(results_dir, opts)
  local new = text:sub(1, b1) .. "\n" .. md .. "\n" .. text:sub(e0)
  if new == text then return false end
  local ok, err = files.write(readme_path, new)
  if not ok then error("report.update_readme: cannot write " .. readme_path .. ": " .. tostring(err), 2) end
  return true
end

return readme
