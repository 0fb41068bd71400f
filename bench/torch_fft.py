"""The peers of the FFT ladder and ck.conv (issue 35), timed in the same run on the same GPU: PyTorch and CuPy.

    python3 bench/torch_fft.py --out peers.json

Cases as examples/fft_ladder.lua and the issue's speed list: batched 1-D c64 transforms of 2^28 elements at n = 256
... 4096 (torch.fft.fft along the last dim; GB/s counts one read and one write, 16 bytes per element); fft2 of a
4096^2 c64 array; rfft of 2^28 f32; conv2 of a 4096^2 f32 image by a 31^2 kernel ("full" size, MATLAB's conv2:
torch's conv2d with the kernel flipped and k - 1 padding) and by a 512^2 kernel (through rfft2 / irfft2, as
scipy.signal.fftconvolve; cuDNN's direct conv2d of that size is also tried). CuPy: fft, fft2, rfft and
cupyx.scipy.signal.fftconvolve when installed. CUDA events, 3 warm-ups, the median of 10 runs, L2 flushed (a 256 MiB
memset) before each: bench/torch_scan_sort.py's timed().
"""
import argparse
import json

from torch_scan_sort import timed  # the same timing (CUDA events, L2 flushed, median) as the other peers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    dev = torch.cuda.get_device_name(0)
    rows = []

    def row(lib, case, ms, n, nbytes=None):
        r = {"peer": lib, "case": case, "ms": ms, "numel": n}
        if nbytes:
            r["gbps"] = nbytes / ms / 1e6
        rows.append(r)
        print(f"{lib:6s} {case:44s} {ms:9.3f} ms" + (f" {r['gbps']:7.0f} GB/s" if nbytes else ""), flush=True)

    total = 2**28
    for n in (256, 512, 1024, 2048, 4096):
        x = torch.randn(total // n, n, dtype=torch.complex64, device="cuda")
        row("torch", f"fft c64 n={n} x {total // n}", timed(lambda: torch.fft.fft(x, dim=1)), total, 16 * total)
        del x
    m = torch.randn(4096, 4096, dtype=torch.complex64, device="cuda")
    row("torch", "fft2 c64 4096x4096", timed(lambda: torch.fft.fft2(m)), m.numel(), 16 * m.numel())
    del m
    r = torch.randn(total, device="cuda")
    row("torch", "rfft f32 n=2^28", timed(lambda: torch.fft.rfft(r)), total, 4 * total + 8 * (total // 2 + 1))
    del r
    img = torch.randn(1, 1, 4096, 4096, device="cuda")
    k31 = torch.randn(1, 1, 31, 31, device="cuda")
    row("torch", "conv2 full 4096^2 by 31^2 (conv2d)", timed(lambda: F.conv2d(img, k31.flip(2, 3), padding=30)),
        4096 * 4096)
    k512 = torch.randn(512, 512, device="cuda")

    def fftconv(a, k):
        s = (a.shape[0] + k.shape[0] - 1, a.shape[1] + k.shape[1] - 1)
        return torch.fft.irfft2(torch.fft.rfft2(a, s) * torch.fft.rfft2(k, s), s)
    row("torch", "conv2 full 4096^2 by 512^2 (rfft2)", timed(lambda: fftconv(img[0, 0], k512)), 4096 * 4096)
    try:
        row("torch", "conv2 full 4096^2 by 512^2 (conv2d)",
            timed(lambda: F.conv2d(img, k512.flip(0, 1)[None, None], padding=511), reps=3, warmup=1), 4096 * 4096)
    except Exception as e:  # (cuDNN may refuse or run out of memory at this size)
        print("torch conv2d 512^2:", e)
    del img
    try:
        import cupy as cp
        x = cp.random.standard_normal((total // 1024, 1024)).astype(cp.complex64)
        row("cupy", "fft c64 n=1024 x 262144", timed(lambda: cp.fft.fft(x, axis=1)), total, 16 * total)
        del x
        m = cp.random.standard_normal((4096, 4096)).astype(cp.complex64)
        row("cupy", "fft2 c64 4096x4096", timed(lambda: cp.fft.fft2(m)), m.size, 16 * m.size)
        del m
        r = cp.random.standard_normal(total, dtype=cp.float32)
        row("cupy", "rfft f32 n=2^28", timed(lambda: cp.fft.rfft(r)), total, 4 * total + 8 * (total // 2 + 1))
        del r
        from cupyx.scipy import signal
        a = cp.random.standard_normal((4096, 4096), dtype=cp.float32)
        k = cp.random.standard_normal((512, 512), dtype=cp.float32)
        row("cupy", "conv2 full 4096^2 by 512^2 (fftconvolve)", timed(lambda: signal.fftconvolve(a, k)), a.size)
    except Exception as e:  # CuPy is optional
        print("cupy:", e)
    with open(args.out, "w") as f:
        json.dump({"device": dev, "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
