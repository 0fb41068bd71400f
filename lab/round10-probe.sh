#!/bin/bash
# Round 3, session 10, first one-GPU call: where the extra host time to issue an op goes (issue 31's four-GPU sum:
# 80-110 us to issue ck.sum of 2^31 at 42e4ccf/baef273, 20-26 us at 01bb637). A fresh sm_90a build, then
# lab/issue_probe.lua plain and under lab/calltime_inject.c (every CUDA runtime/driver call logged through CUPTI),
# joined by lab/calltime_report.py; lab/dmma_probe.cu (f64 tensor-core GEMM against cublasDgemm); then as many spec
# files as fit (lab/round7-suite.sh, under DEADLINE).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round10-probe.sh
set -u
. lab/run_env.sh
bash lab/round5-gpu.sh build
INC=$(dirname "$(find / -name cupti.h -path '*include*' 2>/dev/null | head -1)")
LIB=$(dirname "$(find / -name 'libcupti.so*' 2>/dev/null | head -1)")
log "cupti: $INC $LIB"
nvcc -O2 -shared -Xcompiler -fPIC -I"$INC" -o "$PWD/calltime.so" -x c lab/calltime_inject.c -L"$LIB" -lcupti \
  -Xlinker -rpath,"$LIB" > "$R/calltime-build.txt" 2>&1; log "calltime.so rc=$?"
timeout 90 lua5.4 lab/issue_probe.lua > "$R/probe-head.txt" 2>&1; log "probe rc=$?"; cat "$R/probe-head.txt"
CUDA_INJECTION64_PATH=$PWD/calltime.so CALLTIME_OUT=$R/trace.txt PROBE_WIN=$R/win.txt timeout 90 \
  lua5.4 lab/issue_probe.lua > "$R/probe-traced.txt" 2>&1; log "traced probe rc=$?"
python3 lab/calltime_report.py "$R/win.txt" "$R/trace.txt" "head traced" > "$R/report.txt" 2>&1; gzip -f "$R/trace.txt"
nvcc -O3 -std=c++17 -arch=sm_90a -lcublas -o /tmp/dmma lab/dmma_probe.cu > "$R/dmma-build.txt" 2>&1 && \
  timeout 60 /tmp/dmma > "$R/dmma.txt" 2>&1; log "dmma rc=$?"
DEADLINE=${DEADLINE:-540} HARD=${HARD:-580} bash lab/round7-suite.sh > "$R/suite-out.txt" 2>&1
tail -5 "$R/suite-out.txt"; cat "$R/dmma-build.txt" "$R/dmma.txt" | tail -25; cat "$R/report.txt"
