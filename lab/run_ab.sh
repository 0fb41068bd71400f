# lab/run_ab.sh — sourced by the A/B call scripts of round 3 session 9 (lab/round9-x4ab.sh, round9-x4sum.sh): NCCL
# without NVLink multicast, lab/run_env.sh's preamble ($R, log, device.txt, r.tgz at exit), then this tree and the
# older one unpacked under ab/ built side by side (half the cores each), and `in_tree DIR CMD...` to run a command
# from either tree's root with that tree's modules first on the paths.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
. lab/run_env.sh
NG=$(nvidia-smi -L | wc -l)
J=$(( $(nproc) / 2 ))
(timeout 330 make -j"$J" all CUDA_ARCH=90a > "$R/build-head.txt" 2>&1; echo "head rc=$?" >> "$R/progress.txt") &
(timeout 330 make -C ab -j"$J" all CUDA_ARCH=90a > "$R/build-ab.txt" 2>&1; echo "ab rc=$?" >> "$R/progress.txt") &
wait; log "builds done"
in_tree() {
  local dir=$1; shift
  (cd "$dir" && LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}" "$@")
}
