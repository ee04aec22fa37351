//! `roofline info`: a bundle's devices, ceilings and kernels as a table, CSV or JSON.
//!
//! The figures come from `roofline_model::analysis::report`; this module only lays them out.

use std::fmt::Write as _;

use roofline_model::analysis::ceilings::{CeilingSource, Ceilings};
use roofline_model::analysis::comm::{self, CommAcc};
use roofline_model::analysis::report::calls_of;
pub use roofline_model::analysis::report::{CSV_COLUMNS, InfoRow, Report};
use roofline_model::analysis::si::{format_plain, format_si};
use roofline_model::bundle::{Bundle, Method};

/// The CSV: a header of [`CSV_COLUMNS`], then one row per kernel name.
pub fn to_csv(bundle: &Bundle) -> Vec<u8> {
    roofline_model::analysis::report::to_csv(bundle).into_bytes()
}

/// The JSON: devices with the ceilings used for bounds, and the same rows as the CSV.
pub fn to_json(bundle: &Bundle) -> Vec<u8> {
    roofline_model::analysis::report::to_json(bundle).into_bytes()
}

/// Text from the bundle as the terminal may show it: control characters (escape sequences that
/// would recolour, move the cursor or retitle the terminal, bells, backspaces, line breaks) are
/// replaced by `?`.
fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Lays out rows of cells in columns; the last column is left unpadded.
pub(crate) fn columns(rows: &[Vec<String>], right_aligned: &[bool]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::from("  ");
        for (c, cell) in r.iter().enumerate() {
            let pad = widths[c].saturating_sub(cell.chars().count());
            let last = c + 1 == r.len();
            if right_aligned.get(c).copied().unwrap_or(false) {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if !last {
                    line.push_str(&" ".repeat(pad));
                }
            }
            if !last {
                line.push_str("  ");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn si_opt(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "–".to_string(), |v| format_si(v, unit))
}

fn ratio(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.2}"))
}

fn intensity(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), format_plain)
}

/// The human-readable table: devices and ceilings, then the `top` kernels by share of time.
pub fn to_table(bundle: &Bundle, top: Option<usize>) -> Vec<u8> {
    to_table_of(bundle, top, bundle.kernels.len(), &CommAcc::of(bundle))
}

/// The JSON of a bundle whose kernels were aggregated as it was read, with its collective
/// launches gathered on the way.
pub fn to_json_of(bundle: &Bundle, comm_acc: &CommAcc) -> Vec<u8> {
    roofline_model::analysis::report::to_json_with(bundle, comm_acc).into_bytes()
}

