//! The ERT-style sweep for FP32 and FP64 (working set × FLOPs per element, each point timed as a
//! burst), kept raw, and the FP32 sweep's plateaus as bandwidth ceilings.

use roofline_kernels::{
    Kernel, LaunchWork, UNIT_FLOAT_WORDS, VECTOR_BYTES, sweep_fmas, sweep_work,
};
use roofline_model::bundle::{
    BandwidthCeiling, Datapath, Machine, Method, Operands, Skipped, SweepPoint, SweepTiming,
};

use crate::launch::Launcher;
use crate::launch::micro::Sweep;
use crate::report::Progress;
use crate::timing::BurstPlan;

use super::rig::Rig;
use super::{MachineError, Plan};

/// Most FLOPs one sweep launch may execute.
pub const FLOP_CAP: f64 = 4e9;

/// Repeats of one sweep point: enough sweeps for `traffic_target` bytes, but no more than
/// [`FLOP_CAP`] FLOPs per launch (small sets run on few threads, and their high intensities
/// would otherwise take a second each); at least one. `per_sweep` is one sweep's work.
pub fn sweep_repeats(per_sweep: LaunchWork, traffic_target: f64) -> i32 {
    let traffic = (traffic_target / per_sweep.bytes).floor().max(1.0);
    let flop = (FLOP_CAP / per_sweep.flop_count()).floor().max(1.0);
    let reps = traffic.min(flop);
    if reps >= f64::from(i32::MAX) {
        i32::MAX
    } else {
        reps as i32
    }
}

/// The sweep's points, in the order run: per kernel (FP32, FP64), per working set, per FLOPs
/// per element, each with its one sweep's work; and how many points are left out because one
/// sweep over their working set would exceed [`FLOP_CAP`] (such a point is compute-bound, and
/// the sweep reaches the compute plateau at smaller working sets: at 2 GiB and 1024 FLOPs per
/// element one sweep is 5.5e11 FLOPs, about 8 s on an H100, and a point is timed over at least
/// seven launches).
pub fn sweep_grid(plan: Plan) -> (Vec<(Kernel, usize, u32, LaunchWork)>, usize) {
    let mut points = Vec::new();
    let mut left_out = 0;
    for kernel in [Kernel::ErtF32, Kernel::ErtF64] {
        for ws in plan.sweep_working_sets() {
            let elements = (ws / VECTOR_BYTES as usize) as u64;
            for fpe in plan.sweep_flops_per_element() {
                let per_sweep =
                    sweep_work(kernel, elements, 1, sweep_fmas(fpe)).unwrap_or_default();
                if per_sweep.flop_count() > FLOP_CAP {
                    left_out += 1;
                } else {
                    points.push((kernel, ws, fpe, per_sweep));
                }
            }
        }
    }
    (points, left_out)
}

/// The ERT-style sweep for FP32 and FP64, kept raw, and its plateaus as ceilings. Each point of
/// [`sweep_grid`] is timed as a burst ([`crate::Session::burst`]: a lead launch, then
/// intervals of back-to-back launches of at least 1 ms), its time the median interval over its
/// launches.
pub(super) fn sweep(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
    bar: &dyn Progress,
) -> Result<(), MachineError> {
    let (points, left_out) = sweep_grid(rig.plan);
    let top = rig
        .plan
        .sweep_working_sets()
        .last()
        .copied()
        .unwrap_or(1 << 30);
    let buf = rig.alloc_filled(top, UNIT_FLOAT_WORDS, "the sweep")?;
    let full = u64::from(rig.session.sm_count()) * 2048;
    let traffic_target = if rig.plan.quick {
        64.0 * 1048576.0
    } else {
        256.0 * 1048576.0
    };
    let plan = BurstPlan::sweep(rig.plan.quick);
    let mut launches = (u32::MAX, 0u32);
    if left_out > 0 {
        rig.notes.push(format!(
            "ERT-style sweep: {left_out} points left out, one sweep over their working set being over {FLOP_CAP:e} FLOPs (compute-bound; the compute plateau is reached at smaller working sets)"
        ));
    }
    let mut refused: Vec<Kernel> = Vec::new();
    for (kernel, ws, fpe, per_sweep) in points {
        let roofline_kernels::Work::Sweep { datapath, .. } = kernel.work() else {
            continue;
        };
        if refused.contains(&kernel) {
            bar.inc(1);
            continue;
        }
        if rig.refused(
            kernel,
            format!("{} ERT-style sweep", datapath.label()),
            skipped,
        ) {
            refused.push(kernel);
            bar.inc(1);
            continue;
        }
        let elements = (ws / VECTOR_BYTES as usize) as u64;
        let reps = sweep_repeats(per_sweep, traffic_target);
        let l = Sweep::new(&rig.ert, kernel, elements, full, reps, fpe, &buf)?;
        rig.check_residency(kernel, &l.config());
        let (_, p) = rig.session.burst(kernel.entry(), plan, |s| l.launch(s))?;
        launches = (launches.0.min(p.launches), launches.1.max(p.launches));
        let work = l.work();
        m.sweep.push(SweepPoint {
            datapath,
            working_set_bytes: ws as f64,
            flops_per_element: f64::from(fpe),
            flops: work.flop_count(),
            bytes: work.bytes,
            time_s: p.median_s() / f64::from(p.launches),
        });
        bar.inc(1);
    }
    if launches.1 > 0 {
        m.sweep_timing = Some(SweepTiming {
            interval_min_s: plan.interval_min_s,
            intervals_per_point: u32::try_from(plan.intervals).unwrap_or(u32::MAX),
            launches_per_interval_min: launches.0,
            launches_per_interval_max: launches.1,
        });
    }
    // Plateaus of the FP32 sweep become "ERT" ceilings, beside the dedicated kernels'.
    let best =
        roofline_model::analysis::plateau::best_bandwidth_per_working_set(&m.sweep, Datapath::Fp32);
    let plateaus = roofline_model::analysis::plateau::detect(&best);
    for (level, p) in
        roofline_model::analysis::plateau::attribute(&plateaus, rig.session.l2_bytes() as f64)
    {
        let mut c = BandwidthCeiling::new(level, p.bandwidth, Method::Empirical);
        c.implementation = Some(format!(
            "ERT-style sweep plateau, {} to {} working set ({} points; burst figures)",
            human_bytes(p.from_bytes),
            human_bytes(p.to_bytes),
            p.points
        ));
        c.operands = Some(Operands::RandomUnitFloats);
        m.bandwidth.push(c);
    }
    Ok(())
}

