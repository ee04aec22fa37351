//! Matching a recorded device to its catalogue entry.
//!
//! A trace or a bundle records what the driver said about a device: its name, compute capability
//! (or gfx target), SM/CU count and memory size in bytes. The rules, in order:
//!
//! 1. A query with nothing in it is [`Match::NoDevice`].
//! 2. **Name.** Names are compared case-insensitively, with runs of white space collapsed and a
//!    leading `NVIDIA ` ignored (some tools strip it: `A100-SXM4-80GB`). A known name narrows the
//!    candidates to the entries that list it. An empty name, or the generic `AMD Radeon Graphics`
//!    that some ROCm versions report for any Instinct GPU, says nothing beyond the vendor (that
//!    one narrows to AMD entries) and the properties decide. Any other unknown name gives
//!    [`Match::None`] with [`NoMatchReason::UnknownName`]: guessing from properties alone would
//!    take an unlisted part (an H100 96 GB, an A800) for a listed one with the same SM count.
//! 3. **Properties.** Each property the query holds is compared with each candidate: compute
//!    capability (as numbers), gfx target (ignoring feature suffixes such as `:sramecc+`), SM/CU
//!    count (exactly), memory (the recorded bytes must lie within [`MEMORY_FIT`] of the entry's
//!    `memory_bytes`: drivers report a little under the marketed n × 2^30, e.g. 0.985–0.999 for
//!    HBM parts and 0.9375 for GDDR boards with ECC enabled). A candidate lacking a property
//!    neither fits nor contradicts on it.
//! 4. **Outcome.** One candidate left: [`Match::Exact`]. Several whose ceilings are equal
//!    (every peak and the memory bandwidth within [`EQUIVALENT_RELATIVE`] of each other, the same
//!    datapaths present): [`Match::Equivalent`], so the caller may take any of them with a note
//!    (an MI210 and one MI250 GCD record the same signature). Several otherwise:
//!    [`Match::Ambiguous`], each candidate named. None left: [`Match::None`], with
//!    [`NoMatchReason::Contradiction`] when a known name was given (the name says H100 but the
//!    compute capability says 8.0), or [`NoMatchReason::NoEntryFits`] otherwise.

use std::fmt;

use roofline_model::bundle::Device;

use crate::entry::{GpuEntry, Vendor, parse_compute_capability};

/// The recorded/catalogue memory ratio accepted as the same memory size: from 0.90 (GDDR boards
/// with ECC give up 1/16) to 1.01 (rounding).
pub const MEMORY_FIT: (f64, f64) = (0.90, 1.01);

/// Two entries are equivalent when each of their ceilings is within this relative difference
/// (the precision vendors print to: 22.6 against 22.65 TFLOPS).
pub const EQUIVALENT_RELATIVE: f64 = 0.005;

/// Names some drivers report for any GPU of a vendor; they narrow to the vendor only.
const GENERIC_NAMES: [(&str, Vendor); 1] = [("amd radeon graphics", Vendor::Amd)];

/// What an input recorded about a device. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceQuery {
    /// The reported name (`NVIDIA H100 80GB HBM3`).
    pub name: Option<String>,
    /// Compute capability `major.minor` (for AMD, the `computeMajor.computeMinor` a PyTorch trace
    /// records).
    pub compute_capability: Option<String>,
    /// AMD gfx target (`gfx90a`, or `gfx90a:sramecc+:xnack-`).
    pub gfx: Option<String>,
    /// SMs or CUs (`numSms` in a trace).
    pub sm_count: Option<u32>,
    /// Device memory in bytes (`totalGlobalMem` in a trace).
    pub memory_bytes: Option<f64>,
}

impl DeviceQuery {
    /// An empty query.
    pub fn new() -> Self {
        Self::default()
    }

    /// With a name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// With a compute capability, `major.minor`.
    pub fn compute_capability(mut self, cc: impl Into<String>) -> Self {
        self.compute_capability = Some(cc.into());
        self
    }

    /// With a gfx target.
    pub fn gfx(mut self, gfx: impl Into<String>) -> Self {
        self.gfx = Some(gfx.into());
        self
    }

