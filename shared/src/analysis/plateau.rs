//! Bandwidth plateaus in an ERT-style sweep, and the memory level each one belongs to.
//!
//! The Empirical Roofline Toolkit (Lo et al., "Roofline Model Toolkit: A Practical Tool for
//! Architectural and Program Analysis", PMBS 2014) runs a kernel over working sets from a few KiB
//! to several GiB and reads each cache level's bandwidth off the flat stretches of
//! bandwidth-against-working-set. The rule used here, applied to the best bandwidth measured at
//! each working set (over all FLOPs per element):
//!
//! 1. walk the working sets from smallest to largest; a point joins the current run when its
//!    bandwidth is within [`TOLERANCE`] of the run's median, otherwise it starts a new run;
//! 2. a run of at least [`MIN_POINTS`] points is a plateau; its bandwidth is the median of its
//!    points (robust to one noisy repeat), and it spans its first to last working set;
//! 3. a plateau whose geometric-middle working set exceeds the L2 capacity is HBM (the longest
//!    such one, ties to the higher). The on-chip plateaus are attributed from L2 down: the
//!    ERT kernel writes every element back and GPU L1 caches do not keep writes (they write
//!    through to L2), so a single on-chip plateau is L2 (the fault of ERT's "L1" on GPUs); when
//!    there are several, the last is L2 and the longest one before it L1.
//!
//! Points on the slopes between levels form short runs and are dropped by rule 2.

use crate::bundle::{Datapath, MemoryLevel, SweepPoint};

/// Relative distance from a run's median within which a point joins the run.
pub const TOLERANCE: f64 = 0.15;
/// Fewest points a run needs to be a plateau.
pub const MIN_POINTS: usize = 2;

/// A flat stretch of bandwidth against working set.
#[derive(Debug, Clone, PartialEq)]
pub struct Plateau {
    /// Smallest working set in the plateau, bytes.
    pub from_bytes: f64,
    /// Largest working set in the plateau, bytes.
    pub to_bytes: f64,
    /// Median bandwidth of its points, byte/s.
    pub bandwidth: f64,
    /// How many working sets it spans.
    pub points: usize,
}

/// The best bandwidth (bytes over time) at each working set for one datapath, sorted by
/// working set. Non-finite or non-positive figures are skipped.
pub fn best_bandwidth_per_working_set(sweep: &[SweepPoint], datapath: Datapath) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for p in sweep.iter().filter(|p| p.datapath == datapath) {
        let bw = p.bytes / p.time_s;
        if !(bw.is_finite() && bw > 0.0 && p.working_set_bytes > 0.0) {
            continue;
        }
        match out.iter_mut().find(|(ws, _)| *ws == p.working_set_bytes) {
            Some((_, best)) => *best = best.max(bw),
            None => out.push((p.working_set_bytes, bw)),
        }
    }
    crate::analysis::kernel::sort_slice_by(&mut out, |a, b| a.0.total_cmp(&b.0));
    out
}

/// Plateaus of `(working set, bandwidth)` points sorted by working set (rules 1 and 2).
pub fn detect(points: &[(f64, f64)]) -> Vec<Plateau> {
    let mut plateaus = Vec::new();
    let mut run: Vec<(f64, f64)> = Vec::new();
    let close = |run: &[(f64, f64)], plateaus: &mut Vec<Plateau>| {
        if run.len() >= MIN_POINTS {
            let bws: Vec<f64> = run.iter().map(|p| p.1).collect();
            plateaus.push(Plateau {
                from_bytes: run[0].0,
                to_bytes: run[run.len() - 1].0,
                bandwidth: crate::analysis::stats::median_or_nan(&bws),
                points: run.len(),
            });
        }
    };
    for &p in points {
        if !run.is_empty() {
            let m =
                crate::analysis::stats::median_or_nan(&run.iter().map(|q| q.1).collect::<Vec<_>>());
            if (p.1 / m - 1.0).abs() > TOLERANCE {
                close(&run, &mut plateaus);
                run.clear();
            }
        }
        run.push(p);
    }
    close(&run, &mut plateaus);
    plateaus
}

