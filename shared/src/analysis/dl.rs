//! Deep-learning kernels for the time-based roofline study: their analytical compute complexity
//! F and bandwidth complexity B, and the configurations `roofline suite` sweeps.
//!
//! After Wang, Yang, Farrell, Kurth and Williams, "Time-Based Roofline for Deep Learning
//! Performance Analysis" (DLS workshop at SC 2020): F counts the multiply-adds of the operator
//! (2 FLOPs each); B is the minimum traffic, every input read once and every output written once,
//! in the tensors' element size. A kernel's run time is bounded below by
//! `max(F / peak, B / bandwidth, n · t_launch)` ([`crate::analysis::time_based`]).

use crate::bundle::Complexity;

/// Element type of the tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// 32-bit float.
    Fp32,
    /// IEEE half.
    Fp16,
    /// bfloat16.
    Bf16,
}

impl Precision {
    /// Every precision the suite runs.
    pub const ALL: [Precision; 3] = [Precision::Fp32, Precision::Fp16, Precision::Bf16];

    /// Bytes per element.
    pub fn bytes(self) -> f64 {
        match self {
            Precision::Fp32 => 4.0,
            Precision::Fp16 | Precision::Bf16 => 2.0,
        }
    }

    /// The name used on the command line and in tags (`fp32`).
    pub fn key(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
        }
    }

    /// Parses [`Precision::key`].
    pub fn from_key(s: &str) -> Option<Self> {
        Precision::ALL.into_iter().find(|p| p.key() == s)
    }
}

/// `C = A·B` with `A` M×K, `B` K×N, `beta = 0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gemm {
    /// Rows of A and C.
    pub m: u64,
    /// Columns of B and C.
    pub n: u64,
    /// The reduction dimension.
    pub k: u64,
}

impl Gemm {
    /// F = 2·M·N·K.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// B = elt · (M·K + K·N + M·N): A and B read once, C written once.
    pub fn bytes(&self, elt: f64) -> f64 {
        elt * (self.m as f64 * self.k as f64
            + self.k as f64 * self.n as f64
            + self.m as f64 * self.n as f64)
    }

    /// F and B together.
    pub fn complexity(&self, elt: f64) -> Complexity {
        Complexity {
            flops: self.flops(),
            bytes: self.bytes(elt),
            datapath: None,
        }
    }
}

/// Which pass of a convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `y = conv(x, w)`.
    Forward,
    /// `dx = conv_transpose(dy, w)`.
    BackwardData,
    /// `dw = correlate(x, dy)`.
    BackwardFilter,
}

impl Direction {
    /// Every direction.
    pub const ALL: [Direction; 3] = [
        Direction::Forward,
        Direction::BackwardData,
        Direction::BackwardFilter,
    ];

    /// Tag value (`forward`, `backward_data`, `backward_filter`).
    pub fn key(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::BackwardData => "backward_data",
            Direction::BackwardFilter => "backward_filter",
        }
    }
}

/// A 2D convolution, NHWC input N×H×W×C, K filters of R×S×C, stride and zero padding equal in
/// both spatial dimensions, dilation 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conv2d {
    /// Batch.
    pub n: u64,
    /// Input height.
    pub h: u64,
    /// Input width.
    pub w: u64,
    /// Input channels.
    pub c: u64,
    /// Output channels (filters).
    pub k: u64,
    /// Filter height.
    pub r: u64,
    /// Filter width.
    pub s: u64,
    /// Stride.
    pub stride: u64,
    /// Zero padding on each side.
    pub pad: u64,
}

impl Conv2d {
    /// Output height `P = (H + 2·pad − R) / stride + 1`.
    pub fn p(&self) -> u64 {
        (self.h + 2 * self.pad).saturating_sub(self.r) / self.stride + 1
    }

    /// Output width `Q = (W + 2·pad − S) / stride + 1`.
    pub fn q(&self) -> u64 {
        (self.w + 2 * self.pad).saturating_sub(self.s) / self.stride + 1
    }

