//! The metric table: which Nsight Compute counters give a kernel's time, FLOPs per datapath and
//! bytes per memory level, per GPU architecture. One place; every entry cites its source.
//!
//! Sources:
//! - [V100-2020] Y. Wang, C. Yang, S. Farrell, Y. Zhang, T. Kurth, S. Williams, "Hierarchical
//!   Roofline Performance Analysis for Deep Learning Applications", 2020: time from
//!   `sm__cycles_elapsed.avg` over `sm__cycles_elapsed.avg.per_second`, FLOPs from the
//!   `sm__sass_thread_inst_executed_op_*_pred_on.sum` counters, tensor FLOPs as
//!   `512 × sm__inst_executed_pipe_tensor.sum` (V100 only), bytes from `l1tex__t_bytes.sum`,
//!   `lts__t_bytes.sum`, `dram__bytes.sum`.
//! - [NCU-sections] the roofline section files that ship with Nsight Compute
//!   (`SpeedOfLight_*RooflineChart.section`): half-precision instructions are packed, so `hadd`
//!   and `hmul` count 2 FLOPs and `hfma` 4; tensor work is counted in operations by
//!   `sm__ops_path_tensor_*` (no multiplier); L1 bytes as `l1tex__lsu_writeback_active_*.sum ×
//!   128` where `l1tex__t_bytes.sum` is not used; L2 bytes as `lts__lts2xbar_cycles_active.sum ×
//!   32`.
//! - [NCU-Hopper] Hopper's tensor counters split by instruction: `..._op_hgmma_...` for wgmma
//!   and `..._op_hmma_...` for mma.sync (the hmma counters stay at zero for wgmma kernels).
//!
//! Every name here must be checked against `ncu --query-metrics` on the GPU; `roofline profile`
//! asks only for the metrics the GPU lists, and a bundle's notes say which were missing and what
//! replaced them. Names not yet confirmed on a GPU by this project are marked as such in
//! `docs/ncu-metrics.md`.

use roofline_model::bundle::options::ComputeCapability;
use roofline_model::bundle::{Datapath, MemoryLevel};

/// How half-precision CUDA-core instructions are counted and times read: the model's one
/// convention type (`--convention`).
pub use roofline_model::bundle::options::Convention;

/// GPU architectures with their own metric rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Arch {
    /// Volta, compute capability 7.0 and 7.2.
    Volta,
    /// Turing, 7.5.
    Turing,
    /// Ampere, 8.0, 8.6, 8.7.
    Ampere,
    /// Ada, 8.9.
    Ada,
    /// Hopper, 9.0.
    Hopper,
    /// Blackwell, 10.x and 12.x (as far as documented).
    Blackwell,
}

impl Arch {
    /// The architecture of a compute capability, with a note when it is not one we know and the
    /// nearest documented table is used instead.
    pub fn of(cc: ComputeCapability) -> (Arch, Option<String>) {
        let exact = match (cc.major, cc.minor) {
            (7, 0 | 2) => Some(Arch::Volta),
            (7, 5) => Some(Arch::Turing),
            (8, 0 | 6 | 7) => Some(Arch::Ampere),
            (8, 9) => Some(Arch::Ada),
            (9, 0) => Some(Arch::Hopper),
            (10 | 12, _) => Some(Arch::Blackwell),
            _ => None,
        };
        if let Some(a) = exact {
            return (a, None);
        }
        let nearest = match cc.major {
            0..=6 => Arch::Volta,
            7 => Arch::Turing,
            8 => Arch::Ada,
            9 => Arch::Hopper,
            _ => Arch::Blackwell,
        };
        (
            nearest,
            Some(format!(
                "compute capability {cc} is not in the metric table; using the nearest documented one ({nearest:?})"
            )),
        )
    }

    /// [`Arch::of`] a compute capability written `major.minor`.
    ///
    /// # Errors
    /// The words are not a compute capability (the message after `--arch `).
    pub fn from_compute_capability(cc: &str) -> Result<(Arch, Option<String>), String> {
        Ok(Arch::of(cc.parse()?))
    }

