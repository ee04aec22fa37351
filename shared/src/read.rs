//! Reading and validating bundles: every failure is a typed error naming the JSON path and the
//! problem. Nothing here panics on any input.
//!
//! Reading happens in three steps: the text must be JSON (else [`ReadError::Syntax`] with line and
//! column), its `schema_version` must be one this build reads (else
//! [`ReadError::UnsupportedVersion`]), its shape must match the types (else [`ReadError::Shape`]
//! with the path), and its figures must make sense (else [`ReadError::Invalid`] listing every
//! problem with its path): finite, non-negative, positive times, known device references, unique
//! devices.

use std::collections::HashSet;
use std::fmt;

use crate::bundle::{Bundle, Kernel, SCHEMA_VERSION};

/// Why a bundle could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    /// The text is not valid JSON.
    #[error("malformed JSON at line {line}, column {column}: {message}{hint}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
        /// An extra explanation (for `NaN` and `Infinity`, which JSON cannot hold), or empty.
        hint: String,
    },
    /// The document is JSON but not an object.
    #[error("a bundle is a JSON object, but this document is {found}")]
    NotAnObject {
        /// What was found instead (`an array`, `a string`).
        found: &'static str,
    },
    /// `schema_version` is missing or not a whole number.
    #[error("`schema_version` is missing or not a whole number; is this a roofline bundle?")]
    MissingVersion,
    /// The bundle is of a version this build cannot read.
    #[error("this bundle is schema v{found}; this build reads v{supported}{advice}")]
    UnsupportedVersion {
        /// The version in the file.
        found: u64,
        /// The version this build reads.
        supported: u32,
        /// What to do about it.
        advice: &'static str,
    },
    /// The JSON does not have the bundle's shape (wrong type, unknown or missing field).
    #[error("at `{path}` (line {line}, column {column}): {message}")]
    Shape {
        /// JSON path, `$.kernels[3].time.total_s` style.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The bundle is well-formed but some figures are impossible.
    #[error("{}", format_issues(.0))]
    Invalid(Vec<Issue>),
}

fn format_issues(issues: &[Issue]) -> String {
    const SHOWN: usize = 8;
    let mut s = format!(
        "{} invalid figure{} in the bundle:",
        issues.len(),
        if issues.len() == 1 { "" } else { "s" }
    );
    for i in issues.iter().take(SHOWN) {
        s.push_str("\n  ");
        s.push_str(&i.to_string());
    }
    if issues.len() > SHOWN {
        s.push_str(&format!("\n  … and {} more", issues.len() - SHOWN));
    }
    s
}

/// One problem found by validation, at a JSON path.
#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
    /// JSON path, `$.kernels[3].time.total_s` style.
    pub path: String,
    /// What is wrong there.
    pub problem: Problem,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.path, self.problem)
    }
}

/// The kinds of impossible figure validation reports.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    /// NaN or ±infinity.
    #[error("{0} is not a finite number")]
    NotFinite(f64),
    /// A count, size or rate below zero.
    #[error("{0} is negative; counts, sizes and rates cannot be")]
    Negative(f64),
    /// A time or rate that must be strictly positive is zero.
    #[error("is zero; a time or rate must be positive")]
    Zero,
    /// A kernel entry covering no launch.
    #[error("a kernel entry must cover at least one launch")]
    NoLaunches,
    /// Bytes given without saying at which memory level.
    #[error(
        "bytes must be given per memory level (`l1`, `l2`, `hbm`), e.g. {{\"hbm\": 1.0e9}}; {0}"
    )]
    BytesWithoutLevel(String),
    /// Two devices share an id.
    #[error("device id {0:?} appears more than once")]
    DuplicateDevice(String),
    /// Two machine entries for one device.
    #[error("device {0:?} has more than one machine entry; merge them into one")]
    DuplicateMachine(String),
    /// A reference to a device the bundle does not declare.
    #[error("refers to device {0:?}, which is not in `devices`")]
    UnknownDevice(String),
    /// A kernel without a device in a bundle with several devices.
    #[error("the bundle has several devices, so each kernel must name its `device`")]
    AmbiguousDevice,
    /// An empty name or id.
    #[error("must not be empty")]
    Empty,
    /// Per-launch statistics out of order.
    #[error(
        "per-launch statistics must satisfy min ≤ mean ≤ max (got min {min}, mean {mean}, max {max})"
    )]
    StatsOutOfOrder {
        /// Minimum.
        min: f64,
        /// Mean.
        mean: f64,
        /// Maximum.
        max: f64,
    },
}

