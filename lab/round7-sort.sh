#!/bin/bash
# Round 3, session 7, the sort call (one H100/H200): build; the segmented sorts and topk beside torch (quiet GPU);
# then sort_spec whole, beside compute-sanitizer's four tools over lab/issue33_sanitize.lua (every rung of the scan,
# sort, histogram and searchsorted ladders on small cases). Everything under $OUT/r (r.tgz at exit).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round7-sort.sh
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
R="$OUT/r"; mkdir -p "$R"; export T0=$(date +%s)
trap 'tar czf "$OUT/r.tgz" -C "$OUT" r 2>/dev/null' EXIT
log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$R/progress.txt"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$R/device.txt"; cat "$R/device.txt"
timeout 300 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"
timeout 60 python3 lab/segsort_torch.py "$R/torch_seg.json" > "$R/torch_seg.txt" 2>&1; log "torch rc=$?"
timeout 90 lua5.4 lab/segsort_time.lua --torch "$R/torch_seg.json" > "$R/segsort.txt" 2>&1; log "segsort rc=$?"
cat "$R/segsort.txt"
( timeout 280 sh spec/run.sh spec/sort_spec.lua > "$R/sort_spec.txt" 2>&1; log "sort_spec rc=$? $(tail -1 "$R/sort_spec.txt")"
  grep -B1 -A14 "^FAIL\|^ERROR" "$R/sort_spec.txt" | head -50 ) &
OUT="$OUT" T0=$T0 TOOLS="${TOOLS:-memcheck synccheck initcheck racecheck}" T_SAN=120 bash lab/round5-gpu.sh san33 2>&1 | tail -12
wait
log done
