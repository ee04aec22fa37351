//! Two runs side by side: "did my change help, and why?"
//!
//! Kernels of a current run and a baseline run (each an [`Analysed`]: aggregated by name and
//! analysed against its own ceilings) are matched by their full name, else by their short name
//! where that pairs them unambiguously ([`pairing`]). A kernel in both gets its
//! baseline and current time, the difference `Δ = T_current − T_baseline`, the speed-up
//! `T_baseline / T_current` and both hierarchical bounds; a kernel only in the current run is
//! *new*, one only in the baseline is *gone*. The [`Summary`] adds the times up, by binding
//! ceiling and by the datapath that did most of each kernel's FLOPs, so that a person sees where
//! the time moved (for example from FP32 on CUDA cores to FP16 on Tensor Cores).
//!
//! [`compare_scene`] draws one chart (hierarchical or time-based) of the current run with the
//! baseline's points in the same pixel space: an [`Arrow`] from each matched kernel's baseline
//! point to its current one, the current run's new kernels flagged, and the baseline's gone
//! kernels as hollow markers.
//!
//! Entries grouped per PyTorch operator or module ([`crate::group`]: a torch.profiler import
//! read with `group=op|module`) are matched by their operator (or module) key, exactly: the
//! kernels behind an operator may change between runs (a new GEMM algorithm, a fused kernel)
//! while the operator stays ([`GroupBy`]).
//!
//! Cost: the matching hashes each name once (one map of the baseline's names, one lookup per
//! current kernel) and works on indices from then on; short names are computed only for the
//! kernels left unmatched. Ten thousand kernels against ten thousand take a few milliseconds
//! (`cargo bench -p roofline-model --bench compare`).

use rustc_hash::FxHashMap;

use crate::analysis::KernelAnalysis;
use crate::bundle::{Datapath, Kernel};
use crate::chart::{Analysed, ChartError, ChartOptions, Domain, MarkerKind, Scene};
use crate::geometry::si::format_si;
use crate::group::GroupBy;
use crate::hierarchical::Bound;

/// Whether a kernel ran in both runs or in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// In both runs.
    Both,
    /// Only in the current run.
    New,
    /// Only in the baseline.
    Gone,
}

impl Presence {
    /// The name used in tables: `both`, `new`, `gone`.
    pub fn key(self) -> &'static str {
        match self {
            Presence::Both => "both",
            Presence::New => "new",
            Presence::Gone => "gone",
        }
    }
}

/// One kernel in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// Run time, seconds (all launches).
    pub time_s: f64,
    /// Launches.
    pub launches: u64,
    /// The binding ceiling of the hierarchical roofline, when known.
    pub bound: Option<Bound>,
    /// The datapath that did most of its FLOPs (`None` for a kernel without FLOPs).
    pub datapath: Option<Datapath>,
}

impl Side {
    fn of(k: &Kernel, a: &KernelAnalysis) -> Self {
        Side {
            time_s: a.time_s,
            launches: k.launches,
            bound: a.hierarchical.as_ref().map(|h| h.bound),
            datapath: main_datapath(k),
        }
    }
}

/// The datapath with the most FLOPs of a kernel, `None` when it did none.
pub fn main_datapath(k: &Kernel) -> Option<Datapath> {
    Datapath::ALL
        .into_iter()
        .filter_map(|d| k.flops.get(d).filter(|f| *f > 0.0).map(|f| (d, f)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(d, _)| d)
}

/// One kernel name of either run.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    /// Full kernel name (the current run's, or the baseline's for a gone kernel).
    pub name: String,
    /// The baseline kernel's full name when it differs (matched by short name).
    pub baseline_name: Option<String>,
    /// The kernel's own display name, when it has one (see [`CompareRow::short_name`]).
    pub display_name: Option<String>,
    /// In both runs, or in one.
    pub presence: Presence,
    /// The baseline's figures (absent for a new kernel).
    pub baseline: Option<Side>,
    /// The current run's figures (absent for a gone kernel).
    pub current: Option<Side>,
}

impl CompareRow {
    /// Short name for display: the display name, else the full name shortened (computed on
    /// demand: a table shows a few hundred rows of ten thousand).
    pub fn short_name(&self) -> String {
        match &self.display_name {
            Some(d) if !d.is_empty() => d.clone(),
            _ => crate::names::shorten(&self.name),
        }
    }

    /// Baseline time, seconds (0 for a new kernel).
    pub fn baseline_s(&self) -> f64 {
        self.baseline.as_ref().map_or(0.0, |s| s.time_s)
    }

    /// Current time, seconds (0 for a gone kernel).
    pub fn current_s(&self) -> f64 {
        self.current.as_ref().map_or(0.0, |s| s.time_s)
    }

