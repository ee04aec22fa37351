//! The per-kernel report behind `roofline info --format csv|json` and the viewer's CSV export:
//! launches aggregated by name, analysed against the device's ceilings, sorted by time.
//!
//! The CSV and JSON column names are a stable interface (users load them in pandas): add
//! columns at the end, never rename.

use serde::Serialize;

use crate::analysis::aggregate::aggregate_by_name;
use crate::analysis::ceilings::Ceilings;
use crate::analysis::group::GroupBy;
use crate::analysis::{self, ComplexitySource, KernelAnalysis, comm};
use crate::bundle::{Bundle, Kernel, Method};

/// The stable CSV columns, in order; the first sixteen are the documented core set.
pub const CSV_COLUMNS: [&str; 31] = [
    "name",
    "launches",
    "time_s",
    "flops",
    "flops_tensor",
    "bytes_l1",
    "bytes_l2",
    "bytes_hbm",
    "ai_l1",
    "ai_l2",
    "ai_hbm",
    "flop_per_s",
    "bound",
    "headroom",
    "t_bound_s",
    "region",
    "display_name",
    "device",
    "share",
    "attainable_flop_per_s",
    "peak_flop_per_s",
    "gap",
    "complexity_flops",
    "complexity_bytes",
    "complexity_source",
    "missing_peaks",
    "binding_ceiling",
    "ceiling_source",
    "calls",
    "flops_per_call",
    "bytes_per_call",
];

/// The collectives' columns, after [`CSV_COLUMNS`] (a group of their own: kernels that are no
/// collective leave them empty): nccl-tests' figures of each collective against its link
/// ([`crate::analysis::comm`]).
pub const COMM_COLUMNS: [&str; 12] = [
    "comm_collective",
    "comm_bytes",
    "comm_group_size",
    "comm_algbw_byte_per_s",
    "comm_busbw_byte_per_s",
    "comm_link",
    "comm_link_byte_per_s",
    "comm_link_share",
    "comm_link_source",
    "comm_exposed_s",
    "comm_overlapped_s",
    "comm_missing",
];

