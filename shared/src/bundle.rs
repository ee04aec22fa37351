//! Bundle format v1: the portable JSON document the collector writes and the viewer reads.
//!
//! Units are SI base units throughout: FLOP (or integer operation for the int8 datapath), byte,
//! second, hertz; every rate is per second (FLOP/s, byte/s). No field is scaled by 2^30 or 10^9.
//! A bundle may hold a machine characterization only, kernels only, or both, for one or more
//! devices. `schema/bundle-v1.schema.json` is generated from these types (see [`crate::schema`]).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// One roofline bundle: provenance, devices, their measured ceilings and profiled kernels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Roofline bundle", extend("$id" = "https://roofline.invalid/schema/bundle-v1.schema.json"))]
pub struct Bundle {
    /// Format version; this build reads and writes version 1.
    pub schema_version: u32,
    /// False when a run stopped early (an error, out of memory, an interrupted phase): what was
    /// measured is kept, and `notes` says what is missing.
    pub complete: bool,
    /// Free text describing what the bundle is (for example, how a hand-built example was made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Who and what produced the bundle.
    pub provenance: Provenance,
    /// The GPUs the bundle describes; `id` is unique.
    #[serde(default)]
    pub devices: Vec<Device>,
    /// Measured ceilings, one entry per device at most.
    #[serde(default)]
    pub machines: Vec<Machine>,
    /// Kernels: one entry per launch, or per kernel name once aggregated.
    #[serde(default)]
    pub kernels: Vec<Kernel>,
    /// Measurements that were attempted but skipped, each with its reason (never silently).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    /// Human-readable remarks: why the bundle is incomplete, which metric replaced which.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Where a bundle came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Name of the producing tool (`roofline` for the collector, or `hand` for hand-built bundles).
    pub tool: String,
    /// Version of the producing tool.
    pub tool_version: String,
    /// The command line that produced the bundle, one argument per element.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command_line: Vec<String>,
    /// Host name of the machine that ran the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// When the bundle was created, RFC 3339 (UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// NVIDIA driver version, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
    /// CUDA version (driver API), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_version: Option<String>,
    /// Nsight Compute version, where counters came from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ncu_version: Option<String>,
    /// For a merged bundle, the identity of every bundle merged into it, its parts' own parts
    /// included: the SHA-256 of each part's canonical JSON (compact, as this crate writes it),
    /// in lowercase hexadecimal, sorted. `merge` refuses a bundle together with one of its own
    /// parts, which would count their launches twice. Optional: absent in unmerged bundles and
    /// in bundles written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(inner(regex(pattern = r"^[0-9a-f]{64}$")))]
    pub merged_from: Vec<String>,
}

/// A GPU the bundle describes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Device {
    /// Key that machines and kernels refer to; unique in the bundle (for example `"0"` or a UUID).
    pub id: String,
    /// Marketing name, as the driver reports it (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Compute capability as `major.minor` (`"9.0"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[0-9]+\.[0-9]+$"))]
    pub compute_capability: Option<String>,
    /// Number of streaming multiprocessors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_count: Option<u32>,
    /// Maximum SM clock, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_hz: Option<f64>,
    /// Maximum memory clock, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_clock_hz: Option<f64>,
    /// Device memory size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<f64>,
    /// Memory bus width, bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bus_width_bits: Option<u32>,
    /// L2 cache size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_bytes: Option<f64>,
    /// The board's enforced power limit while measuring, W (NVML,
    /// `nvmlDeviceGetEnforcedPowerLimit`), where NVML could be read. Optional: absent in bundles
    /// written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_limit_w: Option<f64>,
}