    /// `Δ = T_current − T_baseline`, seconds: negative when the kernel got faster.
    pub fn delta_s(&self) -> f64 {
        self.current_s() - self.baseline_s()
    }

    /// `T_baseline / T_current` for a kernel in both runs with positive times.
    pub fn speedup(&self) -> Option<f64> {
        let (b, c) = (self.baseline.as_ref()?, self.current.as_ref()?);
        (b.time_s > 0.0 && c.time_s > 0.0).then(|| b.time_s / c.time_s)
    }

    /// The binding ceiling before and after, when it changed (`"hbm → compute"`).
    pub fn bound_change(&self) -> Option<String> {
        let (b, c) = (self.baseline.as_ref()?, self.current.as_ref()?);
        (b.bound != c.bound).then(|| format!("{} → {}", bound_key(b.bound), bound_key(c.bound)))
    }
}

/// A bound's table name, `–` when unknown.
pub fn bound_key(b: Option<Bound>) -> &'static str {
    b.map_or("–", Bound::key)
}

/// Time before and after for one group (a bound or a datapath).
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    /// The group's name (`compute`, `hbm`, `tensor_fp16`, `none`, …).
    pub key: String,
    /// Baseline time in the group, seconds.
    pub before_s: f64,
    /// Current time in the group, seconds.
    pub after_s: f64,
}

/// The totals of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Baseline total time, seconds.
    pub before_s: f64,
    /// Current total time, seconds.
    pub after_s: f64,
    /// Kernel names in both runs, only in the current one, only in the baseline.
    pub matched: usize,
    /// Kernel names only in the current run.
    pub new: usize,
    /// Kernel names only in the baseline.
    pub gone: usize,
    /// Time by binding ceiling (`none` when unknown), largest change first.
    pub by_bound: Vec<Moved>,
    /// Time by the datapath that did most of each kernel's FLOPs (`none` without FLOPs),
    /// largest change first.
    pub by_datapath: Vec<Moved>,
    /// What was matched: kernels, operators or modules (the current run's grouping).
    pub unit: GroupBy,
    /// Why fewer entries than expected could be matched, when the two runs are not grouped
    /// alike (one per kernel, the other per operator, say).
    pub note: Option<String>,
}

impl Summary {
    /// `before / after`, when both are positive.
    pub fn speedup(&self) -> Option<f64> {
        (self.before_s > 0.0 && self.after_s > 0.0).then(|| self.before_s / self.after_s)
    }

    /// One line for a person: totals, speed-up, counts, and the two groups whose time changed
    /// most, by bound and by datapath.
    pub fn line(&self) -> String {
        let mut s = format!(
            "total {} → {}",
            format_si(self.before_s, "s"),
            format_si(self.after_s, "s")
        );
        if let Some(x) = self.speedup() {
            s.push_str(&format!(" ({x:.2}× speed-up)"));
        }
        s.push_str(&format!(
            "; {} {} matched, {} new, {} gone",
            self.matched,
            self.unit.plural(),
            self.new,
            self.gone
        ));
        for (what, groups) in [("bound", &self.by_bound), ("datapath", &self.by_datapath)] {
            let moved: Vec<String> = groups
                .iter()
                .filter(|m| (m.after_s - m.before_s).abs() > 0.0)
                .take(2)
                .map(|m| {
                    format!(
                        "{} {} → {}",
                        m.key,
                        format_si(m.before_s, "s"),
                        format_si(m.after_s, "s")
                    )
                })
                .collect();
            if !moved.is_empty() {
                s.push_str(&format!("; by {what}: {}", moved.join(", ")));
            }
        }
        if let Some(n) = &self.note {
            s.push_str("; ");
            s.push_str(n);
        }
        s
    }
}

/// A comparison of two runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// One row per kernel name of either run: the current run's in its order (largest time
    /// first), then the gone ones (largest baseline time first).
    pub rows: Vec<CompareRow>,
    /// The totals.
    pub summary: Summary,
    /// For each kernel of the current run (`current.kernels`), its kernel in the baseline
    /// ([`pairing`]).
    pub pairs: Vec<Option<usize>>,
}

impl Comparison {
    /// The row of a kernel name.
    pub fn row(&self, name: &str) -> Option<&CompareRow> {
        self.rows.iter().find(|r| r.name == name)
    }
}

fn add(groups: &mut Vec<Moved>, key: &str, before: f64, after: f64) {
    if let Some(m) = groups.iter_mut().find(|m| m.key == key) {
        m.before_s += before;
        m.after_s += after;
    } else {
        groups.push(Moved {
            key: key.to_string(),
            before_s: before,
            after_s: after,
        });
    }
}

