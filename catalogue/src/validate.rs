//! The catalogue's rules, checked on every parse: every figure cites a listed source, a derived
//! figure gives its formula, ceilings are never "recorded", values are finite and positive,
//! counts and sizes whole, clocks in a plausible range, ids unique, and so on. A file that breaks
//! one is refused with every problem listed.

use std::collections::HashSet;

use crate::Catalogue;
use crate::entry::{Figure, GpuEntry, Kind, Vendor, parse_compute_capability};
use crate::error::Problem;

/// Every rule the catalogue breaks, in file order; empty when it is valid.
pub(crate) fn validate(c: &Catalogue) -> Vec<Problem> {
    let mut problems = Vec::new();
    let sources: HashSet<&str> = c.sources.iter().map(|s| s.id.as_str()).collect();
    let gpus: HashSet<&str> = c.gpus.iter().map(|g| g.id.as_str()).collect();

    unique_ids(
        "sources",
        c.sources.iter().map(|s| s.id.as_str()),
        &mut problems,
    );
    unique_ids("gpus", c.gpus.iter().map(|g| g.id.as_str()), &mut problems);
    unique_ids(
        "systems",
        c.systems.iter().map(|s| s.id.as_str()),
        &mut problems,
    );

    for s in &c.sources {
        for (field, text) in [
            ("title", &s.title),
            ("publisher", &s.publisher),
            ("where", &s.location),
            ("consulted", &s.consulted),
        ] {
            if text.trim().is_empty() {
                problems.push(Problem::Empty {
                    at: format!("sources[{}].{field}", s.id),
                });
            }
        }
    }

    for g in &c.gpus {
        entry(g, &sources, &mut problems);
    }

    for s in &c.systems {
        let at = format!("systems[{}]", s.id);
        for gpu in &s.gpu_ids {
            if !gpus.contains(gpu.as_str()) {
                problems.push(Problem::UnknownGpu {
                    system: s.id.clone(),
                    gpu: gpu.clone(),
                });
            }
        }
        for src in &s.sources {
            cite(&format!("{at}.sources"), src, &sources, &mut problems);
        }
        if s.gpus_per_node == 0 {
            problems.push(Problem::NotPositive {
                at: format!("{at}.gpus_per_node"),
                value: 0.0,
            });
        }
        for (path, f) in s.figures() {
            figure(&format!("{at}.{path}"), f, true, &sources, &mut problems);
        }
    }
    problems
}

fn unique_ids<'a>(
    list: &'static str,
    ids: impl Iterator<Item = &'a str>,
    problems: &mut Vec<Problem>,
) {
    let mut seen = HashSet::new();
    for id in ids {
        let well_formed = !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !well_formed {
            problems.push(Problem::BadId {
                list,
                id: id.to_string(),
            });
        }
        if !seen.insert(id) {
            problems.push(Problem::DuplicateId {
                list,
                id: id.to_string(),
            });
        }
    }
}

fn cite(at: &str, source: &str, sources: &HashSet<&str>, problems: &mut Vec<Problem>) {
    if !sources.contains(source) {
        problems.push(Problem::UnknownSource {
            at: at.to_string(),
            source_id: source.to_string(),
        });
    }
}

/// The fields that describe the device rather than bound it: the only ones a recorded value may
/// fill.
const IDENTITY_FIELDS: [&str; 5] = [
    "sm_count",
    "memory_bytes",
    "l2_bytes",
    "last_level_cache_bytes",
    "boost_clock_hz",
];

/// Fields whose value is a count or a size in bytes.
const WHOLE_FIELDS: [&str; 4] = [
    "sm_count",
    "memory_bytes",
    "l2_bytes",
    "last_level_cache_bytes",
];

