#!/bin/bash
# Round 3, session 9, last one-GPU call (~520 s): fresh sm_90a build; lab/issue_probe.lua (host time to issue one
# sum / product and the allocator's work meanwhile: the four-GPU sum's extra issue time); the batched small solves
# beside torch.linalg at this commit; then every spec file as lab/round7-suite.sh runs them (long ones six at a time).
# Everything under $OUT/r (r.tgz at exit).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round9-final.sh
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
export T0=$(date +%s) R="$OUT/r"; mkdir -p "$R"
bash lab/round5-gpu.sh build
timeout 60 lua5.4 lab/issue_probe.lua > "$R/issue_probe.txt" 2>&1
echo "[$(($(date +%s) - T0))s] issue probe rc=$?" | tee -a "$R/progress.txt"; cat "$R/issue_probe.txt"
timeout 40 python3 bench/torch_linalg.py "$R/torch_batched.json" --batched-only > "$R/torch.txt" 2>&1
CUKERN_RESULTS="$R" timeout 60 lua5.4 examples/linalg_bench.lua --only batched --torch "$R/torch_batched.json" \
  > "$R/batched.txt" 2>&1
echo "[$(($(date +%s) - T0))s] batched rc=$?" | tee -a "$R/progress.txt"; grep "^solve" "$R/batched.txt"
DEADLINE=${DEADLINE:-545} HARD=${HARD:-578} bash lab/round7-suite.sh
