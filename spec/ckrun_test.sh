#!/bin/sh
# spec/ckrun_test.sh — checks bin/ckrun with small Lua scripts (`make ckrun-test`; needs lua5.4, and gcc for the
# end-to-end part): the variables each rank gets, output prefixes, a failing rank (its status, its name, the
# others stopped), a rank killed by a signal, -n from nvidia-smi, bad usage, ckrun itself stopped, and 4 ranks
# sharing a 128-byte id through the real store (spec/c/ckrun_rank.c) over file:// and tcp://.
# One line per check, "ok - <name>" or "not ok - <name>: <why>"; exits 1 if any failed.
cd "$(dirname "$0")/.." || exit 1
LUA=${LUA:-lua5.4}
export LUA
CKRUN=$PWD/bin/ckrun
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ckrun_test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1: $2"; failed=$((failed + 1)); }

cat >"$tmp/env.lua" <<'EOF'
local function v(k) return os.getenv(k) or "nil" end
print(("rank=%s local=%s world=%s store=%s nvls=%s timeout=%s args=%s"):format(v("CUKERN_RANK"),
  v("CUKERN_LOCAL_RANK"), v("CUKERN_WORLD_SIZE"), v("CUKERN_STORE"), v("NCCL_NVLS_ENABLE"),
  v("CUKERN_STORE_TIMEOUT"), table.concat(arg, "|")))
io.stderr:write("err line\n")
EOF
cat >"$tmp/fail.lua" <<'EOF'
local r = tonumber(os.getenv("CUKERN_RANK"))
if r == 1 then print("rank 1 exits 3"); os.exit(3) end
local t = os.time() while os.time() - t < 60 do end
EOF
cat >"$tmp/kill.lua" <<'EOF'
if os.getenv("CUKERN_RANK") == "1" then
  local pid = io.open("/proc/self/stat"):read("n") -- this lua process
  os.execute("kill -9 " .. pid)
end
local t = os.time() while os.time() - t < 60 do end
EOF
cat >"$tmp/error.lua" <<'EOF'
if os.getenv("CUKERN_RANK") == "0" then error("boom") end
EOF
cat >"$tmp/forever.lua" <<'EOF'
local t = os.time() while os.time() - t < 60 do end
EOF

# 1. the variables, args, prefixes, NCCL_NVLS_ENABLE forced to 0, the store directory removed after
NCCL_NVLS_ENABLE=1 "$CKRUN" -n 3 "$tmp/env.lua" a "b c" >"$tmp/out" 2>"$tmp/err"
rc=$?
dir=$(sed -n 's|.*store=file://\([^ ]*\) .*|\1|p' "$tmp/out" | head -1)
why=""
[ $rc -eq 0 ] || why="exit status $rc"
for i in 0 1 2; do
  grep -qx "\[rank $i\] rank=$i local=$i world=3 store=file://$dir nvls=0 timeout=nil args=a|b c" "$tmp/out" ||
    why="$why; no right line of rank $i in: $(cat "$tmp/out")"
  grep -qx "\[rank $i\] err line" "$tmp/err" || why="$why; rank $i's stderr line is not on stderr"
done
[ "$(sort -u "$tmp/out" | sed -n 's|.*store=\([^ ]*\) .*|\1|p' | sort -u | wc -l)" -eq 1 ] || why="$why; stores differ"
[ -n "$dir" ] && [ ! -e "$dir" ] || why="$why; the store directory $dir is still there"
[ -z "$why" ] && ok "3 ranks get rank, local rank, world, one fresh file store, NCCL_NVLS_ENABLE=0, args" ||
  notok "3 ranks get their variables" "$why"

# 2. tcp store: a probed port, or --port; --timeout exported
"$CKRUN" -n 2 --store tcp --timeout 7.5 "$tmp/env.lua" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c 'store=tcp://127.0.0.1:[0-9]* nvls=0 timeout=7.5' "$tmp/out")" -eq 2 ]; then
  ok "--store tcp picks a port; --timeout is exported"
else notok "--store tcp" "status $rc: $(cat "$tmp/out")"; fi
"$CKRUN" -n 2 --store=tcp --port 29517 "$tmp/env.lua" >"$tmp/out" 2>&1
[ "$(grep -c 'store=tcp://127.0.0.1:29517 ' "$tmp/out")" -eq 2 ] && ok "--port P is used" ||
  notok "--port P" "$(cat "$tmp/out")"

# 3. rank 1 exits 3: ckrun exits 3 and names rank 1; the others are stopped after the grace
start=$(date +%s)
CKRUN_GRACE=1 "$CKRUN" -n 3 "$tmp/fail.lua" >"$tmp/out" 2>"$tmp/err"
rc=$? took=$(($(date +%s) - start))
if [ $rc -eq 3 ] && grep -q "rank 1 failed (exit status 3)" "$tmp/err" && [ $took -lt 15 ] &&
  grep -qx "\[rank 1\] rank 1 exits 3" "$tmp/out"; then
  ok "a rank that exits 3: ckrun exits 3 naming rank 1, the others stopped (${took} s)"
