"""The peers of the scan and sort ladders (issue 33), timed in the same run on the same GPU: PyTorch and CuPy.

    python3 bench/torch_scan_sort.py --out peers.json

Cases as examples/scan_ladder.lua and examples/sort_ladder.lua: cumsum of 2^28 f32 and along either dim of
16384^2; sort (values and indices) of 2^28 int32 (torch has no uint32 sort on every version) and f32; CuPy's
sort of 2^28 uint32 keys (CUB keys only) and argsort; sort of 65536 rows of 1024 along dim 1; topk(2^28, 1024) and topk(k = 10) of those rows;
unique (counts and inverse) of 2^26 int32 in [0, 2^20); histc of 2^28 f32 into 1024 bins. CUDA events, 3
warm-ups, the median of 10 runs, L2 flushed (a 256 MiB memset) before each. GB/s counts one read and one write
per element for scans; Gkeys/s = elements / time for sorts.
"""
import argparse
import json
import statistics
import sys


def timed(fn, reps=10, warmup=3):
    import torch
    flush = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(reps):
        flush.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import torch
    dev = torch.cuda.get_device_name(0)
    rows = []

    def row(lib, case, ms, n, nbytes=None):
        r = {"peer": lib, "case": case, "ms": ms, "numel": n, "gkeys": n / ms / 1e6}
        if nbytes:
            r["gbps"] = nbytes / ms / 1e6
        rows.append(r)
        print(f"{lib:6s} {case:40s} {ms:9.3f} ms" + (f" {r['gbps']:7.0f} GB/s" if nbytes else f" {r['gkeys']:6.2f} Gkeys/s"),
              flush=True)

    n = 2**28
    x = torch.randint(-4, 4, (n,), device="cuda").float()
    row("torch", "cumsum f32 n=2^28", timed(lambda: torch.cumsum(x, 0)), n, 8 * n)
    m = torch.randint(-4, 4, (16384, 16384), device="cuda").float()
    row("torch", "cumsum f32 16384x16384 dim 2", timed(lambda: torch.cumsum(m, 1)), m.numel(), 8 * m.numel())
    row("torch", "cumsum f32 16384x16384 dim 1", timed(lambda: torch.cumsum(m, 0)), m.numel(), 8 * m.numel())
    del x, m
    xi = torch.randint(-2**31, 2**31 - 1, (n,), device="cuda", dtype=torch.int32)
    row("torch", "sort i32 n=2^28 (values, indices)", timed(lambda: torch.sort(xi, stable=True)), n)
    del xi
    xf = torch.rand(n, device="cuda") * 2 - 1
    row("torch", "sort f32 n=2^28 (values, indices)", timed(lambda: torch.sort(xf, stable=True)), n)
    row("torch", "topk f32 n=2^28 k=1024", timed(lambda: torch.topk(xf, 1024)), n)
    row("torch", "histc f32 n=2^28 bins=1024", timed(lambda: torch.histc(xf, 1024, -1, 1)), n, 4 * n)
    del xf
    s = torch.rand(65536, 1024, device="cuda")
    row("torch", "segmented sort f32 65536x1024 dim 2", timed(lambda: torch.sort(s, dim=1, stable=True)), s.numel())
    row("torch", "topk f32 65536x1024 dim 2 k=10", timed(lambda: torch.topk(s, 10, 1)), s.numel())
    del s
    u = torch.randint(0, 2**20, (2**26,), device="cuda", dtype=torch.int32)
    row("torch", "unique i32 n=2^26 (counts, inverse)",
        timed(lambda: torch.unique(u, return_inverse=True, return_counts=True)), 2**26)
    del u
    try:
        import cupy as cp
        k = cp.random.randint(0, 2**32, size=n, dtype=cp.uint64).astype(cp.uint32)
        row("cupy", "sort u32 keys n=2^28 (CUB keys)", timed(lambda: cp.sort(k)), n)
        row("cupy", "argsort u32 n=2^28", timed(lambda: cp.argsort(k)), n)
        del k
        c = cp.random.randint(-4, 4, size=n).astype(cp.float32)
        row("cupy", "cumsum f32 n=2^28", timed(lambda: cp.cumsum(c)), n, 8 * n)
        del c
    except Exception as e:  # CuPy missing or failing: the torch rows still count
        print("cupy:", e, file=sys.stderr)
    with open(args.out, "w") as f:
        json.dump({"device": dev, "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
