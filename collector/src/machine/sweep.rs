//! The ERT-style sweep for FP32 and FP64 (working set × FLOPs per element, each point timed as a
//! burst), kept raw, and the FP32 sweep's plateaus as bandwidth ceilings.

use roofline_model::bundle::{
    BandwidthCeiling, Datapath, Machine, Method, Operands, Skipped, SweepPoint, SweepTiming,
};

use crate::gpu::kernels::{
    self, Kernel, LaunchWork, UNIT_FLOAT_WORDS, VECTOR_BYTES, sweep_fmas, sweep_work,
};
use crate::gpu::launch::Launcher;
use crate::gpu::launch::micro::Sweep;
use crate::gpu::timing::BurstPlan;

use super::MachineError;
use super::rig::Rig;

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

/// The ERT-style sweep for FP32 and FP64, kept raw, and its plateaus as ceilings. Each point is
/// timed as a burst ([`crate::gpu::Session::burst`]: a lead launch, then intervals of
/// back-to-back launches of at least 1 ms), its time the median interval over its launches.
pub(super) fn sweep(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
    bar: &indicatif::ProgressBar,
) -> Result<(), MachineError> {
    let sets = rig.plan.sweep_working_sets();
    let fpes = rig.plan.sweep_flops_per_element();
    let top = *sets.last().unwrap_or(&(1 << 30));
    let buf = rig.alloc_filled(top, UNIT_FLOAT_WORDS, "the sweep")?;
    let full = u64::from(rig.session.sm_count()) * 2048;
    let traffic_target = if rig.plan.quick {
        64.0 * 1048576.0
    } else {
        256.0 * 1048576.0
    };
    let plan = BurstPlan::sweep(rig.plan.quick);
    let mut launches = (u32::MAX, 0u32);
    for kernel in [Kernel::ErtF32, Kernel::ErtF64] {
        let kernels::Work::Sweep { datapath, .. } = kernel.work() else {
            continue;
        };
        if rig.refused(
            kernel,
            format!("{} ERT-style sweep", datapath.label()),
            skipped,
        ) {
            bar.inc((sets.len() * fpes.len()) as u64);
            continue;
        }
        for &ws in &sets {
            let elements = (ws / VECTOR_BYTES as usize) as u64;
            for &fpe in &fpes {
                let per_sweep =
                    sweep_work(kernel, elements, 1, sweep_fmas(fpe)).unwrap_or_default();
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
        }
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
    let best = roofline_model::plateau::best_bandwidth_per_working_set(&m.sweep, Datapath::Fp32);
    let plateaus = roofline_model::plateau::detect(&best);
    for (level, p) in roofline_model::plateau::attribute(&plateaus, rig.session.l2_bytes() as f64) {
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
}
