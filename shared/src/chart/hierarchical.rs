//! The hierarchical roofline chart.

use super::label::{along, fractions};
use super::scene_kernels::{analysed, scene_kernels};
use super::{
    Analysed, Anchor, ChartError, ChartOptions, LabelCandidates, LegendEntry, LegendRole, Line,
    LineRole, Marker, MarkerKind, Scene, SceneKernel, ceiling_label, common_notes, device_suffix,
    intensity_axis, marker_radius, performance_axis, plot_area, push_clipped, side_panel,
    source_word, subtitle,
};
use crate::analysis::hierarchical::Bound;
use crate::bundle::{Bundle, Datapath, MemoryLevel};
use crate::chart::geometry::roofline as shapes;
use crate::chart::geometry::scale::{Viewport, fit_log_domain};

/// The hierarchical roofline (Yang et al. 2020): performance (FLOP/s) against arithmetic
/// intensity (FLOP/byte), log-log; a bandwidth ceiling per memory level up to the top compute
/// roof, a flat roof per datapath; each kernel as one point per level (`AI_l`, `F / T`), joined.
///
/// # Errors
/// [`ChartError::Nothing`] when there are neither ceilings nor kernel points.
pub fn hierarchical(bundle: &Bundle, o: &ChartOptions) -> Result<Scene, ChartError> {
    hierarchical_of(&analysed(bundle, o), o)
}

/// The note of a chart whose ceilings include sustained figures ([`crate::analysis::ceilings`]' rule).
pub const SUSTAINED_NOTE: &str = "ceilings: the sustained figure (held after the clock settled) where one was measured, else the burst one";

/// A compute roof's label: [`ceiling_label`]'s text, marked "best reach" when the figure is the
/// best the toolkit reached rather than the hardware's (a [`crate::bundle::Limit`]).
fn roof_label(
    c: &crate::analysis::ceilings::Ceilings,
    d: Datapath,
    peak: f64,
    theo: bool,
) -> String {
    let reach = c.peak_pick(d).is_some_and(|p| p.best_reach());
    format!(
        "{}{}",
        ceiling_label(d.label(), peak, "FLOP/s", source_word(c.peak_pick(d), theo)),
        if reach { " (best reach)" } else { "" }
    )
}

/// Whether a kernel has a point on the hierarchical chart: FLOPs over a time, and an intensity
/// at one of `levels`.
pub(super) fn has_point(a: &crate::analysis::KernelAnalysis, levels: &[MemoryLevel]) -> bool {
    !a.out_of_range
        && a.flop_per_s.is_some()
        && MemoryLevel::KERNEL_LEVELS
            .iter()
            .zip(a.ai)
            .any(|(l, ai)| ai.is_some() && levels.contains(l))
}

