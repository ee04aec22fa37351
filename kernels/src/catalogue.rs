//! The catalogue: every entry point of `kernels/`, typed ([`Kernel`]), with the source that
//! defines it, its name, the oldest architecture whose hardware runs it and its work formula.

use roofline_model::analysis::dl::Precision;
use roofline_model::bundle::{Datapath, MemoryLevel};

use crate::source::{BW_UNROLL, FMA_CHAINS, FMA_UNROLL, MMA_ACC, VECTOR_BYTES};
use crate::{Access, MmaShape, Source, Work};

impl Source {
    /// The `extern "C"` entry points the collector loads from it (the tests check them against
    /// the source and the PTX).
    pub fn entry_points(self) -> Vec<&'static str> {
        Kernel::all()
            .into_iter()
            .filter(|k| k.source() == self)
            .map(Kernel::entry)
            .collect()
    }
}

/// A convolution or LSTM entry point of `dl.cu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DlOp {
    /// `conv_fwd_*`: direct forward convolution.
    ConvFwd,
    /// `conv_bwd_data_*`.
    ConvBwdData,
    /// `conv_bwd_filter_*`.
    ConvBwdFilter,
    /// `lstm_cell_*`: the fused LSTM cell.
    LstmCell,
    /// `igemm_fwd_*`: implicit-GEMM forward.
    IgemmFwd,
    /// `igemm_bwd_data_*`.
    IgemmBwdData,
    /// `igemm_bwd_filter_*`.
    IgemmBwdFilter,
    /// `conv_sum_*`: sums the split-K partials of the implicit-GEMM kernels.
    ConvSum,
}

impl DlOp {
    /// Every DL entry point family.
    pub const ALL: [DlOp; 8] = [
        DlOp::ConvFwd,
        DlOp::ConvBwdData,
        DlOp::ConvBwdFilter,
        DlOp::LstmCell,
        DlOp::IgemmFwd,
        DlOp::IgemmBwdData,
        DlOp::IgemmBwdFilter,
        DlOp::ConvSum,
    ];
}

/// Every entry point of `kernels/`, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// `hbm_read`.
    HbmRead,
    /// `hbm_write`.
    HbmWrite,
    /// `hbm_copy`.
    HbmCopy,
    /// `l2_read`.
    L2Read,
    /// `l1_read`: `.ca` loads.
    L1Read,
    /// `l1_read_nc`: `.nc` (non-coherent) loads.
    L1ReadNc,
    /// `shared_read`.
    SharedRead,
    /// `fma_f64`.
    FmaF64,
    /// `fma_f32`.
    FmaF32,
    /// `fma_f16x2`.
    FmaF16x2,
    /// `fma_bf16x2`.
    FmaBf16x2,
    /// `empty`.
    Empty,
    /// `mma_f16`: m16n8k16, FP16 in, FP32 accumulate.
    MmaF16,
    /// `mma_bf16`: m16n8k16, BF16 in, FP32 accumulate.
    MmaBf16,
    /// `mma_tf32`: m16n8k8, TF32 in, FP32 accumulate.
    MmaTf32,
    /// `mma_fp8`: m16n8k32, E4M3 in, FP32 accumulate.
    MmaFp8,
    /// `mma_int8`: m16n8k32, S8 in, S32 accumulate.
    MmaInt8,
    /// `mma_f64`: m8n8k4, FP64.
    MmaF64,
    /// `mma_f64_16816`: m16n8k16, FP64 (sm_90 and later).
    MmaF64M16n8k16,
    /// `ert_f32`.
    ErtF32,
    /// `ert_f64`.
    ErtF64,
    /// A `dl.cu` entry point with its storage precision.
    Dl(DlOp, Precision),
    /// `fill_words`: raw 32-bit words (masked).
    FillWords,
    /// `fill_f32`: bounded normal FP32 values.
    FillF32,
    /// `fill_f64`: bounded normal FP64 values.
    FillF64,
    /// `fill_f16`: bounded normal FP16 values.
    FillF16,
    /// `fill_bf16`: bounded normal BF16 values.
    FillBf16,
    /// `fill_e4m3`: bounded normal FP8 E4M3 values (sm_89 and later).
    FillE4m3,
}

impl Kernel {
    /// Every kernel, in source order.
    pub fn all() -> Vec<Kernel> {
        use Kernel::*;
        let mut v = vec![
            HbmRead,
            HbmWrite,
            HbmCopy,
            L2Read,
            L1Read,
            L1ReadNc,
            SharedRead,
            FmaF64,
            FmaF32,
            FmaF16x2,
            FmaBf16x2,
            Empty,
            MmaF16,
            MmaBf16,
            MmaTf32,
            MmaFp8,
            MmaInt8,
            MmaF64,
            MmaF64M16n8k16,
            ErtF32,
            ErtF64,
        ];
        for p in Precision::ALL {
            for op in DlOp::ALL {
                v.push(Dl(op, p));
            }
        }
        v.extend([FillWords, FillF32, FillF64, FillF16, FillBf16, FillE4m3]);
        v
    }

