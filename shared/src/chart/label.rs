//! Text labels in pixel coordinates, the rectangles their text covers (a conservative estimate
//! from the font size and the characters), and their placement, in one place:
//!
//! - a ceiling's label goes to the first of its candidate places along its line that lies in the
//!   plot area clear of every marker and every label placed before it (`Placer`, `along`);
//! - afterwards, the largest kernels' short names ([`kernel_labels`], drawn by the viewer) or
//!   every kernel's rank ([`rank_labels`], drawn by the CLI's SVG beside its list of kernels)
//!   go beside one of their markers, clear of markers, ceiling labels and each other; a kernel
//!   with no free place is left to the hover. Candidate places are tried in a fixed order
//!   (right, left, above, below, then the diagonals) around each of the kernel's markers,
//!   largest marker first, then the same a little farther out; the first free one wins.

use super::{LineRole, Marker, Scene};
use crate::chart::geometry::scale::Rect;

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
    /// The direction its baseline runs, a unit vector `(cos, sin)` of its rotation clockwise
    /// (SVG's y axis points down): `(1, 0)` for level text. Kept as a vector, not an angle, so
    /// that placing labels needs no trigonometry ([`Label::angle_deg`] gives the angle to draw).
    pub direction: (f64, f64),
    /// Horizontal anchor.
    pub anchor: Anchor,
    /// What it labels (for colour).
    pub role: LineRole,
}

/// Font size of chart labels, pixels (`crate::chart::svg` draws them at this size).
pub const LABEL_FONT_PX: f64 = 11.0;
/// Height of a label's text above its baseline, em: the font's ascent (DejaVu Sans: 0.93 em;
/// browsers' text boxes span the font's ascent and descent, whatever the glyphs).
const ASCENT_EM: f64 = 0.95;
/// Depth of a label's text below its baseline, em (DejaVu Sans: 0.24 em; Chromium rounds it
/// to 3 px at 11 px in a standalone SVG).
const DESCENT_EM: f64 = 0.3;

/// The advance of one character, em: an upper bound by class of character for DejaVu Sans
/// (the face browsers fall back to for `sans-serif` on Linux, and among the widest sans-serif
/// faces: Arial, Helvetica and Segoe UI run narrower), with room for a renderer rounding each
/// advance up to a whole pixel at 11 px. Anything outside ASCII counts as a full em.
fn advance_em(c: char) -> f64 {
    match c {
        'm' | 'w' | 'M' | 'W' | '%' | '@' => 1.0,
        c if !c.is_ascii() => 1.0,
        ' ' | '!' | '\'' | '(' | ')' | ',' | '-' | '.' | '/' | ':' | ';' | '[' | '\\' | ']'
        | '|' | 'f' | 'i' | 'j' | 'l' | 'r' | 't' | 'I' | 'J' => 0.45,
        '#' | '&' | '+' | '<' | '=' | '>' | '^' | '~' => 0.87,
        'A'..='Z' => 0.83,
        _ => 0.67,
    }
}

/// The width a label's text covers at [`LABEL_FONT_PX`], pixels: a conservative estimate from
/// its characters (see the browser test that measures every label of every sample).
pub fn text_width(text: &str) -> f64 {
    text.chars().map(advance_em).sum::<f64>() * LABEL_FONT_PX
}

/// How far a label's text reaches above and below its baseline, pixels: `(ascent, descent)`.
pub fn text_height() -> (f64, f64) {
    (ASCENT_EM * LABEL_FONT_PX, DESCENT_EM * LABEL_FONT_PX)
}

/// An axis-aligned box, pixels: (left, top, right, bottom).
pub type Box2 = (f64, f64, f64, f64);

/// A line segment, pixels: its two ends.
pub type Segment = ((f64, f64), (f64, f64));

/// What labels keep clear of besides a scene's markers, ceiling lines and earlier labels: a
/// comparison's rings and faint baseline markers (boxes) and its arrows (segments).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Obstacles {
    /// Boxes, pixels.
    pub boxes: Vec<Box2>,
    /// Segments, pixels.
    pub segments: Vec<Segment>,
}

