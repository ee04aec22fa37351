//! Per-kernel analysis: every figure `roofline info`, the charts and the viewer's table show.
//!
//! One [`KernelAnalysis`] per kernel entry, computed once from the bundle and the device's
//! [`Ceilings`] by the formulas in [`crate::analysis::hierarchical`] and [`crate::analysis::time_based`].

use rustc_hash::FxHashMap;

use crate::analysis::aggregate::share_of_time;
use crate::analysis::ceilings::{CeilingSource, Ceilings};
use crate::analysis::hierarchical::{self, Bound, HierarchicalBound};
use crate::analysis::time_based::{self, TimeBound};
use crate::bundle::{Bundle, Kernel, MemoryLevel};

/// What gave the time-based roofline a kernel's F and B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComplexitySource {
    /// The analytical complexity recorded with the kernel (an operator rule, a study's formula).
    Analytical,
    /// The analytical complexity of an Inductor (`torch.compile`) kernel: from its buffers, or
    /// Inductor's own estimate.
    Inductor,
    /// Measured counters: all FLOPs, and the bytes moved at HBM.
    Counters,
}

impl ComplexitySource {
    /// The name `roofline info` prints (`analytical`, `inductor`, `counters`).
    pub fn key(self) -> &'static str {
        match self {
            ComplexitySource::Analytical => "analytical",
            ComplexitySource::Inductor => "inductor",
            ComplexitySource::Counters => "counters",
        }
    }
}

/// The analysis of one kernel entry (one launch, or one aggregated name).
#[derive(Debug, Clone, PartialEq)]
pub struct KernelAnalysis {
    /// Index of the kernel in the slice that was analysed.
    pub index: usize,
    /// Run time, seconds (all launches).
    pub time_s: f64,
    /// Share of the analysed kernels' total time.
    pub share_of_time: f64,
    /// All FLOPs counted (CUDA cores and Tensor Cores); `None` when no counter was recorded.
    pub flops: Option<f64>,
    /// FLOPs counted on Tensor Cores; `None` when no counter was recorded.
    pub flops_tensor: Option<f64>,
    /// Bytes at L1, L2, HBM (in [`MemoryLevel::KERNEL_LEVELS`] order).
    pub bytes: [Option<f64>; 3],
    /// Arithmetic intensity at L1, L2, HBM, `F / B_l`.
    pub ai: [Option<f64>; 3],
    /// Achieved performance, FLOP/s: the counted FLOPs over the time, else the analytical F over
    /// the time ([`KernelAnalysis::complexity_source`] says which).
    pub flop_per_s: Option<f64>,
    /// The effective compute peak of the kernel's precision mix, FLOP/s.
    pub peak: Option<f64>,
    /// The hierarchical verdict: binding ceiling, attainable performance.
    pub hierarchical: Option<HierarchicalBound>,
    /// Headroom, attainable / achieved.
    pub headroom: Option<f64>,
    /// The time-based verdict.
    pub time_bound: Option<TimeBound>,
    /// Where the time-based F and B came from; `None` when nothing gave them.
    pub complexity_source: Option<ComplexitySource>,
    /// Time-based F, FLOPs; `None` when unknown.
    pub complexity_flops: Option<f64>,
    /// Time-based B, bytes (None when unknown).
    pub complexity_bytes: Option<f64>,
    /// `T / T_bound`.
    pub gap: Option<f64>,
    /// The compute roof of the kernel's work: the datapath of its analytical F when recorded,
    /// else the roof that binds its counted precision mix ([`hierarchical::dominant_roof`]).
    /// What [`KernelAnalysis::time_ceiling_label`] names for a compute-bound kernel.
    pub roof: Option<crate::bundle::Datapath>,
    /// Datapaths with FLOPs but no ceiling: while any is listed, no bound is computed.
    pub missing_peaks: Vec<crate::bundle::Datapath>,
    /// Where the binding ceiling's figure comes from (the hierarchical bound's, else the
    /// time-based one's): measured, a datasheet's, derived, theoretical or estimated.
    pub ceiling_source: Option<CeilingSource>,
    /// The kernel's figures pass validation but what is derived from them leaves the range of
    /// a double (FLOPs near 1e308 over a time near 1e-300: infinite FLOP/s, a zero gap). Its
    /// derived figures are then left unknown (`None`), and the charts keep it off with a note.
    pub out_of_range: bool,
}