/// A working set's size for a plateau's description: whole GiB, MiB or KiB.
fn human_bytes(b: f64) -> String {
    if b >= 1073741824.0 {
        format!("{:.0} GiB", b / 1073741824.0)
    } else if b >= 1048576.0 {
        format!("{:.0} MiB", b / 1048576.0)
    } else {
        format!("{:.0} KiB", b / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand counts (made-up unit-test sizes, not measurements): a sweep point runs enough
    /// sweeps for the traffic target unless that exceeds the FLOP cap.
    #[test]
    fn sweep_repeats_respect_traffic_and_flop_caps() {
        // 1 MiB of float4 at 1 FLOP per value: 2 MiB of traffic and 262,144 FLOPs per sweep;
        // 256 MiB of traffic needs 128 sweeps, far under the cap.
        let n = (1u64 << 20) / 16;
        let w = sweep_work(Kernel::ErtF32, n, 1, sweep_fmas(1)).unwrap();
        assert_eq!(sweep_repeats(w, 256.0 * 1048576.0), 128);
        // At 1024 FLOPs per value one sweep is 2.7e8 FLOPs: the 4e9 cap allows 14.
        let w = sweep_work(Kernel::ErtF32, n, 1, sweep_fmas(1024)).unwrap();
        assert_eq!(w.flop_count(), 262_144.0 * 1024.0);
        assert_eq!(sweep_repeats(w, 256.0 * 1048576.0), 14);
        // A set larger than the target still runs once.
        let big = sweep_work(Kernel::ErtF64, (2u64 << 30) / 16, 1, 0).unwrap();
        assert_eq!(sweep_repeats(big, 64.0 * 1048576.0), 1);
    }

    /// The full grid is 18 working sets × 11 FLOPs per element × 2 kernels = 396 points; a point
    /// whose one sweep exceeds the cap is left out: FP32 at 2 GiB (536,870,912 values) keeps 1,
    /// 2 and 4 FLOPs per element (2.1e9) and leaves out 8 (4.3e9); at 16 KiB every point stays.
    #[test]
    fn the_grid_leaves_out_points_over_the_flop_cap() {
        let plan = Plan {
            quick: false,
            diagnose_refused: false,
        };
        let (points, left_out) = sweep_grid(plan);
        assert_eq!(points.len() + left_out, 396);
        assert!(points.iter().all(|p| p.3.flop_count() <= FLOP_CAP));
        let at = |k: Kernel, ws: usize| -> Vec<u32> {
            points
                .iter()
                .filter(|p| p.0 == k && p.1 == ws)
                .map(|p| p.2)
                .collect()
        };
        assert_eq!(at(Kernel::ErtF32, 2 << 30), [1, 2, 4]);
        assert_eq!(at(Kernel::ErtF32, 16 << 10).len(), 11);
        assert_eq!(left_out, 396 - points.len());
    }
}
