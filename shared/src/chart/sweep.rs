//! The ERT-style sweep chart of a machine characterization.

use super::{
    Analysed, Anchor, ChartError, ChartOptions, Label, LegendEntry, LegendRole, LineRole, Scene,
    ceiling_label, device_suffix, intensity_axis, performance_axis, plot_area, push_clipped,
    side_panel, source_word, subtitle,
};
use crate::analysis::si::format_si;
use crate::bundle::{Bundle, Datapath};
use crate::chart::geometry::roofline as shapes;
use crate::chart::geometry::scale::{Viewport, fit_log_domain};

/// One line of the sweep chart: its (datapath, working set) key and its (intensity, FLOP/s) points.
type SweepSeries = ((Datapath, f64), Vec<(f64, f64)>);

/// The ERT-style sweep of a machine (Empirical Roofline Toolkit, Lo et al., "Roofline Model
/// Toolkit: A Practical Tool for Architectural and Program Analysis", PMBS 2014): achieved
/// performance `F / T` against intensity `F / B`, one line per datapath and working set, with the
/// ceilings drawn as in [`hierarchical`](super::hierarchical()). Plateaus at each working set's bandwidth show the memory
/// levels; the flat tops show the compute peaks.
///
/// # Errors
/// [`ChartError::Nothing`] when the device's machine has no sweep.
pub fn sweep(bundle: &Bundle, o: &ChartOptions) -> Result<Scene, ChartError> {
    let p = Analysed::without_kernels(bundle, o.device.as_deref(), o.ceilings.as_ref());
    let machine = bundle.machine_of(p.device.as_deref());
    let Some(machine) = machine.filter(|m| !m.sweep.is_empty()) else {
        let device = device_suffix(&p);
        return Err(ChartError::NoSweep(if machine.is_some() {
            format!("a machine characterization{device} without a sweep")
        } else if bundle.machines.is_empty() {
            "no machine characterization".into()
        } else {
            format!("no machine characterization{device}")
        }));
    };
    // Series: (datapath, working set) in order of first appearance, points sorted by intensity.
    let mut series: Vec<SweepSeries> = Vec::new();
    for s in &machine.sweep {
        if s.bytes <= 0.0 || s.flops <= 0.0 || s.time_s <= 0.0 {
            continue;
        }
        let point = (s.flops / s.bytes, s.flops / s.time_s);
        let key = (s.datapath, s.working_set_bytes);
        match series.iter_mut().find(|(k, _)| *k == key) {
            Some((_, pts)) => pts.push(point),
            None => series.push((key, vec![point])),
        }
    }
    crate::analysis::kernel::sort_slice_by(&mut series, |a, b| {
        (a.0.0, a.0.1)
            .partial_cmp(&(b.0.0, b.0.1))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for (_, pts) in &mut series {
        super::sort_by_x(pts);
    }
    let xs = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .chain(p.ceilings.datapaths().map(|(_, c)| c.value))
        .collect();
    let dx = fit_log_domain(xs, 0.3).ok_or_else(|| {
        ChartError::NoSweep(format!(
            "a sweep{} without a point of positive FLOPs, bytes and time",
            device_suffix(&p)
        ))
    })?;
    let dy = fit_log_domain(ys.iter().copied(), 0.3)
        .ok_or_else(|| ChartError::Nothing(device_suffix(&p)))?;
    let (dx, dy) = o.domain.unwrap_or((dx, dy));
    let area = plot_area(o);
    let vp = Viewport::new(dx, dy, area).ok_or_else(|| ChartError::Nothing(device_suffix(&p)))?;
    let mut lines = Vec::new();
    let mut labels = Vec::new();
    let mut legend = Vec::new();
    for (i, ((d, ws), pts)) in series.iter().enumerate() {
        let role = LineRole::Sweep { series: i };
        if let Some((_, _, x1, y1)) = push_clipped(
            &mut lines,
            &vp,
            role,
            false,
            shapes::clip_polyline_loglog(pts, dx, dy),
        ) {
            labels.push(Label {
                text: format_si(*ws, "B"),
                at: (x1 + 4.0, y1 + 4.0),
                direction: Label::LEVEL,
                anchor: Anchor::Start,
                role,
            });
        }
        legend.push(LegendEntry {
            role: LegendRole::Sweep { series: i },
            text: format!("{} sweep, working set {}", d.label(), format_si(*ws, "B")),
        });
    }
    // The resolved ceilings, for reference: the roofs are flat lines across the plot.
    for (d, c) in p.ceilings.datapaths() {
        let role = LineRole::Compute(d);
        if let Some((_, _, x1, y1)) = push_clipped(
            &mut lines,
            &vp,
            role,
            true,
            shapes::clip_polyline_loglog(&[(dx.0, c.value), (dx.1, c.value)], dx, dy),
        ) {
            labels.push(Label {
                text: ceiling_label(
                    d.label(),
                    c.value,
                    "FLOP/s",
                    source_word(
                        p.ceilings.peak_pick(d),
                        c.method == crate::bundle::Method::Theoretical,
                    ),
                ),
                at: (x1 - 4.0, y1 - 5.0),
                direction: Label::LEVEL,
                anchor: Anchor::End,
                role,
            });
        }
    }
    Ok(Scene {
        width: o.width,
        height: o.height,
        title: "Empirical sweep (working set × intensity)".into(),
        subtitle: subtitle(&p),
        x_axis: intensity_axis(dx, &vp),
        y_axis: performance_axis(dy, &vp),
        viewport: vp,
        lines,
        label_candidates: labels
            .iter()
            .map(|l| super::LabelCandidates {
                candidates: vec![l.clone()],
                required: true,
            })
            .collect(),
        labels,
        avoid: super::Obstacles::default(),
        markers: Vec::new(),
        kernels: Vec::new(),
        legend,
        notes: vec![format!(
            "{} series, {} points",
            series.len(),
            machine.sweep.len()
        )],
        side_panel: side_panel(o),
    })
}
