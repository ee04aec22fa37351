//! The catalogue's records: its sources, one entry per GPU with its figures and links, and the
//! multi-GPU systems. The types mirror `catalogue/gpus.json` field for field (unknown fields are
//! refused), so the file stays the one place a figure is written.

use std::collections::BTreeMap;

use roofline_model::bundle::{Datapath, MemoryLevel};
use serde::{Deserialize, Serialize};

/// A document a figure is taken from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Stable key that figures refer to (`nvidia-a100-wp`).
    pub id: String,
    /// The document's title.
    pub title: String,
    /// Who published it (`NVIDIA`, `AMD`).
    pub publisher: String,
    /// The year of the edition used.
    pub year: u32,
    /// Where the document is published, when it has an address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Which table, page or section the figures are in.
    #[serde(rename = "where")]
    pub location: String,
    /// How the figures were read for this catalogue (the document itself, or a stored copy that
    /// reproduces it), so a reviewer knows what to re-check.
    pub consulted: String,
}

/// Where a figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Printed in the source.
    Datasheet,
    /// Computed from printed figures; the figure carries its formula.
    Derived,
    /// What a driver or trace reported for a real device. Identity fields only (SM count,
    /// memory size, clock, cache size); never a ceiling.
    Recorded,
}

impl Kind {
    /// The JSON name (`datasheet`).
    pub fn key(self) -> &'static str {
        match self {
            Kind::Datasheet => "datasheet",
            Kind::Derived => "derived",
            Kind::Recorded => "recorded",
        }
    }
}

/// One sourced number. Its unit is in the name of the field that holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    /// The value, in the unit the field's name states (FLOP/s, byte/s, Hz, bytes, count).
    pub value: f64,
    /// Printed, derived or recorded.
    pub kind: Kind,
    /// The id of the source in the catalogue's `sources`.
    pub source: String,
    /// The figure as the source prints it, for review (`312 TFLOPS | 624 TFLOPS*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed: Option<String>,
    /// How a derived figure is computed from printed ones; present exactly when `kind` is
    /// `derived`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula: Option<String>,
    /// The clock this figure assumes, Hz, where the source says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_hz: Option<f64>,
    /// A remark on this figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The GPU maker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Vendor {
    /// NVIDIA.
    #[serde(rename = "NVIDIA")]
    Nvidia,
    /// AMD.
    #[serde(rename = "AMD")]
    Amd,
}

/// Which way a link's bandwidth is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Both directions added together (NVIDIA's NVLink and PCIe figures).
    Bidirectional,
    /// One direction.
    PerDirection,
    /// The source does not say.
    Unstated,
}

/// What a link's figure is counted for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkScope {
    /// The device the entry describes.
    #[default]
    Device,
    /// The whole package (both GCDs of an MI250X OAM, for example).
    Package,
}

/// One kind of link of a GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// Generation or kind (`NVLink 4`, `4.0` for PCIe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
    /// PCIe lanes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lanes: Option<u32>,
    /// Number of links of this kind (NVLink or Infinity Fabric links).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Total bandwidth over all `count` links, byte/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_s: Option<Figure>,
    /// How `bytes_per_s` is counted; required when it is present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// What `bytes_per_s` is counted for; the device when absent.
    #[serde(default)]
    pub scope: LinkScope,
    /// The source of the generation, lanes and count.
    pub source: String,
    /// A remark on this link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A GPU's links, by kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Links {
    /// NVLink to other GPUs (through NVSwitch or a bridge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink: Option<Link>,
    /// NVLink-C2C to the Grace CPU of a superchip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink_c2c: Option<Link>,
    /// PCI Express to the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie: Option<Link>,
    /// AMD Infinity Fabric to other GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infinity_fabric: Option<Link>,
    /// AMD Infinity Fabric between the dies of one package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infinity_fabric_in_package: Option<Link>,
}

impl Links {
    /// Every link present, with its JSON name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Link)> {
        [
            ("nvlink", &self.nvlink),
            ("nvlink_c2c", &self.nvlink_c2c),
            ("pcie", &self.pcie),
            ("infinity_fabric", &self.infinity_fabric),
            (
                "infinity_fabric_in_package",
                &self.infinity_fabric_in_package,
            ),
        ]
        .into_iter()
        .filter_map(|(k, l)| l.as_ref().map(|l| (k, l)))
    }
}

