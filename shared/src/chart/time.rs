//! The time-based roofline chart.

use super::label::{along, fractions};
use super::scene_kernels::{analysed, scene_kernels};
use super::{
    Analysed, Anchor, ChartError, ChartOptions, Domain, Label, LabelCandidates, LegendEntry,
    LegendRole, Line, LineRole, MARKER_MIN, Marker, MarkerKind, Scene, SceneKernel, axis,
    common_notes, device_suffix, marker_radius, plot_area, push_clipped, side_panel, subtitle,
};
use crate::analysis::ceilings::CeilingSource;
use crate::analysis::si::{format_plain, format_si};
use crate::analysis::time_based::Region;
use crate::bundle::{Bundle, Datapath, MemoryLevel};
use crate::chart::geometry::roofline as shapes;
use crate::chart::geometry::scale::{Viewport, fit_log_domain};

/// The time-based roofline (Wang et al. 2020): compute complexity F (FLOPs) against bandwidth
/// complexity B (bytes), log-log. The machine-balance line `F = (P / BW) × B` per datapath in
/// use, the launch-overhead box for each launch count drawn, and each kernel's complexity point
/// joined to its time vertex `(B*, F*)` on its iso-intensity line: the longer the link, the
/// farther the kernel is from its bound.
///
/// # Errors
/// [`ChartError::Nothing`] when no kernel has both F and B, and there are no ceilings.
pub fn time_based(bundle: &Bundle, o: &ChartOptions) -> Result<Scene, ChartError> {
    time_based_of(&analysed(bundle, o), o)
}

/// Whether a kernel has a point on the time-based chart: F and B above zero (log axes).
pub(super) fn has_point(a: &crate::analysis::KernelAnalysis) -> bool {
    !a.out_of_range
        && a.complexity_flops.is_some_and(|f| f > 0.0)
        && a.complexity_bytes.is_some_and(|b| b > 0.0)
}

/// Whether a kernel is drawn in the F = 0 band: no arithmetic (a copy, a concatenation, an
/// index), B above zero. A log axis has no 0: the band along the bottom holds them at their B,
/// so that the chart accounts for their time.
fn in_band(a: &crate::analysis::KernelAnalysis) -> bool {
    !a.out_of_range
        && a.complexity_flops == Some(0.0)
        && a.complexity_bytes.is_some_and(|b| b > 0.0)
}

/// The F = 0 band's height, pixels, inside the plot area's bottom edge.
const BAND: f64 = 18.0;

