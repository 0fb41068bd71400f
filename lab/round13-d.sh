#!/bin/bash
# Round 3 session 13's last call (one GPU; results: bench/results/round13/d/): kernels/half.h's f16 conversions
# without a branch (the hardware's cvt and the integer rule's NaN bits, one selected), after c/ measured the
# branching form (f16 a + b 82.9% of memcpy contiguous, 73.6% one transposed, H200): spec/half_spec.lua's device
# conversions over every pattern first, then the elementwise bench's f16/bf16 rows, lab/select_host.lua (how much of
# the select bench's time per call is the host's), the elementwise and fuzz specs, and, time left and nsys there, the
# kernels of nonzero on a sparse mask.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round13-d.sh
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
build_sm90
timeout 40 sh spec/run.sh spec/half_spec.lua > "$R/spec-half.txt" 2>&1; log "half rc=$? $(tail -1 "$R/spec-half.txt")"
mkdir -p "$R/ew"
CUKERN_EW_VARIANTS=contiguous,tiled CUKERN_RESULTS="$R/ew" timeout 30 lua5.4 examples/elementwise_bench.lua > "$R/ew.txt" 2>&1
log "ew bench rc=$?"; grep -E "^ *(-2|2|3) .*(memcpy|f16|bf16)" "$R/ew.txt"
timeout 30 lua5.4 lab/select_host.lua > "$R/select_host.txt" 2>&1; log "select host rc=$?"; cat "$R/select_host.txt"
for f in elementwise fuzz; do
  (timeout 30 sh spec/run.sh "spec/${f}_spec.lua" > "$R/spec-$f.txt" 2>&1; log "$f rc=$? $(tail -1 "$R/spec-$f.txt")") &
done
wait
if command -v nsys > /dev/null && [ $(($(date +%s) - T0)) -lt 285 ]; then
  cat > "$R/nz.lua" <<'LUA'
dofile("examples/paths.lua")
local ck = require "cukern"
local m = ck.rand(1 << 26, {device = "cuda"}):lt(0.01)
for _ = 1, 20 do ck.nonzero(m):free() end
ck.sync()
LUA
  timeout $((300 - $(date +%s) + T0)) nsys profile -o "$R/nz" --force-overwrite true lua5.4 "$R/nz.lua" > "$R/nsys.txt" 2>&1
  timeout 20 nsys stats --report cuda_gpu_kern_sum --format csv "$R/nz.nsys-rep" > "$R/nz-kern.csv" 2>> "$R/nsys.txt"
  log "nsys rc=$?"; head -12 "$R/nz-kern.csv"; rm -f "$R/nz.nsys-rep" "$R/nz.sqlite"
else
  log "nsys: $(command -v nsys || echo absent), or no time"
fi
log done
