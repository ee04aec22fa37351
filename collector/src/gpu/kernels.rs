//! The CUDA kernels, as typed assets: each source in `kernels/` embedded in the binary, listed in
//! [`Source`], and compiled by [`compile`] with NVRTC for the device's exact architecture.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use roofline_model::analysis::dl::Precision;
use roofline_model::bundle::{Datapath, MemoryLevel};

use super::audit_table;

/// Helpers every source starts with (clock stamps, `KEEP`).
const COMMON: &str = include_str!("../../../kernels/common.cuh");

/// Independent FMA chains per thread in `fma.cu` (`-DFMA_CHAINS`).
pub const FMA_CHAINS: u32 = 8;
/// Steps of every chain unrolled in one iteration of `fma.cu`'s timed loop (`-DFMA_UNROLL`).
/// At 16 (8 chains: 128 FMAs a pass) the loop's own `UIADD3, ISETP, BRA` took 3 of every 131
/// issue slots on sm_90 (97.7% of the FMA rate at best, 97.0% for the packed kernels, which also
/// reload their operands); at 64 they take 3 of 515 (99.4%; issue 33, SASS checked with NVRTC
/// 13.2 and ptxas 12.9).
pub const FMA_UNROLL: u32 = 64;
/// Independent accumulators per warp in `mma.cu`: `mma.sync` per iteration (`-DMMA_ACC`).
pub const MMA_ACC: u32 = 8;
/// Operand sets each thread of an `mma.cu` kernel loads from its operand buffer before the timed
/// loop (`-DMMA_SETS`); accumulator `k` uses set `k % MMA_SETS`, so consecutive MMAs change
/// operands. Two keep the 32-bit-register kernels at 64 registers on sm_90 (four blocks of 256
/// threads per SM; 70 on sm_80 to sm_89: three), where four took 96 (SASS audit, ptxas 12.9).
pub const MMA_SETS: u32 = 2;
/// The same for FP64 m16n8k16 (`-DMMA_SETS_DMMA16`), whose set is 12 doubles (24 registers):
/// two keep it within 128 registers.
pub const MMA_SETS_DMMA16: u32 = 2;
/// 16-byte loads in flight per thread per iteration of the read kernels of `bandwidth.cu`
/// (`-DBW_UNROLL`); the copy kernel moves half as many (a load and a store each).
pub const BW_UNROLL: u32 = 4;
/// Bytes of one vector access in `bandwidth.cu` and `ert.cu` (`float4`, `double2`).
pub const VECTOR_BYTES: u32 = 16;
/// Rows and columns of one output tile of the implicit-GEMM convolutions in `dl.cu`
/// (`-DIG_BM`, `-DIG_BN`).
pub const IG_TILE: u32 = 64;
/// Depth of one shared-memory stage of the implicit-GEMM convolutions (`-DIG_BK`).
pub const IG_DEPTH: u32 = 16;

/// One CUDA source file of `kernels/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// `bandwidth.cu`: HBM read/write/copy, L2, L1 and shared-memory reads.
    Bandwidth,
    /// `fma.cu`: CUDA-core FMA chains per precision, and the empty kernel.
    Fma,
    /// `mma.cu`: Tensor Core `mma.sync` loops per datapath.
    Mma,
    /// `ert.cu`: the ERT-style sweep kernel.
    Ert,
    /// `dl.cu`: our own direct convolutions and LSTM cell (`roofline suite`).
    Dl,
    /// `init.cu`: the operand fills (bounded random data written on the GPU once per run,
    /// untimed).
    Init,
}

impl Source {
    /// Every source.
    pub const ALL: [Source; 6] = [
        Source::Bandwidth,
        Source::Fma,
        Source::Mma,
        Source::Ert,
        Source::Dl,
        Source::Init,
    ];

    /// The file name under `kernels/`.
    pub fn file(self) -> &'static str {
        match self {
            Source::Bandwidth => "bandwidth.cu",
            Source::Fma => "fma.cu",
            Source::Mma => "mma.cu",
            Source::Ert => "ert.cu",
            Source::Dl => "dl.cu",
            Source::Init => "init.cu",
        }
    }

    /// The CUDA C++ text, without the common prelude.
    pub fn text(self) -> &'static str {
        match self {
            Source::Bandwidth => include_str!("../../../kernels/bandwidth.cu"),
            Source::Fma => include_str!("../../../kernels/fma.cu"),
            Source::Mma => include_str!("../../../kernels/mma.cu"),
            Source::Ert => include_str!("../../../kernels/ert.cu"),
            Source::Dl => include_str!("../../../kernels/dl.cu"),
            Source::Init => include_str!("../../../kernels/init.cu"),
        }
    }

    /// The constants this source is compiled with, as `(name, value)`: the same constants the
    /// work formulas of [`Work`] use, so a kernel and its count cannot drift apart. A source
    /// refuses to compile (`#error`) without them.
    pub fn defines(self) -> Vec<(&'static str, u32)> {
        match self {
            Source::Bandwidth => vec![("BW_UNROLL", BW_UNROLL)],
            Source::Fma => vec![("FMA_CHAINS", FMA_CHAINS), ("FMA_UNROLL", FMA_UNROLL)],
            Source::Mma => vec![
                ("MMA_ACC", MMA_ACC),
                ("MMA_SETS", MMA_SETS),
                ("MMA_SETS_DMMA16", MMA_SETS_DMMA16),
            ],
            Source::Ert => vec![],
            Source::Dl => vec![("IG_BM", IG_TILE), ("IG_BN", IG_TILE), ("IG_BK", IG_DEPTH)],
            Source::Init => vec![],
        }
    }

    /// The `extern "C"` entry points the collector loads from it (the tests check them against
    /// the source and the PTX).
    #[cfg(test)]
    pub(crate) fn entry_points(self) -> Vec<&'static str> {
        Kernel::all()
            .into_iter()
            .filter(|k| k.source() == self)
            .map(Kernel::entry)
            .collect()
    }

    /// The full text NVRTC compiles: the prelude, then the source.
    pub fn program(self) -> String {
        format!("{COMMON}\n{}", self.text())
    }

    /// NVRTC's options for `arch` (`sm_90`): the exact options every run uses (the SASS audit
    /// compiles through [`nvrtc_compile`] with them too).
    pub fn options(self, arch: &str) -> Vec<String> {
        let mut o = vec![format!("--gpu-architecture={arch}"), "-std=c++17".into()];
        o.extend(
            self.defines()
                .into_iter()
                .map(|(k, v)| format!("-D{k}={v}")),
        );
        o
    }
}

