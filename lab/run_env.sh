# lab/run_env.sh — sourced by the one-GPU call scripts of round 3 session 8 (lab/round8-final.sh, round8-last.sh,
# round8-verify.sh): the packed Lua, the module paths, $R = $OUT/r packed into $OUT/r.tgz at exit (the device tool
# brings back only a few loose files), log() with seconds since the start, and the card in $R/device.txt.
. .gpu-lua/env.sh 2>/dev/null || true
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
export R="$OUT/r" T0=$(date +%s)
mkdir -p "$R"
trap 'tar czf "$OUT/r.tgz" -C "$OUT" r 2>/dev/null' EXIT
log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$R/progress.txt"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$R/device.txt"
cat "$R/device.txt"
# build_sm90: the fresh sm_90a build every call starts with (DLPack's header from .gpu-lua where the host has none),
# logged; then par_specs "FILES" N LIMIT: those spec files N at a time (lab/round5-gpu.sh speceach) into
# $R/specs-out.txt, its tail printed.
build_sm90() {
  [ -f /usr/include/dlpack/dlpack.h ] || [ ! -f .gpu-lua/include/dlpack/dlpack.h ] || export DLPACK_INCDIR="$PWD/.gpu-lua/include"
  timeout "${1:-330}" make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; grep -m3 error "$R/build.txt"
}
par_specs() {
  PAR_SPECS="$1" SPECS="" NPAR="$2" T_EACH="$3" T0=$T0 bash lab/round5-gpu.sh speceach > "$R/specs-out.txt" 2>&1
  tail -8 "$R/specs-out.txt"
}
. lab/sanitize.sh # sanitize LABEL SCRIPT LIMIT TOOLS...
