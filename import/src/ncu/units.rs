//! Nsight Compute's units, converted to SI base units.
//!
//! Without `--print-units base`, ncu scales values to readable units (`Kbyte`, `Mbyte`,
//! `usecond`, `msecond`, `cycle/nsecond`, …); the unit is in the `Metric Unit` column (details
//! page) or the row under the header (raw page). Prefixes are taken as decimal (K = 10^3), as
//! the SI-style names say; `roofline profile` asks for `--print-units base`, which sidesteps the
//! question for its own captures. A rate `a/b` scales by 10^(prefix(a) − prefix(b)).

/// The decimal exponent of a word's SI prefix (`Kbyte` → 3), `None` for an unknown word.
fn prefix_exponent(word: &str) -> Option<i32> {
    // Short forms (`--print-units base` writes `ns` for durations in recent versions).
    match word {
        "s" | "B" => return Some(0),
        "ms" | "KB" | "kB" => return Some(if word == "ms" { -3 } else { 3 }),
        "us" | "µs" | "\u{3bc}s" => return Some(-6),
        "ns" => return Some(-9),
        "MB" => return Some(6),
        "GB" => return Some(9),
        "TB" => return Some(12),
        _ => {}
    }
    // Longest matching base unit first: the prefix is whatever precedes it.
    const BASES: [&str; 14] = [
        "second",
        "byte",
        "cycle",
        "inst",
        "warp",
        "sector",
        "request",
        "wavefront",
        "thread",
        "block",
        "register",
        "flop",
        "op",
        "hz",
    ];
    let lower = word.to_ascii_lowercase();
    for base in BASES {
        if lower.ends_with(base) && word.len() >= base.len() {
            let prefix = &word[..word.len() - base.len()];
            return match prefix {
                "" => Some(0),
                "n" => Some(-9),
                "u" | "µ" | "\u{3bc}" => Some(-6),
                "m" => Some(-3),
                "K" | "k" => Some(3),
                "M" => Some(6),
                "G" => Some(9),
                "T" => Some(12),
                "P" => Some(15),
                _ => None,
            };
        }
    }
    None
}

/// The power of ten that turns a value in `unit` into SI base units (seconds, bytes, cycles,
/// instructions; rates per second). `None` for a unit we do not know.
///
/// `exponent("Kbyte") == Some(3)`, `exponent("usecond") == Some(-6)`,
/// `exponent("cycle/nsecond") == Some(9)`, `exponent("") == Some(0)`.
pub fn exponent(unit: &str) -> Option<i32> {
    let unit = unit.trim();
    if unit.is_empty() || unit == "%" {
        return Some(0);
    }
    match unit.split_once('/') {
        Some((a, b)) => Some(prefix_exponent(a.trim())? - prefix_exponent(b.trim())?),
        None => prefix_exponent(unit),
    }
}

/// Converts a value in `unit` to SI base units, correctly rounded (multiplying by 10^k, or
/// dividing by 10^-k, both exact powers of ten up to 10^22). `None` for an unknown unit.
pub fn to_base(value: f64, unit: &str) -> Option<f64> {
    let e = exponent(unit)?;
    let p = 10f64.powi(e.abs());
    Some(if e >= 0 { value * p } else { value / p })
}

/// Removes thousands separators when they are used as such: one to three digits, then groups
/// of exactly three, and none after the decimal point (`10,240,000` → `10240000`, `1,234.5` →
/// `1234.5`). `None` for any other comma (`1,5`, `5715,88`, `1,,000`, `,5`), which may be a
/// decimal comma or a merged column, so that a value is never read a hundred times too large.
pub fn strip_thousands(text: &str) -> Option<String> {
    if !text.contains(',') {
        return Some(text.to_string());
    }
    let (sign, rest) = match text.strip_prefix(['+', '-']) {
        Some(r) => (&text[..1], r),
        None => ("", text),
    };
    let int_end = rest.find(['.', 'e', 'E']).unwrap_or(rest.len());
    let (int, tail) = rest.split_at(int_end);
    if tail.contains(',') {
        return None;
    }
    let mut groups = int.split(',');
    let first = groups.next()?;
    let digits = |g: &str| g.bytes().all(|b| b.is_ascii_digit());
    if first.is_empty() || first.len() > 3 || !digits(first) {
        return None;
    }
    let mut out = format!("{sign}{first}");
    for g in groups {
        if g.len() != 3 || !digits(g) {
            return None;
        }
        out.push_str(g);
    }
    out.push_str(tail);
    Some(out)
}

/// Parses an ncu value: thousands separators removed (see [`strip_thousands`]); `n/a`, empty,
/// non-numbers and misplaced commas are `None`.
pub fn parse_value(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("n/a") || t.eq_ignore_ascii_case("no data") {
        return None;
    }
    strip_thousands(t)?
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

/// What a unit measures, as far as checking it against a metric goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    /// No unit (base units assumed: `--print-units base` on the raw page without a units row).
    None,
    /// `%`.
    Percent,
    /// Seconds and their prefixes.
    Time,
    /// Bytes and their prefixes.
    Bytes,
    /// Cycles and their prefixes.
    Cycles,
    /// A clock rate: cycles per unit of time, or hertz.
    Frequency,
    /// Another quantity per unit of time (`byte/second`, `inst/second`).
    Rate,
    /// A quotient whose denominator is not a time (`cycle/byte`, `inst/warp`).
    Ratio,
    /// Another count (instructions, warps, sectors, operations…).
    Count,
}

