-- cukern.report: results JSON -> SVG charts, a static index.html and the README's results section.
--
-- Pure Lua with no dependency and no C module, so reports build anywhere (CI, a laptop) from the JSON
-- committed by GPU runs. This module is the front door; the work is done by small modules, one job each:
--   cukern.report_results   the results model: reading a results directory, ladder knowledge (cases, the
--                           reference, % of it, the headline case, line-chart groups), GPU vs host runs
--   cukern.report_charts    what to draw for one results file
--   cukern.report_svg       a generic SVG writer (bars, lines), XML-escaped, every value as data-value
--   cukern.report_tables    the tables of a results file, HTML and markdown
--   cukern.report_html      index.html
--   cukern.report_readme    the README section between the markers
--   cukern.report_text      number formatting and escaping;  cukern.report_files  atomic writes, manifest.txt
--
-- The results files of a directory are the ones named in its manifest.txt (bench.write_json keeps it) or
-- drawn by its last index.html; nothing lists a directory. Host results (meta.backend "host", written
-- under bench/results/host/) never reach the README's GPU section, nor an index.html of GPU results.
--
--   report.svg_bar(title, items, opts)     -> svg string   items = {{label=, value=, text=, tooltip=, color=}}
--   report.svg_lines(title, series, opts)  -> svg string   series = {{name=, color=, dashed=, points={{x=,y=}}}}
--   report.analyse(doc)                    -> A: cases, headline, variants, groups (what the charts show)
--   report.charts(doc, base)               -> {{kind=, name=, title=, svg=}}, A
--   report.load(results_dir [, opts])      -> list of {path=, base=, doc=}   opts.backend = "cuda"|"host"|"auto"
--   report.build(results_dir [, out_dir [, opts]]) -> list of written files (SVGs, then index.html)
--   report.markdown(results_dir [, opts])  -> README section (markdown, GPU results only)
--   report.update_readme(readme_path, results_dir [, opts]) rewrites only the text between the markers

local charts = require "cukern.report_charts"
local html = require "cukern.report_html"
local readme = require "cukern.report_readme"
local results = require "cukern.report_results"
local svg = require "cukern.report_svg"
local text = require "cukern.report_text"

return {
  BEGIN = readme.BEGIN,
  END = readme.END,
  -- drawing
  svg_bar = svg.bar,
  svg_lines = svg.lines,
  escape = text.escape,
  fmt = text.fmt,
  size_label = text.size,
  -- the model
  analyse = results.analyse,
  load = results.load,
  list = results.list,
  headline_rows = results.headline_rows,
  device_label = results.device_label,
  rate_key = results.rate_key,
  -- charts of one file
  charts = charts.charts,
  headline_items = charts.headline_items,
  series = charts.series,
  -- output
  build = html.build,
  markdown = readme.markdown,
  update_readme = readme.update,
}