/// Where a memory kernel's accesses go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// `ld.global.cs` / `st.global.cs`: streaming, evict-first (HBM kernels).
    GlobalStreaming,
    /// `ld.global.cg`: cached in L2 only, bypassing L1.
    GlobalL2Only,
    /// `ld.global.ca`: cached in L1.
    GlobalL1,
    /// `ld.global.nc`: the non-coherent read-only path, cached in L1.
    GlobalNonCoherent,
    /// Plain `ld.global`/`st.global` (the compiler's default caching; the sweep).
    GlobalDefault,
    /// `ld.shared`.
    Shared,
}

/// The shape of one `mma.sync`, `m × n × k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MmaShape {
    /// Rows of A and D.
    pub m: u32,
    /// Columns of B and D.
    pub n: u32,
    /// The reduction depth.
    pub k: u32,
}

impl MmaShape {
    /// FLOPs of one MMA: `2·m·n·k` (a multiply and an add per term; PTX ISA, "Matrix shape").
    pub fn flops(self) -> f64 {
        2.0 * f64::from(self.m) * f64::from(self.n) * f64::from(self.k)
    }
}

/// What one kernel does per iteration of its timed loop: the *work formula* the collector
/// counts FLOPs and bytes with, and the SASS audit checks against the compiled instructions.
/// Built only from the constants passed to NVRTC ([`Source::defines`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Work {
    /// Per thread per iteration, `per_iteration` FMA instructions on `datapath`, each `lanes`
    /// wide (2 for `half2`/`bfloat162`); 2 FLOPs per lane.
    Fma {
        /// The CUDA-core datapath.
        datapath: Datapath,
        /// Lanes per instruction.
        lanes: u32,
        /// FMA instructions per thread per iteration.
        per_iteration: u32,
    },
    /// Per warp per iteration, `per_iteration` `mma.sync` of `shape` on `datapath`.
    Mma {
        /// The Tensor Core datapath.
        datapath: Datapath,
        /// The instruction's shape.
        shape: MmaShape,
        /// MMAs per warp per iteration.
        per_iteration: u32,
    },
    /// Per thread per iteration of the main loop, `loads` and `stores` of [`VECTOR_BYTES`]
    /// through `access`; the run counts bytes as elements × [`VECTOR_BYTES`] × accesses per element.
    Memory {
        /// The level the kernel measures.
        level: MemoryLevel,
        /// How it reaches memory.
        access: Access,
        /// Vector loads per thread per iteration.
        loads: u32,
        /// Vector stores per thread per iteration.
        stores: u32,
    },
    /// The ERT-style sweep: per element, one vector load, `fmas` FMAs per lane (an argument),
    /// one vector store; `lanes` values per vector.
    Sweep {
        /// The CUDA-core datapath.
        datapath: Datapath,
        /// Values per 16-byte vector (4 FP32, 2 FP64).
        lanes: u32,
    },
    /// Nothing (the empty kernel, for launch overhead).
    Nothing,
    /// A DL kernel: its work is the operation's analytical F and B (`roofline_model::analysis::dl`), not
    /// an instruction count; arithmetic in FP32 on CUDA cores.
    Analytical,
    /// An operand fill of `init.cu` (untimed): a grid-stride loop storing one value of `bytes`
    /// bytes per pass.
    Fill {
        /// Bytes of one value stored.
        bytes: u32,
    },
}

impl Work {
    /// FLOPs one thread (for [`Work::Fma`]) or one warp (for [`Work::Mma`]) does per
    /// iteration; `None` for the other kinds, whose FLOPs depend on their arguments.
    pub fn flops_per_iteration(self) -> Option<f64> {
        match self {
            Work::Fma {
                lanes,
                per_iteration,
                ..
            } => Some(2.0 * f64::from(lanes) * f64::from(per_iteration)),
            Work::Mma {
                shape,
                per_iteration,
                ..
            } => Some(shape.flops() * f64::from(per_iteration)),
            _ => None,
        }
    }

