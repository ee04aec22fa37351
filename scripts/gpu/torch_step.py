"""One training step of a small DL network, profiled the ways docs/pytorch.md and the README say.

For a GPU host (issue 14's "a documented torch.profiler run becomes a bundle with both charts",
and the PyTorch part of the GPU run): a convolutional stem, an LSTM and a transformer encoder
block with a linear head, trained with AdamW, in FP32 or under BF16 autocast. Modes:

    shapes    docs/pytorch.md path 1: CPU + CUDA activities, record_shapes, modules, one
              active step after a wait and a warm-up step -> a trace with kernel times and shapes
    counters  docs/pytorch.md path 2: the CUPTI range profiler, one range per kernel, with the
              metric list of docs/pytorch.md for this GPU (read from that page, so the two never
              differ), after two warm-up steps -> a trace with counters per kernel
    nvtx      no profiler: two warm-up steps, then one step inside the NVTX range "train_step",
              for `roofline profile --nvtx train_step/ -- python scripts/gpu/torch_step.py nvtx`

    python scripts/gpu/torch_step.py MODE [--dtype fp32|bf16] [--batch N] [--device cuda|cpu]
                                          [--compile] [-o OUT]

`--compile` runs the network through `torch.compile` (Inductor) with `benchmark_kernel` on, so
that a `shapes` trace holds Inductor's Triton kernels with their buffers and Inductor's own
estimates (`kernel_flop`, `kernel_num_gb`), as docs/pytorch.md describes; the compilation
happens in the warm-up steps, before the profiled one.

`--device cpu` runs the same code on the CPU (CPU activity only): a dry run of the script where
there is no GPU. Its traces have no kernels, and `roofline import` refuses them, saying so.
Prints one line of JSON with what it did (mode, versions, seconds per step, the trace's event
counts) so that a batch script can log it.
"""

import argparse
import ast
import gzip
import json
import pathlib
import re
import sys
import time

import torch
from torch import nn

REPO = pathlib.Path(__file__).resolve().parents[2]


