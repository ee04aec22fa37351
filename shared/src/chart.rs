//! Chart scenes: everything a roofline chart shows, in pixel coordinates, computed once here.
//!
//! [`hierarchical`] and [`time_based`] turn a bundle into a [`Scene`]: axes with ticks, ceiling
//! lines with their labels, kernel markers and the links between them, and a legend. The CLI's
//! SVG exporter and the viewer's components only draw a scene; neither computes a figure. The
//! scene keeps its [`Viewport`] so that a pointer position can be turned back into data (hover).

use crate::aggregate::aggregate_by_name;
use crate::analysis::{self, KernelAnalysis};
use crate::bundle::{Bundle, Datapath, Kernel, MemoryLevel};
use crate::ceilings::Ceilings;
use crate::geometry::roofline as shapes;
use crate::geometry::scale::{Rect, Viewport, fit_log_domain};
use crate::geometry::si::{format_plain, format_si};
use crate::geometry::ticks::log_ticks;
use crate::hierarchical::Bound;
use crate::time_based::Region;

/// Data ranges of a chart: `((x_min, x_max), (y_min, y_max))`.
pub type Domain = ((f64, f64), (f64, f64));

/// What to draw and how large.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartOptions {
    /// Width of the whole chart, pixels.
    pub width: f64,
    /// Height of the whole chart, pixels.
    pub height: f64,
    /// Only the kernels with the largest share of time are drawn.
    pub top_kernels: usize,
    /// The device whose kernels and ceilings are drawn; the first device when `None`.
    pub device: Option<String>,
    /// Memory levels drawn (ceilings and kernel points).
    pub levels: Vec<MemoryLevel>,
    /// Datapaths whose roofs are drawn; all measured ones when `None`.
    pub datapaths: Option<Vec<Datapath>>,
    /// Ceilings to use instead of the bundle's (a swapped or edited machine).
    pub ceilings: Option<Ceilings>,
    /// Width of the kernel list on the right, pixels (0 to leave it out).
    pub side_panel: f64,
    /// Data ranges to show (x, y) instead of the fitted ones: zoom and pan.
    pub domain: Option<Domain>,
}

impl Default for ChartOptions {
    fn default() -> Self {
        ChartOptions {
            width: 960.0,
            height: 640.0,
            top_kernels: 12,
            device: None,
            levels: vec![MemoryLevel::L1, MemoryLevel::L2, MemoryLevel::Hbm],
            datapaths: None,
            ceilings: None,
            side_panel: 280.0,
            domain: None,
        }
    }
}

impl ChartOptions {
    /// The viewer's layout: a wider plot and no side panel (the page lists the kernels in a
    /// table), the 40 largest kernels.
    pub fn browser() -> Self {
        ChartOptions {
            width: 900.0,
            height: 560.0,
            top_kernels: 40,
            side_panel: 0.0,
            ..ChartOptions::default()
        }
    }
}

/// Why a chart cannot be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChartError {
    /// No ceiling and no kernel point.
    #[error(
        "nothing to plot: the bundle has no ceilings{0} and no kernel with FLOPs and bytes; measure the machine with `roofline machine` or add kernels"
    )]
    Nothing(String),
    /// The sweep chart on a bundle without a sweep.
    #[error(
        "nothing to plot: the sweep chart draws the arithmetic-intensity sweep of a machine characterization, and this bundle has {0}; `roofline machine` records one (a --quick run does too), or draw --chart hierarchical or --chart time"
    )]
    NoSweep(String),
}

/// A drawn line's meaning (the renderer picks its style from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineRole {
    /// A bandwidth ceiling.
    Bandwidth(MemoryLevel),
    /// A compute roof.
    Compute(Datapath),
    /// Time-based plane: `F = (P / BW) × B`.
    MachineBalance(Datapath),
    /// Time-based plane: the box below which `n` launches are launch-overhead bound.
    LaunchBox {
        /// Launch count.
        launches: u64,
    },
    /// The line joining one kernel's points (levels, or measured point and time vertex).
    KernelLink {
        /// Index into [`Scene::kernels`].
        kernel: usize,
    },
    /// One working set of the ERT-style sweep (performance against intensity).
    Sweep {
        /// Series number, for its colour.
        series: usize,
    },
}

/// A polyline in pixel coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// What it is.
    pub role: LineRole,
    /// Vertices, pixels.
    pub points: Vec<(f64, f64)>,
    /// Dashed (theoretical ceilings, the launch box).
    pub dashed: bool,
}

/// How text is anchored at its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// Text starts at the point.
    Start,
    /// Text is centred on the point.
    Middle,
    /// Text ends at the point.
    End,
}

/// A text label in pixel coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// The text.
    pub text: String,
    /// Position, pixels (baseline).
    pub at: (f64, f64),
    /// Rotation, degrees clockwise (SVG convention).
    pub angle_deg: f64,
    /// Horizontal anchor.
    pub anchor: Anchor,
    /// What it labels (for colour).
    pub role: LineRole,
}

/// Font size of chart labels, pixels (both renderers draw them at this size).
pub const LABEL_FONT_PX: f64 = 11.0;
/// The mean advance of one character of a label, pixels: an estimate for a sans-serif face
/// (0.6 em), used only to keep labels apart.
const LABEL_CHAR_PX: f64 = 0.6 * LABEL_FONT_PX;

impl Label {
    /// The corners of the rectangle its text covers, pixels: an estimate from its length, its
    /// anchor and its rotation about `at`.
    pub fn corners(&self) -> [(f64, f64); 4] {
        #[allow(clippy::cast_precision_loss)]
        let w = self.text.chars().count() as f64 * LABEL_CHAR_PX;
        let x0 = match self.anchor {
            Anchor::Start => 0.0,
            Anchor::Middle => -w / 2.0,
            Anchor::End => -w,
        };
        // Ascent above the baseline, descent below it.
        let (top, bottom) = (-0.8 * LABEL_FONT_PX, 0.25 * LABEL_FONT_PX);
        let (sin, cos) = self.angle_deg.to_radians().sin_cos();
        [(x0, top), (x0 + w, top), (x0 + w, bottom), (x0, bottom)]
            .map(|(x, y)| (self.at.0 + x * cos - y * sin, self.at.1 + x * sin + y * cos))
    }

