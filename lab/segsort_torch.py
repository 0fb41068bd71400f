"""torch.sort (stable) of the shapes lab/segsort_time.lua times, same timing rule (CUDA events, 3 warm-ups, median
of 10); writes {label: ms} as JSON to argv[1]."""
import json, sys
import torch
def timed(fn, reps=10):
    for _ in range(3): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts) // 2]
out = {}
for r, c in ((65536, 1024), (16384, 4096), (262144, 256), (4096, 4097)):
    x = torch.rand(r, c, device="cuda") * 2 - 1
    out[f"{r}x{c} f32 dim 2"] = timed(lambda: torch.sort(x, dim=1, stable=True))
out["device"] = torch.cuda.get_device_name()
json.dump(out, open(sys.argv[1], "w"))
print(out)
