//! The communication chart: each collective launch's bus bandwidth against its size, under its
//! device's link ceilings drawn as flat roofs. nccl-tests plots its results so (bus bandwidth
//! against size, `doc/PERFORMANCE.md`): a small message is bound by the collective's latency and
//! sits low, a large one climbs toward the bandwidth of the link it runs on, which no collective
//! can pass (busbw is what the slowest link carries per rank, in one direction).

use super::{
    Anchor, ChartError, ChartOptions, Label, LabelCandidates, LegendEntry, LegendRole, LineRole,
    Marker, MarkerKind, Obstacles, Scene, SceneKernel, axis, ceiling_label, largest_markers_first,
    marker_radius, plot_area, push_clipped, side_panel,
};
use crate::analysis::analyze_kernel;
use crate::analysis::ceilings::CeilingSource;
use crate::analysis::comm::{self, CommAnalysis};
use crate::analysis::si::format_si;
use crate::bundle::{Bundle, CollectiveKind, Kernel, LinkKind, Method};
use crate::chart::geometry::roofline as shapes;
use crate::chart::geometry::scale::{Viewport, fit_log_domain};

/// One collective launch's line of figures (the tooltip and the side panel's).
fn summary(k: &Kernel, c: &CommAnalysis, device: Option<&str>) -> String {
    let mut s = format!(
        "{} of {} over {} ranks in {}",
        c.kind.label(),
        c.bytes.map_or_else(|| "?".into(), |b| format_si(b, "B")),
        c.group_size.map_or_else(|| "?".into(), |n| n.to_string()),
        format_si(k.time.total_s, "s")
    );
    if let Some(b) = c.busbw {
        s.push_str(&format!(": busbw {}", format_si(b, "B/s")));
    }
    if let (Some(share), Some(l)) = (c.link_share, c.link) {
        s.push_str(&format!(", {:.1}% of {}", share * 100.0, l.label()));
    }
    if let Some(d) = device {
        s.push_str(&format!(" (device {d})"));
    }
    s
}

