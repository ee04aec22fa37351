//! The hierarchical roofline: one kernel, several memory levels, several precisions.
//!
//! Sources: S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual performance
//! model for multicore architectures", CACM 52(4), 2009 (the model); C. Yang, T. Kurth,
//! S. Williams, "Hierarchical Roofline analysis for GPUs: Accelerating performance optimization
//! for the NERSC-9 Perlmutter system", CCPE 2020, and Y. Wang, C. Yang, S. Farrell, Y. Zhang,
//! T. Kurth, S. Williams, "Hierarchical Roofline Performance Analysis for Deep Learning
//! Applications", 2020 (arXiv:2009.05257): intensity per memory level, one point per level.

use crate::analysis::ceilings::Ceilings;
use crate::bundle::{Datapath, Flops, MemoryLevel};

/// Arithmetic intensity at a memory level, `AI_l = F / B_l` (FLOP/byte).
///
/// `None` when no byte moved at that level (the intensity is unbounded, there is no point to
/// plot) or an input is not a finite, non-negative number.
pub fn arithmetic_intensity(flops: f64, bytes: f64) -> Option<f64> {
    (flops.is_finite() && bytes.is_finite() && flops >= 0.0 && bytes > 0.0).then(|| flops / bytes)
}

/// Achieved performance, `F / T` (FLOP/s); `None` for a non-positive time.
pub fn achieved_performance(flops: f64, time_s: f64) -> Option<f64> {
    (flops.is_finite() && flops >= 0.0 && time_s.is_finite() && time_s > 0.0)
        .then(|| flops / time_s)
}

/// Attainable performance at intensity `ai` under one bandwidth ceiling and one compute peak,
/// `min(peak, BW × AI)` (Williams et al. 2009, eq. 1).
pub fn attainable_performance(peak: f64, bandwidth: f64, ai: f64) -> f64 {
    peak.min(bandwidth * ai)
}

/// The ridge point, `AI* = peak / BW` (FLOP/byte): below it a kernel is bandwidth-bound at that
/// level, above it compute-bound (Williams et al. 2009).
pub fn ridge_point(peak: f64, bandwidth: f64) -> f64 {
    peak / bandwidth
}

/// Headroom, `attainable / achieved`: how many times faster the kernel could run before it hits
/// the ceiling that binds it. 1 means it runs at its ceiling.
pub fn headroom(attainable: f64, achieved: f64) -> Option<f64> {
    (achieved > 0.0 && attainable.is_finite()).then(|| attainable / achieved)
}

/// The compute time floor of a precision mix, `T_c = Σ_p F_p / peak_p` (seconds).
///
/// Tensor Core and CUDA-core work, and each precision, are counted against their own peak; for a
/// kernel on one datapath this is `F / peak`. The datapaths whose peak is unknown are left out
/// and returned, so the floor is a lower bound on the time the known work takes. `None` when no
/// FLOP has a known peak.
pub fn compute_time_floor(flops: &Flops, ceilings: &Ceilings) -> (Option<f64>, Vec<Datapath>) {
    let t = compute_terms(flops, ceilings);
    (t.floor, t.missing)
}

/// The compute roof that binds a precision mix: the datapath whose work takes the longest on its
/// own peak, the largest term `F_p / peak_p` of the compute floor `T_c = Σ_p F_p / peak_p` (for a
/// kernel on one datapath, that datapath). `None` when no FLOP has a known peak. Ties go to the
/// datapath listed first ([`Datapath::ALL`]: CUDA cores before Tensor Cores).
pub fn dominant_roof(flops: &Flops, ceilings: &Ceilings) -> Option<Datapath> {
    compute_terms(flops, ceilings).roof
}

/// The compute terms `F_p / peak_p` of a precision mix, summed and ranked in one pass.
#[derive(Debug, Clone, PartialEq)]
pub struct ComputeTerms {
    /// [`compute_time_floor`]'s floor, seconds.
    pub floor: Option<f64>,
    /// The datapaths without a known peak ([`compute_time_floor`]).
    pub missing: Vec<Datapath>,
    /// [`dominant_roof`].
    pub roof: Option<Datapath>,
}

