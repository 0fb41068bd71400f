#!/bin/sh
# Runs every spec with busted under Lua 5.4 and ends with the plain line "N passed, N failed, N skipped".
# Extra arguments go to busted (e.g. a single spec file). Exit status: non-zero on any failure or error.
cd "$(dirname "$0")/.." || exit 1
LUA=${LUA:-lua5.4}
# busted's runner script, run under Lua 5.4 (Debian's /usr/bin/busted, or the copy packed for the GPU host).
if [ -n "$BUSTED_SCRIPT" ]; then BUSTED=$BUSTED_SCRIPT
elif [ -f /usr/bin/busted ]; then BUSTED=/usr/bin/busted
else BUSTED=.gpu-lua/usr/bin/busted; fi
# The specs run with the launch-order check on (issue 29): the launchers below the core's one launch function
# report any launch that finds batched small ops still queued. CUKERN_CHECK_ORDER=0 turns it off.
export CUKERN_CHECK_ORDER="${CUKERN_CHECK_ORDER:-1}"
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}"
export LUA_CPATH="./?.so;${LUA_CPATH:-;}"
[ $# -eq 0 ] && set -- spec
exec "$LUA" "$BUSTED" --lpath='./lua/?.lua;./lua/?/init.lua;./?.lua' --cpath='./?.so' -o spec/summary.lua "$@"
