//! Roofline and time-based roofline shapes in data coordinates.
//!
//! Classic roofline (S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual
//! performance model for multicore architectures", Communications of the ACM 52(4), 2009):
//! x = arithmetic intensity (FLOP/byte), y = performance (FLOP/s), both log. Hierarchical
//! rooflines (NERSC; C. Yang, T. Kurth, S. Williams, "Hierarchical Roofline analysis for GPUs",
//! CCPE 2020) draw one bandwidth diagonal per memory level, each ending on the top compute
//! roof, and the compute roofs starting where the highest diagonal meets them.
//!
//! Time-based roofline (Y. Wang, C. Yang, S. Farrell, T. Kurth, S. Williams, "Time-Based
//! Roofline for Deep Learning Performance Analysis", 2020): x = bytes moved B, y = FLOPs F,
//! both log. A kernel's lower time bound is `max(F / peak, B / bandwidth)`.
//!
//! Everything here is in data units; the chart assembler projects it with a
//! [`crate::chart::geometry::Viewport`]. Straight lines of a log-log chart are straight in log10
//! space, not in data space, so clipping to a data box happens in log10 space
//! ([`clip_polyline_loglog`]).

use super::clip::clip_polyline_mapped;

/// A point `(x, y)` in data units.
type Point = (f64, f64);

/// True when `v` is finite and strictly positive.
fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// True when `d` is a valid log-axis interval: positive, finite, `d.0 < d.1`.
fn valid_domain(d: (f64, f64)) -> bool {
    positive(d.0) && positive(d.1) && d.0 < d.1
}

/// Clips a data-space polyline to the box `domain_x × domain_y` of a log-log chart.
///
/// Points are mapped to log10, clipped there with Liang–Barsky
/// ([`crate::chart::geometry::clip::clip_polyline`]), and mapped back, so each piece lies on the line
/// the chart draws. Vertices inside the box are returned bit-exact, crossings on a box edge get
/// that edge's coordinate exactly, and nothing leaves the box. Points with a non-positive or
/// non-finite coordinate split the line (they cannot be shown on log axes). An invalid domain
/// gives no pieces.
pub fn clip_polyline_loglog(
    points: &[Point],
    domain_x: (f64, f64),
    domain_y: (f64, f64),
) -> Vec<Vec<Point>> {
    if !valid_domain(domain_x) || !valid_domain(domain_y) {
        return Vec::new();
    }
    let min = (domain_x.0.log10(), domain_y.0.log10());
    let max = (domain_x.1.log10(), domain_y.1.log10());
    let forward = |(x, y): Point| (positive(x) && positive(y)).then(|| (x.log10(), y.log10()));
    // Snap coordinates within rounding of a box edge to the exact domain end.
    let back = |l: f64, lmin: f64, lmax: f64, d: (f64, f64)| {
        let tol = SNAP_TOLERANCE * (1.0 + lmin.abs().max(lmax.abs()));
        if (l - lmin).abs() <= tol {
            d.0
        } else if (l - lmax).abs() <= tol {
            d.1
        } else {
            10f64.powf(l)
        }
    };
    let inverse = |(lx, ly): Point| {
        (
            back(lx, min.0, max.0, domain_x),
            back(ly, min.1, max.1, domain_y),
        )
    };
    let mut pieces = clip_polyline_mapped(points, min, max, forward, inverse);
    // log10 is not injective at the last ulp: keep even such points inside the data box.
    for p in pieces.iter_mut().flatten() {
        *p = (
            p.0.clamp(domain_x.0, domain_x.1),
            p.1.clamp(domain_y.0, domain_y.1),
        );
    }
    pieces
}

/// How close (in log10 units, relative to the magnitude of the bounds) a clipped coordinate
/// must be to a box edge to be snapped onto it.
const SNAP_TOLERANCE: f64 = 1e-12;

