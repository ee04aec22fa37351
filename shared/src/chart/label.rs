//! Text labels in pixel coordinates and the rectangles their text covers (an estimate from the
//! font size and the character count), to keep labels apart.

use super::LineRole;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::Datapath;

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
}