    /// Bytes one element moves, for the kernels that walk an array of [`VECTOR_BYTES`]-wide
    /// elements (grid-stride): each element is loaded and/or stored once, so an iteration covers
    /// `max(loads, stores)` elements with `loads + stores` accesses (1 access per element for
    /// the read and write kernels, 2 for the copy); the sweep loads and stores every element.
    /// `None` for the other kinds.
    pub fn bytes_per_element(self) -> Option<f64> {
        let vector = f64::from(VECTOR_BYTES);
        match self {
            Work::Memory { loads, stores, .. } if loads.max(stores) > 0 => {
                Some(vector * f64::from(loads + stores) / f64::from(loads.max(stores)))
            }
            Work::Sweep { .. } => Some(2.0 * vector),
            _ => None,
        }
    }

    /// Bytes one thread moves per iteration, `(loads + stores) × VECTOR_BYTES`, for the memory
    /// kernels whose every thread runs a fixed count of iterations (the L1 and shared-memory
    /// rereads); `None` for the other kinds.
    pub fn bytes_per_thread_iteration(self) -> Option<f64> {
        match self {
            Work::Memory { loads, stores, .. } => {
                Some(f64::from(VECTOR_BYTES) * f64::from(loads + stores))
            }
            _ => None,
        }
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

/// What one launch does: the work formula ([`Kernel::work`]) times the launch's geometry and
/// arguments, as counted by the functions below (one per kind of kernel). The DL kernels' work is
/// the operation's analytical complexity (`roofline_model::analysis::dl`), which the suite attaches: their
/// launches report none.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LaunchWork {
    /// FLOPs, on one datapath.
    pub flops: Option<(Datapath, f64)>,
    /// Bytes moved; see [`LaunchWork::level`].
    pub bytes: f64,
    /// The level `bytes` are counted at: the one the kernel targets; `None` for the sweep (the
    /// working set decides) and for kernels that move nothing they count.
    pub level: Option<MemoryLevel>,
}

impl LaunchWork {
    /// The FLOPs (0 when none are counted).
    pub fn flop_count(&self) -> f64 {
        self.flops.map_or(0.0, |(_, f)| f)
    }
}

/// How an operand buffer is filled (`init.cu`, untimed, once per run): the fill kernel and its
/// arguments. Bounded normal values are scaled by [`NORMAL_SCALE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// Raw 32-bit words, `(hash & keep) | set` (`fill_words`).
    Words {
        /// Bits kept from the hash.
        keep: u32,
        /// Bits set.
        set: u32,
    },
    /// Bounded normal FP32 values (`fill_f32`; TF32 operands too).
    F32,
    /// Bounded normal FP64 values (`fill_f64`).
    F64,
    /// Bounded normal FP16 values (`fill_f16`).
    F16,
    /// Bounded normal BF16 values (`fill_bf16`).
    Bf16,
    /// Bounded normal FP8 E4M3 values (`fill_e4m3`, sm_89 and later).
    E4m3,
}

/// Raw random words: the bandwidth kernels' buffers and INT8 operands (any byte is an int8).
pub const RANDOM_WORDS: Fill = Fill::Words {
    keep: u32::MAX,
    set: 0,
};
/// Words that are FP32 values in [1, 2) (random mantissa) and, read in pairs, normal FP64
/// values: the ERT-style sweep's buffer, which its FP32 and FP64 kernels both compute on.
pub const UNIT_FLOAT_WORDS: Fill = Fill::Words {
    keep: 0x007F_FFFF,
    set: 0x3F80_0000,
};
/// The scale of the bounded normal fills: values within ±2√3 × 0.5 = ±1.732, so |a·b| ≤ 3 and
/// a K-long dot product stays within 3·K, under FP16's largest finite value (65504) for K up to
/// [`MAX_K_FP16`]: no overflow and no NaN in any GEMM or MMA the collector times.
pub const NORMAL_SCALE: f32 = 0.5;
/// The bound of one bounded normal value before scaling: 2√3 (four uniforms summed, centred,
/// scaled to unit variance; `init.cu`).
pub const NORMAL_BOUND: f64 = 3.464_101_615_137_754_4;
/// The longest reduction an FP16 result can take from operands of [`NORMAL_SCALE`] without
/// overflowing: `floor(65504 / (bound × scale)²)`.
pub const MAX_K_FP16: u64 = 21_834;

impl Fill {
    /// How a Tensor Core datapath's operands are filled, for the `mma.sync` kernels and the
    /// reference GEMMs alike: bounded normal values of its input type, raw words for INT8 (any
    /// byte is an int8), FP32 values for TF32 (and any other datapath).
    pub fn for_datapath(d: Datapath) -> Fill {
        match d {
            Datapath::TensorFp16 => Fill::F16,
            Datapath::TensorBf16 => Fill::Bf16,
            Datapath::TensorFp8 => Fill::E4m3,
            Datapath::TensorInt8 => RANDOM_WORDS,
            Datapath::TensorFp64 => Fill::F64,
            _ => Fill::F32,
        }
    }

    /// The fill kernel.
    pub fn kernel(self) -> Kernel {
        match self {
            Fill::Words { .. } => Kernel::FillWords,
            Fill::F32 => Kernel::FillF32,
            Fill::F64 => Kernel::FillF64,
            Fill::F16 => Kernel::FillF16,
            Fill::Bf16 => Kernel::FillBf16,
            Fill::E4m3 => Kernel::FillE4m3,
        }
    }

    /// Bytes of one value it writes.
    pub fn value_bytes(self) -> u64 {
        match self.kernel().work() {
            Work::Fill { bytes } => u64::from(bytes),
            _ => 4,
        }
    }