    /// With an SM/CU count.
    pub fn sm_count(mut self, sms: u32) -> Self {
        self.sm_count = Some(sms);
        self
    }

    /// With a memory size in bytes.
    pub fn memory_bytes(mut self, bytes: f64) -> Self {
        self.memory_bytes = Some(bytes);
        self
    }

    /// True when the query holds nothing to match on (an empty or blank name counts as none).
    pub fn is_empty(&self) -> bool {
        self.name.as_deref().is_none_or(|n| n.trim().is_empty())
            && self.compute_capability.is_none()
            && self.gfx.is_none()
            && self.sm_count.is_none()
            && self.memory_bytes.is_none()
    }
}

impl From<&Device> for DeviceQuery {
    fn from(d: &Device) -> Self {
        DeviceQuery {
            name: Some(d.name.clone()),
            compute_capability: d.compute_capability.clone(),
            gfx: None,
            sm_count: d.sm_count,
            memory_bytes: d.memory_bytes,
        }
    }
}

/// A property of a device that matching compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// The reported name.
    Name,
    /// The compute capability.
    ComputeCapability,
    /// The AMD gfx target.
    Gfx,
    /// The SM/CU count.
    SmCount,
    /// The memory size.
    Memory,
}

impl Field {
    /// A label for messages (`compute capability`).
    pub fn label(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::ComputeCapability => "compute capability",
            Field::Gfx => "gfx target",
            Field::SmCount => "SM count",
            Field::Memory => "memory",
        }
    }
}

/// A catalogue entry that fits the query, and the query's fields it was compared on and agreed
/// with (those the entry lacks are not listed).
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate<'a> {
    /// The entry.
    pub entry: &'a GpuEntry,
    /// The fields compared and consistent.
    pub agreed_on: Vec<Field>,
}

/// A property on which a named entry disagrees with the recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The entry the name points to.
    pub entry_id: String,
    /// The property.
    pub field: Field,
    /// The entry's value, as text.
    pub catalogue: String,
    /// The recorded value, as text.
    pub recorded: String,
}

/// Why nothing matched.
#[derive(Debug, Clone, PartialEq)]
pub enum NoMatchReason {
    /// The name is not one the catalogue lists (nor a generic one).
    UnknownName,
    /// The name is known, but every entry it names disagrees with a recorded property.
    Contradiction {
        /// Each disagreement, per named entry.
        conflicts: Vec<Conflict>,
    },
    /// No name decided, and no entry fits the recorded properties.
    NoEntryFits,
}

/// The outcome of matching a device.
#[derive(Debug, Clone, PartialEq)]
pub enum Match<'a> {
    /// Exactly one entry fits.
    Exact {
        /// The entry and the fields it agreed on.
        candidate: Candidate<'a>,
        /// The fields that ruled out at least one other entry (`Name` when the name narrowed
        /// the catalogue).
        decided_by: Vec<Field>,
    },
    /// Several entries fit and their ceilings are equal; any of them gives the same roofline.
    Equivalent {
        /// The entries, in catalogue order.
        candidates: Vec<Candidate<'a>>,
        /// The fields that ruled out other entries.
        decided_by: Vec<Field>,
    },
    /// Several entries fit and their ceilings differ.
    Ambiguous {
        /// The entries, in catalogue order.
        candidates: Vec<Candidate<'a>>,
        /// The fields that ruled out other entries.
        decided_by: Vec<Field>,
    },
    /// No entry fits.
    None {
        /// What the input recorded.
        seen: DeviceQuery,
        /// Why.
        reason: NoMatchReason,
    },
    /// The input names no device and records none of its properties.
    NoDevice,
}

impl Match<'_> {
    /// The entry of an exact match.
    pub fn exact(&self) -> Option<&GpuEntry> {
        match self {
            Match::Exact { candidate, .. } => Some(candidate.entry),
            _ => None,
        }
    }

    /// The ids of every candidate (one for an exact match, none when nothing matched).
    pub fn candidate_ids(&self) -> Vec<&str> {
        match self {
            Match::Exact { candidate, .. } => vec![candidate.entry.id.as_str()],
            Match::Equivalent { candidates, .. } | Match::Ambiguous { candidates, .. } => {
                candidates.iter().map(|c| c.entry.id.as_str()).collect()
            }
            Match::None { .. } | Match::NoDevice => Vec::new(),
        }
    }
}

