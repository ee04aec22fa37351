//! `roofline info --baseline`: the kernels of a bundle beside a baseline's, matched by name, as
//! the viewer's compare mode shows them (`roofline_model::compare`); with `--group-by op` (or
//! `module`) both runs are read per operator (or module) and matched by its name, and the table's
//! first column is headed `operator` (the CSV's stays `kernel`: its columns are stable).

use std::fmt::Write as _;

use roofline_model::Bundle;
use roofline_model::chart::Analysed;
use roofline_model::compare::{CompareRow, Comparison, Presence, bound_key, compare};
use roofline_model::geometry::si::format_si;

use super::info::columns;

/// Both bundles' first devices analysed against their own ceilings, compared.
fn comparison(current: &Bundle, baseline: &Bundle) -> Comparison {
    compare(
        &Analysed::new(current, None, None),
        &Analysed::new(baseline, None, None),
    )
}

fn time(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format_si(v, "s"))
}

fn signed(v: f64) -> String {
    if v < 0.0 {
        format!("−{}", format_si(-v, "s"))
    } else if v > 0.0 {
        format!("+{}", format_si(v, "s"))
    } else {
        "0 s".into()
    }
}

fn change(r: &CompareRow) -> String {
    match r.presence {
        Presence::Both => r.bound_change().unwrap_or_else(|| "–".into()),
        p => p.key().into(),
    }
}

/// The comparison as aligned text: the summary line, then the `top` kernels of the current run
/// by time (all when `None`) and the kernels gone since the baseline.
pub fn to_table(current: &Bundle, baseline: &Bundle, top: Option<usize>) -> Vec<u8> {
    let c = comparison(current, baseline);
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", c.summary.line());
    let mut rows = vec![
        [
            c.summary.unit.noun(),
            "baseline",
            "time",
            "Δ time",
            "speed-up",
            "bound",
            "change",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let current_rows = c.rows.iter().filter(|r| r.presence != Presence::Gone);
    let gone_rows = c.rows.iter().filter(|r| r.presence == Presence::Gone);
    for r in current_rows
        .take(top.unwrap_or(usize::MAX))
        .chain(gone_rows)
    {
        rows.push(vec![
            r.short_name(),
            time(r.baseline.as_ref().map(|s| s.time_s)),
            time(r.current.as_ref().map(|s| s.time_s)),
            signed(r.delta_s()),
            r.speedup()
                .map_or_else(|| "–".into(), |x| format!("{x:.2}×")),
            bound_key(r.current.as_ref().and_then(|s| s.bound)).into(),
            change(r),
        ]);
    }
    out.push_str(&columns(
        &rows,
        &[false, true, true, true, true, false, false],
    ));
    out.into_bytes()
}

/// RFC 4180 quoting.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The comparison as CSV, one row per kernel name of either run, SI base units (seconds),
/// empty cells for unknowns.
pub fn to_csv(current: &Bundle, baseline: &Bundle) -> Vec<u8> {
    let c = comparison(current, baseline);
    let mut out = String::from(
        "kernel,presence,baseline_time_s,time_s,delta_s,speedup,baseline_bound,bound\n",
    );
    let num = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:e}"));
    for r in &c.rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{:e},{},{},{}",
            field(&r.name),
            r.presence.key(),
            num(r.baseline.as_ref().map(|s| s.time_s)),
            num(r.current.as_ref().map(|s| s.time_s)),
            r.delta_s(),
            num(r.speedup()),
            r.baseline
                .as_ref()
                .and_then(|s| s.bound)
                .map_or("", |b| b.key()),
            r.current
                .as_ref()
                .and_then(|s| s.bound)
                .map_or("", |b| b.key()),
        );
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(f: &str) -> Bundle {
        let path = format!(
            "{}/../tests/fixtures/bundles/{f}",
            env!("CARGO_MANIFEST_DIR")
        );
        roofline_model::parse_bundle(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn table_and_csv_hold_the_models_figures() {
        let (cur, base) = (
            bundle("deepcam-v100-amp-fw.json"),
            bundle("deepcam-v100-fp32-fw.json"),
        );
        let c = comparison(&cur, &base);
        let table = String::from_utf8(to_table(&cur, &base, Some(5))).unwrap();
        assert!(table.starts_with(&c.summary.line()), "{table}");
        let csv = String::from_utf8(to_csv(&cur, &base)).unwrap();
        assert_eq!(csv.lines().count(), c.rows.len() + 1);
        let matched = c.rows.iter().find(|r| r.speedup().is_some()).unwrap();
        let line = csv
            .lines()
            .find(|l| l.starts_with(&field(&matched.name)))
            .unwrap();
        assert!(
            line.contains(&format!("{:e}", matched.speedup().unwrap())),
            "{line}"
        );
        // The table lists 5 current kernels and every gone one.
        assert_eq!(table.lines().count(), 2 + 1 + 5 + c.summary.gone, "{table}");
    }
}
