//! Bundle format v1: the portable JSON document the collector writes and the viewer reads.
//!
//! Units are SI base units throughout: FLOP (or integer operation for the int8 datapath), byte,
//! second, hertz; every rate is per second (FLOP/s, byte/s). No field is scaled by 2^30 or 10^9.
//! A bundle may hold a machine characterization only, kernels only, or both, for one or more
//! devices. `schema/bundle-v1.schema.json` is generated from these types (see [`crate::bundle::schema`]).
//!
//! This file holds the document itself (its provenance, devices and skipped measurements);
//! `hardware.rs` the memory levels and datapaths everything is keyed by, `machine.rs` the
//! measured ceilings, `measurement.rs` how a ceiling was measured, `kernel.rs` the profiled
//! kernels and `collective.rs` what a collective's kernel carried and the links it runs on. Every type is re-exported here: `roofline_model::bundle::Kernel` is the one path.
//!
//! The floor's other modules: [`read`] (parsing and validation), [`stream`] and [`window`]
//! (kernel by kernel), [`schema`], [`merge`], and [`options`] (an import's options, the one
//! type every front end reads them into).
//!
//! Architecture invariant: this floor uses nothing of the crate's analysis or chart floors.

mod collective;
mod hardware;
mod kernel;
mod keyed;
mod machine;
mod measurement;

pub mod columns;
pub mod merge;
pub mod options;
pub mod read;
pub mod schema;
pub mod stream;
pub mod window;

pub use collective::{Collective, CollectiveKind, GroupSizeSource, LinkCeiling, LinkKind, Scope};
pub use hardware::{Datapath, MemoryLevel};
pub use kernel::{
    Bytes, Complexity, DataSource, Flops, Kernel, KernelTime, LaunchStats, OperatorCall,
};
pub use machine::{
    BandwidthCeiling, ChartFigure, ComputeCeiling, FigureSource, LaunchOverhead, Machine,
    MachineOrigin, Method, OriginKind, SourceKind, SweepPoint, SweepTiming,
};
pub use measurement::{
    ClockEventReason, ClockEventShare, ClockSource, GemmAlgorithm, GemmCandidate, GemmChoice,
    Limit, LimitKind, Operands, Spread, Sustained, Telemetry, TimingInfo,
};

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
    /// The columns file written beside this bundle, the same bundle in binary for fast opening
    /// (see [`columns`]); absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<ColumnsRef>,
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

impl Bundle {
    /// An empty, complete bundle with the given provenance.
    pub fn new(provenance: Provenance) -> Self {
        Bundle {
            schema_version: SCHEMA_VERSION,
            complete: true,
            columns: None,
            description: None,
            provenance,
            devices: Vec::new(),
            machines: Vec::new(),
            kernels: Vec::new(),
            skipped: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// A copy of everything but the kernels (which may be many).
    pub fn shell(&self) -> Bundle {
        Bundle {
            schema_version: self.schema_version,
            complete: self.complete,
            columns: self.columns.clone(),
            description: self.description.clone(),
            provenance: self.provenance.clone(),
            devices: self.devices.clone(),
            machines: self.machines.clone(),
            kernels: Vec::new(),
            skipped: self.skipped.clone(),
            notes: self.notes.clone(),
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

/// The columns file a bundle names (the same bundle in binary, see `bundle::columns`): written
/// beside it, with the same id. A reader that has both reads the columns file and checks the id;
/// one that has only the JSON reads the JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ColumnsRef {
    /// The columns file's name, in the bundle's own directory.
    pub file: String,
    /// What the columns file's header holds when it was written with this bundle; another id
    /// means the two were written apart, and the JSON is read.
    pub id: String,
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
    /// For a merged bundle, the identities of every bundle merged into it, its parts' own parts
    /// included: the SHA-256 of each part's canonical JSON (compact, as this crate writes it)
    /// and, for a part with kernels, that of its run (its kernels' names, launches and times,
    /// whatever it was imported into), in lowercase hexadecimal, sorted. `merge` refuses a
    /// bundle together with one of its own parts, or a run imported again, which would count
    /// their launches twice. Optional: absent in unmerged bundles and in bundles written before
    /// it existed.
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

/// Something a run meant to measure but skipped, with the reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Skipped {
    /// What was skipped (`tensor_fp8 peak`, `conv2d stride=3 algo=FFT`).
    pub what: String,
    /// Why.
    pub reason: String,
}