/// The measured (or theoretical) characterization of one device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    /// The [`Device::id`] this characterization belongs to.
    pub device: String,
    /// Bandwidth ceilings, several per level allowed (one per method or implementation).
    #[serde(default)]
    pub bandwidth: Vec<BandwidthCeiling>,
    /// Compute ceilings, several per datapath allowed (own kernel, library, theoretical).
    #[serde(default)]
    pub compute: Vec<ComputeCeiling>,
    /// Kernel launch overhead: the `t_launch` of the time-based roofline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_overhead: Option<LaunchOverhead>,
    /// The raw ERT-style sweep: working set × FLOPs per element, as measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sweep: Vec<SweepPoint>,
    /// How the sweep's points were timed. Optional: absent in bundles written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_timing: Option<SweepTiming>,
    /// Which figure of an empirical ceiling the charts and bounds use where a ceiling has both a
    /// burst `value` and a `sustained` one. Absent means `sustained` (the default): the rate the
    /// GPU holds after its clock settled, which is what a kernel running for more than a moment
    /// meets. Ceilings without a sustained figure are read at their `value` either way; see
    /// `roofline_model::ceilings` for the whole rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_figure: Option<ChartFigure>,
}

/// The figure of a ceiling the charts use ([`Machine::chart_figure`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChartFigure {
    /// The sustained figure where a ceiling has one (the default).
    Sustained,
    /// The burst figure (`value`) everywhere.
    Burst,
}

/// How the ERT-style sweep's points were timed: each point after one untimed lead launch, as
/// intervals of back-to-back launches between two CUDA events (so that no host launch latency
/// falls inside an interval), the point's time the median interval over its launches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepTiming {
    /// The shortest interval planned, seconds: launches per interval = ⌈this / one launch's
    /// time⌉, within 1 and the plan's maximum.
    pub interval_min_s: f64,
    /// Intervals timed per point.
    pub intervals_per_point: u32,
    /// The fewest launches per interval of any point.
    pub launches_per_interval_min: u32,
    /// The most launches per interval of any point.
    pub launches_per_interval_max: u32,
}

/// What the kernels of a measurement computed on or moved (issue 33: zeros and constants switch
/// no bits in the datapaths, and a power-limited GPU then keeps a higher clock than on real
/// data).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operands {
    /// Approximately normal values (four uniforms summed, centred, unit variance), scaled by 0.5
    /// and so bounded by ±1.73: no FP16 or FP8 value overflows, nor any product sum of up to
    /// 21,834 terms in FP16. Written on the GPU once per run from a per-run seed.
    BoundedNormal,
    /// Raw random 32-bit words (the bandwidth kernels' buffers; INT8 operands, any byte).
    RandomBits,
    /// Random FP32 mantissas with a fixed exponent: values in [1, 2), normal FP64 values when
    /// read in pairs (the ERT-style sweep's buffer).
    RandomUnitFloats,
    /// Fixed values held in registers (the FMA chains, `x = x·b + c`).
    Constant,
    /// Zeros.
    Zeros,
}

/// How a ceiling's burst figure was timed: after its own warm-up, intervals of back-to-back
/// launches between two CUDA events, behind one untimed lead launch, so that no host launch
/// latency falls inside an interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimingInfo {
    /// Warm-up at this very kernel right before the burst, seconds of GPU time.
    pub warmup_s: f64,
    /// One launch's time at the end of the warm-up, seconds (launches back to back): what the
    /// launches per interval were planned from.
    pub launch_s: f64,
    /// Launches enqueued back to back between the two events of one interval.
    pub launches_per_interval: u32,
    /// The median interval, seconds.
    pub interval_s: f64,
    /// Intervals timed: the burst figure is the median of their rates (`samples`).
    pub intervals: u32,
}

/// The board's state over a measurement window, sampled through NVML by a thread of the
/// collector (every 20 ms). Every figure is optional: a driver may not support it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Telemetry {
    /// Samples taken in the window.
    pub samples: u32,
    /// The window's length, seconds (host wall time).
    pub window_s: f64,
    /// The SM clock, Hz (`nvmlDeviceGetClockInfo`, `NVML_CLOCK_SM`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_hz: Option<Spread>,
    /// The board's power draw, W (`nvmlDeviceGetPowerUsage`; on Ampere and later GPUs other
    /// than GA100 an average over one second, nvml.h).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<Spread>,
    /// The mean power over the window from the energy counter
    /// (`nvmlDeviceGetTotalEnergyConsumption`, Volta and later), W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_power_w: Option<f64>,
    /// The highest GPU temperature seen, °C (`nvmlDeviceGetTemperature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c_max: Option<f64>,
    /// Every clock-event ("throttle") reason active in some sample, with the fraction of the
    /// samples it was active in (`nvmlDeviceGetCurrentClocksEventReasons`, or the older
    /// `…ThrottleReasons`); empty when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock_event_reasons: Vec<ClockEventShare>,
}