    /// What the bundle says of the data (`operands` of a ceiling).
    pub fn operands(self) -> roofline_model::bundle::Operands {
        use roofline_model::bundle::Operands;
        match self {
            Fill::Words { keep: u32::MAX, .. } => Operands::RandomBits,
            Fill::Words { .. } => Operands::RandomUnitFloats,
            _ => Operands::BoundedNormal,
        }
    }
}

/// Operand sets per thread of an `mma.cu` kernel: [`MMA_SETS_DMMA16`] for FP64 m16n8k16,
/// [`MMA_SETS`] for the others.
pub fn mma_sets(kernel: Kernel) -> u32 {
    if kernel == Kernel::MmaF64M16n8k16 {
        MMA_SETS_DMMA16
    } else {
        MMA_SETS
    }
}

/// The operand buffer of an `mma.cu` kernel: bytes per launched thread and how it is filled
/// ([`Fill::for_datapath`]); `None` for other kernels. [`mma_sets`] sets per thread of the A
/// and B registers of one MMA: four 32-bit words of A and two of B for the 32-bit-register
/// shapes, one double each for FP64 m8n8k4, eight and four doubles for FP64 m16n8k16.
pub fn mma_operands(kernel: Kernel) -> Option<(u64, Fill)> {
    let Work::Mma { datapath, .. } = kernel.work() else {
        return None;
    };
    let words_per_set = match kernel {
        Kernel::MmaF64 => 4,
        Kernel::MmaF64M16n8k16 => 24,
        _ => 6,
    };
    Some((
        u64::from(mma_sets(kernel) * words_per_set * 4),
        Fill::for_datapath(datapath),
    ))
}

/// FLOPs of an FMA-peak launch: `flops_per_iteration × iterations × threads`.
pub fn fma_work(kernel: Kernel, threads: u64, iterations: i32) -> Option<LaunchWork> {
    let Work::Fma { datapath, .. } = kernel.work() else {
        return None;
    };
    let per = kernel.work().flops_per_iteration()?;
    Some(LaunchWork {
        flops: Some((datapath, per * f64::from(iterations) * threads as f64)),
        ..LaunchWork::default()
    })
}

/// FLOPs of an `mma.sync`-peak launch: `flops_per_iteration × iterations × warps`.
pub fn mma_work(kernel: Kernel, threads: u64, iterations: i32) -> Option<LaunchWork> {
    let Work::Mma { datapath, .. } = kernel.work() else {
        return None;
    };
    let per = kernel.work().flops_per_iteration()?;
    let warps = (threads / 32) as f64;
    Some(LaunchWork {
        flops: Some((datapath, per * f64::from(iterations) * warps)),
        ..LaunchWork::default()
    })
}

/// Bytes of a grid-stride memory launch over `elements` vectors, `repeats` times.
pub fn stream_work(kernel: Kernel, elements: u64, repeats: i32) -> Option<LaunchWork> {
    let Work::Memory { level, .. } = kernel.work() else {
        return None;
    };
    let per = kernel.work().bytes_per_element()?;
    Some(LaunchWork {
        bytes: elements as f64 * per * f64::from(repeats),
        level: Some(level),
        ..LaunchWork::default()
    })
}

/// Bytes of a per-thread memory launch: every thread runs `repeats` iterations.
pub fn per_thread_work(kernel: Kernel, threads: u64, repeats: i32) -> Option<LaunchWork> {
    let Work::Memory { level, .. } = kernel.work() else {
        return None;
    };
    let per = kernel.work().bytes_per_thread_iteration()?;
    Some(LaunchWork {
        bytes: threads as f64 * f64::from(repeats) * per,
        level: Some(level),
        ..LaunchWork::default()
    })
}

/// FLOPs and bytes of a sweep launch over `elements` vectors, `repeats` times, with `fmas`
/// FMAs per value (one add when 0).
pub fn sweep_work(kernel: Kernel, elements: u64, repeats: i32, fmas: i32) -> Option<LaunchWork> {
    let Work::Sweep { datapath, lanes } = kernel.work() else {
        return None;
    };
    let per_value = if fmas <= 0 {
        1.0
    } else {
        2.0 * f64::from(fmas)
    };
    let values = f64::from(repeats) * elements as f64 * f64::from(lanes);
    Some(LaunchWork {
        flops: Some((datapath, values * per_value)),
        bytes: f64::from(repeats) * elements as f64 * kernel.work().bytes_per_element()?,
        level: None,
    })
}

/// The sweep's `fmas` argument for `flops` FLOPs per value: 1 is one add (0 FMAs), an even
/// count is `flops / 2` FMAs.
pub fn sweep_fmas(flops_per_value: u32) -> i32 {
    if flops_per_value <= 1 {
        0
    } else {
        i32::try_from(flops_per_value / 2).unwrap_or(i32::MAX)
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

/// Why a kernel could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// NVRTC rejected the source; the log says where.
    #[error("NVRTC could not compile kernels/{file} for {arch}:\n{log}")]
    Compile {
        /// The source file.
        file: &'static str,
        /// `sm_XY`.
        arch: String,
        /// NVRTC's log.
        log: String,
    },
    /// NVRTC failed otherwise (library missing a symbol, out of memory).
    #[error("NVRTC failed on kernels/{file}: {message}")]
    Nvrtc {
        /// The source file.
        file: &'static str,
        /// What NVRTC said.
        message: String,
    },
    /// The driver could not load the compiled module or find an entry point.
    #[error("the CUDA driver could not load {what} from kernels/{file}: {source}")]
    Load {
        /// The source file.
        file: &'static str,
        /// The module or the entry point.
        what: String,
        /// The driver's error.
        #[source]
        source: cudarc::driver::DriverError,
    },
}

/// A compiled source with its entry points loaded.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The source.
    pub source: Source,
    module: Arc<CudaModule>,
}

