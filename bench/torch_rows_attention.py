"""The peers of the row-op and attention ladders (issue 37), timed in the same run on the same GPU: PyTorch.

    python3 bench/torch_rows_attention.py --out peers.json [--only rows|attention]

Row ops (the cases of examples/rows_ladder.lua): torch.softmax, F.layer_norm (weight and bias), F.rms_norm
(weight; torch >= 2.4) over 2^28 elements in rows of 1024 and 8192, f32 and bf16; GB/s counts one read and one
write per element. Attention (the cases of examples/attention_ladder.lua): F.scaled_dot_product_attention with
the flash and the cuDNN backends forced in turn (sdpa_kernel), bf16, 16 heads of dim 128 and 32 heads of 64, seq
4096 and 16384 with the batch chosen for 16k tokens, causal and not; TFLOP/s counts 4*b*h*s^2*d, halved when
causal. CUDA events, 3 warm-ups, the median of 10 runs, L2 flushed (a 256 MiB memset) before each. Each row:
{peer, op, case, ms, gbps | tflops}; the Lua ladders read the file (CUKERN_PEERS) and put the rows beside theirs.
"""
import argparse
import json

from torch_scan_sort import timed  # the same timing as the issue-33 peers (bench/ is on sys.path)


def rows_peers(rows):
    import torch
    import torch.nn.functional as F
    for dt, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        for length in (1024, 8192):
            n = 2**28
            x = torch.rand(n // length, length, device="cuda", dtype=dt) * 2 - 1
            w = torch.rand(length, device="cuda", dtype=dt) + 0.5
            b = torch.rand(length, device="cuda", dtype=dt) - 0.5
            fns = {"softmax": lambda: torch.softmax(x, -1),
                   "layer_norm": lambda: F.layer_norm(x, (length,), w, b, 1e-5)}
            if hasattr(F, "rms_norm"):
                fns["rms_norm"] = lambda: F.rms_norm(x, (length,), w, 1e-6)
            for op, fn in fns.items():
                ms = timed(fn)
                case = f"{op} {name} {n // length}x{length}"
                r = {"peer": "torch", "op": op, "case": case, "ms": ms, "gbps": 2 * n * x.element_size() / ms / 1e6}
                rows.append(r)
                print(f"torch {case:34s} {ms:8.3f} ms {r['gbps']:7.0f} GB/s", flush=True)
            del x, w, b
            torch.cuda.empty_cache()


def attention_peers(rows):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    for heads, d in ((16, 128), (32, 64)):
        for seq in (4096, 16384):
            batch = max(1, 16384 // seq)
            q, k, v = (torch.randn(batch, heads, seq, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            for causal in (False, True):
                flops = 4 * batch * heads * seq * seq * d / (2 if causal else 1)
                case = f"attention bf16 b{batch} h{heads} s{seq} d{d}{' causal' if causal else ''}"
                for name, be in backends.items():
                    try:
                        with sdpa_kernel(be):
                            ms = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                    except RuntimeError as e:  # a backend this build or card lacks
                        print(f"torch-{name} {case}: not available ({str(e).splitlines()[0][:80]})", flush=True)
                        continue
                    r = {"peer": "torch-" + name, "op": "attention", "case": case, "ms": ms,
                         "tflops": flops / ms / 1e9}
                    rows.append(r)
                    print(f"torch-{name:5s} {case:44s} {ms:8.3f} ms {r['tflops']:6.1f} TFLOP/s", flush=True)
            del q, k, v
            torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", choices=("rows", "attention"))
    args = ap.parse_args()
    import torch
    rows = []
    if args.only in (None, "rows"):
        rows_peers(rows)
    if args.only in (None, "attention"):
        attention_peers(rows)
    doc = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
