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

/// Parses an ncu value: thousands separators removed; `n/a`, empty and non-numbers are `None`.
pub fn parse_value(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("n/a") || t.eq_ignore_ascii_case("no data") {
        return None;
    }
    let cleaned: String = t.chars().filter(|c| *c != ',').collect();
    cleaned.parse::<f64>().ok().filter(|v| v.is_finite())
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
    }
}
