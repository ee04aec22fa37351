//! The timing plan of `roofline machine`, pure: how long each ceiling warms up, how
//! many launches go back to back between two events, how many intervals make the burst figure,
//! when the rate has settled, and how long the sustained window is. [`crate::Session`]
//! carries it out.
//!
//! The scheme, and where its choices come from:
//! - launches are enqueued back to back and an interval is N launches between two CUDA events,
//!   behind one untimed lead launch, so the device queue is never empty when an interval starts
//!   and no host launch latency (3–10 µs; more for `cublasLtMatmul`) falls inside it: the CUDA
//!   samples time `nIter = 300` back-to-back launches between two events (`matrixMul.cu`),
//!   nvbandwidth hides the enqueue cost behind a blocking kernel ("the overhead of enqueuing
//!   operations is excluded from the measurement", its README); N is the smallest count that
//!   makes an interval at least [`MeasurePlan::interval_min_s`] long (2 ms, 1 ms with `--quick`);
//! - every ceiling warms up at its own kernel first (0.4 s, 0.3 s with `--quick`; the session's
//!   first at least 1 s and until NVML's SM clock reaches 95% of its maximum, at most 2 s): a
//!   GPU that idled or ran another kernel has another clock (MAMF finder warms the accelerator up
//!   for 30 s; gpu-benches' `gpu-roofline` samples the clock over 1000 launches);
//! - the burst figure is the median rate of 11 intervals (5 with `--quick`);
//! - the rate then settles: the run streams on in 250 ms steps until the least-squares slope of
//!   the last four steps' rates, projected over the sustained window, moves the rate by less
//!   than 1% (at most 3 s; 1.5 s with `--quick`), and the sustained figure is the rate over the
//!   following window of about 2 s (1 s) of whole intervals: a hot H200 runs BF16 GEMMs at
//!   1635 MHz against its 1980 MHz boost. A slope, not "two steps each within 1% of the one
//!   before": a clock drifting down 0.8% per step passes that rule while the rate falls 6% over
//!   the window;
//! - before the Tensor Core references, a BF16 GEMM soaks the GPU for 25 s (5 s with `--quick`),
//!   so that the references meet the board at the temperature and power a long GEMM does (the
//!   MAMF finder warms up for 30 s);
//! - each cuBLASLt candidate (shape, algorithm) runs 50 ms (20 ms) before it is timed, and the
//!   best three (two) candidates of a datapath are then timed with the whole plan above and
//!   ranked by their sustained figure: a candidate's short burst favours algorithms that run
//!   hot.

/// How one ceiling is timed. [`MeasurePlan::full`] and [`MeasurePlan::quick`] are the two
/// plans `roofline machine` uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasurePlan {
    /// Warm-up at the ceiling's own kernel, seconds of GPU time.
    pub warmup_s: f64,
    /// The session's first warm-up, seconds (the GPU may have idled).
    pub first_warmup_s: f64,
    /// The longest the first warm-up waits for the SM clock, seconds.
    pub first_warmup_max_s: f64,
    /// The SM clock, as a fraction of its maximum, that ends the first warm-up early.
    pub first_warmup_clock: f64,
    /// The shortest interval, seconds.
    pub interval_min_s: f64,
    /// The most launches per interval.
    pub max_launches: u32,
    /// Intervals of the burst figure.
    pub burst_intervals: usize,
    /// Whether a sustained figure follows the burst.
    pub sustained: bool,
    /// One settling step, seconds.
    pub settle_step_s: f64,
    /// The relative change of the rate over the sustained window, projected from the settling
    /// steps' slope, under which the rate counts as settled.
    pub settle_tolerance: f64,
    /// Steps the slope is fitted over (the most recent ones).
    pub settle_steps: u32,
    /// The longest the rate is waited for, seconds.
    pub settle_max_s: f64,
    /// The sustained window, seconds of GPU time.
    pub window_s: f64,
    /// The BF16 GEMM soak before the Tensor Core references, seconds of GPU time.
    pub soak_s: f64,
    /// The cuBLASLt candidates re-timed with this whole plan, the best by burst first.
    pub gemm_finalists: usize,
}