/// The communication chart of a bundle's `launches` (its kernels, which a reader may keep apart
/// from aggregated entries): every collective launch of every device with a known
/// size and bus bandwidth, at (S, busbw), its marker's area growing with its share of the
/// collectives' time, coloured by collective; the roofs are the links of the device chosen
/// (`o.device`, else the first one with link ceilings), labelled with their source. The
/// `o.top_kernels` launches with the most time are drawn.
///
/// # Errors
/// [`ChartError::NoCollectives`] when no launch has a size and a bus bandwidth.
pub fn communication(
    bundle: &Bundle,
    launches: &[Kernel],
    o: &ChartOptions,
) -> Result<Scene, ChartError> {
    let device = o.device.clone().or_else(|| {
        bundle
            .machines
            .iter()
            .find(|m| !m.links.is_empty())
            .map(|m| m.device.clone())
            .or_else(|| bundle.devices.first().map(|d| d.id.clone()))
    });
    let machine = bundle.machine_of(device.as_deref());
    let links = machine.map(|m| m.links.as_slice()).unwrap_or_default();
    let collectives: Vec<(usize, CommAnalysis)> = launches
        .iter()
        .enumerate()
        .filter_map(|(i, k)| {
            comm::analyze_collective(k, bundle.machine_of(bundle.device_of(k))).map(|c| (i, c))
        })
        .collect();
    let total: f64 = collectives
        .iter()
        .map(|(i, _)| launches[*i].time.total_s)
        .sum();
    let points: Vec<(usize, &CommAnalysis, (f64, f64))> = collectives
        .iter()
        .filter_map(|(i, c)| {
            let (s, b) = (c.bytes?, c.busbw?);
            (s > 0.0 && b > 0.0).then_some((*i, c, (s, b)))
        })
        .collect();
    if points.is_empty() {
        return Err(ChartError::NoCollectives(if collectives.is_empty() {
            "no collective (NCCL) kernels".into()
        } else {
            format!(
                "{} collective launches, none with both a size and a bus bandwidth ({})",
                collectives.len(),
                missing_words(&collectives)
            )
        }));
    }
    let unplotted = collectives.len() - points.len();
    let mut order: Vec<usize> = (0..points.len()).collect();
    crate::analysis::kernel::sort_indices(&mut order, &|a, b| {
        let t = |p: usize| launches[points[p].0].time.total_s;
        t(b).total_cmp(&t(a))
    });
    let mut points: Vec<(usize, &CommAnalysis, (f64, f64))> =
        order.into_iter().map(|i| points[i]).collect();
    let shown = o.top_kernels.max(1).min(points.len());
    let left_off = points.len() - shown;
    points.truncate(shown);
    let xs = points.iter().map(|p| p.2.0);
    let ys: Vec<f64> = points
        .iter()
        .map(|p| p.2.1)
        .chain(links.iter().map(|l| l.value))
        .collect();
    let nothing = || ChartError::NoCollectives("no positive size or bandwidth".into());
    let dx = fit_log_domain(xs, 0.4).ok_or_else(nothing)?;
    let dy = fit_log_domain(ys.iter().copied(), 0.4).ok_or_else(nothing)?;
    let (dx, dy) = o.domain.unwrap_or((dx, dy));
    let area = plot_area(o);
    let vp = Viewport::new(dx, dy, area).ok_or_else(nothing)?;

    let mut lines = Vec::new();
    let mut labels = Vec::new();
    let mut legend = Vec::new();
    for l in links {
        let role = LineRole::Link(l.link);
        let source = CeilingSource::of(l.method, l.source.as_ref());
        if let Some((_, _, x1, y1)) = push_clipped(
            &mut lines,
            &vp,
            role,
            l.method == Method::Theoretical,
            shapes::clip_polyline_loglog(&[(dx.0, l.value), (dx.1, l.value)], dx, dy),
        ) {
            labels.push(Label {
                text: ceiling_label(
                    l.link.label(),
                    l.value,
                    "B/s",
                    (source != CeilingSource::Measured).then(|| source.key()),
                ),
                at: (x1 - 4.0, y1 - 5.0),
                direction: Label::LEVEL,
                anchor: Anchor::End,
                role,
            });
        }
        legend.push(LegendEntry {
            role: LegendRole::Link(l.link),
            text: format!("{} roof, one direction", l.link.label()),
        });
    }
    let kinds: Vec<CollectiveKind> = CollectiveKind::ALL
        .into_iter()
        .filter(|k| points.iter().any(|p| p.1.kind == *k))
        .collect();
    legend.extend(kinds.iter().map(|k| LegendEntry {
        role: LegendRole::Collective(*k),
        text: k.label().to_string(),
    }));

    let several = bundle.devices.len() > 1;
    let mut markers = Vec::with_capacity(points.len());
    let mut kernels = Vec::with_capacity(points.len());
    for (rank, (i, c, (s, b))) in points.iter().enumerate() {
        let k = &launches[*i];
        let share = if total > 0.0 {
            k.time.total_s / total
        } else {
            0.0
        };
        let dev = bundle.device_of(k).filter(|_| several);
        markers.push(Marker {
            kernel: rank,
            kind: MarkerKind::Collective(c.kind),
            at: vp.project((*s, *b)),
            data: (*s, *b),
            radius: marker_radius(share),
        });
        let mut analysis = analyze_kernel(*i, k, None, total);
        analysis.share_of_time = share;
        kernels.push(SceneKernel {
            rank: rank + 1,
            name: format!(
                "{} {}{}",
                c.kind.label(),
                format_si(*s, "B"),
                dev.map(|d| format!(" · {d}")).unwrap_or_default()
            ),
            full_name: k.name.clone(),
            analysis,
            launches: k.launches,
            summary: summary(k, c, dev),
            brief: format!(
                "{:.1}% · {} · {}",
                share * 100.0,
                format_si(*b, "B/s"),
                c.link_share.map_or_else(
                    || "no link".into(),
                    |v| format!("{:.1}% of link", v * 100.0)
                )
            ),
            bound_path: None,
        });
    }
    largest_markers_first(&mut markers);

    let mut notes = Vec::new();
    if links.is_empty() {
        notes.push(format!(
            "no link ceilings{}: the GPU catalogue gives NVLink and PCIe for its GPUs, a DGX's network with --system",
            device.as_deref().map(|d| format!(" for device {d}")).unwrap_or_default()
        ));
    } else if several {
        notes.push(format!(
            "roofs: the links of device {}; points: the collectives of every device",
            device.as_deref().unwrap_or("?")
        ));
    }
    let over = points
        .iter()
        .filter(|p| p.1.link_share.is_some_and(|s| s > 1.0))
        .count();
    if over > 0 {
        notes.push(format!(
            "{over} launch{} above its link's roof: its group size or scope is likely not what the trace suggests (check --group-size, --gpus-per-node)",
            if over == 1 { "" } else { "es" }
        ));
    }
    if unplotted > 0 {
        notes.push(format!(
            "{unplotted} of {} collective launches not plotted: {}",
            collectives.len(),
            missing_words(&collectives)
        ));
    }
    if left_off > 0 {
        notes.push(format!(
            "{shown} of {} launches plotted: those with the most time",
            shown + left_off
        ));
    }
    let links_word = links
        .iter()
        .map(|l| l.link.label())
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Scene {
        width: o.width,
        height: o.height,
        title: "Collectives against their links (bus bandwidth, nccl-tests)".into(),
        subtitle: format!(
            "{}{}",
            device
                .as_deref()
                .and_then(|d| bundle.devices.iter().find(|x| x.id == d))
                .map_or_else(
                    || "no device".into(),
                    |d| format!("{} (device {})", d.name, d.id)
                ),
            if links_word.is_empty() {
                String::new()
            } else {
                format!(" · {links_word}")
            }
        ),
        x_axis: axis(dx, "B", "Message size S (bytes)", |v| vp.x.project(v)),
        y_axis: axis(dy, "B/s", "Bus bandwidth (byte/s, one direction)", |v| {
            vp.y.project(v)
        }),
        viewport: vp,
        lines,
        label_candidates: labels
            .iter()
            .map(|l| LabelCandidates {
                candidates: vec![l.clone()],
                required: true,
            })
            .collect(),
        labels,
        avoid: Obstacles::default(),
        markers,
        kernels,
        legend,
        notes,
        side_panel: side_panel(o),
    })
}

/// What kept collectives off the chart, in words.
fn missing_words(c: &[(usize, CommAnalysis)]) -> String {
    [
        comm::Missing::Bytes,
        comm::Missing::GroupSize,
        comm::Missing::Factor,
    ]
    .into_iter()
    .filter(|m| c.iter().any(|(_, a)| a.missing.contains(m)))
    .map(comm::Missing::words)
    .collect::<Vec<_>>()
    .join("; ")
}

/// The link roofs a scene draws, for tests and the viewer's legend.
pub fn roof_links(scene: &Scene) -> Vec<LinkKind> {
    scene
        .lines
        .iter()
        .filter_map(|l| match l.role {
            LineRole::Link(k) => Some(k),
            _ => None,
        })
        .collect()
}