fn fields(list: &[Field]) -> String {
    list.iter()
        .map(|f| f.label())
        .collect::<Vec<_>>()
        .join(", ")
}

fn ids(c: &[Candidate<'_>]) -> String {
    c.iter()
        .map(|c| c.entry.id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Match<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Match::Exact {
                candidate,
                decided_by,
            } => write!(
                f,
                "{} (agrees on {}; decided by {})",
                candidate.entry.id,
                fields(&candidate.agreed_on),
                fields(decided_by)
            ),
            Match::Equivalent { candidates, .. } => {
                write!(f, "one of {}, whose ceilings are equal", ids(candidates))
            }
            Match::Ambiguous { candidates, .. } => {
                write!(f, "ambiguous between {}", ids(candidates))
            }
            Match::None { seen, reason } => {
                let name = seen.name.as_deref().unwrap_or("(no name)");
                match reason {
                    NoMatchReason::UnknownName => {
                        write!(f, "no catalogue entry is named {name:?}")
                    }
                    NoMatchReason::NoEntryFits => write!(
                        f,
                        "no catalogue entry fits {name:?} (compute capability {:?}, {:?} SMs, {:?} bytes)",
                        seen.compute_capability, seen.sm_count, seen.memory_bytes
                    ),
                    NoMatchReason::Contradiction { conflicts } => {
                        write!(f, "{name:?} contradicts the recording:")?;
                        for c in conflicts {
                            write!(
                                f,
                                " {} has {} {}, recorded {};",
                                c.entry_id,
                                c.field.label(),
                                c.catalogue,
                                c.recorded
                            )?;
                        }
                        Ok(())
                    }
                }
            }
            Match::NoDevice => write!(f, "no device recorded"),
        }
    }
}

/// How one entry compares with one recorded property.
enum Fit {
    Agrees,
    Contradicts(Conflict),
    Unknown,
}

/// Lowercase, white space collapsed, a leading `nvidia ` dropped.
fn canonical_name(name: &str) -> String {
    let collapsed = name
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    match collapsed.strip_prefix("nvidia ") {
        Some(rest) => rest.to_string(),
        None => collapsed,
    }
}

/// The major version of an entry's gfx target: its digits less the last two (`gfx908`: 9,
/// `gfx1100`: 11).
fn gfx_major(entry: &GpuEntry) -> Option<u32> {
    let digits = gfx_base(entry.gfx.as_deref()?)
        .strip_prefix("gfx")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>();
    digits.get(..digits.len().checked_sub(2)?)?.parse().ok()
}

fn gfx_base(gfx: &str) -> String {
    gfx.split(':').next().unwrap_or("").trim().to_lowercase()
}