/// [`hierarchical`] from an analysis already made (`o.device` and `o.ceilings` are not
/// consulted: the analysis has its own).
///
/// # Errors
/// [`ChartError::Nothing`] when there are neither ceilings nor kernel points.
pub fn hierarchical_of(p: &Analysed, o: &ChartOptions) -> Result<Scene, ChartError> {
    let c = &p.ceilings;
    let levels: Vec<(MemoryLevel, f64, bool)> = c
        .levels()
        .filter(|(l, _)| o.levels.contains(l))
        .map(|(l, v)| (l, v.value, v.method == crate::bundle::Method::Theoretical))
        .collect();
    let roofs: Vec<(Datapath, f64, bool)> = c
        .datapaths()
        .filter(|(d, _)| o.datapaths.as_ref().is_none_or(|ds| ds.contains(d)))
        .map(|(d, v)| (d, v.value, v.method == crate::bundle::Method::Theoretical))
        .collect();
    // Kernels with FLOPs and at least one drawn level.
    let drawn: Vec<usize> = (0..p.top.len())
        .filter(|&i| has_point(&p.top[i], &o.levels))
        .take(o.top_kernels)
        .collect();
    if levels.is_empty() && roofs.is_empty() && drawn.is_empty() {
        return Err(ChartError::Nothing(device_suffix(p)));
    }

    let top_peak = roofs.iter().map(|r| r.1).reduce(f64::max);
    let top_bw = levels.iter().map(|l| l.1).reduce(f64::max);
    let low_bw = levels.iter().map(|l| l.1).reduce(f64::min);
    let low_peak = roofs.iter().map(|r| r.1).reduce(f64::min);

    // Domains: every kernel point, every ridge, every roof.
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for &i in &drawn {
        let a = &p.top[i];
        for (l, ai) in MemoryLevel::KERNEL_LEVELS.iter().zip(a.ai) {
            if let (Some(ai), true) = (ai, o.levels.contains(l)) {
                xs.push(ai);
            }
        }
        ys.extend(a.flop_per_s);
    }
    if let (Some(pk), Some(hi), Some(lo)) = (top_peak, top_bw, low_bw) {
        xs.push(pk / lo);
        xs.push(low_peak.unwrap_or(pk) / hi);
    }
    ys.extend(roofs.iter().map(|r| r.1));
    let dx = fit_log_domain(xs.iter().copied(), 0.5).unwrap_or((0.01, 1000.0));
    // Leave room under the lowest point and the diagonals' start.
    if let Some(lo) = low_bw {
        ys.push(lo * dx.0 * 3.0);
    }
    let dy = fit_log_domain(ys.iter().copied(), 0.3).unwrap_or((1e9, 1e15));
    let (dx, dy) = o.domain.unwrap_or((dx, dy));

    let area = plot_area(o);
    let vp = Viewport::new(dx, dy, area).ok_or_else(|| ChartError::Nothing(device_suffix(p)))?;
    let mut lines = Vec::new();
    // Each ceiling's candidate label places, placed once the markers are known.
    let mut pending: Vec<LabelCandidates> = Vec::new();

    // Bandwidth diagonals, up to the top roof.
    for &(l, bw, theo) in &levels {
        let roof = top_peak.unwrap_or(bw * dx.1);
        let seg = shapes::bandwidth_diagonal(bw, roof, dx.0);
        let role = LineRole::Bandwidth(l);
        if let Some((x0, y0, x1, y1)) = push_clipped(
            &mut lines,
            &vp,
            role,
            theo,
            shapes::clip_polyline_loglog(&seg, dx, dy),
        ) {
            // Label along the line, a little way in from its visible start, else farther
            // along it, else below it: where no marker and no other label covers it.
            let t = 0.08;
            let first = (x0 + (x1 - x0) * t + 4.0, y0 + (y1 - y0) * t - 6.0);
            pending.push(LabelCandidates {
                candidates: along(
                    &ceiling_label(l.label(), bw, "B/s", source_word(c.bandwidth_pick(l), theo)),
                    role,
                    Anchor::Start,
                    ((x0, y0), (x1, y1)),
                    Some(first),
                    &fractions(0.02, 0.95, 48),
                ),
                required: true,
            });
        }
    }
    // Compute roofs, from their ridge with the highest bandwidth to the right edge.
    for &(d, peak, theo) in &roofs {
        let from_bw = top_bw.unwrap_or(peak / dx.0);
        let seg = shapes::compute_roof(peak, from_bw, dx.1);
        let role = LineRole::Compute(d);
        if let Some((x0, y0, x1, y1)) = push_clipped(
            &mut lines,
            &vp,
            role,
            theo,
            shapes::clip_polyline_loglog(&seg, dx, dy),
        ) {
            // At the roof's right end, else farther left along it, else below it.
            pending.push(LabelCandidates {
                candidates: along(
                    &roof_label(c, d, peak, theo),
                    role,
                    Anchor::End,
                    ((x0, y0), (x1, y1)),
                    Some((x1 - 4.0, y1 - 5.0)),
                    &fractions(0.99, 0.0, 50),
                ),
                required: true,
            });
        }
    }

    // Kernels: markers per level, joined.
    let mut kernels = scene_kernels(p, &drawn, false);
    let mut markers = Vec::new();
    for (si, k) in kernels.iter().enumerate() {
        let a = &k.analysis;
        let Some(perf) = a.flop_per_s else { continue };
        let mut pts = Vec::new();
        for (l, ai) in MemoryLevel::KERNEL_LEVELS.iter().zip(a.ai) {
            let Some(ai) = ai.filter(|_| o.levels.contains(l)) else {
                continue;
            };
            let at = vp.project((ai, perf));
            pts.push(at);
            markers.push(Marker {
                kernel: si,
                kind: MarkerKind::Level(*l),
                at,
                data: (ai, perf),
                radius: marker_radius(a.share_of_time),
            });
        }
        if pts.len() > 1 {
            super::sort_by_x(&mut pts);
            lines.push(Line {
                role: LineRole::KernelLink { kernel: si },
                points: pts,
                dashed: false,
            });
        }
    }
    super::largest_markers_first(&mut markers);
    for k in &mut kernels {
        k.bound_path = bound_path(&k.analysis, &o.levels, &vp);
    }

    let mut legend: Vec<LegendEntry> = levels
        .iter()
        .map(|&(l, _, _)| LegendEntry {
            role: LegendRole::Level(l),
            text: format!("{} (ceiling and kernel points)", l.label()),
        })
        .collect();
    legend.extend(roofs.iter().map(|&(d, _, _)| LegendEntry {
        role: LegendRole::Datapath(d),
        text: format!("{} roof", d.label()),
    }));

    let mut notes = common_notes(p, drawn.len());
    if c.uses_sustained() {
        notes.push(SUSTAINED_NOTE.into());
    }
    if levels.is_empty() {
        notes.push("no bandwidth ceiling: measure the machine (`roofline machine`) or name its GPU (`--ceilings datasheet:NAME`) to see memory bounds".into());
    }
    let bound_counts = count_bounds(&kernels);
    if !bound_counts.is_empty() {
        notes.push(bound_counts);
    }

    let mut scene = Scene {
        width: o.width,
        height: o.height,
        title: "Hierarchical roofline".into(),
        subtitle: subtitle(p),
        x_axis: intensity_axis(dx, &vp),
        y_axis: performance_axis(dy, &vp),
        viewport: vp,
        lines,
        labels: Vec::new(),
        label_candidates: pending,
        avoid: super::Obstacles::default(),
        markers,
        kernels,
        legend,
        notes,
        side_panel: side_panel(o),
    };
    super::place_ceiling_labels(&mut scene);
    Ok(scene)
}