impl Compiled {
    /// The entry point `name` (the [`Kernel::entry`] of one of the source's kernels).
    ///
    /// # Errors
    /// The driver's error, with the kernel's name.
    pub fn function(&self, name: &str) -> Result<CudaFunction, KernelError> {
        self.module
            .load_function(name)
            .map_err(|source| KernelError::Load {
                file: self.source.file(),
                what: format!("entry point {name}"),
                source,
            })
    }
}

/// Whether NVRTC can be loaded (cudarc panics on first use otherwise, so ask first).
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library by name.
    #[allow(unsafe_code)]
    unsafe {
        cudarc::nvrtc::sys::is_culib_present()
    }
}

/// `sm_XY` for a compute capability.
pub fn arch_name(major: i32, minor: i32) -> String {
    format!("sm_{major}{minor}")
}

/// What one NVRTC compile of a source gives: its PTX and, for a real architecture (`sm_XY`),
/// the CUBIN NVRTC's own assembler makes from that PTX.
#[derive(Debug, Clone)]
pub struct NvrtcOutput {
    /// The PTX.
    pub ptx: Ptx,
    /// The machine code; `None` for a virtual architecture (`compute_XY`), which gives PTX only.
    pub cubin: Option<Vec<u8>>,
}

/// Compiles one source with NVRTC for `arch` (`sm_90`), with [`Source::options`]: the one place
/// the collector runs NVRTC. Needs NVRTC only (no driver, no GPU): the SASS audit calls it on a
/// machine without either, and checks its PTX (through `ptxas`) against its CUBIN.
///
/// # Errors
/// [`KernelError::Compile`] with NVRTC's log, or [`KernelError::Nvrtc`].
pub fn nvrtc_compile(source: Source, arch: &str) -> Result<NvrtcOutput, KernelError> {
    use cudarc::nvrtc::{result, sys};
    use std::ffi::{CStr, CString};
    /// Destroys the program on every path out (it refers to `src` and `name`, which outlive it).
    struct Program(sys::nvrtcProgram);
    impl Drop for Program {
        fn drop(&mut self) {
            // SAFETY: created by nvrtcCreateProgram in `nvrtc_compile`, destroyed once, here.
            #[allow(unsafe_code)]
            let _ = unsafe { result::destroy_program(self.0) };
        }
    }
    let failed = |what: &str, e: result::NvrtcError| KernelError::Nvrtc {
        file: source.file(),
        message: format!("{what}: {e:?}"),
    };
    let text = |what: &str, bytes: String| {
        CString::new(bytes).map_err(|_| KernelError::Nvrtc {
            file: source.file(),
            message: format!("{what} holds a NUL byte"),
        })
    };
    // NVRTC's strings (log, PTX) end in a NUL.
    let string = |raw: Vec<std::ffi::c_char>| {
        let bytes: Vec<u8> = raw.iter().map(|&c| c.to_ne_bytes()[0]).collect();
        CStr::from_bytes_until_nul(&bytes)
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).into_owned())
    };
    let src = text("the source", source.program())?;
    let name = text("the name", source.file().to_string())?;
    let prog = result::create_program(&src, Some(&name)).map_err(|e| failed("create", e))?;
    let prog = Program(prog);
    let options = source.options(arch);
    // SAFETY: `prog` is a live program (destroyed only when `Program` drops).
    #[allow(unsafe_code)]
    let compiled = unsafe { result::compile_program(prog.0, &options) };
    if let Err(e) = compiled {
        // SAFETY: as above.
        #[allow(unsafe_code)]
        let log = unsafe { result::get_program_log(prog.0) }
            .map(string)
            .ok()
            .filter(|log| !log.trim().is_empty())
            .unwrap_or_else(|| format!("{e:?} (NVRTC gave no log)"));
        return Err(KernelError::Compile {
            file: source.file(),
            arch: arch.into(),
            log,
        });
    }
    // SAFETY: as above.
    #[allow(unsafe_code)]
    let ptx = unsafe { result::get_ptx(prog.0) }.map_err(|e| failed("nvrtcGetPTX", e))?;
    let mut size = 0usize;
    // SAFETY: as above; `size` is a valid out-pointer.
    #[allow(unsafe_code)]
    unsafe { sys::nvrtcGetCUBINSize(prog.0, &raw mut size) }
        .result()
        .map_err(|e| failed("nvrtcGetCUBINSize", e))?;
    let cubin = if size == 0 {
        None
    } else {
        let mut cubin = vec![0u8; size];
        // SAFETY: as above; `cubin` holds the `size` bytes NVRTC said it needs.
        #[allow(unsafe_code)]
        unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) }
            .result()
            .map_err(|e| failed("nvrtcGetCUBIN", e))?;
        Some(cubin)
    };
    Ok(NvrtcOutput {
        ptx: Ptx::from_src(string(ptx)),
        cubin,
    })
}

/// Compiles one source to PTX with NVRTC for `arch` ([`nvrtc_compile`]'s PTX), for the test that
/// compares the launchers' parameters with the compiled entry points.
///
/// # Errors
/// As [`nvrtc_compile`].
#[cfg(test)]
pub(crate) fn compile_ptx(source: Source, arch: &str) -> Result<Ptx, KernelError> {
    Ok(nvrtc_compile(source, arch)?.ptx)
}

