#!/usr/bin/env python3
"""torch_multigpu.py — the PyTorch peer for cukern's several-GPU work, run on the GPU host.

Why: cukern's multi-GPU numbers need a peer measured the same way on the same machine. This measures, in one
process, how three workloads scale from 1 GPU to N when split by hand (each GPU its share, inputs already placed,
launched on every GPU and then all synchronised), and, one process per GPU, torch.distributed's NCCL all-reduce.

  python3 bench/torch_multigpu.py --gpus N --out file.json [--iters 10] [--warmup 3]

Scaling cases (t1 = everything on GPU 0, tN = split over GPUs 0..N-1; speedup = t1 / tN):
  a. bf16 batched matmul [16,4096,4096] @ [16,4096,4096]: GPU i multiplies its slice of the batch (16/N).
  b. f32 sum of 8 GiB (2^31 elements): each GPU sums its 8/N GiB, the partial sums are copied to GPU 0 and added
     there (the copies and the add are inside the time).
  c. f32 elementwise chain y = sin(x) * x + 1.0 on 2^28 elements (eager PyTorch: three kernels).
Timing: each iteration synchronises every GPU taking part, reads a host clock, launches, synchronises them all
again and reads the clock (the same method for 1 and N GPUs); the median of --iters after --warmup is reported.

All-reduce (torch.distributed, backend nccl, torch.multiprocessing.spawn, one process per GPU, MASTER_ADDR
127.0.0.1 on a free port): in-place f32 sum of 1 MiB .. 1 GiB per GPU (x4). Each iteration: barrier, CUDA events
around dist.all_reduce on the current stream, synchronise; per iteration the slowest rank's time (all_reduce MAX
of the times), then the median. algbw = bytes / time; busbw = algbw * 2 (n - 1) / n (nccl-tests' convention).

NCCL_NVLS_ENABLE=0 is kept in the environment (NVLink multicast stays off on the shared host) unless already set.
Output: one JSON file (see main); with fewer than 2 GPUs it holds {"skip": "..."}.
"""
import argparse
import inspect
import json
import os
import socket
import statistics
import sys
import time

MIB = 1 << 20
AR_SIZES = [MIB << (2 * k) for k in range(6)]  # 1 MiB, 4, 16, 64, 256 MiB, 1 GiB


def sync(torch, devices):
    for d in devices:
        torch.cuda.synchronize(d)


