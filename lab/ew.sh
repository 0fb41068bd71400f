#!/usr/bin/env bash
# Experiment `ew`: elementwise rung 3 "tiled" (kernels/elementwise/03_tiled.cu) — the new 64 x 64 kernel
# against the 32 x 32 one it replaces (TEMPORARY knob CUKERN_EW_TILED=old), and against memcpy.
# Needs: the library built (make -j16 all), lua5.4 + busted (.gpu-lua/env.sh), python3. Expected ~80-110 s:
#   1. sh spec/run.sh spec/elementwise_spec.lua        every path of the new kernel against the host (<= 60 s)
#   2. examples/elementwise_bench.lua, all variants    new tiled kernel, strided, contiguous, memcpy (<= 45 s)
# Full output in $OUT/ew.txt (bench JSON under $OUT/ew-results/, spec log in $OUT/ew-spec.log); a short
# table is printed last: per case, GB/s and % of memcpy (bytes read + written) of the new and the old tiled
# kernel, the strided rung's %, the kernel that ran when asked for "tiled", and whether it validated.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/exp-out}
mkdir -p "$OUT"
[ -f .gpu-lua/env.sh ] && . .gpu-lua/env.sh
log=$OUT/ew.txt
R=$OUT/ew-results
rm -rf "$R"
mkdir -p "$R/new" "$R/old"
: >"$log"
t0=$(date +%s)

echo "== spec/elementwise_spec.lua (new kernel)" >>"$log"
timeout 60 sh spec/run.sh spec/elementwise_spec.lua >"$OUT/ew-spec.log" 2>&1
spec_rc=$?
grep -B2 -A14 "^FAIL\|^ERROR\|Failure\|Error →" "$OUT/ew-spec.log" | head -60 >>"$log"
spec_sum=$(tail -1 "$OUT/ew-spec.log")
echo "spec rc $spec_rc: $spec_sum ($(( $(date +%s) - t0 )) s)" >>"$log"

t1=$(date +%s)
echo "== bench, all variants, new tiled kernel" >>"$log"
CUKERN_RESULTS=$R/new CUKERN_PROGRESS=0 timeout 45 lua5.4 examples/elementwise_bench.lua >>"$log" 2>&1
echo "bench new rc $? ($(( $(date +%s) - t1 )) s)" >>"$log"

# (step 3, the 32 x 32 kernel behind CUKERN_EW_TILED=old, is gone with that kernel since 0b898c5: the "old"
# columns stay empty; lab/results/2026-11-24-elementwise-tiled.txt has the comparison)

python3 - "$R" "$spec_rc" "$spec_sum" >>"$log" 2>&1 <<'PY'
import glob, json, sys
R, spec_rc, spec_sum = sys.argv[1], sys.argv[2], sys.argv[3]
def load(d):
    f = sorted(glob.glob(d + "/elementwise-*.json"))
    return json.load(open(f[0]))["rows"] if f else []
new, old = load(R + "/new"), load(R + "/old")
def kern(r):
    ks = r.get("kernels") or []
    n = " ".join(str(k.get("name", "")) for k in ks)
    for key, short in (("old32", "old32"), ("ew_wide", "wide"), ("ew_tiled", "old32"), ("contiguous", "contig"),
                       ("strided", "strided")):
        if key in n: return short
    return r.get("variant", "?")
def find(rows, r, asked):
    for x in rows:
        if x.get("op") == r.get("op") and x.get("layout") == r.get("layout") and x.get("asked") == asked: return x
    return None
def f(x, k, fmt):
    return fmt % x[k] if x and x.get(k) is not None else "-"
mc = [x for x in new if x.get("op") == "memcpy"]
print("")
print("ew summary (% = of memcpy in the same run, bytes read + written)")
print("memcpy: new run %s GB/s, old run %s GB/s; spec rc %s: %s" % (
    f(mc[0] if mc else None, "gbps", "%.0f"),
    f(next((x for x in old if x.get("op") == "memcpy"), None), "gbps", "%.0f"), spec_rc, spec_sum))
print("%-18s %-26s %-7s %7s %6s | %7s %6s | %8s %6s | %s" % ("op", "layout", "ran", "GB/s", "%", "old GB/s", "old %",
      "strided%", "contig%", "ok"))
seen = set()
for r in new:
    if r.get("op") == "memcpy" or r.get("asked") != "tiled": continue
    key = (r.get("op"), r.get("layout"))
    if key in seen: continue
    seen.add(key)
    o, s, c = find(old, r, "tiled"), find(new, r, "strided"), find(new, r, "contiguous")
    ok = "yes" if r.get("correct") and (not o or o.get("correct")) else "NO"
    print("%-18s %-26s %-7s %7s %6s | %7s %6s | %8s %6s | %s" % (
        r.get("op", "")[:18], r.get("layout", "")[:26], kern(r) + ("" if r.get("variant") == "tiled" else "*"),
        f(r, "gbps", "%.0f"), f(r, "pct_of_ref", "%.1f"), f(o, "gbps", "%.0f"), f(o, "pct_of_ref", "%.1f"),
        f(s, "pct_of_ref", "%.1f"), f(c, "pct_of_ref", "%.1f"), ok))
print("ran: kernel that ran when asked for tiled (wide = new 64x64, old32 = 32x32; * = another rung ran)")
PY
echo "total $(( $(date +%s) - t0 )) s" >>"$log"
sed -n '/^ew summary/,$p' "$log"
