//! Profiled or benchmarked kernels: their times, FLOPs per datapath and bytes per level (absent
//! means not measured), analytical complexity, and the PyTorch operator call that launched them.

use super::keyed;
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use super::Device;
use super::{Collective, Datapath, MemoryLevel};

/// A profiled or benchmarked kernel: one launch, or all launches of one name once aggregated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Kernel {
    /// Full demangled name.
    pub name: String,
    /// Short name for charts; derived from `name` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The [`Device::id`] it ran on; may be omitted when the bundle has one device or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Number of launches this entry covers (1 for a single launch).
    pub launches: u64,
    /// Grid dimensions (x, y, z), when all launches share them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<[u32; 3]>,
    /// Block dimensions (x, y, z), when all launches share them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<[u32; 3]>,
    /// Run time.
    pub time: KernelTime,
    /// FLOPs per datapath, summed over the launches.
    #[serde(default)]
    pub flops: Flops,
    /// Bytes moved per memory level, summed over the launches.
    #[serde(default)]
    pub bytes: Bytes,
    /// Analytical compute and bandwidth complexity (F, B), summed over the launches, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complexity: Option<Complexity>,
    /// Where the numbers came from.
    pub source: DataSource,
    /// Free tags: sweep parameter and value, algorithm, precision, tensor on/off, direction.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// The NVTX range the launches ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvtx_range: Option<String>,
    /// The PyTorch operator call that launched it (torch.profiler imports), with that call's
    /// complexity; kept through aggregation only where every launch shares it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<OperatorCall>,
    /// The collective an NCCL (or RCCL) kernel carried out (torch.profiler imports): its kind,
    /// message size, group and where its ranks sit. Optional: absent for other kernels and in
    /// bundles written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<Collective>,
}

impl Kernel {
    /// One launch of `name` that took `time_s`, on the bundle's only device, with no counters yet.
    pub fn new(name: impl Into<String>, time_s: f64, source: DataSource) -> Self {
        Kernel {
            name: name.into(),
            display_name: None,
            device: None,
            launches: 1,
            grid: None,
            block: None,
            time: KernelTime {
                total_s: time_s,
                per_launch: None,
            },
            flops: Flops::default(),
            bytes: Bytes::default(),
            complexity: None,
            source,
            tags: BTreeMap::new(),
            nvtx_range: None,
            operator: None,
            collective: None,
        }
    }

    /// Turns the operator tags of bundles written before [`Kernel::operator`] existed (`op`,
    /// `op_id`, `op_shapes`, `op_kernels`, `op_flops`, `op_bytes`, `op_datapath`) into that
    /// field, removing them. A kernel that already has the field, or lacks `op` or a readable
    /// `op_id`, keeps its tags as they are. Figures that do not parse stay unknown.
    pub fn adopt_operator_tags(&mut self) {
        if self.operator.is_some() {
            return;
        }
        let (Some(name), Some(call)) = (
            self.tags.get("op"),
            self.tags.get("op_id").and_then(|v| v.parse::<u64>().ok()),
        ) else {
            return;
        };
        let number = |key: &str| self.tags.get(key).and_then(|v| v.parse::<f64>().ok());
        let complexity = match (number("op_flops"), number("op_bytes")) {
            (Some(flops), Some(bytes)) => Some(Complexity {
                flops,
                bytes,
                datapath: self
                    .tags
                    .get("op_datapath")
                    .and_then(|k| Datapath::from_key(k)),
            }),
            _ => None,
        };
        let op = OperatorCall {
            name: name.clone(),
            call,
            kernels: self
                .tags
                .get("op_kernels")
                .and_then(|v| v.parse().ok())
                .unwrap_or(1),
            shapes: self.tags.get("op_shapes").cloned(),
            complexity,
            rule: None,
        };
        for key in LEGACY_OPERATOR_TAGS {
            self.tags.remove(key);
        }
        self.operator = Some(op);
    }
}

/// The tags that carried [`Kernel::operator`] before it was a field.
const LEGACY_OPERATOR_TAGS: [&str; 7] = [
    "op",
    "op_id",
    "op_shapes",
    "op_kernels",
    "op_flops",
    "op_bytes",
    "op_datapath",
];

