//! Line clipping against axis-aligned boxes (Liang–Barsky).
//!
//! Y.-D. Liang and B. A. Barsky, "A new concept and method for line clipping", ACM Transactions
//! on Graphics 3(1), 1984. The segment `p0 + t (p1 - p0)`, `t ∈ [0, 1]`, is intersected with
//! the four half-planes of the box; what remains is a single parameter interval `[t0, t1]`.
//!
//! The functions work in any 2D coordinate space (pixels, or log10 data for log-log charts, see
//! [`crate::chart::geometry::roofline::clip_polyline_loglog`]). Unclipped endpoints are returned
//! bit-for-bit, and computed intersection points are clamped into the box, so output never
//! leaves it through rounding. Points with a NaN or infinite coordinate are skipped.

/// A point `(x, y)`.
type Point = (f64, f64);

/// The Liang–Barsky parameter interval `(t0, t1)`, `0 <= t0 <= t1 <= 1`, of the part of the
/// segment `p0 → p1` inside the box `[min.0, max.0] × [min.1, max.1]` (borders included).
///
/// `None` when the segment misses the box, a coordinate is not finite, or the box is invalid
/// (a NaN or infinite bound, or `min > max` on an axis). A zero-length segment gives `(0, 1)`
/// when its point is inside, `None` otherwise; a segment touching the box in one point gives
/// `t0 == t1`.
pub fn clip_segment_params(p0: Point, p1: Point, min: Point, max: Point) -> Option<(f64, f64)> {
    let finite = [p0.0, p0.1, p1.0, p1.1, min.0, min.1, max.0, max.1]
        .iter()
        .all(|v| v.is_finite());
    if !finite || min.0 > max.0 || min.1 > max.1 {
        return None;
    }
    let (dx, dy) = (p1.0 - p0.0, p1.1 - p0.1);
    if !dx.is_finite() || !dy.is_finite() {
        return None;
    }
    let (mut t0, mut t1) = (0.0_f64, 1.0_f64);
    // (p, q) per edge: the segment is inside that edge where t * p <= q.
    let edges = [
        (-dx, p0.0 - min.0),
        (dx, max.0 - p0.0),
        (-dy, p0.1 - min.1),
        (dy, max.1 - p0.1),
    ];
    for (p, q) in edges {
        if p == 0.0 {
            // Parallel to this edge: entirely outside or entirely inside it.
            if q < 0.0 {
                return None;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                // Entering.
                if r > t1 {
                    return None;
                }
                t0 = t0.max(r);
            } else {
                // Leaving.
                if r < t0 {
                    return None;
                }
                t1 = t1.min(r);
            }
        }
    }
    Some((t0, t1))
}

/// Clips the segment `p0 → p1` to the box `[min.0, max.0] × [min.1, max.1]` (Liang–Barsky).
///
/// Returns the visible part in the original direction, or `None` when nothing is visible or
/// the input is not finite (see [`clip_segment_params`]). Endpoints inside the box are returned
/// unchanged; new endpoints lie on the box border. A zero-length segment inside the box comes
/// back as itself.
pub fn clip_segment(p0: Point, p1: Point, min: Point, max: Point) -> Option<(Point, Point)> {
    let (t0, t1) = clip_segment_params(p0, p1, min, max)?;
    let clamp = |(x, y): Point| (x.clamp(min.0, max.0), y.clamp(min.1, max.1));
    Some((clamp(point_at(p0, p1, t0)), clamp(point_at(p0, p1, t1))))
}

/// The point at parameter `t` on `p0 → p1`, returning the endpoints exactly for 0 and 1.
pub(crate) fn point_at(p0: Point, p1: Point, t: f64) -> Point {
    if t == 0.0 {
        p0
    } else if t == 1.0 {
        p1
    } else {
        (p0.0 + t * (p1.0 - p0.0), p0.1 + t * (p1.1 - p0.1))
    }
}