/// Which baseline kernel each current kernel is matched with: entry `i` is the index into
/// `baseline.kernels` of the kernel paired with `current.kernels[i]`, if any. First by full name
/// (one hash map of the baseline's names); then, for kernels ([`GroupBy::Kernel`]) left unmatched on
/// both sides, by short name ([`Kernel::short_name`]: templates and arguments cut) where exactly
/// one kernel on each side has it, so that `implicit_convolve_sgemm<float, …>` pairs with
/// `implicit_convolve_sgemm<__half, …>` when a change of precision changed only the template
/// arguments. Operator and module groups are matched by their key alone: shortening
/// `aten::mm` would make it `mm`.
pub fn pairing(current: &Analysed, baseline: &Analysed) -> Vec<Option<usize>> {
    let mut by_name: FxHashMap<&str, usize> =
        FxHashMap::with_capacity_and_hasher(baseline.kernels.len(), Default::default());
    for (i, k) in baseline.kernels.iter().enumerate() {
        by_name.entry(k.name.as_str()).or_insert(i);
    }
    let mut taken = vec![false; baseline.kernels.len()];
    let mut pairs: Vec<Option<usize>> = current
        .kernels
        .iter()
        .map(|k| {
            let b = by_name.get(k.name.as_str()).copied();
            if let Some(b) = b {
                taken[b] = true;
            }
            b
        })
        .collect();
    if GroupBy::of(&current.kernels) != GroupBy::Kernel
        || GroupBy::of(&baseline.kernels) != GroupBy::Kernel
    {
        return pairs;
    }
    // Short name → (current kernels, baseline kernels) left unmatched.
    let mut by_short: FxHashMap<String, (Vec<usize>, Vec<usize>)> = FxHashMap::default();
    for (i, k) in current.kernels.iter().enumerate() {
        if pairs[i].is_none() {
            by_short.entry(k.short_name()).or_default().0.push(i);
        }
    }
    if by_short.is_empty() {
        return pairs;
    }
    for (i, k) in baseline.kernels.iter().enumerate() {
        if !taken[i]
            && let Some(e) = by_short.get_mut(&k.short_name())
        {
            e.1.push(i);
        }
    }
    for (c, b) in by_short.values() {
        if let ([c], [b]) = (c.as_slice(), b.as_slice()) {
            pairs[*c] = Some(*b);
        }
    }
    pairs
}

/// Why entries cannot be matched when the two runs are not grouped alike.
fn grouping_note(current: GroupBy, baseline: GroupBy) -> Option<String> {
    (current != baseline).then(|| {
        format!(
            "the baseline is read per {} and this run per {}: only entries of the same name match (group both alike, from torch.profiler imports)",
            baseline.noun(),
            current.noun()
        )
    })
}

/// Matches the kernels of `current` and `baseline` ([`pairing`]) and adds up where the time
/// went. Row `i` is `current.top[i]` for every `i < current.top.len()`.
pub fn compare(current: &Analysed, baseline: &Analysed) -> Comparison {
    // Where each baseline kernel's analysis is in `baseline.top`.
    let mut base_at = vec![usize::MAX; baseline.kernels.len()];
    for (pos, a) in baseline.top.iter().enumerate() {
        if let Some(slot) = base_at.get_mut(a.index) {
            *slot = pos;
        }
    }
    let pairs = pairing(current, baseline);
    let mut seen = vec![false; baseline.kernels.len()];
    let mut rows = Vec::with_capacity(current.top.len() + baseline.top.len() / 8);
    for a in &current.top {
        let k = &current.kernels[a.index];
        let paired = pairs.get(a.index).copied().flatten();
        if let Some(p) = paired {
            seen[p] = true;
        }
        let b = paired
            .and_then(|p| baseline.top.get(base_at[p]))
            .map(|b| Side::of(&baseline.kernels[b.index], b));
        rows.push(CompareRow {
            name: k.name.clone(),
            baseline_name: paired
                .map(|p| &baseline.kernels[p].name)
                .filter(|n| **n != k.name)
                .cloned(),
            display_name: k.display_name.clone(),
            presence: if b.is_some() {
                Presence::Both
            } else {
                Presence::New
            },
            baseline: b,
            current: Some(Side::of(k, a)),
        });
    }
    for b in &baseline.top {
        if !seen[b.index] {
            let k = &baseline.kernels[b.index];
            rows.push(CompareRow {
                name: k.name.clone(),
                display_name: k.display_name.clone(),
                baseline_name: None,
                presence: Presence::Gone,
                baseline: Some(Side::of(k, b)),
                current: None,
            });
        }
    }
    let (mut by_bound, mut by_datapath) = (Vec::new(), Vec::new());
    let count = |p: Presence| rows.iter().filter(|r| r.presence == p).count();
    let (unit, base_unit) = (
        GroupBy::of(&current.kernels),
        GroupBy::of(&baseline.kernels),
    );
    let mut summary = Summary {
        before_s: rows.iter().map(CompareRow::baseline_s).sum(),
        after_s: rows.iter().map(CompareRow::current_s).sum(),
        matched: count(Presence::Both),
        new: count(Presence::New),
        gone: count(Presence::Gone),
        by_bound: Vec::new(),
        by_datapath: Vec::new(),
        unit,
        note: grouping_note(unit, base_unit),
    };
    for r in &rows {
        for (side, before) in [(&r.baseline, true), (&r.current, false)] {
            let Some(s) = side else { continue };
            let (b, a) = if before {
                (s.time_s, 0.0)
            } else {
                (0.0, s.time_s)
            };
            add(&mut by_bound, s.bound.map_or("none", Bound::key), b, a);
            add(
                &mut by_datapath,
                s.datapath.map_or("none", Datapath::key),
                b,
                a,
            );
        }
    }
    for g in [&mut by_bound, &mut by_datapath] {
        g.sort_by(|x, y| {
            (y.after_s - y.before_s)
                .abs()
                .total_cmp(&(x.after_s - x.before_s).abs())
        });
    }
    summary.by_bound = by_bound;
    summary.by_datapath = by_datapath;
    Comparison {
        rows,
        summary,
        pairs,
    }
}