impl MeasurePlan {
    /// The plan of a full run.
    pub const fn full() -> Self {
        MeasurePlan {
            warmup_s: 0.4,
            first_warmup_s: 1.0,
            first_warmup_max_s: 2.0,
            first_warmup_clock: 0.95,
            interval_min_s: 2e-3,
            max_launches: 64,
            burst_intervals: 11,
            sustained: true,
            settle_step_s: 0.25,
            settle_tolerance: 0.01,
            settle_steps: 4,
            settle_max_s: 3.0,
            window_s: 2.0,
            soak_s: 25.0,
            gemm_finalists: 3,
        }
    }

    /// The plan of `--quick`.
    pub const fn quick() -> Self {
        MeasurePlan {
            warmup_s: 0.3,
            interval_min_s: 1e-3,
            burst_intervals: 5,
            settle_max_s: 1.5,
            window_s: 1.0,
            soak_s: 5.0,
            gemm_finalists: 2,
            ..Self::full()
        }
    }

    /// The plan for `quick` or not.
    pub const fn of(quick: bool) -> Self {
        if quick { Self::quick() } else { Self::full() }
    }

    /// The same plan without a sustained figure (the GEMM candidates, the diagnostics).
    pub const fn burst_only(self) -> Self {
        MeasurePlan {
            sustained: false,
            ..self
        }
    }

    /// Launches per interval for a launch of `launch_s` seconds: the fewest that make an
    /// interval at least [`MeasurePlan::interval_min_s`] long, within 1 and
    /// [`MeasurePlan::max_launches`]. A launch of unknown length (not finite, not positive) gets
    /// the maximum.
    pub fn launches_per_interval(&self, launch_s: f64) -> u32 {
        launches_for(launch_s, self.interval_min_s, self.max_launches)
    }
}

/// `clamp(⌈interval_min_s / launch_s⌉, 1, max)`.
pub fn launches_for(launch_s: f64, interval_min_s: f64, max: u32) -> u32 {
    if !(launch_s.is_finite() && launch_s > 0.0) {
        return max.max(1);
    }
    let n = (interval_min_s / launch_s).ceil();
    if n >= f64::from(max) {
        max.max(1)
    } else {
        (n as u32).max(1)
    }
}

/// How a burst-only timing ([`crate::Session::burst`]) runs: the ERT-style sweep's points
/// ([`BurstPlan::sweep`]) and the cuBLASLt candidates ([`BurstPlan::candidates`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BurstPlan {
    /// Untimed calls the caller makes first (none for the sweep).
    pub untimed: usize,
    /// Seconds of GPU time the launch runs back to back, untimed, before it is timed (none for
    /// the sweep, whose points follow one another on one kernel).
    pub warmup_s: f64,
    /// The shortest interval, seconds.
    pub interval_min_s: f64,
    /// The most launches (calls) per interval.
    pub max_launches: u32,
    /// Intervals per point or candidate.
    pub intervals: usize,
}

impl BurstPlan {
    /// The ERT-style sweep's points, `quick` or not: burst only, behind a lead launch, intervals
    /// of at least 1 ms, 5 intervals a point (3 with `--quick`), the point's time the median
    /// interval.
    pub const fn sweep(quick: bool) -> Self {
        BurstPlan {
            untimed: 0,
            warmup_s: 0.0,
            interval_min_s: 1e-3,
            max_launches: 64,
            intervals: if quick { 3 } else { 5 },
        }
    }

    /// The cuBLASLt candidates (every shape and algorithm), timed before the best ones are
    /// measured in full, `quick` or not: two untimed calls (cuBLASLt's and CUDA's lazy loading
    /// may do synchronous work on a first call), 50 ms of the candidate back to back (20 ms with
    /// `--quick`: the GPU ran another algorithm or shape a moment before), then 5 intervals of at
    /// least 2 ms (3 with `--quick`), median.
    pub const fn candidates(quick: bool) -> Self {
        BurstPlan {
            untimed: 2,
            warmup_s: if quick { 0.02 } else { 0.05 },
            interval_min_s: 2e-3,
            max_launches: 64,
            intervals: if quick { 3 } else { 5 },
        }
    }