impl KernelAnalysis {
    /// The ceiling that binds the kernel on the time-based roofline, by name: its compute roof
    /// ([`KernelAnalysis::roof`], `compute` when unknown) in the compute region, `HBM` in the
    /// bandwidth region (the time-based roofline's `B / BW` is against HBM), `launch overhead`
    /// in the launch region; `None` without a time bound.
    pub fn time_ceiling_label(&self) -> Option<&'static str> {
        self.time_bound.map(|tb| match tb.region {
            time_based::Region::Compute => Bound::Compute.ceiling_label(self.roof),
            time_based::Region::Bandwidth => MemoryLevel::Hbm.label(),
            time_based::Region::LaunchOverhead => "launch overhead",
        })
    }
}

/// True for a derived figure that a double cannot hold: not finite, or a positive quantity that
/// underflowed to zero.
fn unrepresentable(v: Option<f64>, positive: bool) -> bool {
    v.is_some_and(|v| !v.is_finite() || (positive && v <= 0.0))
}

/// Analyses kernels against the ceilings of the device each ran on. Kernels whose device has no
/// machine characterization get their intensities and achieved performance, but no bound.
pub fn analyze(bundle: &Bundle, kernels: &[Kernel]) -> Vec<KernelAnalysis> {
    analyze_with(kernels, own_ceilings(bundle))
}

/// The ceilings of the device a kernel ran on, from `bundle`'s machines (what [`analyze`] uses).
pub fn own_ceilings(bundle: &Bundle) -> impl Fn(&Kernel) -> Option<Ceilings> + '_ {
    |k| {
        bundle
            .device_of(k)
            .and_then(|d| Ceilings::of_device(bundle, Some(d)))
    }
}

/// Analyses kernels with ceilings chosen per device id by `ceilings_for` (the viewer uses this to
/// swap in another bundle's machine or edited ceilings). Ceilings are resolved once per device.
pub fn analyze_with(
    kernels: &[Kernel],
    ceilings_for: impl Fn(&Kernel) -> Option<Ceilings>,
) -> Vec<KernelAnalysis> {
    analyze_in_order(kernels, 0..kernels.len(), ceilings_for)
}

/// [`analyze_with`], the analyses largest time first ([`largest_first`]): the order of reports
/// and charts, without sorting the analyses themselves.
pub fn analyze_largest_first(
    kernels: &[Kernel],
    ceilings_for: impl Fn(&Kernel) -> Option<Ceilings>,
) -> Vec<KernelAnalysis> {
    analyze_in_order(kernels, largest_first(kernels), ceilings_for)
}

/// The kernels at positions `order`, analysed in that order (each analysis keeps its kernel's
/// position as `index`).
fn analyze_in_order(
    kernels: &[Kernel],
    order: impl IntoIterator<Item = usize>,
    ceilings_for: impl Fn(&Kernel) -> Option<Ceilings>,
) -> Vec<KernelAnalysis> {
    let total = total_time_s(kernels);
    let mut cache: FxHashMap<Option<&str>, Option<Ceilings>> = FxHashMap::default();
    order
        .into_iter()
        .map(|i| {
            let k = &kernels[i];
            let c = cache
                .entry(k.device.as_deref())
                .or_insert_with(|| ceilings_for(k));
            analyze_kernel(i, k, c.as_ref(), total)
        })
        .collect()
}

/// Positions of `kernels`, largest time first, ties in their given order (a stable sort): the
/// order of [`crate::analysis::Analysed::top`] and of reports ([`analyze_largest_first`]).
/// Analysing the kernels in this order costs less than sorting their analyses, which are large:
/// moving each about log₂ n times was a third of the viewer's analysis of a 10,000-kernel
/// baseline.
pub fn largest_first(kernels: &[Kernel]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..kernels.len()).collect();
    sort_indices(&mut order, &|x, y| {
        kernels[y].time.total_s.total_cmp(&kernels[x].time.total_s)
    });
    order
}

