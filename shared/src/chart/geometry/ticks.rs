//! Tick placement for logarithmic and linear axes.
//!
//! Log axes get a major tick per power of ten, "nice" 2× and 5× ticks when fewer than two
//! decades are visible, and unlabelled minor ticks at 2–9 × 10^k. Linear ticks follow Paul
//! Heckbert, "Nice numbers for graph labels", in *Graphics Gems* (Academic Press, 1990): steps
//! of 1, 2 or 5 × 10^k. Tick values are built as `m × 10^k` with [`mul_pow10`], so they are the
//! `f64`s nearest the decimal numbers (`0.3`, never `0.30000000000000004`).

use super::scale::{decade_floor, mul_pow10};
use crate::analysis::si::format_si;

/// Relative slack for ticks at the domain ends, so that a domain that drifted by rounding
/// (after zoom and pan) still shows its end ticks.
const EDGE_TOLERANCE: f64 = 1e-9;

/// Minor ticks are drawn only when the domain spans at most this many decades.
const MINOR_MAX_DECADES: f64 = 6.0;

/// Labelled 2× and 5× ticks are added only when the domain spans fewer decades than this.
const NICE_MAX_DECADES: f64 = 2.0;

/// Most linear ticks requested in the narrow-domain fallback of [`log_ticks`].
const FALLBACK_MAX_TARGET: usize = 5;

/// Step-downs tried by [`nice_linear_ticks`] to reach two ticks; each divides the step by at
/// least 2, and about three always suffice.
const MAX_STEP_DOWNS: usize = 8;

/// One tick on an axis, in data units.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    /// Position in data units.
    pub value: f64,
    /// Major tick (longer mark, grid line); minor ticks are never labelled.
    pub major: bool,
    /// Label text, when this tick is labelled.
    pub label: Option<String>,
}

impl Tick {
    /// Sort rank among ticks at the same value: labelled beats major beats minor.
    fn rank(&self) -> (bool, bool) {
        (self.label.is_some(), self.major)
    }
}