    /// The compute capability most typical of the architecture (for messages).
    pub fn name(self) -> &'static str {
        match self {
            Arch::Volta => "Volta (sm_70)",
            Arch::Turing => "Turing (sm_75)",
            Arch::Ampere => "Ampere (sm_80)",
            Arch::Ada => "Ada (sm_89)",
            Arch::Hopper => "Hopper (sm_90)",
            Arch::Blackwell => "Blackwell (sm_100)",
        }
    }
}

/// Time metrics.
pub mod time {
    /// Kernel duration, nanoseconds in base units of ncu (converted to seconds on import).
    pub const DURATION: &str = "gpu__time_duration.sum";
    /// SM cycles elapsed (average over SMs).
    pub const CYCLES: &str = "sm__cycles_elapsed.avg";
    /// SM clock rate during the kernel.
    pub const CYCLES_PER_SECOND: &str = "sm__cycles_elapsed.avg.per_second";
}

/// A CUDA-core instruction counter and its FLOPs per thread instruction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlopCounter {
    /// Metric name.
    pub metric: &'static str,
    /// Datapath the FLOPs count towards.
    pub datapath: Datapath,
    /// FLOPs per instruction under [`Convention::Current`].
    pub weight: f64,
    /// FLOPs per instruction under [`Convention::Study2020`].
    pub weight_2020: f64,
}

const fn fc(
    metric: &'static str,
    datapath: Datapath,
    weight: f64,
    weight_2020: f64,
) -> FlopCounter {
    FlopCounter {
        metric,
        datapath,
        weight,
        weight_2020,
    }
}

/// CUDA-core FLOP counters, every architecture ([V100-2020], [NCU-sections]). Half-precision
/// instructions are counted towards FP16 (the counters do not separate BF16).
pub const CUDA_CORE_FLOPS: [FlopCounter; 9] = [
    fc(
        "sm__sass_thread_inst_executed_op_dadd_pred_on.sum",
        Datapath::Fp64,
        1.0,
        1.0,
    ),
    fc(
        "sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
        Datapath::Fp64,
        1.0,
        1.0,
    ),
    fc(
        "sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
        Datapath::Fp64,
        2.0,
        2.0,
    ),
    fc(
        "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
        Datapath::Fp32,
        1.0,
        1.0,
    ),
    fc(
        "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
        Datapath::Fp32,
        1.0,
        1.0,
    ),
    fc(
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
        Datapath::Fp32,
        2.0,
        2.0,
    ),
    fc(
        "sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
        Datapath::Fp16,
        2.0,
        1.0,
    ),
    fc(
        "sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
        Datapath::Fp16,
        2.0,
        1.0,
    ),
    fc(
        "sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
        Datapath::Fp16,
        4.0,
        2.0,
    ),
];

/// Volta's tensor instruction counter: each HMMA.884 does 512 FLOPs per warp instruction
/// ([V100-2020]); valid on Volta only.
pub const VOLTA_TENSOR_INST: &str = "sm__inst_executed_pipe_tensor.sum";
/// FLOPs per Volta tensor instruction.
pub const VOLTA_FLOPS_PER_TENSOR_INST: f64 = 512.0;

/// Alternative ways to count one quantity: the first group with any metric present wins, so
/// that an aggregate counter and its per-instruction parts are never added together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Alternatives {
    /// Groups of metrics, each summed and multiplied by its factor; preferred first.
    pub groups: &'static [(&'static [&'static str], f64)],
}

