//! How a measured ceiling was taken: the operands, the burst's timing, NVML's telemetry, the
//! sustained figure, a best-reach limit, the clock of a theoretical figure and the cuBLASLt GEMM
//! a reference comes from.

use super::keyed;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the kernels of a measurement computed on or moved (zeros and constants switch
/// no bits in the datapaths, and a power-limited GPU then keeps a higher clock than on real
/// data).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
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
    /// Fixed values held in registers or written by the kernel (the HBM write kernel's stores,
    /// the shared-memory kernel's slice).
    Constant,
    /// Values of the bounded chaotic map `x = x·x + c`, computed in registers step by step (the
    /// FMA chains, `kernels/fma.cu`): every step's operands differ, toggling at least 4 of 16
    /// bits per step in FP16 and BF16 (its orbits' cycles emulated in the collector's tests).
    QuadraticMap,
    /// Zeros.
    Zeros,
}

keyed::deserialize_from_keys!(Operands {
    BoundedNormal => "bounded_normal",
    RandomBits => "random_bits",
    RandomUnitFloats => "random_unit_floats",
    Constant => "constant",
    QuadraticMap => "quadratic_map",
    Zeros => "zeros",
});

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
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

keyed::deserialize_from_keys!(ClockEventReason {
    GpuIdle => "gpu_idle",
    ApplicationsClocksSetting => "applications_clocks_setting",
    SwPowerCap => "sw_power_cap",
    HwSlowdown => "hw_slowdown",
    SyncBoost => "sync_boost",
    SwThermalSlowdown => "sw_thermal_slowdown",
    HwThermalSlowdown => "hw_thermal_slowdown",
    HwPowerBrakeSlowdown => "hw_power_brake_slowdown",
    DisplayClockSetting => "display_clock_setting",
    Other => "other",
});

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

#[cfg(test)]
impl Sustained {
    /// A unit test's sustained figure: `value` over a settled 2 s window, nothing else recorded.
    pub(crate) fn settled_at(value: f64) -> Self {
        Sustained {
            value,
            window_s: 2.0,
            settle_s: 0.5,
            settled: true,
            samples: vec![],
            clock_hz: None,
            telemetry: None,
        }
    }
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// The instruction or path used is not the one that reaches the hardware's rate on this
    /// architecture (`mma.sync` where only `wgmma` reaches the peak, on sm_90).
    Instruction,
    /// The figure is well under the theoretical one at its own clock and nothing known explains
    /// it: what was reached, not what the hardware does.
    UnexplainedShortfall,
}

keyed::deserialize_from_keys!(LimitKind {
    Instruction => "instruction",
    UnexplainedShortfall => "unexplained_shortfall",
});

/// The clock a theoretical ceiling is computed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
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

keyed::deserialize_from_keys!(ClockSource {
    Measured => "measured",
    DeviceMax => "device_max",
    Datasheet => "datasheet",
});

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
    /// For a finalist (one of the best few by burst rate, timed again with the whole plan:
    /// warm-up, burst, settling, sustained window), its sustained figure, FLOP/s: the figure the
    /// kept candidate was chosen by. Optional: absent for the other candidates and in bundles
    /// written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustained: Option<f64>,
    /// Why it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
