#!/usr/bin/env bash
# Experiment "small" (issue 16): host time of small ops, cukern against PyTorch in the same run, with the
# launch floor of this machine beside them, then the specs of what the small-op work changed.
#   1. lab/launch_floor.cu: <<<>>>, cudaLaunchKernel, cuLaunchKernel, graph replay (us per launch);
#   2. examples/small_ops_bench.lua --torch: fill, a + b, a:add_(b), sum of 16, 8x8 matmul (us per op);
#   3. which variant each small op ran (ck.last_ran) and its kernels;
#   4. specs: graph (capture of the driver-API launches), introspection (the small-problem defaults),
#      elementwise, reduce (without the 2^24 case), matmul.
# Output: $OUT/small.txt (everything); stdout ends with a short table. Expected wall time ~60-120 s
# (launch floor ~10 s, small-op bench ~25 s with torch, specs ~30-80 s; each spec run has its own timeout).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/exp-small}; mkdir -p "$OUT" build/exp
LOG="$OUT/small.txt"; : >"$LOG"
. .gpu-lua/env.sh 2>/dev/null
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}

echo "== launch floor" | tee -a "$LOG"
if "$NVCC" -O2 -arch=sm_90 -o build/exp/launch_floor lab/launch_floor.cu >>"$LOG" 2>&1; then
  timeout 40 build/exp/launch_floor 2>&1 | tee -a "$LOG" >"$OUT/floor.txt"
else echo "launch_floor: BUILD FAILED" | tee -a "$LOG"; fi

echo "== small ops (cukern vs torch, same run)" | tee -a "$LOG"
timeout 60 lua5.4 examples/small_ops_bench.lua --torch 2>&1 | tee -a "$LOG" >"$OUT/bench.txt"
echo "== small ops with the driver-API launch (CUKERN_LAUNCH=driver), same run" | tee -a "$LOG"
CUKERN_LAUNCH=driver timeout 40 lua5.4 examples/small_ops_bench.lua 2>&1 | tee -a "$LOG" >"$OUT/bench_runtime.txt"

echo "== what ran" | tee -a "$LOG"
timeout 20 lua5.4 - >>"$LOG" 2>&1 <<'EOF'
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
local a, b = ck.rand(4, 4, {device = "cuda"}), ck.rand(4, 4, {device = "cuda"})
local m1, m2 = ck.rand(8, 8, {device = "cuda"}), ck.rand(8, 8, {device = "cuda"})
local function show(what, r)
  local ran = ck.last_ran()
  local ks = {}
  for _, k in ipairs(ran.kernels or {}) do ks[#ks + 1] = k.name end
  print(("%-22s ran %-12s kernels {%s} %s"):format(what, ran.name, table.concat(ks, ", "), ran.note or ""))
end
show("a + b", a + b)
show("a:add_(b)", a:add_(b))
show("sum of 16", ck.sum(a))
show("sum of 4096", ck.sum(ck.rand(4096, {device = "cuda"})))
show("sum of 2^20", ck.sum(ck.rand(1 << 20, {device = "cuda"})))
show("8x8 matmul", m1 * m2)
show("64^3 matmul", ck.rand(64, 64, {device = "cuda"}) * ck.rand(64, 64, {device = "cuda"}))
show("128^3 matmul", ck.rand(128, 128, {device = "cuda"}) * ck.rand(128, 128, {device = "cuda"}))
EOF

echo "== specs" | tee -a "$LOG"
spec() { # name, seconds, busted args...
  local name=$1 t=$2; shift 2
  timeout "$t" sh spec/run.sh "$@" >"$OUT/spec-$name.log" 2>&1
  local rc=$?
  echo "spec $name: rc $rc: $(tail -1 "$OUT/spec-$name.log")" | tee -a "$LOG"
  grep -A12 "^FAIL\|^ERROR\|Failure\|Error →" "$OUT/spec-$name.log" | head -40 >>"$LOG"
}
spec graph 30 spec/graph_spec.lua spec/introspection_spec.lua
spec elementwise 40 spec/elementwise_spec.lua
spec reduce 40 --filter-out="2^24" spec/reduce_spec.lua
spec matmul 40 spec/matmul_spec.lua

# short table last
echo
echo "small ops, us per op (median of 7 rounds of 20000; targets = 0.5x torch of 2026-11-24, with margin)"
grep -E "us/launch" "$OUT/floor.txt" 2>/dev/null | sed 's/^/floor: /'
awk 'BEGIN { t["fill"] = 4.4; t["a + b"] = 5.5; t["a:add_(b)"] = 4.5; t["sum of"] = 6.1; t["8x8 matmul"] = 7.9 }
     /^case/ { print; next }
     /^(fill|a \+ b|a:add_|sum of|8x8)/ { tgt = "-"; for (k in t) if (index($0, k) == 1) tgt = t[k];
                                          print $0 "   target " tgt }' "$OUT/bench.txt" 2>/dev/null
grep -E "graph" "$OUT/bench.txt" 2>/dev/null
echo "the same with the driver-API launch (CUKERN_LAUNCH=driver):"
grep -E "^(fill|a \+ b|a:add_|sum of|8x8)" "$OUT/bench_runtime.txt" 2>/dev/null
grep -E "^(a \+ b|a:add_|sum of|8x8|64|128)" "$LOG" | grep " ran " | awk '{ $NF = $NF; print }' | cut -c1-110
grep "^spec " "$LOG"