/// One GPU (or, for `per_gcd` entries, one die of a two-die package): how to recognise it and
/// its datasheet ceilings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuEntry {
    /// Stable key (`nvidia-a100-sxm4-80gb`).
    pub id: String,
    /// The maker.
    pub vendor: Vendor,
    /// Display name (`NVIDIA A100 SXM4 80GB`).
    pub product: String,
    /// Architecture and die (`Ampere GA100`).
    pub architecture: String,
    /// Compute capability as `major.minor`: NVIDIA's, or for AMD the pair PyTorch/HIP report
    /// (`computeMajor`/`computeMinor`, the gfx target's GFXIP version). Absent when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<String>,
    /// AMD's LLVM target (`gfx90a`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gfx: Option<String>,
    /// True when the entry describes one GCD of a two-GCD package (each GCD is one device).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_gcd: bool,
    /// The names drivers and traces report (`nvidia-smi`, `torch.cuda.get_device_name`).
    pub names: Vec<String>,
    /// Sources of the names, compute capability and gfx target.
    pub identity_sources: Vec<String>,
    /// Streaming multiprocessors (NVIDIA) or compute units (AMD) per device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_count: Option<Figure>,
    /// Device memory, bytes (the marketed "n GB" read as n × 2^30).
    pub memory_bytes: Figure,
    /// Memory technology (`HBM3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_type: Option<String>,
    /// L2 cache, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_bytes: Option<Figure>,
    /// A last-level cache beyond the L2 (AMD Infinity Cache), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_level_cache_bytes: Option<Figure>,
    /// The boost clock the peaks assume, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boost_clock_hz: Option<Figure>,
    /// The clock the Tensor Core figures assume where the vendor states a different one
    /// (H100: 1830 MHz against a 1980 MHz boost), Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_clock_hz: Option<Figure>,
    /// Device-memory bandwidth, byte/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_bytes_per_s: Option<Figure>,
    /// Dense peak per datapath, FLOP/s (integer operations/s for INT8). A datapath the GPU
    /// lacks, or whose figure could not be sourced, is absent.
    #[serde(default)]
    pub peaks_flop_per_s: BTreeMap<Datapath, Figure>,
    /// L1 (shared memory) bandwidth, byte/s; only derived from a whitepaper's bytes per clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1_bytes_per_s: Option<Figure>,
    /// L2 bandwidth, byte/s; only derived from a whitepaper's bytes per clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_bytes_per_s: Option<Figure>,
    /// Links to other GPUs and to the host.
    #[serde(default)]
    pub links: Links,
    /// Remarks: what was left empty and why, disagreements, how figures were derived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl GpuEntry {
    /// The dense peak of a datapath.
    pub fn peak(&self, datapath: Datapath) -> Option<&Figure> {
        self.peaks_flop_per_s.get(&datapath)
    }

    /// Every peak present, in [`Datapath::ALL`] order.
    pub fn peaks(&self) -> impl Iterator<Item = (Datapath, &Figure)> {
        self.peaks_flop_per_s.iter().map(|(d, f)| (*d, f))
    }

    /// Device-memory bandwidth.
    pub fn dram(&self) -> Option<&Figure> {
        self.dram_bytes_per_s.as_ref()
    }

    /// L1 bandwidth.
    pub fn l1(&self) -> Option<&Figure> {
        self.l1_bytes_per_s.as_ref()
    }

    /// L2 bandwidth.
    pub fn l2(&self) -> Option<&Figure> {
        self.l2_bytes_per_s.as_ref()
    }

    /// The bandwidth of a memory level: L1, L2 or device memory (`Hbm`); `None` for the others
    /// and for what the catalogue lacks.
    pub fn bandwidth(&self, level: MemoryLevel) -> Option<&Figure> {
        match level {
            MemoryLevel::L1 => self.l1(),
            MemoryLevel::L2 => self.l2(),
            MemoryLevel::Hbm => self.dram(),
            MemoryLevel::Shared | MemoryLevel::HostLink => None,
        }
    }

    /// SMs (or CUs) per device.
    pub fn sm_count(&self) -> Option<u32> {
        // Validation guarantees a whole, positive number that fits.
        self.sm_count.as_ref().map(|f| f.value as u32)
    }

    /// Device memory, bytes.
    pub fn memory_bytes(&self) -> f64 {
        self.memory_bytes.value
    }

    /// The compute capability as numbers.
    pub fn compute_capability(&self) -> Option<(u32, u32)> {
        self.compute_capability
            .as_deref()
            .and_then(parse_compute_capability)
    }

    /// The clock a datapath's peak assumes, Hz: the figure's own `clock_hz`, else the entry's
    /// `tensor_clock_hz` for a Tensor Core datapath other than FP64 (NVIDIA computes its FP64
    /// Tensor figure at the boost clock), else the boost clock. `None` when none is recorded.
    pub fn assumed_clock_hz(&self, datapath: Datapath) -> Option<f64> {
        if let Some(c) = self.peak(datapath).and_then(|f| f.clock_hz) {
            return Some(c);
        }
        if datapath.is_tensor()
            && datapath != Datapath::TensorFp64
            && let Some(t) = &self.tensor_clock_hz
        {
            return Some(t.value);
        }
        self.boost_clock_hz.as_ref().map(|f| f.value)
    }

    /// Every figure of the entry with its path in the file (`peaks_flop_per_s.fp64`), for
    /// validation and review.
    pub fn figures(&self) -> Vec<(String, &Figure)> {
        let optional = [
            ("sm_count", &self.sm_count),
            ("l2_bytes", &self.l2_bytes),
            ("last_level_cache_bytes", &self.last_level_cache_bytes),
            ("boost_clock_hz", &self.boost_clock_hz),
            ("tensor_clock_hz", &self.tensor_clock_hz),
            ("dram_bytes_per_s", &self.dram_bytes_per_s),
            ("l1_bytes_per_s", &self.l1_bytes_per_s),
            ("l2_bytes_per_s", &self.l2_bytes_per_s),
        ];
        let mut out: Vec<(String, &Figure)> = optional
            .into_iter()
            .filter_map(|(name, f)| f.as_ref().map(|f| (name.to_string(), f)))
            .collect();
        out.push(("memory_bytes".to_string(), &self.memory_bytes));
        for (d, f) in self.peaks() {
            out.push((format!("peaks_flop_per_s.{}", d.key()), f));
        }
        for (k, l) in self.links.iter() {
            if let Some(f) = &l.bytes_per_s {
                out.push((format!("links.{k}.bytes_per_s"), f));
            }
        }
        out
    }
}

