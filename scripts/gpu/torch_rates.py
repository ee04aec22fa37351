"""PyTorch's own rates on this GPU, for scale beside `roofline machine`'s same-run references:
a 1 GiB device-to-device copy (bytes read + written) and square GEMMs of 8192 in FP64, FP32
(TF32 off), FP16 and BF16, each the median of its timed runs after one untimed run.

    python scripts/gpu/torch_rates.py
"""

import torch


def median_seconds(f, n=10):
    f()
    torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True)
    e = torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(n):
        s.record()
        f()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) / 1e3)
    return sorted(ts)[len(ts) // 2]


def main():
    print("device", torch.cuda.get_device_name())
    a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    t = median_seconds(lambda: b.copy_(a), 20)
    print("d2d copy 1 GiB: %.3f TB/s (read + write)" % (2 * (1 << 30) / t / 1e12))
    torch.backends.cuda.matmul.allow_tf32 = False
    n = 8192
    for dt in [torch.float64, torch.float32, torch.float16, torch.bfloat16]:
        x = torch.randn(n, n, device="cuda", dtype=dt)
        y = torch.randn(n, n, device="cuda", dtype=dt)
        print(dt, "GEMM %d^3: %.1f TFLOP/s" % (n, 2 * n**3 / median_seconds(lambda: x @ y) / 1e12))


if __name__ == "__main__":
    main()
