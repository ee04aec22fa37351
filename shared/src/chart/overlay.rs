//! A comparison drawn on a chart of the current run: the baseline's points in the same pixel
//! space, an arrow from each matched kernel's baseline point (a faint marker) to its current
//! one, the current run's new kernels flagged and the baseline's gone kernels as dashed rings;
//! the legend says which is which, and the chart's labels keep clear of all of it.

use rustc_hash::FxHashMap;

use crate::analysis::Analysed;
use crate::analysis::KernelAnalysis;
use crate::analysis::compare::matching::{ManualPair, pairing_with};
use crate::chart::{
    ChartError, ChartOptions, Domain, LegendEntry, LegendRole, MarkerKind, Obstacles, Scene,
    marker_box, place_ceiling_labels,
};

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
    /// The baseline marker's radius, pixels (its faint marker is drawn this size).
    pub from_radius: f64,
    /// The current marker's radius, pixels.
    pub to_radius: f64,
}

/// How far an arrow stops short of the current marker's edge, pixels, so that its head shows.
const TIP_GAP: f64 = 1.5;

impl Arrow {
    /// The arrow's length from its baseline point to its current one, pixels.
    pub fn length(&self) -> f64 {
        (self.to.0 - self.from.0).hypot(self.to.1 - self.from.1)
    }

    /// Where the arrow's head ends: on the line to the current point, just outside the current
    /// marker (its radius and `TIP_GAP` short of its centre), so that the marker drawn above
    /// the arrow does not hide its head. `None` when the two points are so close that the
    /// current marker covers the whole arrow.
    pub fn tip(&self) -> Option<(f64, f64)> {
        let len = self.length();
        let back = self.to_radius + TIP_GAP;
        (len > back + 1.0).then(|| {
            let f = (len - back) / len;
            (
                self.from.0 + (self.to.0 - self.from.0) * f,
                self.from.1 + (self.to.1 - self.from.1) * f,
            )
        })
    }
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

impl Overlay {
    /// What the chart's labels keep clear of: the faint baseline markers, the gone kernels'
    /// rings and the arrows (those drawn: longer than half a pixel).
    pub fn obstacles(&self) -> Obstacles {
        let mut o = Obstacles::default();
        for a in &self.arrows {
            o.boxes.push(marker_box(a.from, a.from_radius));
            if let Some(tip) = a.tip() {
                o.segments.push((a.from, tip));
            }
        }
        o.boxes
            .extend(self.gone.iter().map(|g| marker_box(g.at, g.radius)));
        o
    }

    /// The legend of what the overlay draws: arrows and faint baseline markers when there are
    /// arrows, rings for new and gone kernels when there are any.
    pub fn legend(&self, unit: &str) -> Vec<LegendEntry> {
        let mut l = Vec::new();
        if !self.arrows.is_empty() {
            l.push(LegendEntry {
                role: LegendRole::Arrow,
                text: format!("arrow: a {unit}'s baseline point → its point in this run"),
            });
            l.push(LegendEntry {
                role: LegendRole::Baseline,
                text: "faint marker: where the baseline's point was".into(),
            });
        }
        if !self.new_markers.is_empty() {
            l.push(LegendEntry {
                role: LegendRole::New,
                text: format!("thick ring: a {unit} new in this run"),
            });
        }
        if !self.gone.is_empty() {
            l.push(LegendEntry {
                role: LegendRole::Gone,
                text: format!("dashed ring: a {unit} gone since the baseline"),
            });
        }
        l
    }
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
    compare_scene_with(current, baseline, &[], draw, o)
}

/// [`compare_scene`] with kernels paired by hand ([`ManualPair`]).
///
/// # Errors
/// When the current run's chart cannot be drawn.
pub fn compare_scene_with(
    current: &Analysed,
    baseline: &Analysed,
    manual: &[ManualPair],
    draw: fn(&Analysed, &ChartOptions) -> Result<Scene, ChartError>,
    o: &ChartOptions,
) -> Result<(Scene, Overlay), ChartError> {
    let pairs = pairing_with(current, baseline, manual).pairs;
    compare_scene_paired(current, baseline, &pairs, draw, o)
}

/// [`compare_scene`] with the kernels already matched: `pairs` must be the matching of the same
/// two analyses ([`crate::analysis::compare::Pairing::pairs`], as [`crate::analysis::compare::Comparison::pairs`] holds: the viewer
/// matches 10,000 kernels once for its table and its chart).
///
/// The scene's legend gains the overlay's ([`Overlay::legend`]), and its labels are placed again
/// clear of the overlay ([`Overlay::obstacles`], kept in [`Scene::avoid`] for the kernel names).
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
                from_radius: b.radius,
                to_radius: m.radius,
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
    let unit = crate::analysis::group::GroupBy::of(&current.kernels).noun();
    scene.legend.extend(overlay.legend(unit));
    scene.avoid = overlay.obstacles();
    place_ceiling_labels(&mut scene);
    Ok((scene, overlay))
}