/// The PyTorch operator call that launched a kernel, as a torch.profiler import links it: the
/// innermost `cpu_op` around the kernel's launch call.
///
/// One call may launch several kernels; its complexity belongs to the call, so readers count it
/// once per `(rank, call)` (as [`crate::analysis::group::group`] does), never once per kernel. A kernel
/// launched by a one-kernel call also carries the call's complexity as its own
/// [`Kernel::complexity`].
///
/// Bundles written before this field existed carried the same link as the tags `op`, `op_id`,
/// `op_shapes`, `op_kernels`, `op_flops`, `op_bytes` and `op_datapath`; reading a bundle turns
/// them into this field ([`Kernel::adopt_operator_tags`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperatorCall {
    /// The operator's name as recorded, e.g. `aten::conv2d`.
    pub name: String,
    /// The call's number within its trace (with the kernel's `rank` tag, unique in a bundle):
    /// kernels with the same number were launched by one call.
    pub call: u64,
    /// How many kernels the call launched.
    pub kernels: u64,
    /// The recorded input shapes, as the trace's text (cut to 240 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shapes: Option<String>,
    /// The call's analytical complexity (F, B, and the datapath F runs on, from the call's input
    /// type), when a rule gave it; absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complexity: Option<Complexity>,
    /// The rule family that gave the complexity (`gemm`, `conv`, `attention`, `inductor`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// A kernel's run time, seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelTime {
    /// Sum of all launches' times, seconds; must be positive.
    pub total_s: f64,
    /// Per-launch statistics, where more than the total is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_launch: Option<LaunchStats>,
}

/// Per-launch time statistics, seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchStats {
    /// Shortest launch.
    pub min_s: f64,
    /// Median launch, where the individual times were available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_s: Option<f64>,
    /// Mean launch.
    pub mean_s: f64,
    /// Longest launch.
    pub max_s: f64,
    /// Population standard deviation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stddev_s: Option<f64>,
}

/// FLOPs per datapath (absent = not measured, 0 = measured as none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)] // each field is named after its [`Datapath`]
pub struct Flops {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp64: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp16: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bf16: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_fp16: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_bf16: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_tf32: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_fp8: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_int8: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_fp64: Option<f64>,
}

impl Flops {
    /// The count on one datapath.
    pub fn get(&self, d: Datapath) -> Option<f64> {
        *self.slot(d)
    }

    /// Sets the count on one datapath.
    pub fn set(&mut self, d: Datapath, v: Option<f64>) {
        *self.slot_mut(d) = v;
    }

    fn slot(&self, d: Datapath) -> &Option<f64> {
        match d {
            Datapath::Fp64 => &self.fp64,
            Datapath::Fp32 => &self.fp32,
            Datapath::Fp16 => &self.fp16,
            Datapath::Bf16 => &self.bf16,
            Datapath::TensorFp16 => &self.tensor_fp16,
            Datapath::TensorBf16 => &self.tensor_bf16,
            Datapath::TensorTf32 => &self.tensor_tf32,
            Datapath::TensorFp8 => &self.tensor_fp8,
            Datapath::TensorInt8 => &self.tensor_int8,
            Datapath::TensorFp64 => &self.tensor_fp64,
        }
    }

    fn slot_mut(&mut self, d: Datapath) -> &mut Option<f64> {
        match d {
            Datapath::Fp64 => &mut self.fp64,
            Datapath::Fp32 => &mut self.fp32,
            Datapath::Fp16 => &mut self.fp16,
            Datapath::Bf16 => &mut self.bf16,
            Datapath::TensorFp16 => &mut self.tensor_fp16,
            Datapath::TensorBf16 => &mut self.tensor_bf16,
            Datapath::TensorTf32 => &mut self.tensor_tf32,
            Datapath::TensorFp8 => &mut self.tensor_fp8,
            Datapath::TensorInt8 => &mut self.tensor_int8,
            Datapath::TensorFp64 => &mut self.tensor_fp64,
        }
    }

    /// The datapaths with a known, positive count.
    pub fn iter(&self) -> impl Iterator<Item = (Datapath, f64)> + '_ {
        Datapath::ALL
            .into_iter()
            .filter_map(|d| self.get(d).filter(|v| *v > 0.0).map(|v| (d, v)))
    }

    /// True when no datapath has a count at all (not even zero).
    pub fn is_unknown(&self) -> bool {
        Datapath::ALL.into_iter().all(|d| self.get(d).is_none())
    }

    /// All FLOPs, CUDA cores and Tensor Cores together.
    pub fn total(&self) -> f64 {
        // Folded from +0.0: an empty `sum()` of f64 is -0.0, which would print as `-0.0`.
        self.iter().map(|(_, v)| v).fold(0.0, |a, v| a + v)
    }

    /// FLOPs on Tensor Cores only.
    pub fn tensor(&self) -> f64 {
        self.iter()
            .filter(|(d, _)| d.is_tensor())
            .map(|(_, v)| v)
            .fold(0.0, |a, v| a + v)
    }

    /// Adds another count datapath by datapath; a datapath unknown on either side becomes
    /// unknown, so that a sum never silently covers only some of its launches.
    pub fn add(&mut self, other: &Flops) {
        // Field by field: this runs once per launch when a million launches are aggregated.
        add_opt(&mut self.fp64, other.fp64);
        add_opt(&mut self.fp32, other.fp32);
        add_opt(&mut self.fp16, other.fp16);
        add_opt(&mut self.bf16, other.bf16);
        add_opt(&mut self.tensor_fp16, other.tensor_fp16);
        add_opt(&mut self.tensor_bf16, other.tensor_bf16);
        add_opt(&mut self.tensor_tf32, other.tensor_tf32);
        add_opt(&mut self.tensor_fp8, other.tensor_fp8);
        add_opt(&mut self.tensor_int8, other.tensor_int8);
        add_opt(&mut self.tensor_fp64, other.tensor_fp64);
    }
}

