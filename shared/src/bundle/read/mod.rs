//! Reading and validating bundles: every failure is a typed error naming the JSON path and the
//! problem. Nothing here panics on any input.
//!
//! Reading happens in three steps: the text must be JSON (else [`ReadError::Syntax`] with line and
//! column), its `schema_version` must be one this build reads (else
//! [`ReadError::UnsupportedVersion`]), its shape must match the types (else [`ReadError::Shape`]
//! with the path), and its figures must make sense (else [`ReadError::Invalid`] listing every
//! problem with its path): finite, non-negative, positive times, known device references, unique
//! devices.
//!
//! This file holds the errors; `parse.rs` reads bytes and text (the one typed pass),
//! `diagnose.rs` says why a document the typed pass refused is not a bundle, from `scan.rs`'s
//! scan of the text for the JSON path, `validate.rs` checks the figures, and `write.rs` writes
//! a bundle (validated first, no `-0.0`).

use std::fmt;

mod diagnose;
mod parse;
mod scan;
mod validate;
mod write;

pub use parse::{
    check_text_start, parse_bundle, parse_bundle_bytes, parse_json_bytes, utf8_string,
};
pub use validate::validate;
pub(crate) use validate::{kernel_issues, validate_shell};
pub use write::to_json;
pub(crate) use write::{formatter, pretty_at};

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
    /// The bytes are not UTF-8 text.
    #[error("not UTF-8 text: {what} at byte offset {offset}; {seems}")]
    Encoding {
        /// 0-based byte offset of the first byte that is not UTF-8.
        offset: usize,
        /// What was found there.
        what: String,
        /// What the file seems to be, and what to do.
        seems: String,
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
    /// A columns file ([`crate::bundle::columns`]) that is not one, or not whole.
    #[error("not a readable columns file: at byte {offset}, {message}")]
    Columns {
        /// 0-based byte offset of what is wrong.
        offset: u64,
        /// What is wrong there.
        message: &'static str,
    },
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
    /// Launch counts whose sum leaves a `u64` (no total could be counted).
    #[error(
        "the launches of all kernel entries up to this one sum beyond {} (2^64 − 1): no total of them can be counted; split the bundle",
        u64::MAX
    )]
    LaunchesOverflow,
    /// Kernel times whose sum leaves the largest double (no total time could be computed).
    #[error(
        "the times of all kernel entries up to this one sum beyond the largest double (about 1.8e308 s): no total of them can be computed; check the times"
    )]
    TimeOverflow,
    /// A fraction outside 0 to 1.
    #[error("{0} is not a fraction between 0 and 1")]
    NotAFraction(f64),
    /// A spread whose smallest, median and largest samples are out of order.
    #[error("a spread must satisfy min ≤ median ≤ max (got min {min}, median {median}, max {max})")]
    SpreadOutOfOrder {
        /// Smallest.
        min: f64,
        /// Median.
        median: f64,
        /// Largest.
        max: f64,
    },
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

/// The minimal bundle the tests of each step start from, and their helpers.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::{Issue, ReadError, parse_bundle};

    pub(crate) const MINIMAL: &str = r#"{
  "schema_version": 1,
  "complete": true,
  "provenance": {"tool": "hand", "tool_version": "0"},
  "devices": [{"id": "0", "name": "Tesla V100-SXM2-16GB"}],
  "kernels": [
    {"name": "k", "launches": 1, "time": {"total_s": 1e-3}, "source": "published",
     "flops": {"fp32": 1e9}, "bytes": {"hbm": 1e8}}
  ]
}"#;

    pub(super) fn with(find: &str, replace: &str) -> String {
        assert!(MINIMAL.contains(find), "{find}");
        MINIMAL.replacen(find, replace, 1)
    }

    pub(super) fn invalid(text: &str) -> Vec<Issue> {
        match parse_bundle(text) {
            Err(ReadError::Invalid(issues)) => issues,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }
}
