//! Logarithmic axis scales, pixel rectangles and two-axis viewports.
//!
//! A [`LogScale`] maps a positive data interval to a pixel interval linearly in log10 space.
//! Pixel ranges may be reversed (`range.0 > range.1`), which is how a y axis with the origin at
//! the bottom of a top-down pixel grid is expressed. [`Viewport`] pairs two scales with the
//! [`Rect`] they are drawn in. Zoom and pan return new values; nothing is mutated in place.

/// Exact powers of ten up to 10^22, the largest power of ten representable exactly in an `f64`.
const EXACT_POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// 10^`k` as an `f64`: exactly for `0 <= k <= 22`, correctly rounded (the same value as the
/// literal `1e-k`) for `-22 <= k < 0`, and via `powi` beyond. Saturates to 0 or infinity.
pub fn pow10(k: i32) -> f64 {
    mul_pow10(1.0, k)
}

/// `m` × 10^`k`. For an integer `m` below 2^53 and `|k| <= 22` this is the `f64` nearest to the
/// decimal number (so `mul_pow10(3.0, -1) == 0.3`), because it is a single correctly rounded
/// multiplication or division of exact operands.
pub fn mul_pow10(m: f64, k: i32) -> f64 {
    match usize::try_from(k.unsigned_abs()) {
        Ok(i) if i < EXACT_POW10.len() => {
            if k >= 0 {
                m * EXACT_POW10[i]
            } else {
                m / EXACT_POW10[i]
            }
        }
        _ => m * 10f64.powi(k),
    }
}

/// The decade of `v`: the integer `k` with 10^k <= `v` < 10^(k+1), using [`pow10`] so that exact
/// powers of ten land in their own decade. `None` for non-positive or non-finite `v`.
pub fn decade_floor(v: f64) -> Option<i32> {
    if !v.is_finite() || v <= 0.0 {
        return None;
    }
    // log10 can be off by one ulp near powers of ten; correct against exact powers.
    let mut k = v.log10().floor() as i32;
    if pow10(k) > v {
        k -= 1;
    } else if pow10(k + 1) <= v {
        k += 1;
    }
    Some(k)
}

/// True when `v` is finite and strictly positive: the values a log axis can show.
fn is_positive_finite(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// A logarithmic scale mapping a positive data interval onto a pixel interval.
///
/// `domain` is in data units with `0 < domain.0 < domain.1`; `range` is in pixels and may be
/// reversed (`range.0 > range.1`), e.g. `(bottom, top)` for a y axis. `domain.0` maps to
/// `range.0` and `domain.1` to `range.1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogScale {
    domain: (f64, f64),
    range: (f64, f64),
}

impl LogScale {
    /// Creates a scale. `None` unless both domain ends are finite and positive with
    /// `domain.0 < domain.1`, and both range ends are finite and different.
    pub fn new(domain: (f64, f64), range: (f64, f64)) -> Option<Self> {
        let domain_ok =
            is_positive_finite(domain.0) && is_positive_finite(domain.1) && domain.0 < domain.1;
        let range_ok = range.0.is_finite() && range.1.is_finite() && range.0 != range.1;
        (domain_ok && range_ok).then_some(Self { domain, range })
    }

    /// The data interval `(min, max)`.
    pub fn domain(&self) -> (f64, f64) {
        self.domain
    }

    /// The pixel interval `(at domain.0, at domain.1)`.
    pub fn range(&self) -> (f64, f64) {
        self.range
    }

    /// The domain in log10 units.
    fn log_domain(&self) -> (f64, f64) {
        (self.domain.0.log10(), self.domain.1.log10())
    }