/// Rule 3: the level of each plateau, given the L2 capacity in bytes; at most one plateau per
/// level, in the order L1, L2, HBM.
pub fn attribute(plateaus: &[Plateau], l2_bytes: f64) -> Vec<(MemoryLevel, Plateau)> {
    let longest = |ps: &[&Plateau]| -> Option<Plateau> {
        ps.iter()
            .max_by(|a, b| {
                (a.points, a.bandwidth)
                    .partial_cmp(&(b.points, b.bandwidth))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .map(|p| (*p).clone())
    };
    let mid = |p: &Plateau| (p.from_bytes * p.to_bytes).sqrt();
    let on_chip: Vec<&Plateau> = plateaus.iter().filter(|p| mid(p) <= l2_bytes).collect();
    let off_chip: Vec<&Plateau> = plateaus.iter().filter(|p| mid(p) > l2_bytes).collect();
    let mut out = Vec::new();
    if let Some((l2, before)) = on_chip.split_last() {
        if let Some(l1) = longest(before) {
            out.push((MemoryLevel::L1, l1));
        }
        out.push((MemoryLevel::L2, (*l2).clone()));
    }
    if let Some(hbm) = longest(&off_chip) {
        out.push((MemoryLevel::Hbm, hbm));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: f64 = 1024.0;
    const MIB: f64 = KIB * KIB;

    #[test]
    fn three_levels_with_slopes_between() {
        // A synthetic but typical shape: ramp-up, L1, slope, L2, slope, HBM.
        let pts = [
            (16.0 * KIB, 1.0e12),
            (64.0 * KIB, 10.0e12),
            (256.0 * KIB, 20.0e12),
            (1.0 * MIB, 21.0e12),
            (4.0 * MIB, 19.5e12),
            (8.0 * MIB, 9.0e12),
            (16.0 * MIB, 7.0e12),
            (32.0 * MIB, 6.8e12),
            (1024.0 * MIB, 3.0e12),
            (4096.0 * MIB, 2.9e12),
        ];
        let p = detect(&pts);
        let bws: Vec<f64> = p.iter().map(|p| p.bandwidth).collect();
        assert_eq!(bws.len(), 3, "{p:?}");
        assert!((bws[0] - 20.0e12).abs() < 1e9);
        assert!((bws[1] - 6.9e12).abs() < 1e9);
        assert!((bws[2] - 2.95e12).abs() < 1e9);
        let levels = attribute(&p, 50.0 * MIB);
        let names: Vec<MemoryLevel> = levels.iter().map(|(l, _)| *l).collect();
        assert_eq!(names, [MemoryLevel::L1, MemoryLevel::L2, MemoryLevel::Hbm]);
    }

    #[test]
    fn a_single_on_chip_plateau_is_l2() {
        let p = detect(&[
            (1.0 * MIB, 5.0e12),
            (4.0 * MIB, 5.1e12),
            (1024.0 * MIB, 2.0e12),
            (2048.0 * MIB, 2.0e12),
        ]);
        let levels: Vec<MemoryLevel> = attribute(&p, 50.0 * MIB).iter().map(|(l, _)| *l).collect();
        assert_eq!(levels, [MemoryLevel::L2, MemoryLevel::Hbm]);
    }

    #[test]
    fn single_points_are_not_plateaus() {
        let pts = [(1.0, 1.0), (2.0, 5.0), (4.0, 25.0)];
        assert!(detect(&pts).is_empty());
    }

    #[test]
    fn best_bandwidth_takes_the_best_intensity() {
        let mk = |ws: f64, f: f64, t: f64| SweepPoint {
            datapath: Datapath::Fp32,
            working_set_bytes: ws,
            flops_per_element: f,
            flops: 0.0,
            bytes: 100.0,
            time_s: t,
        };
        let sweep = [
            mk(2.0, 1.0, 2.0),
            mk(1.0, 1.0, 1.0),
            mk(2.0, 2.0, 1.0),
            mk(3.0, 1.0, 0.0),
        ];
        assert_eq!(
            best_bandwidth_per_working_set(&sweep, Datapath::Fp32),
            vec![(1.0, 100.0), (2.0, 100.0)]
        );
        assert!(best_bandwidth_per_working_set(&sweep, Datapath::Fp64).is_empty());
    }
}