    /// Whether the two labels' text rectangles overlap (separating-axis test on the rotated
    /// rectangles of [`Label::corners`]).
    pub fn overlaps(&self, other: &Label) -> bool {
        let (a, b) = (self.corners(), other.corners());
        let axes = [
            (a[1].0 - a[0].0, a[1].1 - a[0].1),
            (a[3].0 - a[0].0, a[3].1 - a[0].1),
            (b[1].0 - b[0].0, b[1].1 - b[0].1),
            (b[3].0 - b[0].0, b[3].1 - b[0].1),
        ];
        axes.iter().all(|&(ax, ay)| {
            let span = |r: &[(f64, f64); 4]| {
                r.iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                        let d = p.0 * ax + p.1 * ay;
                        (lo.min(d), hi.max(d))
                    })
            };
            let ((a0, a1), (b0, b1)) = (span(&a), span(&b));
            a0 < b1 && b0 < a1
        })
    }
}

/// What a marker shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerKind {
    /// A kernel at one memory level (hierarchical chart).
    Level(MemoryLevel),
    /// A kernel's complexity point (B, F) (time-based chart).
    Complexity,
    /// A kernel's time vertex (B*, F*) (time-based chart).
    TimeVertex,
}

/// A kernel marker.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Index into [`Scene::kernels`].
    pub kernel: usize,
    /// What it shows.
    pub kind: MarkerKind,
    /// Position, pixels.
    pub at: (f64, f64),
    /// Position, data units (x, y).
    pub data: (f64, f64),
    /// Radius, pixels (grows with the kernel's share of time).
    pub radius: f64,
}

/// A kernel drawn on the chart, with the figures a hover shows.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneKernel {
    /// 1-based rank by time, shown next to its markers.
    pub rank: usize,
    /// Short name.
    pub name: String,
    /// Full name.
    pub full_name: String,
    /// The analysis behind the markers.
    pub analysis: KernelAnalysis,
    /// Launches.
    pub launches: u64,
    /// One line of figures for tooltips.
    pub summary: String,
    /// A short line for the side panel (share, performance, verdict).
    pub brief: String,
}

/// An axis: its label and ticks (positions in pixels along the axis).
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Title with unit.
    pub title: String,
    /// Ticks: pixel position, major or minor, label.
    pub ticks: Vec<(f64, bool, Option<String>)>,
}

/// A legend entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    /// Colour source.
    pub role: LegendRole,
    /// Text.
    pub text: String,
}

/// Legend swatch kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegendRole {
    /// A memory level's colour (ceiling and kernel points).
    Level(MemoryLevel),
    /// A datapath's roof.
    Datapath(Datapath),
    /// The time-based complexity point.
    Complexity,
    /// The time-based vertex.
    TimeVertex,
    /// The launch-overhead box.
    LaunchBox,
    /// A series of the sweep.
    Sweep {
        /// Series number.
        series: usize,
    },
}

/// A whole chart, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// Total size, pixels.
    pub width: f64,
    /// Total size, pixels.
    pub height: f64,
    /// Title.
    pub title: String,
    /// Subtitle (device, source).
    pub subtitle: String,
    /// The plotting area and its log scales.
    pub viewport: Viewport,
    /// x axis.
    pub x_axis: Axis,
    /// y axis.
    pub y_axis: Axis,
    /// Ceilings, boxes and kernel links, in drawing order.
    pub lines: Vec<Line>,
    /// Ceiling labels.
    pub labels: Vec<Label>,
    /// Kernel markers, drawn above lines (largest first, so small ones stay visible).
    pub markers: Vec<Marker>,
    /// Kernels drawn, by rank.
    pub kernels: Vec<SceneKernel>,
    /// Legend.
    pub legend: Vec<LegendEntry>,
    /// Remarks shown under the chart (missing ceilings, kernels left out).
    pub notes: Vec<String>,
    /// The side panel's area (kernel list), if any.
    pub side_panel: Option<Rect>,
}

/// Colours shared by the SVG export and the viewer (Okabe–Ito palette, readable by
/// colour-blind readers).
pub mod style {
    use super::{Datapath, LegendRole, LineRole, MarkerKind, MemoryLevel};

    /// The colour of a memory level.
    pub fn level(l: MemoryLevel) -> &'static str {
        match l {
            MemoryLevel::L1 => "#0072B2",
            MemoryLevel::Shared => "#56B4E9",
            MemoryLevel::L2 => "#009E73",
            MemoryLevel::Hbm => "#D55E00",
            MemoryLevel::HostLink => "#999999",
        }
    }

    /// The colour of a compute roof.
    pub fn datapath(d: Datapath) -> &'static str {
        match d {
            Datapath::Fp64 => "#000000",
            Datapath::Fp32 => "#4d4d4d",
            Datapath::Fp16 => "#7f7f7f",
            Datapath::Bf16 => "#a6a6a6",
            Datapath::TensorFp16 => "#CC79A7",
            Datapath::TensorBf16 => "#AA4499",
            Datapath::TensorTf32 => "#882255",
            Datapath::TensorFp8 => "#E69F00",
            Datapath::TensorInt8 => "#999933",
            Datapath::TensorFp64 => "#332288",
        }
    }

    /// The colour of a line.
    pub fn line(r: LineRole) -> &'static str {
        match r {
            LineRole::Bandwidth(l) => level(l),
            LineRole::Compute(d) | LineRole::MachineBalance(d) => datapath(d),
            LineRole::LaunchBox { .. } => "#E69F00",
            LineRole::KernelLink { .. } => "#888888",
            LineRole::Sweep { series } => SWEEP[series % SWEEP.len()],
        }
    }

    /// Colours of the sweep's series (a sequential palette: small to large working sets).
    const SWEEP: [&str; 8] = [
        "#0072B2", "#3989C2", "#56B4E9", "#009E73", "#7FB800", "#E69F00", "#D55E00", "#A0391B",
    ];

    /// The colour of a marker.
    pub fn marker(k: MarkerKind) -> &'static str {
        match k {
            MarkerKind::Level(l) => level(l),
            MarkerKind::Complexity => "#0072B2",
            MarkerKind::TimeVertex => "#D55E00",
        }
    }

    /// The colour of a legend swatch.
    pub fn legend(r: LegendRole) -> &'static str {
        match r {
            LegendRole::Level(l) => level(l),
            LegendRole::Datapath(d) => datapath(d),
            LegendRole::Complexity => marker(MarkerKind::Complexity),
            LegendRole::TimeVertex => marker(MarkerKind::TimeVertex),
            LegendRole::LaunchBox => "#E69F00",
            LegendRole::Sweep { series } => line(LineRole::Sweep { series }),
        }
    }
}

