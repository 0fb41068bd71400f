#!/bin/bash
# Round 3, session 8, first GPU call (one H100/H200, ~560 s): fresh sm_90a build; ck.unique beside torch.unique
# (rewritten after its last timing); then every spec file as lab/round7-suite.sh runs them (long files six at a
# time, the memory- and timing-sensitive ones alone). Everything under $OUT/r (r.tgz at exit).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round8-suite.sh
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
export T0=$(date +%s) R="$OUT/r"; mkdir -p "$R"
bash lab/round5-gpu.sh build
timeout 25 python3 - > "$R/torch_unique.txt" 2>&1 <<'PY'
import sys, json
sys.path.insert(0, "bench")
from torch_scan_sort import timed
import torch
u = torch.randint(0, 2**20, (2**26,), device="cuda", dtype=torch.int32)
print(json.dumps({"unique i32 n=2^26 (counts, inverse)": timed(lambda: torch.unique(u, return_inverse=True, return_counts=True)),
                  "unique i32 n=2^26": timed(lambda: torch.unique(u))}))
PY
tail -1 "$R/torch_unique.txt" > "$R/torch_unique.json"
timeout 30 lua5.4 - > "$R/unique.txt" 2>&1 <<'LUA'
local ck, bench, json = require "cukern", require "cukern.bench", require "cukern.json"
local f = io.open(os.getenv("R") .. "/torch_unique.json"); local t = f and json.decode(f:read("a")) or {}
local n = math.tointeger(2 ^ 26)
local u = ck.randint(0, 2 ^ 20 - 1, n, {device = "cuda"})
local v, c, j = ck.unique(u, {counts = true, inverse = true})
assert(ck.sum(c):item() == n and ck.equal(v:index_select(1, j), u), "unique: wrong")
for _, o in ipairs {{{counts = true, inverse = true}, "unique i32 n=2^26 (counts, inverse)"}, {{}, "unique i32 n=2^26"}} do
  local r = bench.run{fn = function() ck.unique(u, o[1]) end, device = "cuda", warmup = 3, reps = 10}
  local tt = t[o[2]]
  print(("%s: ck.unique %.3f ms, torch.unique %s ms%s"):format(o[2], r.ms, tt and ("%.3f"):format(tt) or "?",
    tt and (" (%.2fx)"):format(tt / r.ms) or ""))
end
LUA
echo "[$(($(date +%s) - T0))s] unique rc=$?" | tee -a "$R/progress.txt"; cat "$R/unique.txt"
DEADLINE=${DEADLINE:-545} HARD=${HARD:-575} bash lab/round7-suite.sh