/// Clips a polyline to the box `[min.0, max.0] × [min.1, max.1]`, returning its visible pieces
/// in order.
///
/// Consecutive segments joined by a vertex inside the box are merged into one piece; a piece
/// ends where the line leaves the box or at a point with a non-finite coordinate (such points
/// are skipped, splitting the line). Consecutive duplicate points are dropped, so every piece
/// has at least two points, except that a piece that is a single point (a zero-length segment,
/// or a line touching a corner) is returned as that point twice.
pub fn clip_polyline(points: &[Point], min: Point, max: Point) -> Vec<Vec<Point>> {
    clip_polyline_mapped(points, min, max, Some, |p| p)
}

/// [`clip_polyline`] in a mapped space: `forward` takes each input point into the clipping
/// space (`None` skips it like a NaN), the clipped polyline is built there, and `inverse`
/// maps computed points back. Vertices that survive unclipped are copied from the input, not
/// round-tripped, so they stay bit-exact; so does the constant coordinate of a segment that is
/// horizontal or vertical in the input space.
pub(crate) fn clip_polyline_mapped(
    points: &[Point],
    min: Point,
    max: Point,
    forward: impl Fn(Point) -> Option<Point>,
    inverse: impl Fn(Point) -> Point,
) -> Vec<Vec<Point>> {
    let clamp = |(x, y): Point| (x.clamp(min.0, max.0), y.clamp(min.1, max.1));
    let mut pieces: Vec<Vec<Point>> = Vec::new();
    let mut current: Vec<Point> = Vec::new();
    // Whether the last segment ended unclipped at its end vertex (the piece may continue).
    let mut open = false;

    for pair in points.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let mapped = forward(a).zip(forward(b));
        let params =
            mapped.and_then(|(ma, mb)| Some((ma, mb, clip_segment_params(ma, mb, min, max)?)));
        let Some((ma, mb, (t0, t1))) = params else {
            finish_piece(&mut pieces, &mut current);
            open = false;
            continue;
        };
        // Computed points keep a coordinate exactly when the segment is axis-parallel in it.
        let computed = |t: f64| {
            let (x, y) = inverse(clamp(point_at(ma, mb, t)));
            (
                if a.0 == b.0 { a.0 } else { x },
                if a.1 == b.1 { a.1 } else { y },
            )
        };
        let start = if t0 == 0.0 { a } else { computed(t0) };
        let end = if t1 == 1.0 { b } else { computed(t1) };
        if !(open && t0 == 0.0) {
            finish_piece(&mut pieces, &mut current);
            current.push(start);
        }
        if current.last() != Some(&end) {
            current.push(end);
        }
        open = t1 == 1.0;
    }
    finish_piece(&mut pieces, &mut current);
    pieces
}