/// An arrow from a kernel's baseline point to its current one, pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrow {
    /// Full kernel name.
    pub kernel: String,
    /// Which point of the kernel (a memory level, the complexity point or the time vertex:
    /// in the time-based chart a faster kernel's vertex moves, its complexity point moves when
    /// its work does).
    pub kind: MarkerKind,
    /// The baseline point.
    pub from: (f64, f64),
    /// The current point.
    pub to: (f64, f64),
}

/// A baseline kernel that is gone from the current run, drawn where it was.
#[derive(Debug, Clone, PartialEq)]
pub struct GoneMarker {
    /// Full kernel name.
    pub kernel: String,
    /// Which point.
    pub kind: MarkerKind,
    /// Position, pixels.
    pub at: (f64, f64),
    /// Radius, pixels (the baseline's).
    pub radius: f64,
}

/// What a comparison adds to a chart of the current run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Overlay {
    /// One arrow per matched kernel and point drawn in both runs.
    pub arrows: Vec<Arrow>,
    /// Indices into the scene's markers of kernels only in the current run.
    pub new_markers: Vec<usize>,
    /// The baseline's kernels (among its largest) that are gone.
    pub gone: Vec<GoneMarker>,
}

fn union(a: Domain, b: Domain) -> Domain {
    (
        (a.0.0.min(b.0.0), a.0.1.max(b.0.1)),
        (a.1.0.min(b.1.0), a.1.1.max(b.1.1)),
    )
}

fn domain_of(s: &Scene) -> Domain {
    (s.viewport.x.domain(), s.viewport.y.domain())
}

/// One chart of `current` compared with `baseline`: `draw` is the chart
/// ([`crate::chart::hierarchical_of`] or [`crate::chart::time_based_of`]). The current run's
/// largest `o.top_kernels` are drawn, and of the baseline the same kernels plus its own largest
/// ones that are gone; without a domain in `o` the chart fits both runs' points. Returns the
/// current run's scene and the overlay in its pixel space.
///
/// # Errors
/// When the current run's chart cannot be drawn.
pub fn compare_scene(
    current: &Analysed,
    baseline: &Analysed,
    draw: fn(&Analysed, &ChartOptions) -> Result<Scene, ChartError>,
    o: &ChartOptions,
) -> Result<(Scene, Overlay), ChartError> {
    compare_scene_paired(current, baseline, &pairing(current, baseline), draw, o)
}