/// [`compute_time_floor`] and [`dominant_roof`] at once, each peak looked up and each term
/// divided once.
pub fn compute_terms(flops: &Flops, ceilings: &Ceilings) -> ComputeTerms {
    let mut floor = None;
    let mut missing = Vec::new();
    let mut best: Option<(Datapath, f64)> = None;
    for (d, f) in flops.iter() {
        let Some(p) = ceilings.peak(d) else {
            missing.push(d);
            continue;
        };
        let t = f / p;
        *floor.get_or_insert(0.0) += t;
        if p > 0.0 && best.is_none_or(|(_, bt)| t > bt) {
            best = Some((d, t));
        }
    }
    ComputeTerms {
        floor,
        missing,
        roof: best.map(|(d, _)| d),
    }
}

/// The effective compute peak for a precision mix, `F_total / Σ_p (F_p / peak_p)` (FLOP/s): the
/// roof a mixed kernel sees. Equals the datapath's peak for a single-datapath kernel. `None`
/// when no FLOP has a known peak.
pub fn effective_peak(flops: &Flops, ceilings: &Ceilings) -> Option<f64> {
    let (floor, missing) = compute_time_floor(flops, ceilings);
    effective_peak_from_floor(flops, floor, &missing)
}

/// [`effective_peak`] from an already computed [`compute_time_floor`].
pub fn effective_peak_from_floor(
    flops: &Flops,
    floor: Option<f64>,
    missing: &[Datapath],
) -> Option<f64> {
    let known: f64 = flops
        .iter()
        .filter(|(d, _)| !missing.contains(d))
        .map(|(_, f)| f)
        .sum();
    floor.filter(|t| *t > 0.0).map(|t| known / t)
}

/// The ceiling that binds a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bound {
    /// The compute peak of its precision mix.
    Compute,
    /// The bandwidth of a memory level.
    Memory(MemoryLevel),
}

impl Bound {
    /// The name used in tables and CSV: `compute`, `l1`, `l2`, `hbm`.
    pub fn key(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Memory(l) => l.key(),
        }
    }

    /// The binding ceiling by name, as tables, tooltips and `roofline info` show it: the memory
    /// level (`HBM`, `L2`, `L1`) of a bandwidth bound, the compute roof `roof` (`Tensor FP16`,
    /// `FP32`) of a compute bound (`compute` when unknown).
    pub fn ceiling_label(self, roof: Option<Datapath>) -> &'static str {
        match (self, roof) {
            (Bound::Memory(l), _) => l.label(),
            (Bound::Compute, Some(d)) => d.label(),
            (Bound::Compute, None) => "compute",
        }
    }

    /// [`Bound::ceiling_label`] as a key, for CSV and JSON (`hbm`, `tensor_fp16`).
    pub fn ceiling_key(self, roof: Option<Datapath>) -> &'static str {
        match (self, roof) {
            (Bound::Memory(l), _) => l.key(),
            (Bound::Compute, Some(d)) => d.key(),
            (Bound::Compute, None) => "compute",
        }
    }
}

/// The hierarchical verdict on one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct HierarchicalBound {
    /// The time floor, seconds: `max(T_c, B_l / BW_l for every level)`.
    pub floor_s: f64,
    /// Which term is largest.
    pub bound: Bound,
    /// Attainable performance, `F / floor` (FLOP/s): the lowest of the ceilings at the kernel's
    /// intensities, for its precision mix.
    pub attainable: f64,
    /// The compute roof of its precision mix ([`dominant_roof`]): the roof that binds when the
    /// bound is [`Bound::Compute`].
    pub roof: Option<Datapath>,
}

impl HierarchicalBound {
    /// The binding ceiling by name, as tables, tooltips and `roofline info` show it: the memory
    /// level (`HBM`, `L2`, `L1`) of a bandwidth-bound kernel, the compute roof (`Tensor FP16`,
    /// `FP32`) of a compute-bound one ([`HierarchicalBound::roof`]; `compute` when unknown).
    pub fn ceiling_label(&self) -> &'static str {
        self.bound.ceiling_label(self.roof)
    }

    /// [`HierarchicalBound::ceiling_label`] as a key, for CSV and JSON (`hbm`, `tensor_fp16`).
    pub fn ceiling_key(&self) -> &'static str {
        self.bound.ceiling_key(self.roof)
    }
}

