"""bench/torch_select.py — PyTorch's side of examples/select_bench.lua (same cases, shapes and byte counts).
   python3 bench/torch_select.py --out torch_select.json [--reps 20]
Times each op as a script calls it: a CUDA event before and after the call (the Python call included), after two
warm-up calls; the median of --reps. Results die with the lambda's return value, so the caching allocator reuses
their blocks (select_bench.lua frees its results after each stop event for the same reason).
Writes {"meta": ..., "rows": [{case, ms}]}."""
import argparse, json, torch

REPS = 20


def time(fn):
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(REPS):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ms.append(s.elapsed_time(e))
    ms.sort()
    return ms[(len(ms) - 1) // 2]


def main():
    global REPS
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=20)
    o = ap.parse_args()
    REPS = o.reps
    d = "cuda"
    torch.manual_seed(1)
    rows = []

    def case(name, fn):
        ms = time(fn)
        rows.append({"case": name, "ms": ms})
        print(f"{name:24s} torch {ms:9.3f} ms")

    R, C = 65536, 2048
    a = torch.rand(R, C, device=d)
    ix = torch.randint(0, R, (R,), device=d)
    case("index_select_rows", lambda: torch.index_select(a, 0, ix))
    R, C = 16384, 4096
    a = torch.rand(R, C, device=d)
    p = torch.randint(0, R, (R, 1), device=d)
    ixg = p.expand(R, C).contiguous()
    case("gather_rows", lambda: torch.gather(a, 0, ixg))
    del a, ix, ixg
    for k in (2, 8, 64):
        R, C = 8192, 8192
        l2 = [torch.rand(R, C // k, device=d) for _ in range(k)]
        case(f"cat{k}_dim2", lambda: torch.cat(l2, 1))
        l1 = [torch.rand(R // k, C, device=d) for _ in range(k)]
        case(f"cat{k}_dim1", lambda: torch.cat(l1, 0))
        del l1, l2
    l = [torch.rand(8192 // 16, 8192, device=d) for _ in range(16)]
    case("stack16", lambda: torch.stack(l, 0))
    del l
    N = 1 << 27
    x, y = torch.rand(N, device=d), torch.rand(N, device=d)
    m = torch.rand(N, device=d) < 0.5
    case("where", lambda: torch.where(m, x, y))
    case("masked_select", lambda: torch.masked_select(x, m))
    del x, y, m
    N, side = 1 << 26, 8192
    for name, density in (("dense", 0.5), ("sparse", 0.01)):
        m1 = torch.rand(N, device=d) < density
        m2 = torch.rand(side, side, device=d) < density
        case(f"nonzero_1d_{name}", lambda: torch.nonzero(m1))
        case(f"nonzero_2d_{name}", lambda: torch.nonzero(m2))
        case(f"find_{name}", lambda: torch.nonzero(m1).view(-1))
    meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "reps": REPS}
    json.dump({"meta": meta, "rows": rows}, open(o.out, "w"), indent=1)


if __name__ == "__main__":
    main()