    /// The source that defines it.
    pub fn source(self) -> Source {
        use Kernel::*;
        match self {
            HbmRead | HbmWrite | HbmCopy | L2Read | L1Read | L1ReadNc | SharedRead => {
                Source::Bandwidth
            }
            FmaF64 | FmaF32 | FmaF16x2 | FmaBf16x2 | Empty => Source::Fma,
            MmaF16 | MmaBf16 | MmaTf32 | MmaFp8 | MmaInt8 | MmaF64 | MmaF64M16n8k16 => Source::Mma,
            ErtF32 | ErtF64 => Source::Ert,
            Dl(..) => Source::Dl,
            FillWords | FillF32 | FillF64 | FillF16 | FillBf16 | FillE4m3 => Source::Init,
        }
    }

    /// The entry point's name.
    pub fn entry(self) -> &'static str {
        use Kernel::*;
        match self {
            HbmRead => "hbm_read",
            HbmWrite => "hbm_write",
            HbmCopy => "hbm_copy",
            L2Read => "l2_read",
            L1Read => "l1_read",
            L1ReadNc => "l1_read_nc",
            SharedRead => "shared_read",
            FmaF64 => "fma_f64",
            FmaF32 => "fma_f32",
            FmaF16x2 => "fma_f16x2",
            FmaBf16x2 => "fma_bf16x2",
            Empty => "empty",
            MmaF16 => "mma_f16",
            MmaBf16 => "mma_bf16",
            MmaTf32 => "mma_tf32",
            MmaFp8 => "mma_fp8",
            MmaInt8 => "mma_int8",
            MmaF64 => "mma_f64",
            MmaF64M16n8k16 => "mma_f64_16816",
            ErtF32 => "ert_f32",
            ErtF64 => "ert_f64",
            Dl(op, p) => dl_entry(op, p),
            FillWords => "fill_words",
            FillF32 => "fill_f32",
            FillF64 => "fill_f64",
            FillF16 => "fill_f16",
            FillBf16 => "fill_bf16",
            FillE4m3 => "fill_e4m3",
        }
    }

    /// The oldest compute capability whose hardware runs it; on older GPUs the entry point
    /// exists but is empty, and the collector must not time it.
    pub fn min_compute_capability(self) -> (i32, i32) {
        use Kernel::*;
        match self {
            FmaBf16x2 | MmaF16 | MmaBf16 | MmaTf32 | MmaInt8 | MmaF64 => (8, 0),
            MmaFp8 | FillE4m3 => (8, 9),
            MmaF64M16n8k16 => (9, 0),
            _ => (7, 0),
        }
    }

    /// Its work formula.
    pub fn work(self) -> Work {
        use Kernel::*;
        let fma = |datapath, lanes| Work::Fma {
            datapath,
            lanes,
            per_iteration: FMA_CHAINS * FMA_UNROLL,
        };
        let mma = |datapath, (m, n, k)| Work::Mma {
            datapath,
            shape: MmaShape { m, n, k },
            per_iteration: MMA_ACC,
        };
        let mem = |level, access, loads, stores| Work::Memory {
            level,
            access,
            loads,
            stores,
        };
        match self {
            HbmRead => mem(MemoryLevel::Hbm, Access::GlobalStreaming, BW_UNROLL, 0),
            HbmWrite => mem(MemoryLevel::Hbm, Access::GlobalStreaming, 0, 1),
            HbmCopy => mem(
                MemoryLevel::Hbm,
                Access::GlobalStreaming,
                BW_UNROLL / 2,
                BW_UNROLL / 2,
            ),
            L2Read => mem(MemoryLevel::L2, Access::GlobalL2Only, BW_UNROLL, 0),
            L1Read => mem(MemoryLevel::L1, Access::GlobalL1, BW_UNROLL, 0),
            L1ReadNc => mem(MemoryLevel::L1, Access::GlobalNonCoherent, BW_UNROLL, 0),
            SharedRead => mem(MemoryLevel::Shared, Access::Shared, BW_UNROLL, 0),
            FmaF64 => fma(Datapath::Fp64, 1),
            FmaF32 => fma(Datapath::Fp32, 1),
            FmaF16x2 => fma(Datapath::Fp16, 2),
            FmaBf16x2 => fma(Datapath::Bf16, 2),
            Empty => Work::Nothing,
            MmaF16 => mma(Datapath::TensorFp16, (16, 8, 16)),
            MmaBf16 => mma(Datapath::TensorBf16, (16, 8, 16)),
            MmaTf32 => mma(Datapath::TensorTf32, (16, 8, 8)),
            MmaFp8 => mma(Datapath::TensorFp8, (16, 8, 32)),
            MmaInt8 => mma(Datapath::TensorInt8, (16, 8, 32)),
            MmaF64 => mma(Datapath::TensorFp64, (8, 8, 4)),
            MmaF64M16n8k16 => mma(Datapath::TensorFp64, (16, 8, 16)),
            ErtF32 => Work::Sweep {
                datapath: Datapath::Fp32,
                lanes: VECTOR_BYTES / 4,
            },
            ErtF64 => Work::Sweep {
                datapath: Datapath::Fp64,
                lanes: VECTOR_BYTES / 8,
            },
            Dl(..) => Work::Analytical,
            FillWords | FillF32 => Work::Fill { bytes: 4 },
            FillF64 => Work::Fill { bytes: 8 },
            FillF16 | FillBf16 => Work::Fill { bytes: 2 },
            FillE4m3 => Work::Fill { bytes: 1 },
        }
    }
}

