"""bench/torch_complex.py — PyTorch's side of examples/complex_bench.lua: c64 elementwise add and multiply, a sum,
and the c64 matrix product, same shapes. Median of 10 CUDA-event timings after 2 warm-ups.
   python3 bench/torch_complex.py --out torch_complex.json"""
import argparse, json, torch

from torch_select import time  # the same timing as the selection peers (CUDA events, median of 10 after 2 runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    o = ap.parse_args()
    torch.manual_seed(1)
    n = 1 << 26
    a = torch.randn(n, dtype=torch.complex64, device="cuda"); b = torch.randn(n, dtype=torch.complex64, device="cuda")
    rows = []
    def case(name, fn):
        ms = time(fn); rows.append({"case": name, "ms": ms}); print(f"{name:20s} torch {ms:8.3f} ms")
    case("c64_add", lambda: a + b)
    case("c64_mul", lambda: a * b)
    case("c64_sum", lambda: a.sum())
    for s in (2048, 4096):
        x = torch.randn(s, s, dtype=torch.complex64, device="cuda"); y = torch.randn(s, s, dtype=torch.complex64, device="cuda")
        case(f"c64_matmul_{s}", lambda: x @ y)
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    json.dump({"meta": meta, "rows": rows}, open(o.out, "w"), indent=1)

if __name__ == "__main__":
    main()