/// The smallest, median and largest of a set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spread {
    /// The smallest sample.
    pub min: f64,
    /// The median sample.
    pub median: f64,
    /// The largest sample.
    pub max: f64,
}

/// One clock-event reason and how often it was active.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockEventShare {
    /// The reason.
    pub reason: ClockEventReason,
    /// The fraction of the window's samples it was active in, 0 to 1.
    pub fraction: f64,
}

/// Why the SM clock was below its maximum (NVML's `nvmlClocksEventReason*` bits, nvml.h).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ClockEventReason {
    /// Nothing running, clocks dropping to idle (0x1).
    GpuIdle,
    /// Application clocks set (0x2).
    ApplicationsClocksSetting,
    /// The software power cap: clocks lowered to stay under the power limit (0x4).
    SwPowerCap,
    /// Hardware slowdown: temperature, external power brake or power protection (0x8).
    HwSlowdown,
    /// A sync-boost group (0x10).
    SyncBoost,
    /// Software thermal slowdown (0x20).
    SwThermalSlowdown,
    /// Hardware thermal slowdown (0x40).
    HwThermalSlowdown,
    /// External power-brake assertion (0x80).
    HwPowerBrakeSlowdown,
    /// Limited by display clocks (0x100).
    DisplayClockSetting,
    /// A bit NVML has not documented to us.
    Other,
}

impl ClockEventReason {
    /// Every reason with its NVML bit (`Other` has none).
    pub const BITS: [(ClockEventReason, u64); 9] = [
        (ClockEventReason::GpuIdle, 0x1),
        (ClockEventReason::ApplicationsClocksSetting, 0x2),
        (ClockEventReason::SwPowerCap, 0x4),
        (ClockEventReason::HwSlowdown, 0x8),
        (ClockEventReason::SyncBoost, 0x10),
        (ClockEventReason::SwThermalSlowdown, 0x20),
        (ClockEventReason::HwThermalSlowdown, 0x40),
        (ClockEventReason::HwPowerBrakeSlowdown, 0x80),
        (ClockEventReason::DisplayClockSetting, 0x100),
    ];

    /// Whether it lowers the clock under load (every reason but idle and the display's).
    pub fn throttles(self) -> bool {
        !matches!(
            self,
            ClockEventReason::GpuIdle | ClockEventReason::DisplayClockSetting
        )
    }

    /// The JSON name (`sw_power_cap`).
    pub fn key(self) -> &'static str {
        match self {
            ClockEventReason::GpuIdle => "gpu_idle",
            ClockEventReason::ApplicationsClocksSetting => "applications_clocks_setting",
            ClockEventReason::SwPowerCap => "sw_power_cap",
            ClockEventReason::HwSlowdown => "hw_slowdown",
            ClockEventReason::SyncBoost => "sync_boost",
            ClockEventReason::SwThermalSlowdown => "sw_thermal_slowdown",
            ClockEventReason::HwThermalSlowdown => "hw_thermal_slowdown",
            ClockEventReason::HwPowerBrakeSlowdown => "hw_power_brake_slowdown",
            ClockEventReason::DisplayClockSetting => "display_clock_setting",
            ClockEventReason::Other => "other",
        }
    }
}

