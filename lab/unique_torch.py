#!/usr/bin/env python3
"""lab/unique_torch.py — torch.unique and torch.sort of 2^26 i32 on the GPU host, the peers of lab/unique_time.lua
(bench/torch_scan_sort.py's timed(): CUDA events, L2 flushed, warm-up 3, median of 10). One JSON line on stdout."""
import json
import sys

sys.path.insert(0, "bench")
from torch_scan_sort import timed  # noqa: E402
import torch  # noqa: E402

u = torch.randint(0, 2**20, (2**26,), device="cuda", dtype=torch.int32)
w = torch.randint(-2**31, 2**31 - 1, (2**26,), device="cuda", dtype=torch.int32)
print(json.dumps({"unique i32 n=2^26 (counts, inverse)": timed(lambda: torch.unique(u, return_inverse=True, return_counts=True)),
                  "unique i32 n=2^26": timed(lambda: torch.unique(u)),
                  "unique i32 n=2^26 (counts)": timed(lambda: torch.unique(u, return_counts=True)),
                  "sort i32 n=2^26 values": timed(lambda: torch.sort(w)[0])}))