/// Ticks for a log axis over `domain`, sorted by value, labels formatted with [`format_si`]
/// and `unit`.
///
/// * Major ticks at every power of ten inside the domain. If more than `max_labels` would be
///   labelled, only decades whose exponent is a multiple of `n` are (the smallest `n` that
///   fits), so labels stay put while panning.
/// * When the domain spans fewer than 2 decades, labelled major ticks at 2 and 5 × 10^k as
///   well (only 5 × 10^k, or neither, if that would exceed `max_labels`). If that still gives
///   fewer than two labels (a deeply zoomed axis), labelled majors come from
///   [`nice_linear_ticks`] instead.
/// * Unlabelled minor ticks at 2..=9 × 10^k when the domain spans at most 6 decades.
///
/// `max_labels == 0` labels nothing. An invalid domain (not positive and finite, or
/// `domain.0 >= domain.1`) gives no ticks. Ticks within a relative 1e-9 of an end count as
/// inside.
pub fn log_ticks(domain: (f64, f64), unit: &str, max_labels: usize) -> Vec<Tick> {
    let (lo, hi) = domain;
    let (Some(k_lo), Some(k_hi)) = (decade_floor(lo), decade_floor(hi)) else {
        return Vec::new();
    };
    if lo >= hi {
        return Vec::new();
    }
    let decades = hi.log10() - lo.log10();
    let inside = |v: f64| v >= lo * (1.0 - EDGE_TOLERANCE) && v <= hi * (1.0 + EDGE_TOLERANCE);
    // All m × 10^k inside the domain for the given multipliers, ascending.
    let multiples = |ms: &[u8]| -> Vec<f64> {
        (k_lo..=k_hi.saturating_add(1))
            .flat_map(|k| ms.iter().map(move |&m| mul_pow10(f64::from(m), k)))
            .filter(|&v| inside(v))
            .collect()
    };
    let labelled = |value: f64| Tick {
        value,
        major: true,
        label: Some(format_si(value, unit)),
    };
    let unlabelled = |value: f64, major: bool| Tick {
        value,
        major,
        label: None,
    };

    let mut ticks = Vec::new();

    // Decades, every stride-th labelled by exponent.
    let decade_values = multiples(&[1]);
    let stride = match max_labels {
        0 => None,
        max => i32::try_from(decade_values.len().div_ceil(max).max(1)).ok(),
    };
    let mut label_count = 0;
    for &v in &decade_values {
        let labelled_decade = match (stride, decade_floor(v)) {
            (Some(s), Some(k)) => k.rem_euclid(s) == 0,
            _ => false,
        };
        if labelled_decade {
            label_count += 1;
            ticks.push(labelled(v));
        } else {
            ticks.push(unlabelled(v, true));
        }
    }

    if decades < NICE_MAX_DECADES && max_labels > 0 {
        let twos_and_fives = multiples(&[2, 5]);
        let fives = multiples(&[5]);
        let nice = if label_count + twos_and_fives.len() <= max_labels {
            twos_and_fives
        } else if label_count + fives.len() <= max_labels {
            fives
        } else {
            Vec::new()
        };
        label_count += nice.len();
        ticks.extend(nice.into_iter().map(labelled));

        if label_count < 2 && max_labels >= 2 {
            ticks.retain(|t| t.label.is_none());
            ticks.extend(
                linear_fallback(lo, hi, max_labels)
                    .into_iter()
                    .map(labelled),
            );
        }
    }

    if decades <= MINOR_MAX_DECADES {
        let minors = multiples(&[2, 3, 4, 5, 6, 7, 8, 9]);
        ticks.extend(minors.into_iter().map(|v| unlabelled(v, false)));
    }

    // Sort and merge coincident ticks, keeping the highest-ranked one.
    crate::analysis::kernel::sort_slice_by(&mut ticks, |a, b| a.value.total_cmp(&b.value));
    let mut merged: Vec<Tick> = Vec::with_capacity(ticks.len());
    for tick in ticks {
        match merged.last_mut() {
            Some(last) if (tick.value - last.value).abs() <= EDGE_TOLERANCE * tick.value => {
                if tick.rank() > last.rank() {
                    *last = tick;
                }
            }
            _ => merged.push(tick),
        }
    }
    merged
}

/// At most `max_labels` (>= 2) nice linear tick values in `[lo, hi]`, preferring fewer, evenly
/// spaced ticks over thinning.
fn linear_fallback(lo: f64, hi: f64, max_labels: usize) -> Vec<f64> {
    let mut densest = Vec::new();
    for target in (2..=max_labels.min(FALLBACK_MAX_TARGET)).rev() {
        let ticks = nice_linear_ticks(lo, hi, target);
        if !ticks.is_empty() && ticks.len() <= max_labels {
            return ticks;
        }
        if densest.is_empty() {
            densest = ticks;
        }
    }
    let stride = densest.len().div_ceil(max_labels.max(1));
    densest.into_iter().step_by(stride.max(1)).collect()
}

/// Heckbert's nice number near `x > 0`, as `(mantissa, exponent)` with mantissa 1, 2 or 5:
/// rounded to the nearest nice number when `round`, else the smallest nice number >= `x`.
fn nice_num(x: f64, round: bool) -> Option<(f64, i32)> {
    let exp = decade_floor(x)?;
    let f = x / mul_pow10(1.0, exp);
    let nice = if round {
        match f {
            f if f < 1.5 => 1.0,
            f if f < 3.0 => 2.0,
            f if f < 7.0 => 5.0,
            _ => 10.0,
        }
    } else {
        match f {
            f if f <= 1.0 => 1.0,
            f if f <= 2.0 => 2.0,
            f if f <= 5.0 => 5.0,
            _ => 10.0,
        }
    };
    Some(if nice == 10.0 {
        (1.0, exp + 1)
    } else {
        (nice, exp)
    })
}

