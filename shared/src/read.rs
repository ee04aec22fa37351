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

use serde_json::error::Category;

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

/// Parses and validates a bundle from the bytes of a file: UTF-8, with or without a byte-order
/// mark. Anything else (UTF-16, another encoding, binary or compressed data) is refused naming
/// the byte offset and what the file seems to be.
///
/// # Errors
/// [`ReadError::Encoding`], or any error of [`parse_bundle`].
pub fn parse_bundle_bytes(bytes: &[u8]) -> Result<Bundle, ReadError> {
    parse_bundle(decode(bytes)?)
}

/// The UTF-8 text of a file's bytes, or what it seems to be instead.
fn decode(bytes: &[u8]) -> Result<&str, ReadError> {
    check_text_start(bytes, true)?;
    std::str::from_utf8(bytes).map_err(|e| not_utf8(bytes, e.valid_up_to()))
}

/// Checks that `bytes`, the start of a file (or all of it when `whole`), are UTF-8 text, and
/// says what they seem to be otherwise: UTF-16 (by its byte-order mark, or NUL bytes between
/// ASCII characters), compressed data (gzip, zstd, bzip2, xz, zip, by their magic numbers), an
/// image, binary data, or text in another encoding. A start cut inside a character is text.
/// The importers use it to tell what an input is before reading it.
///
/// # Errors
/// [`ReadError::Encoding`] with the byte offset and what the file seems to be.
pub fn check_text_start(bytes: &[u8], whole: bool) -> Result<(), ReadError> {
    let utf16 = |offset, what: &str| {
        ReadError::Encoding {
        offset,
        what: what.to_string(),
        seems: "the file seems to be UTF-16 text (as Windows PowerShell's `>` writes); save it as UTF-8 (e.g. `iconv -f UTF-16 -t UTF-8`)".into(),
    }
    };
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return Err(utf16(
            0,
            &format!("UTF-16 byte-order mark {:02X} {:02X}", bytes[0], bytes[1]),
        ));
    }
    // UTF-16 without a mark: ASCII then a NUL byte (little-endian), or a NUL then ASCII.
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace() && *b != 0);
    if let Some(i) = start
        && bytes[i].is_ascii_graphic()
        && (bytes.get(i + 1) == Some(&0) || (i > 0 && bytes[i - 1] == 0))
    {
        let nul = bytes.iter().position(|b| *b == 0).unwrap_or(0);
        return Err(utf16(nul, "NUL byte between characters"));
    }
    match std::str::from_utf8(bytes) {
        Ok(_) => Ok(()),
        // The start of a file may end inside a character.
        Err(e) if !whole && e.error_len().is_none() => Ok(()),
        Err(e) => Err(not_utf8(bytes, e.valid_up_to())),
    }
}

/// What a file whose byte at `offset` is not UTF-8 seems to be.
fn not_utf8(bytes: &[u8], offset: usize) -> ReadError {
    let b = bytes.get(offset).copied().unwrap_or(0);
    let magic: [(&[u8], &str); 6] = [
        (
            &[0x1f, 0x8b],
            "gzip-compressed data; decompress it first (`gunzip`)",
        ),
        (
            &[0x28, 0xb5, 0x2f, 0xfd],
            "zstd-compressed data; decompress it first (`unzstd`)",
        ),
        (
            b"BZh",
            "bzip2-compressed data; decompress it first (`bunzip2`)",
        ),
        (
            &[0xfd, b'7', b'z', b'X', b'Z'],
            "xz-compressed data; decompress it first (`unxz`)",
        ),
        (b"PK\x03\x04", "a zip archive; extract the file first"),
        (&[0x89, b'P', b'N', b'G'], "a PNG image, not text"),
    ];
    let seems = if let Some((_, what)) = magic.iter().find(|(m, _)| bytes.starts_with(m)) {
        format!("the file seems to be {what}")
    } else if bytes.iter().take(4096).any(|b| *b == 0) {
        "the file seems to be binary data, not text".into()
    } else {
        "the file seems to be text in another encoding (Latin-1 or Windows-1252?); save it as UTF-8"
            .into()
    };
    ReadError::Encoding {
        offset,
        what: format!("byte 0x{b:02X}"),
        seems,
    }
}

/// Parses and validates a bundle from JSON text (a leading byte-order mark is allowed).
///
/// A 100,000-launch bundle parses in one typed pass (see `benches/analysis.rs`); when that fails,
/// the diagnosing pass costs less than it: a scan of the text up to the typed pass's error (no
/// document tree, no allocation per token) for its JSON path and the version.
///
/// # Errors
/// Any [`ReadError`]; the message names the line and column or the JSON path of the problem.
pub fn parse_bundle(text: &str) -> Result<Bundle, ReadError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // A well-formed bundle of this version goes straight into the types, in one pass; only that
    // pass accepts. Anything else is diagnosed from that pass's error (see `diagnose`).
    match serde_json::from_str::<Bundle>(text) {
        Ok(mut bundle) if bundle.schema_version == SCHEMA_VERSION => {
            // Bundles written before `Kernel::operator` existed carry the link as tags.
            for k in &mut bundle.kernels {
                k.adopt_operator_tags();
            }
            validate(&bundle)?;
            Ok(bundle)
        }
        Ok(bundle) => Err(check_version(Some(&bundle.schema_version.into()))
            .err()
            .unwrap_or(ReadError::MissingVersion)),
        Err(e) => Err(diagnose(text, &e)),
    }
}