/// Binds a kernel against every ceiling at once: the compute floor of its precision mix and the
/// time each memory level needs, `T_l = B_l / BW_l`. The largest term is the binding ceiling,
/// and `F / max(...)` equals `min(peak, BW_l × AI_l)` over the levels, the hierarchical roofline's
/// attainable performance (Yang et al. 2020) generalised to a precision mix.
///
/// `bytes` are `(level, bytes)` pairs; levels without a ceiling are skipped. `None` when no term
/// is known, when the kernel did no FLOP (a pure copy has no roofline point), or when some of its
/// FLOPs ran on a datapath without a known peak: their time is unknown, and a bound that left it
/// out would overstate the attainable performance.
pub fn bind(
    flops: &Flops,
    bytes: impl IntoIterator<Item = (MemoryLevel, f64)>,
    ceilings: &Ceilings,
) -> Option<HierarchicalBound> {
    let ComputeTerms {
        floor,
        missing,
        roof,
    } = compute_terms(flops, ceilings);
    bind_with_floor(flops.total(), (floor, roof), &missing, bytes, ceilings)
}

/// [`bind`] from an already computed [`compute_time_floor`] and [`dominant_roof`]
/// (`compute`, `roof`, `missing_peaks`: [`compute_terms`]) and the kernel's total FLOPs.
pub fn bind_with_floor(
    total_flops: f64,
    (compute, roof): (Option<f64>, Option<Datapath>),
    missing_peaks: &[Datapath],
    bytes: impl IntoIterator<Item = (MemoryLevel, f64)>,
    ceilings: &Ceilings,
) -> Option<HierarchicalBound> {
    if total_flops <= 0.0 || !missing_peaks.is_empty() {
        return None;
    }
    let mut best: Option<(f64, Bound)> = compute.map(|t| (t, Bound::Compute));
    for (level, b) in bytes {
        let Some(bw) = ceilings.bandwidth(level) else {
            continue;
        };
        let t = b / bw;
        if best.is_none_or(|(bt, _)| t > bt) {
            best = Some((t, Bound::Memory(level)));
        }
    }
    let (floor_s, bound) = best.filter(|(t, _)| *t > 0.0)?;
    Some(HierarchicalBound {
        floor_s,
        bound,
        attainable: total_flops / floor_s,
        roof,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{BandwidthCeiling, ComputeCeiling, Machine, Method};

    /// The V100 ceilings of the 2020 study (reference README).
    fn v100() -> Ceilings {
        let bw = |level, v: f64| BandwidthCeiling::new(level, v * 1e9, Method::Empirical);
        let cp = |datapath, v: f64| ComputeCeiling::new(datapath, v * 1e9, Method::Empirical);
        Ceilings::from_machine(&Machine {
            device: "0".into(),
            bandwidth: vec![
                bw(MemoryLevel::L1, 14336.0),
                bw(MemoryLevel::L2, 2996.77),
                bw(MemoryLevel::Hbm, 828.758),
            ],
            compute: vec![
                cp(Datapath::Fp32, 15158.6),
                cp(Datapath::Fp16, 29181.6),
                cp(Datapath::TensorFp16, 106496.0),
            ],
            ..Machine::default()
        })
    }

    #[test]
    fn basic_formulas() {
        assert_eq!(arithmetic_intensity(100.0, 50.0), Some(2.0));
        assert_eq!(arithmetic_intensity(100.0, 0.0), None);
        assert_eq!(arithmetic_intensity(f64::NAN, 1.0), None);
        assert_eq!(achieved_performance(10.0, 2.0), Some(5.0));
        assert_eq!(achieved_performance(10.0, 0.0), None);
        assert_eq!(attainable_performance(100.0, 10.0, 2.0), 20.0);
        assert_eq!(attainable_performance(100.0, 10.0, 20.0), 100.0);
        assert_eq!(headroom(20.0, 5.0), Some(4.0));
        assert_eq!(headroom(20.0, 0.0), None);
        // V100 HBM ridge: 15158.6 / 828.758 = 18.29074 FLOP/byte.
        assert!((ridge_point(15158.6e9, 828.758e9) - 18.290_743).abs() < 1e-5);
    }

    #[test]
    fn mixed_precision_floor_sums_per_datapath_times() {
        let c = v100();
        let f = Flops {
            fp32: Some(15158.6e9),             // 1 s of FP32 work
            tensor_fp16: Some(2.0 * 106496e9), // 2 s of tensor work
            ..Flops::default()
        };
        let (floor, missing) = compute_time_floor(&f, &c);
        assert!((floor.unwrap() - 3.0).abs() < 1e-12);
        assert!(missing.is_empty());
        let peak = effective_peak(&f, &c).unwrap();
        assert!((peak - (15158.6e9 + 2.0 * 106496e9) / 3.0).abs() < 1.0);
        // A datapath without a peak is reported, not silently counted.
        let g = Flops {
            fp64: Some(1e9),
            fp32: Some(15158.6e9),
            ..Flops::default()
        };
        let (floor, missing) = compute_time_floor(&g, &c);
        assert_eq!(floor, Some(1.0));
        assert_eq!(missing, vec![Datapath::Fp64]);
    }

    /// The roof named for a precision mix is the datapath whose work takes the longest on its
    /// own peak, not the one with the most FLOPs.
    #[test]
    fn the_dominant_roof_is_the_longest_compute_term() {
        let c = v100();
        // 10 TFLOP on Tensor Cores (94 ms) and 2 TFLOP of FP32 (132 ms): FP32 binds.
        let f = Flops {
            fp32: Some(2e12),
            tensor_fp16: Some(10e12),
            ..Flops::default()
        };
        assert_eq!(dominant_roof(&f, &c), Some(Datapath::Fp32));
        let b = bind(&f, [(MemoryLevel::Hbm, 1e6)], &c).unwrap();
        assert_eq!((b.bound, b.ceiling_label()), (Bound::Compute, "FP32"));
        // Less FP32 work: the Tensor Core roof binds.
        let g = Flops {
            fp32: Some(1e11),
            ..f
        };
        assert_eq!(dominant_roof(&g, &c), Some(Datapath::TensorFp16));
        assert_eq!(dominant_roof(&Flops::default(), &c), None);
    }

    #[test]
    fn binding_ceiling_is_the_slowest_term() {
        let c = v100();
        let f = Flops {
            fp32: Some(1e9),
            ..Flops::default()
        };
        // HBM: 1 GB at 828.758 GB/s = 1.2066 ms; compute: 1 GFLOP at 15158.6 GFLOP/s = 66 µs.
        let b = bind(
            &f,
            [
                (MemoryLevel::L1, 2e9),
                (MemoryLevel::L2, 1.5e9),
                (MemoryLevel::Hbm, 1e9),
            ],
            &c,
        )
        .unwrap();
        assert_eq!(b.bound, Bound::Memory(MemoryLevel::Hbm));
        assert!((b.floor_s - 1e9 / 828.758e9).abs() < 1e-15);
        // Attainable equals min over levels of BW_l × AI_l and the peak.
        let expect = [
            attainable_performance(15158.6e9, 14336e9, 1e9 / 2e9),
            attainable_performance(15158.6e9, 2996.77e9, 1e9 / 1.5e9),
            attainable_performance(15158.6e9, 828.758e9, 1e9 / 1e9),
        ]
        .into_iter()
        .fold(f64::INFINITY, f64::min);
        assert!((b.attainable - expect).abs() / expect < 1e-12);

        assert_eq!((b.ceiling_label(), b.ceiling_key()), ("HBM", "hbm"));
        // A kernel with high intensity everywhere is compute-bound, by its datapath's roof.
        let b = bind(&f, [(MemoryLevel::Hbm, 1e6)], &c).unwrap();
        assert_eq!(b.bound, Bound::Compute);
        assert_eq!((b.ceiling_label(), b.ceiling_key()), ("FP32", "fp32"));
        assert!((b.attainable - 15158.6e9).abs() < 1.0);

        // No FLOP: no roofline point.
        assert!(bind(&Flops::default(), [(MemoryLevel::Hbm, 1e6)], &c).is_none());
        // FP64 work on a machine without an FP64 peak: no honest bound.
        let g = Flops {
            fp64: Some(1e12),
            fp32: Some(1e9),
            ..Flops::default()
        };
        assert!(bind(&g, [(MemoryLevel::Hbm, 1e6)], &c).is_none());
    }
}
