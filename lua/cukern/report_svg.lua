-- cukern.report_svg: a small generic SVG writer (horizontal bars, lines on a log2 x axis), no dependency.
--
-- Every text and attribute is XML-escaped. Every plotted number is also written as data-value="..." (the
-- shortest decimal that reads back as the plotted double) and in a <title> tooltip, so specs and readers
-- can check a picture against the numbers it was drawn from. Coordinates carry two decimals at most, so
-- files stay small and diff well.
--
--   svg.bar(title, items, opts)    -> svg text   items = {{label=, value=, text=, tooltip=, color=, attrs=}}
--       opts: subtitle, xlabel, unit ("%"), ref (a dashed line, e.g. 100 %), width, value_text(v)
--   svg.lines(title, series, opts) -> svg text
--       series = {{name=, color=, dashed=, points={{x=, y=, tooltip=, attrs=}}}}
--       opts: subtitle, xlabel, ylabel, width, height, xlog2 (default true), xfmt(x), yunit
--   svg.PALETTE, svg.REF_COLOR     the colours (Tableau 10 and more; the reference is drawn dark grey)

local text = require "cukern.report_text"

local svg = {}

svg.PALETTE = {
  "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
  "#9c755f", "#2f4b7c", "#a05195", "#d45087", "#665191", "#ffa600", "#003f5c", "#7a9e3a",
}
svg.REF_COLOR = "#333333"
local PALETTE = svg.PALETTE
local FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
local esc = text.escape

-- Coordinates: two decimals are plenty and keep files diff-friendly.
local function c(v)
  local s = string.format("%.2f", v):gsub("0+$", ""):gsub("%.$", "")
  if s == "-0" then s = "0" end
  return s
end

local function text_width(s, size)
  return (utf8.len(tostring(s)) or #tostring(s)) * size * 0.58
end

-- 1 2 2.5 5 steps: axis limits and ticks that a person can read.
local function nice_step(range, nticks)
  if range <= 0 then return 1 end
  local raw = range / nticks
  local p = 10 ^ math.floor(math.log(raw, 10))
  for _, m in ipairs({ 1, 2, 2.5, 5, 10 }) do
    if raw <= m * p * 1.0000001 then return m * p end
  end
  return 10 * p
end

local function svg_open(w, h, title)
  return {
    string.format('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" ' ..
      'font-family="%s" font-size="13" role="img">', w, h, w, h, esc(FONT)),
    "<title>" .. esc(title) .. "</title>",
    string.format('<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>', w, h),
  }
end

-- <line> from (x1, y1) to (x2, y2); `more`: further attributes, as written.
local function line(x1, y1, x2, y2, stroke, more)
  return string.format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"%s/>', c(x1), c(y1), c(x2), c(y2), stroke,
    more or "")
end

-- <text> at (x, y) with the escaped string s; `more`: its other attributes, as written.
local function label(x, y, s, more)
  return string.format('<text x="%s" y="%s"%s>%s</text>', c(x), c(y), more or "", esc(s))
end

local MIDDLE = ' text-anchor="middle"'
local AXIS_LABEL = ' text-anchor="middle" font-size="13" fill="#222"'

