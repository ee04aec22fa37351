//! Collectives against the links they run on: each NCCL kernel's algorithm and bus bandwidth
//! (nccl-tests' definitions, `doc/PERFORMANCE.md` of NVIDIA/nccl-tests), the link that binds it
//! and its share of that link's peak ([`analyze_collective`]); the communication exposed per
//! step ([`per_step`]); and, across ranks, each collective's synchronisation skew and its
//! straggler ([`synchronised`]). [`CommAcc`] gathers what these need one kernel at a time, for
//! readers that never hold a whole bundle.
//!
//! Unknown stays unknown: a collective whose message size, group size, scope or link ceiling is
//! not recorded gets no bus bandwidth or share, and [`CommAnalysis::missing`] says what is
//! missing.

use std::cmp::Ordering;

use crate::analysis::ceilings::CeilingSource;
use crate::analysis::kernel::sort_indices;
use crate::bundle::{
    Bundle, Collective, CollectiveKind, Kernel, LinkCeiling, LinkKind, Machine, Method, Scope,
};

/// nccl-tests' bus-bandwidth factor for a collective of `n` ranks (`doc/PERFORMANCE.md`,
/// "Summary"): all-reduce `2(n−1)/n`; all-gather, reduce-scatter and all-to-all `(n−1)/n`;
/// broadcast, reduce and send/recv 1. `busbw = algbw × factor` is what the slowest link of the
/// collective carries per rank, "independently of the number of ranks". `None` for the
/// collectives it defines no factor for (gather, scatter, others), or a group of no rank.
pub fn bus_factor(kind: CollectiveKind, n: u32) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let n = f64::from(n);
    match kind {
        CollectiveKind::AllReduce => Some(2.0 * (n - 1.0) / n),
        CollectiveKind::AllGather | CollectiveKind::ReduceScatter | CollectiveKind::AllToAll => {
            Some((n - 1.0) / n)
        }
        CollectiveKind::Broadcast | CollectiveKind::Reduce | CollectiveKind::SendRecv => Some(1.0),
        CollectiveKind::Gather | CollectiveKind::Scatter | CollectiveKind::Other => None,
    }
}

/// The link a collective of `scope` runs on, among a device's `links`: within a node NVLink,
/// or PCIe where the device has no NVLink ceiling; across nodes the network. Of several
/// ceilings of one link, a measured one before a datasheet's, then the highest.
pub fn binding_link(scope: Scope, links: &[LinkCeiling]) -> Option<&LinkCeiling> {
    let best = |kind: LinkKind| {
        links.iter().filter(|l| l.link == kind).max_by(|a, b| {
            let rank = |l: &LinkCeiling| (l.method == Method::Empirical) as u8;
            rank(a).cmp(&rank(b)).then(a.value.total_cmp(&b.value))
        })
    };
    match scope {
        Scope::IntraNode => best(LinkKind::Nvlink).or_else(|| best(LinkKind::Pcie)),
        Scope::InterNode => best(LinkKind::Network),
    }
}

/// What is missing for a collective's figures, in words for a note or a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Missing {
    /// The message's size is not recorded (no `In msg nelems`, no recorded input).
    Bytes,
    /// The group's size is not recorded and was not given.
    GroupSize,
    /// nccl-tests gives this collective no bus-bandwidth factor.
    Factor,
    /// Whether the group's ranks share a node is unknown (their ranks, or the GPUs per node).
    Scope,
    /// The device has no ceiling of the link the collective runs on.
    Link,
}

impl Missing {
    /// In words.
    pub fn words(self) -> &'static str {
        match self {
            Missing::Bytes => "message size not recorded",
            Missing::GroupSize => "group size not recorded (--group-size)",
            Missing::Factor => "no bus-bandwidth factor for this collective",
            Missing::Scope => "ranks per node unknown (--gpus-per-node)",
            Missing::Link => "no ceiling for its link",
        }
    }
}

