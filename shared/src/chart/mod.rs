//! Chart scenes: everything a roofline chart shows, in pixel coordinates, computed once here.
//!
//! [`hierarchical`] and [`time_based`] turn a bundle into a [`Scene`]: axes with ticks, ceiling
//! lines with their labels, kernel markers and the links between them, and a legend. One
//! renderer, [`crate::chart::svg`], turns a scene into SVG markup for the CLI's export and the viewer
//! alike; neither computes a figure. The
//! scene keeps its [`Viewport`] so that a pointer position can be turned back into data (hover).
//!
//! This module holds the scene types, the palette ([`style`]) and what the charts share (plot
//! area, axes, notes); `scene_kernels.rs` each drawn kernel's lines of figures; `label.rs` the
//! text labels' geometry and every label's placement (ceilings along their lines, then kernel
//! names or ranks beside their markers: [`kernel_labels`], [`rank_labels`]); `hierarchical.rs`,
//! `time.rs` and `sweep.rs` one chart each; [`overlay`] a comparison's baseline points and
//! arrows. [`svg`] draws a scene, for the CLI and the viewer alike; [`standalone`] is the one
//! standalone page; [`view`] the viewer's view state and URL query; [`geometry`] the scales,
//! ticks and shapes in data space.
//!
//! Architecture invariant: this floor draws what the analysis floor computes and computes no
//! figure of its own beyond placing it.

mod comm;
pub mod geometry;
mod hierarchical;
mod label;
pub mod overlay;
mod scene_kernels;
pub mod standalone;
pub mod svg;
mod sweep;
mod time;
pub mod view;

use crate::analysis::Analysed;
pub use comm::{communication, roof_links};
pub use hierarchical::{hierarchical, hierarchical_of};
pub use label::{
    Anchor, Box2, LABEL_FONT_PX, Label, LabelCandidates, MAX_CHARS, Obstacles, Segment,
    kernel_labels, kernel_labels_note, marker_box, names_for_width, place_ceiling_labels,
    rank_labels, text_height, text_width,
};
pub use sweep::sweep;
pub use time::{time_based, time_based_of};

/// Whether an analysis should open on the time-based chart rather than the hierarchical one
/// (the default): the hierarchical chart would have nothing to draw (no ceilings, no kernel with
/// FLOPs and bytes at one of `levels`) and the time-based one has a kernel point, as for a
/// torch.profiler trace imported without counters or a machine (analytical F and B and measured
/// times, no bytes per memory level). The viewer opens such a bundle on the time-based chart,
/// and `roofline plot` without `--chart` draws it.
pub fn prefers_time_based(p: &Analysed, levels: &[MemoryLevel]) -> bool {
    p.ceilings.is_empty()
        && !p.top.iter().any(|a| hierarchical::has_point(a, levels))
        && p.top.iter().any(time::has_point)
}

use crate::analysis::KernelAnalysis;
use crate::analysis::ceilings::Ceilings;
use crate::analysis::si::{format_plain, format_si};
use crate::bundle::{CollectiveKind, Datapath, Kernel, LinkKind, MemoryLevel};
use crate::chart::geometry::scale::{Rect, Viewport};
use crate::chart::geometry::ticks::log_ticks;

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

    /// The viewer's layout for the width its page gives the chart, pixels: drawn at that size
    /// (not scaled, so that its text keeps its size at any width: 11 px labels at 500 pixels as
    /// at 1400), whole pixels from [`MIN_WIDTH`] up; the height follows the width (0.62 of
    /// it, [`ChartOptions::browser`]'s 560 at 900), between 420 and 640 pixels (a narrow chart
    /// is taller than wide a ratio would make it, to keep room for its points).
    pub fn browser_sized(width: f64) -> Self {
        let width = if width.is_finite() {
            width.max(MIN_WIDTH).floor()
        } else {
            900.0
        };
        ChartOptions {
            width,
            height: (width * 0.62).clamp(420.0, 640.0).round(),
            ..Self::browser()
        }
    }
}

