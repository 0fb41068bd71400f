-- cukern.report_tables: the tables of a results file, as HTML (index.html) and as markdown (the README).
-- One column set serves both: the variant, the case fields the rows have (all rows' tables only), times,
-- the rate, % of the reference, the main kernel's registers / shared memory / occupancy (GPU results that
-- recorded them: bench.kernel_fields) and notes (failed validation, fallbacks).
--
--   tables.html(A, rows [, headline])       -> <table>...</table>
--   tables.markdown(A, rows [, headline])   -> | ... | lines
--   tables.scalars(doc)                      -> {{key, text}} of a file's top-level numbers (files without rows)
--   tables.md_cell(s)                        a markdown table cell (| escaped, one line)
-- headline=true: the headline case's rows (results.headline_rows), bound first, no case columns.

local json = require "cukern.json"
local results = require "cukern.report_results"
local text = require "cukern.report_text"

local tables = {}

local esc = text.escape
local variant_name, failed, reference_title = results.variant_name, results.failed, results.reference_title
local shape_of, shape_str, dim_str = results.shape_of, results.shape_str, results.dim_str

-- Table columns for the rows of a ladder: the case fields it has, then times, rate, % of reference.
local CASE_FIELDS = { "m", "n", "k", "fn", "op", "shape", "dim", "dtype" }

local function columns(A, rows, headline)
  local has = {}
  for _, r in ipairs(rows) do for k in pairs(r) do has[k] = true end end
  local cols = { { title = "variant", get = function(r) return A.variant[variant_name(r)].label end } }
  for _, f in ipairs(headline and {} or CASE_FIELDS) do
    if has[f] and not (f == "n" and A.ladder ~= "matmul" and has.shape) then
      cols[#cols + 1] = {
        title = f,
        get = function(r)
          local v = r[f]
          if f == "shape" then return shape_str(shape_of(r)) end
          if f == "dim" then return dim_str(r) end
          if v == nil or v == json.null then return "" end
          return tostring(v)
        end,
      }
    end
  end
  if has.ms then
    cols[#cols + 1] = { title = "ms (median)", num = true, get = function(r) return text.fmt(r.ms) end }
  end
  if has.q1 and has.q3 then
    cols[#cols + 1] = { title = "q1–q3 ms", num = true, get = function(r)
      if text.num(r.q1) and text.num(r.q3) then return text.fmt(r.q1) .. "–" .. text.fmt(r.q3) end
      return "-"
    end }
  end
  cols[#cols + 1] = { title = A.unit, num = true, get = function(r) return text.fmt(A.rate(r)) end }
  cols[#cols + 1] = { title = "% of " .. reference_title(A), num = true, get = function(r) return text.pct(A.pct(r)) end }
  if has.regs or has.kernel then -- "library" rows (cuBLAS, CUB, geam) have no kernel of ours to describe
    local function int(k) return function(r) return text.num(r[k]) and string.format("%d", r[k]) or "-" end end
    cols[#cols + 1] = { title = "regs", num = true, get = function(r)
      return text.num(r.regs) and string.format("%d", r.regs) or (r.kernel == "library" and "library" or "-")
    end }
    cols[#cols + 1] = { title = "smem B", num = true, get = int("smem") }
    cols[#cols + 1] = { title = "occupancy", num = true, get = function(r)
      return text.num(r.occ) and string.format("%.0f%%", 100 * r.occ) or "-"
    end }
    if has.spill then cols[#cols + 1] = { title = "spill B", num = true, get = int("spill") } end
  end
  local function note(r)
    local p = {}
    if failed(r) then p[#p + 1] = "FAILED" .. (type(r.error) == "string" and (": " .. r.error) or "") end
    if type(r.ran) == "string" and r.ran ~= variant_name(r) then p[#p + 1] = "ran " .. r.ran end
    if type(r.ran_note) == "string" and r.ran_note ~= "" then p[#p + 1] = r.ran_note end
    if r.note ~= nil and r.note ~= json.null and r.note ~= "" then p[#p + 1] = tostring(r.note) end
    return table.concat(p, "; ")
  end
  local any_note = false
  for _, r in ipairs(rows) do if note(r) ~= "" then any_note = true break end end
  if any_note then cols[#cols + 1] = { title = "note", get = note } end
  return cols
end

local function sorted_rows(A, rows, headline)
  local pos = {}
  for i, v in ipairs(A.variants) do pos[v.name] = i end
  local cpos = {}
  for i, key in ipairs(A.case_order) do cpos[key] = i end
  local out = {}
  for i, r in ipairs(rows) do out[i] = r end
  local href = headline and A.cases[A.headline] and A.cases[A.headline].ref
  table.sort(out, function(a, b)
    if headline then
      -- one case plus, maybe, its bound from another: the bound first, then ladder order
      if (a == href) ~= (b == href) then return a == href end
    else
      local ca, cb = cpos[(A.info.case(a))], cpos[(A.info.case(b))]
      if ca ~= cb then return ca < cb end
    end
    local pa, pb = pos[variant_name(a)], pos[variant_name(b)]
    if pa ~= pb then return pa < pb end
    return false
  end)
  return out
end

function tables.html(A, rows, headline)
  local cols = columns(A, rows, headline)
  local out = { "<table>", "<thead><tr>" }
  for _, col in ipairs(cols) do
    out[#out + 1] = string.format("<th%s>%s</th>", col.num and ' class="num"' or "", esc(col.title))
  end
  out[#out + 1] = "</tr></thead><tbody>"
  for _, r in ipairs(sorted_rows(A, rows, headline)) do
    local cls = failed(r) and ' class="failed"' or (A.variant[variant_name(r)].reference and ' class="ref"' or "")
    local cells = {}
    for _, col in ipairs(cols) do
      cells[#cells + 1] = string.format("<td%s>%s</td>", col.num and ' class="num"' or "", esc(col.get(r)))
    end
    out[#out + 1] = "<tr" .. cls .. ">" .. table.concat(cells) .. "</tr>"
  end
  out[#out + 1] = "</tbody></table>"
  return table.concat(out, "\n")
end

function tables.md_cell(s) return (tostring(s):gsub("|", "\\|"):gsub("\n", " ")) end

function tables.markdown(A, rows, headline)
  local cols = columns(A, rows, headline)
  local head, rule = {}, {}
  for i, col in ipairs(cols) do
    head[i] = tables.md_cell(col.title)
    rule[i] = col.num and "--:" or "---"
  end
  local out = { "| " .. table.concat(head, " | ") .. " |", "|" .. table.concat(rule, "|") .. "|" }
  for _, r in ipairs(sorted_rows(A, rows, headline)) do
    local cells = {}
    for i, col in ipairs(cols) do cells[i] = tables.md_cell(col.get(r)) end
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return table.concat(out, "\n")
end
-- Top-level scalars of a document without rows (e.g. the launch-overhead file): {{key, text}, ...}.
function tables.scalars(doc)
  local keys = {}
  for k, v in pairs(doc) do
    if k ~= "meta" and k ~= "rows" and k ~= "ladder" and (type(v) == "number" or type(v) == "string" or
        type(v) == "boolean") then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys)
  local out = {}
  for _, k in ipairs(keys) do
    local v = doc[k]
    out[#out + 1] = { k, type(v) == "number" and text.fmt(v) or tostring(v) }
  end
  return out
end

return tables