/// Tensor operations per datapath on Turing and later ([NCU-sections], [NCU-Hopper]): the
/// datapath-wide aggregates first, else the per-instruction counters (wgmma and mma.sync). Per
/// architecture, the names Nsight Compute's `SpeedOfLight_HierarchicalTensorRooflineChart`
/// section uses there are among the groups: Hopper's un-suffixed aggregates; Ampere's and Ada's
/// `…_sparsity_{off,on}` ones; Turing's `src_fp16_dst_fp16` with `src_fp16_bf16_tf32_dst_fp32`
/// (its Tensor Cores take FP16 alone, so both are FP16 work; before `src_fp16_dst_fp32`, which
/// its section does not use); Blackwell's FP8 in `src_fp8_dst_*` (12.x) or together with
/// FP4 and FP6 in `src_fp4_fp6_fp8_dst_*` (10.x). `None` (architecture unknown): every group.
pub fn tensor_counters(d: Datapath, arch: Option<Arch>) -> Option<Alternatives> {
    const FP16_AGGREGATE: (&[&str], f64) = (&["sm__ops_path_tensor_src_fp16.sum"], 1.0);
    const FP16_BY_RESULT: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
            "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
        ],
        1.0,
    );
    const FP16_SPARSITY: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_src_fp16_dst_fp16_sparsity_off.sum",
            "sm__ops_path_tensor_src_fp16_dst_fp16_sparsity_on.sum",
            "sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum",
            "sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_on.sum",
        ],
        1.0,
    );
    const FP16_INSTRUCTIONS: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum",
            "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_on.sum",
            "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum",
            "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_on.sum",
            "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum",
            "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_on.sum",
        ],
        1.0,
    );
    // Turing's section pairs FP16 accumulation with the one float aggregate that accumulates
    // in FP32 (Turing's Tensor Cores take no other float input than FP16).
    const FP16_TURING: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
            "sm__ops_path_tensor_src_fp16_bf16_tf32_dst_fp32.sum",
        ],
        1.0,
    );
    const FP16: &[(&[&str], f64)] = &[FP16_AGGREGATE, FP16_BY_RESULT, FP16_INSTRUCTIONS];
    const FP16_AMPERE_ADA: &[(&[&str], f64)] = &[
        FP16_AGGREGATE,
        FP16_BY_RESULT,
        FP16_SPARSITY,
        FP16_INSTRUCTIONS,
    ];
    const FP16_TURING_ON: &[(&[&str], f64)] = &[
        FP16_AGGREGATE,
        FP16_TURING,
        FP16_BY_RESULT,
        FP16_INSTRUCTIONS,
    ];
    const FP16_ANY: &[(&[&str], f64)] = &[
        FP16_AGGREGATE,
        FP16_BY_RESULT,
        FP16_SPARSITY,
        FP16_INSTRUCTIONS,
        FP16_TURING,
    ];
    const BF16_AGGREGATE: (&[&str], f64) = (&["sm__ops_path_tensor_src_bf16_dst_fp32.sum"], 1.0);
    const BF16_SPARSITY: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum",
            "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_on.sum",
        ],
        1.0,
    );
    const BF16_INSTRUCTIONS: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum",
            "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_on.sum",
            "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum",
            "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_on.sum",
        ],
        1.0,
    );
    const BF16: &[(&[&str], f64)] = &[BF16_AGGREGATE, BF16_INSTRUCTIONS];
    const BF16_ANY: &[(&[&str], f64)] = &[BF16_AGGREGATE, BF16_SPARSITY, BF16_INSTRUCTIONS];
    const TF32_AGGREGATE: (&[&str], f64) = (&["sm__ops_path_tensor_src_tf32_dst_fp32.sum"], 1.0);
    const TF32_SPARSITY: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_src_tf32_dst_fp32_sparsity_off.sum",
            "sm__ops_path_tensor_src_tf32_dst_fp32_sparsity_on.sum",
        ],
        1.0,
    );
    const TF32_INSTRUCTIONS: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum",
            "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_on.sum",
            "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum",
            "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_on.sum",
        ],
        1.0,
    );
    const TF32: &[(&[&str], f64)] = &[TF32_AGGREGATE, TF32_INSTRUCTIONS];
    const TF32_ANY: &[(&[&str], f64)] = &[TF32_AGGREGATE, TF32_SPARSITY, TF32_INSTRUCTIONS];
    const FP8_HOPPER: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_src_fp8_sparsity_off.sum",
            "sm__ops_path_tensor_src_fp8_sparsity_on.sum",
        ],
        1.0,
    );
    const FP8_BY_RESULT: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_src_fp8_dst_fp16_sparsity_off.sum",
            "sm__ops_path_tensor_src_fp8_dst_fp16_sparsity_on.sum",
            "sm__ops_path_tensor_src_fp8_dst_fp32_sparsity_off.sum",
            "sm__ops_path_tensor_src_fp8_dst_fp32_sparsity_on.sum",
        ],
        1.0,
    );
    const FP8_WITH_FP4_FP6: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp16.sum",
            "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum",
        ],
        1.0,
    );
    const FP8: &[(&[&str], f64)] = &[FP8_HOPPER];
    const FP8_ANY: &[(&[&str], f64)] = &[FP8_HOPPER, FP8_BY_RESULT, FP8_WITH_FP4_FP6];
    const INT8_AGGREGATE: (&[&str], f64) = (&["sm__ops_path_tensor_src_int8.sum"], 1.0);
    const INT8_SPARSITY: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_src_int8_sparsity_off.sum",
            "sm__ops_path_tensor_src_int8_sparsity_on.sum",
        ],
        1.0,
    );
    const INT8_INSTRUCTIONS: (&[&str], f64) = (
        &[
            "sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum",
            "sm__ops_path_tensor_op_igmma_src_int8_sparsity_on.sum",
            "sm__ops_path_tensor_op_imma_src_int8_sparsity_off.sum",
            "sm__ops_path_tensor_op_imma_src_int8_sparsity_on.sum",
        ],
        1.0,
    );
    const INT8: &[(&[&str], f64)] = &[INT8_AGGREGATE, INT8_INSTRUCTIONS];
    const INT8_ANY: &[(&[&str], f64)] = &[INT8_AGGREGATE, INT8_SPARSITY, INT8_INSTRUCTIONS];
    const FP64: &[(&[&str], f64)] = &[(&["sm__ops_path_tensor_src_fp64.sum"], 1.0)];
    let ampere_ada = matches!(arch, Some(Arch::Ampere | Arch::Ada) | None);
    let groups = match d {
        Datapath::TensorFp16 => match arch {
            None => FP16_ANY,
            Some(Arch::Turing) => FP16_TURING_ON,
            Some(Arch::Ampere | Arch::Ada) => FP16_AMPERE_ADA,
            Some(_) => FP16,
        },
        Datapath::TensorBf16 if ampere_ada => BF16_ANY,
        Datapath::TensorBf16 => BF16,
        Datapath::TensorTf32 if ampere_ada => TF32_ANY,
        Datapath::TensorTf32 => TF32,
        Datapath::TensorFp8 if matches!(arch, Some(Arch::Blackwell) | None) => FP8_ANY,
        Datapath::TensorFp8 => FP8,
        Datapath::TensorInt8 if ampere_ada => INT8_ANY,
        Datapath::TensorInt8 => INT8,
        Datapath::TensorFp64 => FP64,
        Datapath::Fp64 | Datapath::Fp32 | Datapath::Fp16 | Datapath::Bf16 => return None,
    };
    Some(Alternatives { groups })
}