/// The narrowest chart the viewer draws, pixels (a narrower page scrolls).
pub const MIN_WIDTH: f64 = 320.0;

/// Why a chart cannot be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChartError {
    /// No ceiling and no kernel point.
    #[error(
        "nothing to plot: the bundle has no ceilings{0} and no kernel with FLOPs and bytes; a torch.profiler trace gives F and B when recorded with record_shapes=True, and ceilings come from its GPU's datasheet (`--ceilings datasheet:NAME`, `roofline catalogue`) or from `roofline machine` on the GPU"
    )]
    Nothing(String),
    /// The communication chart on a bundle without a collective to place.
    #[error(
        "nothing to plot: the communication chart places each collective's bus bandwidth against its size, and this bundle has {0}; a torch.profiler trace of a distributed run gives them (docs/pytorch.md)"
    )]
    NoCollectives(String),
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
    /// Time-based plane: the top edge of the band along the bottom where kernels with F = 0
    /// (no arithmetic) are drawn at their B.
    ZeroBand,
    /// The communication chart: a link's bandwidth, a flat roof.
    Link(LinkKind),
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

/// What a marker shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerKind {
    /// A kernel at one memory level (hierarchical chart).
    Level(MemoryLevel),
    /// A kernel's complexity point (B, F) (time-based chart).
    Complexity,
    /// A kernel's time vertex (B*, F*) (time-based chart).
    TimeVertex,
    /// A collective launch at (size, bus bandwidth) (communication chart).
    Collective(CollectiveKind),
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
    /// The kernel's path to the ceiling that binds it, drawn on hover; `None` when it has no
    /// bound or the chart does not show the point it starts from.
    pub bound_path: Option<BoundPath>,
}

/// A kernel's path to the ceiling that binds it, pixels. On the hierarchical chart, straight up
/// from its point at the binding level (its highest drawn level when compute-bound: any level's
/// point lies under the roof there) to its attainable performance, which lies on the binding
/// ceiling (`F / T_floor = BW_l × AI_l` for a bandwidth-bound kernel, the roof of its precision
/// mix for a compute-bound one; Yang et al. 2020); on the time-based chart, from its complexity
/// point to its time vertex (Wang et al. 2020).
#[derive(Debug, Clone, PartialEq)]
pub struct BoundPath {
    /// Where the path starts: the kernel's point.
    pub from: (f64, f64),
    /// Where it ends, on the binding ceiling (kept inside the plot area).
    pub to: (f64, f64),
    /// What the path says: the binding ceiling by name and how far the kernel is from it.
    pub text: String,
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
    /// The band of kernels with F = 0.
    ZeroBand,
    /// A series of the sweep.
    Sweep {
        /// Series number.
        series: usize,
    },
    /// A comparison's arrow, from a kernel's baseline point to its current one.
    Arrow,
    /// A comparison's faint marker where a kernel's baseline point was.
    Baseline,
    /// A comparison's kernel only in the current run (a thick ring).
    New,
    /// A comparison's kernel gone since the baseline (a dashed ring where it was).
    Gone,
    /// A link's roof (communication chart).
    Link(LinkKind),
    /// A collective's markers (communication chart).
    Collective(CollectiveKind),
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
    /// Ceiling labels, placed ([`place_ceiling_labels`]) from [`Scene::label_candidates`].
    pub labels: Vec<Label>,
    /// Each ceiling label's candidate places, in the order they are placed.
    pub label_candidates: Vec<LabelCandidates>,
    /// What labels keep clear of besides the scene's own markers, lines and labels: a
    /// comparison's arrows and rings ([`crate::chart::overlay::compare_scene`] sets them).
    pub avoid: Obstacles,
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

/// The chart's colours (hues of the Okabe–Ito palette, readable by colour-blind readers), which
/// [`crate::chart::svg`] writes as presentation attributes, so that a page's CSS can override them: the
/// viewer's dark theme maps each colour to its counterpart in [`style::DARK`] ([`style::dark_css`]).
///
/// Every colour a line or a label is drawn in has a contrast ratio of at least 4.5:1 against the
/// chart's background in both themes (WCAG 2.1 success criterion 1.4.3, AA for text; the ratio
/// is `(L1 + 0.05) / (L2 + 0.05)` of the relative luminances, WCAG 2.1's definition), so that a
/// ceiling's label, drawn in its line's colour, is as readable as the line; the browser tests
/// measure it on the page, and the unit tests here compute it.
pub mod style {
    use super::{
        CollectiveKind, Datapath, LegendRole, LineRole, LinkKind, MarkerKind, MemoryLevel,
    };