fn entry(g: &GpuEntry, sources: &HashSet<&str>, problems: &mut Vec<Problem>) {
    let at = format!("gpus[{}]", g.id);
    for (field, text) in [("product", &g.product), ("architecture", &g.architecture)] {
        if text.trim().is_empty() {
            problems.push(Problem::Empty {
                at: format!("{at}.{field}"),
            });
        }
    }
    if let Some(cc) = &g.compute_capability
        && parse_compute_capability(cc).is_none()
    {
        problems.push(Problem::BadComputeCapability {
            entry: g.id.clone(),
            value: cc.clone(),
        });
    }
    match (g.vendor, &g.gfx) {
        (Vendor::Amd, None) => problems.push(Problem::VendorMismatch {
            entry: g.id.clone(),
            what: "an AMD entry needs its gfx target",
        }),
        (Vendor::Nvidia, Some(_)) => problems.push(Problem::VendorMismatch {
            entry: g.id.clone(),
            what: "an NVIDIA entry has no gfx target",
        }),
        _ => {}
    }
    if g.per_gcd && g.vendor != Vendor::Amd {
        problems.push(Problem::VendorMismatch {
            entry: g.id.clone(),
            what: "per_gcd is for AMD multi-die packages",
        });
    }
    if g.names.is_empty() {
        problems.push(Problem::BadNames {
            entry: g.id.clone(),
            what: "no name".into(),
        });
    }
    let mut seen = HashSet::new();
    for n in &g.names {
        if n.trim().is_empty() {
            problems.push(Problem::BadNames {
                entry: g.id.clone(),
                what: "an empty name".into(),
            });
        } else if !seen.insert(n.trim().to_lowercase()) {
            problems.push(Problem::BadNames {
                entry: g.id.clone(),
                what: format!("{n:?} twice"),
            });
        }
    }
    if g.identity_sources.is_empty() {
        problems.push(Problem::Empty {
            at: format!("{at}.identity_sources"),
        });
    }
    for s in &g.identity_sources {
        cite(&format!("{at}.identity_sources"), s, sources, problems);
    }
    for (path, f) in g.figures() {
        let ceiling = !IDENTITY_FIELDS.contains(&path.as_str());
        figure(&format!("{at}.{path}"), f, ceiling, sources, problems);
        if WHOLE_FIELDS.contains(&path.as_str()) && f.value.fract() != 0.0 {
            problems.push(Problem::NotWhole {
                at: format!("{at}.{path}"),
                value: f.value,
            });
        }
        if path.ends_with("_hz") {
            clock(&format!("{at}.{path}"), f.value, problems);
        }
        if path == "sm_count" && f.value > f64::from(u32::MAX) {
            problems.push(Problem::NotWhole {
                at: format!("{at}.{path}"),
                value: f.value,
            });
        }
    }
    for (k, l) in g.links.iter() {
        let lat = format!("{at}.links.{k}");
        cite(&lat, &l.source, sources, problems);
        if l.bytes_per_s.is_some() && l.direction.is_none() {
            problems.push(Problem::LinkWithoutDirection { at: lat });
        }
    }
}

fn clock(at: &str, hz: f64, problems: &mut Vec<Problem>) {
    if !(1e8..=5e9).contains(&hz) {
        problems.push(Problem::ClockOutOfRange {
            at: at.to_string(),
            value: hz,
        });
    }
}

