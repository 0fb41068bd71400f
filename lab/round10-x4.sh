#!/bin/bash
# Round 3, session 10, on a 4-GPU host: the sharded 8 GiB sum after the allocator's small-block segments (issue 31:
# 3.43x / 3.22x at 42e4ccf against 3.56x / 3.55x at 01bb637 on one host, session 9). Builds this tree and 01bb637's
# (ab/, unpacked by `git archive 01bb637 src kernels lua examples Makefile mk spec/helpers.lua | tar -x -C ab`; not
# committed), then each one's examples/scaling_bench.lua in turn, twice, and lab/sum_probe.lua in each.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round10-x4.sh
set -u
. lab/run_ab.sh
cp lab/sum_probe.lua ab/lab_sum_probe.lua
run() { # tree label
  CUKERN_RESULTS="$R" in_tree "$1" timeout 120 lua5.4 examples/scaling_bench.lua --out "$R/scaling-$2.json" \
    > "$R/scaling-$2.txt" 2>&1
  log "scaling $2 rc=$?"; grep -E "GPU|bf16|sum|chain" "$R/scaling-$2.txt" | head -6
}
run . head1; run ab ab1; run . head2; run ab ab2
in_tree . timeout 60 lua5.4 lab/sum_probe.lua > "$R/sum-head.txt" 2>&1; log "sum probe head rc=$?"
in_tree ab timeout 60 lua5.4 lab_sum_probe.lua > "$R/sum-ab.txt" 2>&1; log "sum probe ab rc=$?"
cat "$R/sum-head.txt" "$R/sum-ab.txt"
log done