/// [`compare_scene`] with the kernels already matched: `pairs` must be
/// [`pairing`]`(current, baseline)`, as [`Comparison::pairs`] of the same two analyses holds
/// (the viewer matches 10,000 kernels once for its table and its chart).
///
/// # Errors
/// When the current run's chart cannot be drawn.
pub fn compare_scene_paired(
    current: &Analysed,
    baseline: &Analysed,
    pairs: &[Option<usize>],
    draw: fn(&Analysed, &ChartOptions) -> Result<Scene, ChartError>,
    o: &ChartOptions,
) -> Result<(Scene, Overlay), ChartError> {
    let mut scene = draw(current, o)?;
    let mut matched = vec![false; baseline.kernels.len()];
    for p in pairs.iter().flatten() {
        matched[*p] = true;
    }
    // The baseline kernels to draw: those of the current kernels drawn, and its largest gone ones.
    let mut keep = vec![false; baseline.kernels.len()];
    for k in &scene.kernels {
        if let Some(Some(p)) = pairs.get(k.analysis.index) {
            keep[*p] = true;
        }
    }
    let mut gone_top = vec![false; baseline.kernels.len()];
    for a in baseline
        .top
        .iter()
        .filter(|a| !matched[a.index])
        .take(o.top_kernels)
    {
        gone_top[a.index] = true;
        keep[a.index] = true;
    }
    // The subset, and for each of its kernels its index in `baseline.kernels`.
    let (subset, from) = retain_indices(baseline, &keep);
    let base_options = ChartOptions {
        top_kernels: subset.top.len().max(1),
        ..o.clone()
    };
    let Ok(mut base_scene) = draw(&subset, &base_options) else {
        return Ok((scene, Overlay::default()));
    };
    if o.domain.is_none() {
        let both = union(domain_of(&scene), domain_of(&base_scene));
        let fixed = ChartOptions {
            domain: Some(both),
            ..o.clone()
        };
        if both != domain_of(&scene) {
            scene = draw(current, &fixed)?;
        }
        if both != domain_of(&base_scene) {
            base_scene = draw(
                &subset,
                &ChartOptions {
                    top_kernels: base_options.top_kernels,
                    ..fixed
                },
            )
            .unwrap_or(base_scene);
        }
    }
    // The baseline's markers by (index into `baseline.kernels`, kind).
    let mut at: FxHashMap<(usize, KindKey), &crate::chart::Marker> = FxHashMap::default();
    for m in &base_scene.markers {
        at.insert(
            (
                from[base_scene.kernels[m.kernel].analysis.index],
                kind_key(m.kind),
            ),
            m,
        );
    }
    let mut overlay = Overlay::default();
    for (i, m) in scene.markers.iter().enumerate() {
        let k = &scene.kernels[m.kernel];
        let Some(Some(paired)) = pairs.get(k.analysis.index) else {
            overlay.new_markers.push(i);
            continue;
        };
        if let Some(b) = at.get(&(*paired, kind_key(m.kind))) {
            overlay.arrows.push(Arrow {
                kernel: k.full_name.clone(),
                kind: m.kind,
                from: b.at,
                to: m.at,
            });
        }
    }
    for m in &base_scene.markers {
        let k = &base_scene.kernels[m.kernel];
        if gone_top[from[k.analysis.index]] {
            overlay.gone.push(GoneMarker {
                kernel: k.full_name.clone(),
                kind: m.kind,
                at: m.at,
                radius: m.radius,
            });
        }
    }
    Ok((scene, overlay))
}

/// A marker kind as a hashable key.
type KindKey = (u8, Option<crate::bundle::MemoryLevel>);

fn kind_key(k: MarkerKind) -> KindKey {
    match k {
        MarkerKind::Level(l) => (0, Some(l)),
        MarkerKind::Complexity => (1, None),
        MarkerKind::TimeVertex => (2, None),
    }
}