/// The dimension of an ncu unit (`msecond` → [`Dimension::Time`], `Kbyte` → [`Dimension::Bytes`],
/// `cycle/nsecond` → [`Dimension::Frequency`], `byte/second` → [`Dimension::Rate`]): a quotient
/// is told by its numerator's family and whether its denominator is a time.
pub fn dimension(unit: &str) -> Dimension {
    let u = unit.trim();
    if u.is_empty() {
        return Dimension::None;
    }
    if u == "%" {
        return Dimension::Percent;
    }
    let lower = u.to_ascii_lowercase();
    if let Some((num, den)) = u.split_once('/') {
        if dimension(den) != Dimension::Time {
            return Dimension::Ratio;
        }
        return match dimension(num) {
            Dimension::Cycles => Dimension::Frequency,
            _ => Dimension::Rate,
        };
    }
    if lower.ends_with("hz") {
        return Dimension::Frequency;
    }
    if lower.ends_with("second") || matches!(u, "s" | "ms" | "us" | "µs" | "\u{3bc}s" | "ns") {
        Dimension::Time
    } else if lower.ends_with("byte") || matches!(u, "B" | "KB" | "kB" | "MB" | "GB" | "TB") {
        Dimension::Bytes
    } else if lower.ends_with("cycle") {
        Dimension::Cycles
    } else {
        Dimension::Count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(exponent("byte"), Some(0));
        assert_eq!(exponent("Kbyte"), Some(3));
        assert_eq!(exponent("Mbyte"), Some(6));
        assert_eq!(exponent("Gbyte"), Some(9));
        assert_eq!(exponent("nsecond"), Some(-9));
        assert_eq!(exponent("usecond"), Some(-6));
        assert_eq!(exponent("msecond"), Some(-3));
        assert_eq!(exponent("second"), Some(0));
        assert_eq!(exponent("cycle"), Some(0));
        assert_eq!(exponent("Kcycle"), Some(3));
        assert_eq!(exponent("cycle/second"), Some(0));
        assert_eq!(exponent("cycle/nsecond"), Some(9));
        assert_eq!(exponent("cycle/usecond"), Some(6));
        assert_eq!(exponent("Gbyte/second"), Some(9));
        assert_eq!(exponent("inst"), Some(0));
        assert_eq!(exponent("Minst"), Some(6));
        assert_eq!(exponent(""), Some(0));
        assert_eq!(exponent("Xbyte"), None);
        assert_eq!(exponent("cycle/fortnight"), None);
        assert_eq!(exponent("ns"), Some(-9));
        assert_eq!(exponent("us"), Some(-6));
        assert_eq!(exponent("ms"), Some(-3));
        assert_eq!(exponent("cycle/ns"), Some(9));
        assert_eq!(exponent("MB"), Some(6));
        assert_eq!(exponent("GHz"), Some(9));
        // Correctly rounded: 10 µs is exactly the f64 nearest to 1e-5.
        assert_eq!(to_base(10.0, "usecond"), Some(1e-5));
        assert_eq!(to_base(1.5, "cycle/nsecond"), Some(1.5e9));
        assert_eq!(to_base(1.5, "Mbyte"), Some(1.5e6));
    }

    #[test]
    fn values() {
        assert_eq!(parse_value("10,240,000"), Some(10_240_000.0));
        assert_eq!(parse_value("5715.88"), Some(5715.88));
        assert_eq!(parse_value("n/a"), None);
        assert_eq!(parse_value(""), None);
        assert_eq!(parse_value("nan"), None);
        assert_eq!(parse_value("12 %"), None);
        assert_eq!(parse_value("1,234.5"), Some(1234.5));
        assert_eq!(parse_value("-1,234"), Some(-1234.0));
        assert_eq!(parse_value("999"), Some(999.0));
    }

    #[test]
    fn commas_are_thousands_separators_only_between_groups_of_three() {
        // A decimal comma or a stray one is refused, never stripped (`5715,88` is not 571588).
        for bad in [
            "1,5",
            "5715,88",
            "1,,000",
            ",5",
            "1,0000",
            "1234,567",
            "1.5,000",
            "1,000.5,0",
        ] {
            assert_eq!(parse_value(bad), None, "{bad}");
        }
    }

    #[test]
    fn dimensions() {
        assert_eq!(dimension("msecond"), Dimension::Time);
        assert_eq!(dimension("ns"), Dimension::Time);
        assert_eq!(dimension("Kbyte"), Dimension::Bytes);
        assert_eq!(dimension("MB"), Dimension::Bytes);
        assert_eq!(dimension("cycle"), Dimension::Cycles);
        assert_eq!(dimension("cycle/nsecond"), Dimension::Frequency);
        assert_eq!(dimension("Kcycle/usecond"), Dimension::Frequency);
        assert_eq!(dimension("GHz"), Dimension::Frequency);
        assert_eq!(dimension("byte/second"), Dimension::Rate);
        assert_eq!(dimension("Gbyte/second"), Dimension::Rate);
        assert_eq!(dimension("cycle/byte"), Dimension::Ratio);
        assert_eq!(dimension("inst/warp"), Dimension::Ratio);
        assert_eq!(dimension("inst"), Dimension::Count);
        assert_eq!(dimension("%"), Dimension::Percent);
        assert_eq!(dimension(""), Dimension::None);
    }
}