    /// Maps a data value to pixels. Values outside the domain extrapolate linearly in log space.
    ///
    /// A non-positive `v` (including `-0.0`) has no logarithm; it maps to the limit as `v → 0⁺`:
    /// `f64::NEG_INFINITY` when the range increases and `f64::INFINITY` when it is reversed
    /// (a y axis), i.e. "infinitely far beyond the low end". NaN maps to NaN. Never panics.
    pub fn project(&self, v: f64) -> f64 {
        if v.is_nan() {
            return f64::NAN;
        }
        if v <= 0.0 {
            return if self.range.1 > self.range.0 {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
        }
        let (l0, l1) = self.log_domain();
        let t = (v.log10() - l0) / (l1 - l0);
        self.range.0 + t * (self.range.1 - self.range.0)
    }

    /// Maps pixels back to a data value (the inverse of [`LogScale::project`]). Always positive
    /// for finite `px` within a sane distance of the range; may underflow to 0 or overflow to
    /// infinity far outside it. NaN maps to NaN.
    pub fn invert(&self, px: f64) -> f64 {
        let (l0, l1) = self.log_domain();
        let t = (px - self.range.0) / (self.range.1 - self.range.0);
        10f64.powf(l0 + t * (l1 - l0))
    }

    /// True when `domain.0 <= v <= domain.1`.
    pub fn contains(&self, v: f64) -> bool {
        (self.domain.0..=self.domain.1).contains(&v)
    }

    /// Builds a scale with the same range from a domain given in log10 units.
    fn with_log_domain(&self, l0: f64, l1: f64) -> Option<Self> {
        Self::new((10f64.powf(l0), 10f64.powf(l1)), self.range)
    }

    /// Zooms by `factor` (> 1 zooms in: the visible log span shrinks by that factor; < 1 zooms
    /// out) keeping the data value under `anchor_px` at `anchor_px`.
    ///
    /// Returns an unchanged copy when `factor` is not finite and positive, `anchor_px` is not
    /// finite, or the new domain would not be representable (underflow, overflow or a span too
    /// small to tell its ends apart).
    pub fn zoom(&self, factor: f64, anchor_px: f64) -> Self {
        if !factor.is_finite() || factor <= 0.0 || !anchor_px.is_finite() {
            return *self;
        }
        let (l0, l1) = self.log_domain();
        let t = (anchor_px - self.range.0) / (self.range.1 - self.range.0);
        let anchor = l0 + t * (l1 - l0);
        let span = (l1 - l0) / factor;
        let n0 = anchor - t * span;
        self.with_log_domain(n0, n0 + span).unwrap_or(*self)
    }

    /// Pans so that content moves by `delta_px` pixels (a drag of `delta_px`): the data value
    /// at pixel `p` is afterwards at `p + delta_px`. Returns an unchanged copy when `delta_px`
    /// is not finite or the result would not be representable.
    pub fn pan(&self, delta_px: f64) -> Self {
        if !delta_px.is_finite() {
            return *self;
        }
        let (l0, l1) = self.log_domain();
        let shift = -delta_px / (self.range.1 - self.range.0) * (l1 - l0);
        self.with_log_domain(l0 + shift, l1 + shift)
            .unwrap_or(*self)
    }
}

/// An axis-aligned rectangle in pixels, `y` growing downwards (screen convention).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width; expected non-negative.
    pub width: f64,
    /// Height; expected non-negative.
    pub height: f64,
}

impl Rect {
    /// Creates a rectangle from its top-left corner and size.
    pub fn new(x: f64, y: f64, width: f64, height: f64) -> Self {
        Self {
            x,
            y,
            width,
            height,
        }
    }

    /// Right edge, `x + width`.
    pub fn right(&self) -> f64 {
        self.x + self.width
    }

    /// Bottom edge, `y + height`.
    pub fn bottom(&self) -> f64 {
        self.y + self.height
    }

    /// Centre point.
    pub fn center(&self) -> (f64, f64) {
        (self.x + self.width / 2.0, self.y + self.height / 2.0)
    }