    /// F = 2·N·P·Q·K·C·R·S for every direction: each output (or gradient) element is the sum
    /// of C·R·S products (Wang et al. 2020, §3; the same count holds for the two backward passes,
    /// which perform the same multiply-adds in another order).
    pub fn flops(&self) -> f64 {
        2.0 * (self.n * self.p() * self.q() * self.k) as f64 * (self.c * self.r * self.s) as f64
    }

    /// Elements of the input x (N·H·W·C), the filter w (K·R·S·C) and the output y (N·P·Q·K).
    pub fn elements(&self) -> (f64, f64, f64) {
        (
            (self.n * self.h * self.w * self.c) as f64,
            (self.k * self.r * self.s * self.c) as f64,
            (self.n * self.p() * self.q() * self.k) as f64,
        )
    }

    /// B = elt · (x + w + y) for every direction: forward reads x and w and writes y;
    /// backward-data reads dy and w and writes dx; backward-filter reads x and dy and writes dw.
    pub fn bytes(&self, elt: f64) -> f64 {
        let (x, w, y) = self.elements();
        elt * (x + w + y)
    }

    /// F and B together.
    pub fn complexity(&self, elt: f64) -> Complexity {
        Complexity {
            flops: self.flops(),
            bytes: self.bytes(elt),
            datapath: None,
        }
    }
}

/// An LSTM layer: `batch` sequences of `seq` steps, `input` features, `hidden` units, one layer,
/// one direction, with bias.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lstm {
    /// Batch.
    pub batch: u64,
    /// Time steps.
    pub seq: u64,
    /// Input features.
    pub input: u64,
    /// Hidden units.
    pub hidden: u64,
}

/// FLOPs of the pointwise cell per (batch, hidden) element: 4 bias additions, `c = f·c + i·g`
/// (2 multiplications, 1 addition) and `h = o·tanh(c)` (1 multiplication). The 3 sigmoids and 2
/// tanh are special-function operations, which FLOP counters (Nsight Compute's
/// `sm__sass_thread_inst_executed_op_*` add/mul/fma metrics) do not count either.
pub const LSTM_CELL_FLOPS: f64 = 8.0;

impl Lstm {
    /// The gates' GEMM of one step: `[x_t, h_{t−1}]` (batch × (input + hidden)) times the
    /// concatenated weights ((input + hidden) × 4·hidden).
    pub fn step_gemm(&self) -> Gemm {
        Gemm {
            m: self.batch,
            n: 4 * self.hidden,
            k: self.input + self.hidden,
        }
    }

    /// F of one step: its GEMM plus the pointwise cell.
    pub fn step_flops(&self) -> f64 {
        self.step_gemm().flops() + LSTM_CELL_FLOPS * (self.batch * self.hidden) as f64
    }

    /// F of the whole sequence: `seq` steps.
    pub fn flops(&self) -> f64 {
        self.seq as f64 * self.step_flops()
    }

    /// B of the whole sequence, the minimum: the inputs x (seq·batch·input), the weights
    /// ((input + hidden)·4·hidden), the bias (4·hidden) and the initial h and c (2·batch·hidden)
    /// read once; every step's h (seq·batch·hidden) and the final c (batch·hidden) written once.
    pub fn bytes(&self, elt: f64) -> f64 {
        let (b, t, i, h) = (
            self.batch as f64,
            self.seq as f64,
            self.input as f64,
            self.hidden as f64,
        );
        elt * (t * b * i + (i + h) * 4.0 * h + 4.0 * h + 2.0 * b * h + t * b * h + b * h)
    }

    /// F and B together.
    pub fn complexity(&self, elt: f64) -> Complexity {
        Complexity {
            flops: self.flops(),
            bytes: self.bytes(elt),
            datapath: None,
        }
    }

    /// Launches of the step-by-step implementation: a GEMM and a cell kernel per step.
    pub fn step_by_step_launches(&self) -> u64 {
        2 * self.seq
    }
}