/// Margins around the plotting area: left (y tick labels and title), top (title), right (half
/// of the last x tick label, e.g. `100 GB`), bottom (x tick labels, title, notes).
const MARGIN: (f64, f64, f64, f64) = (100.0, 56.0, 36.0, 96.0);
/// Marker radius: `MIN + SCALE × sqrt(share of time)`, so that area grows with the share.
const MARKER_MIN: f64 = 3.0;
const MARKER_SCALE: f64 = 10.0;

/// One device's kernels aggregated by name and analysed against its ceilings, largest time
/// first: what the hierarchical and time-based charts draw. [`hierarchical`] and [`time_based`]
/// build their own; build one with [`Analysed::new`] when a single analysis feeds several views
/// (the viewer's chart and kernel table), and draw it with [`hierarchical_of`] and
/// [`time_based_of`].
#[derive(Debug, Clone, PartialEq)]
pub struct Analysed {
    /// The device's id (`None` when the bundle declares none).
    pub device: Option<String>,
    /// The device's name, or empty.
    pub device_name: String,
    /// Whether the bundle says it is complete.
    pub complete: bool,
    /// The ceilings the kernels were analysed against.
    pub ceilings: Ceilings,
    /// The device's kernels, aggregated by name.
    pub kernels: Vec<Kernel>,
    /// Their analyses, largest time first (a stable order: ties keep the bundle's order);
    /// `index` points into `kernels`. Each chart draws the first `top_kernels` it can.
    pub top: Vec<KernelAnalysis>,
    /// [`Analysed::display_names`], computed on first use (the table and every redraw of a
    /// chart read them; a comparison redraws without recomputing them). From `kernels`: an
    /// analysis whose kernels are replaced must be built anew.
    pub(crate) names: std::sync::OnceLock<Vec<String>>,
}

impl Analysed {
    /// Analyses the kernels of `device` (the bundle's first device when `None`) against
    /// `ceilings` (the device's own machine when `None`; none at all when it has no machine).
    pub fn new(bundle: &Bundle, device: Option<&str>, ceilings: Option<&Ceilings>) -> Self {
        let mut a = Self::without_kernels(bundle, device, ceilings);
        a.kernels = aggregate_by_name(
            bundle
                .kernels
                .iter()
                .filter(|k| a.device.is_none() || bundle.device_of(k) == a.device.as_deref()),
        );
        a.top = analysis::analyze_with(&a.kernels, |_| Some(a.ceilings.clone()));
        a.top.sort_by(|x, y| y.time_s.total_cmp(&x.time_s));
        a
    }

    /// The device, its name and ceilings, and no kernels (what the sweep chart needs).
    fn without_kernels(bundle: &Bundle, device: Option<&str>, ceilings: Option<&Ceilings>) -> Self {
        let device = device
            .map(str::to_string)
            .or_else(|| bundle.devices.first().map(|d| d.id.clone()));
        let device_name = device
            .as_deref()
            .and_then(|id| bundle.devices.iter().find(|d| d.id == id))
            .map(|d| d.name.clone())
            .unwrap_or_default();
        let ceilings = ceilings.cloned().unwrap_or_else(|| {
            device
                .as_deref()
                .and_then(|d| bundle.machine_for(d))
                .map(Ceilings::from_machine)
                .unwrap_or_default()
        });
        Analysed {
            device,
            device_name,
            complete: bundle.complete,
            ceilings,
            kernels: Vec::new(),
            top: Vec::new(),
            names: std::sync::OnceLock::new(),
        }
    }

    /// Only the kernels `keep` accepts (a filter, or one kernel isolated); their shares of time
    /// stay shares of the whole, so that a filtered chart keeps its marker sizes.
    pub fn retain(&self, keep: impl Fn(&Kernel) -> bool) -> Self {
        let mut kernels = Vec::new();
        let mut top = Vec::new();
        for a in &self.top {
            let k = &self.kernels[a.index];
            if keep(k) {
                top.push(KernelAnalysis {
                    index: kernels.len(),
                    ..a.clone()
                });
                kernels.push(k.clone());
            }
        }
        Analysed {
            device: self.device.clone(),
            device_name: self.device_name.clone(),
            complete: self.complete,
            ceilings: self.ceilings.clone(),
            kernels,
            top,
            names: std::sync::OnceLock::new(),
        }
    }

    /// Display names of [`Analysed::kernels`] (by index), told apart where shortened names
    /// collide ([`crate::names::disambiguate`]).
    pub fn display_names(&self) -> &[String] {
        self.names.get_or_init(|| {
            let entries: Vec<(String, &str)> = self
                .kernels
                .iter()
                .map(|k| (k.short_name(), k.name.as_str()))
                .collect();
            crate::names::disambiguate(&entries)
        })
    }

    /// The same figures as a [`Report`](crate::report::Report) (for the CSV and JSON rows).
    pub fn report(&self) -> crate::report::Report {
        crate::report::Report {
            kernels: self.kernels.clone(),
            analyses: self.top.clone(),
        }
    }
}

/// The analysis a chart of `bundle` with options `o` draws.
fn analysed(bundle: &Bundle, o: &ChartOptions) -> Analysed {
    Analysed::new(bundle, o.device.as_deref(), o.ceilings.as_ref())
}

fn plot_area(o: &ChartOptions) -> Rect {
    let (l, t, r, b) = MARGIN;
    let panel = if o.side_panel > 0.0 {
        o.side_panel
    } else {
        0.0
    };
    Rect::new(
        l,
        t,
        (o.width - l - r - panel).max(40.0),
        (o.height - t - b).max(40.0),
    )
}

/// An axis over `domain`; an empty `unit` marks a ratio, labelled in plain decimals.
fn axis(domain: (f64, f64), unit: &str, title: &str, project: impl Fn(f64) -> f64) -> Axis {
    Axis {
        title: title.to_string(),
        ticks: log_ticks(domain, unit, 10)
            .into_iter()
            .map(|t| {
                let label = if unit.is_empty() {
                    t.label.map(|_| format_plain(t.value))
                } else {
                    t.label
                };
                (project(t.value), t.major, label)
            })
            .collect(),
    }
}