/// `dl.cu`'s entry points, `{family}_{f32|f16|bf16}`, in [`DlOp::ALL`] × [`Precision::ALL`] order.
const DL_ENTRIES: [[&str; 3]; 8] = [
    ["conv_fwd_f32", "conv_fwd_f16", "conv_fwd_bf16"],
    [
        "conv_bwd_data_f32",
        "conv_bwd_data_f16",
        "conv_bwd_data_bf16",
    ],
    [
        "conv_bwd_filter_f32",
        "conv_bwd_filter_f16",
        "conv_bwd_filter_bf16",
    ],
    ["lstm_cell_f32", "lstm_cell_f16", "lstm_cell_bf16"],
    ["igemm_fwd_f32", "igemm_fwd_f16", "igemm_fwd_bf16"],
    [
        "igemm_bwd_data_f32",
        "igemm_bwd_data_f16",
        "igemm_bwd_data_bf16",
    ],
    [
        "igemm_bwd_filter_f32",
        "igemm_bwd_filter_f16",
        "igemm_bwd_filter_bf16",
    ],
    ["conv_sum_f32", "conv_sum_f16", "conv_sum_bf16"],
];

fn dl_entry(op: DlOp, p: Precision) -> &'static str {
    let row = DlOp::ALL.iter().position(|&o| o == op).unwrap_or(0);
    let col = Precision::ALL.iter().position(|&q| q == p).unwrap_or(0);
    DL_ENTRIES[row][col]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry point listed is defined (as `extern "C"`) in its source, and every
    /// `extern "C" __global__` in a source is listed.
    #[test]
    fn every_kernel_has_a_source_and_an_entry_point() {
        for s in Source::ALL {
            let text = s.text();
            assert!(!text.is_empty(), "{}", s.file());
            for name in s.entry_points() {
                // Defined by name, as a macro's first argument, or as `prefix_##SUFFIX` by a macro
                // instantiated with that suffix.
                let by_suffix = name.rsplit_once('_').is_some_and(|(prefix, suffix)| {
                    text.contains(&format!(" {prefix}_##SUFFIX("))
                        && text.contains(&format!("_KERNELS({suffix},"))
                });
                assert!(
                    text.contains(&format!(" {name}("))
                        || text.contains(&format!("({name},"))
                        || by_suffix,
                    "{} does not define {name}",
                    s.file()
                );
            }
            // Declarations made through macros name the kernel as the macro's first argument.
            for line in text.lines() {
                let line = line.trim_start();
                let declared =
                    if let Some(rest) = line.strip_prefix("extern \"C\" __global__ void ") {
                        // Past an optional `__launch_bounds__(…) `.
                        let rest = match rest.strip_prefix("__launch_bounds__(") {
                            Some(r) => r.split_once(") ").map_or(r, |(_, name)| name),
                            None => rest,
                        };
                        rest.split('(').next()
                    } else if let Some(rest) = line
                        .strip_prefix("MMA_F32_KERNEL(")
                        .or_else(|| line.strip_prefix("PACKED_FMA_KERNEL("))
                    {
                        rest.split(',').next()
                    } else {
                        None
                    };
                if let Some(name) = declared {
                    let name = name.trim();
                    if name != "NAME" && !name.ends_with("##SUFFIX") {
                        assert!(
                            s.entry_points().contains(&name),
                            "{} defines {name}, which Source::entry_points does not list",
                            s.file()
                        );
                    }
                }
            }
        }
    }
}
