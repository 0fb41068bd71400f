-- cukern.report_files: the files of a results directory, for the writers (bench, json) and the report.
--
-- Lua has no portable way to list a directory (that takes lua-filesystem, a C module the GPU host's packed
-- Lua only has as a test dependency). So nothing lists one: every results file is written through
-- bench.write_json, which records its name in the directory's manifest.txt (one file name a line, sorted),
-- and the report reads that list. Writes are atomic (a temporary file renamed over the target), so a crash
-- never leaves half a JSON file or half a README.
--
--   files.shell_quote(s)               's' for /bin/sh (the one copy: mkdir, demo and the specs use it)
--   files.mkdir(dir)                   mkdir -p; true or nil, err
--   files.read(path)                   -> text or nil, err
--   files.exists(path)                 -> true if it can be opened for reading
--   files.absolute(path)               path from / ($PWD, else `pwd`), for "open ..." lines
--   files.write(path, text)            atomic; true or nil, err
--   files.MANIFEST                     "manifest.txt"
--   files.manifest(dir)                -> sorted list of the names recorded in dir/manifest.txt ({} if none)
--   files.record(dir, name)            adds name to dir/manifest.txt (kept sorted, no duplicates)

local files = {}

files.MANIFEST = "manifest.txt"

function files.shell_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

function files.mkdir(dir)
  if dir == nil or dir == "" or dir == "." then return true end
  local ok, how, code = os.execute("mkdir -p " .. files.shell_quote(dir))
  if ok then return true end
  return nil, string.format("mkdir -p %s failed (%s %s)", dir, tostring(how), tostring(code))
end

function files.read(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local s = f:read("a")
  f:close()
  return s
end

function files.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

function files.absolute(path)
  path = tostring(path)
  if path:sub(1, 1) == "/" then return path end
  local cwd = os.getenv("PWD")
  if not cwd or cwd == "" then
    local p = io.popen("pwd")
    cwd = p and p:read("l")
    if p then p:close() end
  end
  if not cwd or cwd == "" then return path end
  return cwd .. "/" .. path:gsub("^%./", "")
end

function files.write(path, text)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then return nil, err end
  f:write(text)
  f:close()
  local ok, rerr = os.rename(tmp, path)
  if not ok then
    os.remove(tmp)
    return nil, rerr
  end
  return true
end

function files.manifest(dir)
  local text = files.read(dir .. "/" .. files.MANIFEST)
  local names, seen = {}, {}
  for line in (text or ""):gmatch("[^\r\n]+") do
    local name = line:match("^%s*(.-)%s*$")
    if name ~= "" and not name:find("/", 1, true) and not seen[name] then
      seen[name] = true
      names[#names + 1] = name
    end
  end
  table.sort(names)
  return names
end

function files.record(dir, name)
  local names = files.manifest(dir)
  for _, n in ipairs(names) do
    if n == name then return true end
  end
  names[#names + 1] = name
  table.sort(names)
  return files.write(dir .. "/" .. files.MANIFEST, table.concat(names, "\n") .. "\n")
end

return files