/// [`time_based`] from an analysis already made (`o.device` and `o.ceilings` are not
/// consulted: the analysis has its own).
///
/// # Errors
/// [`ChartError::Nothing`] when there is nothing to draw.
pub fn time_based_of(p: &Analysed, o: &ChartOptions) -> Result<Scene, ChartError> {
    let c = &p.ceilings;
    let bw = c.bandwidth(MemoryLevel::Hbm);
    let drawn: Vec<usize> = (0..p.top.len())
        .filter(|&i| has_point(&p.top[i]) || in_band(&p.top[i]))
        .take(o.top_kernels)
        .collect();
    if drawn.is_empty() && c.is_empty() {
        return Err(ChartError::Nothing(device_suffix(p)));
    }
    let in_use = datapaths_in_use(p, &drawn);
    let mut kernels = scene_kernels(p, &drawn, true);
    let pts = points(&kernels, bw);
    let banded = pts.iter().any(|pt| pt.f <= 0.0);
    let boxes = launch_boxes(p, &kernels, &in_use, bw);
    let area = plot_area(o);
    let (dx, dy) = o
        .domain
        .unwrap_or_else(|| fit(p, &pts, &boxes, bw, banded.then_some(area.height)));
    let vp = Viewport::new(dx, dy, area).ok_or_else(|| ChartError::Nothing(device_suffix(p)))?;

    // Markers first (the labels keep clear of them); their links are drawn after the boxes.
    let (markers, links) = markers_and_links(&kernels, &pts, &vp);
    for pt in &pts {
        kernels[pt.si].bound_path = bound_path(&kernels[pt.si].analysis, pt, &vp);
    }
    let mut lines = Vec::new();
    let mut pending = Vec::new();
    if let Some(bw) = bw {
        balance_lines(&mut lines, &mut pending, p, &in_use, bw, &vp);
    }
    launch_box_lines(&mut lines, &mut pending, p, &boxes, &vp);
    if banded {
        let top = area.bottom() - BAND;
        lines.push(Line {
            role: LineRole::ZeroBand,
            points: vec![(area.x, top), (area.right(), top)],
            dashed: true,
        });
    }
    lines.extend(links);

    let mut scene = Scene {
        width: o.width,
        height: o.height,
        title: "Time-based roofline".into(),
        subtitle: subtitle(p),
        x_axis: axis(dx, "B", "Bandwidth complexity B (bytes)", |v| {
            vp.x.project(v)
        }),
        y_axis: axis(dy, "FLOP", "Compute complexity F (FLOPs)", |v| {
            vp.y.project(v)
        }),
        viewport: vp,
        lines,
        labels: Vec::new(),
        label_candidates: pending,
        avoid: super::Obstacles::default(),
        markers,
        legend: legend(!pts.is_empty(), !boxes.is_empty(), banded, &in_use),
        notes: notes(p, &kernels, drawn.len(), bw.is_some()),
        kernels,
        side_panel: side_panel(o),
    };
    if banded {
        // The band holds no value of F: no tick in it.
        let top = area.bottom() - BAND;
        scene.y_axis.ticks.retain(|t| t.0 <= top + 0.5);
    }
    super::place_ceiling_labels(&mut scene);
    Ok(scene)
}

/// The datapaths in use among the drawn kernels (indices into `p.top`), by their FLOPs, with a
/// ceiling; all with a ceiling if none.
fn datapaths_in_use(p: &Analysed, drawn: &[usize]) -> Vec<Datapath> {
    let c = &p.ceilings;
    let mut in_use: Vec<Datapath> = Vec::new();
    for &i in drawn {
        let k = &p.kernels[p.top[i].index];
        for (d, _) in k.flops.iter() {
            if !in_use.contains(&d) && c.peak(d).is_some() {
                in_use.push(d);
            }
        }
    }
    if in_use.is_empty() {
        in_use = c.datapaths().map(|(d, _)| d).collect();
    }
    crate::analysis::kernel::sort_slice_by(&mut in_use, Ord::cmp);
    in_use
}

/// A kernel's complexity point and its time vertex, data units.
struct Pt {
    /// Index into the scene's kernels.
    si: usize,
    /// Bandwidth complexity B, bytes.
    b: f64,
    /// Compute complexity F, FLOPs.
    f: f64,
    /// The time vertex `(B*, F*)`, when the kernel has a bound.
    vertex: Option<(f64, f64)>,
}

/// Per drawn kernel with a bandwidth complexity: its point and vertex (against HBM's `bw`).
fn points(kernels: &[SceneKernel], bw: Option<f64>) -> Vec<Pt> {
    kernels
        .iter()
        .enumerate()
        .filter_map(|(si, k)| {
            let a = &k.analysis;
            let b = a.complexity_bytes?;
            let f = a.complexity_flops?;
            let vertex = match (a.peak, bw) {
                (Some(pk), Some(bw)) if f > 0.0 => {
                    crate::analysis::time_based::time_vertex(a.time_s, f, b, pk, bw)
                }
                _ => None,
            };
            Some(Pt { si, b, f, vertex })
        })
        .collect()
}