/// Moves a non-empty `current` piece to `pieces`, doubling a lone point.
fn finish_piece(pieces: &mut Vec<Vec<Point>>, current: &mut Vec<Point>) {
    match current.len() {
        0 => {}
        1 => {
            let p = current[0];
            current.push(p);
            pieces.push(std::mem::take(current));
        }
        _ => pieces.push(std::mem::take(current)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIN: Point = (0.0, 0.0);
    const MAX: Point = (10.0, 5.0);

    fn inside(p: Point) -> bool {
        (MIN.0..=MAX.0).contains(&p.0) && (MIN.1..=MAX.1).contains(&p.1)
    }

    #[test]
    fn fully_inside_is_unchanged() {
        let seg = clip_segment((1.0, 1.0), (9.0, 4.0), MIN, MAX);
        assert_eq!(seg, Some(((1.0, 1.0), (9.0, 4.0))));
    }

    #[test]
    fn fully_outside_is_none() {
        assert_eq!(clip_segment((11.0, 1.0), (12.0, 4.0), MIN, MAX), None);
        assert_eq!(clip_segment((-1.0, -1.0), (-5.0, 6.0), MIN, MAX), None);
        // Passes just outside the top-right corner.
        assert_eq!(clip_segment((9.0, 7.0), (13.0, 3.0), MIN, MAX), None);
    }

    #[test]
    fn crossing_hand_computed() {
        // y = x / 2 from (-2, -1) to (12, 6): enters at (0, 0), leaves at (10, 5).
        assert_eq!(
            clip_segment((-2.0, -1.0), (12.0, 6.0), MIN, MAX),
            Some(((0.0, 0.0), (10.0, 5.0)))
        );
        // Direction is preserved.
        assert_eq!(
            clip_segment((12.0, 6.0), (-2.0, -1.0), MIN, MAX),
            Some(((10.0, 5.0), (0.0, 0.0)))
        );
        // From inside out through the top edge: (5, 2) -> (8, 8) leaves at y = 5, x = 6.5.
        assert_eq!(
            clip_segment((5.0, 2.0), (8.0, 8.0), MIN, MAX),
            Some(((5.0, 2.0), (6.5, 5.0)))
        );
    }

    #[test]
    fn horizontal_and_vertical() {
        assert_eq!(
            clip_segment((-5.0, 2.0), (15.0, 2.0), MIN, MAX),
            Some(((0.0, 2.0), (10.0, 2.0)))
        );
        assert_eq!(
            clip_segment((3.0, -5.0), (3.0, 15.0), MIN, MAX),
            Some(((3.0, 0.0), (3.0, 5.0)))
        );
        assert_eq!(clip_segment((-5.0, 6.0), (15.0, 6.0), MIN, MAX), None);
        assert_eq!(clip_segment((11.0, -5.0), (11.0, 15.0), MIN, MAX), None);
        // On the border counts as inside.
        assert_eq!(
            clip_segment((-5.0, 5.0), (15.0, 5.0), MIN, MAX),
            Some(((0.0, 5.0), (10.0, 5.0)))
        );
    }

    #[test]
    fn degenerate_segments() {
        assert_eq!(
            clip_segment((2.0, 2.0), (2.0, 2.0), MIN, MAX),
            Some(((2.0, 2.0), (2.0, 2.0)))
        );
        assert_eq!(clip_segment((20.0, 2.0), (20.0, 2.0), MIN, MAX), None);
        // Touching a corner only gives a single point.
        assert_eq!(
            clip_segment((9.0, 6.0), (11.0, 4.0), MIN, MAX),
            Some(((10.0, 5.0), (10.0, 5.0)))
        );
        assert_eq!(
            clip_polyline(&[(9.0, 6.0), (11.0, 4.0)], MIN, MAX),
            vec![vec![(10.0, 5.0); 2]]
        );
        assert_eq!(
            clip_segment((-1.0, 1.0), (1.0, -1.0), MIN, MAX),
            Some(((0.0, 0.0), (0.0, 0.0)))
        );
    }

    #[test]
    fn non_finite_and_bad_boxes() {
        assert_eq!(clip_segment((f64::NAN, 1.0), (2.0, 2.0), MIN, MAX), None);
        assert_eq!(
            clip_segment((1.0, 1.0), (f64::INFINITY, 2.0), MIN, MAX),
            None
        );
        assert_eq!(
            clip_segment((1.0, 1.0), (2.0, 2.0), (5.0, 0.0), (1.0, 5.0)),
            None
        );
        assert_eq!(
            clip_segment((1.0, 1.0), (2.0, 2.0), (f64::NAN, 0.0), MAX),
            None
        );
        assert_eq!(
            clip_segment((-f64::MAX, 1.0), (f64::MAX, 1.0), MIN, MAX),
            None
        );
    }

    #[test]
    fn params_hand_computed() {
        assert_eq!(
            clip_segment_params((-10.0, 1.0), (10.0, 1.0), MIN, MAX),
            Some((0.5, 1.0))
        );
        assert_eq!(
            clip_segment_params((5.0, 1.0), (25.0, 1.0), MIN, MAX),
            Some((0.0, 0.25))
        );
    }

    #[test]
    fn polyline_merges_inside_vertices() {
        let line = [(1.0, 1.0), (3.0, 2.0), (5.0, 1.0), (7.0, 4.0)];
        assert_eq!(clip_polyline(&line, MIN, MAX), vec![line.to_vec()]);
    }

    #[test]
    fn polyline_splits_when_leaving() {
        // In, out over the top, back in, out through the right.
        let line = [(1.0, 1.0), (3.0, 9.0), (5.0, 1.0), (15.0, 1.0)];
        let pieces = clip_polyline(&line, MIN, MAX);
        assert_eq!(
            pieces,
            vec![
                vec![(1.0, 1.0), (2.0, 5.0)],
                vec![(4.0, 5.0), (5.0, 1.0), (10.0, 1.0)]
            ]
        );
    }

    #[test]
    fn polyline_entering_from_outside() {
        let line = [(-5.0, 2.0), (5.0, 2.0), (5.0, 4.0)];
        let pieces = clip_polyline(&line, MIN, MAX);
        assert_eq!(pieces, vec![vec![(0.0, 2.0), (5.0, 2.0), (5.0, 4.0)]]);
    }

    #[test]
    fn polyline_nan_splits() {
        let line = [
            (1.0, 1.0),
            (2.0, 2.0),
            (f64::NAN, 3.0),
            (4.0, 4.0),
            (5.0, 4.0),
        ];
        let pieces = clip_polyline(&line, MIN, MAX);
        assert_eq!(
            pieces,
            vec![vec![(1.0, 1.0), (2.0, 2.0)], vec![(4.0, 4.0), (5.0, 4.0)]]
        );
    }

    #[test]
    fn polyline_degenerate_inputs() {
        assert!(clip_polyline(&[], MIN, MAX).is_empty());
        assert!(clip_polyline(&[(1.0, 1.0)], MIN, MAX).is_empty());
        assert_eq!(
            clip_polyline(&[(1.0, 1.0), (1.0, 1.0)], MIN, MAX),
            vec![vec![(1.0, 1.0), (1.0, 1.0)]]
        );
        // Repeated vertices collapse inside a piece.
        let line = [(1.0, 1.0), (1.0, 1.0), (2.0, 2.0), (2.0, 2.0)];
        assert_eq!(
            clip_polyline(&line, MIN, MAX),
            vec![vec![(1.0, 1.0), (2.0, 2.0)]]
        );
        // Entirely outside.
        assert!(clip_polyline(&[(20.0, 1.0), (30.0, 2.0), (40.0, 1.0)], MIN, MAX).is_empty());
    }

    proptest! {
        #[test]
        fn clipped_segment_is_inside_and_on_the_line(
            x0 in -20.0f64..30.0, y0 in -20.0f64..25.0,
            x1 in -20.0f64..30.0, y1 in -20.0f64..25.0,
        ) {
            let (p0, p1) = ((x0, y0), (x1, y1));
            if let Some((a, b)) = clip_segment(p0, p1, MIN, MAX) {
                prop_assert!(inside(a) && inside(b));
                // Collinear with the input: cross product ~ 0 relative to the lengths.
                for q in [a, b] {
                    let cross = (p1.0 - p0.0) * (q.1 - p0.1) - (p1.1 - p0.1) * (q.0 - p0.0);
                    prop_assert!(cross.abs() <= 1e-9 * 2500.0);
                }
            }
            // Any input point strictly inside must survive as an output endpoint.
            if inside(p0) {
                prop_assert_eq!(clip_segment(p0, p1, MIN, MAX).map(|s| s.0), Some(p0));
            }
        }

        #[test]
        fn clipping_twice_changes_nothing(
            x0 in -20.0f64..30.0, y0 in -20.0f64..25.0,
            x1 in -20.0f64..30.0, y1 in -20.0f64..25.0,
        ) {
            if let Some((a, b)) = clip_segment((x0, y0), (x1, y1), MIN, MAX) {
                prop_assert_eq!(clip_segment(a, b, MIN, MAX), Some((a, b)));
            }
        }

        #[test]
        fn polyline_pieces_are_inside(points in proptest::collection::vec((-20.0f64..30.0, -20.0f64..25.0), 0..12)) {
            for piece in clip_polyline(&points, MIN, MAX) {
                prop_assert!(piece.len() >= 2);
                prop_assert!(piece.iter().all(|p| inside(*p)));
            }
        }
    }
}
