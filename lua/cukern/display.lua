--- cukern.display: how arrays print (tostring(a), the REPL, ck.format) and the records that print well
-- (ck.device(), ck.memory(), ck.variants(...)). Large arrays print their corners only, read corner by corner,
-- so that printing never copies a whole array to the host.
local core = require "cukern.core"
local errors, args = require "cukern.errors", require "cukern.args"
local raise, where_of, is_array, show = errors.raise, errors.where_of, args.is_array, args.show

local D = {}
local type, tostring, ipairs, pairs = type, tostring, ipairs, pairs
local fmt, concat = string.format, table.concat

-- ---------------------------------------------------------------- tables that print well

local function show_value(v) return type(v) == "string" and fmt("%q", v) or tostring(v) end
D.SEQ_MT = {__tostring = function(t)
  local s = {}
  for i = 1, #t do s[i] = show_value(t[i]) end
  return "{" .. concat(s, ", ") .. "}"
end}
D.RECORD_MT = {__tostring = function(t)
  local keys, s = {}, {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(x, y) return tostring(x) < tostring(y) end)
  for i, k in ipairs(keys) do s[i] = tostring(k) .. " = " .. show_value(t[k]) end
  return "{" .. concat(s, ", ") .. "}"
end}

-- ---------------------------------------------------------------- display

local INTS = {i32 = true, u8 = true, i8 = true, i16 = true, u32 = true, i64 = true}

local fmt_values