/// The figure a ceiling's kernel holds once the clock has settled, beside its burst `value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sustained {
    /// The rate over the window, byte/s or FLOP/s: the window's work over its time (whole
    /// intervals of back-to-back launches).
    pub value: f64,
    /// The window, seconds of GPU time (about 2 s; 1 s with `--quick`).
    pub window_s: f64,
    /// Seconds streamed after the burst and before the window, waiting for the rate to settle.
    pub settle_s: f64,
    /// Whether the rate settled (two consecutive 250 ms steps each within 1% of the one before)
    /// before the settling limit; false means the window began at the limit.
    pub settled: bool,
    /// The window's intervals' rates, byte/s or FLOP/s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
    /// The SM clock over the window from our kernels' own stamps, Hz (library kernels have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_hz: Option<f64>,
    /// NVML over the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<Telemetry>,
}

/// Why a ceiling is the best this toolkit reached rather than the hardware's: the chart marks it
/// "best reach".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    /// What limits it.
    pub kind: LimitKind,
    /// Why, in words, with the figures behind it.
    pub reason: String,
}

/// The kind of a [`Limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// The instruction or path used is not the one that reaches the hardware's rate on this
    /// architecture (`mma.sync` where only `wgmma` reaches the peak, on sm_90).
    Instruction,
    /// The figure is well under the theoretical one at its own clock and nothing known explains
    /// it: what was reached, not what the hardware does.
    UnexplainedShortfall,
}

/// The clock a theoretical ceiling is computed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// The clock our own kernel observed while measuring this datapath or level.
    Measured,
    /// The device's reported maximum clock (the SM clock for compute, the memory clock for HBM).
    DeviceMax,
    /// The clock NVIDIA's datasheet quotes its figures at (1830 MHz for H100 SXM and H200 Tensor
    /// Core figures), or the datasheet's figure itself.
    Datasheet,
}

/// The cuBLASLt GEMM a reference ceiling comes from: the best of the shapes and algorithms
/// tried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GemmChoice {
    /// Rows of A and D (cuBLAS's column-major `m`).
    pub m: u64,
    /// Columns of B and D.
    pub n: u64,
    /// The reduction depth.
    pub k: u64,
    /// The algorithm kept.
    pub algorithm: GemmAlgorithm,
    /// Shapes tried.
    pub shapes_tried: u32,
    /// (Shape, algorithm) pairs timed.
    pub algorithms_tried: u32,
    /// Every candidate: shape, algorithm and its burst rate or why it did not run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<GemmCandidate>,
}

/// One cuBLASLt algorithm as `cublasLtMatmulAlgoConfigGetAttribute` describes it, with its rank
/// in the heuristic's answer. A field the library would not say is absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GemmAlgorithm {
    /// Its place in `cublasLtMatmulAlgoGetHeuristic`'s answer, from 0.
    pub heuristic_rank: u32,
    /// `CUBLASLT_ALGO_CONFIG_ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    /// `CUBLASLT_ALGO_CONFIG_TILE_ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tile: Option<i64>,
    /// `CUBLASLT_ALGO_CONFIG_STAGES_ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<i64>,
    /// `CUBLASLT_ALGO_CONFIG_SPLITK_NUM`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_k: Option<i64>,
    /// `CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction_scheme: Option<i64>,
    /// `CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swizzle: Option<i64>,
    /// `CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_option: Option<i64>,
    /// `CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inner_shape: Option<i64>,
    /// `CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_shape: Option<i64>,
    /// The workspace it asked for, bytes (the heuristic's `workspaceSize`).
    pub workspace_bytes: u64,
    /// The heuristic's `wavesCount`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waves: Option<f64>,
}

/// One (shape, algorithm) pair of a reference GEMM's search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GemmCandidate {
    /// `m`.
    pub m: u64,
    /// `n`.
    pub n: u64,
    /// `k`.
    pub k: u64,
    /// The algorithm's rank in the heuristic's answer, from 0.
    pub heuristic_rank: u32,
    /// Its burst rate, FLOP/s, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Why it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A level of the memory hierarchy.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
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
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
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

/// How a ceiling was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Measured by running a kernel and timing it.
    Empirical,
    /// Computed from device attributes (units × operations per clock × clock).
    Theoretical,
}

