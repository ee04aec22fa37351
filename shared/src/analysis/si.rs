//! SI-prefixed number formatting for axis labels, tooltips and legends.
//!
//! Values are rounded to a fixed number of significant digits *first* (using the standard
//! library's correctly rounded scientific formatting), and the prefix is chosen from the rounded
//! value, so `999.96e9` becomes `1 T…` rather than `1000 G…`. Trailing zeros are trimmed.
//! The micro prefix is written as `µ` (U+00B5 MICRO SIGN).

/// SI prefixes from atto (10^-18) to exa (10^18), one per power of 1000.
const PREFIXES: [&str; 13] = [
    "a", "f", "p", "n", "\u{b5}", "m", "", "k", "M", "G", "T", "P", "E",
];

/// Decimal exponent of the first entry of [`PREFIXES`].
const MIN_PREFIX_EXP: i32 = -18;

/// Decimal exponent of the last entry of [`PREFIXES`].
const MAX_PREFIX_EXP: i32 = 18;

/// Formats `value` with an SI prefix and 3 significant digits, trailing zeros trimmed.
///
/// `format_si(1.5e12, "FLOP/s")` is `"1.5 TFLOP/s"`, `format_si(828.758e9, "B/s")` is
/// `"829 GB/s"`, `format_si(0.0, "B")` is `"0 B"`. Negative values keep their sign. Values
/// beyond the prefix range (below 10^-18 or from 10^21 on) fall back to scientific notation
/// (`"1.5e25 B"`). NaN and infinities are written `"NaN"`, `"∞"` and `"-∞"`, followed by the
/// unit. An empty unit and empty prefix give the bare number. Never panics.
pub fn format_si(value: f64, unit: &str) -> String {
    format_si_with_digits(value, unit, 3)
}

/// Formats a dimensionless ratio (an arithmetic intensity, FLOP/byte) without SI prefixes,
/// where "m" would read as a unit: plain decimals with 3 significant digits from 0.001 to below
/// 100 000 (`0.001`, `18.3`, `12500`), scientific notation outside (`1e-4`, `2.5e6`).
pub fn format_plain(value: f64) -> String {
    format_plain_with_digits(value, 3)
}

/// [`format_plain`] with `significant` digits (at least 1): plain decimals from 0.001 to below
/// 100 000 (or 10^`significant` when larger), scientific notation outside; trailing zeros
/// dropped. The viewer's editable ceilings use 6 digits, so that `4.2` reads as `4.2`, not as
/// `4.1999999999999`.
pub fn format_plain_with_digits(value: f64, significant: usize) -> String {
    if !value.is_finite() {
        return format_si(value, "");
    }
    if value == 0.0 {
        return "0".into();
    }
    let sig = significant.clamp(1, 17);
    let sci = format!("{value:.prec$e}", prec = sig - 1);
    let Some((m, e)) = sci.split_once('e') else {
        return sci;
    };
    let Ok(exp) = e.parse::<i32>() else {
        return sci;
    };
    let m = m.trim_end_matches('0').trim_end_matches('.');
    let sig_i = i32::try_from(sig).unwrap_or(17);
    if (-3..sig_i.max(5)).contains(&exp) {
        let decimals = usize::try_from((sig_i - 1 - exp).max(0)).unwrap_or(0);
        let s = format!("{value:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{m}e{exp}")
    }
}

/// Like [`format_si`] but with 2 significant digits: compact enough for tick labels.
pub fn format_si_compact(value: f64, unit: &str) -> String {
    format_si_with_digits(value, unit, 2)
}