/// Whether a segment crosses or enters a convex quadrilateral (separating-axis test on the
/// quadrilateral's two edge directions and the segment's normal; touching is not crossing).
fn segment_hits_quad(s: Segment, q: &[(f64, f64); 4]) -> bool {
    let ((x0, y0), (x1, y1)) = s;
    let axes = [
        (q[1].0 - q[0].0, q[1].1 - q[0].1),
        (q[3].0 - q[0].0, q[3].1 - q[0].1),
        (y0 - y1, x1 - x0),
    ];
    axes.iter().all(|&(ax, ay)| {
        if ax == 0.0 && ay == 0.0 {
            return true;
        }
        let (q0, q1) = q
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                let d = p.0 * ax + p.1 * ay;
                (lo.min(d), hi.max(d))
            });
        let (a, b) = (x0 * ax + y0 * ay, x1 * ax + y1 * ay);
        a.min(b) < q1 && q0 < a.max(b)
    })
}

/// The segments of a scene's ceiling lines (every line but the links between a kernel's
/// points), which no label may sit on.
pub(super) fn ceiling_segments(lines: &[super::Line]) -> Vec<Segment> {
    lines
        .iter()
        .filter(|l| !matches!(l.role, LineRole::KernelLink { .. }))
        .flat_map(|l| l.points.windows(2).map(|w| (w[0], w[1])))
        .collect()
}

/// Whether two convex quadrilaterals overlap (separating-axis test; touching is not overlap).
fn quads_overlap(a: &[(f64, f64); 4], b: &[(f64, f64); 4]) -> bool {
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
        let ((a0, a1), (b0, b1)) = (span(a), span(b));
        a0 < b1 && b0 < a1
    })
}

fn box_corners(b: Box2) -> [(f64, f64); 4] {
    [(b.0, b.1), (b.2, b.1), (b.2, b.3), (b.0, b.3)]
}

impl Label {
    /// Level text, running left to right.
    pub const LEVEL: (f64, f64) = (1.0, 0.0);

    /// Its rotation, degrees clockwise (SVG's `rotate()`), from [`Label::direction`].
    pub fn angle_deg(&self) -> f64 {
        self.direction.1.atan2(self.direction.0).to_degrees()
    }

    /// The corners of the rectangle its text covers, pixels: an estimate from its characters
    /// ([`text_width`], [`text_height`]), its anchor and its rotation about `at`.
    pub fn corners(&self) -> [(f64, f64); 4] {
        self.corners_with(0.0)
    }

    /// [`Label::corners`] grown by `pad` pixels on every side.
    fn corners_with(&self, pad: f64) -> [(f64, f64); 4] {
        let w = text_width(&self.text);
        let x0 = match self.anchor {
            Anchor::Start => 0.0,
            Anchor::Middle => -w / 2.0,
            Anchor::End => -w,
        };
        let (ascent, descent) = text_height();
        let (x0, x1, top, bottom) = (x0 - pad, x0 + w + pad, -ascent - pad, descent + pad);
        let (cos, sin) = self.direction;
        [(x0, top), (x1, top), (x1, bottom), (x0, bottom)]
            .map(|(x, y)| (self.at.0 + x * cos - y * sin, self.at.1 + x * sin + y * cos))
    }

    /// Whether the two labels' text rectangles overlap (separating-axis test on the rotated
    /// rectangles of [`Label::corners`]).
    pub fn overlaps(&self, other: &Label) -> bool {
        quads_overlap(&self.corners(), &other.corners())
    }

    /// Whether the label's text rectangle overlaps an axis-aligned box (a marker's, say).
    pub fn overlaps_box(&self, b: Box2) -> bool {
        quads_overlap(&self.corners(), &box_corners(b))
    }

    /// Whether a line segment crosses the label's text rectangle (a ceiling line under it).
    pub fn crosses(&self, s: Segment) -> bool {
        segment_hits_quad(s, &self.corners())
    }
}

/// The box a marker covers, with a pixel of margin.
pub fn marker_box(at: (f64, f64), radius: f64) -> Box2 {
    let r = radius + 1.0;
    (at.0 - r, at.1 - r, at.0 + r, at.1 + r)
}

/// Gap kept between a placed label and a marker or the plot's edge, pixels. Between labels
/// none is needed: the estimate's ascent (the font's) already stands above the capitals.
const GAP: f64 = 1.5;