/// Bytes per memory level: the 2020 study's direct counters first, else what Nsight Compute's
/// roofline sections use for the architecture.
pub fn byte_counters(level: MemoryLevel, arch: Option<Arch>) -> Option<Alternatives> {
    // `…_mem_lg` is Turing-to-Ada only in the sections (CC 7.5 to 8.9; `…_mem_lgds` from 9.0).
    const L1_HOPPER: &[(&[&str], f64)] = &[
        (&["l1tex__t_bytes.sum"], 1.0),
        (&["l1tex__lsu_writeback_active_mem_lgds.sum"], 128.0),
    ];
    const L1_ANY: &[(&[&str], f64)] = &[
        (&["l1tex__t_bytes.sum"], 1.0),
        (&["l1tex__lsu_writeback_active_mem_lgds.sum"], 128.0),
        (&["l1tex__lsu_writeback_active_mem_lg.sum"], 128.0),
    ];
    const L1_TURING_TO_ADA: &[(&[&str], f64)] = &[
        (&["l1tex__t_bytes.sum"], 1.0),
        (&["l1tex__lsu_writeback_active_mem_lg.sum"], 128.0),
    ];
    const L1_VOLTA: &[(&[&str], f64)] = &[
        (&["l1tex__t_bytes.sum"], 1.0),
        (&["l1tex__lsu_writeback_active.sum"], 128.0),
    ];
    const L2: &[(&[&str], f64)] = &[
        (&["lts__t_bytes.sum"], 1.0),
        (&["lts__lts2xbar_cycles_active.sum"], 32.0),
    ];
    const HBM: &[(&[&str], f64)] = &[
        (&["dram__bytes.sum"], 1.0),
        (&["dram__bytes_read.sum", "dram__bytes_write.sum"], 1.0),
    ];
    let groups = match (level, arch) {
        (MemoryLevel::L1, Some(Arch::Hopper | Arch::Blackwell)) => L1_HOPPER,
        (MemoryLevel::L1, None) => L1_ANY,
        (MemoryLevel::L1, Some(Arch::Turing | Arch::Ampere | Arch::Ada)) => L1_TURING_TO_ADA,
        (MemoryLevel::L1, Some(Arch::Volta)) => L1_VOLTA,
        (MemoryLevel::L2, _) => L2,
        (MemoryLevel::Hbm, _) => HBM,
        (MemoryLevel::Shared | MemoryLevel::HostLink, _) => return None,
    };
    Some(Alternatives { groups })
}

