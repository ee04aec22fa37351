//! How much a run measures ([`Plan`], from `--quick` and `--diagnose-refused`): the HBM
//! buffers, the sweep's working sets and FLOPs per element, and the reference GEMM search's
//! shapes and algorithms.

use roofline_model::bundle::Datapath;

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// `--quick`: smaller buffers, shorter windows, fewer GEMM shapes and algorithms, a coarser
    /// sweep.
    pub quick: bool,
    /// `--diagnose-refused`: time the kernels the SASS audit refuses here too, and note their
    /// rates (never as ceilings).
    pub diagnose_refused: bool,
}

/// One reference GEMM shape, `(m, n, k)` in cuBLAS's column-major terms (TN: `D = Aᵀ·B`).
pub type Shape = (u64, u64, u64);

impl Plan {
    /// Bytes of each HBM buffer.
    pub(super) fn hbm_bytes(self) -> usize {
        if self.quick { 512 << 20 } else { 2 << 30 }
    }
    /// Bytes of each host↔device copy of the host link's phase: 256 MiB (64 MiB with
    /// `--quick`), as nvbandwidth's default copy size is 512 MiB and CUDA's bandwidthTest's
    /// range tops at 64 MiB: far past the size where a copy's fixed cost matters.
    pub fn host_link_bytes(self) -> usize {
        if self.quick { 64 << 20 } else { 256 << 20 }
    }
    /// Working sets of the sweep, bytes.
    pub fn sweep_working_sets(self) -> Vec<usize> {
        let (step, top) = if self.quick {
            (4, 1usize << 30)
        } else {
            (2, 2usize << 30)
        };
        let mut v = Vec::new();
        let mut ws = 16usize << 10;
        while ws <= top {
            v.push(ws);
            ws *= step;
        }
        v
    }
    /// FLOPs per element of the sweep: 1, 2, 4, … 1024.
    pub fn sweep_flops_per_element(self) -> Vec<u32> {
        let step = if self.quick { 4 } else { 2 };
        let mut v = Vec::new();
        let mut f = 1u32;
        while f <= 1024 {
            v.push(f);
            f *= step;
        }
        v
    }

    /// The shapes of a datapath's reference GEMM search: a square 8192³ baseline, then the
    /// non-square shapes published as Hopper's best (stas00/ml-engineering's MAMF finder tables:
    /// BF16 2048×2048×13312 on H100 SXM and 1024×15360×4096 on GH200, FP8 1024×9216×14336,
    /// 1280×4096×12032 and 1024×14336×14336, given there as `torch.mm(M×K, K×N)`, i.e. cuBLAS
    /// `m = N`, `n = M`), and larger squares. `--quick` keeps the first two (TF32: 8192³ and
    /// 15360×1024×4096; FP64: 8192³ alone; never below 8192³, where launch and tail effects
    /// dominate) and its references are marked indicative: the table of
    /// `docs/measurements/methodology.md`, which a test holds to this function. Every
    /// `k` stays within [`roofline_kernels::MAX_K_FP16`], so bounded random FP16 operands
    /// cannot overflow.
    pub fn gemm_shapes(self, d: Datapath) -> Vec<Shape> {
        const SQUARE: Shape = (8192, 8192, 8192);
        let full: Vec<Shape> = match d {
            Datapath::TensorFp16 | Datapath::TensorBf16 => vec![
                SQUARE,
                (2048, 2048, 13312),
                (15360, 1024, 4096),
                (16384, 8192, 8192),
                (4096, 16384, 16384),
            ],
            Datapath::TensorTf32 => vec![
                SQUARE,
                (2048, 2048, 13312),
                (15360, 1024, 4096),
                (16384, 8192, 8192),
            ],
            Datapath::TensorFp8 => vec![
                SQUARE,
                (9216, 1024, 14336),
                (4096, 1280, 12032),
                (14336, 1024, 14336),
                (16384, 16384, 16384),
            ],
            Datapath::TensorInt8 => vec![
                SQUARE,
                (14336, 1024, 14336),
                (9216, 1024, 14336),
                (16384, 16384, 16384),
            ],
            Datapath::TensorFp64 => vec![SQUARE, (12288, 12288, 12288), (4096, 4096, 16384)],
            _ => vec![],
        };
        if self.quick {
            match d {
                Datapath::TensorTf32 => vec![full[0], full[2]],
                Datapath::TensorFp64 => vec![full[0]],
                _ => full.into_iter().take(2).collect(),
            }
        } else {
            full
        }
    }