/// Compiles one source with NVRTC for `arch` (`sm_90`, a real architecture) to a CUBIN
/// ([`nvrtc_compile`]'s). The collector loads this, not the PTX, so that the driver's JIT
/// compiler plays no part: what runs is what the SASS audit disassembles (`roofline-sass-audit`
/// checks that NVRTC's CUBIN and `ptxas`'s agree), and an NVRTC newer than the driver cannot
/// fail the load with `CUDA_ERROR_UNSUPPORTED_PTX_VERSION` (CUDA's minor-version compatibility
/// covers machine code, not PTX: CUDA C++ Best Practices Guide, "Dynamic Code Generation"; CUDA
/// Compatibility, "Minor Version Compatibility"). Needs NVRTC only (no driver, no GPU).
///
/// # Errors
/// As [`nvrtc_compile`], and [`KernelError::Nvrtc`] for a virtual architecture (no CUBIN).
pub fn compile_cubin(source: Source, arch: &str) -> Result<Vec<u8>, KernelError> {
    nvrtc_compile(source, arch)?
        .cubin
        .ok_or_else(|| KernelError::Nvrtc {
            file: source.file(),
            message: format!("no CUBIN for {arch} (a virtual architecture gives PTX only)"),
        })
}

/// Compiles one source with NVRTC for `arch` (`sm_90`) to machine code ([`compile_cubin`]) and
/// loads it into `ctx`.
///
/// # Errors
/// [`KernelError::Compile`] with NVRTC's log, or the driver's error.
pub fn compile(
    ctx: &Arc<CudaContext>,
    source: Source,
    arch: &str,
) -> Result<Compiled, KernelError> {
    let cubin = compile_cubin(source, arch)?;
    let module = ctx
        .load_module(Ptx::from_binary(cubin))
        .map_err(|e| KernelError::Load {
            file: source.file(),
            what: "the module".into(),
            source: e,
        })?;
    Ok(Compiled { source, module })
}

/// Why `kernel` must not be timed on a GPU of compute capability `cc`, if it must not: the
/// hardware lacks its instructions ([`Kernel::min_compute_capability`]; the entry point is then
/// compiled empty), or the SASS audit refused it there ([`audit_refusal`]). `machine` and
/// `suite` call this before timing any of our own kernels and record the reason under `skipped`.
pub fn refusal(kernel: Kernel, cc: (i32, i32)) -> Option<String> {
    let min = kernel.min_compute_capability();
    if cc < min {
        return Some(format!(
            "{} needs {} or later; this GPU is {}",
            kernel.entry(),
            arch_name(min.0, min.1),
            arch_name(cc.0, cc.1)
        ));
    }
    audit_refusal(kernel, &arch_name(cc.0, cc.1))
}