/// Parses and validates a bundle from JSON text.
///
/// A 100,000-launch bundle parses in one typed pass (see `benches/analysis.rs`); the diagnosing
/// pass runs only when that fails.
///
/// # Errors
/// Any [`ReadError`]; the message names the line and column or the JSON path of the problem.
pub fn parse_bundle(text: &str) -> Result<Bundle, ReadError> {
    // A well-formed bundle of this version goes straight into the types, in one pass. Anything
    // else is diagnosed below, where a second, slower pass finds the line, column and path of the
    // first problem; both passes accept exactly the same documents.
    if let Ok(bundle) = serde_json::from_str::<Bundle>(text)
        && bundle.schema_version == SCHEMA_VERSION
    {
        validate(&bundle)?;
        return Ok(bundle);
    }
    parse_diagnosing(text)
}

/// The diagnosing pass: syntax, version, bytes levels, then the shape with its JSON path.
fn parse_diagnosing(text: &str) -> Result<Bundle, ReadError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| syntax_error(text, &e))?;
    check_version(&value)?;
    check_bytes_levels(&value)?;
    let mut de = serde_json::Deserializer::from_str(text);
    let bundle: Bundle = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = json_path(&e.path().to_string());
        let inner = e.into_inner();
        ReadError::Shape {
            path,
            line: inner.line(),
            column: inner.column(),
            message: strip_position(&inner.to_string()),
        }
    })?;
    validate(&bundle)?;
    Ok(bundle)
}

/// Serializes a bundle to pretty JSON after validating it, so that a bundle this crate writes
/// is always one it reads back.
///
/// # Errors
/// [`ReadError::Invalid`] when the bundle holds impossible figures (NaN, negative, zero time).
pub fn to_json(bundle: &Bundle) -> Result<String, ReadError> {
    validate(bundle)?;
    let mut s = serde_json::to_string_pretty(bundle).map_err(|e| ReadError::Shape {
        path: "$".into(),
        line: 0,
        column: 0,
        message: e.to_string(),
    })?;
    s.push('\n');
    Ok(s)
}

fn syntax_error(text: &str, e: &serde_json::Error) -> ReadError {
    let (line, column) = (e.line(), e.column());
    // serde_json points at the offending token; JSON has no NaN or Infinity literals, which is
    // the commonest way a tool writes a non-finite figure.
    let line_text = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let col = column.saturating_sub(1).min(line_text.len());
    let before = line_text.get(..col).unwrap_or("");
    let after = line_text.get(col..).unwrap_or("");
    let hint = ["NaN", "Infinity", "-Infinity", "inf", "nan"]
        .iter()
        .find(|t| after.trim_start().starts_with(*t) || before.trim_end().ends_with(*t))
        .map(|t| format!(" ({t} is not a JSON number: every figure in a bundle must be finite)"))
        .unwrap_or_default();
    ReadError::Syntax {
        line,
        column,
        message: strip_position(&e.to_string()),
        hint,
    }
}

/// serde_json appends " at line L column C"; we report those separately.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Turns serde_path_to_error's `kernels[3].time` into `$.kernels[3].time`.
fn json_path(p: &str) -> String {
    if p == "." || p.is_empty() {
        "$".to_string()
    } else {
        format!("$.{p}")
    }
}

fn check_version(value: &serde_json::Value) -> Result<(), ReadError> {
    let obj = match value {
        serde_json::Value::Object(o) => o,
        serde_json::Value::Array(_) => return Err(ReadError::NotAnObject { found: "an array" }),
        serde_json::Value::String(_) => return Err(ReadError::NotAnObject { found: "a string" }),
        serde_json::Value::Number(_) => return Err(ReadError::NotAnObject { found: "a number" }),
        serde_json::Value::Bool(_) => return Err(ReadError::NotAnObject { found: "a boolean" }),
        serde_json::Value::Null => return Err(ReadError::NotAnObject { found: "null" }),
    };
    let version = obj
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
        .ok_or(ReadError::MissingVersion)?;
    if version == u64::from(SCHEMA_VERSION) {
        return Ok(());
    }
    let advice = if version > u64::from(SCHEMA_VERSION) {
        " (it was written by a newer roofline; upgrade to read it)"
    } else {
        " (version 0 was a pre-release format; re-create the bundle)"
    };
    Err(ReadError::UnsupportedVersion {
        found: version,
        supported: SCHEMA_VERSION,
        advice,
    })
}