/// One kernel name's figures, as `info --format csv|json` writes them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InfoRow {
    /// Full demangled name.
    pub name: String,
    /// Launches.
    pub launches: u64,
    /// Total time, seconds.
    pub time_s: f64,
    /// All FLOPs.
    pub flops: Option<f64>,
    /// Tensor Core FLOPs.
    pub flops_tensor: Option<f64>,
    /// Bytes at L1.
    pub bytes_l1: Option<f64>,
    /// Bytes at L2.
    pub bytes_l2: Option<f64>,
    /// Bytes at HBM.
    pub bytes_hbm: Option<f64>,
    /// FLOP/byte at L1.
    pub ai_l1: Option<f64>,
    /// FLOP/byte at L2.
    pub ai_l2: Option<f64>,
    /// FLOP/byte at HBM.
    pub ai_hbm: Option<f64>,
    /// Achieved FLOP/s.
    pub flop_per_s: Option<f64>,
    /// Binding ceiling of the hierarchical roofline: compute, l1, l2 or hbm.
    pub bound: Option<&'static str>,
    /// Attainable / achieved.
    pub headroom: Option<f64>,
    /// Time-based bound, seconds.
    pub t_bound_s: Option<f64>,
    /// Time-based region: compute, bandwidth or launch.
    pub region: Option<&'static str>,
    /// Short name.
    pub display_name: String,
    /// Device id.
    pub device: Option<String>,
    /// Share of the bundle's kernel time.
    pub share: f64,
    /// Hierarchical attainable FLOP/s.
    pub attainable_flop_per_s: Option<f64>,
    /// Effective peak of the precision mix.
    pub peak_flop_per_s: Option<f64>,
    /// `T / T_bound`.
    pub gap: Option<f64>,
    /// Time-based F; `None` when unknown.
    pub complexity_flops: Option<f64>,
    /// Time-based B.
    pub complexity_bytes: Option<f64>,
    /// `analytical`, `inductor` or `counters`: what gave F and B; `None` when nothing did.
    pub complexity_source: Option<&'static str>,
    /// Datapaths with FLOPs but no ceiling (no bound then), `;`-separated keys.
    pub missing_peaks: String,
    /// The binding ceiling by name: the memory level of a bandwidth-bound kernel (`hbm`, `l2`,
    /// `l1`), the compute roof of a compute-bound one (`tensor_fp16`, `fp32`;
    /// [`crate::analysis::hierarchical::HierarchicalBound::ceiling_key`]).
    pub binding_ceiling: Option<&'static str>,
    /// Where the binding ceiling's figure comes from: `measured`, `datasheet`, `derived`,
    /// `theoretical` or `estimated` ([`crate::analysis::ceilings::CeilingSource`]).
    pub ceiling_source: Option<&'static str>,
    /// Operator calls, for an entry grouped per operator ([`GroupBy::CALLS_TAG`]): one call may
    /// launch several kernels.
    ///
    /// [`GroupBy::CALLS_TAG`]: crate::analysis::group::GroupBy::CALLS_TAG
    pub calls: Option<u64>,
    /// `complexity_flops / calls`: one call's F.
    pub flops_per_call: Option<f64>,
    /// `complexity_bytes / calls`: one call's B.
    pub bytes_per_call: Option<f64>,
    /// The collective (`all_reduce`, …) of an NCCL kernel ([`crate::bundle::Collective`]).
    pub comm_collective: Option<&'static str>,
    /// Its size S as nccl-tests counts it, bytes, summed over the launches.
    pub comm_bytes: Option<f64>,
    /// The ranks of its group.
    pub comm_group_size: Option<u32>,
    /// Algorithm bandwidth `S / t`, byte/s.
    pub comm_algbw_byte_per_s: Option<f64>,
    /// Bus bandwidth, byte/s ([`crate::analysis::comm::bus_factor`]).
    pub comm_busbw_byte_per_s: Option<f64>,
    /// The link it runs on: `nvlink`, `pcie` or `network`.
    pub comm_link: Option<&'static str>,
    /// That link's bandwidth, byte/s in one direction.
    pub comm_link_byte_per_s: Option<f64>,
    /// Bus bandwidth over the link's bandwidth.
    pub comm_link_share: Option<f64>,
    /// Where the link's figure comes from.
    pub comm_link_source: Option<&'static str>,
    /// Exposed communication: no compute kernel running on the device, seconds.
    pub comm_exposed_s: Option<f64>,
    /// Communication overlapped with compute on another stream, seconds.
    pub comm_overlapped_s: Option<f64>,
    /// What kept a collective's figure unknown, in words (`;`-separated).
    pub comm_missing: String,
}

/// The analysed kernels of a bundle: aggregated by name, sorted by time (largest first).
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Aggregated kernels.
    pub kernels: Vec<Kernel>,
    /// Their analyses, sorted by time, largest first (`index` points into `kernels`).
    pub analyses: Vec<KernelAnalysis>,
}

impl Report {
    /// Aggregates and analyses a bundle's kernels against its own machines.
    pub fn new(bundle: &Bundle) -> Self {
        Self::analysed(
            aggregate_by_name(&bundle.kernels),
            analysis::own_ceilings(bundle),
        )
    }

    /// Aggregates and analyses a bundle's kernels against the given ceilings (a machine from
    /// another bundle, or edited ones), or none.
    pub fn with_ceilings(bundle: &Bundle, ceilings: Option<&Ceilings>) -> Self {
        Self::analysed(aggregate_by_name(&bundle.kernels), |_| ceilings.cloned())
    }

    /// `kernels` analysed with `ceilings_for`, largest time first.
    fn analysed(kernels: Vec<Kernel>, ceilings_for: impl Fn(&Kernel) -> Option<Ceilings>) -> Self {
        let analyses = analysis::analyze_largest_first(&kernels, ceilings_for);
        Report { kernels, analyses }
    }

    /// Display names of [`Report::kernels`] (by index), told apart where shortened names
    /// collide ([`crate::analysis::names::disambiguate`]).
    pub fn display_names(&self) -> Vec<String> {
        analysis::names::display_names(&self.kernels)
    }