/// One collective entry's figures against its link.
#[derive(Debug, Clone, PartialEq)]
pub struct CommAnalysis {
    /// Which collective.
    pub kind: CollectiveKind,
    /// nccl-tests' size S, bytes (summed over the entry's launches).
    pub bytes: Option<f64>,
    /// The ranks of the group.
    pub group_size: Option<u32>,
    /// The kernels' time, seconds.
    pub time_s: f64,
    /// Algorithm bandwidth `S / t`, byte/s (nccl-tests' `algbw`).
    pub algbw: Option<f64>,
    /// Bus bandwidth `algbw × factor` ([`bus_factor`]), byte/s.
    pub busbw: Option<f64>,
    /// The link the collective runs on ([`binding_link`]).
    pub link: Option<LinkKind>,
    /// That link's bandwidth, byte/s in one direction.
    pub link_peak: Option<f64>,
    /// Where the link's figure comes from.
    pub link_source: Option<CeilingSource>,
    /// `busbw / link_peak`: the share of the link's peak the collective used.
    pub link_share: Option<f64>,
    /// Exposed communication, seconds (see [`Collective::exposed_s`]).
    pub exposed_s: Option<f64>,
    /// Overlapped communication, seconds.
    pub overlapped_s: Option<f64>,
    /// What kept a figure unknown, in the order of the figures.
    pub missing: Vec<Missing>,
}

impl CommAnalysis {
    /// What is missing, in words (`;`-separated), empty when nothing is.
    pub fn missing_words(&self) -> String {
        self.missing
            .iter()
            .map(|m| m.words())
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A collective kernel entry (one launch, or aggregated) against its device's `machine`: its
/// algbw and busbw, the binding link and its share of the link's peak; `None` for a kernel that
/// is no collective.
pub fn analyze_collective(k: &Kernel, machine: Option<&Machine>) -> Option<CommAnalysis> {
    let c = k.collective.as_ref()?;
    Some(analyze(
        c,
        k.time.total_s,
        machine.map(|m| m.links.as_slice()),
    ))
}

/// [`analyze_collective`] of a collective that ran `time_s`, against `links`.
pub fn analyze(c: &Collective, time_s: f64, links: Option<&[LinkCeiling]>) -> CommAnalysis {
    let mut missing = Vec::new();
    let positive = |v: f64| (v.is_finite() && v >= 0.0).then_some(v);
    let algbw = match c.bytes {
        Some(b) if time_s > 0.0 => positive(b / time_s),
        Some(_) => None,
        None => {
            missing.push(Missing::Bytes);
            None
        }
    };
    let factor = match c.group_size {
        Some(n) => {
            let f = bus_factor(c.kind, n);
            if f.is_none() {
                missing.push(Missing::Factor);
            }
            f
        }
        None => {
            missing.push(Missing::GroupSize);
            None
        }
    };
    let busbw = algbw.zip(factor).map(|(a, f)| a * f);
    let link = match c.scope {
        Some(s) => {
            let l = links.and_then(|ls| binding_link(s, ls));
            if l.is_none() {
                missing.push(Missing::Link);
            }
            l
        }
        None => {
            missing.push(Missing::Scope);
            None
        }
    };
    let link_peak = link.map(|l| l.value);
    CommAnalysis {
        kind: c.kind,
        bytes: c.bytes,
        group_size: c.group_size,
        time_s,
        algbw,
        busbw,
        link: link.map(|l| l.link),
        link_peak,
        link_source: link.map(|l| CeilingSource::of(l.method, l.source.as_ref())),
        link_share: busbw
            .zip(link_peak)
            .and_then(|(b, p)| positive(b / p).filter(|_| p > 0.0)),
        exposed_s: c.exposed_s,
        overlapped_s: c.overlapped_s,
        missing,
    }
}

/// What [`per_step`] and [`synchronised`] read of one collective launch (or of an aggregated
/// entry, which [`synchronised`] leaves out: it has no one start).
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveRecord {
    /// The kernel's name.
    pub name: String,
    /// Its device.
    pub device: Option<String>,
    /// Its `rank` tag.
    pub rank: Option<String>,
    /// Its `step` tag (`ProfilerStep#N`).
    pub step: Option<String>,
    /// The collective.
    pub collective: Collective,
    /// The kernel's time, seconds.
    pub time_s: f64,
}

/// Collects the collective launches of kernels read one at a time (a bundle streamed): only
/// they are kept, so memory grows with the collectives, not the kernels.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommAcc {
    /// The collective launches seen, in order.
    pub records: Vec<CollectiveRecord>,
}

impl CommAcc {
    /// Keeps `k` if it is a collective.
    pub fn push(&mut self, k: &Kernel, device: Option<&str>) {
        let Some(c) = &k.collective else { return };
        self.records.push(CollectiveRecord {
            name: k.name.clone(),
            device: device.map(str::to_string),
            rank: k.tags.get("rank").cloned(),
            step: k.tags.get("step").cloned(),
            collective: c.clone(),
            time_s: k.time.total_s,
        });
    }

