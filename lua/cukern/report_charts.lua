-- cukern.report_charts: what to draw for one results file. The model (cukern.report_results) says what the
-- numbers are; this module picks the charts and hands them to the SVG writer (cukern.report_svg):
--   a bar chart of the headline case: % of the reference per variant (the rates where no reference ran),
--   a line chart of the rate against size per group (dtype, reduction, op), where there is more than one size.
--
--   charts.charts(doc, base)       -> {{kind="bar"|"lines", name=base.."-bar.svg"|..., title=, svg=, ...}}, A
--   charts.headline_items(A)       -> bar items of the headline case, its case
--   charts.series(A, group)        -> line series of a group

local results = require "cukern.report_results"
local svg = require "cukern.report_svg"
local text = require "cukern.report_text"

local charts = {}

local variant_name, failed, date_of = results.variant_name, results.failed, results.date_of
local reference_title = results.reference_title

-- Bar items of the headline case: % of the reference per variant.
function charts.headline_items(A)
  local cs = A.cases[A.headline]
  local items = {}
  if not cs then return items, nil end
  local byname = {}
  for _, r in ipairs(cs.rows) do
    local name = variant_name(r)
    if not byname[name] or (failed(byname[name]) and not failed(r)) then byname[name] = r end
  end
  if cs.ref and not byname[variant_name(cs.ref)] then byname[variant_name(cs.ref)] = cs.ref end
  for _, v in ipairs(A.variants) do
    local r = byname[v.name]
    if r then
      local p, rate = A.pct(r), A.rate(r)
      local value_text
      if failed(r) then
        value_text = "failed validation"
      elseif p then
        value_text = text.pct(p) .. (rate and ("  (" .. text.fmt(rate) .. " " .. A.unit .. ")") or "")
      end
      local facts = {}
      if failed(r) then facts[#facts + 1] = "failed validation" end
      if p then facts[#facts + 1] = text.pct(p) .. " of " .. reference_title(A) end
      if rate then facts[#facts + 1] = text.fmt(rate) .. " " .. A.unit end
      if text.num(r.ms) then facts[#facts + 1] = text.fmt(r.ms) .. " ms" end
      local tip = string.format("%s, %s: %s", v.label, cs.label, table.concat(facts, ", "))
      items[#items + 1] = {
        label = v.label, value = p, text = value_text, tooltip = tip, color = v.color,
        attrs = { ["data-variant"] = v.name, ["data-rate"] = rate, ["data-ms"] = text.num(r.ms) },
      }
    end
  end
  return items, cs
end

function charts.series(A, group)
  local series = {}
  for _, v in ipairs(A.variants) do
    local pts = {}
    for _, r in ipairs(group.rows) do
      if variant_name(r) == v.name then
        local _, label, size = A.info.case(r)
        local rate = A.rate(r)
        if size and rate then
          pts[#pts + 1] = {
            x = size, y = rate,
            tooltip = string.format("%s, %s: %s %s", v.label, label, text.fmt(rate), A.unit),
            attrs = { ["data-case"] = label },
          }
        end
      end
    end
    if #pts > 0 then
      series[#series + 1] = { name = v.label, color = v.color, dashed = v.reference, points = pts }
    end
  end
  return series
end

-- Chart titles name the device and date; the subtitle adds driver, runtime and commit.
local function titles(A)
  local dev = results.device_label(A.meta)
  local sub = {}
  sub[#sub + 1] = dev
  if A.meta.nvidia_driver then sub[#sub + 1] = "driver " .. tostring(A.meta.nvidia_driver) end
  if A.meta.driver then sub[#sub + 1] = "CUDA driver API " .. tostring(A.meta.driver) end
  if A.meta.runtime then sub[#sub + 1] = "CUDA " .. tostring(A.meta.runtime) end
  sub[#sub + 1] = date_of(A.meta)
  if A.meta.commit then sub[#sub + 1] = "commit " .. tostring(A.meta.commit) end
  return dev, table.concat(sub, " · ")
end

-- The charts of one document as {{name=, svg=, kind="bar"|"lines", title=}}; names come from `base`.
function charts.charts(doc, base)
  local A = results.analyse(doc)
  local dev, sub = titles(A)
  local out = {}
  local items, cs = charts.headline_items(A)
  local any_pct = false
  for _, it in ipairs(items) do if it.value then any_pct = true end end
  if cs and #items > 0 and any_pct then
    local title = string.format("%s: %% of %s at %s — %s, %s", A.ladder, reference_title(A), cs.label, dev,
      date_of(A.meta))
    out[#out + 1] = {
      kind = "bar", name = base .. "-bar.svg", title = title, measure = "pct",
      svg = svg.bar(title, items, {
        subtitle = sub, ref = cs.ref and 100 or nil, unit = "%",
        xlabel = string.format("%% of %s (%s; higher is better)", reference_title(A), A.unit),
      }),
    }
  elseif cs and #items > 0 then
    -- no reference measured (e.g. a host run): the rates themselves
    local any_rate = false
    for _, it in ipairs(items) do
      it.value = it.attrs["data-rate"]
      it.text = nil
      if it.value then any_rate = true end
    end
    if any_rate then
      local title = string.format("%s: %s at %s — %s, %s", A.ladder, A.unit, cs.label, dev, date_of(A.meta))
      out[#out + 1] = {
        kind = "bar", name = base .. "-bar.svg", title = title, measure = "rate",
        svg = svg.bar(title, items, {
          subtitle = sub, unit = A.unit, xlabel = A.unit .. " (higher is better; no reference in this run)",
        }),
      }
    end
  end
  local multi = 0
  for _, g in ipairs(A.groups) do if g.nsizes > 1 then multi = multi + 1 end end
  for _, g in ipairs(A.groups) do
    if g.nsizes > 1 then
      local series = charts.series(A, g)
      if #series > 0 then
        local gname = g.name ~= "" and (" (" .. g.name .. ")") or ""
        local title = string.format("%s: %s vs size%s — %s, %s", A.ladder, A.unit, gname, dev, date_of(A.meta))
        local suffix = multi > 1 and ("-" .. (g.name:lower():gsub("[^%w]+", "-"):gsub("^%-+", ""):gsub("%-+$", ""))) or ""
        if suffix == "-" then suffix = "-" .. #out end
        out[#out + 1] = {
          kind = "lines", name = base .. "-lines" .. suffix .. ".svg", title = title, group = g.name,
          svg = svg.lines(title, series, {
            subtitle = sub, xlabel = A.info.xlabel, ylabel = A.unit .. " (higher is better)", yunit = A.unit,
            xfmt = A.ladder == "matmul" and text.tick or text.size,
          }),
        }
      end
    end
  end
  return out, A
end

return charts
