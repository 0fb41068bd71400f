--- cukern.sorting: scans and sorts (issue 33) as functions and methods.
--   ck.cumsum(a [, dim] [, {exclusive, variant, out}])    and cumprod, cummax, cummin; a:cumsum(...)
--   ck.sort(a [, dim] [, {descending, variant, out, idx}]) -> values, indices (1-based i64), stable
--     ({indices = false}: the values only, as MATLAB's B = sort(A) and NumPy's np.sort; integers then sort as
--     themselves on CUDA, with no indices carried: CUB's radix sort of the keys alone)
--   ck.argsort(a [, dim] [, {descending, variant, out}])   -> indices
--   ck.topk(a, k [, dim] [, {variant, out, idx}])          -> the k largest along dim, largest first, and indices
--     (the stable descending sort's first k: NaN largest, -0 equal to +0, ties in index order; on CUDA the sort
--     ladder's radix_select rung by default when k <= len / 2)
--   ck.histc(a, bins, lo, hi [, {variant, out}])           -> i64 counts of `bins` equal bins over [lo, hi]
--   ck.histogram(a [, {bins = 10, range = {lo, hi}, variant}]) -> counts, f64 edges (range: a's min and max)
--   ck.searchsorted(sorted, values [, {side = "left" | "right", variant, out}]) -> i64 1-based insertion positions
--   ck.unique(a [, {counts = true, inverse = true}])      -> the sorted distinct values of a (flattened) [, counts] [, inverse]
-- dim defaults to the last (MATLAB's cumsum/sort take the first non-singleton dim, NumPy's cumsum flattens;
-- torch and NumPy's sort take the last). The core does the work (core.scan, core.sort: src/ops/op_scan.c,
-- op_sort.c); here are the names, the options and the messages.
local core = require "cukern.core"
local errors, args, options = require "cukern.errors", require "cukern.args", require "cukern.options"
local raise, fail, where_of = errors.raise, errors.fail, errors.where_of
local is_array, check_live, check_dim = args.is_array, args.check_live, args.check_dim

local S = {}
local type, pcall, math_type = type, pcall, math.type
local fmt = string.format
local M = core.methods
local core_scan, core_sort, core_histc, core_search = core.scan, core.sort, core.histc, core.searchsorted

local RULES = {
  exclusive = function(v) return type(v) == "boolean", "true or false" end,
  descending = function(v) return type(v) == "boolean", "true or false" end,
  idx = function(v) return is_array(v) and not v:is_freed(), "a (live) i64 cukern array" end,
}
local SCAN = options.set("exclusive", "variant", "out")
local SORT = options.set("descending", "variant", "out", "idx", "indices")
local ARGSORT = options.set("descending", "variant", "out")
local TOPK = options.set("variant", "out", "idx")
local HISTC = options.set("variant", "out")
local HISTOGRAM = options.set("bins", "range", "variant")
local SEARCH = options.set("side", "variant", "out")
local UNIQUE = options.set("counts", "inverse", "inverse_by")
RULES.indices = function(v) return type(v) == "boolean", "true or false" end
RULES.counts = function(v) return type(v) == "boolean", "true or false" end
RULES.inverse = function(v) return type(v) == "boolean", "true or false" end
RULES.inverse_by = function(v) return v == "scatter" or v == "search", '"scatter" or "search"' end
RULES.side = function(v) return v == "left" or v == "right", '"left" or "right"' end
RULES.bins = function(v) return math_type(v) == "integer" and v >= 1, "an integer >= 1" end
RULES.range = function(v)
  return type(v) == "table" and type(v[1]) == "number" and type(v[2]) == "number", "a table {lo, hi} of numbers"
end
local NONE = {}

local function check_opts(where, opts, allowed)
  local problem = options.problem(where, opts, allowed, RULES)
  if problem then raise(where .. ": " .. problem) end
  return opts or NONE
end

local dim_opts = args.dim_opts

local function explain(where, a, what, dim, e)
  check_live(where, a, what)
  if dim ~= nil then check_dim(where, a, dim) end
  fail(where, e)
end

local function scan_fn(name, where, what)
  where_of(where)
  return function(a, dim, opts)
    dim, opts = dim_opts(dim, opts)
    local o = opts ~= nil and check_opts(where, opts, SCAN) or NONE
    local ok, r = pcall(core_scan, name, a, dim, o.exclusive, o.variant, o.out)
    if ok then return r end
    explain(where, a, what, dim, r)
  end
end

-- sort (values and indices) and argsort (indices only: its `out` is where they go)
local function sort_fn(where, what, allowed, values)
  where_of(where)
  return function(a, dim, opts)
    dim, opts = dim_opts(dim, opts)
    local o = opts ~= nil and check_opts(where, opts, allowed) or NONE
    if o.out and o.idx and o.out:storage_id() == o.idx:storage_id() then
      raise(where .. ": options out and idx must be different arrays")
    end
    local out, idx = o.out, o.idx
    if not values then out, idx = nil, o.out end
    local indices = o.indices ~= false
    if not indices and idx then raise(where .. ": options idx and indices = false contradict each other") end
    local ok, v, i = pcall(core_sort, a, dim, o.descending, 0, o.variant, values, out, idx, indices)
    if ok then
      if values and indices then return v, i end
      return v
    end
    explain(where, a, what, dim, v)
  end
end

local function topk_fn(where, what)
  where_of(where)
  return function(a, k, dim, opts)
    dim, opts = dim_opts(dim, opts)
    local o = opts ~= nil and check_opts(where, opts, TOPK) or NONE
    if math_type(k) ~= "integer" and not (type(k) == "number" and k == k // 1) then
      check_live(where, a, what)
      raise(fmt("%s: k must be an integer >= 0, got %s", where, options.show(k)))
    end
    if k < 0 then raise(fmt("%s: k must be an integer >= 0, got %d", where, k)) end
    if k == 0 then -- nothing to keep: the empty line of a (a view) sorted gives empty results of the right shape
      check_live(where, a, what)
      if dim ~= nil then check_dim(where, a, dim) end
      if a:ndim() > 0 then a = a:narrow(dim or -1, 1, 0) end
    end
    local ok, v, i = pcall(core_sort, a, dim, true, k // 1, o.variant, true, o.out, o.idx)
    if ok then return v, i end
    explain(where, a, what, dim, v)
  end
end

local function histc_fn(where, what)
  where_of(where)
  return function(a, bins, lo, hi, opts)
    local o = opts ~= nil and check_opts(where, opts, HISTC) or NONE
    local ok, r = pcall(core_histc, a, bins, lo, hi, o.variant, o.out)
    if ok then return r end
    check_live(where, a, what)
    if math_type(bins) ~= "integer" then raise(fmt("%s: bins must be an integer >= 1, got %s", where, options.show(bins))) end
    for _, v in ipairs {lo, hi} do
      if type(v) ~= "number" then raise(fmt("%s: lo and hi must be numbers, got %s", where, options.show(v))) end
    end
    fail(where, r)
  end
end

-- NumPy's np.histogram(a, bins, range): counts and the bins + 1 edges; the range defaults to a's min and max
-- (widened by 0.5 either side when they are equal, as NumPy does).
local function histogram_fn(where, what)
  where_of(where)
  return function(a, opts, ck)
    local o = check_opts(where, opts, HISTOGRAM)
    check_live(where, a, what)
    local bins, lo, hi = o.bins or 10, nil, nil
    if o.range then lo, hi = o.range[1], o.range[2]
    elseif a:numel() == 0 then lo, hi = 0, 1
    else
      local f = a:to("f64")
      lo, hi = f:min():item(), f:max():item()
      if lo ~= lo or hi ~= hi then raise(where .. ": the data contain NaN: give a range") end
    end
    if lo == hi then lo, hi = lo - 0.5, hi + 0.5 end
    local ok, r = pcall(core_histc, a, bins, lo, hi, o.variant)
    if not ok then fail(where, r) end
    return r, ck.linspace(lo, hi, bins + 1, {dtype = "f64", device = a:device()})
  end
end

local function search_fn(where)
  where_of(where)
  return function(sorted, values, opts)
    local o = opts ~= nil and check_opts(where, opts, SEARCH) or NONE
    local ok, r = pcall(core_search, sorted, values, o.side == "right", o.variant, o.out)
    if ok then return r end
    check_live(where, sorted, "argument 1")
    check_live(where, values, "argument 2")
    fail(where, r)
  end
end

-- NumPy's np.unique(a, return_counts, return_inverse) and MATLAB's unique, composed from the ladders' ops on
-- either backend (no kernel of its own): a stable sort of the flattened array (without indices unless the
-- inverse is asked for); a bool "starts a new value" per
-- sorted position (NaNs count as one value, as NumPy's equal_nan; -0 and +0 as one, the first kept); the values
-- are the masked selection, the counts the differences of the starts' positions (ck.find), and the inverse the
-- running count of starts (cumsum, i64) scattered back through the sort's permutation. Results: values (a's
-- dtype, 1-D), then the counts (i64) and the inverse (i64, a's shape, 1-based indices into values) when asked.
-- inverse_by = "search": the inverse is ck.searchsorted(values, a) instead (left side: each element's value's
-- position, NaN and -0/+0 as the sort orders them), so the sort needs no permutation and there is no cumsum and no
-- scatter. Why: the scatter of 2^26 i64 through a random permutation took 4.2 ms on an H200 (ncu, round 3 session
-- 15: each 8-byte write its own 32-byte sector), and a search over values that fit in cache reads them from there;
-- which is faster at which number of values is not measured yet, so the scatter stays the default.
local function unique_fn(where)
  where_of(where)
  return function(ck, a, opts)
    local o = check_opts(where, opts, UNIQUE)
    if o.inverse_by and not o.inverse then raise(where .. ": inverse_by says how the inverse is made; ask for it with inverse = true") end
    check_live(where, a, "argument 1")
    local ok, v, c, inv = pcall(function()
      local n, dev = a:numel(), a:device()
      local flat = a:contiguous():reshape(n)
      if n == 0 then
        return flat, ck.empty({0}, {dtype = "i64", device = dev}), ck.empty(a:shape(), {dtype = "i64", device = dev})
      end
      -- the permutation only where the inverse needs it (integers then sort as themselves: CUB's keys-only sort)
      local s, perm
      local by_search = o.inverse_by == "search"
      if o.inverse and not by_search then s, perm = ck.sort(flat) else s = ck.sort(flat, 1, {indices = false}) end
      -- the flags written in place: position 1 starts a value, the rest compare with their predecessor (one pass
      -- writing into starts, where a fill of ones, a temporary and its copy_ took three)
      local starts = ck.empty({n}, {dtype = "bool", device = dev})
      starts:narrow(1, 1, 1):fill(true)
      if n > 1 then
        local hi, lo, rest = s:narrow(1, 2, n), s:narrow(1, 1, n - 1), starts:narrow(1, 2, n)
        if s:dtype():match("^b?f") then -- floats: two NaNs in a row are one value
          ck.logical_and(ck.ne(hi, lo), ck.logical_not(ck.logical_and(ck.isnan(hi), ck.isnan(lo))), {out = rest})
        else
          ck.ne(hi, lo, {out = rest})
        end
      end
      -- one compaction (the run starts' positions), then a gather of the k values: a masked_select as well would
      -- read the n sorted values and flags again and wait for a second count
      local first = ck.find(starts)
      local k = first:numel()
      local values = s:index_select(1, first)
      local counts, inverse
      if o.counts then
        local ends = ck.full({k}, n + 1, {dtype = "i64", device = dev})
        if k > 1 then ends:narrow(1, 1, k - 1):copy_(first:narrow(1, 2, k)) end
        counts = ck.sub(ends, first)
      end
      if o.inverse and by_search then -- i64, 1-based; flat is a's values already contiguous
        inverse = ck.searchsorted(values, flat):reshape(table.unpack(a:shape()))
      elseif o.inverse then
        local group = ck.cumsum(starts) -- i64: the 1-based value number of each sorted position
        -- perm is a permutation of 1..n, so the scatter writes every element (no fill first) and no destination
        -- twice: core.index's `distinct` skips the repeat check ck.scatter makes (on an H100 the checked scatter
        -- of 2^26 took 6.7 ms of a 11.7 ms unique), in place into the new array (ck.scatter would copy it first)
        inverse = ck.empty({n}, {dtype = "i64", device = dev})
        core.index("scatter", nil, perm, group, inverse, 0, nil, true)
        inverse = inverse:reshape(table.unpack(a:shape()))
      end
      return values, counts, inverse
    end)
    if not ok then fail(where, v) end
    if o.counts and o.inverse then return v, c, inv end
    if o.counts then return v, c end
    if o.inverse then return v, inv end
    return v
  end
end

function S.install(ck)
  for _, name in ipairs {"cumsum", "cumprod", "cummax", "cummin"} do
    ck[name] = scan_fn(name, "ck." .. name, "argument 1")
    M[name] = scan_fn(name, "a:" .. name, "the array")
  end
  ck.sort, M.sort = sort_fn("ck.sort", "argument 1", SORT, true), sort_fn("a:sort", "the array", SORT, true)
  ck.argsort = sort_fn("ck.argsort", "argument 1", ARGSORT, false)
  M.argsort = sort_fn("a:argsort", "the array", ARGSORT, false)
  ck.topk, M.topk = topk_fn("ck.topk", "argument 1"), topk_fn("a:topk", "the array")
  ck.histc, M.histc = histc_fn("ck.histc", "argument 1"), histc_fn("a:histc", "the array")
  local histogram, mhistogram = histogram_fn("ck.histogram", "argument 1"), histogram_fn("a:histogram", "the array")
  ck.histogram = function(a, opts) return histogram(a, opts, ck) end
  M.histogram = function(a, opts) return mhistogram(a, opts, ck) end
  ck.searchsorted = search_fn("ck.searchsorted")
  local unique = unique_fn("ck.unique")
  ck.unique = function(a, opts) return unique(ck, a, opts) end
end

return S