/// A bandwidth ceiling at one memory level, in byte/s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BandwidthCeiling {
    /// The memory level.
    pub level: MemoryLevel,
    /// Bandwidth, byte/s: for a measured ceiling the burst figure, the median of its repeats
    /// (see `sustained` for the figure after the clock settled).
    pub value: f64,
    /// Empirical or theoretical.
    pub method: Method,
    /// What produced it (`read-only 16-byte loads`, `device-to-device copy`, `ERT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// The SM clock observed while measuring (or assumed, for theoretical figures), Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_hz: Option<f64>,
    /// Raw repeat measurements, byte/s; `value` is derived from them (median unless stated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
    /// A same-run reference our own kernels are judged against (the driver's device-to-device
    /// copy for HBM). Still a measured ceiling: plots use the highest empirical figure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reference: bool,
    /// The data the kernel moved. Optional, as every field below: absent in bundles written
    /// before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operands: Option<Operands>,
    /// How `value` was timed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<TimingInfo>,
    /// NVML while `value` was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<Telemetry>,
    /// The figure after the clock settled, beside the burst `value`; the charts use it by
    /// default ([`Machine::chart_figure`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustained: Option<Sustained>,
    /// For a theoretical ceiling, which clock it is computed at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_source: Option<ClockSource>,
}

/// A compute ceiling on one datapath, in FLOP/s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComputeCeiling {
    /// The datapath and precision.
    pub datapath: Datapath,
    /// Throughput, FLOP/s (integer operations per second for int8): for a measured ceiling the
    /// burst figure, the median of its repeats (see `sustained` for the figure after the clock
    /// settled).
    pub value: f64,
    /// Empirical or theoretical.
    pub method: Method,
    /// What produced it (`own mma.sync kernel`, `cuBLASLt GEMM 8192³`, `FMA chains`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// The SM clock observed while measuring (or assumed, for theoretical figures), Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_hz: Option<f64>,
    /// Raw repeat measurements, FLOP/s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
    /// A same-run reference our own kernels are judged against (the best cuBLASLt GEMM for a
    /// Tensor Core datapath). Still a measured ceiling: plots use the highest empirical figure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reference: bool,
    /// The data the kernel computed on. Optional, as every field below: absent in bundles
    /// written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operands: Option<Operands>,
    /// How `value` was timed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<TimingInfo>,
    /// NVML while `value` was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<Telemetry>,
    /// The figure after the clock settled, beside the burst `value`; the charts use it by
    /// default ([`Machine::chart_figure`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustained: Option<Sustained>,
    /// Present when the figure is the best this toolkit reached rather than the hardware's
    /// (INT8 Tensor Cores on sm_90, which only `wgmma` drives at full rate; a figure far under
    /// the theoretical one at its clock): the chart labels the ceiling "best reach".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// A reference measured with fewer shapes or algorithms than a full run tries (`--quick`,
    /// or fewer than three shapes): indicative, likely under what the library reaches.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub indicative: bool,
    /// For a theoretical ceiling, which clock it is computed at (the datasheet's and the
    /// measured one are both written, each labelled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_source: Option<ClockSource>,
    /// For a cuBLASLt reference, the GEMM kept: shape, algorithm, and what was tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gemm: Option<GemmChoice>,
}

/// Kernel launch overhead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchOverhead {
    /// Launch-to-completion latency of an empty kernel, seconds: the time-based roofline's `t_launch`.
    pub value_s: f64,
    /// Empirical or theoretical (an assumed figure from the literature is theoretical).
    pub method: Method,
    /// Time per launch when empty kernels are launched back to back, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub back_to_back_s: Option<f64>,
    /// Time per kernel launched from a CUDA graph, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_s: Option<f64>,
    /// Raw repeat measurements of `value_s`, seconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
    /// Where the figure comes from, when not measured in this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
}

/// One point of the ERT-style sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepPoint {
    /// The datapath the FMA chains ran on.
    pub datapath: Datapath,
    /// Working set, bytes.
    pub working_set_bytes: f64,
    /// FLOPs per element loaded.
    pub flops_per_element: f64,
    /// Total FLOPs executed.
    pub flops: f64,
    /// Total bytes moved.
    pub bytes: f64,
    /// Median time, seconds.
    pub time_s: f64,
}

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
}