/// Like [`format_si`] with `significant` significant digits (clamped to `1..=17`).
pub fn format_si_with_digits(value: f64, unit: &str, significant: usize) -> String {
    if value.is_nan() {
        return join("NaN", "", unit);
    }
    if value.is_infinite() {
        return join(if value > 0.0 { "\u{221e}" } else { "-\u{221e}" }, "", unit);
    }
    if value == 0.0 {
        return join("0", "", unit);
    }
    let significant = significant.clamp(1, 17);
    let sign = if value < 0.0 { "-" } else { "" };

    // Correctly rounded scientific notation, e.g. "8.29e11"; the exponent already reflects any
    // rounding carry (999.96e9 -> "1.00e12").
    let sci = format!("{:.*e}", significant - 1, value.abs());
    let Some((mantissa, exp)) = sci.split_once('e') else {
        return sci;
    };
    let Ok(exp) = exp.parse::<i32>() else {
        return sci;
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();

    if !(MIN_PREFIX_EXP..MAX_PREFIX_EXP + 3).contains(&exp) {
        let number = format!("{sign}{}e{exp}", place_point(&digits, 1));
        return join(&number, "", unit);
    }
    let prefix_exp = exp.div_euclid(3) * 3;
    let prefix = PREFIXES[((prefix_exp - MIN_PREFIX_EXP) / 3) as usize];
    // The mantissa's first digit is worth 10^(exp - prefix_exp), i.e. 1, 10 or 100.
    let number = format!("{sign}{}", place_point(&digits, exp - prefix_exp + 1));
    join(&number, prefix, unit)
}

/// Writes the digit string `digits` with the decimal point after `int_len` digits (padding with
/// zeros on either side as needed) and trims trailing fractional zeros.
fn place_point(digits: &str, int_len: i32) -> String {
    let len = digits.len() as i32;
    let mut out = if int_len <= 0 {
        format!("0.{}{digits}", "0".repeat((-int_len) as usize))
    } else if int_len >= len {
        format!("{digits}{}", "0".repeat((int_len - len) as usize))
    } else {
        let (int, frac) = digits.split_at(int_len as usize);
        format!("{int}.{frac}")
    };
    if out.contains('.') {
        let trimmed = out.trim_end_matches('0').trim_end_matches('.').len();
        out.truncate(trimmed);
    }
    out
}

/// Joins number, prefix and unit: `"1.5 TFLOP/s"`, `"5 k"`, or the bare number.
fn join(number: &str, prefix: &str, unit: &str) -> String {
    if prefix.is_empty() && unit.is_empty() {
        number.to_owned()
    } else {
        format!("{number} {prefix}{unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn examples_from_the_spec() {
        assert_eq!(format_si(1.5e12, "FLOP/s"), "1.5 TFLOP/s");
        assert_eq!(format_si(2.0e-6, "s"), "2 \u{b5}s");
        assert_eq!(format_si(828.758e9, "B/s"), "829 GB/s");
        assert_eq!(format_si(0.0, "B"), "0 B");
        assert_eq!(format_si(1000.0, "B"), "1 kB");
    }

    #[test]
    fn rounding_carries_into_next_prefix() {
        assert_eq!(format_si(999.96e9, "B/s"), "1 TB/s");
        assert_eq!(format_si(999.4e9, "B/s"), "999 GB/s");
        assert_eq!(format_si(0.000_999_6, "s"), "1 ms");
        assert_eq!(format_si(999.5, ""), "1 k");
    }

    #[test]
    fn every_prefix() {
        let expected = [
            (1e-18, "1 aX"),
            (1e-15, "1 fX"),
            (1e-12, "1 pX"),
            (1e-9, "1 nX"),
            (1e-6, "1 \u{b5}X"),
            (1e-3, "1 mX"),
            (1.0, "1 X"),
            (1e3, "1 kX"),
            (1e6, "1 MX"),
            (1e9, "1 GX"),
            (1e12, "1 TX"),
            (1e15, "1 PX"),
            (1e18, "1 EX"),
        ];
        for (value, text) in expected {
            assert_eq!(format_si(value, "X"), text, "{value}");
        }
    }

    #[test]
    fn three_significant_digits_and_trimming() {
        assert_eq!(format_si(12.345, "B"), "12.3 B");
        assert_eq!(format_si(123.45e3, "B"), "123 kB");
        assert_eq!(format_si(1.2e3, "B"), "1.2 kB");
        assert_eq!(format_si(10.0, "B"), "10 B");
        assert_eq!(format_si(100.0, "B"), "100 B");
        assert_eq!(format_si(0.0125, "s"), "12.5 ms");
        assert_eq!(format_si(15158.6e9, "FLOP/s"), "15.2 TFLOP/s");
    }

    #[test]
    fn negatives_and_signed_zero() {
        assert_eq!(format_si(-2.5e-3, "V"), "-2.5 mV");
        assert_eq!(format_si(-999.96e9, "B/s"), "-1 TB/s");
        assert_eq!(format_si(-0.0, "B"), "0 B");
    }

    #[test]
    fn empty_unit() {
        assert_eq!(format_si(5.0, ""), "5");
        assert_eq!(format_si(5e3, ""), "5 k");
        assert_eq!(format_si(0.0, ""), "0");
    }

    #[test]
    fn non_finite() {
        assert_eq!(format_si(f64::NAN, ""), "NaN");
        assert_eq!(format_si(f64::INFINITY, ""), "\u{221e}");
        assert_eq!(format_si(f64::NEG_INFINITY, "B/s"), "-\u{221e} B/s");
    }

    #[test]
    fn outside_prefix_range_uses_scientific() {
        assert_eq!(format_si(1.5e25, "B"), "1.5e25 B");
        assert_eq!(format_si(1e-19, "s"), "1e-19 s");
        assert_eq!(format_si(999e18, "B"), "999 EB");
        assert_eq!(format_si(f64::MAX, ""), "1.8e308");
        assert_eq!(format_si(5e-324, ""), "4.94e-324");
    }

    #[test]
    fn compact_and_custom_digits() {
        assert_eq!(format_si_compact(828.758e9, "B/s"), "830 GB/s");
        assert_eq!(format_si_compact(1.24e-6, "s"), "1.2 \u{b5}s");
        assert_eq!(format_si_with_digits(828.758e9, "B/s", 1), "800 GB/s");
        assert_eq!(format_si_with_digits(828.758e9, "B/s", 5), "828.76 GB/s");
        assert_eq!(format_si_with_digits(828.758e9, "B/s", 0), "800 GB/s");
    }

    proptest! {
        #[test]
        fn parses_back_within_rounding(value in -1e20f64..1e20) {
            let text = format_si(value, "");
            let (number, prefix) = text.split_once(' ').unwrap_or((text.as_str(), ""));
            let scale = match prefix {
                "" => 1.0,
                p => {
                    let i = PREFIXES.iter().position(|q| *q == p).unwrap();
                    10f64.powi(MIN_PREFIX_EXP + 3 * i as i32)
                }
            };
            let parsed: f64 = number.parse::<f64>().unwrap() * scale;
            prop_assert!((parsed - value).abs() <= value.abs() * 5.001e-3 + 1e-300, "{value} -> {text}");
        }

        #[test]
        fn never_panics(bits in any::<u64>()) {
            let _ = format_si(f64::from_bits(bits), "B");
        }
    }

    #[test]
    fn plain_numbers_for_ratios() {
        assert_eq!(format_plain(0.001), "0.001");
        assert_eq!(format_plain(0.01), "0.01");
        assert_eq!(format_plain(18.290_743), "18.3");
        assert_eq!(format_plain(1000.0), "1000");
        assert_eq!(format_plain(12_500.0), "12500");
        assert_eq!(format_plain(0.875_3), "0.875");
        assert_eq!(format_plain(1e-4), "1e-4");
        assert_eq!(format_plain(2.5e6), "2.5e6");
        assert_eq!(format_plain(0.0), "0");
        assert_eq!(format_plain(-3.0), "-3");
    }

    #[test]
    fn plain_numbers_with_more_digits() {
        assert_eq!(format_plain_with_digits(4.199_999_999_999_9, 6), "4.2");
        assert_eq!(format_plain_with_digits(14_336.0, 6), "14336");
        assert_eq!(format_plain_with_digits(2_996.771_234, 6), "2996.77");
        assert_eq!(format_plain_with_digits(828.757_9, 6), "828.758");
        assert_eq!(format_plain_with_digits(123_456.7, 6), "123457");
        assert_eq!(format_plain_with_digits(1.5e7, 6), "1.5e7");
        assert_eq!(format_plain_with_digits(0.000_5, 6), "5e-4");
        assert_eq!(format_plain_with_digits(7.0, 0), "7");
    }

    proptest! {
        #[test]
        fn plain_numbers_read_back_within_their_digits(v in 1e-6f64..1e12) {
            let back: f64 = format_plain_with_digits(v, 6).parse().unwrap();
            prop_assert!((back - v).abs() <= v * 1e-5, "{v} -> {back}");
        }
    }
}
