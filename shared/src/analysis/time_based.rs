//! The time-based roofline (Wang et al. 2020): run time against compute and bandwidth complexity.
//!
//! Source: Y. Wang, C. Yang, S. Farrell, T. Kurth, S. Williams, "Time-Based Roofline for Deep
//! Learning Performance Analysis", IEEE/ACM DLS workshop at SC20 (arXiv:2009.04598). A kernel
//! with compute complexity F (FLOPs) and bandwidth complexity B (bytes), launched n times, cannot
//! run faster than `T_bound = max(F / P, B / BW, n × t_launch)`.

/// Which term of the time bound is largest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Region {
    /// `F / P` dominates.
    Compute,
    /// `B / BW` dominates.
    Bandwidth,
    /// `n × t_launch` dominates: the kernel is too small for the launch to be amortised.
    LaunchOverhead,
}

impl Region {
    /// The name used in tables and CSV: `compute`, `bandwidth`, `launch`.
    pub fn key(self) -> &'static str {
        match self {
            Region::Compute => "compute",
            Region::Bandwidth => "bandwidth",
            Region::LaunchOverhead => "launch",
        }
    }
}

/// The three terms of the time bound and the verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeBound {
    /// `F / P`, seconds (for a precision mix, `Σ_p F_p / P_p`).
    pub compute_s: Option<f64>,
    /// `B / BW`, seconds.
    pub bandwidth_s: Option<f64>,
    /// `n × t_launch`, seconds.
    pub launch_s: Option<f64>,
    /// `T_bound = max` of the known terms, seconds.
    pub bound_s: f64,
    /// The largest term.
    pub region: Region,
}

/// `T_bound = max(F / P, B / BW, n × t_launch)` (Wang et al. 2020, eq. 1), from the precomputed
/// compute term (so that a precision mix can pass `Σ_p F_p / P_p`), the bandwidth complexity and
/// ceiling, and the launch count and overhead. Unknown terms are left out; `None` when all are.
/// Ties go to compute, then bandwidth.
pub fn time_bound(
    compute_s: Option<f64>,
    bytes: Option<f64>,
    bandwidth: Option<f64>,
    launches: u64,
    t_launch: Option<f64>,
) -> Option<TimeBound> {
    let bandwidth_s = match (bytes, bandwidth) {
        (Some(b), Some(bw)) if bw > 0.0 => Some(b / bw),
        _ => None,
    };
    // Launch counts are far below 2^53, so the conversion is exact.
    #[allow(clippy::cast_precision_loss)]
    let launch_s = t_launch.map(|t| launches as f64 * t);
    let mut best: Option<(f64, Region)> = None;
    for (term, region) in [
        (compute_s, Region::Compute),
        (bandwidth_s, Region::Bandwidth),
        (launch_s, Region::LaunchOverhead),
    ] {
        if let Some(t) = term.filter(|t| t.is_finite())
            && best.is_none_or(|(b, _)| t > b)
        {
            best = Some((t, region));
        }
    }
    let (bound_s, region) = best.filter(|(t, _)| *t > 0.0)?;
    Some(TimeBound {
        compute_s,
        bandwidth_s,
        launch_s,
        bound_s,
        region,
    })
}

/// Machine balance, `P / BW` (FLOP/byte): kernels whose intensity `F / B` is above it are
/// compute-side, below it bandwidth-side (Wang et al. 2020).
pub fn machine_balance(peak: f64, bandwidth: f64) -> f64 {
    peak / bandwidth
}

/// How far a kernel is from its bound, `T / T_bound` (≥ 1 for a consistent model; below 1 means
/// a ceiling or a complexity is wrong).
pub fn gap(time_s: f64, bound_s: f64) -> Option<f64> {
    (bound_s > 0.0 && time_s.is_finite()).then(|| time_s / bound_s)
}

/// The time vertex: the point `(B*, F*)` on the kernel's iso-intensity line `F = AI × B` at which
/// the machine would take exactly the measured time T (Wang et al. 2020, fig. 2). If
/// `F / B > P / BW` the compute roof binds: `F* = T × P`, `B* = F* / AI`; otherwise
/// `B* = T × BW`, `F* = B* × AI`. The segment from `(B, F)` to `(B*, F*)` is the kernel's
/// distance to the roofline.
///
/// Returns `(B*, F*)`; `None` when the intensity is undefined (B or F zero) or an input is not
/// positive.
pub fn time_vertex(
    time_s: f64,
    flops: f64,
    bytes: f64,
    peak: f64,
    bandwidth: f64,
) -> Option<(f64, f64)> {
    if !(time_s > 0.0 && flops > 0.0 && bytes > 0.0 && peak > 0.0 && bandwidth > 0.0) {
        return None;
    }
    let ai = flops / bytes;
    if ai > machine_balance(peak, bandwidth) {
        let f = time_s * peak;
        Some((f / ai, f))
    } else {
        let b = time_s * bandwidth;
        Some((b, b * ai))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_picks_the_largest_term() {
        // 1 TFLOP at 100 TFLOP/s = 10 ms; 1 GB at 2 TB/s = 0.5 ms; 1 launch × 5 µs.
        let t = time_bound(Some(1e12 / 100e12), Some(1e9), Some(2e12), 1, Some(5e-6)).unwrap();
        assert_eq!(t.region, Region::Compute);
        assert!((t.bound_s - 0.01).abs() < 1e-15);
        assert_eq!(t.bandwidth_s, Some(0.0005));
        assert_eq!(t.launch_s, Some(5e-6));

        let t = time_bound(Some(1e-6), Some(1e9), Some(2e12), 1, Some(5e-6)).unwrap();
        assert_eq!(t.region, Region::Bandwidth);

        // 1000 tiny launches: 1000 × 4.2 µs = 4.2 ms dominates.
        let t = time_bound(Some(1e-6), Some(1e6), Some(900e9), 1000, Some(4.2e-6)).unwrap();
        assert_eq!(t.region, Region::LaunchOverhead);
        assert!((t.bound_s - 4.2e-3).abs() < 1e-15);

        assert!(time_bound(None, None, None, 1, None).is_none());
        assert!(time_bound(Some(0.0), Some(0.0), Some(1.0), 0, Some(1e-6)).is_none());
    }

    #[test]
    fn balance_gap_and_vertex() {
        assert_eq!(machine_balance(100e12, 2e12), 50.0);
        assert_eq!(gap(2.0, 1.0), Some(2.0));
        assert_eq!(gap(2.0, 0.0), None);

        // Compute side: AI = 100 > 50. F* = T P = 1e-3 × 100e12 = 1e11; B* = F*/AI = 1e9.
        let (b, f) = time_vertex(1e-3, 1e10, 1e8, 100e12, 2e12).unwrap();
        assert!((f - 1e11).abs() < 1.0 && (b - 1e9).abs() < 1e-3);
        // Bandwidth side: AI = 1 < 50. B* = T BW = 2e9; F* = 2e9.
        let (b, f) = time_vertex(1e-3, 1e8, 1e8, 100e12, 2e12).unwrap();
        assert!((b - 2e9).abs() < 1e-3 && (f - 2e9).abs() < 1e-3);
        // The vertex keeps the kernel's intensity and lies on the bound: max(F*/P, B*/BW) = T.
        let (b, f) = time_vertex(3e-4, 7e9, 3e8, 100e12, 2e12).unwrap();
        assert!((f / b - 7e9 / 3e8).abs() < 1e-9);
        assert!(((f / 100e12).max(b / 2e12) - 3e-4).abs() < 1e-15);
        assert!(time_vertex(1e-3, 0.0, 1.0, 1.0, 1.0).is_none());
    }
}