/// Every metric `roofline profile` asks for on an architecture (before filtering by what the
/// GPU lists): time, CUDA-core FLOPs, tensor operations, and bytes per level.
pub fn profile_metrics(arch: Arch) -> Vec<&'static str> {
    let mut m = vec![time::DURATION, time::CYCLES, time::CYCLES_PER_SECOND];
    m.extend(CUDA_CORE_FLOPS.iter().map(|c| c.metric));
    if arch == Arch::Volta {
        m.push(VOLTA_TENSOR_INST);
    } else {
        for d in Datapath::ALL {
            if let Some(a) = tensor_counters(d, Some(arch)) {
                for (group, _) in a.groups {
                    m.extend(group.iter().copied());
                }
            }
        }
    }
    for level in MemoryLevel::KERNEL_LEVELS {
        if let Some(a) = byte_counters(level, Some(arch)) {
            for (group, _) in a.groups {
                m.extend(group.iter().copied());
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    m.retain(|x| seen.insert(*x));
    m
}

/// Every metric the import reads, on any architecture; other columns and rows of a capture are
/// left alone (recent ncu versions write text-valued and unit-less metrics beside them).
pub fn used_metrics() -> std::collections::BTreeSet<&'static str> {
    let mut m: std::collections::BTreeSet<&'static str> = [
        time::DURATION,
        time::CYCLES,
        time::CYCLES_PER_SECOND,
        VOLTA_TENSOR_INST,
    ]
    .into();
    m.extend(CUDA_CORE_FLOPS.iter().map(|c| c.metric));
    let tensor = Datapath::ALL
        .into_iter()
        .filter_map(|d| tensor_counters(d, None));
    let arches = [
        None,
        Some(Arch::Volta),
        Some(Arch::Turing),
        Some(Arch::Hopper),
    ];
    let bytes = MemoryLevel::KERNEL_LEVELS
        .into_iter()
        .flat_map(|l| arches.into_iter().filter_map(move |a| byte_counters(l, a)));
    for alts in tensor.chain(bytes) {
        for (group, _) in alts.groups {
            m.extend(group.iter().copied());
        }
    }
    m
}

/// Display names of the default details page that stand for a metric we read.
pub fn metric_for_display_name(name: &str) -> Option<&'static str> {
    match name {
        "Duration" => Some(time::DURATION),
        "SM Frequency" => Some(time::CYCLES_PER_SECOND),
        _ => None,
    }
}

