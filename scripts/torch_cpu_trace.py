"""Writes the CPU-only torch.profiler traces of tests/fixtures/traces/.

Two tiny networks trained for a few steps on the CPU, profiled as docs/pytorch.md's path 1 says,
with the CPU activity only (no GPU here, so the traces have cpu_op events and no kernel events):

- `small` (cpu-small-net.json.gz, written by PyTorch 2.15.0): two convolutions, an LSTM, a
  linear layer and a transformer encoder block, cross-entropy loss;
- `cnn` (cpu-cnn-pooling.json.gz, written by PyTorch 2.11.0): a convolution with batch norm,
  max pooling (plain and ceil mode), average and adaptive poolings, a linear head, MSE and
  smooth-L1 losses; then, outside autograd, `abs` into an empty `out=` tensor and an in-place
  uniform initialisation.

Other versions may record other operators and arguments:

    python scripts/torch_cpu_trace.py small tests/fixtures/traces/cpu-small-net.json.gz
    python scripts/torch_cpu_trace.py cnn tests/fixtures/traces/cpu-cnn-pooling.json.gz

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


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        # 2×3×15×15 → 2×8×15×15 (padding 1), batch norm, relu
        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.head = nn.Linear(96, 4)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        x = nn.functional.max_pool2d(x, 3, 2, 1)  # 15 → 8
        x = nn.functional.max_pool2d(x, 3, 2, ceil_mode=True)  # 8 → 4 (3 without ceil mode)
        a = nn.functional.avg_pool2d(x, 2)  # 4 → 2
        m = nn.functional.adaptive_max_pool2d(x, (2, 2))
        g = nn.functional.adaptive_avg_pool2d(x, (2, 2))
        return self.head(torch.cat([a, m, g], 1).flatten(1))  # 2×24×2×2 → 2×96 → 2×4


def small_step(net):
    x = torch.randn(2, 3, 16, 16)
    y = torch.randint(0, 10, (2,))
    return lambda: nn.functional.cross_entropy(net(x), y)


def cnn_step(net):
    x = torch.randn(2, 3, 15, 15)
    y = torch.randn(2, 4)

    def loss():
        with torch.no_grad():
            torch.abs(x, out=torch.empty(0))  # the .out overload, out= recorded empty
            nn.init.uniform_(net.head.bias)  # uniform_ in place
        out = net(x)
        return nn.functional.mse_loss(out, y) + nn.functional.smooth_l1_loss(out, y)

    return loss


NETS = {"small": (SmallNet, small_step), "cnn": (SmallCnn, cnn_step)}


def main(which, out):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    make, step = NETS[which]
    net = make()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_of = step(net)

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
            loss = loss_of()
            loss.backward()
            opt.step()
            prof.step()
    print(f"torch {torch.__version__}: wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in NETS:
        sys.exit(f"usage: {sys.argv[0]} {{{'|'.join(NETS)}}} OUT.json.gz")
    main(sys.argv[1], sys.argv[2])
