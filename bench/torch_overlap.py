"""PyTorch's peer of examples/overlap_ladder.lua (issue 36), same workload and sizes: upload a chunk, CHAIN in-place
multiply-adds and a sum, download; serial pageable, pinned non_blocking on one stream, two and three streams; and the
pinned H2D / D2H bandwidth of a 256 MiB non_blocking copy. Writes JSON to --out.
    python3 bench/torch_overlap.py --out overlap-torch.json [--chunks 12 --mb 32 --chain 8 --reps 5]"""
import argparse, json, time
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
ap.add_argument("--chunks", type=int, default=12)
ap.add_argument("--mb", type=int, default=32)
ap.add_argument("--chain", type=int, default=8)
ap.add_argument("--reps", type=int, default=5)
a = ap.parse_args()
K, N, C = a.chunks, a.mb * 1024 * 1024 // 4, a.chain
src = [torch.rand(N) for _ in range(K)]
pin = [s.pin_memory() for s in src]
out_pg = [torch.empty(N) for _ in range(K)]
out_pin = [torch.empty(N).pin_memory() for _ in range(K)]


def compute(d):
    for _ in range(C):
        d.mul_(1.0001).add_(0.0001)
    return d.sum()


def run(ns, pinned):
    ins, outs = (pin, out_pin) if pinned else (src, out_pg)
    streams = [torch.cuda.Stream() for _ in range(max(ns, 1))] if ns else [torch.cuda.current_stream()]
    bufs = [torch.empty(N, device="cuda") for _ in streams]

    def once():
        for i in range(K):
            k = i % len(streams)
            with torch.cuda.stream(streams[k]):
                bufs[k].copy_(ins[i], non_blocking=pinned)
                compute(bufs[k])
                outs[i].copy_(bufs[k], non_blocking=pinned)
        torch.cuda.synchronize()
    return med(once)


def med(f):
    f()
    t = []
    for _ in range(a.reps):
        t0 = time.perf_counter(); f(); t.append((time.perf_counter() - t0) * 1e3)
    return sorted(t)[len(t) // 2]


rows = []
for name, ns, pinned in [("serial_pageable", 0, False), ("pinned", 0, True), ("two_streams", 2, True), ("three_streams", 3, True)]:
    rows.append({"variant": name, "ms": run(ns, pinned)})
big = torch.empty(64 * 1024 * 1024).pin_memory()
dbig = torch.empty_like(big, device="cuda")
h2d = med(lambda: (dbig.copy_(big, non_blocking=True), torch.cuda.synchronize()))
d2h = med(lambda: (big.copy_(dbig, non_blocking=True), torch.cuda.synchronize()))
res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "chunks": K, "mib": a.mb, "chain": C, "rows": rows,
       "pinned_h2d_gbps": big.numel() * 4 / h2d / 1e6, "pinned_d2h_gbps": big.numel() * 4 / d2h / 1e6}
print(json.dumps(res, indent=1))
json.dump(res, open(a.out, "w"), indent=1)