/// Sorts positions by `cmp`, stably: the one sort of positions (the viewer's wasm holds each
/// sort once per comparator type, a few kilobytes each; a comparator behind `dyn` is one type).
pub fn sort_indices(order: &mut [usize], cmp: &dyn Fn(usize, usize) -> std::cmp::Ordering) {
    order.sort_by(|&a, &b| cmp(a, b));
}

/// Sorts `v` by `cmp`, stably, through [`sort_indices`] (one sort in the wasm, whatever `T`),
/// then moves the items into place.
pub fn sort_slice_by<T>(v: &mut [T], cmp: impl Fn(&T, &T) -> std::cmp::Ordering) {
    let mut order: Vec<usize> = (0..v.len()).collect();
    sort_indices(&mut order, &|a, b| cmp(&v[a], &v[b]));
    // `to[j]`: where the item now at `j` goes; each swap puts one item in its place.
    let mut to = vec![0; v.len()];
    for (at, &j) in order.iter().enumerate() {
        to[j] = at;
    }
    for i in 0..v.len() {
        while to[i] != i {
            let j = to[i];
            v.swap(i, j);
            to.swap(i, j);
        }
    }
}

/// The kernels' summed time, seconds: the denominator of each one's share of time.
pub fn total_time_s(kernels: &[Kernel]) -> f64 {
    kernels.iter().map(|k| k.time.total_s).sum()
}

/// Analyses one kernel; `total_time_s` is the denominator of its share of time.
pub fn analyze_kernel(
    index: usize,
    k: &Kernel,
    ceilings: Option<&Ceilings>,
    total_time_s: f64,
) -> KernelAnalysis {
    let t = k.time.total_s;
    let counted = !k.flops.is_unknown();
    let flops = counted.then(|| k.flops.total());
    let bytes = MemoryLevel::KERNEL_LEVELS.map(|l| k.bytes.get(l));
    let ai = bytes.map(|b| {
        b.zip(flops)
            .and_then(|(b, f)| hierarchical::arithmetic_intensity(f, b))
    });
    let (complexity_source, complexity_flops, complexity_bytes) = match k.complexity {
        Some(c) => {
            let inductor = k
                .operator
                .as_ref()
                .is_some_and(|o| o.rule.as_deref() == Some("inductor"));
            let source = if inductor {
                ComplexitySource::Inductor
            } else {
                ComplexitySource::Analytical
            };
            (Some(source), Some(c.flops), Some(c.bytes))
        }
        None if counted => (Some(ComplexitySource::Counters), flops, k.bytes.hbm),
        None => (None, None, None),
    };
    let measured_rate = flops
        .filter(|f| *f > 0.0)
        .and_then(|f| hierarchical::achieved_performance(f, t));
    let flop_per_s = measured_rate.or_else(|| {
        complexity_flops
            .filter(|f| *f > 0.0)
            .and_then(|f| hierarchical::achieved_performance(f, t))
    });

    let mut a = KernelAnalysis {
        index,
        time_s: t,
        share_of_time: share_of_time(t, total_time_s),
        flops,
        flops_tensor: counted.then(|| k.flops.tensor()),
        bytes,
        ai,
        flop_per_s,
        peak: None,
        hierarchical: None,
        headroom: None,
        time_bound: None,
        complexity_source,
        complexity_flops,
        complexity_bytes,
        gap: None,
        roof: None,
        missing_peaks: Vec::new(),
        ceiling_source: None,
        out_of_range: false,
    };
    let Some(c) = ceilings else {
        return check_range(a);
    };

    let hierarchical::ComputeTerms {
        floor,
        missing,
        roof,
    } = hierarchical::compute_terms(&k.flops, c);
    if !missing.is_empty() {
        // Some FLOPs ran on a datapath without a ceiling: their time is unknown, so neither
        // roofline can bound the kernel honestly.
        a.missing_peaks = missing;
        return check_range(a);
    }
    a.peak = hierarchical::effective_peak_from_floor(&k.flops, floor, &missing);
    // The datapath of the analytical F, with its peak, when it has one.
    let analytical_peak = k
        .complexity
        .and_then(|cx| cx.datapath)
        .and_then(|d| c.peak(d).map(|p| (d, p)));
    a.roof = match complexity_source {
        Some(ComplexitySource::Analytical | ComplexitySource::Inductor) => {
            analytical_peak.map(|(d, _)| d).or(roof)
        }
        _ => roof,
    };
    a.hierarchical = flops
        .and_then(|f| hierarchical::bind_with_floor(f, (floor, roof), &missing, k.bytes.iter(), c));
    a.headroom = match (&a.hierarchical, measured_rate) {
        (Some(h), Some(p)) => hierarchical::headroom(h.attainable, p),
        _ => None,
    };

    // Time-based: the compute term is F / P. With counters, Σ F_p / P_p directly; with
    // analytical F, the peak of F's datapath when recorded, else of the counted mix.
    let compute_s = match complexity_source {
        Some(ComplexitySource::Counters) => floor,
        Some(_) => {
            let peak = analytical_peak.map(|(_, p)| p).or(a.peak);
            complexity_flops.zip(peak).map(|(f, p)| f / p)
        }
        None => None,
    };
    // A bound needs F's term: with F unknown, or F on a datapath without a ceiling, the larger
    // of the other terms would be named the bound where the compute term may be larger.
    let compute_known = compute_s.is_some() || complexity_flops == Some(0.0);
    a.time_bound = if complexity_source.is_some() && compute_known {
        time_based::time_bound(
            compute_s,
            complexity_bytes,
            c.bandwidth(MemoryLevel::Hbm),
            k.launches,
            c.launch_overhead_s,
        )
    } else {
        None
    };
    a.gap = a
        .time_bound
        .as_ref()
        .and_then(|tb| time_based::gap(t, tb.bound_s));
    a.ceiling_source = binding_source(&a, c);
    check_range(a)
}