/// Why the collector must not time `kernel` on `arch` (`sm_90`), from the SASS audit embedded in
/// the binary ([`audit_table::embedded`]): it failed there under some audited toolkit (a census
/// mismatch, emulation such as FP8 through FP16 Tensor Cores, spills, dead code), or the
/// architecture lacks its hardware. `None` when it passed under every toolkit, or when no toolkit
/// audited `arch` (a newer GPU: the run goes ahead, unproven).
pub fn audit_refusal(kernel: Kernel, arch: &str) -> Option<String> {
    match audit_table::embedded() {
        Ok(t) => t.refusal(kernel.entry(), arch),
        // Unreachable while the unit tests parse the embedded table; refuse rather than time an
        // unaudited kernel.
        Err(e) => Some(format!("the embedded SASS audit is unreadable: {e}")),
    }
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

    /// Every constant a source is compiled with is one it requires (`#ifndef … #error`), so a
    /// kernel can never fall back on a value of its own that its work formula does not know.
    #[test]
    fn every_define_is_required_by_its_source() {
        for s in Source::ALL {
            for (name, _) in s.defines() {
                assert!(
                    s.text().contains(&format!("#ifndef {name}\n#error")),
                    "{} does not require {name}",
                    s.file()
                );
                assert!(
                    !s.text().contains(&format!("#define {name} ")),
                    "{} defines {name} itself",
                    s.file()
                );
            }
            assert!(
                s.options("sm_90")
                    .contains(&"--gpu-architecture=sm_90".to_string())
            );
        }
    }

    #[test]
    fn work_formulas_count_from_the_defines() {
        let fma = Kernel::FmaF16x2.work().flops_per_iteration();
        assert_eq!(fma, Some(f64::from(2 * 2 * FMA_CHAINS * FMA_UNROLL)));
        let mma = Kernel::MmaBf16.work().flops_per_iteration();
        assert_eq!(mma, Some(4096.0 * f64::from(MMA_ACC)));
        assert_eq!(Kernel::all().len(), 21 + 24 + 6);
        for k in Kernel::all() {
            assert!(
                k.source()
                    .text()
                    .contains(k.entry().rsplit('_').next().unwrap_or(""))
            );
        }
    }

    /// Threads in a launch of `blocks` blocks of `per_block` threads.
    fn threads(blocks: u64, per_block: u64) -> u64 {
        blocks * per_block
    }
    /// FMA peaks, by hand: fma_f32 on 132 SMs × 8 blocks × 256 threads, 512 iterations of 8
    /// chains × 64 steps: 2 FLOPs × 512 × 512 × 270,336 threads.
    #[test]
    fn fma_flops_per_launch_match_a_hand_count() {
        let t = threads(132 * 8, 256);
        assert_eq!(t, 270_336);
        assert_eq!(FMA_CHAINS * FMA_UNROLL, 512);
        let w = fma_work(Kernel::FmaF32, t, 512).unwrap();
        assert_eq!(
            w.flops,
            Some((Datapath::Fp32, 2.0 * 512.0 * 512.0 * 270_336.0))
        );
        assert_eq!(w.bytes, 0.0);
        // Packed half2: two lanes per instruction, twice the FLOPs.
        let h = fma_work(Kernel::FmaF16x2, t, 512).unwrap();
        assert_eq!(h.flop_count(), 2.0 * w.flop_count());
        assert_eq!(h.flops.unwrap().0, Datapath::Fp16);
        assert_eq!(
            fma_work(Kernel::FmaF64, 1, 1).unwrap().flop_count(),
            f64::from(2 * FMA_CHAINS * FMA_UNROLL)
        );
        assert!(fma_work(Kernel::MmaF16, 1, 1).is_none());
    }

    /// The operand bound, by hand: values within ±2√3 × 0.5, so |a·b| ≤ 3 and FP16 holds a
    /// 21,834-term dot product; every reference GEMM shape stays within it. The operand buffers
    /// hold MMA_SETS sets of the A and B registers per thread.
    #[test]
    fn operands_are_bounded_and_sized_per_thread() {
        let bound = NORMAL_BOUND * f64::from(NORMAL_SCALE);
        assert!((NORMAL_BOUND - 12f64.sqrt()).abs() < 1e-12);
        assert_eq!(MAX_K_FP16, (65504.0 / (bound * bound)).floor() as u64);
        assert_eq!(mma_operands(Kernel::MmaF16), Some((48, Fill::F16)));
        assert_eq!(mma_operands(Kernel::MmaInt8), Some((48, RANDOM_WORDS)));
        assert_eq!(mma_operands(Kernel::MmaF64), Some((32, Fill::F64)));
        assert_eq!(mma_operands(Kernel::MmaF64M16n8k16), Some((192, Fill::F64)));
        assert_eq!(mma_operands(Kernel::FmaF32), None);
        assert_eq!(mma_operands(Kernel::MmaTf32), Some((48, Fill::F32)));
        assert_eq!(mma_operands(Kernel::MmaFp8), Some((48, Fill::E4m3)));
        assert_eq!(mma_sets(Kernel::MmaF64M16n8k16), MMA_SETS_DMMA16);
        assert_eq!(mma_sets(Kernel::MmaF16), MMA_SETS);
        assert_eq!(Fill::for_datapath(Datapath::TensorBf16), Fill::Bf16);
        assert_eq!(Fill::for_datapath(Datapath::TensorInt8), RANDOM_WORDS);
        assert_eq!(Fill::for_datapath(Datapath::TensorTf32), Fill::F32);
        assert_eq!(Fill::E4m3.value_bytes(), 1);
        assert_eq!(Fill::F64.value_bytes(), 8);
        assert_eq!(RANDOM_WORDS.value_bytes(), 4);
        use roofline_model::bundle::Operands;
        assert_eq!(RANDOM_WORDS.operands(), Operands::RandomBits);
        assert_eq!(UNIT_FLOAT_WORDS.operands(), Operands::RandomUnitFloats);
        assert_eq!(Fill::Bf16.operands(), Operands::BoundedNormal);
        // FP64 m16n8k16 does the work of eight m8n8k4.
        let per_warp = |k: Kernel| mma_work(k, 32, 1).unwrap().flop_count();
        assert_eq!(
            per_warp(Kernel::MmaF64M16n8k16),
            8.0 * per_warp(Kernel::MmaF64)
        );
    }

    /// mma.sync peaks, by hand: m16n8k16 is 2·16·8·16 = 4096 FLOPs; 8 accumulators; 132 SMs ×
    /// 4 blocks × 256 threads = 4224 warps; 8192 iterations.
    #[test]
    fn mma_flops_per_launch_match_a_hand_count() {
        let t = threads(132 * 4, 256);
        let w = mma_work(Kernel::MmaBf16, t, 8192).unwrap();
        assert_eq!(
            w.flops,
            Some((Datapath::TensorBf16, 4096.0 * 8.0 * 8192.0 * 4224.0))
        );
        let per_warp = |k: Kernel| mma_work(k, 32, 1).unwrap().flop_count();
        let acc = f64::from(MMA_ACC);
        assert_eq!(per_warp(Kernel::MmaTf32), 2048.0 * acc);
        assert_eq!(per_warp(Kernel::MmaFp8), 8192.0 * acc);
        assert_eq!(per_warp(Kernel::MmaInt8), 8192.0 * acc);
        assert_eq!(per_warp(Kernel::MmaF64), 512.0 * acc);
        assert_eq!(
            mma_work(Kernel::MmaF64, 32, 1).unwrap().flops.unwrap().0,
            Datapath::TensorFp64
        );
        assert!(mma_work(Kernel::FmaF32, 32, 1).is_none());
    }

    /// Memory kernels, by hand: 2 GiB read once is 2 GiB at HBM; copied, 4 GiB; an L2 set of
    /// 1 MiB reread 256 times is 256 MiB; L1 with 264 blocks × 1024 threads × 4096 repeats ×
    /// 4 loads × 16 bytes.
    #[test]
    fn memory_bytes_per_launch_match_a_hand_count() {
        let n = (2u64 << 30) / 16;
        let read = stream_work(Kernel::HbmRead, n, 1).unwrap();
        assert_eq!(read.bytes, 2.0 * 1024.0 * 1024.0 * 1024.0);
        assert_eq!(read.level, Some(MemoryLevel::Hbm));
        assert_eq!(
            stream_work(Kernel::HbmWrite, n, 1).unwrap().bytes,
            read.bytes
        );
        assert_eq!(
            stream_work(Kernel::HbmCopy, n, 1).unwrap().bytes,
            2.0 * read.bytes
        );
        let l2 = stream_work(Kernel::L2Read, (1 << 20) / 16, 256).unwrap();
        assert_eq!(l2.bytes, 256.0 * 1048576.0);
        assert_eq!(l2.level, Some(MemoryLevel::L2));
        let t = threads(264, 1024);
        let l1 = per_thread_work(Kernel::L1Read, t, 4096).unwrap();
        assert_eq!(
            l1.bytes,
            264.0 * 1024.0 * 4096.0 * f64::from(BW_UNROLL) * 16.0
        );
        assert_eq!(l1.level, Some(MemoryLevel::L1));
        let sh = per_thread_work(Kernel::SharedRead, t, 4096).unwrap();
        assert_eq!((sh.bytes, sh.level), (l1.bytes, Some(MemoryLevel::Shared)));
        assert!(stream_work(Kernel::FmaF32, 1, 1).is_none());
    }

    /// The sweep, by hand: 1 MiB of float4 (65,536 vectors, 4 values each) swept 10 times at
    /// 8 FLOPs per value (4 FMAs) is 10 × 262,144 × 8 FLOPs and 10 × 1 MiB × 2 bytes; one FLOP
    /// per value is one add.
    #[test]
    fn sweep_work_matches_a_hand_count() {
        let n = (1u64 << 20) / 16;
        let w = sweep_work(Kernel::ErtF32, n, 10, sweep_fmas(8)).unwrap();
        assert_eq!(w.flops, Some((Datapath::Fp32, 10.0 * 262_144.0 * 8.0)));
        assert_eq!(w.bytes, 10.0 * 2.0 * 1048576.0);
        assert_eq!(w.level, None);
        assert_eq!(sweep_fmas(1), 0);
        assert_eq!(sweep_fmas(2), 1);
        assert_eq!(sweep_fmas(1024), 512);
        let one = sweep_work(Kernel::ErtF64, n, 1, sweep_fmas(1)).unwrap();
        // double2: two values per vector, one add each.
        assert_eq!(one.flops, Some((Datapath::Fp64, 2.0 * n as f64)));
        assert!(sweep_work(Kernel::HbmRead, 1, 1, 0).is_none());
    }

    #[test]
    fn program_starts_with_the_prelude() {
        for s in Source::ALL {
            let p = s.program();
            assert!(p.starts_with(COMMON));
            assert!(p.contains("STAMP_BEGIN"));
        }
        assert_eq!(arch_name(9, 0), "sm_90");
    }

    #[test]
    fn bytes_per_element_and_per_thread_count_the_accesses() {
        let v = f64::from(VECTOR_BYTES);
        assert_eq!(Kernel::HbmRead.work().bytes_per_element(), Some(v));
        assert_eq!(Kernel::HbmWrite.work().bytes_per_element(), Some(v));
        // A copy reads and writes every element.
        assert_eq!(Kernel::HbmCopy.work().bytes_per_element(), Some(2.0 * v));
        assert_eq!(Kernel::ErtF64.work().bytes_per_element(), Some(2.0 * v));
        assert_eq!(
            Kernel::L1Read.work().bytes_per_thread_iteration(),
            Some(f64::from(BW_UNROLL) * v)
        );
        assert_eq!(Kernel::FmaF32.work().bytes_per_element(), None);
        assert!(matches!(
            Kernel::SharedRead.work(),
            Work::Memory {
                level: MemoryLevel::Shared,
                ..
            }
        ));
    }

    #[test]
    fn refusal_names_the_architecture_a_kernel_needs() {
        assert_eq!(
            refusal(Kernel::MmaFp8, (8, 0)).as_deref(),
            Some("mma_fp8 needs sm_89 or later; this GPU is sm_80")
        );
        assert_eq!(
            refusal(Kernel::FmaBf16x2, (7, 5)).as_deref(),
            Some("fma_bf16x2 needs sm_80 or later; this GPU is sm_75")
        );
        assert_eq!(
            refusal(Kernel::MmaFp8, (9, 0)),
            audit_refusal(Kernel::MmaFp8, "sm_90")
        );
        // The case: on Hopper, `mma.sync` FP8 is lowered to FP16 HMMA, so no FP8 Tensor
        // ceiling is ever measured with it; on Ada it is native and runs.
        let hopper = refusal(Kernel::MmaFp8, (9, 0)).unwrap_or_default();
        assert!(hopper.contains("emulat"), "{hopper}");
        assert_eq!(refusal(Kernel::MmaFp8, (8, 9)), None);
        assert_eq!(refusal(Kernel::MmaBf16, (9, 0)), None);
        for k in Kernel::all() {
            let min = k.min_compute_capability();
            assert_eq!(refusal(k, min), audit_refusal(k, &arch_name(min.0, min.1)));
        }
    }
}