/// About `target_count` "nice" tick values covering `[min, max]`: multiples of a step of
/// 1, 2 or 5 × 10^k, after Heckbert, "Nice numbers for graph labels", Graphics Gems (1990).
///
/// The step is Heckbert's (nice range, then the rounded nice step for `target_count - 1`
/// intervals), but only multiples inside `[min, max]` are returned (the "tight" variant,
/// with a relative slack of 1e-9 step at the ends), ascending. The ends may be given in either
/// order; `min == max` gives that single value; a `target_count` below 2 counts as 2. When
/// the ends differ at least two ticks are returned (the step is halved or so until two fit).
/// Non-finite input, or a range too wide to represent, gives no ticks.
pub fn nice_linear_ticks(min: f64, max: f64, target_count: usize) -> Vec<f64> {
    if !min.is_finite() || !max.is_finite() {
        return Vec::new();
    }
    let (lo, hi) = if min <= max { (min, max) } else { (max, min) };
    if lo == hi {
        return vec![lo];
    }
    let intervals = target_count.max(2) - 1;
    let Some((range_m, range_e)) = nice_num(hi - lo, false) else {
        return Vec::new();
    };
    let nice_range = mul_pow10(range_m, range_e);
    let Some((mut step_m, mut step_e)) = nice_num(nice_range / intervals as f64, true) else {
        return Vec::new();
    };
    // The tight variant can leave fewer than two multiples inside: step down 5 -> 2 -> 1 -> 0.5.
    for _ in 0..MAX_STEP_DOWNS {
        let ticks = multiples_in(lo, hi, step_m, step_e, 4 * intervals + 10);
        if ticks.len() >= 2 {
            return ticks;
        }
        (step_m, step_e) = if step_m == 5.0 {
            (2.0, step_e)
        } else if step_m == 2.0 {
            (1.0, step_e)
        } else {
            (5.0, step_e - 1)
        };
    }
    multiples_in(lo, hi, step_m, step_e, 4 * intervals + 10)
}

