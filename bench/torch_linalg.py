"""torch.linalg timings for examples/linalg_bench.lua (issue 34): the same cases, CUDA events, warm-up, median.
   python3 bench/torch_linalg.py OUT.json [--quick] [--batched-only]      writes {"device":..., "torch":..., "ms": {key: median ms}}
Keys: <fn>-<dtype>-<shape> as the Lua script names them (solve-f64-4096, solve-f32-10000x8x8, ...)."""
import json, sys, statistics
import torch

def timed(fn, reps=10, warm=3):
    for _ in range(warm): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)

def main():
    out, quick = sys.argv[1], "--quick" in sys.argv
    dev = torch.device("cuda")
    ms = {}
    sizes = [] if "--batched-only" in sys.argv else [1024, 4096] if quick else [1024, 4096, 8192]
    for dt, name in ((torch.float32, "f32"), (torch.float64, "f64")):
        for n in sizes:
            A = torch.randn(n, n, dtype=dt, device=dev) + n ** 0.5 * torch.eye(n, dtype=dt, device=dev)
            B = torch.randn(n, 1, dtype=dt, device=dev)
            S = A @ A.T + n * torch.eye(n, dtype=dt, device=dev)
            reps = 3 if n >= 8192 else 10
            ms[f"solve-{name}-{n}"] = timed(lambda: torch.linalg.solve(A, B), reps)
            ms[f"inv-{name}-{n}"] = timed(lambda: torch.linalg.inv(A), reps)
            ms[f"lu-{name}-{n}"] = timed(lambda: torch.linalg.lu_factor(A), reps)
            ms[f"cholesky-{name}-{n}"] = timed(lambda: torch.linalg.cholesky(S), reps)
            ms[f"qr-{name}-{n}"] = timed(lambda: torch.linalg.qr(A), reps)
            if n <= 4096:
                ms[f"eigh-{name}-{n}"] = timed(lambda: torch.linalg.eigh(S), 3)
            if n <= 2048 or (n <= 4096 and not quick):
                ms[f"svd-{name}-{n}"] = timed(lambda: torch.linalg.svd(A, full_matrices=False), 3)
        for bshape in ((10000, 8), (10000, 16), (10000, 32), (1000, 64)):
            b, n = bshape
            A = torch.randn(b, n, n, dtype=dt, device=dev) + n * torch.eye(n, dtype=dt, device=dev)
            B = torch.randn(b, n, 1, dtype=dt, device=dev)
            S = A @ A.transpose(1, 2) + n * torch.eye(n, dtype=dt, device=dev)
            ms[f"solve-{name}-{b}x{n}x{n}"] = timed(lambda: torch.linalg.solve(A, B))
            ms[f"inv-{name}-{b}x{n}x{n}"] = timed(lambda: torch.linalg.inv(A))
            ms[f"cholesky-{name}-{b}x{n}x{n}"] = timed(lambda: torch.linalg.cholesky(S))
    json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "ms": ms}, open(out, "w"), indent=1)
    print("wrote", out, len(ms), "timings")

main()