    /// The chart's background (the light theme).
    pub const BACKGROUND: &str = "#ffffff";
    /// The chart's background in the dark theme ([`DARK`] maps [`BACKGROUND`] to it).
    pub const DARK_BACKGROUND: &str = "#1e2126";
    /// Titles and axis titles.
    pub const TEXT: &str = "#111111";
    /// Kernel names on the chart.
    pub const LABEL: &str = "#222222";
    /// The axes, their ticks and labels, the plot's frame.
    pub const AXIS: &str = "#333333";
    /// Arrows of a comparison.
    pub const ARROW: &str = "#444444";
    /// Subtitles and notes.
    pub const MUTED: &str = "#555555";
    /// Grid lines.
    pub const GRID: &str = "#e4e4e4";
    /// The line joining a kernel's points.
    pub const LINK: &str = "#888888";

    /// The colour of a memory level.
    pub fn level(l: MemoryLevel) -> &'static str {
        match l {
            MemoryLevel::L1 => "#0072B2",
            MemoryLevel::Shared => "#177AB2",
            MemoryLevel::L2 => "#008460",
            MemoryLevel::Hbm => "#BE5400",
            MemoryLevel::HostLink => "#6E6E6E",
        }
    }

    /// The colour of a compute roof.
    pub fn datapath(d: Datapath) -> &'static str {
        match d {
            Datapath::Fp64 => "#000000",
            Datapath::Fp32 => "#3D3D3D",
            Datapath::Fp16 => "#5E5E5E",
            Datapath::Bf16 => "#757575",
            Datapath::TensorFp16 => "#BB4D8A",
            Datapath::TensorBf16 => "#AA4499",
            Datapath::TensorTf32 => "#882255",
            Datapath::TensorFp8 => "#9C6C00",
            Datapath::TensorInt8 => "#787828",
            Datapath::TensorFp64 => "#332288",
        }
    }

    /// The launch-overhead box.
    const LAUNCH_BOX: &str = "#9C6C00";

    /// The colour of a line.
    pub fn line(r: LineRole) -> &'static str {
        match r {
            LineRole::Bandwidth(l) => level(l),
            LineRole::Compute(d) | LineRole::MachineBalance(d) => datapath(d),
            LineRole::LaunchBox { .. } => LAUNCH_BOX,
            LineRole::KernelLink { .. } => LINK,
            LineRole::Sweep { series } => SWEEP[series % SWEEP.len()],
            LineRole::ZeroBand => MUTED,
            LineRole::Link(l) => link(l),
        }
    }

    /// The colour of a link's roof.
    pub fn link(l: LinkKind) -> &'static str {
        match l {
            LinkKind::Nvlink => "#008460",
            LinkKind::Pcie => "#6E6E6E",
            LinkKind::Network => "#BE5400",
        }
    }

    /// The colour of a collective's markers.
    pub fn collective(k: CollectiveKind) -> &'static str {
        match k {
            CollectiveKind::AllReduce => "#0072B2",
            CollectiveKind::AllGather => "#AA4499",
            CollectiveKind::ReduceScatter => "#882255",
            CollectiveKind::AllToAll => "#9C6C00",
            CollectiveKind::Broadcast => "#5E8A00",
            CollectiveKind::Reduce => "#332288",
            CollectiveKind::SendRecv => "#A0391B",
            CollectiveKind::Gather | CollectiveKind::Scatter | CollectiveKind::Other => "#3D3D3D",
        }
    }

    /// Colours of the sweep's series (a sequential palette: small to large working sets).
    const SWEEP: [&str; 8] = [
        "#0072B2", "#3989C2", "#177AB2", "#008460", "#5E8A00", "#9C6C00", "#BE5400", "#A0391B",
    ];

    /// The colour of a marker.
    pub fn marker(k: MarkerKind) -> &'static str {
        match k {
            MarkerKind::Level(l) => level(l),
            MarkerKind::Complexity => "#0072B2",
            MarkerKind::TimeVertex => "#BE5400",
            MarkerKind::Collective(c) => collective(c),
        }
    }

    /// The colour of a legend swatch.
    pub fn legend(r: LegendRole) -> &'static str {
        match r {
            LegendRole::Level(l) => level(l),
            LegendRole::Datapath(d) => datapath(d),
            LegendRole::Complexity => marker(MarkerKind::Complexity),
            LegendRole::TimeVertex => marker(MarkerKind::TimeVertex),
            LegendRole::LaunchBox => LAUNCH_BOX,
            LegendRole::ZeroBand => MUTED,
            LegendRole::Sweep { series } => line(LineRole::Sweep { series }),
            LegendRole::Arrow | LegendRole::New | LegendRole::Gone => ARROW,
            LegendRole::Baseline => LINK,
            LegendRole::Link(l) => link(l),
            LegendRole::Collective(c) => collective(c),
        }
    }

    /// Every colour the renderer writes, with its counterpart in the dark theme: each at least
    /// 4.5:1 against [`DARK_BACKGROUND`] (the background and halos become the dark background,
    /// grid lines a faint line on it), each hue kept.
    pub const DARK: [(&str, &str); 26] = [
        (BACKGROUND, DARK_BACKGROUND),
        (TEXT, "#e8e8e8"),
        (LABEL, "#e0e0e0"),
        (AXIS, "#c8c8c8"),
        (ARROW, "#bbbbbb"),
        (MUTED, "#aaaaaa"),
        (GRID, "#33373e"),
        (LINK, "#9a9a9a"),
        ("#0072B2", "#3DA5F0"),
        ("#177AB2", "#56B4E9"),
        ("#008460", "#00B383"),
        ("#BE5400", "#F07A2A"),
        ("#6E6E6E", "#B0B0B0"),
        ("#000000", "#F2F2F2"),
        ("#3D3D3D", "#C8C8C8"),
        ("#5E5E5E", "#A3A3A3"),
        ("#757575", "#8A8A8A"),
        ("#BB4D8A", "#CC79A7"),
        ("#AA4499", "#C46AB5"),
        ("#882255", "#D75F9B"),
        ("#9C6C00", "#E69F00"),
        ("#787828", "#B5B54A"),
        ("#332288", "#8C7CDE"),
        ("#3989C2", "#5FA8DD"),
        ("#5E8A00", "#8DC21F"),
        ("#A0391B", "#E0714F"),
    ];

    /// A colour's counterpart in the dark theme ([`DARK`]); itself when it has none.
    pub fn dark(colour: &str) -> &str {
        DARK.iter()
            .find(|(light, _)| light.eq_ignore_ascii_case(colour))
            .map_or(colour, |(_, d)| d)
    }

    /// The dark theme as CSS rules for the elements under `scope` (`.app.dark .chart`): each
    /// colour of [`DARK`] written as a presentation attribute (`fill`, `stroke`) replaced by its
    /// counterpart. A rule of a page's CSS wins over a presentation attribute (SVG 2, § 6.6).
    pub fn dark_css(scope: &str) -> String {
        let mut css = String::new();
        for (light, dark) in DARK {
            for property in ["fill", "stroke"] {
                css.push_str(&format!(
                    "{scope} [{property}=\"{light}\" i] {{ {property}: {dark}; }}\n"
                ));
            }
        }
        css
    }

    /// The contrast ratio of two colours written `#rrggbb`, `(L1 + 0.05) / (L2 + 0.05)` of their
    /// relative luminances, the lighter first (WCAG 2.1, "contrast ratio" and "relative
    /// luminance": sRGB channels linearised, weighted 0.2126, 0.7152, 0.0722). `None` for a
    /// colour in another form.
    pub fn contrast(a: &str, b: &str) -> Option<f64> {
        let (la, lb) = (luminance(a)?, luminance(b)?);
        let (hi, lo) = if la > lb { (la, lb) } else { (lb, la) };
        Some((hi + 0.05) / (lo + 0.05))
    }

    /// The relative luminance of `#rrggbb` (WCAG 2.1).
    fn luminance(c: &str) -> Option<f64> {
        let hex = c.strip_prefix('#').filter(|h| h.len() == 6)?;
        let channel = |i: usize| {
            let v = f64::from(u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()?) / 255.0;
            Some(if v <= 0.03928 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            })
        };
        Some(0.2126 * channel(0)? + 0.7152 * channel(2)? + 0.0722 * channel(4)?)
    }
}

