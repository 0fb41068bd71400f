#!/bin/bash
# Round 3, session 8, first GPU call (one H100/H200, ~560 s): fresh sm_90a build; ck.unique beside torch.unique
# (rewritten after its last timing; the call ran an inline form of lab/unique_time.lua's first two rows); then every spec file as lab/round7-suite.sh runs them (long files six at a
# time, the memory- and timing-sensitive ones alone). Everything under $OUT/r (r.tgz at exit).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round8-suite.sh
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
export T0=$(date +%s) R="$OUT/r"; mkdir -p "$R"
bash lab/round5-gpu.sh build
timeout 40 python3 lab/unique_torch.py > "$R/torch_unique.json" 2> "$R/torch_unique.err"
timeout 60 lua5.4 lab/unique_time.lua "$R/torch_unique.json" > "$R/unique.txt" 2>&1
echo "[$(($(date +%s) - T0))s] unique rc=$?" | tee -a "$R/progress.txt"; cat "$R/unique.txt"
DEADLINE=${DEADLINE:-545} HARD=${HARD:-575} bash lab/round7-suite.sh