/// [`to_table`] of a bundle whose kernels were aggregated as it was read, which held `entries`
/// kernel entries (the figure the first line gives), with its collective launches `comm_acc`
/// gathered on the way.
pub fn to_table_of(
    bundle: &Bundle,
    top: Option<usize>,
    entries: usize,
    comm_acc: &CommAcc,
) -> Vec<u8> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "bundle schema v{}, {}; {} device{}, {} kernel entr{}",
        bundle.schema_version,
        if bundle.complete {
            "complete"
        } else {
            "INCOMPLETE"
        },
        bundle.devices.len(),
        if bundle.devices.len() == 1 { "" } else { "s" },
        entries,
        if entries == 1 { "y" } else { "ies" },
    );
    if let Some(d) = &bundle.description {
        let _ = writeln!(out, "  {}", printable(d));
    }
    for n in &bundle.notes {
        let _ = writeln!(out, "  note: {}", printable(n));
    }
    for d in &bundle.devices {
        let _ = writeln!(
            out,
            "\ndevice {}: {}{}{}",
            printable(&d.id),
            printable(&d.name),
            d.compute_capability
                .as_deref()
                .map(|c| format!(", compute capability {}", printable(c)))
                .unwrap_or_default(),
            d.sm_count.map(|n| format!(", {n} SMs")).unwrap_or_default(),
        );
        let Some(m) = bundle.machine_of(Some(&d.id)) else {
            let _ = writeln!(
                out,
                "  no machine characterization (run `roofline machine`)"
            );
            continue;
        };
        let c = Ceilings::from_machine(m);
        if let Some(words) = c.origin_words() {
            let _ = writeln!(out, "  ceilings: {}", printable(&words));
        }
        let source = |pick: Option<roofline_model::analysis::ceilings::Pick>, m: Method| {
            pick.map_or_else(|| method(m), |p| p.source.key())
                .to_string()
        };
        let mut rows = vec![vec!["ceiling".into(), "value".into(), "source".into()]];
        for (l, v) in c.levels() {
            rows.push(vec![
                l.label().into(),
                format_si(v.value, "B/s"),
                source(c.bandwidth_pick(l), v.method),
            ]);
        }
        for (p, v) in c.datapaths() {
            rows.push(vec![
                p.label().into(),
                format_si(v.value, "FLOP/s"),
                source(c.peak_pick(p), v.method),
            ]);
        }
        for l in &m.links {
            rows.push(vec![
                format!("{} (one direction)", l.link.label()),
                format_si(l.value, "B/s"),
                CeilingSource::of(l.method, l.source.as_ref())
                    .key()
                    .to_string(),
            ]);
        }
        if let Some(l) = &m.launch_overhead {
            rows.push(vec![
                "launch overhead".into(),
                format_si(l.value_s, "s"),
                c.launch_overhead_source
                    .map_or_else(|| method(l.method), |s| s.key())
                    .to_string(),
            ]);
        }
        out.push_str(&columns(&rows, &[false, true, false]));
    }
    let report = Report::new(bundle);
    let total: f64 = report.analyses.iter().map(|a| a.time_s).sum();
    let launches: u64 = report.kernels.iter().map(|k| k.launches).sum();
    // A run on several devices has a row per device and name: the names are counted once, and
    // each row says its device.
    let several = bundle.devices.len() > 1;
    let distinct = report
        .kernels
        .iter()
        .map(|k| k.name.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let _ = writeln!(
        out,
        "\nkernels: {} name{}{}, {} launch{}, {} in all",
        distinct,
        if distinct == 1 { "" } else { "s" },
        if several {
            format!(
                " on {} devices ({} rows, one per device and name)",
                bundle.devices.len(),
                report.kernels.len()
            )
        } else {
            String::new()
        },
        launches,
        if launches == 1 { "" } else { "es" },
        format_si(total, "s"),
    );
    if report.kernels.is_empty() {
        return out.into_bytes();
    }
    let shown = top.unwrap_or(usize::MAX).min(report.analyses.len());
    let names = report.display_names();
    // Per operator: its calls, and one call's F and B (a call may launch several kernels).
    let per_call = report.kernels.iter().any(|k| calls_of(k).is_some());
    let mut rows = vec![
        [
            "share",
            "time",
            "launches",
            "calls",
            "F/call",
            "B/call",
            "FLOP/s",
            "AI L1",
            "AI L2",
            "AI HBM",
            "bound",
            "headroom",
            "time bound",
            "T/Tbound",
            "device",
            "kernel",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for a in &report.analyses[..shown] {
        let k = &report.kernels[a.index];
        let calls = calls_of(k);
        let per = |v: Option<f64>, unit: &str| {
            calls.map_or_else(
                || "–".to_string(),
                |n| si_opt(v.map(|v| v / n as f64), unit),
            )
        };
        rows.push(vec![
            format!("{:.1}%", a.share_of_time * 100.0),
            format_si(a.time_s, "s"),
            k.launches.to_string(),
            calls.map_or_else(|| "–".to_string(), |n| n.to_string()),
            per(a.complexity_flops, ""),
            per(a.complexity_bytes, "B"),
            si_opt(a.flop_per_s, ""),
            intensity(a.ai[0]),
            intensity(a.ai[1]),
            intensity(a.ai[2]),
            a.hierarchical
                .as_ref()
                .map(|h| h.ceiling_label())
                .or_else(|| {
                    comm::analyze_collective(k, bundle.machine_of(bundle.device_of(k)))
                        .and_then(|c| c.link)
                        .map(|l| l.label())
                })
                .unwrap_or("–")
                .to_string(),
            ratio(a.headroom),
            a.time_ceiling_label().unwrap_or("–").to_string(),
            ratio(a.gap),
            printable(k.device.as_deref().unwrap_or("–")),
            printable(&names[a.index]),
        ]);
    }
    // Per-call columns only per operator, the device only for a run on several devices.
    for r in &mut rows {
        if !several {
            r.remove(r.len() - 2);
        }
        if !per_call {
            r.drain(3..6);
        }
    }
    // Numbers read from the right; the bound, the time bound, the device and the name from the
    // left.
    let right: Vec<bool> = rows[0]
        .iter()
        .map(|h| !matches!(h.as_str(), "bound" | "time bound" | "device" | "kernel"))
        .collect();
    out.push_str(&columns(&rows, &right));
    if let Some(n) = roofline_model::chart::missing_peaks_note(&report.analyses) {
        let _ = writeln!(out, "  note: {n}");
    }
    if let Some(n) = roofline_model::chart::out_of_range_note(&report.analyses, &report.kernels) {
        let _ = writeln!(out, "  note: {}", printable(&n));
    }
    if shown < report.analyses.len() {
        let _ = writeln!(
            out,
            "  … {} more (use --top or --format csv)",
            report.analyses.len() - shown
        );
    }
    collectives(&mut out, bundle, total, comm_acc, top);
    out.push_str(
        "\n  AI: FLOP/byte at each level. bound: the ceiling that limits the kernel (hierarchical roofline):\n  \
         a memory level (HBM, L2, L1) or the compute roof of its precision mix (FP32, Tensor FP16, …).\n  \
         headroom: attainable/achieved. time bound and T/Tbound: the time-based roofline (Wang et al. 2020):\n  \
         the term of T_bound that binds (the compute roof, HBM, or launch overhead).\n",
    );
    if !comm_acc.records.is_empty() {
        out.push_str(
            "  For a collective (NCCL), bound is the link it runs on; S is its size as nccl-tests counts it, n its\n  \
             group's ranks, busbw = S/t × 2(n−1)/n (all-reduce), (n−1)/n (all-gather, reduce-scatter, all-to-all)\n  \
             or 1 (broadcast, reduce, send/recv), and \"of link\" busbw over the link's bandwidth in one direction.\n",
        );
    }
    if per_call {
        out.push_str(
            "  calls: the operator's calls (one call may launch several kernels); F/call and B/call: one call's\n  \
             complexity F and B.\n",
        );
    }
    out.into_bytes()
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{:.1}%", v * 100.0))
}

/// The collectives: each kernel name's bus bandwidth against its link, the communication
/// exposed per step, and each collective's skew across ranks (the `top` largest).
fn collectives(
    out: &mut String,
    bundle: &Bundle,
    total: f64,
    comm_acc: &CommAcc,
    top: Option<usize>,
) {
    // Per launch, grouped by device, kernel and collective: a kernel name may carry several.
    let mut groups = comm::groups(&comm_acc.records);
    groups.sort_by(|a, b| b.time_s.total_cmp(&a.time_s));
    let analysed: Vec<(&comm::CollectiveGroup, comm::CommAnalysis)> = groups
        .iter()
        .map(|g| {
            let links = bundle
                .machine_of(g.device.as_deref())
                .map(|m| m.links.as_slice());
            (g, comm::analyze(&g.collective, g.time_s, links))
        })
        .collect();
    if analysed.is_empty() {
        return;
    }
    let comm_time: f64 = analysed.iter().map(|(_, c)| c.time_s).sum();
    let launches: u64 = analysed.iter().map(|(g, _)| g.launches).sum();
    let _ = writeln!(
        out,
        "\ncollectives: {launches} launch{}, {} ({:.1}% of kernel time); bus bandwidth as nccl-tests defines it (doc/PERFORMANCE.md), against the link each runs on, one direction",
        if launches == 1 { "" } else { "es" },
        format_si(comm_time, "s"),
        if total > 0.0 {
            comm_time / total * 100.0
        } else {
            0.0
        },
    );
    let mut rows = vec![
        [
            "share",
            "time",
            "launches",
            "collective",
            "S",
            "n",
            "algbw",
            "busbw",
            "link",
            "of link",
            "exposed",
            "overlapped",
            "kernel",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let mut over = Vec::new();
    let mut missing: std::collections::BTreeSet<&'static str> = Default::default();
    for (g, c) in &analysed {
        let short = roofline_model::analysis::names::shorten(&g.name);
        if c.link_share.is_some_and(|s| s > 1.0) {
            over.push(format!(
                "{}{}",
                c.kind.label(),
                g.device
                    .as_deref()
                    .map(|d| format!(" on {}", printable(d)))
                    .unwrap_or_default()
            ));
        }
        missing.extend(c.missing.iter().map(|m| m.words()));
        rows.push(vec![
            format!(
                "{:.1}%",
                if total > 0.0 {
                    c.time_s / total * 100.0
                } else {
                    0.0
                }
            ),
            format_si(c.time_s, "s"),
            g.launches.to_string(),
            c.kind.label().to_string(),
            si_opt(c.bytes, "B"),
            c.group_size
                .map_or_else(|| "–".to_string(), |n| n.to_string()),
            si_opt(c.algbw, "B/s"),
            si_opt(c.busbw, "B/s"),
            c.link.map_or("–", |l| l.label()).to_string(),
            pct(c.link_share),
            si_opt(c.exposed_s, "s"),
            si_opt(c.overlapped_s, "s"),
            format!(
                "{}{}",
                printable(&short),
                g.device
                    .as_deref()
                    .filter(|_| bundle.devices.len() > 1)
                    .map(|d| format!(" ({})", printable(d)))
                    .unwrap_or_default()
            ),
        ]);
    }
    let mut right = vec![true; rows[0].len()];
    for c in [3, 8, 12] {
        right[c] = false;
    }
    out.push_str(&columns(&rows, &right));
    if !missing.is_empty() {
        let _ = writeln!(
            out,
            "  note: unknown (–) where {}",
            missing.into_iter().collect::<Vec<_>>().join("; ")
        );
    }
    if !over.is_empty() {
        let _ = writeln!(
            out,
            "  note: above its link's peak: {}; its group size or scope is likely not what the trace suggests (a subgroup, ranks on several nodes): check --group-size and --gpus-per-node",
            over.join(", ")
        );
    }
    let steps = comm::per_step(&comm_acc.records);
    if !steps.is_empty() {
        let _ = writeln!(
            out,
            "\n  exposed communication per step (collectives running with no compute kernel on any stream of their device):"
        );
        let mut rows = vec![
            [
                "rank",
                "device",
                "step",
                "collectives",
                "time",
                "exposed",
                "overlapped",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for s in &steps {
            rows.push(vec![
                s.rank.as_deref().map_or_else(|| "–".to_string(), printable),
                s.device
                    .as_deref()
                    .map_or_else(|| "–".to_string(), printable),
                s.step
                    .as_deref()
                    .map_or_else(|| "(no step)".to_string(), printable),
                s.collectives.to_string(),
                format_si(s.time_s, "s"),
                si_opt(s.exposed_s, "s"),
                si_opt(s.overlapped_s, "s"),
            ]);
        }
        out.push_str(&columns(
            &rows,
            &[false, false, false, true, true, true, true],
        ));
    }
    let (matched, notes) = comm::synchronised(&comm_acc.records);
    if !matched.is_empty() {
        let n = matched.len();
        let shown = top.unwrap_or(10).min(n);
        let _ = writeln!(
            out,
            "\n  collectives across ranks, matched by their place in their process group: {} largest skew{} of {n} (skew: the spread of the kernel's start; straggler: the rank that started last)",
            shown,
            if shown == 1 { "" } else { "s" },
        );
        let mut rows = vec![
            [
                "group",
                "#",
                "collective",
                "ranks",
                "S",
                "skew",
                "straggler",
                "its time",
                "first",
                "longest",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for s in comm::by_skew(&matched).into_iter().take(shown) {
            rows.push(vec![
                printable(&s.process_group),
                s.sequence.to_string(),
                s.kind.label().to_string(),
                s.ranks.to_string(),
                si_opt(s.bytes, "B"),
                format_si(s.skew_s, "s"),
                printable(&s.straggler),
                format_si(s.straggler_s, "s"),
                printable(&s.first),
                format_si(s.longest_s, "s"),
            ]);
        }
        out.push_str(&columns(
            &rows,
            &[false, true, false, true, true, true, true, true, true, true],
        ));
    }
    for n in notes {
        let _ = writeln!(out, "  note: {}", printable(&n));
    }
}

fn method(m: Method) -> &'static str {
    match m {
        Method::Empirical => "measured",
        Method::Theoretical => "theoretical",
    }
}