else notok "a rank that exits 3" "status $rc after ${took} s: $(cat "$tmp/err")"; fi

# 4. a rank killed by a signal; a Lua error
CKRUN_GRACE=1 "$CKRUN" -n 2 "$tmp/kill.lua" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 137 ] && grep -q "rank 1 failed (killed by signal 9 (SIGKILL))" "$tmp/err" &&
  ok "a rank killed by SIGKILL: status 137, named" || notok "a rank killed by a signal" "status $rc: $(cat "$tmp/err")"
"$CKRUN" -n 2 "$tmp/error.lua" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q "rank 0 failed (exit status 1)" "$tmp/err" && grep -q "^\[rank 0\] .*boom" "$tmp/err" &&
  ok "a Lua error in rank 0: status 1, named, its message prefixed" ||
  notok "a Lua error" "status $rc: $(cat "$tmp/err")"

# 5. -n from nvidia-smi -L (a fake one here)
mkdir -p "$tmp/fakebin"
printf '#!/bin/sh\necho "GPU 0: NVIDIA H100 (UUID: GPU-a)"\necho "GPU 1: NVIDIA H100 (UUID: GPU-b)"\n' \
  >"$tmp/fakebin/nvidia-smi"
chmod +x "$tmp/fakebin/nvidia-smi"
PATH="$tmp/fakebin:$PATH" "$CKRUN" "$tmp/env.lua" >"$tmp/out" 2>&1
[ "$(grep -c 'world=2 ' "$tmp/out")" -eq 2 ] && ok "-n defaults to the GPUs nvidia-smi -L lists" ||
  notok "-n from nvidia-smi" "$(cat "$tmp/out")"

# 6. bad usage: status 2 and a message
why=""
for args in "-n 0 env.lua" "-n x env.lua" "--store nfs env.lua" "--port 5 env.lua" "--store tcp --port 0 env.lua" \
  "--timeout 0 env.lua" "--bogus env.lua" "" "missing.lua"; do
  # shellcheck disable=SC2086
  (cd "$tmp" && "$CKRUN" $args >"$tmp/out" 2>&1)
  rc=$?
  [ $rc -eq 2 ] && grep -q "^ckrun: " "$tmp/out" || why="$why; [$args]: status $rc: $(cat "$tmp/out")"
done
[ -z "$why" ] && ok "bad usage: status 2 and a message" || notok "bad usage" "$why"

# 7. ckrun itself stopped with SIGTERM: the ranks are stopped, status 143
"$CKRUN" -n 2 "$tmp/forever.lua" >"$tmp/out" 2>"$tmp/err" &
ck=$!
sleep 1
kill -TERM $ck
wait $ck
rc=$?
left=$(ps -eo args | grep -c "[f]orever.lua")
[ $rc -eq 143 ] && [ "$left" -eq 0 ] && ok "SIGTERM to ckrun stops the ranks (status 143)" ||
  notok "SIGTERM to ckrun" "status $rc, $left ranks left: $(cat "$tmp/err")"

# 8. end to end: 4 ranks share a 128-byte id through the real store (file and tcp)
if command -v "${CC:-cc}" >/dev/null 2>&1; then
  mkdir -p build/spec
  if "${CC:-cc}" -std=c11 -O1 -Wall -Wextra -Isrc/dist -o build/spec/ckrun_rank spec/c/ckrun_rank.c src/dist/store*.c src/dist/dist_env.c \
    -lpthread -lm 2>"$tmp/cc"; then
    for st in file tcp; do
      LUA=build/spec/ckrun_rank "$CKRUN" -n 4 --store $st --timeout 20 "$tmp/env.lua" >"$tmp/out" 2>&1
      rc=$?
      ids=$(sed -n 's/^\[rank [0-3]\] rank [0-3] of 4 (local [0-3]): id \(.*\)$/\1/p' "$tmp/out" | sort -u)
      [ $rc -eq 0 ] && [ "$(grep -c ': id ' "$tmp/out")" -eq 4 ] && [ "$(echo "$ids" | wc -l)" -eq 1 ] &&
        ok "4 ranks under ckrun share a 128-byte id through the $st store" ||
        notok "4 ranks share an id ($st)" "status $rc: $(cat "$tmp/out")"
    done
  else notok "building spec/c/ckrun_rank.c" "$(cat "$tmp/cc")"; fi
else echo "ok - # SKIP the end-to-end check: no C compiler"; fi

[ $failed -eq 0 ] && echo "PASS" || echo "FAIL: $failed check(s) failed"
[ $failed -eq 0 ]
