//! The summary table `roofline machine` prints: per level and datapath, our own figure and its
//! same-run reference, each as burst / sustained, the theoretical figures at the clock measured
//! and at the datasheet's clock, the ratios, and a "best reach" mark (rows from
//! [`roofline_model::analysis::summary`]).

use std::fmt::Write as _;

use roofline_model::Bundle;
use roofline_model::analysis::summary::{self, Figure, Subject};
use roofline_model::bundle::ChartFigure;

/// `v` in the row's unit, without the unit.
fn number(v: f64, subject: Subject) -> String {
    match subject {
        Subject::Level(_) => format!("{:.2}", v / 1e12),
        Subject::Datapath(_) => format!("{:.1}", v / 1e12),
    }
}

fn unit(subject: Subject) -> &'static str {
    match subject {
        Subject::Level(_) => "TB/s",
        Subject::Datapath(_) => "TFLOP/s",
    }
}

/// A figure as `burst / sustained unit` (or `burst unit` without a sustained figure).
fn burst_sustained(f: Option<&Figure>, subject: Subject) -> String {
    match f {
        Some(f) => match f.sustained {
            Some(s) => format!(
                "{} / {} {}",
                number(f.value, subject),
                number(s, subject),
                unit(subject)
            ),
            None => format!("{} {}", number(f.value, subject), unit(subject)),
        },
        None => "–".into(),
    }
}

fn scaled(v: Option<f64>, subject: Subject) -> String {
    v.map_or_else(
        || "–".into(),
        |v| format!("{} {}", number(v, subject), unit(subject)),
    )
}

fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "–".into(), |r| format!("{r:.3}"))
}

