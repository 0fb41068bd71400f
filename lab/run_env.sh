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