    /// Heuristic algorithms timed per shape: 8 (NVIDIA's `LtSgemmSimpleAutoTuning` sample asks
    /// for 8), 4 with `--quick`.
    pub fn gemm_algorithms(self) -> usize {
        if self.quick { 4 } else { 8 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_cover_the_ert_range() {
        let full = Plan {
            quick: false,
            diagnose_refused: false,
        };
        let ws = full.sweep_working_sets();
        assert_eq!(ws.first(), Some(&(16 << 10)));
        assert_eq!(ws.last(), Some(&(2 << 30)));
        assert_eq!(
            full.sweep_flops_per_element(),
            [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        );
        let quick = Plan {
            quick: true,
            diagnose_refused: false,
        };
        assert!(quick.sweep_working_sets().len() < ws.len() / 2 + 1);
        assert_eq!(quick.sweep_flops_per_element(), [1, 4, 16, 64, 256, 1024]);
    }

    /// The reference GEMM search: 3 to 6 shapes per Tensor datapath (8192³ first), 8 heuristic
    /// algorithms each; `--quick` keeps two shapes (one for FP64), 8192³ first, and 4
    /// algorithms. Every reduction depth stays within what FP16 holds for our operands.
    #[test]
    fn gemm_searches_cover_several_shapes_and_algorithms() {
        let full = Plan {
            quick: false,
            diagnose_refused: false,
        };
        let quick = Plan {
            quick: true,
            diagnose_refused: false,
        };
        assert_eq!((full.gemm_algorithms(), quick.gemm_algorithms()), (8, 4));
        let tensor: Vec<Datapath> = Datapath::ALL
            .into_iter()
            .filter(|d| d.is_tensor())
            .collect();
        for d in tensor {
            let shapes = full.gemm_shapes(d);
            assert!((3..=6).contains(&shapes.len()), "{d:?}: {shapes:?}");
            assert_eq!(shapes[0], (8192, 8192, 8192));
            let q = quick.gemm_shapes(d);
            assert!(!q.is_empty() && q.len() <= 2, "{d:?}");
            for (m, n, k) in shapes.iter().chain(&q) {
                assert!(*k <= roofline_kernels::MAX_K_FP16, "{d:?}: k = {k}");
                assert!(m % 256 == 0 && n % 256 == 0 && k % 128 == 0, "{d:?}");
            }
            // Quick keeps the square baseline (its references are marked indicative).
            assert_eq!(q[0], (8192, 8192, 8192));
        }
        assert!(full.gemm_shapes(Datapath::Fp32).is_empty());
        assert_eq!(
            quick.gemm_shapes(Datapath::TensorTf32),
            [(8192, 8192, 8192), (15360, 1024, 4096)]
        );
        assert_eq!(
            quick.gemm_shapes(Datapath::TensorFp64),
            [(8192, 8192, 8192)]
        );
        assert_eq!(
            full.gemm_shapes(Datapath::TensorFp8)[1],
            (9216, 1024, 14336),
            "MAMF's torch 1024×9216×14336 is cuBLAS m = 9216, n = 1024"
        );
    }

    /// `docs/measurements/methodology.md`'s table of reference shapes says what this plan runs,
    /// full and `--quick`, for every Tensor datapath.
    #[test]
    fn the_methodology_page_lists_the_planned_shapes() {
        let page = include_str!("../../../../docs/measurements/methodology.md");
        let shape = |text: &str| -> Shape {
            let text = text.split('(').next().unwrap_or("").trim();
            if let Some(side) = text.strip_suffix('³') {
                let s: u64 = side.parse().unwrap();
                return (s, s, s);
            }
            let v: Vec<u64> = text.split('×').map(|x| x.parse().unwrap()).collect();
            (v[0], v[1], v[2])
        };
        let shapes = |cell: &str| -> Vec<Shape> { cell.split(';').map(shape).collect() };
        let rows = [
            ("| FP16, BF16 |", Datapath::TensorBf16),
            ("| TF32 |", Datapath::TensorTf32),
            ("| FP8 ", Datapath::TensorFp8),
            ("| INT8 ", Datapath::TensorInt8),
            ("| FP64 | 8192", Datapath::TensorFp64),
        ];
        for quick in [false, true] {
            let plan = Plan {
                quick,
                diagnose_refused: false,
            };
            for (start, d) in rows {
                let line = page
                    .lines()
                    .find(|l| l.starts_with(start))
                    .unwrap_or_else(|| panic!("no row {start}"));
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                let cell = if quick { cells[3] } else { cells[2] };
                assert_eq!(shapes(cell), plan.gemm_shapes(d), "{d:?}, quick {quick}");
            }
        }
        assert_eq!(
            Plan {
                quick: false,
                diagnose_refused: false
            }
            .gemm_shapes(Datapath::TensorFp16),
            Plan {
                quick: false,
                diagnose_refused: false
            }
            .gemm_shapes(Datapath::TensorBf16)
        );
    }
}