/// The x axis of the performance-against-intensity charts (hierarchical, sweep).
fn intensity_axis(domain: (f64, f64), vp: &Viewport) -> Axis {
    axis(domain, "", "Arithmetic intensity (FLOP/byte)", |v| {
        vp.x.project(v)
    })
}

/// The y axis of the performance-against-intensity charts (hierarchical, sweep).
fn performance_axis(domain: (f64, f64), vp: &Viewport) -> Axis {
    axis(domain, "FLOP/s", "Performance (FLOP/s)", |v| {
        vp.y.project(v)
    })
}

fn marker_radius(share: f64) -> f64 {
    MARKER_MIN + MARKER_SCALE * share.clamp(0.0, 1.0).sqrt()
}

/// Angle (degrees, SVG clockwise) of the segment from `a` to `b` in pixels.
fn angle(a: (f64, f64), b: (f64, f64)) -> f64 {
    (b.1 - a.1).atan2(b.0 - a.0).to_degrees()
}

fn push_clipped(
    lines: &mut Vec<Line>,
    vp: &Viewport,
    role: LineRole,
    dashed: bool,
    pieces: Vec<Vec<(f64, f64)>>,
) -> Option<(f64, f64, f64, f64)> {
    // Returns the first visible piece's ends in pixels (for labels).
    let mut first = None;
    for piece in pieces {
        if piece.len() < 2 {
            continue;
        }
        let px: Vec<(f64, f64)> = piece.iter().map(|p| vp.project(*p)).collect();
        if first.is_none() {
            let (a, b) = (px[0], px[px.len() - 1]);
            first = Some((a.0, a.1, b.0, b.1));
        }
        lines.push(Line {
            role,
            points: px,
            dashed,
        });
    }
    first
}

fn kernel_summary(k: &Kernel, a: &KernelAnalysis) -> String {
    let mut s = format!(
        "{} in {} launch{} ({:.1}% of time)",
        format_si(a.time_s, "s"),
        k.launches,
        if k.launches == 1 { "" } else { "es" },
        a.share_of_time * 100.0
    );
    if let Some(p) = a.flop_per_s {
        s.push_str(&format!(", {}", format_si(p, "FLOP/s")));
    }
    if let Some(h) = &a.hierarchical {
        s.push_str(&format!(", {}-bound", h.bound.key()));
    }
    if let Some(h) = a.headroom {
        s.push_str(&format!(", headroom {h:.2}×"));
    }
    if let (Some(tb), Some(g)) = (&a.time_bound, a.gap) {
        s.push_str(&format!(
            ", T_bound {} ({} region), T/T_bound {g:.2}",
            format_si(tb.bound_s, "s"),
            tb.region.key()
        ));
    }
    if !a.missing_peaks.is_empty() {
        let names: Vec<&str> = a.missing_peaks.iter().map(|d| d.label()).collect();
        s.push_str(&format!(", no bound: no ceiling for {}", names.join(", ")));
    }
    s
}

fn kernel_brief(a: &KernelAnalysis, time_chart: bool) -> String {
    let mut parts = vec![format!("{:.1}%", a.share_of_time * 100.0)];
    if time_chart {
        parts.push(format_si(a.time_s, "s"));
        if let (Some(tb), Some(g)) = (&a.time_bound, a.gap) {
            parts.push(format!("{} · gap {g:.2}", tb.region.key()));
        }
    } else {
        if let Some(p) = a.flop_per_s {
            parts.push(format_si(p, "FLOP/s"));
        }
        if let Some(h) = &a.hierarchical {
            parts.push(format!("{}-bound", h.bound.key()));
        }
    }
    parts.join(" · ")
}

fn scene_kernels(p: &Analysed, drawn: &[usize], time_chart: bool) -> Vec<SceneKernel> {
    let names = p.display_names();
    drawn
        .iter()
        .enumerate()
        .map(|(rank, &i)| {
            let a = &p.top[i];
            let k = &p.kernels[a.index];
            SceneKernel {
                rank: rank + 1,
                name: names[a.index].clone(),
                full_name: k.name.clone(),
                analysis: a.clone(),
                launches: k.launches,
                summary: kernel_summary(k, a),
                brief: kernel_brief(a, time_chart),
            }
        })
        .collect()
}

fn subtitle(p: &Analysed) -> String {
    let mut s = if p.device_name.is_empty() {
        "no device".to_string()
    } else {
        p.device_name.clone()
    };
    if let Some(d) = &p.device {
        s.push_str(&format!(" (device {d})"));
    }
    if !p.complete {
        s.push_str(" — INCOMPLETE bundle");
    }
    s
}

fn ceiling_label(name: &str, value: f64, unit: &str, theoretical: bool) -> String {
    format!(
        "{name} {}{}",
        format_si(value, unit),
        if theoretical { " (theoretical)" } else { "" }
    )
}

