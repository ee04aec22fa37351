//! Provenance for the bundles the collector writes: tool, version, command line, host, date.

use std::time::{SystemTime, UNIX_EPOCH};

use roofline_model::bundle::Provenance;

/// Provenance of a bundle written by this process now.
pub fn current() -> Provenance {
    Provenance {
        tool: "roofline".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command_line: std::env::args().collect(),
        host: host_name(),
        created: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .ok()
            .map(|d| rfc3339_utc(d.as_secs())),
        driver_version: None,
        cuda_version: None,
        ncu_version: None,
        merged_from: Vec::new(),
    }
}

/// The host name, from `HOSTNAME` or `/etc/hostname`.
pub fn host_name() -> Option<String> {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Formats seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC),
/// with H. Hinnant's days-to-civil algorithm.
pub fn rfc3339_utc(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Days since 0000-03-01 in 400-year eras (Hinnant, "chrono-Compatible Low-Level Date
    // Algorithms").
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!("{year:04}-{month:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::rfc3339_utc;

    #[test]
    fn known_dates() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_591_779_920), "2020-06-10T09:05:20Z");
        assert_eq!(rfc3339_utc(1_795_314_227), "2026-11-22T02:23:47Z");
    }
}