/// The kernels of `a` whose index is marked in `keep` (in `a.top`'s order, as
/// [`Analysed::retain`]), and for each kept kernel its index in `a.kernels`.
fn retain_indices(a: &Analysed, keep: &[bool]) -> (Analysed, Vec<usize>) {
    let mut kernels = Vec::new();
    let mut top = Vec::new();
    let mut from = Vec::new();
    for x in a.top.iter().filter(|x| keep.get(x.index) == Some(&true)) {
        top.push(KernelAnalysis {
            index: kernels.len(),
            ..x.clone()
        });
        kernels.push(a.kernels[x.index].clone());
        from.push(x.index);
    }
    let subset = Analysed {
        device: a.device.clone(),
        device_name: a.device_name.clone(),
        complete: a.complete,
        ceilings: a.ceilings.clone(),
        kernels: std::sync::Arc::new(kernels),
        top,
        names: std::sync::Arc::default(),
    };
    (subset, from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Bundle, Bytes, DataSource, Flops, KernelTime};
    use crate::chart::{hierarchical_of, time_based_of};

    fn kernel(name: &str, t: f64, fp32: f64, tensor: f64, hbm: f64) -> Kernel {
        let mut flops = Flops::default();
        flops.set(Datapath::Fp32, Some(fp32));
        flops.set(Datapath::TensorFp16, Some(tensor));
        let bytes = Bytes {
            l1: Some(hbm * 4.0),
            l2: Some(hbm * 2.0),
            hbm: Some(hbm),
        };
        Kernel {
            name: name.into(),
            display_name: None,
            device: None,
            launches: 1,
            grid: None,
            block: None,
            time: KernelTime {
                total_s: t,
                per_launch: None,
            },
            flops,
            bytes,
            complexity: None,
            source: DataSource::Import,
            tags: std::collections::BTreeMap::new(),
            nvtx_range: None,
            operator: None,
        }
    }

    fn run(kernels: Vec<Kernel>) -> Analysed {
        let mut b: Bundle = crate::parse_bundle(include_str!(
            "../../tests/fixtures/bundles/v100-deepcam-example.json"
        ))
        .unwrap();
        let device = b.devices[0].id.clone();
        b.kernels = kernels
            .into_iter()
            .map(|k| Kernel {
                device: Some(device.clone()),
                ..k
            })
            .collect();
        Analysed::new(&b, None, None)
    }

    fn pair() -> (Analysed, Analysed) {
        // FP32 GEMM becomes a Tensor Core GEMM; a copy stays; an old kernel goes, a new one comes.
        let base = run(vec![
            kernel("gemm", 4e-3, 4e10, 0.0, 1e8),
            kernel("copy", 1e-3, 0.0, 0.0, 8e8),
            kernel("old", 5e-4, 1e6, 0.0, 1e8),
        ]);
        let cur = run(vec![
            kernel("gemm", 1e-3, 0.0, 4e10, 1e8),
            kernel("copy", 1e-3, 0.0, 0.0, 8e8),
            kernel("cast", 2e-4, 1e6, 0.0, 4e8),
        ]);
        (cur, base)
    }

    #[test]
    fn matches_by_name_and_computes_delta_and_speedup() {
        let (cur, base) = pair();
        let c = compare(&cur, &base);
        assert_eq!(c.rows.len(), 4);
        let gemm = c.row("gemm").unwrap();
        assert_eq!(gemm.presence, Presence::Both);
        assert!((gemm.delta_s() - (-3e-3)).abs() < 1e-15);
        assert!((gemm.speedup().unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(
            gemm.baseline.as_ref().unwrap().datapath,
            Some(Datapath::Fp32)
        );
        assert_eq!(
            gemm.current.as_ref().unwrap().datapath,
            Some(Datapath::TensorFp16)
        );
        let copy = c.row("copy").unwrap();
        assert_eq!(copy.speedup(), Some(1.0));
        assert_eq!(copy.bound_change(), None);
        assert_eq!(c.row("cast").unwrap().presence, Presence::New);
        assert_eq!(c.row("cast").unwrap().speedup(), None);
        let old = c.row("old").unwrap();
        assert_eq!(old.presence, Presence::Gone);
        assert!((old.delta_s() + 5e-4).abs() < 1e-15);
        // Current kernels first, largest time first; the gone one last.
        assert_eq!(c.rows.last().unwrap().name, "old");
    }

    #[test]
    fn unmatched_kernels_pair_by_a_unique_short_name() {
        let base = run(vec![
            kernel("void conv<float>(float*)", 4e-3, 4e10, 0.0, 1e8),
            kernel("void ew<float, 1>(float*)", 1e-3, 1e6, 0.0, 8e8),
            kernel("void ew<float, 2>(float*)", 1e-3, 1e6, 0.0, 8e8),
        ]);
        let cur = run(vec![
            kernel("void conv<__half>(__half*)", 1e-3, 0.0, 4e10, 1e8),
            kernel("void ew<__half, 1>(__half*)", 1e-3, 1e6, 0.0, 8e8),
        ]);
        let c = compare(&cur, &base);
        let conv = c.row("void conv<__half>(__half*)").unwrap();
        assert_eq!(conv.presence, Presence::Both);
        assert_eq!(
            conv.baseline_name.as_deref(),
            Some("void conv<float>(float*)")
        );
        assert!((conv.speedup().unwrap() - 4.0).abs() < 1e-12);
        // Two baseline `ew` kernels: which one the current `ew` is, the names do not say.
        assert_eq!(
            c.row("void ew<__half, 1>(__half*)").unwrap().presence,
            Presence::New
        );
        assert_eq!(
            (c.summary.matched, c.summary.new, c.summary.gone),
            (1, 1, 2)
        );
    }

    fn op(name: &str, op: &str, t: f64, fp32: f64, tensor: f64, hbm: f64) -> Kernel {
        let mut k = kernel(name, t, fp32, tensor, hbm);
        k.operator = Some(crate::bundle::OperatorCall {
            name: op.into(),
            call: 0,
            kernels: 1,
            shapes: None,
            complexity: None,
            rule: None,
        });
        k
    }

    /// A GEMM operator whose kernel changed (an FP32 SGEMM became a Tensor Core CUTLASS kernel),
    /// an add that stayed, a ReLU gone and a cast new, read per operator.
    fn op_pair() -> (Vec<Kernel>, Vec<Kernel>) {
        let base = vec![
            op("volta_sgemm_128x64_nn", "aten::mm", 3e-3, 4e10, 0.0, 1e8),
            op("volta_sgemm_64x64_nn", "aten::mm", 1e-3, 1e10, 0.0, 1e8),
            op(
                "vectorized_elementwise_kernel<add>",
                "aten::add",
                1e-3,
                1e6,
                0.0,
                8e8,
            ),
            op(
                "vectorized_elementwise_kernel<relu>",
                "aten::relu",
                5e-4,
                1e6,
                0.0,
                4e8,
            ),
        ];
        let cur = vec![
            op(
                "cutlass_80_tensorop_s1688gemm",
                "aten::mm",
                1e-3,
                0.0,
                5e10,
                1e8,
            ),
            op(
                "vectorized_elementwise_kernel<add>",
                "aten::add",
                1e-3,
                1e6,
                0.0,
                8e8,
            ),
            op(
                "vectorized_elementwise_kernel<copy>",
                "aten::to",
                2e-4,
                0.0,
                0.0,
                4e8,
            ),
        ];
        (cur, base)
    }

    #[test]
    fn operators_are_matched_by_operator_name() {
        use crate::group::{GroupBy, group};
        let (cur, base) = op_pair();
        let c = compare(
            &run(group(&cur, GroupBy::Operator)),
            &run(group(&base, GroupBy::Operator)),
        );
        assert_eq!(c.summary.unit, GroupBy::Operator);
        assert_eq!(c.summary.note, None);
        // aten::mm: 3 + 1 ms before, 1 ms after, by different kernels: 4× faster.
        let mm = c.row("aten::mm").unwrap();
        assert_eq!(mm.presence, Presence::Both);
        assert_eq!(mm.baseline_name, None);
        assert!((mm.baseline_s() - 4e-3).abs() < 1e-15);
        assert!((mm.current_s() - 1e-3).abs() < 1e-15);
        assert!((mm.speedup().unwrap() - 4.0).abs() < 1e-12);
        // The GEMM moved from FP32 to Tensor Core FP16.
        assert_eq!(mm.baseline.as_ref().unwrap().datapath, Some(Datapath::Fp32));
        assert_eq!(
            mm.current.as_ref().unwrap().datapath,
            Some(Datapath::TensorFp16)
        );
        assert_eq!(c.row("aten::add").unwrap().speedup(), Some(1.0));
        assert_eq!(c.row("aten::to").unwrap().presence, Presence::New);
        assert_eq!(c.row("aten::relu").unwrap().presence, Presence::Gone);
        let s = &c.summary;
        assert_eq!((s.matched, s.new, s.gone), (2, 1, 1));
        assert!((s.before_s - 5.5e-3).abs() < 1e-15);
        assert!((s.after_s - 2.2e-3).abs() < 1e-15);
        assert!(
            s.line().contains("2 operators matched, 1 new, 1 gone"),
            "{}",
            s.line()
        );
        // Read per kernel, the GEMM kernels match nothing (the CUTLASS kernel is new, both
        // SGEMMs gone), and the copy pairs with the ReLU by their one shared short name.
        let k = compare(&run(cur), &run(base));
        assert_eq!(k.summary.unit, GroupBy::Kernel);
        assert_eq!(
            (k.summary.matched, k.summary.new, k.summary.gone),
            (2, 1, 2)
        );
        assert_eq!(
            k.row("vectorized_elementwise_kernel<copy>")
                .unwrap()
                .baseline_name
                .as_deref(),
            Some("vectorized_elementwise_kernel<relu>")
        );
        assert!(k.summary.line().contains("2 kernels matched"));
    }

    #[test]
    fn modules_are_matched_by_module_name_and_mixed_groupings_say_so() {
        use crate::group::{GroupBy, group};
        let tag = |mut k: Kernel, m: &str| {
            k.tags.insert("module".into(), m.into());
            k
        };
        let base = vec![
            tag(kernel("sgemm", 2e-3, 4e10, 0.0, 1e8), "Linear_0"),
            tag(kernel("relu", 1e-3, 1e6, 0.0, 4e8), "Linear_0"),
            tag(kernel("sgemm", 2e-3, 4e10, 0.0, 1e8), "Linear_1"),
        ];
        let cur = vec![
            tag(kernel("hgemm", 1e-3, 0.0, 4e10, 1e8), "Linear_0"),
            tag(kernel("sgemm", 2e-3, 4e10, 0.0, 1e8), "Linear_1"),
        ];
        let c = compare(
            &run(group(&cur, GroupBy::Module)),
            &run(group(&base, GroupBy::Module)),
        );
        assert_eq!(c.summary.unit, GroupBy::Module);
        // Linear_0: 3 ms → 1 ms; Linear_1 unchanged.
        assert!((c.row("Linear_0").unwrap().speedup().unwrap() - 3.0).abs() < 1e-12);
        assert_eq!(c.row("Linear_1").unwrap().speedup(), Some(1.0));
        assert!(
            c.summary
                .line()
                .contains("2 modules matched, 0 new, 0 gone")
        );
        // Per module against per kernel: nothing of the same name, and the line says why.
        let mixed = compare(&run(group(&cur, GroupBy::Module)), &run(base));
        assert_eq!(mixed.summary.matched, 0);
        let line = mixed.summary.line();
        assert!(
            line.contains("read per kernel and this run per module"),
            "{line}"
        );
    }

    #[test]
    fn summary_adds_up_where_the_time_went() {
        let (cur, base) = pair();
        let s = compare(&cur, &base).summary;
        assert!((s.before_s - 5.5e-3).abs() < 1e-15);
        assert!((s.after_s - 2.2e-3).abs() < 1e-15);
        assert_eq!((s.matched, s.new, s.gone), (2, 1, 1));
        assert!((s.speedup().unwrap() - 2.5).abs() < 1e-12);
        // Every group's times add up to the totals.
        for g in [&s.by_bound, &s.by_datapath] {
            let before: f64 = g.iter().map(|m| m.before_s).sum();
            let after: f64 = g.iter().map(|m| m.after_s).sum();
            assert!((before - s.before_s).abs() < 1e-15);
            assert!((after - s.after_s).abs() < 1e-15);
        }
        // The largest move by datapath: FP32 lost the GEMM's 4 ms (and the old kernel's).
        let top = &s.by_datapath[0];
        assert_eq!(top.key, "fp32");
        assert!((top.before_s - 4.5e-3).abs() < 1e-15);
        assert!((top.after_s - 2e-4).abs() < 1e-15);
        let tc = s
            .by_datapath
            .iter()
            .find(|m| m.key == "tensor_fp16")
            .unwrap();
        assert!((tc.before_s, tc.after_s) == (0.0, 1e-3));
        let line = s.line();
        assert!(line.contains("2.50× speed-up"), "{line}");
        assert!(line.contains("by datapath: fp32"), "{line}");
    }

    #[test]
    fn arrows_go_from_baseline_to_current_points_in_both_charts() {
        let (cur, base) = pair();
        let o = ChartOptions::browser();
        for draw in [hierarchical_of as fn(&_, &_) -> _, time_based_of] {
            let (scene, overlay) = compare_scene(&cur, &base, draw, &o).unwrap();
            // Matched once for the table, the same chart.
            let pairs = compare(&cur, &base).pairs;
            assert_eq!(pairs, pairing(&cur, &base));
            assert_eq!(
                compare_scene_paired(&cur, &base, &pairs, draw, &o).unwrap(),
                (scene.clone(), overlay.clone())
            );
            assert!(!overlay.arrows.is_empty());
            for a in &overlay.arrows {
                assert_ne!(a.kernel, "cast");
                // The arrow ends on the current marker of its kernel and kind.
                assert!(scene.markers.iter().any(|m| m.kind == a.kind
                    && scene.kernels[m.kernel].full_name == a.kernel
                    && m.at == a.to));
            }
            // The GEMM moved (4× faster): its arrow has length; the copy did not move.
            let moved = |n: &str| {
                overlay
                    .arrows
                    .iter()
                    .filter(|a| a.kernel == n)
                    .map(|a| (a.to.0 - a.from.0).hypot(a.to.1 - a.from.1))
                    .fold(0.0, f64::max)
            };
            assert!(moved("gemm") > 10.0);
            assert!(moved("copy") < 1e-6);
            assert!(
                overlay
                    .new_markers
                    .iter()
                    .all(|&i| scene.kernels[scene.markers[i].kernel].full_name == "cast")
            );
            assert!(!overlay.new_markers.is_empty());
            assert!(overlay.gone.iter().all(|g| g.kernel == "old"));
            // Every point, before and after, lies in the plotting area.
            let area = scene.viewport.area;
            for a in &overlay.arrows {
                assert!(
                    area.contains(a.from.0 + 1e-6, a.from.1 - 1e-6)
                        || area.contains(a.from.0, a.from.1),
                    "{a:?}"
                );
            }
        }
    }
}
