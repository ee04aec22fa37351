//! The summary table `roofline machine` prints: per level and datapath, our own figure, its
//! same-run reference and the theoretical one, with ratios (rows from
//! [`roofline_model::summary`]).

use std::fmt::Write as _;

use roofline_model::Bundle;
use roofline_model::summary::{self, Subject};

fn scaled(v: Option<f64>, subject: Subject) -> String {
    match (v, subject) {
        (Some(v), Subject::Level(_)) => format!("{:.2} TB/s", v / 1e12),
        (Some(v), Subject::Datapath(_)) => format!("{:.1} TFLOP/s", v / 1e12),
        (None, _) => "–".into(),
    }
}

fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "–".into(), |r| format!("{r:.3}"))
}

/// The table, one block per device, then launch overhead, skipped measurements and notes.
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
            "{:<14} {:>16} {:>16} {:>9} {:>16} {:>9}",
            "ceiling", "ours", "reference", "ours/ref", "theoretical", "emp/theo"
        );
        for row in summary::rows(m) {
            let s = row.subject;
            let _ = writeln!(
                out,
                "{:<14} {:>16} {:>16} {:>9} {:>16} {:>9}",
                s.label(),
                scaled(row.own.as_ref().map(|f| f.value), s),
                scaled(row.reference.as_ref().map(|f| f.value), s),
                ratio(row.own_over_reference()),
                scaled(row.theoretical.as_ref().map(|f| f.value), s),
                ratio(row.empirical_over_theoretical()),
            );
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
