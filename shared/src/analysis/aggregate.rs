//! Aggregating launches by kernel name, and kernels' share of time.
//!
//! The 2020 hierarchical-roofline study (Yang et al., "Hierarchical Roofline Performance Analysis
//! for Deep Learning Applications", arXiv:2009.05257) groups Nsight Compute launches by kernel
//! name, sums every counter and counts the launches. We do the same, and take a kernel's time as
//! the sum of its launches' times.

use rustc_hash::FxHashMap;

use crate::bundle::{Collective, Complexity, Kernel, KernelTime, LaunchStats};

#[derive(Default)]
struct Acc {
    members: usize,
    launches: u64,
    min: f64,
    max: f64,
    sum_sq: f64,
    /// Per-launch times, kept while every member is a single launch (for the median).
    singles: Vec<f64>,
    all_single: bool,
    stats_known: bool,
    complexity_known: bool,
    /// The group is one already-aggregated entry, copied as it is.
    copied: bool,
    /// A member had no collective, or another kind of it: the group has none.
    collective_dropped: bool,
    /// The first member's statistics when it covers several launches: a group of that one member
    /// keeps them as they are (its median included), so that aggregating twice changes nothing.
    sole: Option<LaunchStats>,
}

/// Groups kernels by (device, name), in order of first appearance: FLOPs, bytes, complexity,
/// launches and time are summed; per-launch statistics are combined (min, max, mean and the
/// pooled standard deviation; the median only when every member is a single launch, or when
/// the group is one already-aggregated member, whose statistics are kept). Grid, block, NVTX
/// range, display name and tags are kept where every member agrees. Aggregating an aggregated
/// list changes nothing, so a reader may aggregate once on load and again later.
pub fn aggregate_by_name<'a>(kernels: impl IntoIterator<Item = &'a Kernel>) -> Vec<Kernel> {
    let mut a = Aggregator::default();
    for k in kernels {
        a.push(k);
    }
    a.finish()
}

/// [`aggregate_by_name`] one kernel at a time, for kernels that are never all in memory (a
/// bundle read as a stream): [`Aggregator::push`] each, then [`Aggregator::finish`]. The result
/// is the same as `aggregate_by_name` of the same kernels in the same order.
#[derive(Default)]
pub struct Aggregator {
    /// Per kernel name, its groups: (device, index into `out`).
    index: FxHashMap<String, Vec<(Option<String>, usize)>>,
    out: Vec<Kernel>,
    accs: Vec<Acc>,
}

impl Aggregator {
    /// Adds one kernel to its group.
    pub fn push(&mut self, k: &Kernel) {
        let next = self.out.len();
        let groups = match self.index.get_mut(k.name.as_str()) {
            Some(g) => g,
            None => self.index.entry(k.name.clone()).or_default(),
        };
        let i = match groups.iter().find(|(d, _)| *d == k.device) {
            Some(&(_, i)) => i,
            None => {
                groups.push((k.device.clone(), next));
                next
            }
        };
        let (out, accs) = (&mut self.out, &mut self.accs);
        if i == next {
            if k.launches > 1 {
                // An already-aggregated entry is copied as it is: merging it alone would give the
                // same, at a higher cost (the viewer re-aggregates on every change).
                out.push(k.clone());
                accs.push(Acc {
                    copied: true,
                    ..Acc::default()
                });
                return;
            }
            out.push(empty_group(k));
            accs.push(Acc::new());
        } else if accs[i].copied {
            // A second member after all: merge the copied first one properly.
            let fresh = empty_group(&out[i]);
            let first = std::mem::replace(&mut out[i], fresh);
            accs[i] = Acc::new();
            merge_into(&mut out[i], &mut accs[i], &first);
        }
        merge_into(&mut out[i], &mut accs[i], k);
    }

    /// The groups, in order of first appearance.
    pub fn finish(self) -> Vec<Kernel> {
        let mut out = self.out;
        for (agg, acc) in out.iter_mut().zip(self.accs) {
            finish(agg, acc);
        }
        out
    }
}

