"""Issue 34's "host time per call below theirs at small sizes", PyTorch's side (lab/linalg_host.lua is ours, same
cases, same method): per case, the host clock around one call with no synchronisation (issue: what the caller waits
before it can go on) and around call + synchronize (wall), medians of 50 after 5 warm-ups, in microseconds.
    python3 lab/linalg_host.py"""
import statistics
import time

import torch


def med(fn, sync):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(50):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        if sync:
            torch.cuda.synchronize()
        ts.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(ts)


def main():
    g = torch.Generator(device="cuda").manual_seed(34)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    for dt, name in ((torch.float32, "f32"), (torch.float64, "f64")):
        for b, n in ((10000, 8), (1000, 64), (1, 64), (1, 512), (2, 512), (100, 128)):
            A = torch.randn(b, n, n, device="cuda", dtype=dt, generator=g) + n * torch.eye(n, device="cuda", dtype=dt)
            B = torch.randn(b, n, 1, device="cuda", dtype=dt, generator=g)
            S = A @ A.transpose(-1, -2) + n * torch.eye(n, device="cuda", dtype=dt)
            for fn, f in (("solve", lambda: torch.linalg.solve(A, B)), ("inv", lambda: torch.linalg.inv(A)),
                          ("cholesky", lambda: torch.linalg.cholesky(S))):
                print(f"torch {fn:9s} {name} {b}x{n}x{n:<5d} issue {med(f, False):9.1f} us   wall {med(f, True):9.1f} us")


main()
