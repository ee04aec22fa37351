"""Kernels whose work is known exactly, each alone in an NVTX range, for checking `roofline profile`.

For the GPU run (scripts/gpu/validate.sh): `roofline profile --nvtx known_CASE/ -- python
scripts/gpu/known_work.py` must count, summed over the kernels of that range,

    gemm_fp64, gemm_fp32, gemm_fp16, gemm_bf16   F = 2*M*N*K FLOPs (cuBLAS; TF32 off for FP32)
    copy_fp32                                    HBM bytes ~ 2*N*4 (read x, write y = x + 1)

`--print-expected` prints that table as JSON (no GPU needed) so that the checker and this file
never disagree. Each case is run once before its range (cuBLAS picks and loads its kernel then),
so the range holds only the measured launch(es). Prints one line of JSON with the wall time.

    python scripts/gpu/known_work.py [--case NAME ...] [--size N] [--device cuda|cpu]
                                     [--print-expected]
"""

import argparse
import json
import sys
import time

M = N = K = 4096  # a multiple of every cuBLAS tile: no padded FLOPs
# 1 GiB of FP32 each way: what L2 (50 MB on an H100) still holds dirty when the kernel ends
# weighs under 3% of the 2 GiB counted.
COPY_ELEMENTS = 256 << 20


def expected(size, copy_elements):
    """What each case's range must count: FLOPs of the products, HBM bytes of the copy."""
    flops = 2 * size**3
    cases = {f"gemm_{dt}": {"flops": flops, "m": size, "n": size, "k": size, "dtype": dt}
             for dt in ["fp64", "fp32", "fp16", "bf16"]}
    cases["copy_fp32"] = {"hbm_bytes": 2 * 4 * copy_elements, "elements": copy_elements}
    return cases


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", action="append", help="run only these cases (default: all)")
    p.add_argument("--size", type=int, default=M, help="M = N = K of the products")
    p.add_argument("--copy-elements", type=int, default=COPY_ELEMENTS)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--print-expected", action="store_true")
    a = p.parse_args()
    table = expected(a.size, a.copy_elements)
    if a.print_expected:
        print(json.dumps(table))
        return
    unknown = sorted(set(a.case or []) - set(table))
    if unknown:
        sys.exit(f"unknown case {unknown}; the cases are {sorted(table)}")

    import torch

    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA GPU visible to PyTorch (use --device cpu for a dry run)")
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device(a.device)
    cuda = a.device == "cuda"
    dtypes = {"fp64": torch.float64, "fp32": torch.float32, "fp16": torch.float16,
              "bf16": torch.bfloat16}

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def in_range(name, f):
        f()  # warm-up: cuBLAS's heuristics and module loading happen outside the range
        sync()
        if cuda:
            torch.cuda.nvtx.range_push(f"known_{name}")
        f()
        sync()
        if cuda:
            torch.cuda.nvtx.range_pop()

    t0 = time.perf_counter()
    for name in a.case or list(table):
        if name.startswith("gemm_"):
            dt = dtypes[name.removeprefix("gemm_")]
            s = a.size if cuda else 64  # the dry run checks the code, not the figures
            x = torch.randn(s, s, device=dev, dtype=dt)
            y = torch.randn(s, s, device=dev, dtype=dt)
            out = torch.empty(s, s, device=dev, dtype=dt)
            in_range(name, lambda: torch.mm(x, y, out=out))
        else:
            n = a.copy_elements if cuda else 1024
            x = torch.randn(n, device=dev)
            out = torch.empty_like(x)
            in_range(name, lambda: torch.add(x, 1.0, out=out))
    info = {"cases": a.case or list(table), "seconds": round(time.perf_counter() - t0, 3),
            "torch": torch.__version__,
            "device": torch.cuda.get_device_name() if cuda else "cpu"}
    print(json.dumps(info))


if __name__ == "__main__":
    main()
