//! The timing plan of `roofline machine` (issue 33), pure: how long each ceiling warms up, how
//! many launches go back to back between two events, how many intervals make the burst figure,
//! when the rate has settled, and how long the sustained window is. [`crate::gpu::Session`]
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
//! - the rate then settles: the run streams on in 250 ms steps until two consecutive steps are
//!   each within 1% of the one before (at most 3 s; 1.5 s with `--quick`), and the sustained
//!   figure is the rate over the following window of about 2 s (1 s) of whole intervals: a hot
//!   H200 runs BF16 GEMMs at 1635 MHz against its 1980 MHz boost (issue 33).

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
    /// The relative change between two steps under which the rate counts as settled.
    pub settle_tolerance: f64,
    /// Consecutive steps within tolerance that make the rate settled.
    pub settle_steps: u32,
    /// The longest the rate is waited for, seconds.
    pub settle_max_s: f64,
    /// The sustained window, seconds of GPU time.
    pub window_s: f64,
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
            settle_steps: 2,
            settle_max_s: 3.0,
            window_s: 2.0,
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

/// How a burst-only timing ([`crate::gpu::Session::burst`]) runs: the ERT-style sweep's points
/// ([`BurstPlan::sweep`]) and the cuBLASLt candidates ([`BurstPlan::candidates`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BurstPlan {
    /// Untimed calls the caller makes first (none for the sweep).
    pub untimed: usize,
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
            interval_min_s: 1e-3,
            max_launches: 64,
            intervals: if quick { 3 } else { 5 },
        }
    }

    /// The cuBLASLt candidates (every shape and algorithm), timed before the best one is
    /// measured in full, `quick` or not: two untimed calls (cuBLASLt's and CUDA's lazy loading
    /// may do synchronous work on a first call), then 5 intervals of at least 2 ms (3 with
    /// `--quick`), median.
    pub const fn candidates(quick: bool) -> Self {
        BurstPlan {
            untimed: 2,
            interval_min_s: 2e-3,
            max_launches: 64,
            intervals: if quick { 3 } else { 5 },
        }
    }
}

/// Follows a stream of intervals and says when their rate has settled: intervals are gathered
/// into steps of at least `step_s` seconds; the rate has settled once `steps` consecutive steps
/// were each within `tolerance` (relative) of the one before.
#[derive(Debug, Clone, PartialEq)]
pub struct Settle {
    step_s: f64,
    tolerance: f64,
    steps: u32,
    /// The current step: seconds and work so far.
    current: (f64, f64),
    previous_rate: Option<f64>,
    streak: u32,
    /// Seconds followed in all.
    pub elapsed_s: f64,
}

impl Settle {
    /// A tracker for `plan`'s settling rule.
    pub fn new(plan: &MeasurePlan) -> Self {
        Settle {
            step_s: plan.settle_step_s,
            tolerance: plan.settle_tolerance,
            steps: plan.settle_steps,
            current: (0.0, 0.0),
            previous_rate: None,
            streak: 0,
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
            let rate = self.current.1 / self.current.0;
            self.current = (0.0, 0.0);
            if let Some(p) = self.previous_rate {
                if p > 0.0 && ((rate - p) / p).abs() < self.tolerance {
                    self.streak += 1;
                } else {
                    self.streak = 0;
                }
            }
            self.previous_rate = Some(rate);
        }
        self.settled()
    }

    /// Whether the rate has settled.
    pub fn settled(&self) -> bool {
        self.streak >= self.steps
    }
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
    }

    /// A rate that climbs 5% per 250 ms step, then holds: settled two steps after it holds, not
    /// before; a rate that keeps moving never settles.
    #[test]
    fn the_rate_settles_after_two_steps_within_one_percent() {
        let plan = MeasurePlan::full();
        let mut s = Settle::new(&plan);
        let rates = [100.0, 105.0, 110.25, 110.3, 110.2, 110.25];
        let mut settled_at = None;
        for (step, r) in rates.iter().enumerate() {
            // Four 62.5 ms intervals per step.
            for _ in 0..4 {
                if s.push(0.0625, r * 0.0625) && settled_at.is_none() {
                    settled_at = Some(step);
                }
            }
        }
        assert_eq!(settled_at, Some(4));
        assert!((s.elapsed_s - 1.5).abs() < 1e-9);
        let mut moving = Settle::new(&plan);
        for i in 0..40 {
            let r = if (i / 4) % 2 == 0 { 100.0 } else { 103.0 };
            assert!(!moving.push(0.0625, r * 0.0625));
        }
        // Nonsense intervals are ignored.
        assert!(!moving.push(f64::NAN, 1.0));
    }
}