/// The counter's base name, as `ncu --query-metrics` lists it: `dram__bytes.sum` → `dram__bytes`.
pub fn base_name(metric: &str) -> &str {
    metric.split('.').next().unwrap_or(metric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures() {
        assert_eq!(
            Arch::from_compute_capability("7.0").unwrap(),
            (Arch::Volta, None)
        );
        assert_eq!(
            Arch::from_compute_capability("9.0").unwrap(),
            (Arch::Hopper, None)
        );
        assert_eq!(
            Arch::from_compute_capability("8.6").unwrap(),
            (Arch::Ampere, None)
        );
        let (a, note) = Arch::from_compute_capability("9.5").unwrap();
        assert_eq!(a, Arch::Hopper);
        assert!(note.unwrap().contains("nearest documented one (Hopper)"));
        assert!(Arch::from_compute_capability("sm_90").is_err());
    }

    #[test]
    fn profile_metric_sets() {
        let volta = profile_metrics(Arch::Volta);
        assert!(volta.contains(&VOLTA_TENSOR_INST));
        assert!(!volta.iter().any(|m| m.starts_with("sm__ops_path_tensor")));
        assert!(volta.contains(&"l1tex__lsu_writeback_active.sum"));
        let hopper = profile_metrics(Arch::Hopper);
        assert!(!hopper.contains(&VOLTA_TENSOR_INST));
        assert!(
            hopper.contains(&"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum")
        );
        assert!(hopper.contains(&"l1tex__lsu_writeback_active_mem_lgds.sum"));
        assert!(hopper.contains(&"gpu__time_duration.sum"));
        let unique: std::collections::HashSet<_> = hopper.iter().collect();
        assert_eq!(unique.len(), hopper.len());
        assert_eq!(
            base_name("sm__cycles_elapsed.avg.per_second"),
            "sm__cycles_elapsed"
        );
    }

    /// Each architecture's groups hold the names NVIDIA's tensor roofline section uses there
    /// (2025.3's `SpeedOfLight_HierarchicalTensorRooflineChart.section`), and an unknown
    /// architecture gets every group.
    #[test]
    fn tensor_groups_follow_the_sections_per_architecture() {
        let names = |d, arch| -> Vec<&'static str> {
            tensor_counters(d, arch)
                .map(|a| {
                    a.groups
                        .iter()
                        .flat_map(|(g, _)| g.iter().copied())
                        .collect()
                })
                .unwrap_or_default()
        };
        let has = |d, arch, m: &str| names(d, arch).contains(&m);
        // Ampere and Ada: the sparsity-split aggregates.
        for arch in [Arch::Ampere, Arch::Ada] {
            assert!(has(
                Datapath::TensorBf16,
                Some(arch),
                "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum"
            ));
            assert!(has(
                Datapath::TensorInt8,
                Some(arch),
                "sm__ops_path_tensor_src_int8_sparsity_on.sum"
            ));
        }
        // Turing's one floating-point aggregate, as FP16 work, there only.
        let turing = "sm__ops_path_tensor_src_fp16_bf16_tf32_dst_fp32.sum";
        assert!(has(Datapath::TensorFp16, Some(Arch::Turing), turing));
        assert!(!has(Datapath::TensorFp16, Some(Arch::Hopper), turing));
        // Blackwell's FP8, alone (12.x) or with FP4 and FP6 (10.x); Hopper keeps its own.
        let b = "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum";
        assert!(has(Datapath::TensorFp8, Some(Arch::Blackwell), b));
        assert!(!has(Datapath::TensorFp8, Some(Arch::Hopper), b));
        assert_eq!(
            names(Datapath::TensorFp8, Some(Arch::Hopper)),
            [
                "sm__ops_path_tensor_src_fp8_sparsity_off.sum",
                "sm__ops_path_tensor_src_fp8_sparsity_on.sum"
            ]
        );
        // No architecture: a superset of every one.
        for d in Datapath::ALL {
            for arch in [
                Arch::Turing,
                Arch::Ampere,
                Arch::Ada,
                Arch::Hopper,
                Arch::Blackwell,
            ] {
                for m in names(d, Some(arch)) {
                    assert!(has(d, None, m), "{m}");
                }
            }
        }
        // L1 on Hopper: not the Turing-to-Ada counter.
        let hopper = profile_metrics(Arch::Hopper);
        assert!(!hopper.contains(&"l1tex__lsu_writeback_active_mem_lg.sum"));
        assert!(profile_metrics(Arch::Ada).contains(&"l1tex__lsu_writeback_active_mem_lg.sum"));
    }

    #[test]
    fn the_used_set_covers_every_table_entry() {
        let used = used_metrics();
        for m in profile_metrics(Arch::Hopper)
            .into_iter()
            .chain(profile_metrics(Arch::Volta))
        {
            assert!(used.contains(m), "{m}");
        }
        assert!(used.contains("l1tex__lsu_writeback_active.sum"));
        assert!(!used.contains("launch__func_cache_config"));
    }

    #[test]
    fn weights_follow_the_conventions() {
        let hfma = CUDA_CORE_FLOPS
            .iter()
            .find(|c| c.metric.contains("_hfma_"))
            .unwrap();
        assert_eq!((hfma.weight, hfma.weight_2020), (4.0, 2.0));
        let ffma = CUDA_CORE_FLOPS
            .iter()
            .find(|c| c.metric.contains("_ffma_"))
            .unwrap();
        assert_eq!((ffma.weight, ffma.weight_2020), (2.0, 2.0));
    }
}
