#!/bin/bash
# Issue 31 (several GPUs) on a multi-GPU host (nvidia-h100-x2 / -x4; the GPU count comes from the machine):
#   stage a: build; a smoke test of cuda:1; every spec (single- and multi-GPU).
#   stage r: the standalone all-reduce checker (lab/allreduce.sh); the C references (bench/c).
#   stage b: on 2 GPUs, then on all of them (CUDA_VISIBLE_DEVICES): PyTorch's split (bench/torch_multigpu.py), the scaling table, the all-reduce ladder with the C
#            references of this run beside it, the headline rows on every device (examples/device_parity.lua).
#   stage c: compute-sanitizer (memcheck, synccheck) over spec/gpu_multi_sanitize.lua (the several-GPU paths in one
#            process: the specs start child processes and take minutes under a tool).
# Results (JSON, logs) go to $OUT/r.tgz. NCCL_NVLS_ENABLE=0 stays set for every child (never NVLink multicast here).
set -u
. .gpu-lua/env.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
# the device tool brings back at most 8 files: results go to /tmp/issue31, packed into $OUT/r.tgz at the end
R=/tmp/issue31; mkdir -p "$R"
trap 'tar czf "${OUT:-/tmp}/r.tgz" -C "$R" . 2>/dev/null' EXIT
J=$(nproc)
NG=$(nvidia-smi -L | wc -l)
build() { [ -f cukern/core.so ] && [ -z "${REBUILD:-}" ] || make -j"$J" all CUDA_ARCH=90a >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }; }
for st in ${1:-a}; do
case "$st" in
a)
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv | tee "$R/device.txt"
  nvidia-smi topo -m > "$R/topo.txt" 2>&1
  t0=$(date +%s); build; echo "build: $(( $(date +%s) - t0 )) s"
  make -s bench-c >"$R/bench-c.log" 2>&1 || tail -20 "$R/bench-c.log"
  echo "== smoke"
  timeout 120 lua5.4 -e '
    local ck = require "cukern"
    print(#ck.devices(), ck.devices()[2].id, ck.devices()[2].name)
    local a = ck.rand(1000, 1000, {device = "cuda:1"})
    local b = a:to("cuda:0")
    print(a:device(), b:device(), ck.sum(a):item(), ck.sum(b):item())
    local c = ck.matmul(a, a); print(c:device(), ck.allclose(c:to("cuda:0"), ck.matmul(b, b)))
    local l = {ck.ones(4, {device = "cuda:0"}), ck.ones(4, {device = "cuda:1"})}
    ck.nccl.all_reduce(l); print(l[1], l[2], ck.last_ran().name)
    for _, v in ipairs {"gather", "oneshot", "ring"} do ck.nccl.all_reduce(l, "sum", {variant = v}); print(v, l[2]:totable()[1]) end
  ' 2>&1 | tail -20
  echo "== specs"
  timeout "${T_SPECS:-480}" sh spec/run.sh ${SPECS:-} >"$R/specs.log" 2>&1
  echo "specs rc=$?"
  grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs.log" | head -120
  tail -1 "$R/specs.log"
  ;;
r)
  build
  echo "== allreduce_check (standalone)"
  OUT="$R" timeout 240 bash lab/allreduce.sh "$NG" 2>&1 | tail -8
  echo "== C references"
  timeout 120 build/bench/nccl_ref "$NG" > "$R/nccl_c.jsonl" 2>"$R/nccl_c.err"; tail -3 "$R/nccl_c.jsonl"; tail -3 "$R/nccl_c.err"
  timeout 120 build/bench/peer_ref > "$R/peer_c.jsonl" 2>"$R/peer_c.err"; tail -3 "$R/peer_c.jsonl"
  ;;
b)
  build
  [ -x build/bench/nccl_ref ] || make -s bench-c >"$R/bench-c.log" 2>&1
  timeout 120 build/bench/peer_ref > "$R/peer_c.jsonl" 2>"$R/peer_c.err"
  for G in $(echo 2 "$NG" | tr ' ' '\n' | sort -un); do
    export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((G - 1)))
    echo "== $G GPUs ($CUDA_VISIBLE_DEVICES)"
    timeout 120 build/bench/nccl_ref "$G" > "$R/nccl_c-$G.jsonl" 2>"$R/nccl_c-$G.err"; tail -1 "$R/nccl_c-$G.jsonl"
    timeout 300 python3 bench/torch_multigpu.py --gpus "$G" --out "$R/torch-$G.json" >"$R/torch-$G.log" 2>&1
    echo "torch rc=$?"; tail -3 "$R/torch-$G.log"
    CUKERN_RESULTS="$R" timeout 300 lua5.4 examples/scaling_bench.lua --torch "$R/torch-$G.json" --out "$R/scaling-$G.json" 2>&1 | tail -6
    CUKERN_RESULTS="$R" timeout 300 lua5.4 examples/allreduce_ladder.lua --nccl-c "$R/nccl_c-$G.jsonl" --peer-c "$R/peer_c.jsonl" \
      --scaling "$R/scaling-$G.json" 2>&1 | tail -12
    CUKERN_RESULTS="$R" timeout 240 lua5.4 examples/device_parity.lua 2>&1 | tail -8
  done
  unset CUDA_VISIBLE_DEVICES
  ;;
c)
  build
  echo "== compute-sanitizer on the several-GPU paths (spec/gpu_multi_sanitize.lua: one process, small cases)"
  CUKERN_SYNC=1 timeout 120 lua5.4 spec/gpu_multi_sanitize.lua 2>&1 | tail -1
  for tool in ${TOOLS:-memcheck synccheck}; do
    CUKERN_SYNC=1 timeout "${T_SAN:-300}" compute-sanitizer --tool "$tool" --print-limit 100000 --error-exitcode 9 lua5.4 spec/gpu_multi_sanitize.lua \
      >"$R/san-multi-$tool.log" 2>&1
    echo "$tool: rc=$? $(grep -m1 'ERROR SUMMARY' "$R/san-multi-$tool.log") $(grep gpu_multi_sanitize: "$R/san-multi-$tool.log" | tail -1)"
    # which reports are API return codes (and in whose code: the first frame past libcuda) and which are memory errors
    awk '/^========= Program hit/ {api = 1; next} api && /Host Frame/ && !/libcuda/ {sub(/.* in /, ""); n[$0]++; api = 0}
         /^========= (Invalid|Uninitialized|Leaked|Race|Barrier|Misaligned|Out-of-range)/ {mem++}
         END {for (k in n) printf "  API errors first seen in %s: %d\n", k, n[k]; printf "  memory/access reports: %d\n", mem + 0}' \
      "$R/san-multi-$tool.log"
  done
  ;;
esac
done
