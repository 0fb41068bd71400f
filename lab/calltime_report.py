#!/usr/bin/env python3
"""lab/calltime_report.py WINDOWS TRACE [TITLE]: where the host time of each timed call of lab/issue_probe.lua goes.

WINDOWS: the probe's PROBE_WIN file (label, start, end in seconds of CLOCK_MONOTONIC); TRACE: lab/calltime_inject.c's
log of every CUDA runtime/driver call (start ns, duration ns, domain, depth, function, kernel). Per label: the
median window, then per call the outermost CUDA calls by total time (count, mean us) and the time spent outside any
CUDA call (cukern's own host code, Lua, the CUPTI callbacks)."""
import bisect, collections, statistics, sys

wins = collections.defaultdict(list)
for line in open(sys.argv[1]):
    lab, a, b = line.rstrip("\n").split("\t")
    wins[lab].append((int(round(float(a) * 1e9)), int(round(float(b) * 1e9))))
recs = []
for line in open(sys.argv[2]):
    if line.startswith("#"):
        continue
    t0, dur, dom, depth, fn, sym = line.split(" ", 5)
    recs.append((int(t0), int(dur), dom, int(depth), fn, sym.strip()))
recs.sort()
starts = [r[0] for r in recs]
print("##", sys.argv[3] if len(sys.argv) > 3 else sys.argv[2])
for lab, ws in wins.items():
    tot = collections.Counter(); cnt = collections.Counter(); inner = collections.Counter()
    span = []; outside = []; kern = collections.Counter()
    for a, b in ws:
        i = bisect.bisect_left(starts, a); j = bisect.bisect_right(starts, b)
        cov = 0
        for r in recs[i:j]:
            t0, dur, dom, depth, fn, sym = r
            if depth == 0:
                tot[fn] += dur; cnt[fn] += 1; cov += dur
                if sym != "-": kern[sym[:40]] += 1
            else:
                inner[fn] += dur
        span.append((b - a) / 1e3); outside.append((b - a - cov) / 1e3)
    n = len(ws)
    print(f"{lab}: median {statistics.median(span):.1f} us over {n} calls; outside CUDA calls {statistics.median(outside):.1f} us")
    for fn, t in tot.most_common(8):
        print(f"    {fn:44s} {cnt[fn]/n:5.2f}/call {t/cnt[fn]/1e3:8.2f} us each {t/n/1e3:8.2f} us/call")
    for fn, t in inner.most_common(4):
        print(f"      (inside) {fn:35s} {t/n/1e3:8.2f} us/call")
    if kern:
        print("    kernels:", ", ".join(f"{k} x{v/n:.2f}" for k, v in kern.most_common(4)))