/// What a label being placed must keep clear of: the plot area's edges, markers, ceiling lines,
/// other obstacles, and the labels placed so far.
pub(super) struct Placer {
    area: Rect,
    markers: Vec<[(f64, f64); 4]>,
    segments: Vec<Segment>,
    placed: Vec<Label>,
}

impl Placer {
    /// A placer over `area` that keeps clear of `markers`, the `segments` of ceiling lines and
    /// `extra` obstacles.
    pub(super) fn new(
        area: Rect,
        markers: &[Marker],
        segments: Vec<Segment>,
        extra: &Obstacles,
    ) -> Self {
        let mut boxes: Vec<[(f64, f64); 4]> = markers
            .iter()
            .map(|m| box_corners(marker_box(m.at, m.radius)))
            .collect();
        boxes.extend(extra.boxes.iter().map(|b| box_corners(*b)));
        let mut segments = segments;
        segments.extend(extra.segments.iter().copied());
        Placer {
            area,
            markers: boxes,
            segments,
            placed: Vec::new(),
        }
    }

    /// Whether `l` lies inside the plot area and clear of every marker, line and placed label.
    fn free(&self, l: &Label) -> bool {
        let c = l.corners_with(GAP);
        let a = self.area;
        c.iter()
            .all(|p| p.0 >= a.x && p.0 <= a.right() && p.1 >= a.y && p.1 <= a.bottom())
            && !self.markers.iter().any(|m| quads_overlap(&c, m))
            && !self.segments.iter().any(|s| segment_hits_quad(*s, &c))
            && !self.placed.iter().any(|o| o.overlaps(l))
    }

    /// Places the first free candidate, or nothing.
    pub(super) fn place_if_free(&mut self, candidates: Vec<Label>) -> Option<Label> {
        let l = candidates.into_iter().find(|l| self.free(l))?;
        self.placed.push(l.clone());
        Some(l)
    }

    /// The labels placed, in order.
    pub(super) fn into_labels(self) -> Vec<Label> {
        self.placed
    }
}

/// One ceiling label's candidate places, best first (`along`).
#[derive(Debug, Clone, PartialEq)]
pub struct LabelCandidates {
    /// The places, best first.
    pub candidates: Vec<Label>,
    /// A ceiling's value is said in a note when no place is free for its label; a launch box's
    /// label is left out without one.
    pub required: bool,
}

/// The start of the note that names the ceilings whose labels found no free place.
pub const CROWDED_NOTE: &str = "no free place on the chart for the label of";

/// Places a scene's ceiling labels ([`Scene::label_candidates`]) where they cover no marker, no
/// ceiling line, nothing of [`Scene::avoid`] and no label placed before them: each at its first
/// free candidate, or nowhere. A required label left out is named in a note
/// (`CROWDED_NOTE`): a crowded or narrow chart says its ceilings' values in words rather than
/// draw one label over another.
pub fn place_ceiling_labels(scene: &mut Scene) {
    let mut placer = Placer::new(
        scene.viewport.area,
        &scene.markers,
        ceiling_segments(&scene.lines),
        &scene.avoid,
    );
    let mut left_out = Vec::new();
    for c in &scene.label_candidates {
        if placer.place_if_free(c.candidates.clone()).is_none()
            && c.required
            && let Some(first) = c.candidates.first()
        {
            left_out.push(first.text.clone());
        }
    }
    scene.labels = placer.into_labels();
    scene.notes.retain(|n| !n.starts_with(CROWDED_NOTE));
    if !left_out.is_empty() {
        scene
            .notes
            .push(format!("{CROWDED_NOTE}: {}", left_out.join(", ")));
    }
}