-- Complex values ({re, im} pairs) as "re+imi" / "re-imi", the parts formatted together (MATLAB's style).
local function fmt_complex(vals, dtype)
  local part = args.COMPLEX_PART[dtype]
  local res, ims = {}, {}
  for i, v in ipairs(vals) do res[i], ims[i] = v[1], math.abs(v[2]) end
  local joined = {}
  for i, v in ipairs(ims) do joined[i] = v end
  for _, v in ipairs(res) do joined[#joined + 1] = v end
  local all = fmt_values(joined, part)
  local strs, w = {}, 0
  for i, v in ipairs(vals) do
    local im = all[i]
    strs[i] = all[#ims + i] .. ((v[2] < 0 or (v[2] == 0 and 1 / v[2] < 0)) and "-" or "+") .. im .. "i"
    if #strs[i] > w then w = #strs[i] end
  end
  return strs, w
end

function fmt_values(vals, dtype)
  if args.COMPLEX_PART[dtype] then return fmt_complex(vals, dtype) end
  local strs, allint, maxabs, minabs = {}, true, 0, math.huge
  if dtype == "bool" or INTS[dtype] then -- Lua values already: booleans print true/false, integers exactly
    local w = 0
    for i, v in ipairs(vals) do
      strs[i] = tostring(v)
      if #strs[i] > w then w = #strs[i] end
    end
    return strs, w
  end
  for _, v in ipairs(vals) do
    if v ~= v or v == math.huge or v == -math.huge then allint = false
    else
      if v ~= math.floor(v) then allint = false end
      local av = math.abs(v)
      if av > maxabs then maxabs = av end
      if av > 0 and av < minabs then minabs = av end
    end
  end
  local f
  if dtype == "i32" or (allint and maxabs < 1e9) then f = "%d"
  elseif maxabs >= 1e5 or minabs < 1e-3 then f = "%.4e"
  else f = "%.4f" end
  local w = 0
  for i, v in ipairs(vals) do
    local s
    if v ~= v then s = "NaN" elseif v == math.huge then s = "Inf" elseif v == -math.huge then s = "-Inf"
    elseif f == "%d" then s = fmt("%d", math.tointeger(v) or v) else s = fmt(f, v) end
    strs[i] = s
    if #s > w then w = #s end
  end
  return strs, w
end

local EDGE = 3 -- elements kept at each end of a long dim

-- Values of a (possibly large) array: kept indices per dim and a lookup of their values. Large arrays are
-- read corner by corner (2^k small reads) so that printing never copies the whole array to the host.
local function gather(a)
  local shape, nd = a:shape(), a:ndim()
  -- per dim: how many indices to show at each end (nil: all). Long dims keep EDGE at each end; the leading
  -- dims of a large array keep only their first and last slice, so printing stays short at any ndim.
  local large = a:numel() > 1000
  local keep, head = {}, {}
  for d = 1, nd do
    local n, h = shape[d], (large and d <= nd - 2) and 1 or EDGE
    local k = {}
    if n > 2 * h + 1 then
      head[d] = h
      for i = 1, h do k[#k + 1] = i end
      k[#k + 1] = false -- the ellipsis
      for i = n - h + 1, n do k[#k + 1] = i end
    else
      for i = 1, n do k[i] = i end
    end
    keep[d] = k
  end
  if a:numel() <= 4096 then
    local flat, strides = a:flat(), {}
    local s = 1
    for d = nd, 1, -1 do strides[d] = s; s = s * shape[d] end
    return keep, function(idx)
      local p = 1
      for d = 1, nd do p = p + (idx[d] - 1) * strides[d] end
      return flat[p]
    end
  end
  -- corners: for each elided dim, its head or its tail block (2^k small reads, never the whole array)
  local big, lookup = {}, {}
  for d = 1, nd do if head[d] then big[#big + 1] = d end end
  for mask = 0, (1 << #big) - 1 do
    local v, lo = a, {}
    for d = 1, nd do lo[d] = 1 end
    for j, d in ipairs(big) do
      local tail = (mask >> (j - 1)) & 1 == 1
      lo[d] = tail and shape[d] - head[d] + 1 or 1
      v = v:narrow(d, lo[d], lo[d] + head[d] - 1)
    end
    lookup[mask] = {lo = lo, flat = v:flat(), shape = v:shape()}
  end
  return keep, function(idx)
    local mask = 0
    for j, d in ipairs(big) do if idx[d] > head[d] then mask = mask | (1 << (j - 1)) end end
    local c = lookup[mask]
    local p, s = 1, 1
    for d = nd, 1, -1 do p = p + (idx[d] - c.lo[d]) * s; s = s * c.shape[d] end
    return c.flat[p]
  end
end

local function format(a)
  if a:is_freed() then return "cukern.array (freed)" end
  local shape, nd = a:shape(), a:ndim()
  local head = fmt("cukern.array %s [%s] strides {%s} %s%s", a:dtype(), concat(shape, "x"),
    concat(a:strides(), ","), a:device(), a:is_contiguous() and "" or " (not contiguous)")
  if a:numel() == 0 then return head .. "\n  (empty)" end
  if nd == 0 then
    local cx = args.COMPLEX_PART[a:dtype()] ~= nil
    local s = fmt_values({cx and a:flat()[1] or a:item()}, a:dtype())
    return head .. "\n  " .. s[1]
  end
  local keep, val = gather(a)
  -- collect every displayed value first, so that the columns share one width
  local rows, cells = {}, {}
  local lead = {}
  for d = 1, nd - 2 do lead[d] = keep[d] end
  local function each_slice(d, idx, fn)
    if d > nd - 2 then return fn(idx) end
    for _, i in ipairs(lead[d]) do
      local c = {table.unpack(idx)}
      c[d] = i
      each_slice(d + 1, c, fn)
    end
  end
  local rk = nd >= 2 and keep[nd - 1] or {1}
  local ck_ = keep[nd]
  local blocks = {}
  each_slice(1, {}, function(idx)
    local elided = false
    for d = 1, nd - 2 do if idx[d] == false then elided = true end end
    local blk = {title = nil, rows = {}}
    if nd > 2 then
      local t = {}
      for d = 1, nd - 2 do t[d] = idx[d] == false and "..." or tostring(idx[d]) end
      blk.title = elided and "  ..." or fmt("  (%s,:,:) =", concat(t, ","))
    end
    if not elided then
      for _, r in ipairs(rk) do
        local row = {}
        for _, c in ipairs(ck_) do
          if r == false or c == false then row[#row + 1] = false
          else
            local full = {table.unpack(idx)}
            if nd >= 2 then full[nd - 1] = r end
            full[nd] = c
            cells[#cells + 1] = val(full)
            row[#row + 1] = #cells
          end
        end
        blk.rows[#blk.rows + 1] = row
      end
    end
    blocks[#blocks + 1] = blk
  end)
  local strs, w = fmt_values(cells, a:dtype())
  local out = {head}
  for _, blk in ipairs(blocks) do
    if blk.title then out[#out + 1] = blk.title end
    for _, row in ipairs(blk.rows) do
      local line = {}
      for j, c in ipairs(row) do line[j] = c and fmt("%" .. w .. "s", strs[c]) or fmt("%" .. w .. "s", "...") end
      out[#out + 1] = "  " .. concat(line, "  ")
    end
  end
  return concat(out, "\n")
end

function D.install(ck)
  core.array_mt.__tostring = format
  local where = where_of("ck.format")
  --- format(a) -> the text tostring(a) and the REPL show.
  function ck.format(a)
    if not is_array(a) then raise(fmt("%s: argument 1 must be a cukern array, got %s", where, show(a))) end
    return format(a)
  end
  return ck
end

return D