/// A kernel whose `bytes` is a bare number, or an object without any known level, gets a
/// specific message rather than serde's generic one.
fn check_bytes_levels(value: &serde_json::Value) -> Result<(), ReadError> {
    let Some(kernels) = value.get("kernels").and_then(serde_json::Value::as_array) else {
        return Ok(());
    };
    let mut issues = Vec::new();
    for (i, k) in kernels.iter().enumerate() {
        let Some(bytes) = k.get("bytes") else {
            continue;
        };
        let path = format!("$.kernels[{i}].bytes");
        match bytes {
            serde_json::Value::Number(n) => issues.push(Issue {
                path,
                problem: Problem::BytesWithoutLevel(format!("got a bare number {n}")),
            }),
            serde_json::Value::Object(o) => {
                let unknown: Vec<&String> = o
                    .keys()
                    .filter(|k| !matches!(k.as_str(), "l1" | "l2" | "hbm"))
                    .collect();
                if !unknown.is_empty() {
                    issues.push(Issue {
                        path,
                        problem: Problem::BytesWithoutLevel(format!(
                            "unknown level{} {}",
                            if unknown.len() == 1 { "" } else { "s" },
                            unknown
                                .iter()
                                .map(|k| format!("{k:?}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                    });
                }
            }
            _ => {}
        }
    }
    if issues.is_empty() {
        Ok(())
    } else {
        Err(ReadError::Invalid(issues))
    }
}

/// Checks the figures of a typed bundle: finite, non-negative, positive times and rates, device
/// references that resolve, unique devices.
///
/// # Errors
/// [`ReadError::Invalid`] listing every problem with its JSON path.
pub fn validate(bundle: &Bundle) -> Result<(), ReadError> {
    let mut v = Validator::default();
    v.bundle(bundle);
    if v.issues.is_empty() {
        Ok(())
    } else {
        Err(ReadError::Invalid(v.issues))
    }
}

#[derive(Default)]
struct Validator {
    issues: Vec<Issue>,
}

impl Validator {
    fn push(&mut self, path: impl Into<String>, problem: Problem) {
        self.issues.push(Issue {
            path: path.into(),
            problem,
        });
    }

    /// A count, size or duration: finite and ≥ 0.
    fn non_negative(&mut self, path: &dyn Fn() -> String, v: f64) {
        if !v.is_finite() {
            self.push(path(), Problem::NotFinite(v));
        } else if v < 0.0 {
            self.push(path(), Problem::Negative(v));
        }
    }

    /// A time or rate: finite and > 0.
    fn positive(&mut self, path: &dyn Fn() -> String, v: f64) {
        if !v.is_finite() {
            self.push(path(), Problem::NotFinite(v));
        } else if v < 0.0 {
            self.push(path(), Problem::Negative(v));
        } else if v == 0.0 {
            self.push(path(), Problem::Zero);
        }
    }

    fn opt_non_negative(&mut self, path: &dyn Fn() -> String, v: Option<f64>) {
        if let Some(v) = v {
            self.non_negative(path, v);
        }
    }

    fn opt_positive(&mut self, path: &dyn Fn() -> String, v: Option<f64>) {
        if let Some(v) = v {
            self.positive(path, v);
        }
    }

    fn samples(&mut self, base: &str, samples: &[f64]) {
        for (j, s) in samples.iter().enumerate() {
            self.non_negative(&|| format!("{base}.samples[{j}]"), *s);
        }
    }

    fn bundle(&mut self, b: &Bundle) {
        let mut ids = HashSet::new();
        for (i, d) in b.devices.iter().enumerate() {
            let p = format!("$.devices[{i}]");
            if d.id.is_empty() {
                self.push(format!("{p}.id"), Problem::Empty);
            }
            if !ids.insert(d.id.as_str()) {
                self.push(format!("{p}.id"), Problem::DuplicateDevice(d.id.clone()));
            }
            self.opt_positive(&|| format!("{p}.sm_clock_hz"), d.sm_clock_hz);
            self.opt_positive(&|| format!("{p}.memory_clock_hz"), d.memory_clock_hz);
            self.opt_non_negative(&|| format!("{p}.memory_bytes"), d.memory_bytes);
            self.opt_non_negative(&|| format!("{p}.l2_bytes"), d.l2_bytes);
        }
        let mut machine_devices = HashSet::new();
        for (i, m) in b.machines.iter().enumerate() {
            let p = format!("$.machines[{i}]");
            if !ids.contains(m.device.as_str()) {
                self.push(
                    format!("{p}.device"),
                    Problem::UnknownDevice(m.device.clone()),
                );
            }
            if !machine_devices.insert(m.device.as_str()) {
                self.push(
                    format!("{p}.device"),
                    Problem::DuplicateMachine(m.device.clone()),
                );
            }
            for (j, c) in m.bandwidth.iter().enumerate() {
                let q = format!("{p}.bandwidth[{j}]");
                self.positive(&|| format!("{q}.value"), c.value);
                self.opt_positive(&|| format!("{q}.clock_hz"), c.clock_hz);
                self.samples(&q, &c.samples);
            }
            for (j, c) in m.compute.iter().enumerate() {
                let q = format!("{p}.compute[{j}]");
                self.positive(&|| format!("{q}.value"), c.value);
                self.opt_positive(&|| format!("{q}.clock_hz"), c.clock_hz);
                self.samples(&q, &c.samples);
            }
            if let Some(l) = &m.launch_overhead {
                let q = format!("{p}.launch_overhead");
                self.positive(&|| format!("{q}.value_s"), l.value_s);
                self.opt_positive(&|| format!("{q}.back_to_back_s"), l.back_to_back_s);
                self.opt_positive(&|| format!("{q}.graph_s"), l.graph_s);
                self.samples(&q, &l.samples);
            }
            for (j, s) in m.sweep.iter().enumerate() {
                let q = format!("{p}.sweep[{j}]");
                self.positive(&|| format!("{q}.working_set_bytes"), s.working_set_bytes);
                self.non_negative(&|| format!("{q}.flops_per_element"), s.flops_per_element);
                self.non_negative(&|| format!("{q}.flops"), s.flops);
                self.non_negative(&|| format!("{q}.bytes"), s.bytes);
                self.positive(&|| format!("{q}.time_s"), s.time_s);
            }
        }
        for (i, k) in b.kernels.iter().enumerate() {
            self.kernel(i, k, &ids, b.devices.len());
        }
    }

    fn kernel(&mut self, i: usize, k: &Kernel, ids: &HashSet<&str>, n_devices: usize) {
        let p = format!("$.kernels[{i}]");
        if k.name.is_empty() {
            self.push(format!("{p}.name"), Problem::Empty);
        }
        if k.launches == 0 {
            self.push(format!("{p}.launches"), Problem::NoLaunches);
        }
        match &k.device {
            Some(d) if !ids.contains(d.as_str()) => {
                self.push(format!("{p}.device"), Problem::UnknownDevice(d.clone()));
            }
            None if n_devices > 1 => self.push(format!("{p}.device"), Problem::AmbiguousDevice),
            _ => {}
        }
        self.positive(&|| format!("{p}.time.total_s"), k.time.total_s);
        if let Some(s) = &k.time.per_launch {
            let q = format!("{p}.time.per_launch");
            self.positive(&|| format!("{q}.min_s"), s.min_s);
            self.positive(&|| format!("{q}.mean_s"), s.mean_s);
            self.positive(&|| format!("{q}.max_s"), s.max_s);
            self.opt_positive(&|| format!("{q}.median_s"), s.median_s);
            self.opt_non_negative(&|| format!("{q}.stddev_s"), s.stddev_s);
            // Allow for rounding in the last digits when statistics were computed elsewhere.
            let tol = 1e-9 * s.max_s.abs();
            if s.min_s > s.max_s || s.min_s > s.mean_s + tol || s.mean_s > s.max_s + tol {
                self.push(
                    q,
                    Problem::StatsOutOfOrder {
                        min: s.min_s,
                        mean: s.mean_s,
                        max: s.max_s,
                    },
                );
            }
        }
        for d in crate::bundle::Datapath::ALL {
            self.opt_non_negative(&|| format!("{p}.flops.{}", d.key()), k.flops.get(d));
        }
        for l in crate::bundle::MemoryLevel::KERNEL_LEVELS {
            self.opt_non_negative(&|| format!("{p}.bytes.{}", l.key()), k.bytes.get(l));
        }
        if let Some(c) = &k.complexity {
            self.non_negative(&|| format!("{p}.complexity.flops"), c.flops);
            self.non_negative(&|| format!("{p}.complexity.bytes"), c.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{
  "schema_version": 1,
  "complete": true,
  "provenance": {"tool": "hand", "tool_version": "0"},
  "devices": [{"id": "0", "name": "Tesla V100-SXM2-16GB"}],
  "kernels": [
    {"name": "k", "launches": 1, "time": {"total_s": 1e-3}, "source": "published",
     "flops": {"fp32": 1e9}, "bytes": {"hbm": 1e8}}
  ]
}"#;

    fn with(find: &str, replace: &str) -> String {
        assert!(MINIMAL.contains(find), "{find}");
        MINIMAL.replacen(find, replace, 1)
    }

    fn invalid(text: &str) -> Vec<Issue> {
        match parse_bundle(text) {
            Err(ReadError::Invalid(issues)) => issues,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn minimal_bundle_reads_and_round_trips() {
        let b = parse_bundle(MINIMAL).unwrap();
        assert_eq!(b.kernels[0].flops.fp32, Some(1e9));
        let again = parse_bundle(&to_json(&b).unwrap()).unwrap();
        assert_eq!(b, again);
    }

    #[test]
    fn the_fast_and_the_diagnosing_pass_agree() {
        let cases = [
            MINIMAL.to_string(),
            with("\"schema_version\": 1", "\"schema_version\": 9"),
            with("\"schema_version\": 1", "\"schema_version\": 1.0"),
            with("{\"hbm\": 1e8}", "1e8"),
            with("{\"hbm\": 1e8}", "{\"dram\": 1e8}"),
            with("\"launches\": 1", "\"launches\": 1, \"launches\": 2"),
            with("\"launches\": 1", "\"launches\": -1"),
            with("\"launches\": 1", "\"launches\": 1, \"colour\": 1"),
            with("1e-3", "0"),
            with("1e-3", "\"1e-3\""),
            MINIMAL.replace("\"complete\": true,", ""),
            "[]".to_string(),
        ];
        for text in &cases {
            let fast = serde_json::from_str::<Bundle>(text)
                .ok()
                .filter(|b| b.schema_version == SCHEMA_VERSION)
                .map(|b| validate(&b).map(|()| b));
            let slow = parse_diagnosing(text);
            match fast {
                Some(f) => assert_eq!(f, slow, "{text}"),
                None => assert!(slow.is_err(), "only the diagnosing pass accepts {text}"),
            }
            assert_eq!(parse_bundle(text), slow, "{text}");
        }
    }

    #[test]
    fn malformed_json_names_line_and_column() {
        let e = parse_bundle("{\n  \"schema_version\": 1,\n  oops\n}").unwrap_err();
        let ReadError::Syntax { line, column, .. } = e else {
            panic!("{e:?}")
        };
        assert_eq!((line, column), (3, 3));
        assert!(
            e.to_string()
                .starts_with("malformed JSON at line 3, column 3")
        );
    }

    #[test]
    fn nan_and_infinity_literals_are_explained() {
        let e = parse_bundle(&with("1e9", "NaN")).unwrap_err();
        assert!(matches!(e, ReadError::Syntax { .. }), "{e:?}");
        assert!(e.to_string().contains("NaN is not a JSON number"), "{e}");
        let e = parse_bundle(&with("1e9", "Infinity")).unwrap_err();
        assert!(
            e.to_string().contains("Infinity is not a JSON number"),
            "{e}"
        );
        // A number too large for f64 is refused by the parser, not turned into infinity.
        assert!(parse_bundle(&with("1e9", "1e999")).is_err());
    }

    #[test]
    fn unknown_versions_are_refused_by_number() {
        let e = parse_bundle(&with("\"schema_version\": 1", "\"schema_version\": 3")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "this bundle is schema v3; this build reads v1 (it was written by a newer roofline; upgrade to read it)"
        );
        let e = parse_bundle(&with("\"schema_version\": 1", "\"schema_version\": 0")).unwrap_err();
        assert!(matches!(e, ReadError::UnsupportedVersion { found: 0, .. }));
        let e =
            parse_bundle(&with("\"schema_version\": 1", "\"schema_version\": \"1\"")).unwrap_err();
        assert_eq!(e, ReadError::MissingVersion);
        assert_eq!(
            parse_bundle("[1, 2]").unwrap_err(),
            ReadError::NotAnObject { found: "an array" }
        );
    }

    #[test]
    fn shape_errors_name_the_path() {
        let e = parse_bundle(&with("\"launches\": 1", "\"launches\": \"one\"")).unwrap_err();
        let ReadError::Shape { path, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(path, "$.kernels[0].launches");
        let e = parse_bundle(&with("\"fp32\"", "\"fp33\"")).unwrap_err();
        let ReadError::Shape { path, message, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(path, "$.kernels[0].flops.fp33");
        assert!(message.contains("unknown field"), "{message}");
        let e = parse_bundle(&with("\"time\": {\"total_s\": 1e-3}, ", "")).unwrap_err();
        assert!(e.to_string().contains("missing field `time`"), "{e}");
    }

    #[test]
    fn impossible_figures_are_listed_with_paths() {
        let issues = invalid(&with("\"total_s\": 1e-3", "\"total_s\": 0"));
        assert_eq!(issues[0].path, "$.kernels[0].time.total_s");
        assert_eq!(issues[0].problem, Problem::Zero);
        let issues = invalid(&with("\"hbm\": 1e8", "\"hbm\": -5"));
        assert_eq!(issues[0].path, "$.kernels[0].bytes.hbm");
        assert_eq!(issues[0].problem, Problem::Negative(-5.0));
        let issues = invalid(&with("\"launches\": 1", "\"launches\": 0"));
        assert_eq!(issues[0].problem, Problem::NoLaunches);
    }

    #[test]
    fn per_launch_statistics_must_be_ordered() {
        let text = with(
            "\"time\": {\"total_s\": 1e-3}",
            "\"time\": {\"total_s\": 1e-3, \"per_launch\": {\"min_s\": 1.000000001, \"mean_s\": 1.0000000005, \"max_s\": 1.0}}",
        );
        let issues = invalid(&text);
        assert!(
            matches!(issues[0].problem, Problem::StatsOutOfOrder { .. }),
            "{issues:?}"
        );
    }

    #[test]
    fn bytes_without_a_level_are_refused() {
        let issues = invalid(&with("{\"hbm\": 1e8}", "1e8"));
        assert_eq!(issues[0].path, "$.kernels[0].bytes");
        assert!(matches!(issues[0].problem, Problem::BytesWithoutLevel(_)));
        let issues = invalid(&with("{\"hbm\": 1e8}", "{\"dram\": 1e8}"));
        assert!(
            issues[0].to_string().contains("unknown level \"dram\""),
            "{}",
            issues[0]
        );
    }

    #[test]
    fn device_references_are_checked() {
        let dup = with(
            "[{\"id\": \"0\", \"name\": \"Tesla V100-SXM2-16GB\"}]",
            "[{\"id\": \"0\", \"name\": \"a\"}, {\"id\": \"0\", \"name\": \"b\"}]",
        );
        let issues = invalid(&dup);
        assert!(
            issues.iter().any(|i| i.path == "$.devices[1].id"
                && i.problem == Problem::DuplicateDevice("0".into()))
        );
        // Two devices and a kernel that names neither.
        assert!(issues.iter().any(|i| i.problem == Problem::AmbiguousDevice));
        let issues = invalid(&with(
            "\"name\": \"k\",",
            "\"name\": \"k\", \"device\": \"7\",",
        ));
        assert_eq!(issues[0].problem, Problem::UnknownDevice("7".into()));
    }

    #[test]
    fn writing_refuses_non_finite_figures() {
        let mut b = parse_bundle(MINIMAL).unwrap();
        b.kernels[0].flops.fp32 = Some(f64::NAN);
        let e = to_json(&b).unwrap_err();
        assert!(
            e.to_string()
                .contains("`$.kernels[0].flops.fp32`: NaN is not a finite number"),
            "{e}"
        );
    }

    #[test]
    fn arbitrary_text_never_panics() {
        for text in [
            "",
            "{",
            "null",
            "\u{feff}{}",
            "{\"schema_version\": 1}",
            "{\"schema_version\": 18446744073709551616}",
            "\"\\ud800\"",
        ] {
            assert!(parse_bundle(text).is_err(), "{text:?}");
        }
    }
}
