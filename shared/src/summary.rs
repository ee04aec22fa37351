//! The machine summary: per memory level and datapath, our own measurement beside its same-run
//! reference and the theoretical figure, with their ratios.
//!
//! "Own" is the best empirical ceiling not marked `reference` (our microbenchmarks); "reference"
//! the best one marked `reference` (the driver's device-to-device copy, cuBLASLt GEMMs);
//! "theoretical" the best theoretical one (see [`crate::theoretical`]). The ceiling charts use is
//! the one [`crate::ceilings::Ceilings`] resolves: the highest empirical figure.

use crate::bundle::{Datapath, Machine, MemoryLevel, Method};

/// What a summary row is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// A bandwidth ceiling.
    Level(MemoryLevel),
    /// A compute ceiling.
    Datapath(Datapath),
}

impl Subject {
    /// Display label.
    pub fn label(self) -> &'static str {
        match self {
            Subject::Level(l) => l.label(),
            Subject::Datapath(d) => d.label(),
        }
    }
}

/// One figure with what produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Byte/s or FLOP/s.
    pub value: f64,
    /// The ceiling's `implementation`, if recorded.
    pub implementation: Option<String>,
}

/// One row of the summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The level or datapath.
    pub subject: Subject,
    /// Our own best measurement.
    pub own: Option<Figure>,
    /// The best same-run reference measurement.
    pub reference: Option<Figure>,
    /// The best theoretical figure.
    pub theoretical: Option<Figure>,
}

impl Row {
    /// `own / reference`.
    pub fn own_over_reference(&self) -> Option<f64> {
        Some(self.own.as_ref()?.value / self.reference.as_ref()?.value)
    }
    /// `best empirical / theoretical`.
    pub fn empirical_over_theoretical(&self) -> Option<f64> {
        let e = match (&self.own, &self.reference) {
            (Some(o), Some(r)) => o.value.max(r.value),
            (Some(o), None) => o.value,
            (None, Some(r)) => r.value,
            (None, None) => return None,
        };
        Some(e / self.theoretical.as_ref()?.value)
    }
}

fn keep_best(slot: &mut Option<Figure>, value: f64, implementation: &Option<String>) {
    if !(value.is_finite() && value > 0.0) {
        return;
    }
    if slot.as_ref().is_none_or(|f| value > f.value) {
        *slot = Some(Figure {
            value,
            implementation: implementation.clone(),
        });
    }
}

/// The summary rows of a machine, levels (closest to the cores first) then datapaths, one row
/// per level or datapath that has any figure.
pub fn rows(m: &Machine) -> Vec<Row> {
    let mut out = Vec::new();
    for level in MemoryLevel::ALL {
        let mut row = Row {
            subject: Subject::Level(level),
            own: None,
            reference: None,
            theoretical: None,
        };
        for b in m.bandwidth.iter().filter(|b| b.level == level) {
            let slot = match (b.method, b.reference) {
                (Method::Theoretical, _) => &mut row.theoretical,
                (Method::Empirical, true) => &mut row.reference,
                (Method::Empirical, false) => &mut row.own,
            };
            keep_best(slot, b.value, &b.implementation);
        }
        if row.own.is_some() || row.reference.is_some() || row.theoretical.is_some() {
            out.push(row);
        }
    }
    for d in Datapath::ALL {
        let mut row = Row {
            subject: Subject::Datapath(d),
            own: None,
            reference: None,
            theoretical: None,
        };
        for c in m.compute.iter().filter(|c| c.datapath == d) {
            let slot = match (c.method, c.reference) {
                (Method::Theoretical, _) => &mut row.theoretical,
                (Method::Empirical, true) => &mut row.reference,
                (Method::Empirical, false) => &mut row.own,
            };
            keep_best(slot, c.value, &c.implementation);
        }
        if row.own.is_some() || row.reference.is_some() || row.theoretical.is_some() {
            out.push(row);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{BandwidthCeiling, ComputeCeiling};

    #[test]
    fn rows_pair_own_reference_and_theoretical() {
        let mut m = Machine::default();
        m.bandwidth.push(BandwidthCeiling::new(
            MemoryLevel::Hbm,
            3.0e12,
            Method::Empirical,
        ));
        m.bandwidth.push(BandwidthCeiling::new(
            MemoryLevel::Hbm,
            2.9e12,
            Method::Empirical,
        ));
        let mut copy = BandwidthCeiling::new(MemoryLevel::Hbm, 2.95e12, Method::Empirical);
        copy.reference = true;
        m.bandwidth.push(copy);
        m.bandwidth.push(BandwidthCeiling::new(
            MemoryLevel::Hbm,
            3.35e12,
            Method::Theoretical,
        ));
        let mut gemm = ComputeCeiling::new(Datapath::TensorFp16, 700e12, Method::Empirical);
        gemm.reference = true;
        m.compute.push(gemm);
        m.compute.push(ComputeCeiling::new(
            Datapath::TensorFp16,
            600e12,
            Method::Empirical,
        ));
        m.compute.push(ComputeCeiling::new(
            Datapath::TensorFp16,
            f64::NAN,
            Method::Empirical,
        ));
        let r = rows(&m);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].subject, Subject::Level(MemoryLevel::Hbm));
        assert!((r[0].own_over_reference().unwrap() - 3.0 / 2.95).abs() < 1e-12);
        assert!((r[0].empirical_over_theoretical().unwrap() - 3.0 / 3.35).abs() < 1e-12);
        assert!((r[1].own_over_reference().unwrap() - 6.0 / 7.0).abs() < 1e-12);
        assert_eq!(r[1].empirical_over_theoretical(), None);
    }
}