class StepNet(nn.Module):
    """Conv stem -> LSTM over the image rows -> transformer encoder block -> linear head."""

    def __init__(self, channels=64, hidden=256, heads=8):
        super().__init__()
        c = channels
        self.stem = nn.Sequential(
            nn.Conv2d(3, c, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(c),
            nn.ReLU(inplace=True),
            nn.Conv2d(c, 2 * c, kernel_size=3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(2 * c),
            nn.ReLU(inplace=True),
        )
        self.lstm = nn.LSTM(input_size=2 * c, hidden_size=hidden, batch_first=True)
        self.block = nn.TransformerEncoderLayer(
            d_model=hidden,
            nhead=heads,
            dim_feedforward=4 * hidden,
            dropout=0.0,
            batch_first=True,
            norm_first=True,
        )
        self.head = nn.Linear(hidden, 10)

    def forward(self, x):
        x = self.stem(x)  # B x 2c x H/2 x W/2
        x = x.mean(dim=3).transpose(1, 2)  # B x H/2 steps x 2c features
        x, _ = self.lstm(x)  # B x H/2 x hidden
        x = self.block(x)
        return self.head(x[:, -1])  # B x 10


def metric_list(capability):
    """The metric list docs/pytorch.md gives for this GPU (SM80_METRICS below sm_90)."""
    name = "SM90_METRICS" if capability >= (9, 0) else "SM80_METRICS"
    doc = (REPO / "docs" / "pytorch.md").read_text()
    found = re.search(name + r" = (\[.*?\])", doc, re.S)
    if not found:
        sys.exit(f"docs/pytorch.md has no {name} list")
    return name, ast.literal_eval(found.group(1))


def listed_by_ncu(metrics):
    """The metrics of `metrics` whose base name `ncu --query-metrics` lists for this GPU, and
    those it does not (the range profiler cannot be asked for a counter the GPU lacks; `roofline
    profile` filters its requests the same way). When the query cannot run, all are kept and the
    second value is None (recorded as such in the script's output line)."""
    import os
    import shutil
    import subprocess

    ncu = os.environ.get("NCU") or shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    try:
        out = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True,
                             timeout=120, check=True).stdout
    except (OSError, subprocess.SubprocessError) as e:
        print(f"ncu --query-metrics failed ({e}); asking for every metric of the list",
              file=sys.stderr)
        return metrics, None
    listed = {line.split()[0] for line in out.splitlines() if line.split() and "__" in line.split()[0]}
    base = lambda m: m.rsplit(".", 2)[0] if m.endswith(".per_second") else m.rsplit(".", 1)[0]
    keep = [m for m in metrics if base(m) in listed]
    return keep, [m for m in metrics if base(m) not in listed]


def trace_counts(path):
    """Event counts by category of an exported trace (what the import will find)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        events = json.load(f).get("traceEvents", [])
    counts = {}
    for e in events:
        cat = e.get("cat", "?")
        counts[cat] = counts.get(cat, 0) + 1
    return counts


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["shapes", "counters", "nvtx"])
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="bf16")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--image", type=int, default=64, help="image height and width")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--compile", action="store_true", help="torch.compile the network")
    p.add_argument("-o", "--out", help="the trace to write (.json or .json.gz)")
    a = p.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA GPU visible to PyTorch (use --device cpu for a dry run)")
    if a.mode != "nvtx" and not a.out:
        sys.exit(f"mode {a.mode} writes a trace: give -o OUT.json.gz")
    if a.mode == "nvtx" and a.out:
        sys.exit("mode nvtx writes no trace (roofline profile records it): drop -o")

    torch.manual_seed(0)
    dev = torch.device(a.device)
    torch.backends.cudnn.benchmark = True  # settle on one algorithm in the warm-up steps
    torch.backends.cuda.matmul.allow_tf32 = False  # FP32 stays FP32 (the import assumes so)
    torch.backends.cudnn.allow_tf32 = False
    net = StepNet().to(dev)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    model = net
    if a.compile:
        import torch._inductor.config as inductor

        inductor.benchmark_kernel = True  # kernel_flop and kernel_num_gb on each Triton kernel
        model = torch.compile(net)
    x = torch.randn(a.batch, 3, a.image, a.image, device=dev)
    y = torch.randint(0, 10, (a.batch,), device=dev)
    amp = torch.autocast(a.device, dtype=torch.bfloat16, enabled=a.dtype == "bf16")

    def sync():
        if a.device == "cuda":
            torch.cuda.synchronize()

    def step():
        opt.zero_grad(set_to_none=True)
        with amp:
            loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    from torch.profiler import ProfilerActivity, profile, schedule

    info = {
        "mode": a.mode,
        "dtype": a.dtype,
        "batch": a.batch,
        "image": a.image,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name() if a.device == "cuda" else "cpu",
        "compile": a.compile,
    }
    t0 = time.perf_counter()
    if a.mode == "shapes":
        gpu = [ProfilerActivity.CUDA] if a.device == "cuda" else []
        with profile(
            activities=[ProfilerActivity.CPU, *gpu],
            record_shapes=True,
            with_stack=True,
            with_modules=True,
            schedule=schedule(wait=1, warmup=1, active=1),
            on_trace_ready=lambda prof: prof.export_chrome_trace(a.out),
        ) as prof:
            for _ in range(3):
                step()
                prof.step()
            sync()
    elif a.mode == "counters":
        from torch.profiler import _ExperimentalConfig

        cap = torch.cuda.get_device_capability() if a.device == "cuda" else (9, 0)
        info["metrics"], metrics = metric_list(cap)
        if a.device == "cuda":
            metrics, info["not_listed"] = listed_by_ncu(metrics)
        info["metric_count"] = len(metrics)
        for _ in range(2):
            step()
        sync()
        gpu = [ProfilerActivity.CUDA] if a.device == "cuda" else [ProfilerActivity.CPU]
        with profile(
            activities=gpu,  # the range profiler runs alone (docs/pytorch.md, path 2)
            record_shapes=True,
            experimental_config=_ExperimentalConfig(
                profiler_metrics=metrics,
                profiler_measure_per_kernel=True,
            ),
        ) as prof:
            step()
            sync()
        prof.export_chrome_trace(a.out)
    else:
        for _ in range(2):
            step()
        sync()
        if a.device == "cuda":
            torch.cuda.nvtx.range_push("train_step")
        step()
        sync()
        if a.device == "cuda":
            torch.cuda.nvtx.range_pop()
    info["seconds"] = round(time.perf_counter() - t0, 3)
    if a.out:
        info["out"] = a.out
        info["events"] = trace_counts(a.out)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
