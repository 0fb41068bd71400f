"""torch.sort (stable) of the shapes lab/segsort_time.lua times, timed as the sort ladder's peers are
(bench/torch_scan_sort.py's timed: CUDA events, 3 warm-ups, L2 flushed, the median of 10); writes {label: ms} as
JSON to argv[1]."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from torch_scan_sort import timed  # noqa: E402

import torch  # noqa: E402

out = {}
for r, c in ((65536, 1024), (16384, 4096), (32768, 2048), (131072, 512), (262144, 256), (4096, 4097)):
    x = torch.rand(r, c, device="cuda") * 2 - 1
    out[f"{r}x{c} f32 dim 2"] = timed(lambda: torch.sort(x, dim=1, stable=True))
for r, c, k in ((65536, 1024, 10), (65536, 1024, 256), (16384, 4096, 10)):
    x = torch.rand(r, c, device="cuda") * 2 - 1
    out[f"topk {r}x{c} k={k}"] = timed(lambda: torch.topk(x, k, dim=1))
u = torch.randint(0, 2**20, (2**26,), device="cuda", dtype=torch.int32)
out["unique i32 n=2^26 (counts, inverse)"] = timed(lambda: torch.unique(u, return_inverse=True, return_counts=True))
out["device"] = torch.cuda.get_device_name()
json.dump(out, open(sys.argv[1], "w"))
print(out)