/// Candidate places for a label along the segment from `a` to `b` (pixels), rotated with it:
/// `first` (the preferred place, if any), then at each fraction of `ts` where the text lies
/// within the segment's length, just above the segment and just below it. `anchor` is the
/// text's anchor at each place.
pub(super) fn along(
    text: &str,
    role: LineRole,
    anchor: Anchor,
    (a, b): ((f64, f64), (f64, f64)),
    first: Option<(f64, f64)>,
    ts: &[f64],
) -> Vec<Label> {
    // The segment's direction, as a unit vector (level for a segment of no length).
    let length = (b.0 - a.0).hypot(b.1 - a.1);
    let direction = if length > 0.0 {
        ((b.0 - a.0) / length, (b.1 - a.1) / length)
    } else {
        Label::LEVEL
    };
    let (cos, sin) = direction;
    // The text's "up", perpendicular to the segment.
    let up = (sin, -cos);
    let (ascent, descent) = text_height();
    let label = |at| Label {
        text: text.to_string(),
        at,
        direction,
        anchor,
        role,
    };
    let on = |t: f64| (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
    let above = descent + 3.0;
    let below = -(ascent + 3.0);
    // The text stays beside its line: no place where it would run past either end (a label
    // floating beyond its roof's start reads as nobody's).
    let w = text_width(text) / length.max(1e-9);
    let fits = |t: f64| match anchor {
        Anchor::Start => t + w <= 1.0,
        Anchor::End => t - w >= 0.0,
        Anchor::Middle => t - w / 2.0 >= 0.0 && t + w / 2.0 <= 1.0,
    };
    let mut out: Vec<Label> = first.into_iter().map(label).collect();
    for &t in ts.iter().filter(|&&t| fits(t)) {
        let p = on(t);
        for off in [above, below] {
            out.push(label((p.0 + up.0 * off, p.1 + up.1 * off)));
        }
    }
    out
}

/// `n` evenly spaced fractions from `from` to `to`, both included.
pub(super) fn fractions(from: f64, to: f64, n: usize) -> Vec<f64> {
    let step = (to - from) / (n.max(2) - 1) as f64;
    (0..n.max(2)).map(|i| from + step * i as f64).collect()
}

// Kernel names and ranks beside their markers.

fn bbox(corners: &[(f64, f64); 4]) -> Box2 {
    corners.iter().fold(
        (
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ),
        |(l, t, r, b), p| (l.min(p.0), t.min(p.1), r.max(p.0), b.max(p.1)),
    )
}

fn intersects(a: Box2, b: Box2) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// The box a label covers (its rotated rectangle's bounding box).
fn label_box(l: &Label) -> Box2 {
    bbox(&l.corners())
}

/// A kernel label's box with 2 px all round (the estimate of [`Label::corners`] is already
/// conservative: the browser test measures every label against it).
fn padded(l: &Label) -> Box2 {
    let (x0, y0, x1, y1) = label_box(l);
    (x0 - 2.0, y0 - 2.0, x1 + 2.0, y1 + 2.0)
}

/// Longest kernel label, characters (a longer short name is cut, with an ellipsis).
pub const MAX_CHARS: usize = 32;

/// Short names for `kernels` (scene indices), cut to [`MAX_CHARS`] and unique: a name shared by
/// several gets `#rank`.
fn unique_names(scene: &Scene, kernels: &[usize]) -> Vec<String> {
    let cuts: Vec<String> = kernels
        .iter()
        .map(|&k| crate::analysis::names::truncate(&scene.kernels[k].name, MAX_CHARS))
        .collect();
    kernels
        .iter()
        .zip(&cuts)
        .map(|(&k, c)| {
            if cuts.iter().filter(|o| *o == c).count() > 1 {
                format!("{c} #{}", scene.kernels[k].rank)
            } else {
                c.clone()
            }
        })
        .collect()
}

/// Labels for the `n` largest kernels of `scene` (by rank: a scene's kernels are in rank order)
/// that have a free place. Each label's `role` is the kernel's [`LineRole::KernelLink`].
pub fn kernel_labels(scene: &Scene, n: usize) -> Vec<Label> {
    let order: Vec<usize> = (0..scene.kernels.len().min(n)).collect();
    let names = unique_names(scene, &order);
    place_beside(scene, &order, names)
}

/// What a `#n` after a kernel's name on the chart means, when one of `labels` has it
/// ([`kernel_labels`] adds the rank to names that are the same once cut).
pub fn kernel_labels_note(labels: &[Label]) -> Option<String> {
    labels
        .iter()
        .any(|l| {
            l.text
                .rsplit_once(" #")
                .is_some_and(|(_, n)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
        .then(|| {
            "#n after a kernel's name: its rank by time, telling apart names that are the same once cut (hover for the full name)".to_string()
        })
}

/// How many kernel names a chart `width` pixels wide has room for: one per 110 pixels of width
/// (at the viewer's 900 pixels, 8), so that a narrow chart names fewer kernels than asked.
pub fn names_for_width(asked: usize, width: f64) -> usize {
    // A chart is a few thousand pixels wide at most.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let room = (width / 110.0).floor().max(1.0) as usize;
    asked.min(room)
}

/// Each kernel's rank (`1`, `2`, …) beside one of its markers, for every kernel of `scene` that
/// has a free place, placed as [`kernel_labels`] places names: what the CLI's SVG draws, whose
/// side panel lists the kernels by rank.
pub fn rank_labels(scene: &Scene) -> Vec<Label> {
    let order: Vec<usize> = (0..scene.kernels.len()).collect();
    let ranks = order
        .iter()
        .map(|&k| scene.kernels[k].rank.to_string())
        .collect();
    place_beside(scene, &order, ranks)
}

/// Places `texts[i]` beside a marker of kernel `order[i]`, in order, each where it covers no
/// marker, no ceiling line or label, nothing of [`Scene::avoid`] and no text placed before it.
fn place_beside(scene: &Scene, order: &[usize], texts: Vec<String>) -> Vec<Label> {
    let area = scene.viewport.area;
    let inside =
        |b: Box2| b.0 >= area.x && b.1 >= area.y && b.2 <= area.right() && b.3 <= area.bottom();
    let mut taken: Vec<Box2> = scene
        .markers
        .iter()
        .map(|m| marker_box(m.at, m.radius))
        .collect();
    taken.extend(scene.avoid.boxes.iter().copied());
    let mut segments = ceiling_segments(&scene.lines);
    segments.extend(scene.avoid.segments.iter().copied());
    let mut out = Vec::new();
    for (&k, text) in order.iter().zip(texts) {
        // Largest first: the scene's markers are in that order.
        let markers: Vec<_> = scene.markers.iter().filter(|m| m.kernel == k).collect();
        // The text's middle is 0.35 em above its baseline.
        let half = LABEL_FONT_PX * 0.35;
        // Next to a marker first, else a little farther out (rings 8 and 16 px wider).
        let places = [0.0, 8.0, 16.0].into_iter().flat_map(|extra| {
            markers.iter().flat_map(move |m| {
                let (x, y, g) = (m.at.0, m.at.1, m.radius + 3.0 + extra);
                [
                    ((x + g, y + half), Anchor::Start),
                    ((x - g, y + half), Anchor::End),
                    ((x, y - g - 4.0), Anchor::Middle),
                    ((x, y + g + LABEL_FONT_PX), Anchor::Middle),
                    ((x + g, y - g), Anchor::Start),
                    ((x - g, y - g), Anchor::End),
                    ((x + g, y + g + LABEL_FONT_PX * 0.6), Anchor::Start),
                    ((x - g, y + g + LABEL_FONT_PX * 0.6), Anchor::End),
                ]
            })
        });
        let placed = places
            .map(|(at, anchor)| Label {
                text: text.clone(),
                at,
                direction: Label::LEVEL,
                anchor,
                role: LineRole::KernelLink { kernel: k },
            })
            .find(|l| {
                let b = padded(l);
                // Ceiling labels turn with their lines: their rotated rectangles, not the boxes
                // around them.
                inside(b)
                    && !taken.iter().any(|t| intersects(*t, b))
                    && !scene.labels.iter().any(|c| c.overlaps_box(b))
                    && !segments
                        .iter()
                        .any(|s| segment_hits_quad(*s, &box_corners(b)))
            });
        if let Some(l) = placed {
            taken.push(padded(&l));
            out.push(l);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::Datapath;
    use crate::chart::{ChartOptions, hierarchical, time_based};

    #[test]
    fn label_rectangles_overlap_only_when_they_touch() {
        let label = |at, direction, anchor| Label {
            text: "0123456789".into(),
            at,
            direction,
            anchor,
            role: LineRole::MachineBalance(Datapath::Fp32),
        };
        // 10 digits: 73.7 px wide; 10.45 px above the baseline, 3.3 px below.
        let a = label((100.0, 100.0), Label::LEVEL, Anchor::Start);
        assert!(a.overlaps(&label((160.0, 105.0), Label::LEVEL, Anchor::Start)));
        assert!(!a.overlaps(&label((175.0, 100.0), Label::LEVEL, Anchor::Start)));
        assert!(!a.overlaps(&label((100.0, 114.0), Label::LEVEL, Anchor::Start)));
        assert!(!a.overlaps(&label((100.0, 100.0), Label::LEVEL, Anchor::End)));
        assert!(a.overlaps(&label((173.0, 100.0), Label::LEVEL, Anchor::End)));
        // Rotated by 90°, the text runs down from its anchor.
        let down = label((130.0, 60.0), (0.0, 1.0), Anchor::Start);
        assert!(down.overlaps(&a));
        assert!(!label((130.0, 120.0), (0.0, 1.0), Anchor::Start).overlaps(&a));
    }

    /// DejaVu Sans's advances at 11 px (hmtx of `DejaVuSans.ttf`, 2048 units per em, summed per
    /// string): the estimate covers them, within a third.
    #[test]
    fn the_width_estimate_covers_dejavu_sans() {
        for (text, dejavu) in [
            ("Tensor FP16 106 TFLOP/s", 139.79),
            ("HBM 829 GB/s", 78.8),
            ("FP64 7.8 TFLOP/s (theoretical)", 166.71),
            ("MWmw%@", 61.53),
            ("implicit_convolve_sgemm", 141.52),
            ("1 launch × 4.5 µs", 97.18),
        ] {
            let w = text_width(text);
            assert!(
                w >= dejavu && w <= dejavu * 1.34,
                "{text}: {w} for {dejavu}"
            );
        }
        // The font's ascent and descent (0.93 and 0.24 em).
        let (ascent, descent) = text_height();
        assert!(ascent >= 0.93 * LABEL_FONT_PX && descent >= 0.24 * LABEL_FONT_PX);
    }

    fn marker(at: (f64, f64)) -> Marker {
        Marker {
            kernel: 0,
            kind: super::super::MarkerKind::Complexity,
            at,
            data: (1.0, 1.0),
            radius: 6.0,
        }
    }

    #[test]
    fn a_label_moves_along_its_line_off_a_marker() {
        let area = Rect::new(0.0, 0.0, 400.0, 300.0);
        let role = LineRole::Compute(Datapath::Fp32);
        let line = ((50.0, 100.0), (390.0, 100.0));
        let cands = |first| {
            along(
                "FP32 14 TFLOP/s",
                role,
                Anchor::End,
                line,
                first,
                &fractions(1.0, 0.3, 8),
            )
        };
        // Free: the preferred place.
        let mut p = Placer::new(area, &[], Vec::new(), &Obstacles::default());
        let l = p.place_if_free(cands(Some((386.0, 95.0)))).unwrap();
        assert_eq!(l.at, (386.0, 95.0));
        // A marker on it: the label moves, and keeps clear of it.
        let m = marker((350.0, 92.0));
        let mut p = Placer::new(
            area,
            std::slice::from_ref(&m),
            Vec::new(),
            &Obstacles::default(),
        );
        let l = p.place_if_free(cands(Some((386.0, 95.0)))).unwrap();
        assert_ne!(l.at, (386.0, 95.0));
        assert!(!l.overlaps_box(marker_box(m.at, m.radius)));
        assert!(l.corners().iter().all(|c| area.contains(c.0, c.1)));
        // A second label on the same line keeps clear of the first.
        let l2 = p.place_if_free(cands(Some((386.0, 95.0)))).unwrap();
        assert!(!l2.overlaps(&l));
        // Nowhere free: nothing, never a label over a marker.
        let crowd: Vec<Marker> = (0..40)
            .flat_map(|i| (0..30).map(move |j| marker((f64::from(i) * 10.0, f64::from(j) * 10.0))))
            .collect();
        let mut p = Placer::new(area, &crowd, Vec::new(), &Obstacles::default());
        assert!(p.place_if_free(cands(Some((386.0, 95.0)))).is_none());
        // A line under the preferred place moves the label off it.
        let mut p = Placer::new(
            area,
            &[],
            vec![((300.0, 80.0), (390.0, 99.0))],
            &Obstacles::default(),
        );
        let l = p.place_if_free(cands(Some((386.0, 95.0)))).unwrap();
        assert_ne!(l.at, (386.0, 95.0));
        assert!(!l.crosses(((300.0, 80.0), (390.0, 99.0))));
    }

    #[test]
    fn candidates_follow_a_rotated_line_on_both_sides() {
        let role = LineRole::Bandwidth(crate::bundle::MemoryLevel::Hbm);
        let c = along(
            "HBM",
            role,
            Anchor::Start,
            ((0.0, 100.0), (100.0, 0.0)),
            None,
            &[0.5],
        );
        assert_eq!(c.len(), 2);
        assert!((c[0].angle_deg() + 45.0).abs() < 1e-9);
        // Above the line (up and left of its midpoint), then below it.
        assert!(c[0].at.0 < 50.0 && c[0].at.1 < 50.0, "{:?}", c[0].at);
        assert!(c[1].at.0 > 50.0 && c[1].at.1 > 50.0, "{:?}", c[1].at);
        assert_eq!(fractions(0.0, 1.0, 5), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    }

    fn example() -> crate::Bundle {
        crate::parse_bundle(include_str!(
            "../../../tests/fixtures/bundles/v100-deepcam-example.json"
        ))
        .unwrap()
    }

    #[test]
    fn labels_keep_clear_of_markers_ceiling_labels_and_each_other() {
        let b = example();
        for o in [ChartOptions::browser(), ChartOptions::default()] {
            for scene in [hierarchical(&b, &o).unwrap(), time_based(&b, &o).unwrap()] {
                let labels = kernel_labels(&scene, 8);
                assert!(labels.len() >= 3, "{} labels", labels.len());
                for (i, l) in labels.iter().enumerate() {
                    let lb = label_box(l);
                    for m in &scene.markers {
                        assert!(
                            !intersects(lb, marker_box(m.at, m.radius)),
                            "{} on a marker",
                            l.text
                        );
                    }
                    for c in &scene.labels {
                        assert!(!l.overlaps(c), "{} on {}", l.text, c.text);
                    }
                    for o in &labels[i + 1..] {
                        assert!(!l.overlaps(o), "{} on {}", l.text, o.text);
                    }
                }
                let texts: Vec<&str> = labels.iter().map(|l| l.text.as_str()).collect();
                let mut unique = texts.clone();
                unique.sort_unstable();
                unique.dedup();
                assert_eq!(unique.len(), texts.len(), "{texts:?}");
            }
        }
    }

    #[test]
    fn every_rank_of_the_example_finds_a_place_at_the_cli_size() {
        let b = example();
        let o = ChartOptions::default();
        for scene in [hierarchical(&b, &o).unwrap(), time_based(&b, &o).unwrap()] {
            let ranks = rank_labels(&scene);
            let texts: Vec<&str> = ranks.iter().map(|l| l.text.as_str()).collect();
            assert_eq!(
                texts.len(),
                scene.kernels.len(),
                "{}: {texts:?}",
                scene.title
            );
            for (i, l) in ranks.iter().enumerate() {
                assert!(
                    scene
                        .markers
                        .iter()
                        .all(|m| !l.overlaps_box(marker_box(m.at, m.radius)))
                );
                assert!(
                    scene
                        .labels
                        .iter()
                        .chain(&ranks[i + 1..])
                        .all(|o| !l.overlaps(o))
                );
                // Beside a marker of its own kernel, within the widest ring.
                let k = scene
                    .kernels
                    .iter()
                    .position(|k| k.rank.to_string() == l.text);
                let near = scene
                    .markers
                    .iter()
                    .filter(|m| Some(m.kernel) == k)
                    .any(|m| {
                        (m.at.0 - l.at.0).hypot(m.at.1 - l.at.1)
                            < m.radius + 3.0 + 16.0 + 2.0 * LABEL_FONT_PX
                    });
                assert!(near, "{} far from its kernel", l.text);
            }
        }
    }

    #[test]
    fn no_labels_when_none_asked() {
        let scene = hierarchical(&example(), &ChartOptions::browser()).unwrap();
        assert!(kernel_labels(&scene, 0).is_empty());
    }
}