/// The launch-overhead boxes drawn: per launch count among the drawn kernels (the four
/// smallest; one launch when none), the box's corner in data units.
fn launch_boxes(
    p: &Analysed,
    kernels: &[SceneKernel],
    in_use: &[Datapath],
    bw: Option<f64>,
) -> Vec<(u64, (f64, f64))> {
    let c = &p.ceilings;
    let mut launch_counts: Vec<u64> = kernels.iter().map(|k| k.launches).collect();
    launch_counts.sort_unstable();
    launch_counts.dedup();
    launch_counts.truncate(4);
    match (c.launch_overhead_s, bw, in_use.first()) {
        (Some(t), Some(bw), Some(_)) => {
            let peak = in_use.iter().filter_map(|d| c.peak(*d)).fold(0.0, f64::max);
            let ns = if launch_counts.is_empty() {
                vec![1]
            } else {
                launch_counts
            };
            ns.into_iter()
                .map(|n| {
                    let nf = n as f64;
                    (n, shapes::launch_overhead_box(nf, t, peak, bw))
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The data ranges that fit every point, vertex and box corner; with no kernel point, the plane
/// of kernels taking from a microsecond to a second on the ceilings.
///
/// With kernels in the F = 0 band (`band`: the plot area's height, pixels), F's range reaches
/// lower, so that the band along the bottom holds no point with F above zero.
fn fit(
    p: &Analysed,
    pts: &[Pt],
    boxes: &[(u64, (f64, f64))],
    bw: Option<f64>,
    band: Option<f64>,
) -> Domain {
    let mut xs: Vec<f64> = Vec::new();
    let mut ys: Vec<f64> = Vec::new();
    for pt in pts {
        xs.push(pt.b);
        if pt.f > 0.0 {
            ys.push(pt.f);
        }
        if let Some((vb, vf)) = pt.vertex {
            xs.push(vb);
            ys.push(vf);
        }
    }
    for (_, (cb, cf)) in boxes {
        xs.push(*cb);
        ys.push(*cf);
    }
    if pts.is_empty()
        && let (Some(bw), Some(pk)) = (bw, p.ceilings.top_peak())
    {
        xs.extend([bw * 1e-6, bw]);
        ys.extend([pk * 1e-6, pk]);
    }
    let dx = fit_log_domain(xs.iter().copied(), 0.5).unwrap_or((1e3, 1e12));
    let mut dy = fit_log_domain(ys.iter().copied(), 0.5).unwrap_or((1e3, 1e15));
    if let Some(h) = band.filter(|h| *h > 2.0 * BAND) {
        // The decades the band takes: BAND of h pixels, below the points' range.
        let decades = (dy.1 / dy.0).log10() * BAND / (h - BAND);
        dy.0 /= 10f64.powf(decades);
    }
    (dx, dy)
}

/// A kernel's path to its bound on this chart ([`super::BoundPath`]): from its complexity point
/// to its time vertex, where the machine would take the measured time; it names the binding term
/// of `T_bound` ([`crate::analysis::KernelAnalysis::time_ceiling_label`]).
fn bound_path(
    a: &crate::analysis::KernelAnalysis,
    pt: &Pt,
    vp: &Viewport,
) -> Option<super::BoundPath> {
    let (vertex, tb, label) = (pt.vertex?, a.time_bound?, a.time_ceiling_label()?);
    let mut text = format!(
        "bound by {label} ({} region): T_bound {}",
        tb.region.key(),
        format_si(tb.bound_s, "s")
    );
    if let Some(g) = a.gap {
        text.push_str(&format!(", T/T_bound {g:.2}"));
    }
    Some(super::BoundPath {
        from: vp.project((pt.b, pt.f)),
        to: vp.project(vertex),
        text,
    })
}

/// The markers (complexity points and time vertices, largest first) and the links joining each
/// kernel's two.
fn markers_and_links(
    kernels: &[SceneKernel],
    pts: &[Pt],
    vp: &Viewport,
) -> (Vec<Marker>, Vec<Line>) {
    let mut links = Vec::new();
    let mut markers = Vec::new();
    let band_y = vp.area.bottom() - BAND / 2.0;
    for pt in pts {
        let share = kernels[pt.si].analysis.share_of_time;
        // F = 0 has no place on a log axis: the band along the bottom, at its B.
        let at = if pt.f > 0.0 {
            vp.project((pt.b, pt.f))
        } else {
            (vp.x.project(pt.b), band_y)
        };
        markers.push(Marker {
            kernel: pt.si,
            kind: MarkerKind::Complexity,
            at,
            data: (pt.b, pt.f),
            radius: marker_radius(share),
        });
        if let Some(v) = pt.vertex {
            let vat = vp.project(v);
            links.push(Line {
                role: LineRole::KernelLink { kernel: pt.si },
                points: vec![at, vat],
                dashed: false,
            });
            markers.push(Marker {
                kernel: pt.si,
                kind: MarkerKind::TimeVertex,
                at: vat,
                data: v,
                radius: MARKER_MIN + 1.0,
            });
        }
    }
    super::largest_markers_first(&mut markers);
    (markers, links)
}

/// Each datapath's machine-balance line against HBM's `bw`, labelled along it.
fn balance_lines(
    lines: &mut Vec<Line>,
    pending: &mut Vec<LabelCandidates>,
    p: &Analysed,
    in_use: &[Datapath],
    bw: f64,
    vp: &Viewport,
) {
    let (dx, dy) = (vp.x.domain(), vp.y.domain());
    for (j, &d) in in_use.iter().enumerate() {
        let Some(pk) = p.ceilings.peak(d) else {
            continue;
        };
        let role = LineRole::MachineBalance(d);
        let Some((x0, y0, x1, y1)) = push_clipped(
            lines,
            vp,
            role,
            false,
            shapes::machine_balance_line(pk, bw, dx, dy),
        ) else {
            continue;
        };
        // Stagger the labels of parallel lines so that they do not overlap.
        let t = 0.9 - 0.17 * (j % 4) as f64;
        // Then farther along the line, else below it, clear of markers and labels.
        let first = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t - 6.0);
        // Where the whole text finds no place, a shorter one ("FP32 18.3 FLOP/B").
        let balance = format_plain(crate::analysis::time_based::machine_balance(pk, bw));
        let mut candidates = along(
            &format!("{} balance {balance} FLOP/B", d.label()),
            role,
            Anchor::End,
            ((x0, y0), (x1, y1)),
            Some(first),
            &fractions(0.98, 0.02, 49),
        );
        candidates.extend(along(
            &format!("{} {balance} FLOP/B", d.label()),
            role,
            Anchor::End,
            ((x0, y0), (x1, y1)),
            None,
            &fractions(0.98, 0.02, 49),
        ));
        pending.push(LabelCandidates {
            candidates,
            required: true,
        });
    }
}

/// The launch-overhead boxes, dashed, each labelled where its label fits: inside the box's top
/// edge, else just above it, at its right end, else at its left end, else in between, else
/// beside its corner outside the box; else not at all. The labels are placed with the others ([`super::place_ceiling_labels`]): never on a
/// marker, a line (another box's edge) or another label.
fn launch_box_lines(
    lines: &mut Vec<Line>,
    pending: &mut Vec<LabelCandidates>,
    p: &Analysed,
    boxes: &[(u64, (f64, f64))],
    vp: &Viewport,
) {
    let (dx, dy) = (vp.x.domain(), vp.y.domain());
    let area = vp.area;
    for (n, corner) in boxes {
        let role = LineRole::LaunchBox { launches: *n };
        let outline = shapes::launch_box_outline(*corner, dx, dy);
        if outline.len() < 2 {
            continue;
        }
        let px: Vec<(f64, f64)> = outline.iter().map(|q| vp.project(*q)).collect();
        let corner_px = vp.project(*corner);
        lines.push(Line {
            role,
            points: px,
            dashed: true,
        });
        if !area.contains(corner_px.0, corner_px.1) {
            continue;
        }
        let text = format!(
            "{n} launch{} × {}",
            if *n == 1 { "" } else { "es" },
            format_si(p.ceilings.launch_overhead_s.unwrap_or(0.0), "s")
        );
        let inside = corner_px.1 + 14.0;
        let above = corner_px.1 - 4.0;
        let middle = f64::midpoint(area.x, corner_px.0);
        let mut candidates = Vec::new();
        for y in [inside, above] {
            candidates.push(((corner_px.0 - 4.0, y), Anchor::End));
            candidates.push(((area.x + 4.0, y), Anchor::Start));
            candidates.push(((middle, y), Anchor::Middle));
        }
        // Outside the box, beside its right edge under the corner (nested boxes leave no room
        // above or inside; the corner lies on the balance line, which rises to the right).
        candidates.push(((corner_px.0 + 4.0, inside), Anchor::Start));
        pending.push(LabelCandidates {
            candidates: candidates
                .into_iter()
                .map(|(at, anchor)| Label {
                    text: text.clone(),
                    at,
                    direction: Label::LEVEL,
                    anchor,
                    role,
                })
                .collect(),
            required: false,
        });
    }
}

/// The legend: the point and vertex (when there are points), the launch box (when drawn), each
/// datapath's balance line.
fn legend(points: bool, boxes: bool, band: bool, in_use: &[Datapath]) -> Vec<LegendEntry> {
    let mut legend = Vec::new();
    if points {
        legend.push(LegendEntry {
            role: LegendRole::Complexity,
            text: "kernel (B, F): complexity".into(),
        });
        legend.push(LegendEntry {
            role: LegendRole::TimeVertex,
            text: "time vertex (B*, F*): bound = measured T".into(),
        });
    }
    if boxes {
        legend.push(LegendEntry {
            role: LegendRole::LaunchBox,
            text: "launch-bound box: n × t_launch".into(),
        });
    }
    if band {
        legend.push(LegendEntry {
            role: LegendRole::ZeroBand,
            text: "F = 0 band: no arithmetic, at its B".into(),
        });
    }
    legend.extend(in_use.iter().map(|d| LegendEntry {
        role: LegendRole::Datapath(*d),
        text: format!("{} balance P/BW (HBM)", d.label()),
    }));
    legend
}

/// The share of kernel time the chart draws: at its (B, F), in the F = 0 band, and not at all
/// (no F or B, or beyond the kernels plotted); `None` when it draws all of it at (B, F).
fn time_drawn_note(kernels: &[SceneKernel]) -> Option<String> {
    let (mut at, mut band) = (0.0, 0.0);
    for k in kernels {
        let a = &k.analysis;
        if has_point(a) {
            at += a.share_of_time;
        } else if in_band(a) {
            band += a.share_of_time;
        }
    }
    let rest = (1.0 - at - band).max(0.0);
    if band == 0.0 && rest < 5e-4 {
        return None;
    }
    let pct = |v: f64| format!("{:.1}%", v * 100.0);
    Some(format!(
        "kernel time drawn: {} at (B, F), {} in the F = 0 band (no arithmetic); {} not drawn (no F or B, or not among the kernels plotted)",
        pct(at),
        pct(band),
        pct(rest)
    ))
}

/// The notes: what the charts share, a missing HBM ceiling, and the drawn kernels by region.
fn notes(p: &Analysed, kernels: &[SceneKernel], drawn: usize, has_bw: bool) -> Vec<String> {
    let mut notes = common_notes(p, drawn);
    if let Some(n) = time_drawn_note(kernels) {
        notes.push(n);
    }
    if !has_bw {
        notes.push("no HBM bandwidth ceiling: time vertices and balance lines need one".into());
    }
    // A launch overhead not measured says where it comes from.
    if let (Some(t), Some(s)) = (
        p.ceilings.launch_overhead_s,
        p.ceilings.launch_overhead_source,
    ) {
        let what = match s {
            CeilingSource::Measured => None,
            CeilingSource::Estimated => Some("estimated from the trace's kernel launch calls"),
            other => Some(other.key()),
        };
        if let Some(what) = what {
            notes.push(format!("t_launch {}: {what}", format_si(t, "s")));
        }
    }
    let mut regions: Vec<(Region, usize)> = Vec::new();
    for k in kernels {
        if let Some(tb) = &k.analysis.time_bound {
            match regions.iter_mut().find(|(r, _)| *r == tb.region) {
                Some(r) => r.1 += 1,
                None => regions.push((tb.region, 1)),
            }
        }
    }
    if !regions.is_empty() {
        let parts: Vec<String> = regions
            .iter()
            .map(|(r, n)| format!("{n} {}-bound", r.key()))
            .collect();
        notes.push(format!("regions: {}", parts.join(", ")));
    }
    notes
}