/// Why a document the typed pass refused (`typed` is its error) is not a bundle.
///
/// Errors before the typed pass's stopped it, so only what comes before that point is looked
/// at: a scan of the text up to it finds the JSON path, the top-level `schema_version` (a bundle
/// of another version is refused for that, not for its fields) and, for an error inside a
/// kernel's `bytes`, that value (for a specific message). Only when the version is not before
/// the error does a lighter full pass ([`diagnose_fully`]) look for it.
fn diagnose(text: &str, typed: &serde_json::Error) -> ReadError {
    if matches!(typed.classify(), Category::Syntax | Category::Eof) {
        return syntax_error(text, typed);
    }
    let offset = offset_of(text, typed.line(), typed.column());
    let found = scan(text, offset);
    let Some(at) = found.version_at else {
        return diagnose_fully(text, typed, found.path);
    };
    if let Err(e) = check_version(value_at::<serde_json::Value>(text, at).as_ref()) {
        return e;
    }
    if let Some(at) = found.kernel_bytes_at
        && let Some(BytesCheck(Some(problem))) = value_at::<BytesCheck>(text, at)
    {
        let i = found
            .path
            .trim_start_matches("$.kernels[")
            .split(']')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if let Err(e) = check_bytes_levels(&[(i, problem)]) {
            return e;
        }
    }
    shape_error(typed, found.path)
}

fn shape_error(typed: &serde_json::Error, path: String) -> ReadError {
    ReadError::Shape {
        path,
        line: typed.line(),
        column: typed.column(),
        message: strip_position(&typed.to_string()),
    }
}

/// The full diagnosis, for a document whose version is not before the typed pass's error: one
/// light pass over the whole text (no document tree) for syntax errors, the top level's kind,
/// the version and the kernels' bytes levels, then the typed pass's error at `path`.
fn diagnose_fully(text: &str, typed: &serde_json::Error, path: String) -> ReadError {
    let head = match serde_json::from_str::<Head>(text) {
        Ok(h) => h,
        Err(e) => return syntax_error(text, &e),
    };
    if let Some(found) = head.not_an_object {
        return ReadError::NotAnObject { found };
    }
    if let Err(e) = check_version(head.version.as_ref()) {
        return e;
    }
    if let Err(e) = check_bytes_levels(&head.bytes) {
        return e;
    }
    shape_error(typed, path)
}

/// What the diagnosing pass keeps of a document: the top level's kind when it is not an object,
/// `schema_version`, and each kernel's `bytes` (small); everything else is skipped unbuilt.
#[derive(Default)]
struct Head {
    not_an_object: Option<&'static str>,
    version: Option<serde_json::Value>,
    bytes: Vec<(usize, BytesProblem)>,
}

/// A kernel's `bytes` that is not an object of levels: a bare number, or unknown level names.
enum BytesProblem {
    BareNumber(String),
    UnknownLevels(Vec<String>),
}

/// Implements `visit_*` for every JSON value kind, giving `$v` for all but maps and sequences.
macro_rules! any_scalar {
    ($v:expr) => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($v("a boolean"))
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($v("a number"))
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($v("a number"))
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($v("a number"))
        }
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($v("a string"))
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($v("null"))
        }
    };
}

impl<'de> serde::Deserialize<'de> for Head {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Head;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            any_scalar!(|found| Head {
                not_an_object: Some(found),
                ..Head::default()
            });
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Head, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Head {
                    not_an_object: Some("an array"),
                    ..Head::default()
                })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Head, A::Error> {
                let mut h = Head::default();
                while let Some(key) = a.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "schema_version" => h.version = Some(a.next_value()?),
                        "kernels" => h.bytes = a.next_value::<KernelBytes>()?.0,
                        _ => {
                            a.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(h)
            }
        }
        d.deserialize_any(V)
    }
}

/// The `bytes` problems of the kernels of a `kernels` array (none when it is not an array).
struct KernelBytes(Vec<(usize, BytesProblem)>);

