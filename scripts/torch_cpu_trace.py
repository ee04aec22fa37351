"""Writes the CPU-only torch.profiler trace of tests/fixtures/traces/ (cpu-small-net.json.gz).

A tiny network (two convolutions, an LSTM, a linear layer and a transformer encoder block)
trained for a few steps on the CPU, profiled as docs/pytorch.md's path 1 says, with the CPU
activity only (no GPU here, so the trace has cpu_op events and no kernel events). The fixture
was written by PyTorch 2.15.0; other versions may record other operators and arguments:

    python scripts/torch_cpu_trace.py tests/fixtures/traces/cpu-small-net.json.gz

The shapes below are the ones tests/e2e/trace_import.rs counts by hand; change them together.
"""

import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        # 2×3×16×16 → 2×8×8×8 (stride 2, padding 1) → 2×8×8×8 (dilation 2, padding 2, groups 2)
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 8, kernel_size=3, padding=2, dilation=2, groups=2)
        # 8 time steps of 64 features (the conv output's channels × width, per row) → hidden 32
        self.lstm = nn.LSTM(input_size=64, hidden_size=32, batch_first=True)
        self.block = nn.TransformerEncoderLayer(
            d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True
        )
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))  # 2×8×8×8
        x = x.permute(0, 2, 1, 3).reshape(2, 8, 64)  # batch 2, 8 steps, 64 features
        x, _ = self.lstm(x)  # 2×8×32
        x = self.block(x)
        return self.head(x[:, -1])  # 2×10


def main(out):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    net = SmallNet()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(2, 3, 16, 16)
    y = torch.randint(0, 10, (2,))

    def save(p):
        p.export_chrome_trace(out)  # gzip when the name ends with .gz

    with profile(
        activities=[ProfilerActivity.CPU],  # no GPU here: CPU operators only
        record_shapes=True,  # Input Dims, Input type, Concrete Inputs
        with_stack=True,  # with_modules gives nn.Module frames only with it (torch 2.15)
        with_modules=True,
        schedule=schedule(wait=1, warmup=1, active=1),
        on_trace_ready=save,
    ) as prof:
        for _ in range(3):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            prof.step()
    print(f"torch {torch.__version__}: wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "cpu-small-net.json.gz")
