//! The hierarchical roofline chart.

use super::analysed::{analysed, scene_kernels};
use super::label::{Placer, along, fractions};
use super::{
    Analysed, Anchor, ChartError, ChartOptions, Label, LegendEntry, LegendRole, Line, LineRole,
    Marker, MarkerKind, Scene, SceneKernel, ceiling_label, common_notes, device_suffix,
    intensity_axis, marker_radius, performance_axis, plot_area, push_clipped, side_panel, subtitle,
};
use crate::bundle::{Bundle, Datapath, MemoryLevel};
use crate::geometry::roofline as shapes;
use crate::geometry::scale::{Viewport, fit_log_domain};
use crate::hierarchical::Bound;

/// The hierarchical roofline (Yang et al. 2020): performance (FLOP/s) against arithmetic
/// intensity (FLOP/byte), log-log; a bandwidth ceiling per memory level up to the top compute
/// roof, a flat roof per datapath; each kernel as one point per level (`AI_l`, `F / T`), joined.
///
/// # Errors
/// [`ChartError::Nothing`] when there are neither ceilings nor kernel points.
pub fn hierarchical(bundle: &Bundle, o: &ChartOptions) -> Result<Scene, ChartError> {
    hierarchical_of(&analysed(bundle, o), o)
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
    let mut pending: Vec<Vec<Label>> = Vec::new();

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
            pending.push(along(
                &ceiling_label(l.label(), bw, "B/s", theo),
                role,
                Anchor::Start,
                ((x0, y0), (x1, y1)),
                Some(first),
                &fractions(0.02, 0.95, 48),
            ));
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
            pending.push(along(
                &ceiling_label(d.label(), peak, "FLOP/s", theo),
                role,
                Anchor::End,
                ((x0, y0), (x1, y1)),
                Some((x1 - 4.0, y1 - 5.0)),
                &fractions(0.99, 0.0, 50),
            ));
        }
    }

    // Kernels: markers per level, joined.
    let kernels = scene_kernels(p, &drawn, false);
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
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            lines.push(Line {
                role: LineRole::KernelLink { kernel: si },
                points: pts,
                dashed: false,
            });
        }
    }
    markers.sort_by(|a, b| b.radius.total_cmp(&a.radius));
    let mut placer = Placer::new(area, &markers);
    for candidates in pending {
        placer.place(candidates);
    }
    let labels = placer.into_labels();

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
    if levels.is_empty() {
        notes.push("no bandwidth ceiling: measure the machine to see memory bounds".into());
    }
    let bound_counts = count_bounds(&kernels);
    if !bound_counts.is_empty() {
        notes.push(bound_counts);
    }

    Ok(Scene {
        width: o.width,
        height: o.height,
        title: "Hierarchical roofline".into(),
        subtitle: subtitle(p),
        x_axis: intensity_axis(dx, &vp),
        y_axis: performance_axis(dy, &vp),
        viewport: vp,
        lines,
        labels,
        markers,
        kernels,
        legend,
        notes,
        side_panel: side_panel(o),
    })
}

fn count_bounds(kernels: &[SceneKernel]) -> String {
    let mut counts: Vec<(Bound, usize)> = Vec::new();
    for k in kernels {
        if let Some(h) = &k.analysis.hierarchical {
            match counts.iter_mut().find(|(b, _)| *b == h.bound) {
                Some(c) => c.1 += 1,
                None => counts.push((h.bound, 1)),
            }
        }
    }
    if counts.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(b, n)| format!("{n} {}-bound", b.key()))
        .collect();
    format!("binding ceilings: {}", parts.join(", "))
}