/// A kernel's path to its binding ceiling ([`super::BoundPath`]): straight up from its point at
/// the binding level (its HBM point, else its highest drawn level, when compute-bound) to its
/// attainable performance, `F / T_floor`, which lies on the binding ceiling at that intensity.
fn bound_path(
    a: &crate::analysis::KernelAnalysis,
    levels: &[MemoryLevel],
    vp: &Viewport,
) -> Option<super::BoundPath> {
    let h = a.hierarchical.as_ref()?;
    let perf = a.flop_per_s?;
    let at = |l: MemoryLevel| {
        MemoryLevel::KERNEL_LEVELS
            .iter()
            .zip(a.ai)
            .find(|(x, _)| **x == l && levels.contains(x))
            .and_then(|(_, ai)| ai)
    };
    let ai = match h.bound {
        Bound::Memory(l) => at(l)?,
        Bound::Compute => at(MemoryLevel::Hbm)
            .or_else(|| at(MemoryLevel::L2))
            .or_else(|| at(MemoryLevel::L1))?,
    };
    let from = vp.project((ai, perf));
    let to = vp.project((ai, h.attainable));
    let area = vp.area;
    let to = (to.0, to.1.clamp(area.y, area.bottom()));
    let mut text = format!(
        "bound by {}: {} attainable",
        h.ceiling_label(),
        crate::analysis::si::format_si(h.attainable, "FLOP/s")
    );
    if let Some(x) = a.headroom {
        text.push_str(&format!(", {x:.2}× headroom"));
    }
    Some(super::BoundPath { from, to, text })
}

/// The drawn kernels counted by binding ceiling, by name (`binding ceilings: 5 HBM, 3 Tensor
/// FP16`), in the order first met (largest kernels first).
fn count_bounds(kernels: &[SceneKernel]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for k in kernels {
        if let Some(h) = &k.analysis.hierarchical {
            let name = h.ceiling_label();
            match counts.iter_mut().find(|(b, _)| *b == name) {
                Some(c) => c.1 += 1,
                None => counts.push((name, 1)),
            }
        }
    }
    if counts.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = counts.iter().map(|(b, n)| format!("{n} {b}")).collect();
    format!("binding ceilings: {}", parts.join(", "))
}

#[cfg(test)]
mod best_reach_tests {
    use super::*;
    use crate::bundle::{
        ComputeCeiling, Device, Limit, LimitKind, Machine, Method, Provenance, Sustained,
    };

    /// Made-up unit-test figures: a roof marked as our best reach says so in its label, and a
    /// chart whose ceilings are sustained figures says so in a note.
    #[test]
    fn a_best_reach_roof_is_labelled_and_sustained_figures_are_noted() {
        let mut b = Bundle::new(Provenance::default());
        b.devices.push(Device::new("0", "test GPU"));
        let mut int8 = ComputeCeiling::new(Datapath::TensorInt8, 9.0e14, Method::Empirical);
        int8.limit = Some(Limit {
            kind: LimitKind::Instruction,
            reason: "wgmma only".into(),
        });
        int8.sustained = Some(Sustained::settled_at(8.8e14));
        let fp32 = ComputeCeiling::new(Datapath::Fp32, 6.0e13, Method::Empirical);
        b.machines.push(Machine {
            device: "0".into(),
            compute: vec![int8, fp32],
            ..Machine::default()
        });
        let s = hierarchical(&b, &ChartOptions::default()).unwrap();
        let texts: Vec<String> = s
            .label_candidates
            .iter()
            .flat_map(|c| c.candidates.first().map(|l| l.text.clone()))
            .collect();
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with("Tensor INT8 ") && t.ends_with(" (best reach)")),
            "{texts:?}"
        );
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with("FP32 ") && !t.contains("best reach")),
            "{texts:?}"
        );
        assert!(s.notes.iter().any(|n| n == SUSTAINED_NOTE), "{:?}", s.notes);
    }
}
