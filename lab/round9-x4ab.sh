#!/bin/bash
# Round 3, session 9, on a 4-GPU host: is the four-GPU scaling drop of session 8 (bf16 product 3.79x -> 3.26x, 8 GiB
# sum 3.58x -> 3.20x; every row 130-150 us slower) in our code or in the machine? The same call builds this tree and
# 01bb637 (the commit of the 3.79x run; its sources unpacked under ab/ by `git archive 01bb637 src kernels lua
# examples Makefile mk | tar -x -C ab`, not committed) and runs each one's examples/scaling_bench.lua in turn, twice,
# beside PyTorch's split (bench/torch_multigpu.py), then lab/split_probe.lua on this tree.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round9-x4ab.sh
set -u
. lab/run_ab.sh
timeout 200 python3 bench/torch_multigpu.py --gpus "$NG" --out "$R/torch.json" > "$R/torch.log" 2>&1; log "torch rc=$?"
run() { # tree label
  CUKERN_RESULTS="$R" in_tree "$1" timeout 120 lua5.4 examples/scaling_bench.lua --torch "$R/torch.json" \
    --out "$R/scaling-$2.json" > "$R/scaling-$2.txt" 2>&1
  log "scaling $2 rc=$?"; grep -E "GPU|bf16|sum|chain" "$R/scaling-$2.txt" | head -6
}
run . head1; run ab ab1; run . head2; run ab ab2
in_tree . timeout 100 lua5.4 lab/split_probe.lua > "$R/split_probe.txt" 2>&1; log "split probe rc=$?"
tail -30 "$R/split_probe.txt"
log done