    /// True when `(px, py)` lies inside or on the border. False for NaN coordinates.
    pub fn contains(&self, px: f64, py: f64) -> bool {
        (self.x..=self.right()).contains(&px) && (self.y..=self.bottom()).contains(&py)
    }
}

/// Two log scales and the pixel rectangle they are drawn in: the plot area of a log-log chart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    /// Horizontal scale; its range is normally `(area.x, area.right())`.
    pub x: LogScale,
    /// Vertical scale; its range is normally `(area.bottom(), area.y)` (reversed, y up).
    pub y: LogScale,
    /// The plot area in pixels.
    pub area: Rect,
}

impl Viewport {
    /// Creates the usual viewport: x left to right across `area`, y bottom to top. `None` when
    /// a domain is invalid (see [`LogScale::new`]) or `area` has no positive finite width and
    /// height.
    pub fn new(domain_x: (f64, f64), domain_y: (f64, f64), area: Rect) -> Option<Self> {
        if !is_positive_finite(area.width) || !is_positive_finite(area.height) {
            return None;
        }
        Some(Self {
            x: LogScale::new(domain_x, (area.x, area.right()))?,
            y: LogScale::new(domain_y, (area.bottom(), area.y))?,
            area,
        })
    }

    /// Maps a data point to pixels.
    pub fn project(&self, (x, y): (f64, f64)) -> (f64, f64) {
        (self.x.project(x), self.y.project(y))
    }

    /// Maps pixels back to a data point.
    pub fn invert(&self, (px, py): (f64, f64)) -> (f64, f64) {
        (self.x.invert(px), self.y.invert(py))
    }

    /// Zooms both axes by `factor` about the pixel `anchor_px` (see [`LogScale::zoom`]).
    pub fn zoom(&self, factor: f64, anchor_px: (f64, f64)) -> Self {
        Self {
            x: self.x.zoom(factor, anchor_px.0),
            y: self.y.zoom(factor, anchor_px.1),
            area: self.area,
        }
    }

    /// Pans both axes by a pixel drag `delta_px` (see [`LogScale::pan`]).
    pub fn pan(&self, delta_px: (f64, f64)) -> Self {
        Self {
            x: self.x.pan(delta_px.0),
            y: self.y.pan(delta_px.1),
            area: self.area,
        }
    }
}