/// `major.minor` as numbers; `None` unless both parts are decimal numbers.
pub(crate) fn parse_compute_capability(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(major) || !digits(minor) {
        return None;
    }
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// A multi-GPU node (DGX): its GPUs, the fabric between them and its network, for collectives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct System {
    /// Stable key (`nvidia-dgx-h100`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// The catalogue entries of the GPUs it is built with.
    pub gpu_ids: Vec<String>,
    /// GPUs per node.
    pub gpus_per_node: u32,
    /// The intra-node fabric, in words.
    pub fabric: String,
    /// NVSwitch chips per node, where a source states it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvswitch_chips: Option<u32>,
    /// NVLink bandwidth of each GPU into the fabric, byte/s.
    pub nvlink_bytes_per_s_per_gpu: Figure,
    /// How `nvlink_bytes_per_s_per_gpu` is counted.
    pub nvlink_direction: Direction,
    /// The whole node's NVLink bandwidth, byte/s, where printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink_aggregate_bytes_per_s: Option<Figure>,
    /// The compute network, in words.
    pub network: String,
    /// Compute-network rate per GPU, bit/s (the NIC's line rate).
    pub network_bits_per_s_per_gpu: Figure,
    /// The storage and management network, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_network: Option<String>,
    /// The sources of the words above.
    pub sources: Vec<String>,
    /// Remarks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl System {
    /// Every figure of the system with its path in the file.
    pub fn figures(&self) -> Vec<(String, &Figure)> {
        let mut out = vec![
            (
                "nvlink_bytes_per_s_per_gpu".to_string(),
                &self.nvlink_bytes_per_s_per_gpu,
            ),
            (
                "network_bits_per_s_per_gpu".to_string(),
                &self.network_bits_per_s_per_gpu,
            ),
        ];
        if let Some(f) = &self.nvlink_aggregate_bytes_per_s {
            out.push(("nvlink_aggregate_bytes_per_s".to_string(), f));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(value: f64) -> Figure {
        Figure {
            value,
            kind: Kind::Datasheet,
            source: "s".into(),
            printed: None,
            formula: None,
            clock_hz: None,
            note: None,
        }
    }

    fn entry() -> GpuEntry {
        GpuEntry {
            id: "x".into(),
            vendor: Vendor::Nvidia,
            product: "X".into(),
            architecture: "Hopper GH100".into(),
            compute_capability: Some("9.0".into()),
            gfx: None,
            per_gcd: false,
            names: vec!["X".into()],
            identity_sources: vec!["s".into()],
            sm_count: Some(figure(132.0)),
            memory_bytes: figure(85_899_345_920.0),
            memory_type: None,
            l2_bytes: None,
            last_level_cache_bytes: None,
            boost_clock_hz: Some(figure(1.98e9)),
            tensor_clock_hz: Some(figure(1.83e9)),
            dram_bytes_per_s: Some(figure(3.35e12)),
            peaks_flop_per_s: BTreeMap::from([
                (Datapath::TensorFp16, figure(9.894e14)),
                (Datapath::TensorFp64, figure(6.69e13)),
                (Datapath::Fp32, figure(6.69e13)),
            ]),
            l1_bytes_per_s: None,
            l2_bytes_per_s: None,
            links: Links::default(),
            note: None,
        }
    }

    #[test]
    fn compute_capability_parses_only_major_dot_minor() {
        assert_eq!(parse_compute_capability("8.0"), Some((8, 0)));
        assert_eq!(parse_compute_capability(" 12.0 "), Some((12, 0)));
        assert_eq!(parse_compute_capability("8"), None);
        assert_eq!(parse_compute_capability("8.x"), None);
        assert_eq!(parse_compute_capability(".0"), None);
        assert_eq!(parse_compute_capability("-8.0"), None);
    }

    #[test]
    fn the_tensor_clock_applies_to_tensor_paths_but_fp64() {
        let e = entry();
        assert_eq!(e.assumed_clock_hz(Datapath::TensorFp16), Some(1.83e9));
        assert_eq!(e.assumed_clock_hz(Datapath::TensorFp64), Some(1.98e9));
        assert_eq!(e.assumed_clock_hz(Datapath::Fp32), Some(1.98e9));
    }

    #[test]
    fn a_figures_own_clock_wins() {
        let mut e = entry();
        e.peaks_flop_per_s
            .get_mut(&Datapath::Fp32)
            .unwrap()
            .clock_hz = Some(1.5e9);
        assert_eq!(e.assumed_clock_hz(Datapath::Fp32), Some(1.5e9));
    }

    #[test]
    fn memory_levels_map_to_the_bandwidth_figures() {
        let e = entry();
        assert_eq!(
            e.bandwidth(MemoryLevel::Hbm).map(|f| f.value),
            Some(3.35e12)
        );
        assert!(e.bandwidth(MemoryLevel::L1).is_none());
        assert!(e.bandwidth(MemoryLevel::HostLink).is_none());
    }

    #[test]
    fn figures_lists_every_sourced_number_with_its_path() {
        let e = entry();
        let paths: Vec<String> = e.figures().into_iter().map(|(p, _)| p).collect();
        assert!(paths.contains(&"memory_bytes".to_string()));
        assert!(paths.contains(&"peaks_flop_per_s.tensor_fp16".to_string()));
        assert!(paths.contains(&"tensor_clock_hz".to_string()));
        assert_eq!(e.sm_count(), Some(132));
    }

    #[test]
    fn unknown_fields_are_refused() {
        let text = r#"{"value": 1.0, "kind": "datasheet", "source": "s", "typo": 1}"#;
        assert!(serde_json::from_str::<Figure>(text).is_err());
    }
}