/// A group's entry before any member is merged: `k`'s identity, nothing summed.
fn empty_group(k: &Kernel) -> Kernel {
    Kernel {
        launches: 0,
        time: KernelTime {
            total_s: 0.0,
            per_launch: None,
        },
        flops: Default::default(),
        bytes: Default::default(),
        complexity: k.complexity.map(|_| Complexity {
            flops: 0.0,
            bytes: 0.0,
            datapath: None,
        }),
        ..k.clone()
    }
}

impl Acc {
    fn new() -> Self {
        Acc {
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            all_single: true,
            stats_known: true,
            complexity_known: true,
            ..Acc::default()
        }
    }
}

fn merge_into(agg: &mut Kernel, acc: &mut Acc, k: &Kernel) {
    agg.launches = agg.launches.saturating_add(k.launches);
    agg.time.total_s += k.time.total_s;
    // A counter is known for the group only if it is known for every member.
    if acc.members == 0 {
        agg.flops.clone_from(&k.flops);
        agg.bytes.clone_from(&k.bytes);
        agg.collective.clone_from(&k.collective);
    } else {
        agg.flops.add(&k.flops);
        agg.bytes.add(&k.bytes);
        if !acc.collective_dropped {
            match (&mut agg.collective, &k.collective) {
                (Some(a), Some(c)) if a.kind == c.kind => merge_collective(a, c),
                _ => {
                    agg.collective = None;
                    acc.collective_dropped = true;
                }
            }
        }
    }
    acc.members += 1;
    match (&mut agg.complexity, k.complexity) {
        (Some(a), Some(c)) if acc.complexity_known => a.add(&c),
        _ => acc.complexity_known = false,
    }
    // Keep what every launch agrees on; once a field is dropped there is nothing to compare.
    if agg.grid.is_some() && agg.grid != k.grid {
        agg.grid = None;
    }
    if agg.block.is_some() && agg.block != k.block {
        agg.block = None;
    }
    if agg.nvtx_range.is_some() && agg.nvtx_range != k.nvtx_range {
        agg.nvtx_range = None;
    }
    if agg.display_name.is_some() && agg.display_name != k.display_name {
        agg.display_name = None;
    }
    if !agg.tags.is_empty() && agg.tags != k.tags {
        agg.tags.retain(|key, v| k.tags.get(key) == Some(v));
    }
    acc.launches = acc.launches.saturating_add(k.launches);
    // Launch counts are far below 2^53.
    #[allow(clippy::cast_precision_loss)]
    let n = k.launches as f64;
    if k.launches == 1 {
        let t = k.time.total_s;
        acc.min = acc.min.min(t);
        acc.max = acc.max.max(t);
        acc.sum_sq += t * t;
        acc.singles.push(t);
    } else {
        if acc.members == 1 {
            acc.sole.clone_from(&k.time.per_launch);
        }
        acc.all_single = false;
        acc.singles = Vec::new();
        match &k.time.per_launch {
            Some(s) if acc.stats_known => {
                acc.min = acc.min.min(s.min_s);
                acc.max = acc.max.max(s.max_s);
                match s.stddev_s {
                    // Σ t² over the member's launches = n (σ² + μ²).
                    Some(sd) => acc.sum_sq += n * (sd * sd + s.mean_s * s.mean_s),
                    None => acc.sum_sq = f64::NAN,
                }
            }
            _ => acc.stats_known = false,
        }
    }
}

/// Another launch's collective added to a group's: sizes and times summed (unknown where either
/// is), what both record kept where they agree, the per-launch place and start dropped.
pub(crate) fn merge_collective(a: &mut Collective, c: &Collective) {
    let sum = |x: &mut Option<f64>, y: Option<f64>| {
        *x = x.zip(y).map(|(x, y)| x + y);
    };
    sum(&mut a.bytes, c.bytes);
    sum(&mut a.exposed_s, c.exposed_s);
    sum(&mut a.overlapped_s, c.overlapped_s);
    fn keep<T: PartialEq>(x: &mut Option<T>, y: &Option<T>) {
        if x.is_some() && x != y {
            *x = None;
        }
    }
    keep(&mut a.recorded, &c.recorded);
    keep(&mut a.dtype, &c.dtype);
    keep(&mut a.group_size, &c.group_size);
    keep(&mut a.group_size_from, &c.group_size_from);
    keep(&mut a.process_group, &c.process_group);
    keep(&mut a.scope, &c.scope);
    a.sequence = None;
    a.start_ns = None;
}