fn figure(
    at: &str,
    f: &Figure,
    ceiling: bool,
    sources: &HashSet<&str>,
    problems: &mut Vec<Problem>,
) {
    cite(at, &f.source, sources, problems);
    if !(f.value.is_finite() && f.value > 0.0) {
        problems.push(Problem::NotPositive {
            at: at.to_string(),
            value: f.value,
        });
    }
    match (f.kind, &f.formula) {
        (Kind::Derived, None) => problems.push(Problem::DerivedWithoutFormula { at: at.into() }),
        (Kind::Derived, Some(t)) if t.trim().is_empty() => {
            problems.push(Problem::DerivedWithoutFormula { at: at.into() });
        }
        (Kind::Datasheet | Kind::Recorded, Some(_)) => {
            problems.push(Problem::FormulaWithoutDerived { at: at.into() });
        }
        _ => {}
    }
    if ceiling && f.kind == Kind::Recorded {
        problems.push(Problem::RecordedCeiling { at: at.into() });
    }
    if let Some(c) = f.clock_hz {
        clock(&format!("{at}.clock_hz"), c, problems);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GPUS_JSON;

    fn catalogue() -> Catalogue {
        serde_json::from_str(GPUS_JSON).expect("catalogue/gpus.json parses")
    }

    #[test]
    fn the_shipped_catalogue_breaks_no_rule() {
        let problems = validate(&catalogue());
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn an_unknown_source_is_reported_with_its_path() {
        let mut c = catalogue();
        c.gpus[0].dram_bytes_per_s.as_mut().unwrap().source = "nowhere".into();
        let problems = validate(&c);
        assert_eq!(
            problems,
            vec![Problem::UnknownSource {
                at: format!("gpus[{}].dram_bytes_per_s", c.gpus[0].id),
                source_id: "nowhere".into(),
            }]
        );
    }

    #[test]
    fn a_derived_figure_needs_its_formula_and_only_it_has_one() {
        let mut c = catalogue();
        let f = c.gpus[0].dram_bytes_per_s.as_mut().unwrap();
        f.kind = Kind::Derived;
        f.formula = None;
        assert!(matches!(
            validate(&c)[..],
            [Problem::DerivedWithoutFormula { .. }]
        ));
        let f = c.gpus[0].dram_bytes_per_s.as_mut().unwrap();
        f.kind = Kind::Datasheet;
        f.formula = Some("x".into());
        assert!(matches!(
            validate(&c)[..],
            [Problem::FormulaWithoutDerived { .. }]
        ));
    }

    #[test]
    fn a_ceiling_is_never_recorded() {
        let mut c = catalogue();
        c.gpus[0].dram_bytes_per_s.as_mut().unwrap().kind = Kind::Recorded;
        assert!(matches!(
            validate(&c)[..],
            [Problem::RecordedCeiling { .. }]
        ));
    }

    #[test]
    fn a_clock_in_mhz_is_caught() {
        let mut c = catalogue();
        let e = c
            .gpus
            .iter_mut()
            .find(|g| g.boost_clock_hz.is_some())
            .unwrap();
        e.boost_clock_hz.as_mut().unwrap().value = 1410.0;
        assert!(matches!(
            validate(&c)[..],
            [Problem::ClockOutOfRange { .. }]
        ));
    }

    #[test]
    fn duplicate_ids_and_bad_values_are_all_reported() {
        let mut c = catalogue();
        let copy = c.gpus[0].clone();
        c.gpus.push(copy);
        c.gpus[1].memory_bytes.value = f64::NAN;
        c.gpus[2].sm_count.as_mut().unwrap().value = 80.5;
        let problems = validate(&c);
        assert!(
            problems
                .iter()
                .any(|p| matches!(p, Problem::DuplicateId { list: "gpus", .. }))
        );
        assert!(
            problems
                .iter()
                .any(|p| matches!(p, Problem::NotPositive { .. }))
        );
        assert!(
            problems
                .iter()
                .any(|p| matches!(p, Problem::NotWhole { .. }))
        );
    }

    #[test]
    fn vendor_rules_hold() {
        let mut c = catalogue();
        let amd = c.gpus.iter_mut().find(|g| g.vendor == Vendor::Amd).unwrap();
        amd.gfx = None;
        assert!(matches!(validate(&c)[..], [Problem::VendorMismatch { .. }]));
    }

    #[test]
    fn a_system_must_name_known_gpus() {
        let mut c = catalogue();
        c.systems[0].gpu_ids.push("nvidia-nothing".into());
        assert!(matches!(validate(&c)[..], [Problem::UnknownGpu { .. }]));
    }

    #[test]
    fn a_link_bandwidth_needs_a_direction() {
        let mut c = catalogue();
        let e = c
            .gpus
            .iter_mut()
            .find(|g| g.links.nvlink.is_some())
            .unwrap();
        e.links.nvlink.as_mut().unwrap().direction = None;
        assert!(matches!(
            validate(&c)[..],
            [Problem::LinkWithoutDirection { .. }]
        ));
    }
}