fn compare(entry: &GpuEntry, field: Field, q: &DeviceQuery) -> Fit {
    let conflict = |catalogue: String, recorded: String| {
        Fit::Contradicts(Conflict {
            entry_id: entry.id.clone(),
            field,
            catalogue,
            recorded,
        })
    };
    match field {
        Field::Name => Fit::Agrees,
        Field::ComputeCapability => {
            let Some(recorded) = &q.compute_capability else {
                return Fit::Unknown;
            };
            let Some(ours) = &entry.compute_capability else {
                // An AMD entry without the pair HIP reports still has its gfx target, whose
                // major version is the pair's major (gfx908: 9): another major contradicts it.
                return match (gfx_major(entry), parse_compute_capability(recorded)) {
                    (Some(major), Some((m, _))) if major != m => {
                        conflict(format!("a gfx{major} GPU"), recorded.clone())
                    }
                    _ => Fit::Unknown,
                };
            };
            let same = match (
                parse_compute_capability(recorded),
                parse_compute_capability(ours),
            ) {
                (Some(a), Some(b)) => a == b,
                _ => recorded.trim() == ours.trim(),
            };
            if same {
                Fit::Agrees
            } else {
                conflict(ours.clone(), recorded.clone())
            }
        }
        Field::Gfx => {
            let Some(recorded) = &q.gfx else {
                return Fit::Unknown;
            };
            match &entry.gfx {
                Some(ours) if gfx_base(ours) == gfx_base(recorded) => Fit::Agrees,
                Some(ours) => conflict(ours.clone(), recorded.clone()),
                // A gfx target is AMD's: an NVIDIA entry contradicts it.
                None => conflict("none (not an AMD GPU)".into(), recorded.clone()),
            }
        }
        Field::SmCount => match (q.sm_count, entry.sm_count()) {
            (Some(recorded), Some(ours)) if recorded == ours => Fit::Agrees,
            (Some(recorded), Some(ours)) => conflict(ours.to_string(), recorded.to_string()),
            _ => Fit::Unknown,
        },
        Field::Memory => {
            let Some(recorded) = q.memory_bytes else {
                return Fit::Unknown;
            };
            let ratio = recorded / entry.memory_bytes();
            if (MEMORY_FIT.0..=MEMORY_FIT.1).contains(&ratio) {
                Fit::Agrees
            } else {
                conflict(
                    format!("{} bytes", entry.memory_bytes()),
                    format!("{recorded} bytes"),
                )
            }
        }
    }
}

/// True when two entries' ceilings are equal within [`EQUIVALENT_RELATIVE`]: the same datapaths,
/// each peak and the memory bandwidth within it. Entries with no ceiling are never equivalent.
pub fn equivalent(a: &GpuEntry, b: &GpuEntry) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= EQUIVALENT_RELATIVE * x.abs().max(y.abs());
    let same_paths = a.peaks_flop_per_s.keys().eq(b.peaks_flop_per_s.keys());
    let peaks = a
        .peaks()
        .all(|(d, f)| b.peak(d).is_some_and(|g| close(f.value, g.value)));
    let dram = match (a.dram(), b.dram()) {
        (Some(x), Some(y)) => close(x.value, y.value),
        (None, None) => true,
        _ => false,
    };
    let any = !a.peaks_flop_per_s.is_empty() || a.dram().is_some();
    any && same_paths && peaks && dram
}