fn finish(agg: &mut Kernel, mut acc: Acc) {
    if acc.copied {
        return;
    }
    if !acc.complexity_known {
        agg.complexity = None;
    }
    if !acc.stats_known || acc.launches == 0 {
        agg.time.per_launch = None;
        return;
    }
    if acc.members == 1
        && let Some(s) = acc.sole.take()
    {
        agg.time.per_launch = Some(s);
        return;
    }
    #[allow(clippy::cast_precision_loss)]
    let n = acc.launches as f64;
    let mean = agg.time.total_s / n;
    let var = acc.sum_sq / n - mean * mean;
    let median = if acc.all_single && !acc.singles.is_empty() {
        crate::analysis::stats::median(&acc.singles)
    } else {
        None
    };
    agg.time.per_launch = Some(LaunchStats {
        min_s: acc.min,
        median_s: median,
        mean_s: if acc.min <= acc.max {
            mean.clamp(acc.min, acc.max)
        } else {
            mean
        },
        max_s: acc.max,
        // Rounding can push a tiny variance below zero.
        stddev_s: var.is_finite().then(|| var.max(0.0).sqrt()),
    });
}

/// Share of total time, `T_k / Σ T` (0 when the total is 0).
pub fn share_of_time(time_s: f64, total_s: f64) -> f64 {
    if total_s > 0.0 { time_s / total_s } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{DataSource, Datapath};

    fn launch(name: &str, t: f64, fp32: f64, hbm: f64) -> Kernel {
        let mut k = Kernel::new(name, t, DataSource::NsightCompute);
        k.grid = Some([1, 1, 1]);
        k.block = Some([128, 1, 1]);
        k.flops.fp32 = Some(fp32);
        k.bytes.hbm = Some(hbm);
        k.complexity = Some(Complexity {
            flops: fp32,
            bytes: hbm,
            datapath: None,
        });
        k
    }

    /// The complexity's datapath survives aggregation where every launch agrees, and is
    /// unknown where launches computed on different datapaths.
    #[test]
    fn the_complexity_datapath_is_kept_only_where_launches_agree() {
        let launch = |d: Datapath| {
            let mut k = Kernel::new("k", 1e-3, DataSource::Import);
            k.complexity = Some(Complexity {
                flops: 10.0,
                bytes: 4.0,
                datapath: Some(d),
            });
            k
        };
        let same = aggregate_by_name(&[launch(Datapath::Fp32), launch(Datapath::Fp32)]);
        let c = same[0].complexity.unwrap();
        assert_eq!((c.flops, c.datapath), (20.0, Some(Datapath::Fp32)));
        let mixed = aggregate_by_name(&[launch(Datapath::Fp32), launch(Datapath::TensorBf16)]);
        assert_eq!(mixed[0].complexity.unwrap().datapath, None);
    }

    #[test]
    fn sums_counters_and_computes_statistics() {
        let mut b2 = launch("b", 4.0, 10.0, 1.0);
        b2.grid = Some([2, 1, 1]);
        let ks = vec![
            launch("a", 1.0, 100.0, 10.0),
            launch("b", 2.0, 10.0, 1.0),
            launch("a", 3.0, 100.0, 10.0),
            b2,
            launch("a", 2.0, 100.0, 10.0),
        ];
        let agg = aggregate_by_name(&ks);
        assert_eq!(agg.len(), 2);
        let a = &agg[0];
        assert_eq!(a.name, "a");
        assert_eq!(a.launches, 3);
        assert_eq!(a.time.total_s, 6.0);
        assert_eq!(a.flops.fp32, Some(300.0));
        assert_eq!(a.bytes.hbm, Some(30.0));
        assert_eq!(a.bytes.l1, None);
        assert_eq!(a.complexity.unwrap().flops, 300.0);
        let s = a.time.per_launch.as_ref().unwrap();
        assert_eq!(
            (s.min_s, s.median_s, s.mean_s, s.max_s),
            (1.0, Some(2.0), 2.0, 3.0)
        );
        // Population σ of {1, 3, 2} = sqrt(2/3).
        assert!((s.stddev_s.unwrap() - (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(a.grid, Some([1, 1, 1]));
        let b = &agg[1];
        assert_eq!(b.grid, None, "launches disagree on the grid");
        assert_eq!(b.block, Some([128, 1, 1]));
        assert_eq!(b.time.per_launch.as_ref().unwrap().median_s, Some(3.0));
    }

    #[test]
    fn aggregation_is_idempotent() {
        let mut ks: Vec<Kernel> = [1.0, 2.0, 3.0, 4.0, 5.0]
            .iter()
            .map(|t| launch("a", *t, 1.0, 1.0))
            .collect();
        ks.push(launch("b", 7.0, 2.0, 3.0));
        ks.extend([0.5, 1.5].iter().map(|t| launch("c", *t, 1.0, 1.0)));
        let once = aggregate_by_name(&ks);
        assert_eq!(
            once[0].time.per_launch.as_ref().unwrap().median_s,
            Some(3.0)
        );
        assert_eq!(aggregate_by_name(&once), once);
        // An aggregated entry followed by more of its launches is merged as if it came alone:
        // the group takes the first entry's source.
        let mut first = once[0].clone();
        first.source = DataSource::Import;
        let merged = aggregate_by_name([&first, &launch("a", 6.0, 1.0, 1.0)]);
        assert_eq!(merged[0].source, DataSource::Import);
        assert_eq!(merged[0].launches, 6);
        assert_eq!(merged[0].time.total_s, 21.0);
        assert_eq!(merged[0].time.per_launch.as_ref().unwrap().median_s, None);
        // An entry covering several launches without statistics stays as it is.
        let mut k = launch("d", 4.0, 1.0, 1.0);
        k.launches = 3;
        k.display_name = Some("d".into());
        assert_eq!(aggregate_by_name([&k]), vec![k]);
    }

    #[test]
    fn re_aggregation_pools_statistics() {
        let ks: Vec<Kernel> = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .map(|t| launch("k", *t, 1.0, 1.0))
            .collect();
        let once = aggregate_by_name(&ks);
        let halves = [aggregate_by_name(&ks[..2]), aggregate_by_name(&ks[2..])].concat();
        let twice = aggregate_by_name(&halves);
        let (a, b) = (
            once[0].time.per_launch.as_ref().unwrap(),
            twice[0].time.per_launch.as_ref().unwrap(),
        );
        assert_eq!(twice[0].launches, 6);
        assert_eq!((a.min_s, a.max_s, a.mean_s), (b.min_s, b.max_s, b.mean_s));
        assert!((a.stddev_s.unwrap() - b.stddev_s.unwrap()).abs() < 1e-12);
        assert_eq!(b.median_s, None, "the median of medians is not the median");
        assert_eq!(a.median_s, Some(3.5));
    }

    #[test]
    fn unknown_complexity_and_stats_propagate() {
        let mut x = launch("k", 1.0, 1.0, 1.0);
        x.complexity = None;
        let mut y = launch("k", 1.0, 1.0, 1.0);
        y.launches = 5;
        let agg = aggregate_by_name(&[launch("k", 1.0, 1.0, 1.0), x, y]);
        assert_eq!(agg[0].complexity, None);
        assert_eq!(agg[0].time.per_launch, None);
        assert_eq!(agg[0].launches, 7);
    }

    #[test]
    fn a_counter_missing_for_some_launches_is_unknown_for_the_group() {
        let mut b = launch("k", 1.0, 1e9, 1e9);
        b.bytes.hbm = None;
        let agg = aggregate_by_name(&[launch("k", 1.0, 1e9, 1e9), b]);
        assert_eq!(agg[0].flops.fp32, Some(2e9));
        assert_eq!(
            agg[0].bytes.hbm, None,
            "half the launches have no HBM count"
        );
    }

    #[test]
    fn share() {
        assert_eq!(share_of_time(1.0, 4.0), 0.25);
        assert_eq!(share_of_time(1.0, 0.0), 0.0);
    }
}