/// One point of a sweep: which parameter moved, to what, and the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case<T> {
    /// The swept parameter (`stride`, `batch`, `kernel`, `out_channels`, …).
    pub parameter: &'static str,
    /// Its value here.
    pub value: u64,
    /// The operator.
    pub op: T,
}

/// The conv2d study of Wang et al. 2020 on the ResNet-50 layer input 112×112×64 with a 3×3,
/// 64 → 64 base: stride 1, 2, 3 at batch 16; batch 16, 32, 64 at stride 2; kernel size 3, 7, 9;
/// output channels 64, 128, 256, 512 (the base elsewhere: batch 16, stride 2, 3×3, 64 filters,
/// "same" padding ⌊R/2⌋).
pub fn conv2d_study() -> Vec<Case<Conv2d>> {
    let base = Conv2d {
        n: 16,
        h: 112,
        w: 112,
        c: 64,
        k: 64,
        r: 3,
        s: 3,
        stride: 2,
        pad: 1,
    };
    let mut v = Vec::new();
    for stride in [1, 2, 3] {
        v.push(Case {
            parameter: "stride",
            value: stride,
            op: Conv2d { stride, ..base },
        });
    }
    for n in [16, 32, 64] {
        v.push(Case {
            parameter: "batch",
            value: n,
            op: Conv2d { n, ..base },
        });
    }
    for r in [3, 7, 9] {
        v.push(Case {
            parameter: "kernel",
            value: r,
            op: Conv2d {
                r,
                s: r,
                pad: r / 2,
                ..base
            },
        });
    }
    for k in [64, 128, 256, 512] {
        v.push(Case {
            parameter: "out_channels",
            value: k,
            op: Conv2d { k, ..base },
        });
    }
    v
}

/// The LSTM study around (batch, steps, features, hidden) = (16, 16, 32, 16): batch 16 to 128,
/// time steps 16 to 128, input features 32 to 128, hidden 16 to 128, one at a time, by doubling.
pub fn lstm_study() -> Vec<Case<Lstm>> {
    let base = Lstm {
        batch: 16,
        seq: 16,
        input: 32,
        hidden: 16,
    };
    let mut v = Vec::new();
    for batch in [16, 32, 64, 128] {
        v.push(Case {
            parameter: "batch",
            value: batch,
            op: Lstm { batch, ..base },
        });
    }
    for seq in [16, 32, 64, 128] {
        v.push(Case {
            parameter: "seq",
            value: seq,
            op: Lstm { seq, ..base },
        });
    }
    for input in [32, 64, 128] {
        v.push(Case {
            parameter: "input",
            value: input,
            op: Lstm { input, ..base },
        });
    }
    for hidden in [16, 32, 64, 128] {
        v.push(Case {
            parameter: "hidden",
            value: hidden,
            op: Lstm { hidden, ..base },
        });
    }
    v
}