/// Where the ceiling that binds `a` comes from, by `c`'s picks: the hierarchical bound's level
/// or roof, else the time-based region's ceiling (the roof, HBM, or the launch overhead).
fn binding_source(a: &KernelAnalysis, c: &Ceilings) -> Option<CeilingSource> {
    let roof =
        |d: Option<crate::bundle::Datapath>| d.and_then(|d| c.peak_pick(d)).map(|p| p.source);
    if let Some(h) = &a.hierarchical {
        return match h.bound {
            Bound::Memory(l) => c.bandwidth_pick(l).map(|p| p.source),
            Bound::Compute => roof(h.roof),
        };
    }
    match a.time_bound.as_ref()?.region {
        time_based::Region::Compute => roof(a.roof),
        time_based::Region::Bandwidth => c.bandwidth_pick(MemoryLevel::Hbm).map(|p| p.source),
        time_based::Region::LaunchOverhead => c.launch_overhead_source,
    }
}

/// Marks an analysis whose derived figures a double cannot hold, and leaves them unknown, so
/// that no `inf` or a zero standing for an underflow reaches a chart or a table.
fn check_range(mut a: KernelAnalysis) -> KernelAnalysis {
    let positive_flops = a.flops.is_some_and(|f| f > 0.0);
    let finite = |v: Option<f64>| v.is_none_or(f64::is_finite);
    let out = !finite(a.flops)
        || !finite(a.flops_tensor)
        || !finite(a.complexity_flops)
        || !a.share_of_time.is_finite()
        || a.ai.iter().any(|ai| unrepresentable(*ai, positive_flops))
        || unrepresentable(a.flop_per_s, true)
        || unrepresentable(a.peak, true)
        || unrepresentable(a.hierarchical.as_ref().map(|h| h.attainable), true)
        || unrepresentable(a.headroom, true)
        || unrepresentable(a.time_bound.as_ref().map(|t| t.bound_s), true)
        || unrepresentable(a.gap, true);
    if out {
        a.out_of_range = true;
        a.ai = [None; 3];
        a.flop_per_s = None;
        a.peak = None;
        a.hierarchical = None;
        a.headroom = None;
        a.time_bound = None;
        a.gap = None;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{
        BandwidthCeiling, Complexity, ComputeCeiling, DataSource, Datapath, LaunchOverhead,
        Machine, Method,
    };

    proptest::proptest! {
        #[test]
        fn sort_slice_by_is_the_standard_stable_sort(v in proptest::collection::vec((0u8..6, 0u16..1000), 0..200)) {
            let mut ours = v.clone();
            sort_slice_by(&mut ours, |a, b| a.0.cmp(&b.0));
            let mut std = v;
            std.sort_by_key(|a| a.0);
            proptest::prop_assert_eq!(ours, std);
        }
    }

    fn ceilings() -> Ceilings {
        let hbm = BandwidthCeiling::new(MemoryLevel::Hbm, 1e12, Method::Empirical);
        let fp32 = ComputeCeiling::new(Datapath::Fp32, 10e12, Method::Empirical);
        Ceilings::from_machine(&Machine {
            device: "0".into(),
            bandwidth: vec![hbm],
            compute: vec![fp32],
            launch_overhead: Some(LaunchOverhead::new(5e-6, Method::Empirical)),
            sweep: vec![],
            ..Machine::default()
        })
    }

    fn kernel(t: f64, fp32: f64, hbm: f64, launches: u64) -> Kernel {
        let mut k = Kernel::new("k", t, DataSource::Suite);
        k.flops.fp32 = Some(fp32);
        k.bytes.hbm = Some(hbm);
        k.launches = launches;
        k
    }

    #[test]
    fn largest_first_is_a_stable_sort_by_time() {
        // Times with ties; positions tell the ties apart.
        let times = [2.0, 5.0, 2.0, 9.0, 5.0, 0.0, 2.0];
        let ks: Vec<Kernel> = times.iter().map(|&t| kernel(t, 1e9, 5e8, 1)).collect();
        assert_eq!(largest_first(&ks), [3, 1, 4, 0, 2, 6, 5]);
        // The order sorting the analyses themselves gives.
        let mut sorted = analyze_with(&ks, |_| Some(ceilings()));
        sorted.sort_by(|a, b| b.time_s.total_cmp(&a.time_s));
        let by_analyses: Vec<usize> = sorted.iter().map(|a| a.index).collect();
        assert_eq!(largest_first(&ks), by_analyses);
        assert_eq!(analyze_largest_first(&ks, |_| Some(ceilings())), sorted);
    }

    #[test]
    fn figures_beyond_a_double_are_out_of_range_not_infinite() {
        // Valid figures (finite, positive) whose quotient overflows: FLOPs 1e308 over 1e-300 s.
        let k = kernel(1e-300, 1e308, 5e8, 1);
        let a = analyze_kernel(0, &k, Some(&ceilings()), 1e-300);
        assert!(a.out_of_range);
        assert_eq!(a.flop_per_s, None);
        assert_eq!((a.headroom, a.gap, a.time_bound), (None, None, None));
        assert_eq!(a.ai, [None; 3]);
        // An ordinary kernel is not.
        let a = analyze_kernel(0, &kernel(1e-3, 1e9, 5e8, 1), Some(&ceilings()), 1e-3);
        assert!(!a.out_of_range);
        // A kernel without FLOPs has intensity 0, which is no underflow.
        let a = analyze_kernel(0, &kernel(1e-3, 0.0, 5e8, 1), Some(&ceilings()), 1e-3);
        assert!(!a.out_of_range, "{a:?}");
    }

    #[test]
    fn hand_computed_kernel() {
        // 1 GFLOP, 0.5 GB at HBM, 1 ms. AI = 2; achieved 1 TFLOP/s; attainable min(10T, 1T×2) =
        // 2 TFLOP/s; headroom 2; time-based: F/P = 0.1 ms, B/BW = 0.5 ms, n t = 5 µs; gap 2.
        let a = analyze_kernel(0, &kernel(1e-3, 1e9, 5e8, 1), Some(&ceilings()), 2e-3);
        assert_eq!(a.ai[2], Some(2.0));
        assert_eq!(a.ai[0], None);
        assert_eq!(a.flop_per_s, Some(1e12));
        assert_eq!(a.share_of_time, 0.5);
        let h = a.hierarchical.as_ref().unwrap();
        assert_eq!(h.bound, Bound::Memory(MemoryLevel::Hbm));
        assert_eq!((h.ceiling_label(), h.roof), ("HBM", Some(Datapath::Fp32)));
        assert!((h.attainable - 2e12).abs() < 1.0);
        assert!((a.headroom.unwrap() - 2.0).abs() < 1e-12);
        let tb = a.time_bound.unwrap();
        assert_eq!(tb.region, time_based::Region::Bandwidth);
        assert_eq!(a.time_ceiling_label(), Some("HBM"));
        assert!((tb.bound_s - 5e-4).abs() < 1e-15);
        assert!((a.gap.unwrap() - 2.0).abs() < 1e-12);
        assert_eq!(a.complexity_source, Some(ComplexitySource::Counters));
    }

    #[test]
    fn analytical_complexity_and_launch_bound() {
        let mut k = kernel(1e-3, 1e6, 1e6, 100);
        k.complexity = Some(Complexity {
            flops: 1e6,
            bytes: 1e6,
            datapath: None,
        });
        let a = analyze_kernel(0, &k, Some(&ceilings()), 1e-3);
        assert_eq!(a.complexity_source, Some(ComplexitySource::Analytical));
        let tb = a.time_bound.unwrap();
        assert_eq!(tb.region, time_based::Region::LaunchOverhead);
        assert_eq!(a.time_ceiling_label(), Some("launch overhead"));
        assert!((tb.bound_s - 5e-4).abs() < 1e-15);
    }

    /// A torch.profiler launch without counters: F and B from its operator, on the datapath of
    /// the operator's input type; the counted FLOPs stay unknown, never zero.
    #[test]
    fn analytical_f_uses_its_own_datapath_and_unknown_stays_unknown() {
        let mut k = Kernel::new("gemm", 1e-3, DataSource::Import);
        let a = analyze_kernel(0, &k, Some(&ceilings()), 1e-3);
        assert_eq!((a.flops, a.flops_tensor), (None, None));
        assert_eq!((a.complexity_source, a.complexity_flops), (None, None));
        assert_eq!((a.flop_per_s, a.time_bound), (None, None));
        assert_eq!(a.ai, [None; 3]);
        k.complexity = Some(Complexity {
            flops: 2e10,
            bytes: 1e6,
            datapath: Some(Datapath::Fp32),
        });
        let a = analyze_kernel(0, &k, Some(&ceilings()), 1e-3);
        assert_eq!(a.flops, None);
        assert_eq!(a.complexity_source, Some(ComplexitySource::Analytical));
        // F / P = 2e10 / 10e12 = 2 ms, above B / BW = 1 µs: compute-bound by FP32.
        let tb = a.time_bound.unwrap();
        assert_eq!(tb.region, time_based::Region::Compute);
        assert!((tb.bound_s - 2e-3).abs() < 1e-15);
        assert_eq!(a.flop_per_s, Some(2e13));
        assert_eq!(a.time_ceiling_label(), Some("FP32"));
        // On a datapath without a ceiling, no compute term.
        k.complexity = Some(Complexity {
            datapath: Some(Datapath::TensorInt8),
            ..k.complexity.unwrap()
        });
        let a = analyze_kernel(0, &k, Some(&ceilings()), 1e-3);
        assert_eq!(a.time_bound, None);
    }

    #[test]
    fn flops_without_a_peak_leave_the_kernel_unbound() {
        let mut k = kernel(1e-3, 1e9, 5e8, 1);
        k.flops.fp64 = Some(1e12);
        let a = analyze_kernel(0, &k, Some(&ceilings()), 1e-3);
        assert_eq!(a.missing_peaks, vec![Datapath::Fp64]);
        assert!(a.hierarchical.is_none() && a.headroom.is_none() && a.time_bound.is_none());
        assert!(a.flop_per_s.is_some() && a.ai[2].is_some());
    }

    #[test]
    fn without_ceilings_only_measured_figures() {
        let a = analyze_kernel(0, &kernel(1e-3, 1e9, 5e8, 1), None, 1e-3);
        assert_eq!(a.flop_per_s, Some(1e12));
        assert!(a.hierarchical.is_none() && a.time_bound.is_none() && a.headroom.is_none());
    }
}
