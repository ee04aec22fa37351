//! A device's measured (or theoretical) characterization: its bandwidth and compute ceilings,
//! launch overhead and ERT-style sweep, and which figure of a ceiling the charts use.

use super::keyed;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use super::Device;
use super::{
    ClockSource, Datapath, GemmChoice, Limit, LinkCeiling, MemoryLevel, Operands, Sustained,
    Telemetry, TimingInfo,
};

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
    /// `roofline_model::analysis::ceilings` for the whole rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_figure: Option<ChartFigure>,
    /// Where the ceilings come from: measured on the GPU (`roofline machine`) or a datasheet's
    /// figures from the GPU catalogue, which entry and how it was chosen. Optional: absent in
    /// bundles written before it existed (their ceilings' `method` says what they are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<MachineOrigin>,
    /// The links the device's collectives run on (NVLink, PCIe, the network), byte/s in one
    /// direction. Optional: absent in bundles written before it existed, and where no source
    /// gives a figure (`roofline machine` measures the PCIe host link, and NVLink to a second GPU
    /// joined to this one by it; the network, and NVLink where it is not measured, come from the
    /// GPU catalogue).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkCeiling>,
}

/// Where a machine's ceilings come from ([`Machine::origin`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MachineOrigin {
    /// Measured, or a datasheet's.
    pub kind: OriginKind,
    /// The product the figures are for (`NVIDIA H100 SXM5 80GB`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    /// The GPU catalogue's entry (`nvidia-h100-sxm5`), for datasheet figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalogue_id: Option<String>,
    /// How the entry was chosen, in words (the device fields that matched it, or the option
    /// that named it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<String>,
}

/// The kind of a machine's origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OriginKind {
    /// Measured on the GPU itself.
    Measured,
    /// A datasheet's figures (the GPU catalogue), not measured.
    Datasheet,
}

keyed::deserialize_from_keys!(OriginKind {
    Measured => "measured",
    Datasheet => "datasheet",
});

/// Where a figure that this toolkit did not measure comes from: a datasheet, a figure derived
/// from datasheet figures, or an estimate read off the input itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FigureSource {
    /// What kind of source.
    pub kind: SourceKind,
    /// The source, cited: the document and where in it (or the formula and its inputs, or how
    /// the input gave the estimate).
    pub citation: String,
}

/// The kind of a [`FigureSource`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// Printed in the vendor's datasheet or whitepaper.
    Datasheet,
    /// Computed from printed figures by a stated formula (bytes per clock per SM × SMs × clock).
    Derived,
    /// Estimated from the imported input itself (a trace's launch calls).
    Estimated,
}

keyed::deserialize_from_keys!(SourceKind {
    Datasheet => "datasheet",
    Derived => "derived",
    Estimated => "estimated",
});

impl SourceKind {
    /// The word in tables and labels: `datasheet`, `derived`, `estimated`.
    pub fn key(self) -> &'static str {
        match self {
            SourceKind::Datasheet => "datasheet",
            SourceKind::Derived => "derived",
            SourceKind::Estimated => "estimated",
        }
    }
}

/// The figure of a ceiling the charts use ([`Machine::chart_figure`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChartFigure {
    /// The sustained figure where a ceiling has one (the default).
    #[default]
    Sustained,
    /// The burst figure (`value`) everywhere.
    Burst,
}

keyed::deserialize_from_keys!(ChartFigure {
    Sustained => "sustained",
    Burst => "burst",
});

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

/// How a ceiling was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Measured by running a kernel and timing it.
    Empirical,
    /// Computed from device attributes (units × operations per clock × clock).
    Theoretical,
}

keyed::deserialize_from_keys!(Method {
    Empirical => "empirical",
    Theoretical => "theoretical",
});

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
    /// For a figure not measured here, its cited source (a datasheet's, or derived from one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<FigureSource>,
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
            source: None,
        }
    }

    /// The sustained figure, when one was measured.
    pub fn sustained_value(&self) -> Option<f64> {
        self.sustained.as_ref().map(|s| s.value)
    }
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
    /// For a figure not measured here, its cited source (a datasheet's, or derived from one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<FigureSource>,
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
            source: None,
        }
    }

    /// The sustained figure, when one was measured.
    pub fn sustained_value(&self) -> Option<f64> {
        self.sustained.as_ref().map(|s| s.value)
    }
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
    /// For a figure not measured by `roofline machine`, its source (an estimate from a trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<FigureSource>,
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
            source: None,
        }
    }
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
