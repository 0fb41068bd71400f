"""bench/torch_fp8.py — PyTorch's side of examples/fp8_bench.lua: torch._scaled_mm on e4m3 (A row-major, B the
transpose of an [n, k] array, bf16 out, per-tensor scales) and torch.matmul on bf16, same shapes.
   python3 bench/torch_fp8.py --out torch_fp8.json
Median of 10 CUDA-event timings after 3 warm-ups; writes {"meta": ..., "rows": [{case, ms, tflops}]}."""
import argparse, json, torch

def time(fn, reps=10):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        ms.append(s.elapsed_time(e))
    ms.sort()
    return ms[(len(ms) - 1) // 2]

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (16384, 8192, 8192), (2048, 14336, 4096)]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    o = ap.parse_args()
    torch.manual_seed(1)
    rows = []
    for m, n, k in SHAPES:
        a = (torch.rand(m, k, device="cuda") * 2 - 1).to(torch.float8_e4m3fn)
        bt = (torch.rand(n, k, device="cuda") * 2 - 1).to(torch.float8_e4m3fn)
        one = torch.tensor(1.0, device="cuda")
        for fast in (False, True):
            try:
                ms = time(lambda: torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                                   use_fast_accum=fast))
            except Exception as ex:  # older PyTorch: other signature
                print("scaled_mm failed:", ex); continue
            case = f"e4m3_{m}x{n}x{k}" + ("_fastacc" if fast else "")
            rows.append({"case": case, "ms": ms, "tflops": 2 * m * n * k / ms / 1e9})
            print(f"{case:30s} torch {ms:8.3f} ms {2 * m * n * k / ms / 1e9:8.1f} TFLOP/s")
        ab, bb = a.to(torch.bfloat16), bt.to(torch.bfloat16).t().contiguous()
        ms = time(lambda: torch.matmul(ab, bb))
        case = f"bf16_{m}x{n}x{k}"
        rows.append({"case": case, "ms": ms, "tflops": 2 * m * n * k / ms / 1e9})
        print(f"{case:30s} torch {ms:8.3f} ms {2 * m * n * k / ms / 1e9:8.1f} TFLOP/s")
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda}
    json.dump({"meta": meta, "rows": rows}, open(o.out, "w"), indent=1)

if __name__ == "__main__":
    main()