/// The hierarchical roofline (Yang et al. 2020): performance (FLOP/s) against arithmetic
/// intensity (FLOP/byte), log-log; a bandwidth ceiling per memory level up to the top compute
/// roof, a flat roof per datapath; each kernel as one point per level (`AI_l`, `F / T`), joined.
///
/// # Errors
/// [`ChartError::Nothing`] when there are neither ceilings nor kernel points.
pub fn hierarchical(bundle: &Bundle, o: &ChartOptions) -> Result<Scene, ChartError> {
    hierarchical_of(&analysed(bundle, o), o)
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
        .filter(|&i| {
            let a = &p.top[i];
            !a.out_of_range
                && a.flop_per_s.is_some()
                && MemoryLevel::KERNEL_LEVELS
                    .iter()
                    .zip(a.ai)
                    .any(|(l, ai)| ai.is_some() && o.levels.contains(l))
        })
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
    let mut labels = Vec::new();

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
            // Label along the line, a little way in from its visible start.
            let t = 0.08;
            let at = (x0 + (x1 - x0) * t + 4.0, y0 + (y1 - y0) * t - 6.0);
            labels.push(Label {
                text: ceiling_label(l.label(), bw, "B/s", theo),
                at,
                angle_deg: angle((x0, y0), (x1, y1)),
                anchor: Anchor::Start,
                role,
            });
        }
    }
    // Compute roofs, from their ridge with the highest bandwidth to the right edge.
    for &(d, peak, theo) in &roofs {
        let from_bw = top_bw.unwrap_or(peak / dx.0);
        let seg = shapes::compute_roof(peak, from_bw, dx.1);
        let role = LineRole::Compute(d);
        if let Some((_, _, x1, y1)) = push_clipped(
            &mut lines,
            &vp,
            role,
            theo,
            shapes::clip_polyline_loglog(&seg, dx, dy),
        ) {
            labels.push(Label {
                text: ceiling_label(d.label(), peak, "FLOP/s", theo),
                at: (x1 - 4.0, y1 - 5.0),
                angle_deg: 0.0,
                anchor: Anchor::End,
                role,
            });
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

fn device_suffix(p: &Analysed) -> String {
    p.device
        .as_deref()
        .map(|d| format!(" for device {d}"))
        .unwrap_or_default()
}

fn side_panel(o: &ChartOptions) -> Option<Rect> {
    (o.side_panel > 0.0).then(|| {
        let area = plot_area(o);
        Rect::new(
            area.right() + 24.0,
            area.y,
            o.side_panel - 28.0,
            area.height,
        )
    })
}

fn common_notes(p: &Analysed, drawn: usize) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(n) = missing_peaks_note(&p.top) {
        notes.push(n);
    }
    if let Some(n) = out_of_range_note(&p.top, &p.kernels) {
        notes.push(n);
    }
    if p.top.len() > drawn {
        notes.push(format!(
            "{drawn} of {} kernel names drawn (the largest shares of time with a point on this chart)",
            p.top.len()
        ));
    }
    notes
}

/// A note naming the kernels left off because their derived figures leave the range of a
/// double, if any.
pub fn out_of_range_note(analyses: &[KernelAnalysis], kernels: &[Kernel]) -> Option<String> {
    let off: Vec<String> = analyses
        .iter()
        .filter(|a| a.out_of_range)
        .map(|a| kernels[a.index].short_name())
        .collect();
    if off.is_empty() {
        return None;
    }
    let shown: Vec<&str> = off.iter().take(3).map(String::as_str).collect();
    Some(format!(
        "{} kernel{} out of range, kept off the charts: {} figures give FLOP/s, intensities or times beyond what a double holds (check the FLOPs, bytes and times): {}{}",
        off.len(),
        if off.len() == 1 { "" } else { "s" },
        if off.len() == 1 { "its" } else { "their" },
        shown.join(", "),
        if off.len() > 3 { ", …" } else { "" }
    ))
}

/// A note naming the datapaths some kernels ran FLOPs on without a ceiling, if any.
pub fn missing_peaks_note(analyses: &[KernelAnalysis]) -> Option<String> {
    let mut missing: Vec<Datapath> = analyses
        .iter()
        .flat_map(|a| a.missing_peaks.iter().copied())
        .collect();
    missing.sort();
    missing.dedup();
    let n = analyses
        .iter()
        .filter(|a| !a.missing_peaks.is_empty())
        .count();
    (n > 0).then(|| {
        format!(
            "no ceiling for {}: {n} kernel name{} with such FLOPs get no bound",
            missing
                .iter()
                .map(|d| d.label())
                .collect::<Vec<_>>()
                .join(", "),
            if n == 1 { "" } else { "s" }
        )
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

/// [`time_based`] from an analysis already made (`o.device` and `o.ceilings` are not
/// consulted: the analysis has its own).
///
/// # Errors
/// [`ChartError::Nothing`] when there is nothing to draw.
pub fn time_based_of(p: &Analysed, o: &ChartOptions) -> Result<Scene, ChartError> {
    let c = &p.ceilings;
    let bw = c.bandwidth(MemoryLevel::Hbm);
    let drawn: Vec<usize> = (0..p.top.len())
        .filter(|&i| {
            let a = &p.top[i];
            !a.out_of_range
                && a.complexity_flops > 0.0
                && a.complexity_bytes.is_some_and(|b| b > 0.0)
        })
        .take(o.top_kernels)
        .collect();
    if drawn.is_empty() && c.is_empty() {
        return Err(ChartError::Nothing(device_suffix(p)));
    }
    // The datapaths in use among drawn kernels, by their FLOPs; all measured if none.
    let mut in_use: Vec<Datapath> = Vec::new();
    for &i in &drawn {
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
    in_use.sort();

    // Per kernel: the complexity point and the vertex.
    struct Pt {
        si: usize,
        b: f64,
        f: f64,
        vertex: Option<(f64, f64)>,
    }
    let kernels = scene_kernels(p, &drawn, true);
    let pts: Vec<Pt> = kernels
        .iter()
        .enumerate()
        .filter_map(|(si, k)| {
            let a = &k.analysis;
            let b = a.complexity_bytes?;
            let f = a.complexity_flops;
            let vertex = match (a.peak, bw) {
                (Some(pk), Some(bw)) => crate::time_based::time_vertex(a.time_s, f, b, pk, bw),
                _ => None,
            };
            Some(Pt { si, b, f, vertex })
        })
        .collect();
    let mut launch_counts: Vec<u64> = kernels.iter().map(|k| k.launches).collect();
    launch_counts.sort_unstable();
    launch_counts.dedup();
    launch_counts.truncate(4);
    let boxes: Vec<(u64, (f64, f64))> = match (c.launch_overhead_s, bw, in_use.first()) {
        (Some(t), Some(bw), Some(_)) => {
            let peak = in_use.iter().filter_map(|d| c.peak(*d)).fold(0.0, f64::max);
            let ns = if launch_counts.is_empty() {
                vec![1]
            } else {
                launch_counts
            };
            ns.into_iter()
                .map(|n| {
                    #[allow(clippy::cast_precision_loss)]
                    let nf = n as f64;
                    (n, shapes::launch_overhead_box(nf, t, peak, bw))
                })
                .collect()
        }
        _ => Vec::new(),
    };

    let mut xs: Vec<f64> = Vec::new();
    let mut ys: Vec<f64> = Vec::new();
    for pt in &pts {
        xs.push(pt.b);
        ys.push(pt.f);
        if let Some((vb, vf)) = pt.vertex {
            xs.push(vb);
            ys.push(vf);
        }
    }
    for (_, (cb, cf)) in &boxes {
        xs.push(*cb);
        ys.push(*cf);
    }
    if pts.is_empty() {
        // Ceilings only: the plane of kernels taking from a microsecond to a second.
        if let (Some(bw), Some(pk)) = (bw, c.top_peak()) {
            xs.extend([bw * 1e-6, bw]);
            ys.extend([pk * 1e-6, pk]);
        }
    }
    let dx = fit_log_domain(xs.iter().copied(), 0.5).unwrap_or((1e3, 1e12));
    let dy = fit_log_domain(ys.iter().copied(), 0.5).unwrap_or((1e3, 1e15));
    let (dx, dy) = o.domain.unwrap_or((dx, dy));
    let area = plot_area(o);
    let vp = Viewport::new(dx, dy, area).ok_or_else(|| ChartError::Nothing(device_suffix(p)))?;

    let mut lines = Vec::new();
    let mut labels = Vec::new();
    if let Some(bw) = bw {
        for (j, &d) in in_use.iter().enumerate() {
            let Some(pk) = c.peak(d) else { continue };
            let role = LineRole::MachineBalance(d);
            if let Some((x0, y0, x1, y1)) = push_clipped(
                &mut lines,
                &vp,
                role,
                false,
                shapes::machine_balance_line(pk, bw, dx, dy),
            ) {
                // Stagger the labels of parallel lines so that they do not overlap.
                #[allow(clippy::cast_precision_loss)]
                let t = 0.9 - 0.17 * (j % 4) as f64;
                labels.push(Label {
                    text: format!(
                        "{} balance {} FLOP/B",
                        d.label(),
                        format_plain(crate::time_based::machine_balance(pk, bw))
                    ),
                    at: (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t - 6.0),
                    angle_deg: angle((x0, y0), (x1, y1)),
                    anchor: Anchor::End,
                    role,
                });
            }
        }
    }
    let mut last_label_y = f64::INFINITY;
    for (n, corner) in &boxes {
        let role = LineRole::LaunchBox { launches: *n };
        let outline = shapes::launch_box_outline(*corner, dx, dy);
        if outline.len() >= 2 {
            let px: Vec<(f64, f64)> = outline.iter().map(|q| vp.project(*q)).collect();
            let corner_px = vp.project(*corner);
            lines.push(Line {
                role,
                points: px,
                dashed: true,
            });
            // Boxes grow with n; label a box only where it clears the previous label. The label
            // sits inside the box's top edge: at its right end, else at its left end, else not
            // at all, so that it never covers another label.
            if area.contains(corner_px.0, corner_px.1) && last_label_y - corner_px.1 > 14.0 {
                let text = format!(
                    "{n} launch{} × {}",
                    if *n == 1 { "" } else { "es" },
                    format_si(c.launch_overhead_s.unwrap_or(0.0), "s")
                );
                let y = corner_px.1 + 14.0;
                let candidates = [
                    ((corner_px.0 - 4.0, y), Anchor::End),
                    ((area.x + 4.0, y), Anchor::Start),
                ];
                let free = candidates.into_iter().map(|(at, anchor)| Label {
                    text: text.clone(),
                    at,
                    angle_deg: 0.0,
                    anchor,
                    role,
                });
                if let Some(label) = free
                    .filter(|l| {
                        l.corners()
                            .iter()
                            .all(|p| p.0 >= area.x && p.0 <= area.right())
                    })
                    .find(|l| !labels.iter().any(|o| o.overlaps(l)))
                {
                    last_label_y = corner_px.1;
                    labels.push(label);
                }
            }
        }
    }

    let mut markers = Vec::new();
    for pt in &pts {
        let share = kernels[pt.si].analysis.share_of_time;
        let at = vp.project((pt.b, pt.f));
        markers.push(Marker {
            kernel: pt.si,
            kind: MarkerKind::Complexity,
            at,
            data: (pt.b, pt.f),
            radius: marker_radius(share),
        });
        if let Some(v) = pt.vertex {
            let vat = vp.project(v);
            lines.push(Line {
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
    markers.sort_by(|a, b| b.radius.total_cmp(&a.radius));

    let mut legend = Vec::new();
    if !pts.is_empty() {
        legend.push(LegendEntry {
            role: LegendRole::Complexity,
            text: "kernel (B, F): complexity".into(),
        });
        legend.push(LegendEntry {
            role: LegendRole::TimeVertex,
            text: "time vertex (B*, F*): bound = measured T".into(),
        });
    }
    if !boxes.is_empty() {
        legend.push(LegendEntry {
            role: LegendRole::LaunchBox,
            text: "launch-bound box: n × t_launch".into(),
        });
    }
    legend.extend(in_use.iter().map(|d| LegendEntry {
        role: LegendRole::Datapath(*d),
        text: format!("{} balance P/BW (HBM)", d.label()),
    }));

    let mut notes = common_notes(p, drawn.len());
    if bw.is_none() {
        notes.push("no HBM bandwidth ceiling: time vertices and balance lines need one".into());
    }
    let mut regions: Vec<(Region, usize)> = Vec::new();
    for k in &kernels {
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

    Ok(Scene {
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
        labels,
        markers,
        kernels,
        legend,
        notes,
        side_panel: side_panel(o),
    })
}

/// One line of the sweep chart: its (datapath, working set) key and its (intensity, FLOP/s) points.
type SweepSeries = ((Datapath, f64), Vec<(f64, f64)>);

/// The ERT-style sweep of a machine (Empirical Roofline Toolkit, Lo et al., "Roofline Model
/// Toolkit: A Practical Tool for Architectural and Program Analysis", PMBS 2014): achieved
/// performance `F / T` against intensity `F / B`, one line per datapath and working set, with the
/// ceilings drawn as in [`hierarchical`]. Plateaus at each working set's bandwidth show the memory
/// levels; the flat tops show the compute peaks.
///
/// # Errors
/// [`ChartError::Nothing`] when the device's machine has no sweep.
pub fn sweep(bundle: &Bundle, o: &ChartOptions) -> Result<Scene, ChartError> {
    let p = Analysed::without_kernels(bundle, o.device.as_deref(), o.ceilings.as_ref());
    let machine = p.device.as_deref().and_then(|d| bundle.machine_for(d));
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
    series.sort_by(|a, b| {
        (a.0.0, a.0.1)
            .partial_cmp(&(b.0.0, b.0.1))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for (_, pts) in &mut series {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
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
                angle_deg: 0.0,
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
                    c.method == crate::bundle::Method::Theoretical,
                ),
                at: (x1 - 4.0, y1 - 5.0),
                angle_deg: 0.0,
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
        labels,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{
        BandwidthCeiling, ComputeCeiling, DataSource, Device, LaunchOverhead, Machine, Method,
        Provenance,
    };

    fn bundle() -> Bundle {
        let mut b = Bundle::new(Provenance::default());
        b.devices.push(Device::new("0", "test GPU"));
        let bw = |level, value| BandwidthCeiling::new(level, value, Method::Empirical);
        let fp32 = ComputeCeiling::new(Datapath::Fp32, 50e12, Method::Empirical);
        b.machines.push(Machine {
            device: "0".into(),
            bandwidth: vec![bw(MemoryLevel::L2, 10e12), bw(MemoryLevel::Hbm, 2e12)],
            compute: vec![fp32],
            launch_overhead: Some(LaunchOverhead::new(4e-6, Method::Empirical)),
            sweep: vec![],
        });
        // 1 GFLOP, 100 MB at HBM, 200 MB at L2, 1 ms: AI_HBM = 10, AI_L2 = 5, 1 TFLOP/s.
        let mut k = Kernel::new("void gemm<float>(float*)", 1e-3, DataSource::Suite);
        k.flops.fp32 = Some(1e9);
        k.bytes.l2 = Some(2e8);
        k.bytes.hbm = Some(1e8);
        b.kernels.push(k);
        b
    }

    fn close(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() < 1e-6 && (a.1 - b.1).abs() < 1e-6
    }

    #[test]
    fn label_rectangles_overlap_only_when_they_touch() {
        let label = |at, angle_deg, anchor| Label {
            text: "0123456789".into(),
            at,
            angle_deg,
            anchor,
            role: LineRole::MachineBalance(Datapath::Fp32),
        };
        // 10 characters: 66 px wide, 11.55 px tall.
        let a = label((100.0, 100.0), 0.0, Anchor::Start);
        assert!(a.overlaps(&label((160.0, 105.0), 0.0, Anchor::Start)));
        assert!(!a.overlaps(&label((170.0, 100.0), 0.0, Anchor::Start)));
        assert!(!a.overlaps(&label((100.0, 113.0), 0.0, Anchor::Start)));
        assert!(!a.overlaps(&label((100.0, 100.0), 0.0, Anchor::End)));
        assert!(a.overlaps(&label((166.0, 100.0), 0.0, Anchor::End)));
        // Rotated by 90°, the text runs down from its anchor.
        let down = label((130.0, 60.0), 90.0, Anchor::Start);
        assert!(down.overlaps(&a));
        assert!(!label((130.0, 120.0), 90.0, Anchor::Start).overlaps(&a));
    }

    #[test]
    fn one_analysis_feeds_both_charts_and_the_table() {
        let mut b = bundle();
        let mut k = Kernel::new("void copy<float>(float*)", 3e-3, DataSource::Suite);
        k.flops.fp32 = Some(1e6);
        k.bytes.hbm = Some(4e9);
        b.kernels.push(k.clone());
        b.kernels.push(k);
        let o = ChartOptions::default();
        let a = Analysed::new(&b, None, None);
        assert_eq!(a.kernels.len(), 2, "launches are aggregated by name");
        assert_eq!(a.kernels[a.top[0].index].name, "void copy<float>(float*)");
        assert_eq!(hierarchical_of(&a, &o), hierarchical(&b, &o));
        assert_eq!(time_based_of(&a, &o), time_based(&b, &o));
        assert_eq!(
            a.report(),
            crate::report::Report::with_ceilings(&b, Some(&a.ceilings))
        );
        // A filter keeps the kernel's figures, its share of the whole included.
        let only = a.retain(|k| k.name.contains("gemm"));
        assert_eq!(only.top.len(), 1);
        assert_eq!(only.kernels.len(), 1);
        assert_eq!(only.top[0].index, 0);
        let whole = a
            .top
            .iter()
            .find(|x| a.kernels[x.index].name.contains("gemm"));
        assert_eq!(
            only.top[0],
            KernelAnalysis {
                index: 0,
                ..whole.unwrap().clone()
            }
        );
        assert!((only.top[0].share_of_time - 1.0 / 7.0).abs() < 1e-12);
    }

    #[test]
    fn hierarchical_markers_sit_at_their_intensities_and_invert() {
        let s = hierarchical(&bundle(), &ChartOptions::default()).unwrap();
        assert_eq!(s.kernels.len(), 1);
        assert_eq!(s.kernels[0].name, "gemm");
        let hbm = s
            .markers
            .iter()
            .find(|m| m.kind == MarkerKind::Level(MemoryLevel::Hbm))
            .unwrap();
        assert_eq!(hbm.data, (10.0, 1e12));
        assert!(close(hbm.at, s.viewport.project((10.0, 1e12))));
        let back = s.viewport.invert(hbm.at);
        assert!((back.0 / 10.0 - 1.0).abs() < 1e-9 && (back.1 / 1e12 - 1.0).abs() < 1e-9);
        // Both levels are drawn and joined.
        assert_eq!(s.markers.len(), 2);
        assert!(
            s.lines
                .iter()
                .any(|l| l.role == LineRole::KernelLink { kernel: 0 })
        );
    }

    #[test]
    fn hierarchical_ceilings_meet_the_roof_at_the_ridge() {
        let s = hierarchical(&bundle(), &ChartOptions::default()).unwrap();
        let hbm = s
            .lines
            .iter()
            .find(|l| l.role == LineRole::Bandwidth(MemoryLevel::Hbm))
            .unwrap();
        let end = *hbm.points.last().unwrap();
        // The HBM diagonal ends where it meets the FP32 roof: AI = 50e12 / 2e12 = 25.
        assert!(close(end, s.viewport.project((25.0, 50e12))), "{end:?}");
        let roof = s
            .lines
            .iter()
            .find(|l| l.role == LineRole::Compute(Datapath::Fp32))
            .unwrap();
        // The roof starts at the ridge with the highest bandwidth (L2: 50/10 = 5) and runs to
        // the right edge of the plot.
        assert!(close(roof.points[0], s.viewport.project((5.0, 50e12))));
        assert!((roof.points.last().unwrap().0 - s.viewport.area.right()).abs() < 1e-6);
        // Everything drawn stays inside the plot area.
        for l in &s.lines {
            for p in &l.points {
                assert!(
                    p.0 >= s.viewport.area.x - 1e-6 && p.0 <= s.viewport.area.right() + 1e-6,
                    "{l:?}"
                );
            }
        }
        assert!(s.labels.iter().any(|l| l.text == "HBM 2 TB/s"));
        assert!(s.labels.iter().any(|l| l.text == "FP32 50 TFLOP/s"));
        assert!(s.notes.iter().any(|n| n == "binding ceilings: 1 hbm-bound"));
    }

    #[test]
    fn time_based_vertex_and_launch_box() {
        let s = time_based(&bundle(), &ChartOptions::default()).unwrap();
        let point = s
            .markers
            .iter()
            .find(|m| m.kind == MarkerKind::Complexity)
            .unwrap();
        assert_eq!(point.data, (1e8, 1e9));
        let vertex = s
            .markers
            .iter()
            .find(|m| m.kind == MarkerKind::TimeVertex)
            .unwrap();
        // AI = 10 < balance 25: bandwidth side, B* = T × BW = 2e9, F* = B* × AI = 2e10.
        assert!((vertex.data.0 / 2e9 - 1.0).abs() < 1e-12);
        assert!((vertex.data.1 / 2e10 - 1.0).abs() < 1e-12);
        let lb = s
            .lines
            .iter()
            .find(|l| l.role == LineRole::LaunchBox { launches: 1 })
            .unwrap();
        // The box's corner is (n t BW, n t P) = (8e6, 2e8).
        assert!(
            lb.points
                .iter()
                .any(|p| close(*p, s.viewport.project((8e6, 2e8))))
        );
        assert!(s.labels.iter().any(|l| l.text == "FP32 balance 25 FLOP/B"));
    }

    #[test]
    fn a_domain_override_zooms() {
        let o = ChartOptions {
            domain: Some(((1.0, 100.0), (1e11, 1e14))),
            ..ChartOptions::default()
        };
        let s = hierarchical(&bundle(), &o).unwrap();
        assert_eq!(s.viewport.x.domain(), (1.0, 100.0));
        assert_eq!(s.viewport.y.domain(), (1e11, 1e14));
        // The kernel at AI_HBM = 10, 1 TFLOP/s is inside and still where the scales put it.
        let m = s.markers.iter().find(|m| m.data == (10.0, 1e12)).unwrap();
        assert!(close(m.at, s.viewport.project((10.0, 1e12))));
    }

    #[test]
    fn nothing_to_plot_is_an_error_not_a_panic() {
        let mut b = bundle();
        b.machines.clear();
        b.kernels.clear();
        assert!(hierarchical(&b, &ChartOptions::default()).is_err());
        assert!(time_based(&b, &ChartOptions::default()).is_err());
        // Ceilings alone still make a chart.
        let mut c = bundle();
        c.kernels.clear();
        assert!(hierarchical(&c, &ChartOptions::default()).is_ok());
        assert!(time_based(&c, &ChartOptions::default()).is_ok());
    }

    #[test]
    fn sweep_draws_one_line_per_working_set() {
        let mut b = bundle();
        // Test input, not a measurement: two working sets, three intensities each.
        for (ws, bw) in [(1e6_f64, 8e12_f64), (1e9, 2e12)] {
            for fpe in [1.0, 8.0, 64.0] {
                let bytes = ws * 10.0;
                let flops = fpe * bytes / 4.0;
                let time = (bytes / bw).max(flops / 50e12);
                b.machines[0].sweep.push(crate::bundle::SweepPoint {
                    datapath: Datapath::Fp32,
                    working_set_bytes: ws,
                    flops_per_element: fpe,
                    flops,
                    bytes,
                    time_s: time,
                });
            }
        }
        let s = sweep(&b, &ChartOptions::default()).unwrap();
        let series: Vec<_> = s
            .lines
            .iter()
            .filter(|l| matches!(l.role, LineRole::Sweep { .. }))
            .collect();
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].points.len(), 3);
        // The large working set's low-intensity point sits at 2 TB/s × 0.25 FLOP/B.
        let p = series[1].points[0];
        let (x, y) = s.viewport.invert(p);
        assert!(
            (x / 0.25 - 1.0).abs() < 1e-9 && (y / 0.5e12 - 1.0).abs() < 1e-9,
            "{x} {y}"
        );
        assert!(s.labels.iter().any(|l| l.text == "1 GB"));
        let mut empty = bundle();
        empty.machines[0].sweep.clear();
        assert!(sweep(&empty, &ChartOptions::default()).is_err());
    }

    #[test]
    fn the_sweep_chart_without_a_sweep_says_so() {
        let e = sweep(&bundle(), &ChartOptions::default()).unwrap_err();
        assert!(
            e.to_string().contains(
                "this bundle has a machine characterization for device 0 without a sweep"
            ),
            "{e}"
        );
        let mut none = bundle();
        none.machines.clear();
        let e = sweep(&none, &ChartOptions::default()).unwrap_err();
        assert!(
            e.to_string()
                .contains("this bundle has no machine characterization;"),
            "{e}"
        );
    }

    #[test]
    fn kernels_beyond_a_double_are_kept_off_the_charts_with_a_note() {
        let mut b = bundle();
        let mut k = Kernel::new("void huge<1>()", 1e-300, DataSource::Suite);
        k.flops.fp32 = Some(1e308);
        k.bytes.l2 = Some(1.0);
        k.bytes.hbm = Some(1.0);
        b.kernels.push(k);
        crate::validate(&b).unwrap();
        for scene in [
            hierarchical(&b, &ChartOptions::default()).unwrap(),
            time_based(&b, &ChartOptions::default()).unwrap(),
        ] {
            assert_eq!(scene.kernels.len(), 1, "only gemm is drawn");
            assert_eq!(scene.kernels[0].name, "gemm");
            let finite = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite();
            assert!(scene.markers.iter().all(|m| finite(&m.at)));
            assert!(scene.lines.iter().all(|l| l.points.iter().all(finite)));
            assert!(scene.labels.iter().all(|l| finite(&l.at)));
            assert!(
                scene.notes.iter().any(|n| n
                    .starts_with("1 kernel out of range, kept off the charts")
                    && n.ends_with(": huge")),
                "{:?}",
                scene.notes
            );
        }
    }
}