/// The ridge point `peak / bandwidth` (FLOP/byte): the arithmetic intensity where the
/// bandwidth ceiling meets the compute roof (Williams, Waterman, Patterson, "Roofline",
/// CACM 2009). On the time-based plane it is the machine balance. NaN unless both inputs are
/// positive and finite.
pub fn ridge_point(peak: f64, bandwidth: f64) -> f64 {
    if positive(peak) && positive(bandwidth) {
        peak / bandwidth
    } else {
        f64::NAN
    }
}

/// The memory ceiling `y = bandwidth × x` from `x_min` up to where it meets the top compute
/// roof `roof_peak`, as `[(x_min, bandwidth × x_min), (ridge, roof_peak)]`.
///
/// The second point is exactly on the roof (`y == roof_peak`). In a hierarchical roofline call
/// this once per memory level with the same `roof_peak`. If the ridge is at or left of `x_min`
/// the ceiling is entirely above the roof: both points are the ridge (a zero-length segment that
/// clipping to a domain starting at `x_min` drops). Invalid input gives NaN points, which
/// clipping skips.
pub fn bandwidth_diagonal(bandwidth: f64, roof_peak: f64, x_min: f64) -> [Point; 2] {
    let ridge = ridge_point(roof_peak, bandwidth);
    if !positive(x_min) || ridge.is_nan() {
        return [(f64::NAN, f64::NAN); 2];
    }
    if ridge <= x_min {
        return [(ridge, roof_peak); 2];
    }
    [(x_min, bandwidth * x_min), (ridge, roof_peak)]
}

/// The flat compute roof `y = peak` from its ridge with `from_bandwidth` (the highest drawn
/// bandwidth) to `x_max`, as `[(ridge, peak), (x_max, peak)]`.
///
/// If the ridge is at or right of `x_max` both points are the ridge (a zero-length segment that
/// clipping to a domain ending at `x_max` drops). Invalid input gives NaN points.
pub fn compute_roof(peak: f64, from_bandwidth: f64, x_max: f64) -> [Point; 2] {
    let ridge = ridge_point(peak, from_bandwidth);
    if !positive(x_max) || ridge.is_nan() {
        return [(f64::NAN, f64::NAN); 2];
    }
    if ridge >= x_max {
        return [(ridge, peak); 2];
    }
    [(ridge, peak), (x_max, peak)]
}

/// A single classic roofline over `[x_min, x_max]`: `y = min(peak, bandwidth × x)`, as the
/// diagonal up to the ridge and then the flat roof.
///
/// With the ridge inside the interval this is three points; with the ridge at or left of
/// `x_min` only the flat roof (two points); at or right of `x_max` only the diagonal (two
/// points). Empty unless all inputs are positive and finite and `x_min < x_max`.
pub fn roofline_polyline(peak: f64, bandwidth: f64, x_min: f64, x_max: f64) -> Vec<Point> {
    let ridge = ridge_point(peak, bandwidth);
    if ridge.is_nan() || !valid_domain((x_min, x_max)) {
        return Vec::new();
    }
    if ridge <= x_min {
        vec![(x_min, peak), (x_max, peak)]
    } else if ridge >= x_max {
        vec![(x_min, bandwidth * x_min), (x_max, bandwidth * x_max)]
    } else {
        vec![(x_min, bandwidth * x_min), (ridge, peak), (x_max, peak)]
    }
}

/// The line `F = ai × B` on the time-based plane (or `y = ai × x` on any log-log plane),
/// clipped to `domain_x × domain_y` in log space. At most one piece; empty when `ai` is not
/// positive and finite, a domain is invalid, or the line misses the box.
pub fn iso_intensity_line(ai: f64, domain_x: (f64, f64), domain_y: (f64, f64)) -> Vec<Vec<Point>> {
    if !positive(ai) || !valid_domain(domain_x) || !valid_domain(domain_y) {
        return Vec::new();
    }
    // Pre-intersect with the y range so that the endpoints cannot overflow.
    let lo = if domain_y.0 / ai > domain_x.0 {
        (domain_y.0 / ai, domain_y.0)
    } else {
        (domain_x.0, ai * domain_x.0)
    };
    let hi = if domain_y.1 / ai < domain_x.1 {
        (domain_y.1 / ai, domain_y.1)
    } else {
        (domain_x.1, ai * domain_x.1)
    };
    if lo.0 > hi.0 {
        return Vec::new();
    }
    clip_polyline_loglog(&[lo, hi], domain_x, domain_y)
}