/// A marker kind as a hashable key.
type KindKey = (u8, Option<crate::bundle::MemoryLevel>);

fn kind_key(k: MarkerKind) -> KindKey {
    match k {
        MarkerKind::Level(l) => (0, Some(l)),
        MarkerKind::Complexity => (1, None),
        MarkerKind::TimeVertex => (2, None),
        MarkerKind::Collective(_) => (3, None),
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
    use crate::analysis::compare::tests::pair;
    use crate::analysis::compare::{ManualPair, compare, pairing};
    use crate::chart::tests::{collisions, samples};
    use crate::chart::{hierarchical_of, kernel_labels, time_based_of};

    /// Pairs made by hand: the chart follows them (the table's side is the comparison's test).
    #[test]
    fn the_chart_follows_pairs_made_by_hand() {
        let (cur, base) = pair();
        let manual = [
            ManualPair {
                current: "cast".into(),
                baseline: Some("old".into()),
            },
            ManualPair {
                current: "copy".into(),
                baseline: None,
            },
        ];
        let (_, o) = compare_scene_with(
            &cur,
            &base,
            &manual,
            hierarchical_of,
            &ChartOptions::browser(),
        )
        .unwrap();
        assert!(o.arrows.iter().any(|a| a.kernel == "cast"));
        assert!(!o.arrows.iter().any(|a| a.kernel == "copy"));
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
            assert_eq!(pairs, pairing_with(&cur, &base, &[]).pairs);
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

    /// A comparison's arrows and rings are kept clear too, by the ceiling labels and the names, on
    /// the chart tests' sample bundles and by their collision check.
    #[test]
    fn labels_keep_clear_of_a_comparisons_arrows_and_rings() {
        let all = samples();
        let read = |n: &str| &all.iter().find(|(x, _)| *x == n).unwrap().1;
        let (cur, base) = (
            Analysed::new(read("deepcam-v100-amp-fw"), None, None),
            Analysed::new(read("deepcam-v100-fp32-fw"), None, None),
        );
        for draw in [hierarchical_of as fn(&_, &_) -> _, time_based_of] {
            let (scene, overlay) =
                compare_scene(&cur, &base, draw, &ChartOptions::browser()).unwrap();
            assert_eq!(scene.avoid, overlay.obstacles());
            let names = kernel_labels(&scene, 8);
            for l in scene.labels.iter().chain(&names) {
                for s in &scene.avoid.segments {
                    assert!(!l.crosses(*s), "{} on an arrow", l.text);
                }
                for b in &scene.avoid.boxes {
                    assert!(!l.overlaps_box(*b), "{} on a ring", l.text);
                }
            }
            assert!(collisions(&scene, &names).is_empty());
            // The legend says what the arrows and rings are.
            for role in [
                LegendRole::Arrow,
                LegendRole::Baseline,
                LegendRole::New,
                LegendRole::Gone,
            ] {
                assert!(scene.legend.iter().any(|e| e.role == role), "{role:?}");
            }
        }
    }
}