    /// The host link's copies (`roofline machine`'s PCIe phase), `quick` or not: one untimed
    /// copy, 50 ms of copies back to back (20 ms with `--quick`), then 5 intervals (3) of at
    /// least 10 ms and at most 16 copies, the figure the median interval's.
    pub const fn host_link(quick: bool) -> Self {
        BurstPlan {
            untimed: 1,
            warmup_s: if quick { 0.02 } else { 0.05 },
            interval_min_s: 10e-3,
            max_launches: 16,
            intervals: if quick { 3 } else { 5 },
        }
    }
}

/// Follows a stream of intervals and says when their rate has settled: intervals are gathered
/// into steps of at least `step_s` seconds; the rate has settled once the least-squares slope of
/// the last `steps` steps' rates (against each step's middle in time), projected over the
/// sustained window, moves the rate by less than `tolerance` of their mean:
/// `|slope| × window_s < tolerance × mean`.
#[derive(Debug, Clone, PartialEq)]
pub struct Settle {
    step_s: f64,
    tolerance: f64,
    steps: usize,
    window_s: f64,
    /// The current step: seconds and work so far.
    current: (f64, f64),
    /// `(middle of the step in time, rate)` of the last `steps` steps.
    recent: std::collections::VecDeque<(f64, f64)>,
    settled: bool,
    /// Seconds followed in all.
    pub elapsed_s: f64,
}

impl Settle {
    /// A tracker for `plan`'s settling rule.
    pub fn new(plan: &MeasurePlan) -> Self {
        Settle {
            step_s: plan.settle_step_s,
            tolerance: plan.settle_tolerance,
            steps: (plan.settle_steps as usize).max(2),
            window_s: plan.window_s,
            current: (0.0, 0.0),
            recent: std::collections::VecDeque::new(),
            settled: false,
            elapsed_s: 0.0,
        }
    }

    /// Adds one interval of `seconds` that did `work` (bytes or FLOPs); whether the rate has
    /// settled.
    pub fn push(&mut self, seconds: f64, work: f64) -> bool {
        if !(seconds.is_finite() && seconds > 0.0) {
            return self.settled();
        }
        self.elapsed_s += seconds;
        self.current.0 += seconds;
        self.current.1 += work;
        if self.current.0 >= self.step_s {
            let (t, w) = self.current;
            self.current = (0.0, 0.0);
            self.recent.push_back((self.elapsed_s - t / 2.0, w / t));
            if self.recent.len() > self.steps {
                self.recent.pop_front();
            }
            if self.recent.len() == self.steps {
                self.settled = drift_over(&self.recent, self.window_s)
                    .is_some_and(|d| d.abs() < self.tolerance);
            }
        }
        self.settled()
    }

    /// Whether the rate has settled.
    pub fn settled(&self) -> bool {
        self.settled
    }
}