/// The table, one block per device, then launch overhead, the "best reach" reasons, skipped
/// measurements and notes.
pub fn summary(bundle: &Bundle, wall_s: f64) -> String {
    let mut out = String::new();
    for m in &bundle.machines {
        let name = bundle
            .devices
            .iter()
            .find(|d| d.id == m.device)
            .map_or(m.device.as_str(), |d| d.name.as_str());
        let _ = writeln!(out, "\n{name} ({}), measured in {wall_s:.1} s", m.device);
        let _ = writeln!(
            out,
            "{:<12} {:>25} {:>25} {:>8} {:>16} {:>16} {:>8}  mark",
            "ceiling",
            "ours: burst / sustained",
            "reference",
            "ours/ref",
            "theoretical",
            "datasheet",
            "emp/theo"
        );
        let rows = summary::rows(m);
        let mut reasons = Vec::new();
        for row in &rows {
            let s = row.subject;
            let mut marks = Vec::new();
            if let Some(r) = row.best_reach() {
                marks.push("best reach");
                reasons.push(format!("best reach: {}: {r}", s.label()));
            }
            if row.reference.as_ref().is_some_and(|f| f.indicative) {
                marks.push("reference indicative");
            }
            let _ = writeln!(
                out,
                "{:<12} {:>25} {:>25} {:>8} {:>16} {:>16} {:>8}  {}",
                s.label(),
                burst_sustained(row.own.as_ref(), s),
                burst_sustained(row.reference.as_ref(), s),
                ratio(row.own_over_reference()),
                scaled(row.theoretical.as_ref().map(|f| f.value), s),
                scaled(row.datasheet.as_ref().map(|f| f.value), s),
                ratio(row.empirical_over_theoretical()),
                marks.join(", ")
            );
        }
        if rows.iter().any(|r| {
            [r.own.as_ref(), r.reference.as_ref()]
                .into_iter()
                .flatten()
                .any(|f| f.sustained.is_some())
        }) {
            out.push_str(match m.chart_figure.unwrap_or_default() {
                ChartFigure::Sustained => "burst: median of the first intervals after warm-up; sustained: the rate over about 2 s after the clock settled, which the charts use; ours/ref compares the figures the charts use, emp/theo the burst against the theoretical figure at its clock\n",
                ChartFigure::Burst => "burst: median of the first intervals after warm-up, which the charts use (this machine says chart_figure: burst); sustained: the rate over about 2 s after the clock settled; ours/ref compares the figures the charts use, emp/theo the burst against the theoretical figure at its clock\n",
            });
        }
        for r in reasons {
            let _ = writeln!(out, "{r}");
        }
        if let Some(l) = &m.launch_overhead {
            let _ = write!(
                out,
                "launch overhead: {:.2} µs launch to completion",
                l.value_s * 1e6
            );
            if let Some(b) = l.back_to_back_s {
                let _ = write!(out, ", {:.2} µs back to back", b * 1e6);
            }
            if let Some(g) = l.graph_s {
                let _ = write!(out, ", {:.2} µs per kernel in a CUDA graph", g * 1e6);
            }
            out.push('\n');
        }
    }
    for s in &bundle.skipped {
        let _ = writeln!(out, "skipped: {}: {}", s.what, s.reason);
    }
    for n in &bundle.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_model::bundle::{
        BandwidthCeiling, Device, Machine, MemoryLevel, Method, Provenance,
    };

    /// Made-up unit-test figures: burst and sustained side by side, the datasheet column, and a
    /// "best reach" mark with its reason.
    #[test]
    fn summary_shows_burst_sustained_datasheet_and_best_reach() {
        use roofline_model::bundle::{
            ClockSource, ComputeCeiling, Datapath, Limit, LimitKind, Sustained,
        };
        let mut b = Bundle::new(Provenance::default());
        b.devices.push(Device::new("gpu0", "Test GPU"));
        let mut m = Machine {
            device: "gpu0".into(),
            ..Machine::default()
        };
        let mut own = ComputeCeiling::new(Datapath::TensorInt8, 500e12, Method::Empirical);
        own.sustained = Some(Sustained {
            value: 480e12,
            window_s: 2.0,
            settle_s: 0.5,
            settled: true,
            samples: vec![],
            clock_hz: None,
            telemetry: None,
        });
        own.limit = Some(Limit {
            kind: LimitKind::Instruction,
            reason: "mma.sync".into(),
        });
        m.compute.push(own);
        let mut sheet = ComputeCeiling::new(Datapath::TensorInt8, 1979e12, Method::Theoretical);
        sheet.clock_source = Some(ClockSource::Datasheet);
        m.compute.push(sheet);
        b.machines.push(m);
        let s = summary(&b, 1.0);
        assert!(s.contains("500.0 / 480.0 TFLOP/s"), "{s}");
        assert!(s.contains("1979.0 TFLOP/s"), "{s}");
        assert!(s.contains("best reach"), "{s}");
        assert!(s.contains("best reach: Tensor INT8: mma.sync"), "{s}");
        assert!(s.contains("sustained: the rate over about 2 s"), "{s}");
        assert!(s.contains("which the charts use;"), "{s}");

        // A machine that asks for burst figures: no "best reach" from a sustained rule the
        // charts do not follow, and the footnote says which figure the charts use.
        let mut gemm = ComputeCeiling::new(Datapath::TensorInt8, 510e12, Method::Empirical);
        gemm.reference = true;
        b.machines[0].compute.push(gemm);
        b.machines[0].chart_figure = Some(ChartFigure::Burst);
        let s = summary(&b, 1.0);
        assert!(!s.contains("best reach"), "{s}");
        assert!(
            s.contains("0.980"),
            "ours/ref at burst figures, 500/510: {s}"
        );
        assert!(
            s.contains("which the charts use (this machine says chart_figure: burst)"),
            "{s}"
        );
    }

    #[test]
    fn summary_shows_ratios() {
        let mut b = Bundle::new(Provenance::default());
        b.devices.push(Device::new("gpu0", "Test GPU"));
        let mut m = Machine {
            device: "gpu0".into(),
            ..Machine::default()
        };
        m.bandwidth.push(BandwidthCeiling::new(
            MemoryLevel::Hbm,
            3.0e12,
            Method::Empirical,
        ));
        let mut r = BandwidthCeiling::new(MemoryLevel::Hbm, 2.9e12, Method::Empirical);
        r.reference = true;
        m.bandwidth.push(r);
        b.machines.push(m);
        let s = summary(&b, 12.0);
        assert!(s.contains("Test GPU (gpu0), measured in 12.0 s"), "{s}");
        assert!(
            s.contains("3.00 TB/s") && s.contains("2.90 TB/s") && s.contains("1.034"),
            "{s}"
        );
    }
}
