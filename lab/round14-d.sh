#!/bin/bash
# For round 3 session 14, on lab/round14-c.sh's machine while warm (its build kept). Results: bench/results/round14/d/.
#   issue 37: torch._scaled_mm (with and without fast accumulation) beside rung 16 (cuBLASLt) and rung 18 (ours) in
#             alternating rounds (examples/fp8_bench.lua), ncu over rung 18 at 8192^3; the bf16 shape sweep with the
#             dispatch rule m >= 8192 (examples/gemm_sweep.lua);
#   issue 32: the select bench (index rung 3 now the compactions' default, CUB beside it with CUKERN_IX_FLAGS=0),
#             the elementwise bench (f16 on the bare cvt);
#   issue 33: the scan ladder (rung 6's sleeps scaled by the bandwidth, CUB in the same run).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round14-d.sh
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
[ -f cukern/core.so ] || build_sm90
mkdir -p "$R/fp8" "$R/sel" "$R/sel-cub" "$R/ew" "$R/scan" "$R/gemm"
timeout 90 python3 bench/torch_fp8.py --out "$R/torch_fp8.json" > "$R/torch_fp8.log" 2>&1; log "torch fp8 rc=$?"
CUKERN_RESULTS="$R/fp8" timeout 90 lua5.4 examples/fp8_bench.lua --torch "$R/torch_fp8.json" > "$R/fp8.txt" 2>&1
log "fp8 bench rc=$?"; cat "$R/fp8.txt"
if command -v ncu > /dev/null; then
  known=$(ncu --query-metrics --chip gh100 2>/dev/null | awk '{print $1}')
  mets=""
  for m in sm__pipe_tensor_op_gmma_cycles_active sm__pipe_tensor_op_hmma_cycles_active sm__inst_executed_pipe_tensor_op_gmma; do
    printf '%s\n' "$known" | grep -qx "$m" && mets="$mets,$m.avg.pct_of_peak_sustained_active"
  done
  mets=${mets#,}
  timeout 120 ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis ${mets:+--metrics $mets} \
    --kernel-name regex:matmul_persistent --launch-skip 1 --launch-count 1 lua5.4 -e 'local ck = require "cukern"
      local a = (ck.rand({8192, 8192}, {device = "cuda"}) * 2 - 1):to("e4m3")
      local bt = (ck.rand({8192, 8192}, {device = "cuda"}) * 2 - 1):to("e4m3")
      local c = ck.empty({8192, 8192}, {dtype = "bf16", device = "cuda"})
      for _ = 1, 2 do ck.matmul(a, bt:t(), {out = c, variant = "wgmma_fp8"}) end; ck.sync(); print(ck.last_ran().name)' \
    > "$R/ncu-fp8-wgmma.txt" 2>&1
  log "ncu wgmma_fp8 rc=$?"; grep -E "pipe|SM Busy|Throughput|Duration|Frequency|wgmma_fp8" "$R/ncu-fp8-wgmma.txt" | head -14
fi
timeout 90 python3 bench/torch_select.py --out "$R/torch_select.json" > "$R/torch_select.log" 2>&1; log "torch select rc=$?"
CUKERN_RESULTS="$R/sel" timeout 90 lua5.4 examples/select_bench.lua --torch "$R/torch_select.json" > "$R/select.txt" 2>&1
log "select rc=$?"; grep -E "^(where|cat|stack|index_select|nonzero|masked|find)" "$R/select.txt" | grep -v "  vec \|  cub \|  flags "
CUKERN_IX_FLAGS=0 CUKERN_RESULTS="$R/sel-cub" timeout 60 lua5.4 examples/select_bench.lua --torch "$R/torch_select.json" \
  --only "masked,nonzero,find" > "$R/select-cub.txt" 2>&1; log "select cub rc=$?"
grep -E "^(masked|nonzero|find)" "$R/select-cub.txt" | grep -v "  cub "
CUKERN_EW_VARIANTS=contiguous,tiled CUKERN_RESULTS="$R/ew" timeout 60 lua5.4 examples/elementwise_bench.lua > "$R/ew.txt" 2>&1
log "ew bench rc=$?"; grep -E "^ *(-2|2|3) .*(memcpy|f16|bf16|i64|u8)" "$R/ew.txt"
CUKERN_RESULTS="$R/scan" timeout 150 lua5.4 examples/scan_ladder.lua > "$R/scan_ladder.txt" 2>&1; log "scan ladder rc=$?"
grep -E "^ *(0|6) " "$R/scan_ladder.txt" | head -12
CUKERN_RESULTS="$R/gemm" timeout $((585 - $(date +%s) + T0)) lua5.4 examples/gemm_sweep.lua > "$R/gemm_full.txt" 2>&1
log "gemm sweep rc=$?"; tail -3 "$R/gemm_full.txt"
log done
