-- Build the charts and index.html from benchmark results, optionally refreshing the README section.
--
--   lua5.4 examples/report.lua [results_dir [out_dir]] [--readme [README.md]] [--markdown]
--
-- results_dir defaults to $CUKERN_RESULTS or bench/results; out_dir to results_dir (the SVGs are committed
-- next to the JSON they draw). --readme rewrites only the text between <!-- results:begin --> and
-- <!-- results:end -->; --markdown prints that section instead. Needs no GPU and no C module.
-- The files drawn are those the ladders recorded in results_dir/manifest.txt (or the last index.html drew).
-- Host results never go into the README section, nor into the index of a directory holding GPU results:
-- `make report` (bench/results) shows GPU results only; bench/results/host/ gets an index of its own.

local root = dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua").root

local report = require "cukern.report"
local files = require "cukern.report_files"

local function usage(code)
  io.stderr:write("usage: lua5.4 examples/report.lua [results_dir [out_dir]] [--readme [README.md]] [--markdown]\n")
  os.exit(code)
end

local positional, readme, markdown = {}, nil, false
local i = 1
while arg and i <= #arg do
  local a = arg[i]
  if a == "--readme" then
    if arg[i + 1] and not arg[i + 1]:match("^%-%-") and arg[i + 1]:match("%.md$") then
      readme = arg[i + 1]
      i = i + 1
    else
      readme = root .. "/README.md"
    end
  elseif a:match("^%-%-readme=") then
    readme = a:match("^%-%-readme=(.*)$")
  elseif a == "--markdown" then
    markdown = true
  elseif a == "-h" or a == "--help" then
    usage(0)
  elseif a:match("^%-") then
    io.stderr:write("report: unknown option ", a, "\n")
    usage(2)
  else
    positional[#positional + 1] = a
  end
  i = i + 1
end

local env = os.getenv("CUKERN_RESULTS")
local results_dir = positional[1] or (env ~= nil and env ~= "" and env) or "bench/results"
local out_dir = positional[2] or results_dir

if markdown then
  print(report.markdown(results_dir))
  os.exit(0)
end

local written = report.build(results_dir, out_dir)
for _, f in ipairs(written) do print("wrote " .. f) end
if #written <= 1 then
  io.stderr:write("report: no results in ", results_dir, " (run `make demo` first)\n")
end

if readme then
  local ok, err = pcall(report.update_readme, readme, results_dir)
  if not ok then
    io.stderr:write("report: ", tostring(err), "\n")
    os.exit(1)
  end
  print(err and ("updated the results section of " .. readme) or (readme .. " already up to date"))
end

print("report: " .. files.absolute(written[#written]))