/// The multiples of `step_m × 10^step_e` inside `[lo, hi]` (with slack), at most `cap` of them.
fn multiples_in(lo: f64, hi: f64, step_m: f64, step_e: i32, cap: usize) -> Vec<f64> {
    let step = mul_pow10(step_m, step_e);
    let first = (lo / step - EDGE_TOLERANCE).ceil();
    let last = (hi / step + EDGE_TOLERANCE).floor();
    if !(first.is_finite() && last.is_finite()) || last < first {
        return Vec::new();
    }
    // Bounded even if the step is lost in rounding against huge offsets.
    let count = ((last - first) as usize).saturating_add(1).min(cap);
    let mut ticks: Vec<f64> = (0..count)
        .map(|i| mul_pow10((first + i as f64) * step_m, step_e))
        .collect();
    ticks.dedup();
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn values(ticks: &[Tick], pred: impl Fn(&Tick) -> bool) -> Vec<f64> {
        ticks.iter().filter(|t| pred(t)).map(|t| t.value).collect()
    }

    fn labels(ticks: &[Tick]) -> Vec<&str> {
        ticks.iter().filter_map(|t| t.label.as_deref()).collect()
    }

    #[test]
    fn five_decades() {
        let ticks = log_ticks((1e-2, 1e3), "", 10);
        assert_eq!(
            values(&ticks, |t| t.major),
            [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]
        );
        assert_eq!(labels(&ticks), ["10 m", "100 m", "1", "10", "100", "1 k"]);
        let minors = values(&ticks, |t| !t.major);
        assert_eq!(minors.len(), 5 * 8);
        assert_eq!(&minors[..3], [0.02, 0.03, 0.04]);
        assert_eq!(minors[minors.len() - 1], 900.0);
        assert!(ticks.iter().all(|t| t.major || t.label.is_none()));
    }

    #[test]
    fn labels_use_unit() {
        let ticks = log_ticks((1e9, 1e12), "FLOP/s", 10);
        assert_eq!(
            labels(&ticks),
            ["1 GFLOP/s", "10 GFLOP/s", "100 GFLOP/s", "1 TFLOP/s"]
        );
    }

    #[test]
    fn label_stride_by_exponent() {
        let ticks = log_ticks((1.0, 1e12), "", 4);
        assert_eq!(values(&ticks, |t| t.major).len(), 13);
        assert_eq!(values(&ticks, |t| t.label.is_some()), [1.0, 1e4, 1e8, 1e12]);
        // Over 6 decades: no minor ticks.
        assert!(ticks.iter().all(|t| t.major));

        // 10^1..10^7: 7 decades, 3 labels allowed, stride 3, aligned to exponents 3 and 6.
        let ticks = log_ticks((10.0, 1e7), "", 3);
        assert_eq!(values(&ticks, |t| t.label.is_some()), [1e3, 1e6]);
    }

    #[test]
    fn minor_threshold_is_six_decades() {
        assert!(log_ticks((1.0, 1e6), "", 10).iter().any(|t| !t.major));
        assert!(log_ticks((1.0, 1e7), "", 10).iter().all(|t| t.major));
    }

    #[test]
    fn nice_two_and_five_under_two_decades() {
        let ticks = log_ticks((1.0, 50.0), "B", 10);
        assert_eq!(
            values(&ticks, |t| t.major),
            [1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
        );
        assert_eq!(
            labels(&ticks),
            ["1 B", "2 B", "5 B", "10 B", "20 B", "50 B"]
        );
        assert_eq!(
            values(&ticks, |t| !t.major),
            [3.0, 4.0, 6.0, 7.0, 8.0, 9.0, 30.0, 40.0]
        );
    }

    #[test]
    fn nice_ticks_respect_max_labels() {
        let ticks = log_ticks((1.0, 50.0), "", 4);
        assert_eq!(
            values(&ticks, |t| t.label.is_some()),
            [1.0, 5.0, 10.0, 50.0]
        );
        // 2 and 20 remain as minor ticks.
        assert!(values(&ticks, |t| !t.major).contains(&2.0));
        let ticks = log_ticks((1.0, 50.0), "", 2);
        assert_eq!(values(&ticks, |t| t.label.is_some()), [1.0, 10.0]);
    }

    #[test]
    fn exactly_two_decades_has_no_nice_ticks() {
        let ticks = log_ticks((1.0, 100.0), "", 10);
        assert_eq!(values(&ticks, |t| t.label.is_some()), [1.0, 10.0, 100.0]);
    }

    #[test]
    fn narrow_domain_falls_back_to_linear() {
        let ticks = log_ticks((3.0, 8.0), "", 5);
        assert_eq!(values(&ticks, |t| t.label.is_some()), [4.0, 6.0, 8.0]);
        assert!(ticks.iter().filter(|t| t.label.is_some()).all(|t| t.major));
        // Minor ticks still mark the integers that carry no label.
        assert_eq!(values(&ticks, |t| !t.major), [3.0, 5.0, 7.0]);

        let ticks = log_ticks((0.25, 0.4), "s", 5);
        assert_eq!(labels(&ticks), ["250 ms", "300 ms", "350 ms", "400 ms"]);
    }

    #[test]
    fn no_labels_when_max_labels_zero() {
        let ticks = log_ticks((1.0, 50.0), "", 0);
        assert!(ticks.iter().all(|t| t.label.is_none()));
        assert_eq!(values(&ticks, |t| t.major), [1.0, 10.0]);
    }

    #[test]
    fn single_label_allowed() {
        let ticks = log_ticks((1.0, 1e4), "", 1);
        assert_eq!(values(&ticks, |t| t.label.is_some()), [1.0]);
        let ticks = log_ticks((3.0, 8.0), "", 1);
        assert_eq!(labels(&ticks), ["5"]);
    }

    #[test]
    fn end_ticks_survive_rounding_drift() {
        let ticks = log_ticks((0.01 * (1.0 + 1e-12), 1000.0 * (1.0 - 1e-12)), "", 10);
        assert_eq!(
            values(&ticks, |t| t.major),
            [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]
        );
    }

    #[test]
    fn invalid_domains_give_nothing() {
        assert!(log_ticks((0.0, 10.0), "", 5).is_empty());
        assert!(log_ticks((10.0, 1.0), "", 5).is_empty());
        assert!(log_ticks((5.0, 5.0), "", 5).is_empty());
        assert!(log_ticks((1.0, f64::INFINITY), "", 5).is_empty());
        assert!(log_ticks((f64::NAN, 10.0), "", 5).is_empty());
    }

    #[test]
    fn huge_domain() {
        let ticks = log_ticks((1e-300, 1e300), "", 10);
        assert_eq!(ticks.len(), 601);
        assert!(labels(&ticks).len() <= 10);
    }

    #[test]
    fn heckbert_examples() {
        assert_eq!(
            nice_linear_ticks(0.0, 10.0, 5),
            [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        assert_eq!(nice_linear_ticks(0.0, 100.0, 3), [0.0, 50.0, 100.0]);
        assert_eq!(nice_linear_ticks(-1.0, 1.0, 5), [-1.0, -0.5, 0.0, 0.5, 1.0]);
        assert_eq!(nice_linear_ticks(0.1, 0.35, 5), [0.1, 0.2, 0.3]);
        assert_eq!(nice_linear_ticks(12.0, 87.0, 5), [20.0, 40.0, 60.0, 80.0]);
        assert_eq!(nice_linear_ticks(1e15, 1e15 + 4.0, 5).len(), 5);
        // Step 1 leaves nothing inside 1.2..1.8; it steps down to 0.5 (one tick), then 0.2.
        assert_eq!(nice_linear_ticks(1.2, 1.8, 2), [1.2, 1.4, 1.6, 1.8]);
    }

    #[test]
    fn linear_edge_cases() {
        assert_eq!(
            nice_linear_ticks(10.0, 0.0, 5),
            [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        assert_eq!(nice_linear_ticks(5.0, 5.0, 5), [5.0]);
        assert_eq!(
            nice_linear_ticks(0.0, 10.0, 0),
            nice_linear_ticks(0.0, 10.0, 2)
        );
        assert!(nice_linear_ticks(f64::NAN, 1.0, 5).is_empty());
        assert!(nice_linear_ticks(0.0, f64::INFINITY, 5).is_empty());
        assert!(nice_linear_ticks(-f64::MAX, f64::MAX, 5).is_empty());
    }

    proptest! {
        #[test]
        fn linear_ticks_are_inside_sorted_and_evenly_spaced(
            a in -1e6f64..1e6,
            width in 1e-6f64..1e6,
            target in 0usize..12,
        ) {
            let ticks = nice_linear_ticks(a, a + width, target);
            prop_assert!(ticks.len() >= 2);
            prop_assert!(ticks.len() <= 2 * target.max(2) + 2);
            let slack = width * 1e-6;
            for w in ticks.windows(2) {
                prop_assert!(w[0] < w[1]);
                let step = ticks[1] - ticks[0];
                prop_assert!(((w[1] - w[0]) - step).abs() <= step * 1e-6 + 1e-9);
            }
            for t in &ticks {
                prop_assert!(*t >= a - slack && *t <= a + width + slack);
            }
        }

        #[test]
        fn log_ticks_invariants(
            lo_exp in -20.0f64..20.0,
            span in 0.01f64..30.0,
            max_labels in 0usize..12,
        ) {
            let (lo, hi) = (10f64.powf(lo_exp), 10f64.powf(lo_exp + span));
            let ticks = log_ticks((lo, hi), "B", max_labels);
            let label_count = ticks.iter().filter(|t| t.label.is_some()).count();
            prop_assert!(label_count <= max_labels);
            if max_labels >= 2 && span >= 0.5 {
                prop_assert!(label_count >= 1);
            }
            for w in ticks.windows(2) {
                prop_assert!(w[0].value < w[1].value);
            }
            for t in &ticks {
                prop_assert!(t.value >= lo * (1.0 - 1e-9) && t.value <= hi * (1.0 + 1e-9));
                prop_assert!(t.major || t.label.is_none());
            }
        }
    }
}
