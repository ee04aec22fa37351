//! Names on the chart: the largest kernels of a [`Scene`] labelled with their short names, each
//! placed beside one of its markers where it covers no marker, no ceiling label and no other
//! kernel label; a kernel with no free place is left to the hover.
//!
//! Candidate places are tried in a fixed order (right, left, above, below, then the diagonals)
//! around each of the kernel's markers, largest marker first, then the same a little farther
//! out; the first free one wins. Text extents are the conservative estimate of [`Label::corners`].

use crate::chart::{Anchor, LABEL_FONT_PX, Label, LineRole, Scene};

pub use crate::chart::{Box2, marker_box};

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
pub fn label_box(l: &Label) -> Box2 {
    bbox(&l.corners())
}

/// A kernel label's box with 2 px all round (the estimate of [`Label::corners`] is already
/// conservative: the browser test measures every label against it).
fn padded(l: &Label) -> Box2 {
    let (x0, y0, x1, y1) = label_box(l);
    (x0 - 2.0, y0 - 2.0, x1 + 2.0, y1 + 2.0)
}

/// Longest label, characters (a longer short name is cut, with an ellipsis).
pub const MAX_CHARS: usize = 24;

/// Short names for `kernels` (scene indices), cut to [`MAX_CHARS`] and unique: a name shared by
/// several gets `#rank`.
fn unique_names(scene: &Scene, kernels: &[usize]) -> Vec<String> {
    let cuts: Vec<String> = kernels
        .iter()
        .map(|&k| crate::names::truncate(&scene.kernels[k].name, MAX_CHARS))
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

/// Labels for the `n` largest kernels of `scene` (by rank) that have a free place. Each label's
/// `role` is the kernel's [`LineRole::KernelLink`].
pub fn kernel_labels(scene: &Scene, n: usize) -> Vec<Label> {
    let mut order: Vec<usize> = (0..scene.kernels.len()).collect();
    order.sort_by_key(|&k| scene.kernels[k].rank);
    order.truncate(n);
    let names = unique_names(scene, &order);
    place(scene, &order, names)
}

/// Each kernel's rank (`1`, `2`, …) beside one of its markers, for every kernel of `scene` that
/// has a free place, placed as [`kernel_labels`] places names: what the CLI's SVG draws, whose
/// side panel lists the kernels by rank.
pub fn rank_labels(scene: &Scene) -> Vec<Label> {
    let mut order: Vec<usize> = (0..scene.kernels.len()).collect();
    order.sort_by_key(|&k| scene.kernels[k].rank);
    let ranks = order
        .iter()
        .map(|&k| scene.kernels[k].rank.to_string())
        .collect();
    place(scene, &order, ranks)
}

/// Places `texts[i]` beside a marker of kernel `order[i]`, in order, each where it covers no
/// marker, no ceiling label and no text placed before it.
fn place(scene: &Scene, order: &[usize], texts: Vec<String>) -> Vec<Label> {
    let area = scene.viewport.area;
    let inside =
        |b: Box2| b.0 >= area.x && b.1 >= area.y && b.2 <= area.right() && b.3 <= area.bottom();
    let mut taken: Vec<Box2> = scene
        .markers
        .iter()
        .map(|m| marker_box(m.at, m.radius))
        .collect();
    let mut out = Vec::new();
    for (&k, text) in order.iter().zip(texts) {
        let mut markers: Vec<_> = scene.markers.iter().filter(|m| m.kernel == k).collect();
        markers.sort_by(|a, b| b.radius.total_cmp(&a.radius));
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
                angle_deg: 0.0,
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
    use crate::chart::{ChartOptions, hierarchical, time_based};

    fn example() -> crate::Bundle {
        crate::parse_bundle(include_str!(
            "../../tests/fixtures/bundles/v100-deepcam-example.json"
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