/// Fits a log-axis domain to `values`: the smallest whole-decade interval containing every
/// positive finite value after padding by `pad_decades` (in log10 units) on each side.
///
/// Non-positive and non-finite values are ignored; `None` when none remain. A negative or
/// non-finite `pad_decades` counts as 0. If the padded interval is a single power of ten (one
/// value, exactly 10^k, no padding) the result is `(10^k, 10^(k+1))`, so the domain is never
/// empty. Decades are clamped to `10^-307 ..= 10^308` to stay representable. The ends are exact
/// powers of ten ([`pow10`]).
pub fn fit_log_domain(
    values: impl IntoIterator<Item = f64>,
    pad_decades: f64,
) -> Option<(f64, f64)> {
    let (lo, hi) = values.into_iter().filter(|v| is_positive_finite(*v)).fold(
        None,
        |acc: Option<(f64, f64)>, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        },
    )?;
    let pad = if pad_decades.is_finite() {
        pad_decades.max(0.0)
    } else {
        0.0
    };

    let mut k_lo = decade_floor(lo)?;
    let mut k_hi = decade_floor(hi)?;
    if pow10(k_hi) < hi {
        k_hi += 1;
    }
    if pad > 0.0 {
        k_lo = k_lo.min((lo.log10() - pad).floor().max(-400.0) as i32);
        k_hi = k_hi.max((hi.log10() + pad).ceil().min(400.0) as i32);
    }
    let k_lo = k_lo.clamp(-307, 307);
    let k_hi = k_hi.clamp(k_lo + 1, 308);
    Some((pow10(k_lo), pow10(k_hi)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * a.abs().max(b.abs())
    }

    #[test]
    fn pow10_is_exact_or_correctly_rounded() {
        assert_eq!(pow10(0), 1.0);
        assert_eq!(pow10(3), 1000.0);
        assert_eq!(pow10(22), 1e22);
        assert_eq!(pow10(-1), 0.1);
        assert_eq!(pow10(-2), 0.01);
        assert_eq!(pow10(-22), 1e-22);
        assert!(close(pow10(100), 1e100, 1e-14));
        assert!(close(pow10(-100), 1e-100, 1e-14));
        assert_eq!(pow10(400), f64::INFINITY);
        assert_eq!(pow10(-400), 0.0);
        assert_eq!(mul_pow10(3.0, -1), 0.3);
        assert_eq!(mul_pow10(5.0, -2), 0.05);
        assert_eq!(mul_pow10(25.0, 3), 25_000.0);
    }

    #[test]
    fn decade_floor_at_and_between_powers() {
        assert_eq!(decade_floor(1.0), Some(0));
        assert_eq!(decade_floor(9.999), Some(0));
        assert_eq!(decade_floor(10.0), Some(1));
        assert_eq!(decade_floor(1000.0), Some(3));
        assert_eq!(decade_floor(999.999_999), Some(2));
        assert_eq!(decade_floor(0.001), Some(-3));
        assert_eq!(decade_floor(0.002), Some(-3));
        assert_eq!(decade_floor(1e-300), Some(-300));
        assert_eq!(decade_floor(0.0), None);
        assert_eq!(decade_floor(-1.0), None);
        assert_eq!(decade_floor(f64::NAN), None);
        assert_eq!(decade_floor(f64::INFINITY), None);
        for k in -22..=22 {
            assert_eq!(decade_floor(pow10(k)), Some(k), "10^{k}");
        }
    }

    #[test]
    fn new_validates() {
        assert!(LogScale::new((1.0, 10.0), (0.0, 100.0)).is_some());
        assert!(LogScale::new((1.0, 10.0), (100.0, 0.0)).is_some());
        assert!(LogScale::new((0.0, 10.0), (0.0, 100.0)).is_none());
        assert!(LogScale::new((-1.0, 10.0), (0.0, 100.0)).is_none());
        assert!(LogScale::new((10.0, 10.0), (0.0, 100.0)).is_none());
        assert!(LogScale::new((10.0, 1.0), (0.0, 100.0)).is_none());
        assert!(LogScale::new((1.0, f64::INFINITY), (0.0, 100.0)).is_none());
        assert!(LogScale::new((f64::NAN, 10.0), (0.0, 100.0)).is_none());
        assert!(LogScale::new((1.0, 10.0), (5.0, 5.0)).is_none());
        assert!(LogScale::new((1.0, 10.0), (0.0, f64::NAN)).is_none());
    }

    #[test]
    fn project_hand_computed() {
        let s = LogScale::new((1e-2, 1e3), (0.0, 500.0)).unwrap();
        assert_eq!(s.domain(), (1e-2, 1e3));
        assert_eq!(s.range(), (0.0, 500.0));
        // 5 decades over 500 px: 100 px per decade.
        assert!(s.project(1e-2).abs() < 1e-12);
        assert!(close(s.project(1.0), 200.0, 1e-12));
        assert!(close(s.project(1e3), 500.0, 1e-12));
        assert!(close(s.project(1e4), 600.0, 1e-12));
        assert!(close(s.invert(300.0), 10.0, 1e-12));
        assert!(close(s.invert(-100.0), 1e-3, 1e-12));
    }

    #[test]
    fn reversed_range_for_y_axis() {
        let s = LogScale::new((1.0, 100.0), (400.0, 0.0)).unwrap();
        assert!(close(s.project(1.0), 400.0, 1e-12));
        assert!(close(s.project(10.0), 200.0, 1e-12));
        assert!(s.project(100.0).abs() < 1e-12);
        assert!(close(s.invert(100.0), 10f64.powf(1.5), 1e-12));
    }

    #[test]
    fn non_positive_and_nan_never_panic() {
        let x = LogScale::new((1.0, 100.0), (0.0, 400.0)).unwrap();
        let y = LogScale::new((1.0, 100.0), (400.0, 0.0)).unwrap();
        assert_eq!(x.project(0.0), f64::NEG_INFINITY);
        assert_eq!(x.project(-5.0), f64::NEG_INFINITY);
        assert_eq!(y.project(0.0), f64::INFINITY);
        assert_eq!(y.project(-0.0), f64::INFINITY);
        assert!(x.project(f64::NAN).is_nan());
        assert!(x.invert(f64::NAN).is_nan());
        assert_eq!(x.project(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn contains_is_inclusive() {
        let s = LogScale::new((1.0, 100.0), (0.0, 400.0)).unwrap();
        assert!(s.contains(1.0));
        assert!(s.contains(100.0));
        assert!(s.contains(50.0));
        assert!(!s.contains(0.5));
        assert!(!s.contains(f64::NAN));
    }

    #[test]
    fn zoom_keeps_anchor_and_scales_span() {
        let s = LogScale::new((1e-2, 1e3), (0.0, 500.0)).unwrap();
        let anchor_px = 130.0;
        let anchor_value = s.invert(anchor_px);
        let z = s.zoom(2.0, anchor_px);
        assert!(close(z.project(anchor_value), anchor_px, 1e-12));
        let (d0, d1) = z.domain();
        assert!(close((d1 / d0).log10(), 2.5, 1e-12));
        // Zooming back out restores the original domain.
        let back = z.zoom(0.5, anchor_px);
        assert!(close(back.domain().0, 1e-2, 1e-12));
        assert!(close(back.domain().1, 1e3, 1e-12));
        // Zoom about the centre of 1..100 over 0..200 px gives sqrt(10)..sqrt(1000).
        let c = LogScale::new((1.0, 100.0), (0.0, 200.0))
            .unwrap()
            .zoom(2.0, 100.0);
        assert!(close(c.domain().0, 10f64.sqrt(), 1e-12));
        assert!(close(c.domain().1, 1000f64.sqrt(), 1e-12));
    }

    #[test]
    fn zoom_rejects_bad_input() {
        let s = LogScale::new((1.0, 100.0), (0.0, 200.0)).unwrap();
        assert_eq!(s.zoom(0.0, 10.0), s);
        assert_eq!(s.zoom(-2.0, 10.0), s);
        assert_eq!(s.zoom(f64::NAN, 10.0), s);
        assert_eq!(s.zoom(f64::INFINITY, 10.0), s);
        assert_eq!(s.zoom(2.0, f64::NAN), s);
        // Zooming out past the f64 range leaves the scale unchanged.
        assert_eq!(s.zoom(1e-6, 100.0), s);
        // Zooming in until the ends coincide leaves it unchanged too.
        assert_eq!(s.zoom(1e300, 100.0), s);
    }

    #[test]
    fn pan_shifts_by_exact_pixels() {
        let s = LogScale::new((1.0, 1e4), (0.0, 400.0)).unwrap();
        let p = s.pan(100.0);
        // Content moved right by one decade's worth of pixels: the domain moved left a decade.
        assert!(close(p.domain().0, 0.1, 1e-12));
        assert!(close(p.domain().1, 1e3, 1e-12));
        for v in [0.3, 1.0, 42.0, 1e4] {
            assert!(close(p.project(v), s.project(v) + 100.0, 1e-12));
        }
        assert_eq!(s.pan(f64::NAN), s);
        assert_eq!(s.pan(1e9), s);
    }

    #[test]
    fn pan_on_reversed_axis() {
        let s = LogScale::new((1.0, 1e4), (400.0, 0.0)).unwrap();
        let p = s.pan(-100.0);
        for v in [0.3, 1.0, 42.0, 1e4] {
            assert!(close(p.project(v), s.project(v) - 100.0, 1e-12));
        }
        // Dragging content up by a decade's worth of pixels reveals a smaller decade at the bottom.
        assert!(close(p.domain().0, 0.1, 1e-12));
        assert!(close(p.domain().1, 1e3, 1e-12));
    }

    #[test]
    fn rect_helpers() {
        let r = Rect::new(10.0, 20.0, 100.0, 50.0);
        assert_eq!(r.right(), 110.0);
        assert_eq!(r.bottom(), 70.0);
        assert_eq!(r.center(), (60.0, 45.0));
        assert!(r.contains(10.0, 20.0));
        assert!(r.contains(110.0, 70.0));
        assert!(r.contains(50.0, 50.0));
        assert!(!r.contains(9.9, 50.0));
        assert!(!r.contains(50.0, 70.1));
        assert!(!r.contains(f64::NAN, 50.0));
        assert_eq!(Rect::default(), Rect::new(0.0, 0.0, 0.0, 0.0));
    }

    #[test]
    fn viewport_orientation() {
        let area = Rect::new(50.0, 10.0, 500.0, 300.0);
        let v = Viewport::new((1e-2, 1e3), (1e9, 1e12), area).unwrap();
        let (px, py) = v.project((1e-2, 1e9));
        assert!((px - 50.0).abs() < 1e-9 && (py - 310.0).abs() < 1e-9);
        let (px, py) = v.project((1e3, 1e12));
        assert!((px - 550.0).abs() < 1e-9 && (py - 10.0).abs() < 1e-9);
        let (x, y) = v.invert((300.0, 160.0));
        assert!(close(x, 10f64.powf(0.5), 1e-12));
        assert!(close(y, 10f64.powf(10.5), 1e-12));
        assert!(Viewport::new((1.0, 10.0), (1.0, 10.0), Rect::new(0.0, 0.0, 0.0, 10.0)).is_none());
        assert!(Viewport::new((1.0, 10.0), (0.0, 10.0), area).is_none());
    }

    #[test]
    fn viewport_zoom_and_pan() {
        let v = Viewport::new((1.0, 1e4), (1.0, 1e4), Rect::new(0.0, 0.0, 400.0, 400.0)).unwrap();
        let anchor = (120.0, 330.0);
        let data = v.invert(anchor);
        let z = v.zoom(3.0, anchor);
        let back = z.project(data);
        assert!((back.0 - anchor.0).abs() < 1e-9 && (back.1 - anchor.1).abs() < 1e-9);
        let p = v.pan((10.0, -20.0));
        let (a, b) = (v.project((5.0, 5.0)), p.project((5.0, 5.0)));
        assert!((b.0 - a.0 - 10.0).abs() < 1e-9 && (b.1 - a.1 + 20.0).abs() < 1e-9);
        assert_eq!(z.area, v.area);
    }

    #[test]
    fn fit_hand_computed() {
        assert_eq!(
            fit_log_domain([0.02, 3.0, 700.0], 0.0),
            Some((0.01, 1000.0))
        );
        assert_eq!(fit_log_domain([0.01, 1000.0], 0.0), Some((0.01, 1000.0)));
        // Padding half a decade: log10(0.02) - 0.5 = -2.2 -> 10^-3; log10(700) + 0.5 = 3.35 -> 10^4.
        assert_eq!(fit_log_domain([0.02, 700.0], 0.5), Some((1e-3, 1e4)));
        // Exact decade ends with padding widen by whole decades.
        assert_eq!(fit_log_domain([10.0, 100.0], 1.0), Some((1.0, 1000.0)));
    }

    #[test]
    fn fit_ignores_bad_values() {
        let values = [
            f64::NAN,
            -3.0,
            0.0,
            5.0,
            f64::INFINITY,
            50.0,
            f64::NEG_INFINITY,
        ];
        assert_eq!(fit_log_domain(values, 0.0), Some((1.0, 100.0)));
        assert_eq!(fit_log_domain([0.0, -1.0, f64::NAN], 0.0), None);
        assert_eq!(fit_log_domain(std::iter::empty(), 1.0), None);
        assert_eq!(fit_log_domain([5.0], f64::NAN), Some((1.0, 10.0)));
        assert_eq!(fit_log_domain([5.0], -3.0), Some((1.0, 10.0)));
    }

    #[test]
    fn fit_single_or_equal_values_is_non_empty() {
        assert_eq!(fit_log_domain([5.0], 0.0), Some((1.0, 10.0)));
        assert_eq!(fit_log_domain([5.0, 5.0, 5.0], 0.0), Some((1.0, 10.0)));
        assert_eq!(fit_log_domain([100.0], 0.0), Some((100.0, 1000.0)));
        assert_eq!(fit_log_domain([0.001], 0.0), Some((0.001, 0.01)));
        assert_eq!(fit_log_domain([100.0], 0.25), Some((10.0, 1000.0)));
    }

    #[test]
    fn fit_clamps_extremes() {
        let (lo, hi) = fit_log_domain([1e-320, 1e300], 50.0).unwrap();
        assert!(lo > 0.0 && hi.is_finite() && lo < hi);
    }

    proptest! {
        #[test]
        fn project_invert_round_trip(
            lo_exp in -30.0f64..30.0,
            span in 0.01f64..20.0,
            r0 in -1e4f64..1e4,
            width in prop_oneof![-5e3f64..-1.0, 1.0f64..5e3],
            t in -1.0f64..2.0,
        ) {
            let domain = (10f64.powf(lo_exp), 10f64.powf(lo_exp + span));
            let s = LogScale::new(domain, (r0, r0 + width)).unwrap();
            let px = r0 + t * width;
            let back = s.project(s.invert(px));
            prop_assert!((back - px).abs() <= 1e-9 * (r0.abs() + width.abs()), "{px} -> {back}");
            let v = 10f64.powf(lo_exp + t * span);
            prop_assert!(close(s.invert(s.project(v)), v, 1e-9));
        }

        #[test]
        fn zoom_keeps_anchor_fixed(
            lo_exp in -20.0f64..20.0,
            span in 0.1f64..12.0,
            factor in 0.1f64..10.0,
            t in 0.0f64..1.0,
        ) {
            let s = LogScale::new((10f64.powf(lo_exp), 10f64.powf(lo_exp + span)), (600.0, 40.0)).unwrap();
            let anchor = 600.0 - 560.0 * t;
            let z = s.zoom(factor, anchor);
            prop_assert!((z.project(s.invert(anchor)) - anchor).abs() < 1e-7);
        }

        #[test]
        fn pan_moves_content_by_delta(
            lo_exp in -20.0f64..20.0,
            span in 0.1f64..12.0,
            delta in -1000.0f64..1000.0,
            t in 0.0f64..1.0,
        ) {
            let s = LogScale::new((10f64.powf(lo_exp), 10f64.powf(lo_exp + span)), (0.0, 800.0)).unwrap();
            let v = s.invert(800.0 * t);
            let p = s.pan(delta);
            prop_assert!((p.project(v) - (s.project(v) + delta)).abs() < 1e-7);
        }

        #[test]
        fn fit_contains_all_values(values in proptest::collection::vec(1e-30f64..1e30, 1..20), pad in 0.0f64..3.0) {
            let (lo, hi) = fit_log_domain(values.iter().copied(), pad).unwrap();
            prop_assert!(lo < hi);
            prop_assert_eq!(decade_floor(lo).map(pow10), Some(lo));
            prop_assert_eq!(decade_floor(hi).map(pow10), Some(hi));
            for v in values {
                prop_assert!(lo <= v && v <= hi);
            }
        }
    }
}