impl<'de> serde::Deserialize<'de> for KernelBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = KernelBytes;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            any_scalar!(|_| KernelBytes(Vec::new()));
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(KernelBytes(Vec::new()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                let mut i = 0;
                while let Some(b) = a.next_element::<BytesOf>()? {
                    if let Some(v) = b.0 {
                        out.push((i, v));
                    }
                    i += 1;
                }
                Ok(KernelBytes(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// One kernel's `bytes` problem, if it is an object whose `bytes` has one.
struct BytesOf(Option<BytesProblem>);

impl<'de> serde::Deserialize<'de> for BytesOf {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = BytesOf;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            any_scalar!(|_| BytesOf(None));
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(BytesOf(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                let mut bytes = None;
                while let Some(key) = a.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "bytes" {
                        bytes = a.next_value::<BytesCheck>()?.0;
                    } else {
                        a.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(BytesOf(bytes))
            }
        }
        d.deserialize_any(V)
    }
}

/// Checks a `bytes` value as it streams by, allocating only for a problem.
struct BytesCheck(Option<BytesProblem>);

impl<'de> serde::Deserialize<'de> for BytesCheck {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = BytesCheck;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(BytesCheck(None))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(BytesCheck(Some(BytesProblem::BareNumber(v.to_string()))))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(BytesCheck(Some(BytesProblem::BareNumber(v.to_string()))))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
                let n = serde_json::Number::from_f64(v)
                    .map_or_else(|| v.to_string(), |n| n.to_string());
                Ok(BytesCheck(Some(BytesProblem::BareNumber(n))))
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(BytesCheck(None))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(BytesCheck(None))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(BytesCheck(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                let mut unknown = Vec::new();
                while let Some(key) = a.next_key::<std::borrow::Cow<'de, str>>()? {
                    a.next_value::<serde::de::IgnoredAny>()?;
                    if !matches!(key.as_ref(), "l1" | "l2" | "hbm") {
                        unknown.push(key.into_owned());
                    }
                }
                Ok(BytesCheck(
                    (!unknown.is_empty()).then_some(BytesProblem::UnknownLevels(unknown)),
                ))
            }
        }
        d.deserialize_any(V)
    }
}

/// The byte offset of a 1-based line and column (serde_json counts columns in bytes).
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    if line > 1 {
        match text.match_indices('\n').nth(line - 2) {
            Some((i, _)) => start = i + 1,
            None => return text.len(),
        }
    }
    (start + column).min(text.len())
}

/// What a scan of the text up to a byte offset found.
struct Scan {
    /// The JSON path of the value or key being read there (`$.kernels[3].time.total_s`).
    path: String,
    /// Where the top-level `schema_version`'s value starts, if it came before the offset.
    version_at: Option<usize>,
    /// Where the value of `$.kernels[i].bytes` starts, if the offset is inside it.
    kernel_bytes_at: Option<usize>,
}

/// The JSON path of the value or key being read at byte `offset` (see [`Scan`]).
fn path_at(text: &str, offset: usize) -> String {
    scan(text, offset).path
}

/// Scans the text up to `offset` with object keys and array indices on a stack: no allocation
/// per token, so that it costs far less than parsing.
fn scan(text: &str, offset: usize) -> Scan {
    enum Frame {
        Object {
            /// The current key's byte range.
            key: Option<(usize, usize)>,
            expect_key: bool,
            /// Where the current key's value starts.
            value_at: usize,
        },
        Array {
            index: usize,
        },
    }
    let bytes = text.as_bytes();
    let end = offset.min(bytes.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut version_at = None;
    let mut i = 0;
    while i < end {
        match bytes[i] {
            b'{' => stack.push(Frame::Object {
                key: None,
                expect_key: true,
                value_at: 0,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b':' => {
                let depth = stack.len();
                if let Some(Frame::Object {
                    key,
                    expect_key,
                    value_at,
                }) = stack.last_mut()
                {
                    *expect_key = false;
                    *value_at = i + 1;
                    if depth == 1 && key.is_some_and(|(a, b)| &text[a..b] == "schema_version") {
                        version_at = Some(i + 1);
                    }
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { expect_key, .. }) => *expect_key = true,
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            b'"' => {
                let from = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object {
                    key,
                    expect_key: true,
                    ..
                }) = stack.last_mut()
                {
                    *key = Some((from, i.min(text.len())));
                }
            }
            _ => {}
        }
        i += 1;
    }
    let key_text = |k: Option<(usize, usize)>| k.and_then(|(a, b)| text.get(a..b));
    let kernel_bytes_at = match stack.as_slice() {
        [
            Frame::Object { key: k0, .. },
            Frame::Array { .. },
            Frame::Object {
                key: k2, value_at, ..
            },
            ..,
        ] if key_text(*k0) == Some("kernels") && key_text(*k2) == Some("bytes") => Some(*value_at),
        _ => None,
    };
    let mut path = String::from("$");
    for f in &stack {
        match f {
            Frame::Object { key, .. } => {
                if let Some(k) = key_text(*key) {
                    path.push('.');
                    path.push_str(k);
                }
            }
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    Scan {
        path,
        version_at,
        kernel_bytes_at,
    }
}

/// Reads the one JSON value that starts at `at` (whatever follows it).
fn value_at<'a, T: serde::Deserialize<'a>>(text: &'a str, at: usize) -> Option<T> {
    let mut de = serde_json::Deserializer::from_str(text.get(at..)?);
    T::deserialize(&mut de).ok()
}

/// Serializes a bundle to pretty JSON after validating it, so that a bundle this crate writes
/// is always one it reads back.
///
/// # Errors
/// [`ReadError::Invalid`] when the bundle holds impossible figures (NaN, negative, zero time).
pub fn to_json(bundle: &Bundle) -> Result<String, ReadError> {
    use serde::Serialize as _;
    validate(bundle)?;
    let shape = |message: String| ReadError::Shape {
        path: "$".into(),
        line: 0,
        column: 0,
        message,
    };
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, NoNegativeZero::default());
    bundle
        .serialize(&mut ser)
        .map_err(|e| shape(e.to_string()))?;
    let mut s = String::from_utf8(out).map_err(|e| shape(e.to_string()))?;
    s.push('\n');
    Ok(s)
}

/// The problems of one kernel, `$.kernels[index]`, as [`validate`] finds them in a bundle whose
/// devices `known` says are declared, `n_devices` of them (0: device references not checked).
pub(crate) fn kernel_issues(
    index: usize,
    k: &Kernel,
    known: &dyn Fn(&str) -> bool,
    n_devices: usize,
) -> Vec<Issue> {
    let mut v = Validator::default();
    v.kernel(index, k, known, n_devices);
    v.issues
}

/// Serializes `value` as `to_json` does (pretty, no negative zero), without a final line break.
pub(crate) fn pretty<T: serde::Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, NoNegativeZero::default());
    value.serialize(&mut ser)
}

/// The formatter [`to_json`] writes with.
pub(crate) fn formatter() -> impl serde_json::ser::Formatter {
    NoNegativeZero::default()
}

/// Checks everything in a bundle but its kernels (which may be many, and are checked one by
/// one as they are written: [`crate::stream`]).
///
/// # Errors
/// [`ReadError::Invalid`] listing every problem with its path.
pub(crate) fn validate_shell(bundle: &Bundle) -> Result<(), ReadError> {
    let mut v = Validator::default();
    v.shell(bundle);
    if v.issues.is_empty() {
        Ok(())
    } else {
        Err(ReadError::Invalid(v.issues))
    }
}

/// serde_json's pretty formatter, except that `-0.0` is written `0.0`: no output of the toolkit
/// holds a negative zero (an imported `-0` is a zero like any other).
#[derive(Default)]
struct NoNegativeZero(serde_json::ser::PrettyFormatter<'static>);

impl serde_json::ser::Formatter for NoNegativeZero {
    fn write_f64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f64) -> std::io::Result<()> {
        // `+ 0.0` turns -0.0 into 0.0 and leaves every other value as it is.
        self.0.write_f64(w, v + 0.0)
    }
    fn write_f32<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f32) -> std::io::Result<()> {
        self.0.write_f32(w, v + 0.0)
    }
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

fn syntax_error(text: &str, e: &serde_json::Error) -> ReadError {
    let (line, column) = (e.line(), e.column());
    // serde_json points at (or just past) the offending token; JSON has no NaN or Infinity
    // literals, the commonest way a tool writes a non-finite figure, nor numbers beyond a double.
    let offset = offset_of(text, line, column.saturating_sub(1));
    let is_token = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-');
    let bytes = text.as_bytes();
    let mut from = offset.min(bytes.len());
    while from > 0 && is_token(bytes[from - 1]) {
        from -= 1;
    }
    let mut to = offset.min(bytes.len());
    while to < bytes.len() && is_token(bytes[to]) {
        to += 1;
    }
    let token = text.get(from..to).unwrap_or("");
    let bare = token.trim_start_matches(['-', '+']).to_ascii_lowercase();
    let hint = if matches!(bare.as_str(), "nan" | "inf" | "infinity") {
        format!(
            " ({token} at `{}` is not a JSON number: every figure in a bundle must be finite)",
            path_at(text, from)
        )
    } else if e.to_string().starts_with("number out of range") {
        format!(
            " ({token} at `{}` is beyond what a double holds: every figure in a bundle must be finite)",
            path_at(text, from)
        )
    } else {
        String::new()
    };
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

fn check_version(version: Option<&serde_json::Value>) -> Result<(), ReadError> {
    let version = version
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
fn check_bytes_levels(kernel_bytes: &[(usize, BytesProblem)]) -> Result<(), ReadError> {
    let issues: Vec<Issue> = kernel_bytes
        .iter()
        .map(|(i, p)| Issue {
            path: format!("$.kernels[{i}].bytes"),
            problem: Problem::BytesWithoutLevel(match p {
                BytesProblem::BareNumber(n) => format!("got a bare number {n}"),
                BytesProblem::UnknownLevels(unknown) => format!(
                    "unknown level{} {}",
                    if unknown.len() == 1 { "" } else { "s" },
                    unknown
                        .iter()
                        .map(|k| format!("{k:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        })
        .collect();
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

    /// How a measured ceiling was taken (timing, NVML's telemetry, the sustained figure, the
    /// GEMM chosen): every figure finite, times and rates positive, fractions within 0 to 1.
    fn measurement(
        &mut self,
        q: &str,
        timing: Option<&crate::bundle::TimingInfo>,
        telemetry: Option<&crate::bundle::Telemetry>,
        sustained: Option<&crate::bundle::Sustained>,
    ) {
        if let Some(t) = timing {
            self.non_negative(&|| format!("{q}.timing.warmup_s"), t.warmup_s);
            self.positive(&|| format!("{q}.timing.launch_s"), t.launch_s);
            self.positive(&|| format!("{q}.timing.interval_s"), t.interval_s);
        }
        if let Some(t) = telemetry {
            self.telemetry(&format!("{q}.telemetry"), t);
        }
        if let Some(s) = sustained {
            let q = format!("{q}.sustained");
            self.positive(&|| format!("{q}.value"), s.value);
            self.positive(&|| format!("{q}.window_s"), s.window_s);
            self.non_negative(&|| format!("{q}.settle_s"), s.settle_s);
            self.opt_positive(&|| format!("{q}.clock_hz"), s.clock_hz);
            self.samples(&q, &s.samples);
            if let Some(t) = &s.telemetry {
                self.telemetry(&format!("{q}.telemetry"), t);
            }
        }
    }

    fn telemetry(&mut self, q: &str, t: &crate::bundle::Telemetry) {
        self.non_negative(&|| format!("{q}.window_s"), t.window_s);
        for (name, spread) in [("sm_clock_hz", &t.sm_clock_hz), ("power_w", &t.power_w)] {
            let Some(s) = spread else { continue };
            let p = format!("{q}.{name}");
            for (field, v) in [("min", s.min), ("median", s.median), ("max", s.max)] {
                self.non_negative(&|| format!("{p}.{field}"), v);
            }
            if !(s.min <= s.median && s.median <= s.max) {
                self.push(
                    p,
                    Problem::SpreadOutOfOrder {
                        min: s.min,
                        median: s.median,
                        max: s.max,
                    },
                );
            }
        }
        self.opt_non_negative(&|| format!("{q}.energy_power_w"), t.energy_power_w);
        if let Some(c) = t.temperature_c_max.filter(|c| !c.is_finite()) {
            self.push(format!("{q}.temperature_c_max"), Problem::NotFinite(c));
        }
        for (j, r) in t.clock_event_reasons.iter().enumerate() {
            if !(r.fraction.is_finite() && (0.0..=1.0).contains(&r.fraction)) {
                self.push(
                    format!("{q}.clock_event_reasons[{j}].fraction"),
                    Problem::NotAFraction(r.fraction),
                );
            }
        }
    }

    fn samples(&mut self, base: &str, samples: &[f64]) {
        for (j, s) in samples.iter().enumerate() {
            self.non_negative(&|| format!("{base}.samples[{j}]"), *s);
        }
    }

    fn bundle(&mut self, b: &Bundle) {
        let ids = self.shell(b);
        self.kernels(b, &ids);
    }

    /// Everything but the kernels; returns the device ids.
    fn shell<'b>(&mut self, b: &'b Bundle) -> HashSet<&'b str> {
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
            self.opt_positive(&|| format!("{p}.power_limit_w"), d.power_limit_w);
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
                self.measurement(
                    &q,
                    c.timing.as_ref(),
                    c.telemetry.as_ref(),
                    c.sustained.as_ref(),
                );
            }
            for (j, c) in m.compute.iter().enumerate() {
                let q = format!("{p}.compute[{j}]");
                self.positive(&|| format!("{q}.value"), c.value);
                self.opt_positive(&|| format!("{q}.clock_hz"), c.clock_hz);
                self.samples(&q, &c.samples);
                self.measurement(
                    &q,
                    c.timing.as_ref(),
                    c.telemetry.as_ref(),
                    c.sustained.as_ref(),
                );
                if let Some(g) = &c.gemm {
                    for (k, cand) in g.candidates.iter().enumerate() {
                        self.opt_positive(
                            &|| format!("{q}.gemm.candidates[{k}].value"),
                            cand.value,
                        );
                    }
                }
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
        ids
    }

    fn kernels(&mut self, b: &Bundle, ids: &HashSet<&str>) {
        let mut launches: u64 = 0;
        let mut overflowed = false;
        for (i, k) in b.kernels.iter().enumerate() {
            self.kernel(i, k, &|d| ids.contains(d), b.devices.len());
            match launches.checked_add(k.launches) {
                Some(n) => launches = n,
                None if !overflowed => {
                    // Said once: every sum of launches downstream is over a subset of these.
                    overflowed = true;
                    self.push(
                        format!("$.kernels[{i}].launches"),
                        Problem::LaunchesOverflow,
                    );
                }
                None => {}
            }
        }
    }

    /// Checks kernel `i`: `known` says whether a device id is declared; with `n_devices` 0 the
    /// device references are left to the caller (a stream whose devices come later).
    fn kernel(&mut self, i: usize, k: &Kernel, known: &dyn Fn(&str) -> bool, n_devices: usize) {
        let p = format!("$.kernels[{i}]");
        if k.name.is_empty() {
            self.push(format!("{p}.name"), Problem::Empty);
        }
        if k.launches == 0 {
            self.push(format!("{p}.launches"), Problem::NoLaunches);
        }
        match &k.device {
            Some(d) if !known(d.as_str()) => {
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
        if let Some(c) = k.operator.as_ref().and_then(|o| o.complexity.as_ref()) {
            self.non_negative(&|| format!("{p}.operator.complexity.flops"), c.flops);
            self.non_negative(&|| format!("{p}.operator.complexity.bytes"), c.bytes);
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

    /// The measurement details of a ceiling (`roofline machine`'s timing, NVML telemetry and
    /// sustained figure) are checked as every other figure is, with their paths.
    #[test]
    fn a_ceilings_measurement_details_are_validated() {
        let machine = r#""machines": [{"device": "0", "bandwidth": [{"level": "hbm", "value": 3e12, "method": "empirical",
            "timing": {"warmup_s": 0.4, "launch_s": 0.0, "launches_per_interval": 8, "interval_s": 2e-3, "intervals": 11},
            "telemetry": {"samples": 20, "window_s": 0.4, "sm_clock_hz": {"min": 1.9e9, "median": 1.8e9, "max": 1.98e9},
              "clock_event_reasons": [{"reason": "sw_power_cap", "fraction": 1.5}]},
            "sustained": {"value": -2.9e12, "window_s": 2.0, "settle_s": 0.5, "settled": true}}],
          "compute": []}],
  "kernels""#;
        let issues = invalid(&with(r#""kernels""#, machine));
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "$.machines[0].bandwidth[0].timing.launch_s",
                "$.machines[0].bandwidth[0].telemetry.sm_clock_hz",
                "$.machines[0].bandwidth[0].telemetry.clock_event_reasons[0].fraction",
                "$.machines[0].bandwidth[0].sustained.value",
            ]
        );
    }

    #[test]
    fn operator_tags_of_older_bundles_become_the_operator_field() {
        let tags = r#""tags": {"op": "aten::mm", "op_id": "12", "op_kernels": "2", "op_shapes": "[[4, 8], [8, 2]]", "op_flops": "128", "op_bytes": "224", "op_datapath": "fp32", "step": "ProfilerStep#1"}, "source": "published""#;
        let b = parse_bundle(&with(r#""source": "published""#, tags)).unwrap();
        let k = &b.kernels[0];
        let op = k.operator.as_ref().unwrap();
        assert_eq!((op.name.as_str(), op.call, op.kernels), ("aten::mm", 12, 2));
        assert_eq!(op.shapes.as_deref(), Some("[[4, 8], [8, 2]]"));
        assert_eq!(
            op.complexity,
            Some(crate::bundle::Complexity {
                flops: 128.0,
                bytes: 224.0,
                datapath: Some(crate::bundle::Datapath::Fp32),
            })
        );
        // The other tags stay; the operator's are gone, and the bundle writes the field.
        assert_eq!(k.tags.keys().collect::<Vec<_>>(), ["step"]);
        let again = parse_bundle(&to_json(&b).unwrap()).unwrap();
        assert_eq!(again, b);
        // An unknown figure stays unknown, never zero.
        let tags = r#""tags": {"op": "nccl:all_reduce", "op_id": "3"}, "source": "published""#;
        let b = parse_bundle(&with(r#""source": "published""#, tags)).unwrap();
        let op = b.kernels[0].operator.as_ref().unwrap();
        assert_eq!((op.complexity, op.kernels), (None, 1));
        // Negative figures in the field are refused, with their path.
        let field = r#""operator": {"name": "aten::mm", "call": 1, "kernels": 1, "complexity": {"flops": -1, "bytes": 0}}, "source": "published""#;
        let issues = invalid(&with(r#""source": "published""#, field));
        assert_eq!(issues[0].path, "$.kernels[0].operator.complexity.flops");
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

    /// The JSON path serde_path_to_error finds for a typed-pass failure (the reference).
    fn reference_path(text: &str) -> String {
        let mut de = serde_json::Deserializer::from_str(text);
        let e = serde_path_to_error::deserialize::<_, Bundle>(&mut de).unwrap_err();
        let p = e.path().to_string();
        if p == "." {
            "$".into()
        } else {
            format!("$.{p}")
        }
    }

    #[test]
    fn the_diagnosing_pass_finds_the_same_paths_as_a_path_tracking_parse() {
        let cases = [
            with("\"launches\": 1", "\"launches\": -1"),
            with("\"launches\": 1", "\"launches\": \"one\""),
            with("\"launches\": 1", "\"launches\": 1, \"colour\": 1"),
            with("1e-3", "\"1e-3\""),
            with("\"fp32\"", "\"fp33\""),
            with("\"name\": \"Tesla V100-SXM2-16GB\"", "\"name\": 7"),
            with("\"tool\": \"hand\"", "\"tool\": [\"a\", {\"b\": 1}]"),
            with("\"source\": \"published\"", "\"source\": \"guessed\""),
            with("{\"hbm\": 1e8}", "{\"hbm\": \"x\"}"),
            MINIMAL.replace("\"complete\": true,", "\"complete\": \"yes\","),
            MINIMAL.replace("}\n  ]", "}, {\"name\": \"k2\", \"launches\": 1, \"time\": {\"total_s\": true}, \"source\": \"published\"}\n  ]"),
        ];
        for text in &cases {
            let e = parse_bundle(text).unwrap_err();
            let ReadError::Shape { path, .. } = &e else {
                panic!("{text}: {e:?}")
            };
            assert_eq!(*path, reference_path(text), "{text}: {e}");
        }
        // A duplicate key: at the key itself (the reference says the object).
        let e =
            parse_bundle(&with("\"launches\": 1", "\"launches\": 1, \"launches\": 2")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("at `$.kernels[0].launches` (line 7, column "),
            "{e}"
        );
        assert!(e.to_string().ends_with("duplicate field `launches`"), "{e}");
        // A missing field is reported at the object that lacks it.
        let e = parse_bundle(&MINIMAL.replace("\"complete\": true,", "")).unwrap_err();
        assert!(e.to_string().contains("missing field `complete`"), "{e}");
    }

    #[test]
    fn a_version_after_the_error_still_takes_precedence() {
        // schema_version last, a field of a newer format before it: refused for the version.
        let text = MINIMAL
            .replace("\"schema_version\": 1,\n", "")
            .replace("\"launches\": 1", "\"launches\": 1, \"colour\": 1")
            .replace("\n}", ",\n  \"schema_version\": 9\n}");
        let e = parse_bundle(&text).unwrap_err();
        assert!(
            matches!(e, ReadError::UnsupportedVersion { found: 9, .. }),
            "{e:?}"
        );
        // No version at all.
        let text = MINIMAL.replace("\"schema_version\": 1,\n", "");
        assert_eq!(parse_bundle(&text).unwrap_err(), ReadError::MissingVersion);
    }

    #[test]
    fn only_the_typed_pass_accepts() {
        let cases = [
            MINIMAL.to_string(),
            format!("\u{feff}{MINIMAL}"),
            with("\"schema_version\": 1", "\"schema_version\": 9"),
            with("\"schema_version\": 1", "\"schema_version\": 1.0"),
            with("{\"hbm\": 1e8}", "1e8"),
            with("{\"hbm\": 1e8}", "{\"dram\": 1e8}"),
            with("1e-3", "0"),
            "[]".to_string(),
        ];
        for text in &cases {
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            let fast = serde_json::from_str::<Bundle>(text)
                .ok()
                .filter(|b| b.schema_version == SCHEMA_VERSION)
                .map(|b| validate(&b).map(|()| b));
            match fast {
                Some(f) => assert_eq!(parse_bundle(text), f, "{text}"),
                None => assert!(parse_bundle(text).is_err(), "{text}"),
            }
        }
    }

    #[test]
    fn a_byte_order_mark_is_accepted() {
        let b = parse_bundle(&format!("\u{feff}{MINIMAL}")).unwrap();
        assert_eq!(b, parse_bundle(MINIMAL).unwrap());
        let mut bytes = vec![0xef, 0xbb, 0xbf];
        bytes.extend_from_slice(MINIMAL.as_bytes());
        assert_eq!(parse_bundle_bytes(&bytes).unwrap(), b);
    }

    #[test]
    fn other_encodings_name_the_offset_and_what_the_file_seems_to_be() {
        let utf16le: Vec<u8> = "\u{feff}{\"schema_version\": 1}"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let e = parse_bundle_bytes(&utf16le).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not UTF-8 text: UTF-16 byte-order mark FF FE at byte offset 0; the file seems to be UTF-16 text (as Windows PowerShell's `>` writes); save it as UTF-8 (e.g. `iconv -f UTF-16 -t UTF-8`)"
        );
        let no_mark = &utf16le[2..];
        let e = parse_bundle_bytes(no_mark).unwrap_err();
        assert!(
            e.to_string()
                .contains("at byte offset 1; the file seems to be UTF-16"),
            "{e}"
        );
        let be: Vec<u8> = "{}".encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert!(
            parse_bundle_bytes(&be)
                .unwrap_err()
                .to_string()
                .contains("UTF-16")
        );
        // Latin-1: "é" as one byte 0xE9 inside a name.
        let latin1 = MINIMAL
            .replace("\"k\"", "\"caf\u{e9}\"")
            .replacen('\u{e9}', "\u{1}", 1);
        let mut bytes = latin1.into_bytes();
        let at = bytes.iter().position(|b| *b == 1).unwrap();
        bytes[at] = 0xe9;
        let e = parse_bundle_bytes(&bytes).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "not UTF-8 text: byte 0xE9 at byte offset {at}; the file seems to be text in another encoding (Latin-1 or Windows-1252?); save it as UTF-8"
            )
        );
        let e = parse_bundle_bytes(&[0x1f, 0x8b, 0x08, 0x00, 0xff]).unwrap_err();
        assert!(e.to_string().contains("gzip-compressed"), "{e}");
        let e = parse_bundle_bytes(&[b'{', 0xff, 0x00]).unwrap_err();
        assert!(
            e.to_string()
                .contains("byte 0xFF at byte offset 1; the file seems to be binary data"),
            "{e}"
        );
    }

    #[test]
    fn non_finite_numbers_are_named_with_where() {
        for (literal, shown) in [
            ("nan", "nan"),
            ("-nan", "-nan"),
            ("NaN", "NaN"),
            ("inf", "inf"),
            ("-Infinity", "-Infinity"),
            ("Infinity", "Infinity"),
        ] {
            let e = parse_bundle(&with("1e9", literal)).unwrap_err();
            assert!(
                matches!(e, ReadError::Syntax { line: 8, .. }),
                "{literal}: {e:?}"
            );
            assert!(
                e.to_string().ends_with(&format!(
                    "({shown} at `$.kernels[0].flops.fp32` is not a JSON number: every figure in a bundle must be finite)"
                )),
                "{literal}: {e}"
            );
        }
        let e = parse_bundle(&with("1e9", "1e999")).unwrap_err();
        assert!(
            e.to_string().ends_with("(1e999 at `$.kernels[0].flops.fp32` is beyond what a double holds: every figure in a bundle must be finite)"),
            "{e}"
        );
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
        assert!(
            e.to_string()
                .contains("NaN at `$.kernels[0].flops.fp32` is not a JSON number"),
            "{e}"
        );
        let e = parse_bundle(&with("1e9", "Infinity")).unwrap_err();
        assert!(
            e.to_string()
                .contains("Infinity at `$.kernels[0].flops.fp32` is not a JSON number"),
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
    fn no_negative_zero_is_ever_written() {
        // An imported `-0` is a valid figure (zero), but the README promises no output holds
        // `-0.0` (issue 29): the writer writes every zero as `0.0`.
        let mut b = parse_bundle(MINIMAL).unwrap();
        b.kernels[0].bytes.hbm = Some(-0.0);
        b.kernels[0].flops.fp16 = Some(-0.0);
        let json = to_json(&b).unwrap();
        assert!(!json.contains("-0"), "{json}");
        assert!(json.contains("\"hbm\": 0.0"), "{json}");
        // Pretty-printed as before: the same text as serde_json's own for a bundle without -0.
        let plain = parse_bundle(MINIMAL).unwrap();
        let mut expected = serde_json::to_string_pretty(&plain).unwrap();
        expected.push('\n');
        assert_eq!(to_json(&plain).unwrap(), expected);
    }

    #[test]
    fn launches_that_sum_beyond_a_u64_are_refused() {
        // Two entries whose launches add up past 2^64 − 1 would wrap in every total (issue 29):
        // refused on reading, so no sum downstream (aggregation, groups, totals) can overflow.
        let two = MINIMAL.replace("\"launches\": 1,", "\"launches\": 18446744073709551615,");
        let two = two.replace(
            "\"kernels\": [\n",
            "\"kernels\": [\n    {\"name\": \"j\", \"launches\": 2, \"time\": {\"total_s\": 1e-3}, \"source\": \"published\"},\n",
        );
        let e = parse_bundle(&two).unwrap_err().to_string();
        assert!(
            e.contains("`$.kernels[1].launches`")
                && e.contains("the launches of all kernel entries up to this one sum beyond 18446744073709551615"),
            "{e}"
        );
        // One entry at the maximum is fine.
        let one = MINIMAL.replace("\"launches\": 1,", "\"launches\": 18446744073709551615,");
        assert_eq!(parse_bundle(&one).unwrap().kernels[0].launches, u64::MAX);
    }

    #[test]
    fn the_start_of_a_file_says_what_it_is() {
        // A prefix cut inside a character is still text; a UTF-16 or compressed start is not.
        let text = "{\"caf\u{e9}".as_bytes();
        assert!(check_text_start(&text[..text.len() - 1], false).is_ok());
        assert!(check_text_start(&text[..text.len() - 1], true).is_err());
        for (bytes, seems) in [
            (&b"BZh91AY&SY\xff\x00"[..], "bzip2-compressed"),
            (&[0xfd, b'7', b'z', b'X', b'Z', 0x00][..], "xz-compressed"),
            (&[0xff, 0xfe, b'{', 0x00][..], "UTF-16"),
            (&[0x00, b'{', 0x00, b'"'][..], "UTF-16"),
            (&[0x1f, 0x8b, 0x08][..], "gzip-compressed"),
        ] {
            let e = check_text_start(bytes, false).unwrap_err().to_string();
            assert!(e.contains(seems), "{bytes:?}: {e}");
        }
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
