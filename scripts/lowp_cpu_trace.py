"""Writes tests/fixtures/traces/cpu-lowp-gemms.json.gz and its counter's figures beside it.

PyTorch's low-precision and grouped matrix products, run on the CPU (no GPU here), under
torch.profiler (the CPU activity, record_shapes=True) and under PyTorch's own FLOP counter
(torch.utils.flop_counter.FlopCounterMode) at once, so that the import's rules are checked on
the arguments as PyTorch records them, and against the counter where it counts:

- `_scaled_mm` in FP8 e4m3, tensor-wise scales and a BF16 output, then row-wise scales and an
  FP8 output;
- `_grouped_mm` in BF16: `[M, K] × [G, K, N]` with G offsets (a MoE layer's experts), and
  `[G, M, K] × [G, K, N]` without;
- `_int_mm`, INT8 into INT32.

    python scripts/lowp_cpu_trace.py tests/fixtures/traces/cpu-lowp-gemms.json.gz

writes the trace and `cpu-lowp-gemms.counter.json` (the counter's FLOPs per call, in order).
The shapes are the ones tests/e2e/llm_trace.rs counts by hand; change them together.
"""

import gzip
import json
import os
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils.flop_counter import FlopCounterMode

E4M3 = torch.float8_e4m3fn


def calls():
    """Each call as (operator, thunk)."""
    a = torch.randn(32, 64).to(E4M3)
    b = torch.randn(16, 64).to(E4M3).t()  # column-major [64, 16], as _scaled_mm wants
    one = torch.tensor(1.0)
    rows = torch.ones(32, 1)
    cols = torch.ones(1, 16)
    x = torch.randn(96, 32, dtype=torch.bfloat16)
    w = torch.randn(4, 32, 48, dtype=torch.bfloat16)
    offs = torch.tensor([24, 48, 72, 96], dtype=torch.int32)
    xb = torch.randn(4, 8, 32, dtype=torch.bfloat16)
    i8 = torch.randint(-5, 5, (32, 64), dtype=torch.int8)
    j8 = torch.randint(-5, 5, (64, 16), dtype=torch.int8)
    return [
        ("aten::_scaled_mm", lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)),
        ("aten::_scaled_mm", lambda: torch._scaled_mm(a, b, rows, cols)),
        ("aten::_grouped_mm", lambda: torch._grouped_mm(x, w, offs=offs)),
        ("aten::_grouped_mm", lambda: torch._grouped_mm(xb, w)),
        ("aten::_int_mm", lambda: torch._int_mm(i8, j8)),
    ]


def main(out):
    counted = []
    todo = calls()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for name, run in todo:
            with FlopCounterMode(display=False) as fc:
                run()
            counted.append({"operator": name, "flops": fc.get_total_flops()})
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(raw)
        with open(raw, "rb") as f, gzip.open(out, "wb") as g:
            g.write(f.read())
    side = out.replace(".json.gz", ".counter.json")
    with open(side, "w") as f:
        json.dump({"torch": torch.__version__, "calls": counted}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUT.json.gz")
    main(sys.argv[1])
