--- File I/O throughput: ck.save / ck.load of one f32 array of a few hundred MB in every format, from and to
-- the host and (where there is one) the GPU, beside a plain copy of the same file (cp + sync) measured in the
-- same run. GB/s = file bytes / wall seconds, median of the repetitions (compressed cases run once). Every load is checked against the
-- array that was saved before anything is timed.
--
--   lua5.4 examples/io_bench.lua [MB [DIR [REPS]]]     (env CUKERN_IO_MB, CUKERN_IO_DIR; default 256 MB, /tmp)
--
-- Saves write a temporary file, fsync it and rename it (ck.save's guarantee); the copy baseline syncs too.
-- Loads read what the page cache holds (the file was just written), as a script reloading its data would.
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"

local MB = tonumber(arg[1] or os.getenv("CUKERN_IO_MB") or 256)
local DIR = arg[2] or os.getenv("CUKERN_IO_DIR") or "/tmp"
local REPS = math.tointeger(tonumber(arg[3] or 3))
local clock = ck.core.clock
local gpu = ck.has_cuda()
local formats = ck.io_formats()

local side = math.tointeger(math.floor(math.sqrt(MB * 2 ^ 20 / 4)))
local host = ck.rand(side, side)
local dev = gpu and host:to("cuda") or nil
local base = DIR .. "/cukern_io_bench_" .. tostring(os.time())

local function fsize(path)
  local f = assert(io.open(path, "rb"))
  local n = f:seek("end")
  f:close()
  return n
end

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

local rows = {}
local function timed(label, path, fn, reps)
  local ms = {}
  for _ = 1, reps or REPS do
    collectgarbage()
    local t0 = clock()
    fn()
    if gpu then ck.sync() end
    ms[#ms + 1] = (clock() - t0) * 1e3
  end
  local m = median(ms)
  local bytes = fsize(path)
  rows[#rows + 1] = {label = label, ms = m, gbps = bytes / (m * 1e-3) / 1e9, bytes = bytes}
  io.stderr:write(("  %-36s %10.1f ms\n"):format(label, m))
end

local function check(got, want, label)
  local ok = ck.max(ck.abs(got:to("host") - want)):item() == 0 and got:dtype() == want:dtype()
  assert(ok and table.concat(got:shape(), "x") == table.concat(want:shape(), "x"), label .. ": loaded values differ")
end

local function one(t) if ck.is_array(t) then return t end return t.a end

local cases = {
  {"npy", "host", host}, {"npy", "host (transposed view)", host:t()},
  {"npz", "host", host, {}}, {"npz", "host, compressed", host, {compress = true}},
  {"mat", "host", host, {}}, {"mat", "host, -v7 compressed", host, {compress = true}},
}
if gpu then
  table.insert(cases, 3, {"npy", "cuda", dev})
  table.insert(cases, 4, {"npy", "cuda (transposed view)", dev:t()})
end

print(("cukern %s file I/O: f32 [%dx%d] = %.0f MB in %s, %d reps, device %s"):format(ck.version, side, side,
  side * side * 4 / 2 ^ 20, DIR, REPS, ck.device().name or ck.device().backend))
for _, c in ipairs(cases) do
  local ext, where, a, opts = c[1], c[2], c[3], c[4]
  if formats[ext] then
    local path = base .. "." .. ext
    local function save() if opts then ck.save(path, {a = a}, opts) else ck.save(path, a) end end
    save()
    local want = a:to("host")
    check(one(ck.load(path)), want, ext .. " " .. where)
    local reps = opts and opts.compress and 1 or nil -- deflate of random floats is slow: once is enough
    timed(("save .%s from %s"):format(ext, where), path, save, reps)
    local ldev = a:device()
    timed(("load .%s to %s"):format(ext, ldev), path, function() one(ck.load(path, {device = ldev})):free() end, reps)
    os.remove(path)
  else
    print(("(.%s: this build lacks its library)"):format(ext))
  end
end

-- the baseline: a plain copy of a file of the same size, synced
local src, dst = base .. ".src.npy", base .. ".dst.npy"
ck.save(src, host)
timed("plain copy (cp + sync)", src, function()
  assert(os.execute(("cp '%s' '%s' && sync '%s'"):format(src, dst, dst)))
end)
os.remove(src)
os.remove(dst)

local ref = rows[#rows].gbps
print(("%-36s %10s %9s %12s"):format("case", "ms", "GB/s", "% of copy"))
for _, r in ipairs(rows) do
  print(("%-36s %10.1f %9.2f %11.0f%%"):format(r.label, r.ms, r.gbps, 100 * r.gbps / ref))
end
