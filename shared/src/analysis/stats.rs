//! Small statistics used wherever repeated measurements are summarised: one [`median`] for the
//! whole toolkit (the collector's timings, the aggregation of launches, the sweep's plateaus).

/// The median of the finite values of `values` (NaN and infinities are ignored); `None` when
/// there is none. For an even count, the mean of the two middle values.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut s: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return None;
    }
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        f64::midpoint(s[n / 2 - 1], s[n / 2])
    })
}

/// [`median`], or NaN when there is no finite value (for figures that are validated later,
/// where NaN is refused with the figure's path).
pub fn median_or_nan(values: &[f64]) -> f64 {
    median(values).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_non_finite_samples() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[3.0, f64::NAN, 1.0, 2.0, f64::INFINITY]), Some(2.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN]), None);
        assert!(median_or_nan(&[]).is_nan());
        assert_eq!(median_or_nan(&[1.0, 2.0]), 1.5);
    }
}