/// The machine-balance line `F = (peak / bandwidth) × B` of the time-based plane, clipped to
/// the domain in log space: kernels above it are compute bound, below it memory bound.
pub fn machine_balance_line(
    peak: f64,
    bandwidth: f64,
    domain_x: (f64, f64),
    domain_y: (f64, f64),
) -> Vec<Vec<Point>> {
    iso_intensity_line(ridge_point(peak, bandwidth), domain_x, domain_y)
}

/// The corner `(B, F) = (n · t_launch · bandwidth, n · t_launch · peak)` of the launch-overhead
/// box: a kernel of `launches` launches whose bytes and FLOPs are both below it would take less
/// time than its launch overhead `n · t_launch` (Wang et al. 2020).
pub fn launch_overhead_box(launches: f64, t_launch: f64, peak: f64, bandwidth: f64) -> Point {
    iso_time_corner(launches * t_launch, peak, bandwidth)
}

/// The open outline of the box below and left of `corner` on a log-log plane: the horizontal
/// edge from the left domain edge to the corner (`F = corner.1`) and the vertical edge from the
/// corner down to the bottom domain edge (`B = corner.0`), clipped to the domain in log space.
///
/// Returns one polyline: `[(domain_x.0, F), (B, F), (B, domain_y.0)]` when the corner is inside,
/// the visible edge when it is above or right of the domain, and nothing when the box is
/// invisible (corner at or left of / below the domain's low edges, or above and right of it)
/// or an input is invalid.
pub fn launch_box_outline(corner: Point, domain_x: (f64, f64), domain_y: (f64, f64)) -> Vec<Point> {
    let (b, f) = corner;
    if !valid_domain(domain_x) || !valid_domain(domain_y) || !positive(b) || !positive(f) {
        return Vec::new();
    }
    if b <= domain_x.0 || f <= domain_y.0 {
        return Vec::new();
    }
    let outline = [(domain_x.0, f), (b, f), (b, domain_y.0)];
    // An L with both arms reaching the low domain edges is cut by the box into one piece at most.
    clip_polyline_loglog(&outline, domain_x, domain_y)
        .into_iter()
        .next()
        .unwrap_or_default()
}

/// The corner `(time × bandwidth, time × peak)` of the iso-time contour for `time_s` seconds.
pub fn iso_time_corner(time_s: f64, peak: f64, bandwidth: f64) -> Point {
    (time_s * bandwidth, time_s * peak)
}

/// The L-shaped contour of all `(B, F)` whose time bound `max(F / peak, B / bandwidth)` equals
/// `time_s`: horizontal at `F = time × peak` for `B <= time × bandwidth`, vertical at
/// `B = time × bandwidth` for `F <= time × peak`; clipped to the domain like
/// [`launch_box_outline`] (which is this contour for `time = n · t_launch`).
pub fn iso_time_curve(
    time_s: f64,
    peak: f64,
    bandwidth: f64,
    domain_x: (f64, f64),
    domain_y: (f64, f64),
) -> Vec<Point> {
    launch_box_outline(iso_time_corner(time_s, peak, bandwidth), domain_x, domain_y)
}