    /// The rows of the CSV and JSON outputs, in time order. Every figure is finite, or unknown
    /// (`None`, or 0 for a sum), and never `-0.0`.
    pub fn rows(&self, bundle: &Bundle) -> Vec<InfoRow> {
        let names = self.display_names();
        self.analyses
            .iter()
            .map(|a| {
                let k = &self.kernels[a.index];
                let row = InfoRow {
                    name: k.name.clone(),
                    launches: k.launches,
                    time_s: a.time_s,
                    flops: a.flops,
                    flops_tensor: a.flops_tensor,
                    bytes_l1: a.bytes[0],
                    bytes_l2: a.bytes[1],
                    bytes_hbm: a.bytes[2],
                    ai_l1: a.ai[0],
                    ai_l2: a.ai[1],
                    ai_hbm: a.ai[2],
                    flop_per_s: a.flop_per_s,
                    bound: a.hierarchical.as_ref().map(|h| h.bound.key()),
                    headroom: a.headroom,
                    t_bound_s: a.time_bound.map(|t| t.bound_s),
                    region: a.time_bound.map(|t| t.region.key()),
                    display_name: names[a.index].clone(),
                    device: bundle.device_of(k).map(str::to_string),
                    share: a.share_of_time,
                    attainable_flop_per_s: a.hierarchical.as_ref().map(|h| h.attainable),
                    peak_flop_per_s: a.peak,
                    gap: a.gap,
                    complexity_flops: a.complexity_flops,
                    complexity_bytes: a.complexity_bytes,
                    complexity_source: a.complexity_source.map(ComplexitySource::key),
                    missing_peaks: a
                        .missing_peaks
                        .iter()
                        .map(|d| d.key())
                        .collect::<Vec<_>>()
                        .join(";"),
                    binding_ceiling: a
                        .hierarchical
                        .as_ref()
                        .map(analysis::hierarchical::HierarchicalBound::ceiling_key),
                    ceiling_source: a.ceiling_source.map(|s| s.key()),
                    calls: None,
                    flops_per_call: None,
                    bytes_per_call: None,
                    comm_collective: None,
                    comm_bytes: None,
                    comm_group_size: None,
                    comm_algbw_byte_per_s: None,
                    comm_busbw_byte_per_s: None,
                    comm_link: None,
                    comm_link_byte_per_s: None,
                    comm_link_share: None,
                    comm_link_source: None,
                    comm_exposed_s: None,
                    comm_overlapped_s: None,
                    comm_missing: String::new(),
                }
                .with_calls(calls_of(k))
                .with_collective(comm::analyze_collective(
                    k,
                    bundle.machine_of(bundle.device_of(k)),
                ));
                row.normalised()
            })
            .collect()
    }
}

/// `-0.0` as `0.0`; a non-finite figure as `None` (it cannot be written as a number).
fn clean(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite()).map(|v| v + 0.0)
}

/// `-0.0` as `0.0`, and a non-finite figure (which [`crate::analysis`] marks out of range) as 0.
fn clean_sum(v: f64) -> f64 {
    if v.is_finite() { v + 0.0 } else { 0.0 }
}

/// The operator calls an entry grouped per operator holds ([`GroupBy::CALLS_TAG`]).
///
/// [`GroupBy::CALLS_TAG`]: crate::analysis::group::GroupBy::CALLS_TAG
pub fn calls_of(k: &Kernel) -> Option<u64> {
    k.tags
        .get(GroupBy::CALLS_TAG)?
        .parse()
        .ok()
        .filter(|&n| n > 0)
}

impl InfoRow {
    /// The row with its calls and per-call F and B.
    fn with_calls(mut self, calls: Option<u64>) -> Self {
        self.calls = calls;
        if let Some(n) = calls {
            let per = |v: Option<f64>| v.map(|v| v / n as f64);
            self.flops_per_call = per(self.complexity_flops);
            self.bytes_per_call = per(self.complexity_bytes);
        }
        self
    }