/// `a += b` for counts that may be unknown: the sum is known only when both are.
fn add_opt(a: &mut Option<f64>, b: Option<f64>) {
    *a = match (*a, b) {
        (Some(x), Some(y)) => Some(x + y),
        _ => None,
    };
}

/// Bytes moved at each memory level (absent = not measured).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bytes {
    /// Bytes through L1 (or the L1/shared path, per the counter definition in the bundle notes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1: Option<f64>,
    /// Bytes through L2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2: Option<f64>,
    /// Bytes to and from device memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hbm: Option<f64>,
}

impl Bytes {
    /// Bytes at one of the kernel levels (L1, L2, HBM); `None` for other levels.
    pub fn get(&self, level: MemoryLevel) -> Option<f64> {
        match level {
            MemoryLevel::L1 => self.l1,
            MemoryLevel::L2 => self.l2,
            MemoryLevel::Hbm => self.hbm,
            MemoryLevel::Shared | MemoryLevel::HostLink => None,
        }
    }

    /// The levels with a known count.
    pub fn iter(&self) -> impl Iterator<Item = (MemoryLevel, f64)> + '_ {
        MemoryLevel::KERNEL_LEVELS
            .into_iter()
            .filter_map(|l| self.get(l).map(|v| (l, v)))
    }

    /// Adds another count level by level; a level unknown on either side becomes unknown.
    pub fn add(&mut self, other: &Bytes) {
        add_opt(&mut self.l1, other.l1);
        add_opt(&mut self.l2, other.l2);
        add_opt(&mut self.hbm, other.hbm);
    }
}

/// Analytical complexity of a kernel (Wang et al. 2020): the work it must do, independent of how.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Complexity {
    /// Compute complexity F, FLOPs.
    pub flops: f64,
    /// Bandwidth complexity B, bytes: every input read once and every output written once.
    pub bytes: f64,
    /// The datapath F runs on (an operator's input type, a study's precision and Tensor Core
    /// setting), when known: the time-based roofline's compute term is F over this datapath's
    /// peak. Absent in bundles written before it existed, or where F spans several datapaths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datapath: Option<Datapath>,
}

impl Complexity {
    /// F and B with no datapath recorded.
    pub fn new(flops: f64, bytes: f64) -> Self {
        Complexity {
            flops,
            bytes,
            datapath: None,
        }
    }

    /// Adds another's F and B; the datapath stays where both agree (or the other does no
    /// FLOPs), else it becomes unknown: F on several datapaths has no single peak.
    pub fn add(&mut self, other: &Complexity) {
        let this_computes = self.flops > 0.0;
        self.flops += other.flops;
        self.bytes += other.bytes;
        if other.flops > 0.0 {
            if !this_computes {
                self.datapath = other.datapath;
            } else if self.datapath != other.datapath {
                self.datapath = None;
            }
        }
    }
}

/// Where a kernel's numbers came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DataSource {
    /// Our own benchmark suite (CUDA events, analytical complexity).
    Suite,
    /// Nsight Compute counters collected by `roofline profile`.
    NsightCompute,
    /// Imported from existing Nsight Compute output by `roofline import`.
    Import,
    /// Typed in from published figures.
    Published,
}

keyed::deserialize_from_keys!(DataSource {
    Suite => "suite",
    NsightCompute => "nsight_compute",
    Import => "import",
    Published => "published",
});

impl DataSource {
    /// The JSON name.
    pub fn key(self) -> &'static str {
        match self {
            DataSource::Suite => "suite",
            DataSource::NsightCompute => "nsight_compute",
            DataSource::Import => "import",
            DataSource::Published => "published",
        }
    }
}