local function svg_heading(out, title, subtitle)
  out[#out + 1] = label(16, 24, title, ' font-size="16" font-weight="bold" fill="#111"')
  if subtitle and subtitle ~= "" then out[#out + 1] = label(16, 44, subtitle, ' font-size="12.5" fill="#555"') end
end

-- The axes' lines, left (from y0 down) and bottom, and the x axis's label centred at height ylab.
local function frame(out, left, y0, pw, bottom, xlabel, ylab)
  out[#out + 1] = line(left, y0, left, bottom, "#888")
  out[#out + 1] = line(left, bottom, left + pw, bottom, "#888")
  if xlabel then out[#out + 1] = label(left + pw / 2, ylab, xlabel, AXIS_LABEL) end
end

local function attrs_str(attrs)
  if not attrs then return "" end
  local keys = {}
  for k in pairs(attrs) do keys[#keys + 1] = k end
  table.sort(keys)
  local p = {}
  for _, k in ipairs(keys) do
    local v = attrs[k]
    if type(v) == "number" then v = text.number(v) end
    p[#p + 1] = string.format(' %s="%s"', k, esc(v))
  end
  return table.concat(p)
end

-- Horizontal bars, one per item, with a dashed reference line (opts.ref, e.g. 100 %).
-- opts: subtitle, xlabel, unit ("%"), ref, width, value_text(v) -> string
function svg.bar(title, items, opts)
  opts = opts or {}
  local W = opts.width or 820
  local unit = opts.unit or "%"
  local value_text = opts.value_text or function(v)
    if unit == "%" then return text.pct(v) end
    return text.fmt(v) .. " " .. unit
  end
  local labelw = 40
  for _, it in ipairs(items) do labelw = math.max(labelw, text_width(it.label or "", 13)) end
  local left = math.floor(math.min(labelw, 320) + 24)
  local right = 40
  for _, it in ipairs(items) do
    local v = text.num(it.value)
    right = math.max(right, text_width(it.text or (v and value_text(v)) or "n/a", 13) + 16)
  end
  right = math.floor(math.min(right, W * 0.4))
  local top = (opts.subtitle and opts.subtitle ~= "") and 64 or 48
  local rowh, barh = 26, 18
  local ph = math.max(1, #items) * rowh
  local H = top + ph + 56
  local pw = W - left - right

  local vmax = opts.ref or 0
  for _, it in ipairs(items) do
    local v = text.num(it.value)
    if v and v > vmax then vmax = v end
  end
  if vmax <= 0 then vmax = 1 end
  local step = nice_step(vmax, 5)
  local xmax = math.ceil(vmax / step - 1e-9) * step
  local function X(v) return left + math.max(0, v) / xmax * pw end

  local out = svg_open(W, H, title)
  svg_heading(out, title, opts.subtitle)

  -- grid and ticks
  out[#out + 1] = '<g class="axis" font-size="12" fill="#444">'
  local t = 0
  while t <= xmax + step * 1e-6 do
    out[#out + 1] = line(X(t), top - 4, X(t), top + ph, "#e3e3e3")
    out[#out + 1] = label(X(t), top + ph + 18, text.tick(t) .. (unit == "%" and "%" or ""), MIDDLE)
    t = t + step
  end
  frame(out, left, top - 4, pw, top + ph, opts.xlabel, top + ph + 40)
  out[#out + 1] = "</g>"

  if opts.ref then
    local x = X(opts.ref)
    out[#out + 1] = string.format('<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#111" ' ..
      'stroke-width="1.2" stroke-dasharray="5,4"/>', c(x), c(top - 6), c(x), c(top + ph))
  end

  -- bars (value text with a white halo, so it stays readable across the reference line)
  out[#out + 1] = '<g class="bars">'
  for i, it in ipairs(items) do
    local y = top + (i - 1) * rowh + (rowh - barh) / 2
    local v = text.num(it.value)
    local name = tostring(it.label or "")
    out[#out + 1] = label(left - 8, y + barh - 4, name, ' text-anchor="end" fill="#222"')
    if v then
      local tip = it.tooltip or (name .. ": " .. value_text(v))
      local w = X(v) - left
      out[#out + 1] = string.format('<rect class="bar" x="%s" y="%s" width="%s" height="%d" fill="%s" ' ..
        'data-label="%s" data-value="%s"%s><title>%s</title></rect>', c(left), c(y), c(w), barh,
        esc(it.color or PALETTE[1]), esc(name), text.number(v), attrs_str(it.attrs), esc(tip))
      out[#out + 1] = label(left + w + 5, y + barh - 4, it.text or value_text(v),
        ' fill="#222" stroke="#fff" stroke-width="3" paint-order="stroke"')
    else
      out[#out + 1] = label(left + 5, y + barh - 4, it.text or "n/a", ' fill="#999" font-style="italic"')
    end
  end
  out[#out + 1] = "</g>"

  out[#out + 1] = "</svg>"
  return table.concat(out, "\n") .. "\n"
end

-- Lines of y vs x, x on a log2 axis (opts.xlog2 ~= false), y linear from 0.
-- opts: subtitle, xlabel, ylabel, width, height, xfmt(x) -> tick text, yunit (tooltip unit)
function svg.lines(title, series, opts)
  opts = opts or {}
  local W, H = opts.width or 820, opts.height or 460
  local xlog = opts.xlog2 ~= false
  local xfmt = opts.xfmt or text.size
  local yunit = opts.yunit or ""

  local legw = 60
  for _, s in ipairs(series) do legw = math.max(legw, text_width(s.name or "", 12.5) + 34) end
  legw = math.min(legw, 260)
  local top = (opts.subtitle and opts.subtitle ~= "") and 66 or 50
  local left, right, bottom = 72, legw + 20, 58
  local pw, ph = W - left - right, H - top - bottom

  local xs_min, xs_max, ymax = math.huge, -math.huge, 0
  for _, s in ipairs(series) do
    for _, p in ipairs(s.points or {}) do
      local x, y = text.num(p.x), text.num(p.y)
      if x and y and (not xlog or x > 0) then
        local xv = xlog and math.log(x, 2) or x
        xs_min, xs_max = math.min(xs_min, xv), math.max(xs_max, xv)
        ymax = math.max(ymax, y)
      end
    end
  end
  if xs_min == math.huge then xs_min, xs_max = 0, 1 end
  if xs_max - xs_min < 1e-9 then xs_min, xs_max = xs_min - 1, xs_max + 1 end
  if ymax <= 0 then ymax = 1 end
  ymax = ymax * 1.04 -- headroom: the top point is not drawn on the frame
  local ystep = nice_step(ymax, 5)
  local ytop = math.ceil(ymax / ystep - 1e-9) * ystep
  local span = xs_max - xs_min
  local pad = span * 0.04
  local x0, x1 = xs_min - pad, xs_max + pad
  local function X(x)
    local xv = xlog and math.log(x, 2) or x
    return left + (xv - x0) / (x1 - x0) * pw
  end
  local function Y(y) return top + ph - y / ytop * ph end

  local out = svg_open(W, H, title)
  svg_heading(out, title, opts.subtitle)

  out[#out + 1] = '<g class="axis" font-size="12" fill="#444">'
  local yt = 0
  while yt <= ytop + ystep * 1e-6 do
    out[#out + 1] = line(left, Y(yt), left + pw, Y(yt), "#e3e3e3")
    out[#out + 1] = label(left - 6, Y(yt) + 4, text.tick(yt), ' text-anchor="end"')
    yt = yt + ystep
  end
  -- x ticks: every power of two in range, thinned to at most ~10
  if xlog then
    local e0, e1 = math.ceil(xs_min - 1e-9), math.floor(xs_max + 1e-9)
    local every = math.max(1, math.ceil((e1 - e0 + 1) / 10))
    for e = e0, e1 do
      if (e - e0) % every == 0 then
        out[#out + 1] = line(X(2 ^ e), top, X(2 ^ e), top + ph, "#efefef")
        out[#out + 1] = label(X(2 ^ e), top + ph + 18, xfmt(2 ^ e), MIDDLE)
      end
    end
  else
    local xstep = nice_step(xs_max - xs_min, 6)
    local xt = math.ceil(xs_min / xstep) * xstep
    while xt <= xs_max + 1e-9 do
      out[#out + 1] = label(X(xt), top + ph + 18, xfmt(xt), MIDDLE)
      xt = xt + xstep
    end
  end
  frame(out, left, top, pw, top + ph, opts.xlabel, H - 14)
  if opts.ylabel then
    out[#out + 1] = label(18, top + ph / 2, opts.ylabel,
      string.format('%s transform="rotate(-90 %s %s)"', AXIS_LABEL, c(18), c(top + ph / 2)))
  end
  out[#out + 1] = "</g>"

  -- series
  for si, s in ipairs(series) do
    local color = s.color or PALETTE[(si - 1) % #PALETTE + 1]
    local pts = {}
    for _, p in ipairs(s.points or {}) do
      local x, y = text.num(p.x), text.num(p.y)
      if x and y and (not xlog or x > 0) then pts[#pts + 1] = { x = x, y = y, tooltip = p.tooltip, attrs = p.attrs } end
    end
    table.sort(pts, function(a, b) return a.x < b.x end)
    out[#out + 1] = string.format('<g class="series" data-series="%s">', esc(s.name or ""))
    if #pts > 1 then
      local coords = {}
      for i, p in ipairs(pts) do coords[i] = c(X(p.x)) .. "," .. c(Y(p.y)) end
      out[#out + 1] = string.format('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>',
        table.concat(coords, " "), esc(color), s.dashed and ' stroke-dasharray="6,4"' or "")
    end
    for _, p in ipairs(pts) do
      local tip = p.tooltip or string.format("%s: %s %s at %s", s.name or "", text.fmt(p.y), yunit, xfmt(p.x))
      out[#out + 1] = string.format('<circle cx="%s" cy="%s" r="3.5" fill="%s" data-series="%s" data-x="%s" ' ..
        'data-value="%s"%s><title>%s</title></circle>', c(X(p.x)), c(Y(p.y)), esc(color), esc(s.name or ""),
        text.number(p.x), text.number(p.y), attrs_str(p.attrs), esc(tip))
    end
    out[#out + 1] = "</g>"
  end

  -- legend
  out[#out + 1] = '<g class="legend" font-size="12.5" fill="#222">'
  local lx = left + pw + 18
  for si, s in ipairs(series) do
    local ly = top + 6 + (si - 1) * 20
    local color = s.color or PALETTE[(si - 1) % #PALETTE + 1]
    local dash = s.dashed and ' stroke-dasharray="5,3"' or ""
    out[#out + 1] = line(lx, ly, lx + 20, ly, esc(color), ' stroke-width="3"' .. dash)
    out[#out + 1] = label(lx + 26, ly + 4, s.name or "")
  end
  out[#out + 1] = "</g>"
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n") .. "\n"
end

return svg