def time_multi(torch, fn, devices, warmup, iters):
    """Median milliseconds of fn() bracketed by a synchronisation of every device in `devices`, after a warm-up of at
    least `warmup` runs and 100 ms, each synced (examples/multi_gpu.lua's M.time warms cukern's side the same way)."""
    t0, n = time.perf_counter(), 0
    while n < warmup or time.perf_counter() - t0 < 0.1:
        fn()
        sync(torch, devices)
        n += 1
    times = []
    for _ in range(iters):
        sync(torch, devices)
        t0 = time.perf_counter()
        fn()
        sync(torch, devices)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def split_sizes(total, n):
    """total split into n near-equal parts (the first ones one larger)."""
    return [total // n + (1 if i < total % n else 0) for i in range(n)]


def case_matmul(torch, n, warmup, iters):
    B, M = 16, 4096
    g0 = torch.device("cuda:0")
    a = torch.randn(B, M, M, device=g0, dtype=torch.bfloat16)
    b = torch.randn(B, M, M, device=g0, dtype=torch.bfloat16)
    c = torch.empty(B, M, M, device=g0, dtype=torch.bfloat16)
    t1 = time_multi(torch, lambda: torch.bmm(a, b, out=c), [0], warmup, iters)
    parts = []
    start = 0
    for i, k in enumerate(split_sizes(B, n)):
        d = torch.device(f"cuda:{i}")
        parts.append((a[start:start + k].to(d), b[start:start + k].to(d),
                      torch.empty(k, M, M, device=d, dtype=torch.bfloat16)))
        start += k
    sync(torch, range(n))

    def run():
        for ai, bi, ci in parts:
            torch.bmm(ai, bi, out=ci)

    tn = time_multi(torch, run, list(range(n)), warmup, iters)
    flop = 2.0 * B * M * M * M
    return {"case": "bf16 batched matmul 16x4096^3", "gpus": n, "t1_ms": t1, "tn_ms": tn, "speedup": t1 / tn,
            "t1_tflops": flop / t1 / 1e9, "tn_tflops": flop / tn / 1e9}


def case_sum(torch, n, warmup, iters):
    N = 1 << 31  # 8 GiB of f32
    g0 = torch.device("cuda:0")
    x = torch.empty(N, device=g0, dtype=torch.float32).fill_(0.5)
    t1 = time_multi(torch, lambda: x.sum(), [0], warmup, iters)
    del x
    torch.cuda.empty_cache()
    parts = [torch.empty(k, device=f"cuda:{i}", dtype=torch.float32).fill_(0.5)
             for i, k in enumerate(split_sizes(N, n))]
    sync(torch, range(n))

    def run():
        partial = [p.sum() for p in parts]  # launched on every GPU before any copy waits
        return torch.stack([s.to(g0, non_blocking=True) for s in partial]).sum()

    tn = time_multi(torch, run, list(range(n)), warmup, iters)
    got = run().item()
    del parts
    torch.cuda.empty_cache()
    return {"case": "f32 sum 8 GiB", "gpus": n, "t1_ms": t1, "tn_ms": tn, "speedup": t1 / tn,
            "t1_gbps": N * 4 / t1 / 1e6, "tn_gbps": N * 4 / tn / 1e6, "check": got, "expected": N * 0.5}


def case_chain(torch, n, warmup, iters):
    N = 1 << 28
    g0 = torch.device("cuda:0")
    x = torch.rand(N, device=g0, dtype=torch.float32)
    t1 = time_multi(torch, lambda: torch.sin(x) * x + 1.0, [0], warmup, iters)
    parts = [c.to(f"cuda:{i}") for i, c in enumerate(torch.split(x, split_sizes(N, n)))]
    del x
    sync(torch, range(n))

    def run():
        return [torch.sin(p) * p + 1.0 for p in parts]

    tn = time_multi(torch, run, list(range(n)), warmup, iters)
    del parts
    torch.cuda.empty_cache()
    return {"case": "f32 elementwise chain 2^28", "gpus": n, "t1_ms": t1, "tn_ms": tn, "speedup": t1 / tn}


def nccl_version(torch):
    """torch's NCCL as "2.21.5" (a tuple in recent torch, an int code in old ones)."""
    v = torch.cuda.nccl.version()
    return ".".join(map(str, v)) if isinstance(v, (tuple, list)) else str(v)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def allreduce_worker(rank, n, port, warmup, iters, path):
    """One rank of the all-reduce measurement; rank 0 writes the rows to `path` (JSON)."""
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dev = torch.device(f"cuda:{rank}")
    kw = {"device_id": dev} if "device_id" in inspect.signature(dist.init_process_group).parameters else {}
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=n, **kw)
    rows = []
    try:
        for nbytes in AR_SIZES:
            t = torch.zeros(nbytes // 4, device=dev, dtype=torch.float32)  # stays finite under repeated sums
            for _ in range(warmup):
                dist.all_reduce(t, op=dist.ReduceOp.SUM)
            torch.cuda.synchronize(dev)
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
            for s, e in ev:
                dist.barrier(device_ids=[rank])
                torch.cuda.synchronize(dev)
                s.record()
                dist.all_reduce(t, op=dist.ReduceOp.SUM)
                e.record()
                torch.cuda.synchronize(dev)
            ms = torch.tensor([s.elapsed_time(e) for s, e in ev], device=dev, dtype=torch.float64)
            dist.all_reduce(ms, op=dist.ReduceOp.MAX)  # each iteration lasts as long as its slowest rank
            med = statistics.median(ms.tolist())
            algbw = nbytes / med / 1e6  # GB/s
            rows.append({"variant": "torch-nccl", "gpus": n, "bytes": nbytes, "ms": med, "algbw": algbw,
                         "busbw": algbw * 2 * (n - 1) / n})
            del t
            torch.cuda.empty_cache()
        if rank == 0:
            with open(path, "w") as f:
                json.dump(rows, f)
    finally:
        dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpus", type=int, default=0, help="GPUs to use (0..N-1); default: every visible one")
    ap.add_argument("--out", required=True, help="the JSON file to write")
    ap.add_argument("--iters", type=int, default=10, help="timed iterations per measurement (median; >= 10)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--no-allreduce", action="store_true", help="skip the torch.distributed part")
    args = ap.parse_args()
    if args.iters < 10:
        ap.error("--iters must be at least 10")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # before any NCCL communicator exists (children inherit)

    def write(obj):
        with open(args.out, "w") as f:
            json.dump(obj, f, indent=1)
            f.write("\n")

    try:
        import torch
    except ImportError as e:
        write({"skip": f"torch not importable: {e}"})
        return 0
    have = torch.cuda.device_count() if torch.cuda.is_available() else 0
    n = args.gpus or have
    if have < 2 or n < 2:
        write({"skip": f"needs 2 GPUs: {have} visible, --gpus {args.gpus}"})
        return 0
    if n > have:
        print(f"--gpus {n}: only {have} GPUs visible", file=sys.stderr)
        return 1

    res = {"device": torch.cuda.get_device_name(0), "gpus": n, "torch": torch.__version__,
           "cuda": torch.version.cuda, "nccl": nccl_version(torch),
           "nvls_enable": os.environ.get("NCCL_NVLS_ENABLE"),
           "timing": f"host clock between synchronisations of every GPU used; median of {args.iters} "
                     f"after {args.warmup} warm-up",
           "scaling": [], "allreduce": []}
    for case in (case_matmul, case_sum, case_chain):
        row = case(torch, n, args.warmup, args.iters)
        print(json.dumps(row), flush=True)
        res["scaling"].append(row)
        torch.cuda.empty_cache()

    if not args.no_allreduce:
        import tempfile
        import torch.multiprocessing as mp

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "allreduce.json")
            mp.spawn(allreduce_worker, args=(n, free_port(), args.warmup, max(args.iters, 20), path), nprocs=n,
                     join=True)
            with open(path) as f:
                res["allreduce"] = json.load(f)
        for row in res["allreduce"]:
            print(json.dumps(row), flush=True)
    write(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