/// Margins around the plotting area: left (y tick labels and title), top (title), right (half
/// of the last x tick label, e.g. `100 GB`), bottom (x tick labels, title, notes).
const MARGIN: (f64, f64, f64, f64) = (100.0, 56.0, 36.0, 96.0);
/// Marker radius: `MIN + SCALE × sqrt(share of time)`, so that area grows with the share.
const MARKER_MIN: f64 = 3.0;
const MARKER_SCALE: f64 = 10.0;

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

/// Sorts markers largest first (stably), so that small ones are drawn last and stay visible:
/// one sort shared by the charts.
fn largest_markers_first(markers: &mut [Marker]) {
    crate::analysis::kernel::sort_slice_by(markers, |a, b| b.radius.total_cmp(&a.radius));
}

/// Sorts points by their x (stably): one sort shared by the charts.
fn sort_by_x(points: &mut [(f64, f64)]) {
    crate::analysis::kernel::sort_slice_by(points, |a, b| a.0.total_cmp(&b.0));
}

fn marker_radius(share: f64) -> f64 {
    MARKER_MIN + MARKER_SCALE * share.clamp(0.0, 1.0).sqrt()
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

/// A ceiling's label: its name and figure, and where the figure comes from unless measured
/// (`HBM 3.35 TB/s (datasheet)`, `FP32 15.7 TFLOP/s (theoretical)`).
fn ceiling_label(name: &str, value: f64, unit: &str, source: Option<&str>) -> String {
    format!(
        "{name} {}{}",
        format_si(value, unit),
        source.map(|s| format!(" ({s})")).unwrap_or_default()
    )
}

/// The word a ceiling's label carries ([`ceiling_label`]): its [`CeilingSource`] unless
/// measured; for a what-if value (no pick), `theoretical` when it is one.
///
/// [`CeilingSource`]: crate::analysis::ceilings::CeilingSource
fn source_word(
    pick: Option<crate::analysis::ceilings::Pick>,
    theoretical: bool,
) -> Option<&'static str> {
    use crate::analysis::ceilings::CeilingSource;
    match pick.map(|p| p.source) {
        Some(CeilingSource::Measured) => None,
        Some(s) => Some(s.key()),
        None => theoretical.then_some("theoretical"),
    }
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
    if let Some(w) = p.ceilings.origin_words() {
        notes.push(format!("ceilings: {w}"));
    }
    if let Some(n) = missing_peaks_note(&p.top) {
        notes.push(n);
    }
    if let Some(n) = out_of_range_note(&p.top, &p.kernels) {
        notes.push(n);
    }
    if p.top.len() > drawn {
        notes.push(format!(
            "{drawn} of {} kernels plotted: the largest by share of time with a point on this chart",
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
    crate::analysis::kernel::sort_slice_by(&mut missing, Ord::cmp);
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

#[cfg(test)]
pub(crate) mod tests;