/// The GEMM study: square sizes from launch-bound (64³) to compute-bound (16384³) by doubling.
pub fn gemm_study() -> Vec<Case<Gemm>> {
    (6..=14)
        .map(|e| {
            let n = 1u64 << e;
            Case {
                parameter: "size",
                value: n,
                op: Gemm { m: n, n, k: n },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1×1 convolution with stride 1 and no padding is a GEMM: M = N·H·W, N = K, K = C.
    #[test]
    fn one_by_one_convolution_is_a_gemm() {
        let conv = Conv2d {
            n: 8,
            h: 14,
            w: 14,
            c: 256,
            k: 512,
            r: 1,
            s: 1,
            stride: 1,
            pad: 0,
        };
        let gemm = Gemm {
            m: 8 * 14 * 14,
            n: 512,
            k: 256,
        };
        assert_eq!(conv.flops(), gemm.flops());
        assert_eq!(conv.bytes(2.0), gemm.bytes(2.0));
    }

    /// Hand count: a 3×3 "same" convolution, N=1, 4×4×2 input, 3 filters, stride 1: 16 outputs
    /// per filter, 18 products each.
    #[test]
    fn conv_by_hand() {
        let conv = Conv2d {
            n: 1,
            h: 4,
            w: 4,
            c: 2,
            k: 3,
            r: 3,
            s: 3,
            stride: 1,
            pad: 1,
        };
        assert_eq!((conv.p(), conv.q()), (4, 4));
        assert_eq!(conv.flops(), 2.0 * 16.0 * 3.0 * 18.0);
        // x 32 + w 54 + y 48 elements, 4 bytes each.
        assert_eq!(conv.bytes(4.0), 4.0 * (32.0 + 54.0 + 48.0));
        let s2 = Conv2d { stride: 2, ..conv };
        assert_eq!((s2.p(), s2.q()), (2, 2));
    }

    /// An LSTM step is its gates' GEMM plus the pointwise cell.
    #[test]
    fn lstm_step_is_gemm_plus_pointwise() {
        let l = Lstm {
            batch: 16,
            seq: 16,
            input: 32,
            hidden: 16,
        };
        // GEMM: 16 × 64 × 48 multiply-adds.
        assert_eq!(l.step_gemm().flops(), 2.0 * 16.0 * 64.0 * 48.0);
        assert_eq!(l.step_flops(), 2.0 * 16.0 * 64.0 * 48.0 + 8.0 * 16.0 * 16.0);
        assert_eq!(l.flops(), 16.0 * l.step_flops());
        assert_eq!(l.step_by_step_launches(), 32);
        // x 16·16·32, W 48·64, bias 64, h0 + c0 2·16·16, h_t 16·16·16, c_T 16·16 elements.
        let elements = 8192.0 + 3072.0 + 64.0 + 512.0 + 4096.0 + 256.0;
        assert_eq!(l.bytes(2.0), 2.0 * elements);
    }

    #[test]
    fn gemm_f_is_2mnk() {
        let g = Gemm { m: 3, n: 5, k: 7 };
        assert_eq!(g.flops(), 210.0);
        assert_eq!(g.bytes(1.0), 21.0 + 35.0 + 15.0);
    }

    /// The configuration lists match the study's text, value for value.
    #[test]
    fn studies_match_the_paper() {
        let conv = conv2d_study();
        let values = |p: &str| -> Vec<u64> {
            conv.iter()
                .filter(|c| c.parameter == p)
                .map(|c| c.value)
                .collect()
        };
        assert_eq!(values("stride"), [1, 2, 3]);
        assert_eq!(values("batch"), [16, 32, 64]);
        assert_eq!(values("kernel"), [3, 7, 9]);
        assert_eq!(values("out_channels"), [64, 128, 256, 512]);
        for c in &conv {
            assert_eq!((c.op.h, c.op.w, c.op.c), (112, 112, 64));
            match c.parameter {
                "stride" => assert_eq!((c.op.n, c.op.stride), (16, c.value)),
                "batch" => assert_eq!((c.op.n, c.op.stride), (c.value, 2)),
                "kernel" => assert_eq!((c.op.r, c.op.s, c.op.pad), (c.value, c.value, c.value / 2)),
                "out_channels" => assert_eq!(c.op.k, c.value),
                other => panic!("{other}"),
            }
        }
        let lstm = lstm_study();
        let lv = |p: &str| -> Vec<u64> {
            lstm.iter()
                .filter(|c| c.parameter == p)
                .map(|c| c.value)
                .collect()
        };
        assert_eq!(lv("batch"), [16, 32, 64, 128]);
        assert_eq!(lv("seq"), [16, 32, 64, 128]);
        assert_eq!(lv("input"), [32, 64, 128]);
        assert_eq!(lv("hidden"), [16, 32, 64, 128]);
        let g = gemm_study();
        assert_eq!(g.first().map(|c| c.value), Some(64));
        assert_eq!(g.last().map(|c| c.value), Some(16384));
    }
}
