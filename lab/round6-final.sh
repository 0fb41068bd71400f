#!/bin/bash
# Round 3, session 6's last GPU call (one H100/H200, ~330 s): build; the specs of what changed since the last
# whole-suite run (i32 matmul, the transpose carrier, sort rung 7 and the default order, linalg's tolerance, the
# stream/handle unbind) six at a time, with the sort ladder's rung tests filtered; then the segmented-sort timing
# beside torch.sort; then the selection bench with what time is left. Everything under $OUT/r (r.tgz at exit).
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
R="$OUT/r"; mkdir -p "$R"; T0=$(date +%s); END=${END:-320}
trap 'tar czf "$OUT/r.tgz" -C "$OUT" r 2>/dev/null' EXIT
left() { echo $((END - ($(date +%s) - T0))); }
log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$R/progress.txt"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$R/device.txt"; cat "$R/device.txt"
timeout 240 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"
( timeout $(( $(left) - 40 )) sh spec/run.sh spec/sort_spec.lua --filter "odd sizes" --filter "many rows" \
    --filter "picks by default" > "$R/sort_spec_filtered.txt" 2>&1; log "sort_spec (rung tests) rc=$? $(tail -1 "$R/sort_spec_filtered.txt")" ) &
for f in matmul transpose linalg_gpu linalg linalg_complex streams select_paths; do
  ( timeout $(( $(left) - 45 )) sh spec/run.sh "spec/${f}_spec.lua" > "$R/$f.txt" 2>&1; log "$f rc=$? $(tail -1 "$R/$f.txt")" ) &
done
wait
for f in "$R"/*.txt; do grep -q "^[0-9]* passed, [1-9]" "$f" && grep -B1 -A12 "^FAIL\|^ERROR" "$f" | head -40; done
timeout 40 python3 lab/segsort_torch.py "$R/torch_seg.json" > "$R/torch_seg.txt" 2>&1; log "torch.sort rc=$?"
timeout 60 lua5.4 lab/segsort_time.lua --torch "$R/torch_seg.json" 2>&1 | tee "$R/segsort.txt"; log "segsort"
if [ "$(left)" -gt 30 ]; then
  mkdir -p "$R/sel"; OUT="$R/sel" BENCH_ARGS="--reps 10" timeout $(( $(left) - 5 )) bash lab/select.sh b 2>&1 | tail -22
  log "select bench"
fi
log done