/// Index of the point nearest to `target_px` within `max_dist_px` (inclusive), all in pixels,
/// for hover hit-testing. Points with a non-finite coordinate are ignored; ties go to the lowest
/// index. `None` when nothing is in range, the target is not finite, or `max_dist_px` is NaN or
/// negative.
pub fn nearest_point(target_px: Point, points: &[Point], max_dist_px: f64) -> Option<usize> {
    if !target_px.0.is_finite()
        || !target_px.1.is_finite()
        || max_dist_px.is_nan()
        || max_dist_px < 0.0
    {
        return None;
    }
    let limit = max_dist_px * max_dist_px;
    let mut best: Option<(usize, f64)> = None;
    for (i, &(x, y)) in points.iter().enumerate() {
        if !x.is_finite() || !y.is_finite() {
            continue;
        }
        let d2 = (x - target_px.0).powi(2) + (y - target_px.1).powi(2);
        if d2 <= limit && best.is_none_or(|(_, b)| d2 < b) {
            best = Some((i, d2));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::geometry::Rect;
    use crate::chart::geometry::scale::Viewport;
    use proptest::prelude::*;

    const V100_PEAK: f64 = 15158.6e9;
    const V100_BW: f64 = 828.758e9;
    const DX: (f64, f64) = (1e-2, 1e3);
    const DY: (f64, f64) = (1e9, 1e14);

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * a.abs().max(b.abs())
    }

    fn in_box(p: Point, dx: (f64, f64), dy: (f64, f64)) -> bool {
        (dx.0..=dx.1).contains(&p.0) && (dy.0..=dy.1).contains(&p.1)
    }

    #[test]
    fn v100_ridge() {
        let r = ridge_point(V100_PEAK, V100_BW);
        assert!((r - 18.29).abs() < 0.005, "{r}");
        assert!(ridge_point(0.0, V100_BW).is_nan());
        assert!(ridge_point(V100_PEAK, -1.0).is_nan());
        assert!(ridge_point(f64::NAN, V100_BW).is_nan());
        assert!(ridge_point(V100_PEAK, f64::INFINITY).is_nan());
    }

    #[test]
    fn diagonal_ends_exactly_on_the_roof() {
        let [a, b] = bandwidth_diagonal(V100_BW, V100_PEAK, 0.01);
        assert_eq!(a, (0.01, V100_BW * 0.01));
        assert_eq!(b, (ridge_point(V100_PEAK, V100_BW), V100_PEAK));
        assert!(close(b.1 / b.0, V100_BW, 1e-15));
        // The compute roof starts where the diagonal ends.
        let [c, d] = compute_roof(V100_PEAK, V100_BW, 1e3);
        assert_eq!(c, b);
        assert_eq!(d, (1e3, V100_PEAK));
    }

    #[test]
    fn hierarchical_ceilings_meet_the_top_roof() {
        let (l1, l2, hbm) = (14e12, 4e12, V100_BW);
        let ridges: Vec<f64> = [l1, l2, hbm]
            .iter()
            .map(|&bw| bandwidth_diagonal(bw, V100_PEAK, 0.01)[1].0)
            .collect();
        assert!(ridges[0] < ridges[1] && ridges[1] < ridges[2]);
        for bw in [l1, l2, hbm] {
            assert_eq!(bandwidth_diagonal(bw, V100_PEAK, 0.01)[1].1, V100_PEAK);
        }
        // A lower compute ceiling starts where the highest (L1) diagonal meets it.
        let [start, end] = compute_roof(V100_PEAK / 2.0, l1, 1e3);
        assert!(close(start.0, V100_PEAK / 2.0 / l1, 1e-15));
        assert_eq!(start.1, V100_PEAK / 2.0);
        assert_eq!(end, (1e3, V100_PEAK / 2.0));
    }

    #[test]
    fn ridge_outside_the_axis() {
        // Ridge 0.005 < x_min: the diagonal collapses to the ridge and is clipped away.
        let diag = bandwidth_diagonal(2e12, 1e10, 0.01);
        assert_eq!(diag, [(0.005, 1e10); 2]);
        assert!(clip_polyline_loglog(&diag, DX, DY).is_empty());
        // Ridge 2000 > x_max: the roof collapses likewise.
        let roof = compute_roof(2e12, 1e9, 1e3);
        assert_eq!(roof, [(2000.0, 2e12); 2]);
        assert!(clip_polyline_loglog(&roof, DX, DY).is_empty());
        assert!(bandwidth_diagonal(f64::NAN, 1.0, 1.0)[0].0.is_nan());
        assert!(compute_roof(1.0, 1.0, -1.0)[1].1.is_nan());
    }

    #[test]
    fn classic_polyline_cases() {
        let line = roofline_polyline(1e12, 1e11, 0.1, 100.0);
        assert_eq!(line, [(0.1, 1e10), (10.0, 1e12), (100.0, 1e12)]);
        // Ridge left of the axis: flat only.
        assert_eq!(
            roofline_polyline(1e12, 1e11, 20.0, 100.0),
            [(20.0, 1e12), (100.0, 1e12)]
        );
        // Ridge right of the axis: diagonal only.
        assert_eq!(
            roofline_polyline(1e12, 1e11, 0.1, 5.0),
            [(0.1, 1e10), (5.0, 5e11)]
        );
        // Ridge exactly on an end.
        assert_eq!(
            roofline_polyline(1e12, 1e11, 10.0, 100.0),
            [(10.0, 1e12), (100.0, 1e12)]
        );
        assert!(roofline_polyline(1e12, 1e11, 100.0, 0.1).is_empty());
        assert!(roofline_polyline(1e12, 0.0, 0.1, 100.0).is_empty());
        assert!(roofline_polyline(1e12, 1e11, 0.0, 100.0).is_empty());
    }

    #[test]
    fn loglog_clip_of_a_roofline() {
        // Diagonal enters at the bottom edge: y = 1e11 x = 1e9 at x = 0.01 (corner), flat at
        // 1e12 leaves through the right edge.
        let line = roofline_polyline(1e12, 1e11, 1e-3, 1e4);
        let pieces = clip_polyline_loglog(&line, DX, DY);
        assert_eq!(pieces.len(), 1);
        let piece = &pieces[0];
        assert_eq!(piece.len(), 3);
        assert!(close(piece[0].0, 0.01, 1e-12) && close(piece[0].1, 1e9, 1e-12));
        assert_eq!(piece[1], (10.0, 1e12));
        assert_eq!(piece[2], (1e3, 1e12));
    }

    #[test]
    fn loglog_clip_snaps_to_edges_and_skips_bad_points() {
        // y = x^2 through the box is a straight line of slope 2 in log space.
        let pieces = clip_polyline_loglog(&[(1e-3, 1e-6), (1e8, 1e16)], (1.0, 100.0), (1.0, 1e6));
        assert_eq!(pieces.len(), 1);
        assert_eq!(pieces[0].len(), 2);
        assert_eq!(pieces[0][0], (1.0, 1.0));
        assert_eq!(pieces[0][1].0, 100.0);
        assert!(close(pieces[0][1].1, 1e4, 1e-12));
        let pieces = clip_polyline_loglog(
            &[(1.0, 1.0), (0.0, 5.0), (2.0, 2.0), (3.0, 3.0)],
            DX,
            (0.5, 10.0),
        );
        assert_eq!(pieces, vec![vec![(2.0, 2.0), (3.0, 3.0)]]);
        assert!(clip_polyline_loglog(&[(1.0, 1.0), (2.0, 2.0)], (0.0, 10.0), DY).is_empty());
        assert!(clip_polyline_loglog(&[(1.0, 1.0), (2.0, 2.0)], (10.0, 1.0), DY).is_empty());
    }

    #[test]
    fn machine_balance_hand_computed() {
        // Balance 10 FLOP/B over B in 1e3..1e9, F in 1e5..1e9: enters at B = 1e4 (F = 1e5),
        // leaves at B = 1e8 (F = 1e9).
        let pieces = machine_balance_line(1e12, 1e11, (1e3, 1e9), (1e5, 1e9));
        assert_eq!(pieces.len(), 1);
        let [a, b] = pieces[0][..] else {
            panic!("{pieces:?}")
        };
        assert!(close(a.0, 1e4, 1e-12) && a.1 == 1e5);
        assert!(close(b.0, 1e8, 1e-12) && b.1 == 1e9);
        assert!(machine_balance_line(1e12, 1e11, (1e3, 1e9), (1e11, 1e12)).is_empty());
        assert!(machine_balance_line(0.0, 1e11, (1e3, 1e9), (1e5, 1e9)).is_empty());
    }

    #[test]
    fn iso_intensity_extreme_values_do_not_overflow() {
        let pieces = iso_intensity_line(1e300, (1.0, 1e10), (1e100, f64::MAX));
        assert_eq!(pieces.len(), 1);
        for p in &pieces[0] {
            assert!(p.1.is_finite() && close(p.1 / p.0, 1e300, 1e-9));
        }
        assert!(iso_intensity_line(f64::NAN, DX, DY).is_empty());
    }

    #[test]
    fn v100_style_launch_box() {
        let corner = launch_overhead_box(1.0, 4.2e-6, 15e12, 900e9);
        assert!(close(corner.0, 3.78e6, 1e-12), "{corner:?}");
        assert!(close(corner.1, 6.3e7, 1e-12), "{corner:?}");
        let ten = launch_overhead_box(10.0, 4.2e-6, 15e12, 900e9);
        assert!(close(ten.0, 3.78e7, 1e-12) && close(ten.1, 6.3e8, 1e-12));
        // The corner is the iso-time corner at the launch overhead.
        assert_eq!(corner, iso_time_corner(4.2e-6, 15e12, 900e9));
    }

    #[test]
    fn launch_box_outline_cases() {
        let (dx, dy) = ((1e3, 1e12), (1e3, 1e15));
        let corner = (3.78e6, 6.3e7);
        assert_eq!(
            launch_box_outline(corner, dx, dy),
            [(1e3, 6.3e7), corner, (3.78e6, 1e3)]
        );
        // Corner above the top: only the vertical edge remains.
        assert_eq!(
            launch_box_outline((1e6, 1e20), dx, dy),
            [(1e6, 1e15), (1e6, 1e3)]
        );
        // Corner right of the domain: only the horizontal edge.
        assert_eq!(
            launch_box_outline((1e14, 1e6), dx, dy),
            [(1e3, 1e6), (1e12, 1e6)]
        );
        // Invisible boxes.
        assert!(launch_box_outline((1e2, 1e6), dx, dy).is_empty());
        assert!(launch_box_outline((1e6, 1e3), dx, dy).is_empty());
        assert!(launch_box_outline((1e14, 1e20), dx, dy).is_empty());
        assert!(launch_box_outline((f64::NAN, 1e6), dx, dy).is_empty());
    }

    #[test]
    fn iso_time_curve_hand_computed() {
        let (dx, dy) = ((1e3, 1e12), (1e3, 1e15));
        let curve = iso_time_curve(1e-3, 15e12, 900e9, dx, dy);
        assert_eq!(curve.len(), 3);
        assert_eq!(curve[0], (1e3, 15e12 * 1e-3));
        assert_eq!(curve[1], iso_time_corner(1e-3, 15e12, 900e9));
        assert!(close(curve[1].0, 9e8, 1e-12) && close(curve[1].1, 1.5e10, 1e-12));
        assert_eq!(curve[2], (curve[1].0, 1e3));
    }

    #[test]
    fn nearest_point_rules() {
        let pts = [
            (0.0, 0.0),
            (10.0, 0.0),
            (f64::NAN, 1.0),
            (3.0, 4.0),
            (3.0, 4.0),
        ];
        assert_eq!(nearest_point((1.0, 1.0), &pts, 5.0), Some(0));
        assert_eq!(nearest_point((9.0, 0.0), &pts, 5.0), Some(1));
        // Ties go to the lowest index.
        assert_eq!(nearest_point((3.0, 4.0), &pts, 1.0), Some(3));
        assert_eq!(nearest_point((5.0, -1.0), &pts, 6.0), Some(0));
        // The radius is inclusive.
        assert_eq!(nearest_point((0.0, 5.0), &[(0.0, 0.0)], 5.0), Some(0));
        assert_eq!(nearest_point((0.0, 5.1), &[(0.0, 0.0)], 5.0), None);
        assert_eq!(nearest_point((100.0, 100.0), &pts, 5.0), None);
        assert_eq!(nearest_point((100.0, 100.0), &pts, f64::INFINITY), Some(1));
        assert_eq!(nearest_point((f64::NAN, 0.0), &pts, 5.0), None);
        assert_eq!(nearest_point((0.0, 0.0), &pts, f64::NAN), None);
        assert_eq!(nearest_point((0.0, 0.0), &pts, -1.0), None);
        assert_eq!(nearest_point((0.0, 0.0), &[], 5.0), None);
    }

    #[test]
    fn hover_through_a_viewport() {
        let vp = Viewport::new(DX, DY, Rect::new(0.0, 0.0, 500.0, 500.0)).unwrap();
        let kernels = [(0.5, 2e11), (18.0, 1e13), (200.0, 5e12)];
        let px: Vec<Point> = kernels.iter().map(|&k| vp.project(k)).collect();
        let cursor = vp.project((17.0, 1.1e13));
        assert_eq!(nearest_point(cursor, &px, 8.0), Some(1));
    }

    proptest! {
        #[test]
        fn clipped_diagonal_stays_on_line_and_in_box(
            bw_exp in 8.0f64..14.0,
            x0_exp in -6.0f64..6.0,
            len in 0.0f64..10.0,
        ) {
            let bw = 10f64.powf(bw_exp);
            let (x0, x1) = (10f64.powf(x0_exp), 10f64.powf(x0_exp + len));
            for piece in clip_polyline_loglog(&[(x0, bw * x0), (x1, bw * x1)], DX, DY) {
                for p in piece {
                    prop_assert!(in_box(p, DX, DY), "{p:?}");
                    prop_assert!(close(p.1 / p.0, bw, 1e-9), "{p:?}");
                }
            }
        }

        #[test]
        fn iso_time_curve_points_have_the_right_time(
            t_exp in -7.0f64..1.0,
            peak_exp in 11.0f64..16.0,
            bw_exp in 10.0f64..13.0,
        ) {
            let (t, peak, bw) = (10f64.powf(t_exp), 10f64.powf(peak_exp), 10f64.powf(bw_exp));
            let (dx, dy) = ((1e3, 1e12), (1e3, 1e15));
            let curve = iso_time_curve(t, peak, bw, dx, dy);
            prop_assert!(curve.len() <= 3);
            for p in &curve {
                prop_assert!(in_box(*p, dx, dy));
                let bound = (p.1 / peak).max(p.0 / bw);
                prop_assert!(close(bound, t, 1e-9), "{p:?}: {bound} vs {t}");
            }
        }

        #[test]
        fn launch_box_corner_time_is_n_launches(n in 1.0f64..1e4, t in 1e-7f64..1e-4) {
            let (b, f) = launch_overhead_box(n, t, 15e12, 900e9);
            prop_assert!(close(b / 900e9, n * t, 1e-12) && close(f / 15e12, n * t, 1e-12));
        }

        #[test]
        fn nearest_is_really_nearest(
            pts in proptest::collection::vec((0.0f64..100.0, 0.0f64..100.0), 0..20),
            tx in 0.0f64..100.0, ty in 0.0f64..100.0, r in 0.0f64..50.0,
        ) {
            let d = |p: &Point| ((p.0 - tx).powi(2) + (p.1 - ty).powi(2)).sqrt();
            match nearest_point((tx, ty), &pts, r) {
                Some(i) => {
                    prop_assert!(d(&pts[i]) <= r + 1e-9);
                    prop_assert!(pts.iter().all(|p| d(p) >= d(&pts[i]) - 1e-9));
                }
                None => prop_assert!(pts.iter().all(|p| d(p) > r - 1e-9)),
            }
        }
    }
}