/// The relative change of the rate over `window_s` seconds that the least-squares line through
/// `points` (`(time, rate)`) predicts: `slope × window_s / mean rate`. `None` for fewer than two
/// points, points at one time, or a mean rate that is not positive.
pub fn drift_over(points: &std::collections::VecDeque<(f64, f64)>, window_s: f64) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let (st, sr) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (t, r)| (a + t, b + r));
    let (mt, mr) = (st / n, sr / n);
    let (num, den) = points.iter().fold((0.0, 0.0), |(num, den), (t, r)| {
        (num + (t - mt) * (r - mr), den + (t - mt) * (t - mt))
    });
    (den > 0.0 && mr > 0.0).then(|| num / den * window_s / mr)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan's numbers, and launches per interval by hand: an H100's 2 GiB HBM read takes
    /// about 0.64 ms (3.35 TB/s), so 2 ms needs 4 launches; its copy (4 GiB moved) about 1.3 ms:
    /// 2; the quick 512 MiB read about 0.16 ms against 1 ms: 7; a 5 µs launch hits the cap; a
    /// 67 ms FP64 GEMM runs alone.
    #[test]
    fn launches_per_interval_follow_the_plan() {
        let full = MeasurePlan::full();
        let quick = MeasurePlan::quick();
        assert_eq!(
            (full.warmup_s, full.interval_min_s, full.burst_intervals),
            (0.4, 2e-3, 11)
        );
        assert_eq!((full.settle_max_s, full.window_s), (3.0, 2.0));
        assert_eq!((full.soak_s, full.gemm_finalists), (25.0, 3));
        assert_eq!((quick.soak_s, quick.gemm_finalists), (5.0, 2));
        assert_eq!(
            (quick.warmup_s, quick.interval_min_s, quick.burst_intervals),
            (0.3, 1e-3, 5)
        );
        assert_eq!((quick.settle_max_s, quick.window_s), (1.5, 1.0));
        assert_eq!(quick.first_warmup_s, 1.0);
        assert!(!full.burst_only().sustained && full.sustained);
        assert_eq!(full.launches_per_interval(0.64e-3), 4);
        assert_eq!(full.launches_per_interval(1.3e-3), 2);
        assert_eq!(quick.launches_per_interval(0.16e-3), 7);
        assert_eq!(full.launches_per_interval(2e-3), 1);
        assert_eq!(full.launches_per_interval(5e-6), 64);
        assert_eq!(full.launches_per_interval(67e-3), 1);
        assert_eq!(full.launches_per_interval(0.0), 64);
        assert_eq!(full.launches_per_interval(f64::NAN), 64);
        assert_eq!(launches_for(1e-3, 1e-3, 0), 1);
        let s = BurstPlan::sweep(false);
        assert_eq!((s.interval_min_s, s.intervals), (1e-3, 5));
        assert_eq!(BurstPlan::sweep(true).intervals, 3);
        let c = BurstPlan::candidates(false);
        assert_eq!((c.untimed, c.interval_min_s, c.intervals), (2, 2e-3, 5));
        assert_eq!(
            (c.warmup_s, BurstPlan::candidates(true).warmup_s),
            (0.05, 0.02)
        );
        assert_eq!(s.warmup_s, 0.0);
    }

    /// Feeds `Settle` one 250 ms step per rate (four 62.5 ms intervals each); the step at which
    /// it first said settled.
    fn settled_at(rates: &[f64]) -> Option<usize> {
        let mut s = Settle::new(&MeasurePlan::full());
        let mut at = None;
        for (step, r) in rates.iter().enumerate() {
            for _ in 0..4 {
                if s.push(0.0625, r * 0.0625) && at.is_none() {
                    at = Some(step);
                }
            }
        }
        at
    }

    /// A rate that climbs 5% per 250 ms step, then holds: settled once the last four steps are
    /// flat, not before; a rate that keeps moving never settles; nonsense intervals are ignored.
    #[test]
    fn the_rate_settles_once_its_slope_is_flat() {
        let rates = [100.0, 105.0, 110.25, 110.3, 110.2, 110.25, 110.3];
        assert_eq!(settled_at(&rates), Some(5));
        let mut moving = Settle::new(&MeasurePlan::full());
        for i in 0..40 {
            let r = if (i / 4) % 2 == 0 { 100.0 } else { 103.0 };
            assert!(!moving.push(0.0625, r * 0.0625));
        }
        assert!(!moving.push(f64::NAN, 1.0));
        assert!((moving.elapsed_s - 2.5).abs() < 1e-9);
    }

    /// A clock sagging 0.8% per 250 ms step: each step is within 1% of the one before (the rule
    /// this replaced called it settled after three steps), but over the 2 s window the rate
    /// falls 6.4%, and the slope test never calls it settled; a flat rate with ±0.1% noise
    /// settles as soon as four steps are in.
    #[test]
    fn a_slow_drift_is_not_settled() {
        let drifting: Vec<f64> = (0..12)
            .map(|i| 100.0 * (1.0 - 0.008 * f64::from(i)))
            .collect();
        assert_eq!(settled_at(&drifting), None);
        let noisy = [100.0, 100.1, 99.9, 100.05, 99.95, 100.1];
        assert_eq!(settled_at(&noisy), Some(3));
        let d = drift_over(
            &[(0.125, 100.0), (0.375, 99.2), (0.625, 98.4), (0.875, 97.6)].into(),
            2.0,
        )
        .unwrap();
        assert!((d + 0.0647).abs() < 1e-3, "{d}");
        assert_eq!(drift_over(&[(0.0, 1.0)].into(), 2.0), None);
        assert_eq!(drift_over(&[(1.0, 1.0), (1.0, 2.0)].into(), 2.0), None);
    }
}
