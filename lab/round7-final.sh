#!/bin/bash
# Round 3, session 7, the last GPU call (one H100/H200, ~280 s): build; the spec files of what the merges changed
# (ck.map on every dtype, matmul on every integer dtype and mixed FP8), all at once, each under the time left;
# then, with time left, ck.unique beside torch.unique. Everything under $OUT/r (r.tgz at exit).
#   OUT=/dir CUKERN_COMMIT=abc END=270 bash lab/round7-final.sh
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
R="$OUT/r"; export R; mkdir -p "$R"; T0=$(date +%s); END=${END:-270}
trap 'tar czf "$OUT/r.tgz" -C "$OUT" r 2>/dev/null' EXIT
left() { echo $((END - ($(date +%s) - T0))); }
log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$R/progress.txt"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$R/device.txt"; cat "$R/device.txt"
timeout $(( $(left) - 40 )) make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"
for f in ${SPECS:-map_dtypes matmul_int matmul fp8 map fuzz introspection attention linalg}; do
  ( timeout $(( $(left) - 30 )) sh spec/run.sh "spec/${f}_spec.lua" > "$R/$f.txt" 2>&1; log "$f rc=$? $(tail -1 "$R/$f.txt")" ) &
done
wait
for f in "$R"/*.txt; do grep -q "^[0-9]* passed, [1-9]" "$f" && grep -B1 -A12 "^FAIL\|^ERROR" "$f" | head -40; done
if [ "$(left)" -gt 25 ]; then
timeout 25 python3 - > "$R/torch_unique.txt" 2>&1 <<'PY'
import sys, os, json
sys.path.insert(0, "bench")
from torch_scan_sort import timed
import torch
u = torch.randint(0, 2**20, (2**26,), device="cuda", dtype=torch.int32)
print(json.dumps({"unique i32 n=2^26 (counts, inverse)": timed(lambda: torch.unique(u, return_inverse=True, return_counts=True))}))
PY
log "torch unique rc=$? $(tail -1 "$R/torch_unique.txt")"
tail -1 "$R/torch_unique.txt" > "$R/torch_unique.json"
timeout 30 lua5.4 - > "$R/unique.txt" 2>&1 <<'LUA'
local ck, bench, json = require "cukern", require "cukern.bench", require "cukern.json"
local f = io.open(os.getenv("R") .. "/torch_unique.json"); local t = f and json.decode(f:read("a")) or {}
local n = math.tointeger(2 ^ 26)
local u = ck.randint(0, 2 ^ 20 - 1, n, {device = "cuda"})
local v, c, j = ck.unique(u, {counts = true, inverse = true})
assert(ck.sum(c):item() == n and ck.equal(v:index_select(1, j), u), "unique: wrong")
local r = bench.run{fn = function() ck.unique(u, {counts = true, inverse = true}) end, device = "cuda", warmup = 3, reps = 10}
local tt = t["unique i32 n=2^26 (counts, inverse)"]
print(("unique i32 2^26 (counts, inverse): ck.unique %.3f ms, torch.unique %s ms"):format(r.ms, tt and ("%.3f"):format(tt) or "?"))
LUA
log "unique rc=$? $(tail -1 "$R/unique.txt")"
fi
log done
