//! `roofline info --baseline`: the kernels of a bundle beside a baseline's, matched by name, as
//! the viewer's compare mode shows them (`roofline_model::analysis::compare`); with `--group-by op` (or
//! `module`) both runs are read per operator (or module) and matched by its name, and the table's
//! first column is headed `operator` (the CSV's stays `kernel`: its columns are stable).
//!
//! Runs on several devices are compared device by device (paired by id; the only device of each
//! run with each other), each in its own section after a line of totals over all of them, or
//! one device with `--device`; the CSV's last column names each row's device.

use std::fmt::Write as _;

use roofline_model::Bundle;
use roofline_model::analysis::Analysed;
use roofline_model::analysis::comm::{self, CommAnalysis};
use roofline_model::analysis::compare::{Comparison, Presence, compare};
use roofline_model::analysis::si::format_si;
use roofline_model::bundle::Provenance;

use super::info::columns;

/// One run's side of a device pair.
#[derive(Debug, Clone, PartialEq)]
enum Side {
    /// The run's kernels on this device (`None`: a run that declares no device).
    Device(Option<String>),
    /// The run has no such device: no kernels.
    Absent,
}

/// One device compared: its id and name for the heading, and the comparison.
struct DeviceComparison {
    /// The device's id (the current run's, else the baseline's), `None` when neither run
    /// declares a device.
    id: Option<String>,
    /// The device's name, or empty.
    name: String,
    /// The comparison on that device.
    comparison: Comparison,
    /// Each row's collective against its link, in the baseline and now (where a side is one).
    comm: Vec<[Option<CommAnalysis>; 2]>,
}

