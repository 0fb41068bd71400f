#!/bin/bash
# Round 3, session 9, second 4-GPU call: lab/sum_probe.lua in this tree and in 01bb637's (ab/, as lab/round9-x4ab.sh
# unpacks it; not committed), twice each, after building both.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round9-x4sum.sh
set -u
. lab/run_ab.sh
cp lab/sum_probe.lua ab/lab_sum_probe.lua
run() { # tree label script
  in_tree "$1" timeout 100 lua5.4 "$3" > "$R/sum-$2.txt" 2>&1; log "sum probe $2 rc=$?"; cat "$R/sum-$2.txt"
}
run . head1 lab/sum_probe.lua; run ab ab1 lab_sum_probe.lua; run . head2 lab/sum_probe.lua; run ab ab2 lab_sum_probe.lua
log done
