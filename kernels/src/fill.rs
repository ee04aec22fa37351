//! The operands: how a buffer is filled on the GPU before anything is timed (`init.cu`, untimed,
//! once per run; [`Fill`]), the bound of its values, and the operand buffer of each `mma.sync`
//! kernel.

use roofline_model::bundle::Datapath;

use crate::source::{MMA_SETS, MMA_SETS_DMMA16};
use crate::{Kernel, Work};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mma_work;

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
}