/// The PyTorch operator call that launched a kernel, as a torch.profiler import links it: the
/// innermost `cpu_op` around the kernel's launch call.
///
/// One call may launch several kernels; its complexity belongs to the call, so readers count it
/// once per `(rank, call)` (as [`crate::group::group`] does), never once per kernel. A kernel
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
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

/// Something a run meant to measure but skipped, with the reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Skipped {
    /// What was skipped (`tensor_fp8 peak`, `conv2d stride=3 algo=FFT`).
    pub what: String,
    /// Why.
    pub reason: String,
}

impl Device {
    /// A device with an id and a name, every other attribute unknown.
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        Device {
            id: id.into(),
            name: name.into(),
            compute_capability: None,
            sm_count: None,
            sm_clock_hz: None,
            memory_clock_hz: None,
            memory_bytes: None,
            memory_bus_width_bits: None,
            l2_bytes: None,
            power_limit_w: None,
        }
    }
}

impl BandwidthCeiling {
    /// A ceiling with a value and a method, nothing else recorded.
    pub fn new(level: MemoryLevel, value: f64, method: Method) -> Self {
        BandwidthCeiling {
            level,
            value,
            method,
            implementation: None,
            clock_hz: None,
            samples: Vec::new(),
            reference: false,
            operands: None,
            timing: None,
            telemetry: None,
            sustained: None,
            clock_source: None,
        }
    }

    /// The sustained figure, when one was measured.
    pub fn sustained_value(&self) -> Option<f64> {
        self.sustained.as_ref().map(|s| s.value)
    }
}

impl ComputeCeiling {
    /// A ceiling with a value and a method, nothing else recorded.
    pub fn new(datapath: Datapath, value: f64, method: Method) -> Self {
        ComputeCeiling {
            datapath,
            value,
            method,
            implementation: None,
            clock_hz: None,
            samples: Vec::new(),
            reference: false,
            operands: None,
            timing: None,
            telemetry: None,
            sustained: None,
            limit: None,
            indicative: false,
            clock_source: None,
            gemm: None,
        }
    }

    /// The sustained figure, when one was measured.
    pub fn sustained_value(&self) -> Option<f64> {
        self.sustained.as_ref().map(|s| s.value)
    }
}

impl LaunchOverhead {
    /// A launch overhead with its value and method, nothing else recorded.
    pub fn new(value_s: f64, method: Method) -> Self {
        LaunchOverhead {
            value_s,
            method,
            back_to_back_s: None,
            graph_s: None,
            samples: Vec::new(),
            implementation: None,
        }
    }
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

impl Bundle {
    /// An empty, complete bundle with the given provenance.
    pub fn new(provenance: Provenance) -> Self {
        Bundle {
            schema_version: SCHEMA_VERSION,
            complete: true,
            description: None,
            provenance,
            devices: Vec::new(),
            machines: Vec::new(),
            kernels: Vec::new(),
            skipped: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The machine characterization measured on a device id.
    pub fn machine_for(&self, device: &str) -> Option<&Machine> {
        self.machines.iter().find(|m| m.device == device)
    }

    /// The machine characterization that bounds a device's kernels, the one rule every chart,
    /// table and report uses: the machine measured on that device id (`None`: the bundle's first
    /// device). There is no fallback to another device's machine: a device without its own
    /// characterization has no ceilings (a machine measured elsewhere is lent explicitly, as the
    /// viewer's "Ceilings from" and `import --machine` do).
    pub fn machine_of(&self, device: Option<&str>) -> Option<&Machine> {
        let device = device.or_else(|| self.devices.first().map(|d| d.id.as_str()))?;
        self.machine_for(device)
    }

    /// The device a kernel ran on: its own `device`, or the only device of the bundle.
    pub fn device_of<'a>(&'a self, kernel: &'a Kernel) -> Option<&'a str> {
        match &kernel.device {
            Some(d) => Some(d.as_str()),
            None if self.devices.len() == 1 => Some(self.devices[0].id.as_str()),
            None => None,
        }
    }
}