/// The devices to compare: the only device of each run with each other, else by id (the
/// current run's in order, then the baseline's others); with `device`, the pair of that id.
fn device_pairs(
    current: &Bundle,
    baseline: &Bundle,
    device: Option<&str>,
) -> Result<Vec<(Side, Side)>, String> {
    let ids = |b: &Bundle| b.devices.iter().map(|d| d.id.clone()).collect::<Vec<_>>();
    let (cur, base) = (ids(current), ids(baseline));
    // Every id once (a bundle's ids are unique: validation refuses duplicates), the current
    // run's first.
    let all: Vec<&String> = cur
        .iter()
        .chain(base.iter().filter(|id| !cur.contains(id)))
        .collect();
    let pairs: Vec<(Side, Side)> = if cur.len() <= 1 && base.len() <= 1 {
        vec![(
            Side::Device(cur.first().cloned()),
            Side::Device(base.first().cloned()),
        )]
    } else {
        let side = |have: &[String], id: &String| {
            if have.contains(id) {
                Side::Device(Some(id.clone()))
            } else {
                Side::Absent
            }
        };
        all.iter()
            .map(|id| (side(&cur, id), side(&base, id)))
            .collect()
    };
    let Some(d) = device else {
        return Ok(pairs);
    };
    let is = |s: &Side| matches!(s, Side::Device(Some(x)) if x == d);
    let chosen: Vec<(Side, Side)> = pairs.into_iter().filter(|(c, b)| is(c) || is(b)).collect();
    if chosen.is_empty() {
        return Err(format!(
            "--device {d}: neither run has such a device (they have {})",
            if all.is_empty() {
                "none".to_string()
            } else {
                all.iter()
                    .map(|id| id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    Ok(chosen)
}

/// One run's kernels on one side of a pair, analysed against their own ceilings.
fn analysed(bundle: &Bundle, side: &Side) -> Analysed {
    match side {
        Side::Device(id) => Analysed::new(bundle, id.as_deref(), None),
        Side::Absent => Analysed::new(&Bundle::new(Provenance::default()), None, None),
    }
}

/// Both runs compared device by device.
fn comparisons(
    current: &Bundle,
    baseline: &Bundle,
    device: Option<&str>,
) -> Result<Vec<DeviceComparison>, String> {
    Ok(device_pairs(current, baseline, device)?
        .iter()
        .map(|(c, b)| {
            let (ca, ba) = (analysed(current, c), analysed(baseline, b));
            let id = match (c, b) {
                (Side::Device(Some(x)), _) | (_, Side::Device(Some(x))) => Some(x.clone()),
                _ => None,
            };
            let name = if ca.device_name.is_empty() {
                ba.device_name.clone()
            } else {
                ca.device_name.clone()
            };
            let comparison = compare(&ca, &ba);
            let comm = comm_rows(&comparison, (current, &ca), (baseline, &ba));
            DeviceComparison {
                id,
                name,
                comparison,
                comm,
            }
        })
        .collect())
}

/// Each row's collective against its link ([`comm::analyze_collective`]): the baseline's
/// kernel (its pair, or for a gone kernel the one of its name) and the current one's.
fn comm_rows(
    c: &Comparison,
    (current, ca): (&Bundle, &Analysed),
    (baseline, ba): (&Bundle, &Analysed),
) -> Vec<[Option<CommAnalysis>; 2]> {
    let of = |b: &Bundle, k: &roofline_model::bundle::Kernel| {
        comm::analyze_collective(k, b.machine_of(b.device_of(k)))
    };
    c.rows
        .iter()
        .map(|r| {
            let now = r.index.and_then(|i| ca.kernels.get(i));
            let before = match r.index {
                Some(i) => c
                    .pairs
                    .get(i)
                    .copied()
                    .flatten()
                    .and_then(|j| ba.kernels.get(j)),
                None => ba.kernels.iter().find(|k| k.name == r.name),
            };
            [
                before.and_then(|k| of(baseline, k)),
                now.and_then(|k| of(current, k)),
            ]
        })
        .collect()
}

fn time(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format_si(v, "s"))
}

fn signed(v: f64) -> String {
    if v < 0.0 {
        format!("−{}", format_si(-v, "s"))
    } else if v > 0.0 {
        format!("+{}", format_si(v, "s"))
    } else {
        "0 s".into()
    }
}

/// The comparison as aligned text: the summary line, then the `top` kernels of the current run
/// by time (all when `None`) and the kernels gone since the baseline; for runs on several
/// devices, a line of totals over all devices, then one such section per device.
///
/// # Errors
/// A `--device` that neither run has, naming the devices they have.
pub fn to_table(
    current: &Bundle,
    baseline: &Bundle,
    top: Option<usize>,
    device: Option<&str>,
) -> Result<Vec<u8>, String> {
    let all = comparisons(current, baseline, device)?;
    let several = current.devices.len() > 1 || baseline.devices.len() > 1;
    let mut out = String::new();
    for n in roofline_model::analysis::compare::incomplete_words(current, baseline) {
        let _ = writeln!(out, "note: {n}");
    }
    if all.len() > 1 {
        let before: f64 = all.iter().map(|d| d.comparison.summary.before_s).sum();
        let after: f64 = all.iter().map(|d| d.comparison.summary.after_s).sum();
        let _ = write!(
            out,
            "all {} devices: total {} → {}",
            all.len(),
            format_si(before, "s"),
            format_si(after, "s")
        );
        if let Some(x) = roofline_model::analysis::compare::ratio(before, after) {
            let _ = write!(out, " ({x:.2}× speed-up)");
        }
        out.push('\n');
    }
    for (i, d) in all.iter().enumerate() {
        if i > 0 || all.len() > 1 {
            out.push('\n');
        }
        if several {
            let _ = write!(out, "device {}", d.id.as_deref().unwrap_or("?"));
            if !d.name.is_empty() {
                let _ = write!(out, " ({})", d.name);
            }
            out.push_str(": ");
        }
        section(&mut out, &d.comparison, &d.comm, top);
    }
    Ok(out.into_bytes())
}

/// The longest name the table's first column shows: longer ones are cut (with an ellipsis), as
/// charts and messages cut them, so that one long kernel name cannot widen every row.
const NAME_CHARS: usize = 80;

fn cut(name: &str) -> String {
    roofline_model::analysis::names::truncate(name, NAME_CHARS)
}

/// One device's comparison: its summary line and its table.
fn section(
    out: &mut String,
    c: &Comparison,
    comm_rows: &[[Option<CommAnalysis>; 2]],
    top: Option<usize>,
) {
    let _ = writeln!(out, "{}\n", c.summary.line());
    let mut rows = vec![
        [
            c.summary.unit.noun(),
            "baseline",
            "time",
            "Δ time",
            "speed-up",
            "bound",
            "change",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let current_rows = c
        .rows
        .iter()
        .zip(comm_rows)
        .filter(|(r, _)| r.presence != Presence::Gone);
    let gone_rows = c
        .rows
        .iter()
        .zip(comm_rows)
        .filter(|(r, _)| r.presence == Presence::Gone);
    let mut collectives = Vec::new();
    for (r, cm) in current_rows
        .take(top.unwrap_or(usize::MAX))
        .chain(gone_rows)
    {
        if cm.iter().any(Option::is_some) {
            collectives.push((c.display_name(r), cm));
        }
        let link = cm[1].as_ref().or(cm[0].as_ref()).and_then(|x| x.link);
        rows.push(vec![
            cut(&c.display_name(r)),
            time(r.baseline.as_ref().map(|s| s.time_s)),
            time(r.current.as_ref().map(|s| s.time_s)),
            signed(r.delta_s()),
            r.speedup()
                .map_or_else(|| "–".into(), |x| format!("{x:.2}×")),
            r.current
                .as_ref()
                .or(r.baseline.as_ref())
                .and_then(|s| s.ceiling())
                .or(link.map(|l| l.label()))
                .unwrap_or("–")
                .into(),
            r.change(),
        ]);
    }
    out.push_str(&columns(
        &rows,
        &[false, true, true, true, true, false, false],
    ));
    if !collectives.is_empty() {
        let bw = |c: &Option<CommAnalysis>| {
            c.as_ref()
                .and_then(|c| c.busbw)
                .map_or_else(|| "–".into(), |v| format_si(v, "B/s"))
        };
        let share = |c: &Option<CommAnalysis>| {
            c.as_ref()
                .and_then(|c| c.link_share)
                .map_or_else(|| "–".into(), |v| format!("{:.1}%", v * 100.0))
        };
        let mut rows = vec![
            [
                "collective",
                "busbw before",
                "busbw",
                "of link before",
                "of link",
                "link",
                "kernel",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for (name, cm) in collectives {
            let one = cm[1].as_ref().or(cm[0].as_ref());
            rows.push(vec![
                one.map_or("–", |x| x.kind.label()).into(),
                bw(&cm[0]),
                bw(&cm[1]),
                share(&cm[0]),
                share(&cm[1]),
                one.and_then(|x| x.link).map_or("–", |l| l.label()).into(),
                name,
            ]);
        }
        out.push_str("\n  collectives: bus bandwidth (nccl-tests) and its share of the link, before and after\n");
        out.push_str(&columns(
            &rows,
            &[false, true, true, true, true, false, false],
        ));
    }
    // What the marks of the change column mean, and each doubtful pair left apart, in words.
    let doubts: Vec<String> = c
        .rows
        .iter()
        .filter(|r| r.presence == Presence::New)
        .filter_map(|r| {
            let d = r.doubt.as_ref()?;
            Some(format!(
                "  ? {} (new) and {} (gone): {}",
                cut(&c.display_name(r)),
                cut(&d.display),
                d.reason
            ))
        })
        .collect();
    out.push_str(
        "\n  bound: the binding ceiling (the current run's; a gone kernel's in the baseline). change: \
         the binding ceiling before → after; ≈ paired by a name that differs in precision or \
         numbers, launch counts agreeing; ? a doubtful counterpart left apart.\n",
    );
    if !doubts.is_empty() {
        out.push_str("  doubtful pairs, left apart (compare them by hand in the viewer):\n");
        for d in doubts {
            out.push_str(&d);
            out.push('\n');
        }
    }
}

/// RFC 4180 quoting.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The comparison as CSV, one row per kernel name of either run (per device), SI base units
/// (seconds), empty cells for unknowns; `device` is the device's id (empty when the runs declare
/// none); after it (appended, the columns before are stable), what the pair rests on (`match`:
/// `exact`, `precision`, `similar`, `manual`), the baseline kernel's name when it differs, a new
/// or gone kernel's doubtful counterpart left apart, and both binding ceilings by name (a
/// collective's: its link); then, as their own group, a collective's bus bandwidth and share of
/// its link before and after, and the link.
///
/// # Errors
/// As [`to_table`].
pub fn to_csv(
    current: &Bundle,
    baseline: &Bundle,
    device: Option<&str>,
) -> Result<Vec<u8>, String> {
    let all = comparisons(current, baseline, device)?;
    let mut out = String::from(
        "kernel,presence,baseline_time_s,time_s,delta_s,speedup,baseline_bound,bound,device,match,baseline_kernel,doubtful_counterpart,baseline_ceiling,ceiling,baseline_comm_busbw_byte_per_s,comm_busbw_byte_per_s,baseline_comm_link_share,comm_link_share,comm_link\n",
    );
    let num = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:e}"));
    for d in &all {
        for (r, cm) in d.comparison.rows.iter().zip(&d.comm) {
            let link = cm[1].as_ref().or(cm[0].as_ref()).and_then(|x| x.link);
            let link_key = |side: &Option<CommAnalysis>| {
                side.as_ref().and_then(|x| x.link).map_or("", |l| l.key())
            };
            let _ = writeln!(
                out,
                "{},{},{},{},{:e},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                field(&r.name),
                r.presence.key(),
                num(r.baseline.as_ref().map(|s| s.time_s)),
                num(r.current.as_ref().map(|s| s.time_s)),
                r.delta_s() + 0.0,
                num(r.speedup()),
                r.baseline
                    .as_ref()
                    .and_then(|s| s.bound)
                    .map_or("", |b| b.key()),
                r.current
                    .as_ref()
                    .and_then(|s| s.bound)
                    .map_or("", |b| b.key()),
                field(d.id.as_deref().unwrap_or("")),
                r.quality.map_or("", |q| q.key()),
                field(r.baseline_name.as_deref().unwrap_or("")),
                field(r.doubt.as_ref().map_or("", |d| d.name.as_str())),
                r.baseline
                    .as_ref()
                    .and_then(|s| s.ceiling_key())
                    .unwrap_or(link_key(&cm[0])),
                r.current
                    .as_ref()
                    .and_then(|s| s.ceiling_key())
                    .unwrap_or(link_key(&cm[1])),
                num(cm[0].as_ref().and_then(|x| x.busbw)),
                num(cm[1].as_ref().and_then(|x| x.busbw)),
                num(cm[0].as_ref().and_then(|x| x.link_share)),
                num(cm[1].as_ref().and_then(|x| x.link_share)),
                link.map_or("", |l| l.key()),
            );
        }
    }
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(f: &str) -> Bundle {
        let path = format!(
            "{}/../tests/fixtures/bundles/{f}",
            env!("CARGO_MANIFEST_DIR")
        );
        roofline_model::parse_bundle(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// Both runs on one device, compared as the model does.
    fn comparison(current: &Bundle, baseline: &Bundle) -> Comparison {
        compare(
            &Analysed::new(current, None, None),
            &Analysed::new(baseline, None, None),
        )
    }

    #[test]
    fn table_and_csv_hold_the_models_figures() {
        let (cur, base) = (
            bundle("deepcam-v100-amp-fw.json"),
            bundle("deepcam-v100-fp32-fw.json"),
        );
        let c = comparison(&cur, &base);
        let table = String::from_utf8(to_table(&cur, &base, Some(5), None).unwrap()).unwrap();
        assert!(table.starts_with(&c.summary.line()), "{table}");
        let csv = String::from_utf8(to_csv(&cur, &base, None).unwrap()).unwrap();
        assert_eq!(csv.lines().count(), c.rows.len() + 1);
        let matched = c.rows.iter().find(|r| r.speedup().is_some()).unwrap();
        let line = csv
            .lines()
            .find(|l| l.starts_with(&field(&matched.name)))
            .unwrap();
        assert!(
            line.contains(&format!("{:e}", matched.speedup().unwrap())),
            "{line}"
        );
        // The table lists 5 current kernels and every gone one, then what its marks mean and
        // the doubtful pairs left apart.
        let doubts = if c.summary.doubtful > 0 {
            1 + c.summary.doubtful
        } else {
            0
        };
        assert_eq!(
            table.lines().count(),
            2 + 1 + 5 + c.summary.gone + 2 + doubts,
            "{table}"
        );
        // Colliding short names are told apart, as plain `info` tells them apart, and a name is
        // never both new and gone.
        let new_or_gone = |w: &str| {
            table
                .lines()
                .filter(|l| l.split("  ").last().is_some_and(|x| x.trim() == w))
                .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
                .collect::<Vec<_>>()
        };
        let (new, gone) = (new_or_gone("new"), new_or_gone("gone"));
        assert!(new.iter().all(|n| !gone.contains(n)), "{new:?} {gone:?}");
        assert!(!table.contains("implicit_convolve_sgemm  "), "{table}");
        // The DeepCAM showcase: the FP32 batch-norm kernel pairs with its 60-launch _fp16
        // counterpart, not with the 1-launch half-precision template.
        let bn = c
            .rows
            .iter()
            .find(|r| {
                r.name
                    .contains("bn_fw_tr_1C11_singleread_fp16<512, 1, 2, 0>")
            })
            .unwrap();
        assert!(
            bn.baseline_name
                .as_deref()
                .unwrap()
                .contains("singleread<float")
        );
        let half = c
            .rows
            .iter()
            .find(|r| r.name.contains("bn_fw_tr_1C11_singleread<__half"))
            .unwrap();
        assert_eq!(half.presence, Presence::New);
        assert!(table.contains("doubtful pairs, left apart"), "{table}");
        assert!(csv.lines().next().unwrap().ends_with(
            ",device,match,baseline_kernel,doubtful_counterpart,baseline_ceiling,ceiling,baseline_comm_busbw_byte_per_s,comm_busbw_byte_per_s,baseline_comm_link_share,comm_link_share,comm_link"
        ));
    }

    /// A SYNTHETIC run on two devices, one kernel each: `us` µs on device 0, `us` on device 1.
    fn two_devices(us: f64) -> Bundle {
        let text = format!(
            r#"{{"schema_version": 1, "complete": true, "provenance": {{"tool": "test", "tool_version": "0"}},
            "devices": [{{"id": "0", "name": "SYNTHETIC GPU A"}}, {{"id": "1", "name": "SYNTHETIC GPU B"}}],
            "kernels": [
              {{"name": "gemm", "device": "0", "launches": 1, "time": {{"total_s": {a}}}, "source": "published"}},
              {{"name": "gemm", "device": "1", "launches": 1, "time": {{"total_s": {a}}}, "source": "published"}}
            ]}}"#,
            a = us / 1e6
        );
        roofline_model::parse_bundle(&text).unwrap()
    }

    #[test]
    fn runs_on_several_devices_are_compared_device_by_device() {
        // Each device's time counts in the totals, not the first device's alone (which would
        // read "total 300 µs → 200 µs" though each run holds twice that).
        let (cur, base) = (two_devices(200.0), two_devices(300.0));
        let table = String::from_utf8(to_table(&cur, &base, None, None).unwrap()).unwrap();
        let first = table.lines().next().unwrap();
        assert_eq!(
            first, "all 2 devices: total 600 µs → 400 µs (1.50× speed-up)",
            "{table}"
        );
        assert!(
            table.contains("\ndevice 0 (SYNTHETIC GPU A): total 300 µs → 200 µs"),
            "{table}"
        );
        assert!(
            table.contains("\ndevice 1 (SYNTHETIC GPU B): total 300 µs → 200 µs"),
            "{table}"
        );
        let csv = String::from_utf8(to_csv(&cur, &base, None).unwrap()).unwrap();
        let rows: Vec<&str> = csv.lines().skip(1).collect();
        assert_eq!(rows.len(), 2, "{csv}");
        // The device column (the ninth; columns appended since come after it).
        let device = |row: &str| row.split(',').nth(8).unwrap_or_default().to_string();
        assert!(
            rows[0].starts_with("gemm,both,3e-4,2e-4,") && device(rows[0]) == "0",
            "{csv}"
        );
        assert_eq!(device(rows[1]), "1", "{csv}");
        // One device, asked for by id, and said.
        let one = String::from_utf8(to_table(&cur, &base, None, Some("1")).unwrap()).unwrap();
        assert!(
            one.starts_with("device 1 (SYNTHETIC GPU B): total 300 µs → 200 µs"),
            "{one}"
        );
        assert!(!one.contains("device 0"), "{one}");
        let e = to_table(&cur, &base, None, Some("7")).unwrap_err();
        assert_eq!(
            e,
            "--device 7: neither run has such a device (they have 0, 1)"
        );
        // A device only one run has: its kernels are new (or gone) there.
        let single = roofline_model::parse_bundle(
            &roofline_model::to_json(&cur)
                .unwrap()
                .replace(r#""device": "1""#, r#""device": "0""#),
        )
        .unwrap();
        let t = String::from_utf8(to_table(&base, &single, None, None).unwrap()).unwrap();
        assert!(
            t.contains("device 1 (SYNTHETIC GPU B): total 0 s → 300 µs"),
            "{t}"
        );
    }
}