    /// The row with its collective's figures; a collective's binding ceiling is its link.
    fn with_collective(mut self, c: Option<comm::CommAnalysis>) -> Self {
        let Some(c) = c else { return self };
        self.comm_collective = Some(c.kind.key());
        self.comm_bytes = c.bytes;
        self.comm_group_size = c.group_size;
        self.comm_algbw_byte_per_s = c.algbw;
        self.comm_busbw_byte_per_s = c.busbw;
        self.comm_link = c.link.map(|l| l.key());
        self.comm_link_byte_per_s = c.link_peak;
        self.comm_link_share = c.link_share;
        self.comm_link_source = c.link_source.map(|s| s.key());
        self.comm_exposed_s = c.exposed_s;
        self.comm_overlapped_s = c.overlapped_s;
        self.comm_missing = c.missing_words();
        if self.binding_ceiling.is_none() && c.link.is_some() {
            self.binding_ceiling = self.comm_link;
            self.ceiling_source = self.comm_link_source;
        }
        self
    }

    /// The row with every figure finite and no negative zero.
    fn normalised(mut self) -> Self {
        for v in [
            &mut self.bytes_l1,
            &mut self.bytes_l2,
            &mut self.bytes_hbm,
            &mut self.ai_l1,
            &mut self.ai_l2,
            &mut self.ai_hbm,
            &mut self.flop_per_s,
            &mut self.headroom,
            &mut self.t_bound_s,
            &mut self.attainable_flop_per_s,
            &mut self.peak_flop_per_s,
            &mut self.gap,
            &mut self.complexity_bytes,
            &mut self.flops,
            &mut self.flops_tensor,
            &mut self.complexity_flops,
            &mut self.flops_per_call,
            &mut self.bytes_per_call,
            &mut self.comm_bytes,
            &mut self.comm_algbw_byte_per_s,
            &mut self.comm_busbw_byte_per_s,
            &mut self.comm_link_byte_per_s,
            &mut self.comm_link_share,
            &mut self.comm_exposed_s,
            &mut self.comm_overlapped_s,
        ] {
            *v = clean(*v);
        }
        for v in [&mut self.time_s, &mut self.share] {
            *v = clean_sum(*v);
        }
        self
    }
}

/// A number as CSV and JSON carry it: the shortest text that reads back as the same f64;
/// `-0.0` as `0.0`, and a non-finite value (never in a row, see [`InfoRow`]) as an empty cell.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{:?}", v + 0.0)
    } else {
        String::new()
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(num).unwrap_or_default()
}

/// A text cell: RFC 4180 quoting (fields holding a comma, quote or line break are quoted,
/// quotes doubled), and neutralised against spreadsheet formula injection: a cell that begins
/// with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, so that a spreadsheet
/// shows it as text instead of evaluating it (OWASP's advice for CSV injection).
fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// The CSV: a header of [`CSV_COLUMNS`], then one row per kernel name; unknown figures are empty.
pub fn to_csv(bundle: &Bundle) -> String {
    Report::new(bundle).to_csv(bundle)
}