/// Matches a recorded device against `entries` (see the module documentation for the rules).
pub fn match_device<'a>(entries: &'a [GpuEntry], q: &DeviceQuery) -> Match<'a> {
    if q.is_empty() {
        return Match::NoDevice;
    }
    let name = q
        .name
        .as_deref()
        .map(canonical_name)
        .filter(|n| !n.is_empty());
    let generic = name
        .as_deref()
        .and_then(|n| GENERIC_NAMES.iter().find(|(g, _)| *g == n).map(|(_, v)| *v));

    let mut decided_by = Vec::new();
    let pool: Vec<&GpuEntry> = match (&name, generic) {
        (None, _) => entries.iter().collect(),
        (Some(_), Some(vendor)) => entries.iter().filter(|e| e.vendor == vendor).collect(),
        (Some(n), None) => {
            let named: Vec<&GpuEntry> = entries
                .iter()
                .filter(|e| e.names.iter().any(|m| canonical_name(m) == *n))
                .collect();
            if named.is_empty() {
                return Match::None {
                    seen: q.clone(),
                    reason: NoMatchReason::UnknownName,
                };
            }
            decided_by.push(Field::Name);
            named
        }
    };
    let name_known = decided_by.contains(&Field::Name);

    let properties = [
        Field::ComputeCapability,
        Field::Gfx,
        Field::SmCount,
        Field::Memory,
    ];
    let mut survivors = Vec::new();
    let mut conflicts = Vec::new();
    for entry in pool {
        let mut agreed_on = if name_known {
            vec![Field::Name]
        } else {
            Vec::new()
        };
        let mut fits = true;
        for field in properties {
            match compare(entry, field, q) {
                Fit::Agrees => agreed_on.push(field),
                Fit::Unknown => {}
                Fit::Contradicts(c) => {
                    fits = false;
                    if !decided_by.contains(&field) {
                        decided_by.push(field);
                    }
                    conflicts.push(c);
                }
            }
        }
        if fits {
            survivors.push(Candidate { entry, agreed_on });
        }
    }
    decided_by.sort();

    match survivors.len() {
        0 => Match::None {
            seen: q.clone(),
            reason: if name_known {
                NoMatchReason::Contradiction { conflicts }
            } else {
                NoMatchReason::NoEntryFits
            },
        },
        1 => Match::Exact {
            candidate: survivors.remove(0),
            decided_by,
        },
        _ => {
            let first = survivors[0].entry;
            if survivors.iter().all(|c| equivalent(first, c.entry)) {
                Match::Equivalent {
                    candidates: survivors,
                    decided_by,
                }
            } else {
                Match::Ambiguous {
                    candidates: survivors,
                    decided_by,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalogue;

    fn m(q: &DeviceQuery) -> Match<'static> {
        Catalogue::get().match_device(q)
    }

    fn exact_id(q: &DeviceQuery) -> String {
        match m(q) {
            Match::Exact { candidate, .. } => candidate.entry.id.clone(),
            other => panic!("expected an exact match for {q:?}, got {other}"),
        }
    }

    // The devices recorded in real traces (see the `traces-brief` source).

    #[test]
    fn a100_pg509_200_is_the_sxm4_40gb_board() {
        for bytes in [42_505_273_344.0, 42_297_524_224.0] {
            let q = DeviceQuery::new()
                .name("NVIDIA A100-PG509-200")
                .compute_capability("8.0")
                .sm_count(108)
                .memory_bytes(bytes);
            match m(&q) {
                Match::Exact {
                    candidate,
                    decided_by,
                } => {
                    assert_eq!(candidate.entry.id, "nvidia-a100-sxm4-40gb");
                    assert_eq!(
                        candidate.agreed_on,
                        vec![
                            Field::Name,
                            Field::ComputeCapability,
                            Field::SmCount,
                            Field::Memory
                        ]
                    );
                    assert_eq!(decided_by, vec![Field::Name]);
                }
                other => panic!("{other}"),
            }
        }
    }

    #[test]
    fn v100_sxm2_32gb_and_the_dgx_station_board_are_told_apart_by_name() {
        let sxm2 = DeviceQuery::new()
            .name("Tesla V100-SXM2-32GB")
            .compute_capability("7.0")
            .sm_count(80)
            .memory_bytes(34_079_637_504.0);
        assert_eq!(exact_id(&sxm2), "nvidia-v100-sxm2-32gb");
        let dgxs = DeviceQuery::new()
            .name("Tesla V100-DGXS-32GB")
            .compute_capability("7.0")
            .sm_count(80)
            .memory_bytes(34_084_028_416.0);
        assert_eq!(exact_id(&dgxs), "nvidia-v100-dgxs-32gb");
        // Without the name the two (and the PCIe 32GB board) cannot be told apart.
        let anonymous = DeviceQuery { name: None, ..dgxs };
        match m(&anonymous) {
            Match::Ambiguous { candidates, .. } => {
                let ids: Vec<&str> = candidates.iter().map(|c| c.entry.id.as_str()).collect();
                assert_eq!(
                    ids,
                    [
                        "nvidia-v100-sxm2-32gb",
                        "nvidia-v100-pcie-32gb",
                        "nvidia-v100-dgxs-32gb"
                    ]
                );
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn amd_radeon_graphics_with_104_cus_is_an_mi250_gcd_or_its_equal_the_mi210() {
        let q = DeviceQuery::new()
            .name("AMD Radeon Graphics")
            .compute_capability("9.0")
            .sm_count(104)
            .memory_bytes(68_702_699_520.0);
        match m(&q) {
            Match::Equivalent {
                candidates,
                decided_by,
            } => {
                let ids: Vec<&str> = candidates.iter().map(|c| c.entry.id.as_str()).collect();
                assert_eq!(ids, ["amd-mi210", "amd-mi250-gcd"]);
                assert!(decided_by.contains(&Field::SmCount));
                assert!(!decided_by.contains(&Field::Name));
            }
            other => panic!("{other}"),
        }
        // An empty name (a recorded MI210 trace) says no more than the generic one.
        let unnamed = DeviceQuery {
            name: Some(String::new()),
            ..q
        };
        assert_eq!(m(&unnamed).candidate_ids(), ["amd-mi210", "amd-mi250-gcd"]);
    }

    #[test]
    fn the_shared_mi250_name_is_ambiguous_until_the_cu_count_decides() {
        let named = DeviceQuery::new().name("AMD Instinct MI250X / MI250");
        match m(&named) {
            Match::Ambiguous { candidates, .. } => assert_eq!(candidates.len(), 2),
            other => panic!("{other}"),
        }
        assert_eq!(exact_id(&named.clone().sm_count(104)), "amd-mi250-gcd");
        assert_eq!(exact_id(&named.sm_count(110)), "amd-mi250x-gcd");
    }

    #[test]
    fn h100_sxm_and_pcie_are_told_apart_by_sm_count() {
        let sxm = DeviceQuery::new()
            .compute_capability("9.0")
            .sm_count(132)
            .memory_bytes(85_100_000_000.0);
        match m(&sxm) {
            Match::Exact {
                candidate,
                decided_by,
            } => {
                assert_eq!(candidate.entry.id, "nvidia-h100-sxm5");
                assert!(decided_by.contains(&Field::SmCount));
            }
            other => panic!("{other}"),
        }
        let pcie = DeviceQuery::new()
            .compute_capability("9.0")
            .sm_count(114)
            .memory_bytes(85_100_000_000.0);
        assert_eq!(exact_id(&pcie), "nvidia-h100-pcie");
    }

    #[test]
    fn a100_40gb_and_80gb_are_told_apart_by_memory() {
        let props = DeviceQuery::new().compute_capability("8.0").sm_count(108);
        // Without memory: all four A100 boards (the A30 lacks an SM count and fits too).
        assert_eq!(
            m(&props).candidate_ids(),
            [
                "nvidia-a100-sxm4-40gb",
                "nvidia-a100-sxm4-80gb",
                "nvidia-a100-pcie-40gb",
                "nvidia-a100-pcie-80gb",
                "nvidia-a30",
            ]
        );
        let forty = props.clone().memory_bytes(42_505_273_344.0);
        let eighty = props.memory_bytes(85_198_045_184.0);
        assert_eq!(
            m(&forty).candidate_ids(),
            ["nvidia-a100-sxm4-40gb", "nvidia-a100-pcie-40gb"]
        );
        assert_eq!(
            m(&eighty).candidate_ids(),
            ["nvidia-a100-sxm4-80gb", "nvidia-a100-pcie-80gb"]
        );
        // SXM4 and PCIe differ in memory bandwidth: ambiguous, not equivalent.
        assert!(matches!(m(&eighty), Match::Ambiguous { .. }));
        assert_eq!(
            exact_id(&eighty.name("NVIDIA A100-SXM4-80GB")),
            "nvidia-a100-sxm4-80gb"
        );
    }

    #[test]
    fn a_cuda_compute_capability_is_no_amd_gpu() {
        let c = Catalogue::get();
        let volta = DeviceQuery::new().compute_capability("7.0");
        let ids: Vec<String> = match c.match_device(&volta) {
            Match::Ambiguous { candidates, .. } => {
                candidates.iter().map(|c| c.entry.id.clone()).collect()
            }
            other => panic!("{other:?}"),
        };
        assert!(
            ids.iter().all(|id| id.starts_with("nvidia-v100")),
            "{ids:?}"
        );
    }

    #[test]
    fn a_name_that_contradicts_the_compute_capability_is_no_match() {
        let q = DeviceQuery::new()
            .name("NVIDIA H100 80GB HBM3")
            .compute_capability("8.0");
        match m(&q) {
            Match::None {
                reason: NoMatchReason::Contradiction { conflicts },
                ..
            } => {
                assert_eq!(
                    conflicts,
                    vec![Conflict {
                        entry_id: "nvidia-h100-sxm5".into(),
                        field: Field::ComputeCapability,
                        catalogue: "9.0".into(),
                        recorded: "8.0".into(),
                    }]
                );
            }
            other => panic!("{other}"),
        }
        let text = m(&q).to_string();
        assert!(
            text.contains("compute capability 9.0, recorded 8.0"),
            "{text}"
        );
    }

    #[test]
    fn an_unknown_name_is_not_guessed_from_properties() {
        // The 96 GB H100 ("NVIDIA H100") is not in the catalogue; its properties would otherwise
        // fit the 96 GB GH200.
        let q = DeviceQuery::new()
            .name("NVIDIA H100")
            .compute_capability("9.0")
            .sm_count(132)
            .memory_bytes(101_997_215_744.0);
        assert!(matches!(
            m(&q),
            Match::None {
                reason: NoMatchReason::UnknownName,
                ..
            }
        ));
    }

    #[test]
    fn names_match_without_case_spacing_or_the_vendor_prefix() {
        assert_eq!(
            exact_id(&DeviceQuery::new().name("A100-SXM4-80GB")),
            "nvidia-a100-sxm4-80gb"
        );
        assert_eq!(
            exact_id(&DeviceQuery::new().name("  nvidia   geforce rtx 4090 ")),
            "nvidia-rtx-4090"
        );
    }

    #[test]
    fn properties_without_a_name_can_fit_nothing() {
        let q = DeviceQuery::new().compute_capability("7.5").sm_count(132);
        assert!(matches!(
            m(&q),
            Match::None {
                reason: NoMatchReason::NoEntryFits,
                ..
            }
        ));
    }

    #[test]
    fn an_empty_query_names_no_device() {
        assert_eq!(m(&DeviceQuery::new()), Match::NoDevice);
        assert_eq!(m(&DeviceQuery::new().name("   ")), Match::NoDevice);
    }

    #[test]
    fn a_gfx_target_rules_out_nvidia_and_ignores_feature_suffixes() {
        let q = DeviceQuery::new()
            .gfx("gfx942:sramecc+:xnack-")
            .memory_bytes(205_571_227_648.0);
        assert_eq!(exact_id(&q), "amd-mi300x");
    }

    #[test]
    fn the_mi300x_virtual_function_is_recognised() {
        let q = DeviceQuery::new()
            .name("AMD Instinct MI300X VF")
            .compute_capability("9.4")
            .sm_count(304)
            .memory_bytes(205_571_227_648.0);
        assert_eq!(exact_id(&q), "amd-mi300x");
    }

    #[test]
    fn gddr_boards_with_ecc_still_fit_their_memory() {
        // An L4 reports 23,034 MiB of its 24 GB (ECC takes 1/16).
        let q = DeviceQuery::new()
            .name("NVIDIA L4")
            .compute_capability("8.9")
            .memory_bytes(23_034.0 * 1_048_576.0);
        assert_eq!(exact_id(&q), "nvidia-l4");
    }

    #[test]
    fn a_bundle_device_converts_to_a_query() {
        let mut d = Device::new("0", "NVIDIA H100 PCIe");
        d.compute_capability = Some("9.0".into());
        d.sm_count = Some(114);
        assert_eq!(exact_id(&DeviceQuery::from(&d)), "nvidia-h100-pcie");
    }

    #[test]
    fn equivalence_needs_the_same_datapaths_and_close_values() {
        let c = Catalogue::get();
        let mi210 = c.by_id("amd-mi210").unwrap();
        let gcd = c.by_id("amd-mi250-gcd").unwrap();
        let gcd_x = c.by_id("amd-mi250x-gcd").unwrap();
        assert!(equivalent(mi210, gcd));
        assert!(!equivalent(gcd, gcd_x));
        let dgxs = c.by_id("nvidia-v100-dgxs-32gb").unwrap();
        assert!(
            !equivalent(dgxs, dgxs),
            "an entry without ceilings is never equivalent"
        );
    }
}