    /// Every collective launch of a bundle held whole.
    pub fn of(bundle: &Bundle) -> Self {
        Self::of_kernels(bundle, &bundle.kernels)
    }

    /// Every collective of `kernels`, a bundle's launches (which a reader may keep apart from
    /// the bundle's aggregated entries).
    pub fn of_kernels(bundle: &Bundle, kernels: &[Kernel]) -> Self {
        let mut acc = CommAcc::default();
        for k in kernels {
            acc.push(k, bundle.device_of(k));
        }
        acc
    }
}

/// The collective launches of one kernel name on one device that carried one collective: what
/// a table lists per collective (a kernel name may carry several: NCCL's `SendRecv` kernel runs
/// all-to-all and send/recv alike).
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveGroup {
    /// The kernel's name.
    pub name: String,
    /// Its device.
    pub device: Option<String>,
    /// Launches.
    pub launches: u64,
    /// Their time, seconds.
    pub time_s: f64,
    /// Their collective, summed ([`crate::bundle::Collective`]: sizes and times summed, what
    /// every launch agrees on kept).
    pub collective: Collective,
}

/// The collective launches grouped by (device, kernel name, collective), in order of first
/// appearance.
pub fn groups(records: &[CollectiveRecord]) -> Vec<CollectiveGroup> {
    let mut out: Vec<CollectiveGroup> = Vec::new();
    for r in records {
        let same = |g: &&mut CollectiveGroup| {
            g.device == r.device && g.name == r.name && g.collective.kind == r.collective.kind
        };
        match out.iter_mut().find(same) {
            Some(g) => {
                g.launches += 1;
                g.time_s += r.time_s;
                crate::analysis::aggregate::merge_collective(&mut g.collective, &r.collective);
            }
            None => {
                out.push(CollectiveGroup {
                    name: r.name.clone(),
                    device: r.device.clone(),
                    launches: 1,
                    time_s: r.time_s,
                    collective: r.collective.clone(),
                });
            }
        }
    }
    // A group of several launches has no one place or start.
    for g in &mut out {
        if g.launches > 1 {
            g.collective.sequence = None;
            g.collective.start_ns = None;
        }
    }
    out
}

/// Communication in one step of one rank (or device).
#[derive(Debug, Clone, PartialEq)]
pub struct StepComm {
    /// The rank, where tagged.
    pub rank: Option<String>,
    /// The device.
    pub device: Option<String>,
    /// The step (`ProfilerStep#N`); `None` for collectives outside any step.
    pub step: Option<String>,
    /// Collective launches.
    pub collectives: usize,
    /// Their kernels' time, seconds.
    pub time_s: f64,
    /// Exposed: no compute kernel on any stream of the device, seconds; `None` when a launch
    /// of the step does not say.
    pub exposed_s: Option<f64>,
    /// Overlapped with compute on another stream, seconds.
    pub overlapped_s: Option<f64>,
}

/// Exposed and overlapped communication per (rank, device, step), in order of rank, device and
/// step: the sums of each launch's own split ([`Collective::exposed_s`], which counts an
/// instant under several collectives once).
pub fn per_step(records: &[CollectiveRecord]) -> Vec<StepComm> {
    let mut steps: Vec<StepComm> = Vec::new();
    for r in records {
        let same = |s: &&mut StepComm| s.rank == r.rank && s.device == r.device && s.step == r.step;
        let e = match steps.iter_mut().position(|s| same(&s)) {
            Some(i) => &mut steps[i],
            None => {
                steps.push(StepComm {
                    rank: r.rank.clone(),
                    device: r.device.clone(),
                    step: r.step.clone(),
                    collectives: 0,
                    time_s: 0.0,
                    exposed_s: Some(0.0),
                    overlapped_s: Some(0.0),
                });
                steps.last_mut().expect("just pushed")
            }
        };
        e.collectives += 1;
        e.time_s += r.time_s;
        e.exposed_s = e.exposed_s.zip(r.collective.exposed_s).map(|(a, b)| a + b);
        e.overlapped_s = e
            .overlapped_s
            .zip(r.collective.overlapped_s)
            .map(|(a, b)| a + b);
    }
    // Ranks and steps by number where they are numbers (ProfilerStep#10 after #9).
    let step_no = |s: &StepComm| {
        s.step
            .as_deref()
            .and_then(|s| s.rsplit('#').next())
            .and_then(|n| n.parse::<u64>().ok())
    };
    let mut order: Vec<usize> = (0..steps.len()).collect();
    sort_indices(&mut order, &|a, b| {
        let (x, y) = (&steps[a], &steps[b]);
        by_number(x.rank.as_deref(), y.rank.as_deref())
            .then_with(|| x.device.cmp(&y.device))
            .then_with(|| step_no(x).cmp(&step_no(y)))
            .then_with(|| x.step.cmp(&y.step))
    });
    order.into_iter().map(|i| steps[i].clone()).collect()
}

/// A record's process group (`default` where none is named).
fn group_of(r: &CollectiveRecord) -> &str {
    r.collective.process_group.as_deref().unwrap_or("default")
}

/// Two ranks (or other names) in order: by number where both are numbers, else as text.
fn by_number(a: Option<&str>, b: Option<&str>) -> Ordering {
    let n = |s: Option<&str>| s.and_then(|s| s.parse::<u64>().ok());
    match (n(a), n(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => a.cmp(&b),
    }
}

/// One collective matched across ranks: the spread of its start.
#[derive(Debug, Clone, PartialEq)]
pub struct Synchronised {
    /// Its process group.
    pub process_group: String,
    /// Its place among the group's collectives.
    pub sequence: u64,
    /// Which collective.
    pub kind: CollectiveKind,
    /// The ranks it was found on.
    pub ranks: usize,
    /// Its size S on the rank that started first, bytes, when recorded.
    pub bytes: Option<f64>,
    /// The spread of its kernels' start across the ranks, seconds: the last start less the
    /// first.
    pub skew_s: f64,
    /// The rank whose kernel started last: the one the others waited for.
    pub straggler: String,
    /// The rank whose kernel started first.
    pub first: String,
    /// The longest kernel time among the ranks, seconds (the first to arrive waits longest).
    pub longest_s: f64,
    /// The straggler's kernel time, seconds.
    pub straggler_s: f64,
}

/// Collectives matched across ranks by their place in their process group
/// ([`Collective::sequence`]): the same (group, place) on every rank that has it, of the same
/// kind and element type, and of the same size where the collective's size is the same on every
/// rank (all but all-to-all and send/recv), where both ranks record them. Matching a group stops where its ranks
/// part (another kind, another size: their windows hold different collectives), and the notes
/// say so. Only launches with a rank, a start and a place take part; one rank gives nothing.
pub fn synchronised(records: &[CollectiveRecord]) -> (Vec<Synchronised>, Vec<String>) {
    let mut notes = Vec::new();
    let taking: Vec<&CollectiveRecord> = records
        .iter()
        .filter(|r| {
            r.rank.is_some() && r.collective.sequence.is_some() && r.collective.start_ns.is_some()
        })
        .collect();
    let mut ranks: Vec<&str> = Vec::new();
    for r in &taking {
        let rank = r.rank.as_deref().unwrap_or_default();
        if !ranks.contains(&rank) {
            ranks.push(rank);
        }
    }
    if ranks.len() < 2 {
        return (Vec::new(), notes);
    }
    // By group, place, then rank.
    let mut order: Vec<usize> = (0..taking.len()).collect();
    sort_indices(&mut order, &|a, b| {
        let (x, y) = (taking[a], taking[b]);
        group_of(x)
            .cmp(group_of(y))
            .then_with(|| x.collective.sequence.cmp(&y.collective.sequence))
            .then_with(|| by_number(x.rank.as_deref(), y.rank.as_deref()))
    });
    let symmetric =
        |k: CollectiveKind| !matches!(k, CollectiveKind::AllToAll | CollectiveKind::SendRecv);
    let start = |r: &CollectiveRecord| r.collective.start_ns.unwrap_or(0);
    let rank = |r: &CollectiveRecord| r.rank.clone().unwrap_or_default();
    let mut out = Vec::new();
    let mut parted_group: Option<&str> = None;
    let mut at = 0;
    while at < order.len() {
        let head = taking[order[at]];
        let (group, seq) = (group_of(head), head.collective.sequence);
        let mut end = at + 1;
        while end < order.len() && {
            let r = taking[order[end]];
            group_of(r) == group && r.collective.sequence == seq
        } {
            end += 1;
        }
        let place: Vec<&CollectiveRecord> = order[at..end].iter().map(|&i| taking[i]).collect();
        at = end;
        if place.len() < 2 || parted_group == Some(group) {
            continue;
        }
        let first = place[0];
        let parted = place.iter().find(|r| {
            let (a, b) = (&r.collective, &first.collective);
            a.kind != b.kind
                || matches!((&a.dtype, &b.dtype), (Some(x), Some(y)) if x != y)
                || (symmetric(b.kind) && matches!((a.bytes, b.bytes), (Some(x), Some(y)) if x != y))
        });
        if let Some(r) = parted {
            let what = |r: &CollectiveRecord| {
                format!(
                    "{}{}{}",
                    r.collective.kind.label(),
                    r.collective
                        .bytes
                        .map(|b| format!(" of {b} bytes"))
                        .unwrap_or_default(),
                    r.collective
                        .dtype
                        .as_deref()
                        .map(|d| format!(" of {d}"))
                        .unwrap_or_default()
                )
            };
            notes.push(format!(
                "collectives of process group {group} matched across ranks up to #{}, where the ranks part (rank {}: {}, rank {}: {}): their traces hold different collectives from there, so the rest are not matched",
                seq.unwrap_or_default(),
                rank(first),
                what(first),
                rank(r),
                what(r)
            ));
            parted_group = Some(group);
            continue;
        }
        // The earliest start (the lower rank on a tie) and the latest (the lower rank too).
        let mut earliest = place[0];
        let mut latest = place[0];
        for &r in &place[1..] {
            if start(r) < start(earliest) {
                earliest = r;
            }
            if start(r) > start(latest) {
                latest = r;
            }
        }
        out.push(Synchronised {
            process_group: group.to_string(),
            sequence: seq.unwrap_or_default(),
            kind: first.collective.kind,
            ranks: place.len(),
            bytes: earliest.collective.bytes,
            skew_s: (start(latest) - start(earliest)) as f64 / 1e9,
            straggler: rank(latest),
            first: rank(earliest),
            longest_s: place.iter().map(|r| r.time_s).fold(0.0, f64::max),
            straggler_s: latest.time_s,
        });
    }
    (out, notes)
}

/// The exposed communication in words, one entry per step of each rank (at most `max`, the
/// rest counted): `ProfilerStep#10 (rank 0): 5.54 ms exposed, 261 µs overlapped of 5.8 ms`.
pub fn exposure_words(steps: &[StepComm], max: usize) -> Option<String> {
    use crate::analysis::si::format_si;
    if steps.is_empty() {
        return None;
    }
    let opt = |v: Option<f64>| v.map_or_else(|| "?".to_string(), |v| format_si(v, "s"));
    let mut parts: Vec<String> = steps
        .iter()
        .take(max)
        .map(|s| {
            let who = match (&s.rank, &s.device) {
                (Some(r), _) => format!(" (rank {r})"),
                (None, Some(d)) => format!(" (device {d})"),
                (None, None) => String::new(),
            };
            format!(
                "{}{who}: {} exposed, {} overlapped of {}",
                s.step.as_deref().unwrap_or("outside any step"),
                opt(s.exposed_s),
                opt(s.overlapped_s),
                format_si(s.time_s, "s")
            )
        })
        .collect();
    if steps.len() > max {
        parts.push(format!("{} more", steps.len() - max));
    }
    Some(format!("Exposed communication: {}", parts.join("; ")))
}

/// The collective launches with the largest skew first.
pub fn by_skew(s: &[Synchronised]) -> Vec<&Synchronised> {
    let mut order: Vec<usize> = (0..s.len()).collect();
    sort_indices(&mut order, &|a, b| s[b].skew_s.total_cmp(&s[a].skew_s));
    order.into_iter().map(|i| &s[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{DataSource, FigureSource, GroupSizeSource, SourceKind};

    fn link(kind: LinkKind, value: f64, method: Method) -> LinkCeiling {
        LinkCeiling {
            link: kind,
            value,
            method,
            implementation: None,
            source: Some(FigureSource {
                kind: SourceKind::Derived,
                citation: "x".into(),
            }),
        }
    }

    #[test]
    fn factors_are_nccl_tests() {
        assert_eq!(bus_factor(CollectiveKind::AllReduce, 8), Some(1.75));
        assert_eq!(bus_factor(CollectiveKind::AllGather, 8), Some(0.875));
        assert_eq!(bus_factor(CollectiveKind::ReduceScatter, 2), Some(0.5));
        assert_eq!(bus_factor(CollectiveKind::AllToAll, 4), Some(0.75));
        assert_eq!(bus_factor(CollectiveKind::Broadcast, 8), Some(1.0));
        assert_eq!(bus_factor(CollectiveKind::Reduce, 8), Some(1.0));
        assert_eq!(bus_factor(CollectiveKind::SendRecv, 2), Some(1.0));
        assert_eq!(bus_factor(CollectiveKind::Gather, 8), None);
        assert_eq!(bus_factor(CollectiveKind::AllReduce, 0), None);
        assert_eq!(bus_factor(CollectiveKind::AllReduce, 1), Some(0.0));
    }

    #[test]
    fn the_link_follows_the_scope() {
        let links = [
            link(LinkKind::Pcie, 32e9, Method::Theoretical),
            link(LinkKind::Nvlink, 450e9, Method::Theoretical),
            link(LinkKind::Network, 50e9, Method::Theoretical),
        ];
        assert_eq!(
            binding_link(Scope::IntraNode, &links).map(|l| l.link),
            Some(LinkKind::Nvlink)
        );
        assert_eq!(
            binding_link(Scope::IntraNode, &links[..1]).map(|l| l.link),
            Some(LinkKind::Pcie)
        );
        assert_eq!(
            binding_link(Scope::InterNode, &links).map(|l| l.link),
            Some(LinkKind::Network)
        );
        assert!(binding_link(Scope::InterNode, &links[..2]).is_none());
        // A measured ceiling before a datasheet's, even a lower one.
        let two = [
            link(LinkKind::Nvlink, 450e9, Method::Theoretical),
            link(LinkKind::Nvlink, 370e9, Method::Empirical),
        ];
        assert_eq!(binding_link(Scope::IntraNode, &two).unwrap().value, 370e9);
    }

    /// An all-reduce of 26.5 MB over 8 ranks in 1 ms: algbw 26.5 GB/s, busbw × 1.75.
    #[test]
    fn a_collective_against_its_link() {
        let mut c = Collective::new(CollectiveKind::AllReduce);
        c.bytes = Some(26.5e6);
        c.group_size = Some(8);
        c.group_size_from = Some(GroupSizeSource::Recorded);
        c.scope = Some(Scope::IntraNode);
        let links = [link(LinkKind::Nvlink, 150e9, Method::Theoretical)];
        let a = analyze(&c, 1e-3, Some(&links));
        assert_eq!(a.algbw, Some(26.5e9));
        assert_eq!(a.busbw, Some(26.5e9 * 1.75));
        assert_eq!(a.link, Some(LinkKind::Nvlink));
        assert!((a.link_share.unwrap() - 26.5e9 * 1.75 / 150e9).abs() < 1e-12);
        assert_eq!(a.link_source, Some(CeilingSource::Derived));
        assert!(a.missing.is_empty());
        // Unknown stays unknown, and says why.
        let bare = analyze(&Collective::new(CollectiveKind::AllToAll), 1e-3, None);
        assert_eq!(
            (bare.algbw, bare.busbw, bare.link_share),
            (None, None, None)
        );
        assert_eq!(
            bare.missing,
            [Missing::Bytes, Missing::GroupSize, Missing::Scope]
        );
        assert!(bare.missing_words().contains("--group-size"));
    }

    fn record(rank: &str, seq: u64, start: i64, kind: CollectiveKind, t: f64) -> CollectiveRecord {
        let mut c = Collective::new(kind);
        c.sequence = Some(seq);
        c.start_ns = Some(start);
        c.exposed_s = Some(t / 2.0);
        c.overlapped_s = Some(t / 2.0);
        let mut k = Kernel::new("nccl", t, DataSource::Import);
        k.tags.insert("rank".into(), rank.into());
        k.tags.insert("step".into(), "ProfilerStep#3".into());
        k.collective = Some(c);
        let mut acc = CommAcc::default();
        acc.push(&k, Some(rank));
        acc.records.pop().unwrap()
    }

    #[test]
    fn skew_and_straggler_across_ranks() {
        let r = [
            record("0", 0, 1_000, CollectiveKind::AllToAll, 5e-6),
            record("1", 0, 4_000, CollectiveKind::AllToAll, 2e-6),
            record("2", 0, 2_000, CollectiveKind::AllToAll, 4e-6),
            record("0", 1, 10_000, CollectiveKind::AllReduce, 1e-6),
            record("1", 1, 10_500, CollectiveKind::AllReduce, 1e-6),
        ];
        let (s, notes) = synchronised(&r);
        assert!(notes.is_empty());
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].sequence, s[0].ranks), (0, 3));
        assert!((s[0].skew_s - 3e-6).abs() < 1e-15);
        assert_eq!((s[0].straggler.as_str(), s[0].first.as_str()), ("1", "0"));
        assert_eq!((s[0].longest_s, s[0].straggler_s), (5e-6, 2e-6));
        assert!((s[1].skew_s - 0.5e-6).abs() < 1e-15);
        // Where the ranks part, matching stops, with a note.
        let parted = [
            record("0", 0, 1_000, CollectiveKind::AllToAll, 1e-6),
            record("1", 0, 1_500, CollectiveKind::AllReduce, 1e-6),
        ];
        let (s, notes) = synchronised(&parted);
        assert!(s.is_empty());
        assert!(notes[0].contains("where the ranks part"), "{notes:?}");
        // An all-to-all's sizes may differ across ranks, its element type not.
        let mut typed = [
            record("0", 0, 1_000, CollectiveKind::AllToAll, 1e-6),
            record("1", 0, 1_500, CollectiveKind::AllToAll, 1e-6),
        ];
        typed[0].collective.bytes = Some(3072.0);
        typed[1].collective.bytes = Some(339_738_624.0);
        assert_eq!(synchronised(&typed).0.len(), 1);
        typed[0].collective.dtype = Some("int64".into());
        typed[1].collective.dtype = Some("uint8".into());
        assert!(synchronised(&typed).0.is_empty());
        // One rank: nothing to match.
        assert!(synchronised(&r[..1]).0.is_empty());
    }

    #[test]
    fn exposure_per_step() {
        let r = [
            record("0", 0, 0, CollectiveKind::AllToAll, 4e-6),
            record("0", 1, 10, CollectiveKind::AllToAll, 2e-6),
            record("1", 0, 0, CollectiveKind::AllToAll, 6e-6),
        ];
        let s = per_step(&r);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].rank.as_deref(), s[0].collectives), (Some("0"), 2));
        assert!((s[0].exposed_s.unwrap() - 3e-6).abs() < 1e-18);
        assert_eq!(s[0].step.as_deref(), Some("ProfilerStep#3"));
        assert_eq!(s[1].time_s, 6e-6);
    }
}