impl Report {
    /// The CSV of this report: [`CSV_COLUMNS`], then [`COMM_COLUMNS`].
    pub fn to_csv(&self, bundle: &Bundle) -> String {
        let mut out = CSV_COLUMNS.join(",");
        out.push(',');
        out.push_str(&COMM_COLUMNS.join(","));
        out.push('\n');
        for r in self.rows(bundle) {
            let cells = [
                csv_field(&r.name),
                r.launches.to_string(),
                num(r.time_s),
                opt(r.flops),
                opt(r.flops_tensor),
                opt(r.bytes_l1),
                opt(r.bytes_l2),
                opt(r.bytes_hbm),
                opt(r.ai_l1),
                opt(r.ai_l2),
                opt(r.ai_hbm),
                opt(r.flop_per_s),
                r.bound.unwrap_or_default().to_string(),
                opt(r.headroom),
                opt(r.t_bound_s),
                r.region.unwrap_or_default().to_string(),
                csv_field(&r.display_name),
                csv_field(r.device.as_deref().unwrap_or_default()),
                num(r.share),
                opt(r.attainable_flop_per_s),
                opt(r.peak_flop_per_s),
                opt(r.gap),
                opt(r.complexity_flops),
                opt(r.complexity_bytes),
                r.complexity_source.unwrap_or_default().to_string(),
                r.missing_peaks.clone(),
                r.binding_ceiling.unwrap_or_default().to_string(),
                r.ceiling_source.unwrap_or_default().to_string(),
                r.calls.map(|n| n.to_string()).unwrap_or_default(),
                opt(r.flops_per_call),
                opt(r.bytes_per_call),
                r.comm_collective.unwrap_or_default().to_string(),
                opt(r.comm_bytes),
                r.comm_group_size.map(|n| n.to_string()).unwrap_or_default(),
                opt(r.comm_algbw_byte_per_s),
                opt(r.comm_busbw_byte_per_s),
                r.comm_link.unwrap_or_default().to_string(),
                opt(r.comm_link_byte_per_s),
                opt(r.comm_link_share),
                r.comm_link_source.unwrap_or_default().to_string(),
                opt(r.comm_exposed_s),
                opt(r.comm_overlapped_s),
                csv_field(&r.comm_missing),
            ];
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }
}

#[derive(Serialize)]
struct JsonCeiling {
    name: &'static str,
    value: f64,
    unit: &'static str,
    method: Method,
    /// `measured`, `datasheet`, `derived`, `theoretical` ([`crate::analysis::ceilings::CeilingSource::key`]).
    source: Option<&'static str>,
}

#[derive(Serialize)]
struct JsonDevice<'a> {
    id: &'a str,
    name: &'a str,
    compute_capability: Option<&'a str>,
    /// Where the ceilings come from, in words ([`Ceilings::origin_words`]).
    ceilings_from: Option<String>,
    ceilings: Vec<JsonCeiling>,
    launch_overhead_s: Option<f64>,
    launch_overhead_source: Option<&'static str>,
    /// The links its collectives run on, byte/s in one direction.
    links: Vec<JsonCeiling>,
}

/// Exposed communication of one step of one rank.
#[derive(Serialize)]
struct JsonStep {
    rank: Option<String>,
    device: Option<String>,
    step: Option<String>,
    collectives: usize,
    time_s: f64,
    exposed_s: Option<f64>,
    overlapped_s: Option<f64>,
}

/// One collective matched across ranks.
#[derive(Serialize)]
struct JsonSynchronised {
    process_group: String,
    sequence: u64,
    collective: &'static str,
    ranks: usize,
    bytes: Option<f64>,
    skew_s: f64,
    straggler: String,
    first: String,
    straggler_time_s: f64,
    longest_time_s: f64,
}

/// The collectives beyond each kernel's row: exposure per step, skew across ranks.
#[derive(Serialize)]
struct JsonComm {
    steps: Vec<JsonStep>,
    synchronised: Vec<JsonSynchronised>,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct JsonInfo<'a> {
    schema_version: u32,
    complete: bool,
    description: Option<&'a str>,
    devices: Vec<JsonDevice<'a>>,
    kernels: Vec<InfoRow>,
    /// Present when the bundle holds collectives.
    #[serde(skip_serializing_if = "Option::is_none")]
    communication: Option<JsonComm>,
}

fn ceiling_list(c: &Ceilings) -> Vec<JsonCeiling> {
    let bw = c.levels().map(|(l, v)| JsonCeiling {
        name: l.key(),
        value: v.value,
        unit: "byte/s",
        method: v.method,
        source: c.bandwidth_pick(l).map(|p| p.source.key()),
    });
    let cp = c.datapaths().map(|(d, v)| JsonCeiling {
        name: d.key(),
        value: v.value,
        unit: "FLOP/s",
        method: v.method,
        source: c.peak_pick(d).map(|p| p.source.key()),
    });
    bw.chain(cp).collect()
}

/// The JSON: devices with the ceilings used for bounds, and the same rows as the CSV.
pub fn to_json(bundle: &Bundle) -> String {
    to_json_with(bundle, &comm::CommAcc::of(bundle))
}

