//! The memory levels and datapaths of a GPU: the keys of its ceilings and of a kernel's counts,
//! with their display labels and JSON names.

use super::keyed;
use schemars::JsonSchema;
use serde::Serialize;

/// A level of the memory hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryLevel {
    /// L1 data cache / texture path (per SM).
    L1,
    /// Shared memory (per SM; on NVIDIA GPUs the same SRAM as L1).
    Shared,
    /// The L2 cache (device-wide).
    L2,
    /// Device memory (HBM or GDDR).
    Hbm,
    /// The host link (PCIe or NVLink-C2C), optional.
    HostLink,
}

keyed::deserialize_from_keys!(MemoryLevel {
    L1 => "l1",
    Shared => "shared",
    L2 => "l2",
    Hbm => "hbm",
    HostLink => "host_link",
});

impl MemoryLevel {
    /// Every level, from closest to the cores to farthest.
    pub const ALL: [MemoryLevel; 5] = [
        MemoryLevel::L1,
        MemoryLevel::Shared,
        MemoryLevel::L2,
        MemoryLevel::Hbm,
        MemoryLevel::HostLink,
    ];
    /// The three levels a kernel's bytes are counted at (hierarchical roofline).
    pub const KERNEL_LEVELS: [MemoryLevel; 3] =
        [MemoryLevel::L1, MemoryLevel::L2, MemoryLevel::Hbm];

    /// Short display label (`L1`, `HBM`).
    pub fn label(self) -> &'static str {
        match self {
            MemoryLevel::L1 => "L1",
            MemoryLevel::Shared => "Shared",
            MemoryLevel::L2 => "L2",
            MemoryLevel::Hbm => "HBM",
            MemoryLevel::HostLink => "Host link",
        }
    }

    /// The JSON name (`l1`, `hbm`).
    pub fn key(self) -> &'static str {
        match self {
            MemoryLevel::L1 => "l1",
            MemoryLevel::Shared => "shared",
            MemoryLevel::L2 => "l2",
            MemoryLevel::Hbm => "hbm",
            MemoryLevel::HostLink => "host_link",
        }
    }
}

/// A precision on a datapath: CUDA cores or Tensor Cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Datapath {
    /// FP64 on CUDA cores.
    Fp64,
    /// FP32 on CUDA cores.
    Fp32,
    /// FP16 on CUDA cores (packed half2).
    Fp16,
    /// BF16 on CUDA cores (packed bfloat162).
    Bf16,
    /// Tensor Cores, FP16 inputs.
    TensorFp16,
    /// Tensor Cores, BF16 inputs.
    TensorBf16,
    /// Tensor Cores, TF32 inputs.
    TensorTf32,
    /// Tensor Cores, FP8 inputs (sm_89 and later).
    TensorFp8,
    /// Tensor Cores, INT8 inputs (integer operations, counted like FLOPs).
    TensorInt8,
    /// Tensor Cores, FP64 (sm_80 and later).
    TensorFp64,
}

keyed::deserialize_from_keys!(Datapath {
    Fp64 => "fp64",
    Fp32 => "fp32",
    Fp16 => "fp16",
    Bf16 => "bf16",
    TensorFp16 => "tensor_fp16",
    TensorBf16 => "tensor_bf16",
    TensorTf32 => "tensor_tf32",
    TensorFp8 => "tensor_fp8",
    TensorInt8 => "tensor_int8",
    TensorFp64 => "tensor_fp64",
});

impl Datapath {
    /// Every datapath, CUDA cores first.
    pub const ALL: [Datapath; 10] = [
        Datapath::Fp64,
        Datapath::Fp32,
        Datapath::Fp16,
        Datapath::Bf16,
        Datapath::TensorFp16,
        Datapath::TensorBf16,
        Datapath::TensorTf32,
        Datapath::TensorFp8,
        Datapath::TensorInt8,
        Datapath::TensorFp64,
    ];

    /// True for the Tensor Core datapaths.
    pub fn is_tensor(self) -> bool {
        !matches!(
            self,
            Datapath::Fp64 | Datapath::Fp32 | Datapath::Fp16 | Datapath::Bf16
        )
    }

    /// Display label (`FP32`, `Tensor BF16`).
    pub fn label(self) -> &'static str {
        match self {
            Datapath::Fp64 => "FP64",
            Datapath::Fp32 => "FP32",
            Datapath::Fp16 => "FP16",
            Datapath::Bf16 => "BF16",
            Datapath::TensorFp16 => "Tensor FP16",
            Datapath::TensorBf16 => "Tensor BF16",
            Datapath::TensorTf32 => "Tensor TF32",
            Datapath::TensorFp8 => "Tensor FP8",
            Datapath::TensorInt8 => "Tensor INT8",
            Datapath::TensorFp64 => "Tensor FP64",
        }
    }

    /// The JSON name (`fp32`, `tensor_bf16`).
    pub fn key(self) -> &'static str {
        match self {
            Datapath::Fp64 => "fp64",
            Datapath::Fp32 => "fp32",
            Datapath::Fp16 => "fp16",
            Datapath::Bf16 => "bf16",
            Datapath::TensorFp16 => "tensor_fp16",
            Datapath::TensorBf16 => "tensor_bf16",
            Datapath::TensorTf32 => "tensor_tf32",
            Datapath::TensorFp8 => "tensor_fp8",
            Datapath::TensorInt8 => "tensor_int8",
            Datapath::TensorFp64 => "tensor_fp64",
        }
    }

    /// The datapath of a JSON name ([`Datapath::key`]).
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.key() == key)
    }
}