/// [`to_json`] of a bundle whose kernels were aggregated as they were read, with the collective
/// launches `comm` gathered on the way (exposure per step and skew need each launch).
pub fn to_json_with(bundle: &Bundle, comm_acc: &comm::CommAcc) -> String {
    let devices = bundle
        .devices
        .iter()
        .map(|d| {
            let c = Ceilings::of_device(bundle, Some(&d.id));
            JsonDevice {
                id: &d.id,
                name: &d.name,
                compute_capability: d.compute_capability.as_deref(),
                ceilings_from: c.as_ref().and_then(Ceilings::origin_words),
                ceilings: c.as_ref().map(ceiling_list).unwrap_or_default(),
                launch_overhead_s: c.as_ref().and_then(|c| c.launch_overhead_s),
                launch_overhead_source: c
                    .as_ref()
                    .and_then(|c| c.launch_overhead_source)
                    .map(|s| s.key()),
                links: bundle
                    .machine_of(Some(&d.id))
                    .map(|m| {
                        m.links
                            .iter()
                            .map(|l| JsonCeiling {
                                name: l.link.key(),
                                value: l.value,
                                unit: "byte/s",
                                method: l.method,
                                source: Some(
                                    analysis::ceilings::CeilingSource::of(
                                        l.method,
                                        l.source.as_ref(),
                                    )
                                    .key(),
                                ),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect();
    let communication = (!comm_acc.records.is_empty()).then(|| {
        let (synchronised, notes) = comm::synchronised(&comm_acc.records);
        JsonComm {
            steps: comm::per_step(&comm_acc.records)
                .into_iter()
                .map(|s| JsonStep {
                    rank: s.rank,
                    device: s.device,
                    step: s.step,
                    collectives: s.collectives,
                    time_s: s.time_s,
                    exposed_s: s.exposed_s,
                    overlapped_s: s.overlapped_s,
                })
                .collect(),
            synchronised: synchronised
                .into_iter()
                .map(|s| JsonSynchronised {
                    process_group: s.process_group,
                    sequence: s.sequence,
                    collective: s.kind.key(),
                    ranks: s.ranks,
                    bytes: s.bytes,
                    skew_s: s.skew_s,
                    straggler: s.straggler,
                    first: s.first,
                    straggler_time_s: s.straggler_s,
                    longest_time_s: s.longest_s,
                })
                .collect(),
            notes,
        }
    });
    let info = JsonInfo {
        schema_version: bundle.schema_version,
        complete: bundle.complete,
        description: bundle.description.as_deref(),
        devices,
        kernels: Report::new(bundle).rows(bundle),
        communication,
    };
    let mut s = serde_json::to_string_pretty(&info).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{DataSource, Provenance};

    fn bundle(kernels: Vec<Kernel>) -> Bundle {
        let mut b = Bundle::new(Provenance::default());
        b.kernels = kernels;
        b
    }

    /// An operator whose calls launch several kernels: F per call is F over calls, not over
    /// launches (three kernels per call would read a third of it).
    #[test]
    fn operators_have_calls_and_per_call_figures() {
        use crate::analysis::group::{GroupBy, regroup};
        use crate::bundle::{Complexity, OperatorCall};
        let mut kernels = Vec::new();
        for call in [1, 2] {
            for name in ["wgrad", "dgrad", "reduce"] {
                let mut k = Kernel::new(name, 1e-3, DataSource::Import);
                k.operator = Some(OperatorCall {
                    name: "aten::convolution_backward".into(),
                    call,
                    kernels: 3,
                    shapes: None,
                    complexity: Some(Complexity::new(6e9, 3e6)),
                    rule: None,
                });
                kernels.push(k);
            }
        }
        let mut b = bundle(kernels);
        regroup(&mut b, GroupBy::Operator);
        let rows = Report::new(&b).rows(&b);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!((r.launches, r.calls), (6, Some(2)));
        assert_eq!(r.complexity_flops, Some(12e9));
        assert_eq!(r.flops_per_call, Some(6e9));
        assert_eq!(r.bytes_per_call, Some(3e6));
        let csv = to_csv(&b);
        assert!(
            csv.lines().nth(1).unwrap().ends_with(&format!(
                ",2,6000000000.0,3000000.0{}",
                ",".repeat(COMM_COLUMNS.len())
            )),
            "{csv}"
        );
        // Per kernel name: no calls.
        let plain = bundle(vec![Kernel::new("k", 1e-3, DataSource::Suite)]);
        assert_eq!(Report::new(&plain).rows(&plain)[0].calls, None);
    }

    #[test]
    fn no_negative_zero_in_any_output() {
        // A kernel without Tensor Core FLOPs: the empty sum of its tensor datapaths.
        let mut k = Kernel::new("k", 1e-3, DataSource::Suite);
        k.flops.fp32 = Some(1e9);
        let b = bundle(vec![k]);
        let csv = to_csv(&b);
        assert!(!csv.contains("-0.0"), "{csv}");
        assert!(
            csv.lines().nth(1).unwrap().contains(",1000000000.0,0.0,"),
            "{csv}"
        );
        let json = to_json(&b);
        assert!(!json.contains("-0.0"), "{json}");
        assert_eq!(num(-0.0), "0.0");
    }

    #[test]
    fn csv_text_cells_are_neutralised_against_formulas() {
        for (name, cell) in [
            ("=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""),
            ("+1", "'+1"),
            ("-1", "'-1"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "\"'\rx\""),
            ("void k<1, 2>()", "\"void k<1, 2>()\""),
            ("plain", "plain"),
        ] {
            assert_eq!(csv_field(name), cell, "{name:?}");
        }
        let b = bundle(vec![Kernel::new("=1+1", 1e-3, DataSource::Suite)]);
        let row = to_csv(&b).lines().nth(1).unwrap().to_string();
        assert!(row.starts_with("'=1+1,"), "{row}");
    }

    #[test]
    fn figures_beyond_a_double_are_empty_cells() {
        let mut k = Kernel::new("k", 1e-300, DataSource::Suite);
        k.flops.fp32 = Some(1e308);
        k.bytes.hbm = Some(1.0);
        let csv = to_csv(&bundle(vec![k]));
        assert!(!csv.contains("inf") && !csv.contains("NaN"), "{csv}");
    }

    /// The binding ceiling, by name, and where its figure comes from are the last columns
    /// (appended: the columns before them are a stable interface) and JSON fields.
    #[test]
    fn the_binding_ceiling_is_a_column_appended_after_the_stable_ones() {
        use crate::bundle::MemoryLevel;
        use crate::bundle::{BandwidthCeiling, ComputeCeiling, Datapath, Device, Machine, Method};
        let mut k = Kernel::new("k", 1e-3, DataSource::Suite);
        k.device = Some("0".into());
        k.flops.fp32 = Some(1e9);
        k.bytes.hbm = Some(1e9);
        let mut b = bundle(vec![k]);
        b.devices.push(Device::new("0", "GPU"));
        b.machines.push(Machine {
            device: "0".into(),
            bandwidth: vec![BandwidthCeiling::new(
                MemoryLevel::Hbm,
                1e12,
                Method::Empirical,
            )],
            compute: vec![ComputeCeiling::new(Datapath::Fp32, 1e13, Method::Empirical)],
            ..Machine::default()
        });
        assert_eq!(CSV_COLUMNS[26], "binding_ceiling");
        assert_eq!(CSV_COLUMNS[27], "ceiling_source");
        assert_eq!(CSV_COLUMNS.last(), Some(&"bytes_per_call"));
        assert_eq!(CSV_COLUMNS[..16].last(), Some(&"region"));
        let csv = to_csv(&b);
        assert!(csv.lines().next().unwrap().ends_with(&format!(
            ",missing_peaks,binding_ceiling,ceiling_source,calls,flops_per_call,bytes_per_call,{}",
            COMM_COLUMNS.join(",")
        )));
        let no_comm = ",".repeat(COMM_COLUMNS.len());
        // AI 1 against a ridge of 10: bound by HBM, a measured ceiling.
        assert!(
            csv.lines()
                .nth(1)
                .unwrap()
                .ends_with(&format!(",hbm,measured,,,{no_comm}")),
            "{csv}"
        );
        assert!(to_json(&b).contains(r#""binding_ceiling": "hbm""#));
        assert!(to_json(&b).contains(r#""ceiling_source": "measured""#));
        // A compute-bound kernel names its roof.
        b.kernels[0].bytes.hbm = Some(1e6);
        assert!(
            to_csv(&b)
                .lines()
                .nth(1)
                .unwrap()
                .ends_with(&format!(",fp32,measured,,,{no_comm}"))
        );
    }

    /// A collective's row: nccl-tests' figures against its link, which is its binding ceiling;
    /// the exposure per step and the skew across ranks in the JSON.
    #[test]
    fn a_collective_row_carries_its_link() {
        use crate::bundle::{
            Collective, CollectiveKind, Device, FigureSource, LinkCeiling, LinkKind, Machine,
            Scope, SourceKind,
        };
        let mut b = bundle(Vec::new());
        for rank in ["0", "1"] {
            b.devices.push(Device::new(format!("rank{rank}"), "GPU"));
            b.machines.push(Machine {
                device: format!("rank{rank}"),
                links: vec![LinkCeiling {
                    link: LinkKind::Nvlink,
                    value: 150e9,
                    method: Method::Theoretical,
                    implementation: None,
                    source: Some(FigureSource {
                        kind: SourceKind::Derived,
                        citation: "x".into(),
                    }),
                }],
                ..Machine::default()
            });
            let mut k = Kernel::new("ncclKernel_AllReduce", 1e-3, DataSource::Import);
            k.device = Some(format!("rank{rank}"));
            k.tags.insert("rank".into(), rank.into());
            let mut c = Collective::new(CollectiveKind::AllReduce);
            c.bytes = Some(1e9);
            c.group_size = Some(8);
            c.scope = Some(Scope::IntraNode);
            c.sequence = Some(0);
            c.start_ns = Some(if rank == "0" { 1_000 } else { 251_000 });
            c.exposed_s = Some(0.6e-3);
            c.overlapped_s = Some(0.4e-3);
            k.collective = Some(c);
            b.kernels.push(k);
        }
        let rows = Report::new(&b).rows(&b);
        let r = &rows[0];
        assert_eq!(r.comm_collective, Some("all_reduce"));
        assert_eq!(r.comm_algbw_byte_per_s, Some(1e12));
        assert_eq!(r.comm_busbw_byte_per_s, Some(1.75e12));
        assert_eq!(r.comm_link, Some("nvlink"));
        assert_eq!(r.binding_ceiling, Some("nvlink"));
        assert_eq!(r.ceiling_source, Some("derived"));
        assert!((r.comm_link_share.unwrap() - 1.75e12 / 150e9).abs() < 1e-9);
        let csv = to_csv(&b);
        assert!(
            csv.lines().nth(1).unwrap().ends_with(
                ",all_reduce,1000000000.0,8,1000000000000.0,1750000000000.0,nvlink,150000000000.0,11.666666666666666,derived,0.0006,0.0004,"
            ),
            "{csv}"
        );
        let json = to_json(&b);
        assert!(json.contains(r#""skew_s": 0.00025"#), "{json}");
        assert!(json.contains(r#""straggler": "1""#), "{json}");
        assert!(json.contains(r#""name": "nvlink""#), "{json}");
    }

    #[test]
    fn display_names_do_not_collide() {
        let a =
            "void at::native::vectorized_elementwise_kernel<4, at::native::mul_kernel_cuda>(int)";
        let b =
            "void at::native::vectorized_elementwise_kernel<4, at::native::add_kernel_cuda>(int)";
        let bn = bundle(vec![
            Kernel::new(a, 2e-3, DataSource::Suite),
            Kernel::new(b, 1e-3, DataSource::Suite),
        ]);
        let r = Report::new(&bn);
        let names: Vec<String> = r.rows(&bn).into_iter().map(|r| r.display_name).collect();
        assert_eq!(
            names,
            [
                "vectorized_elementwise_kernel [mul_kernel_cuda]",
                "vectorized_elementwise_kernel [add_kernel_cuda]"
            ]
        );
    }
}
