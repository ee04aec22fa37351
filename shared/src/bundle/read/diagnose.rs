//! The diagnosing pass: why a document the typed pass refused is not a bundle (a syntax error
//! with line, column and what the token is, the top level not an object, a version this build
//! does not read, a kernel's `bytes` without levels, else the typed error at its JSON path),
//! looking only at what comes before the typed pass's error where it can.

use std::fmt;

use serde_json::error::Category;

use super::scan::{offset_of, path_at, scan, value_at};
use super::{Issue, Problem, ReadError};
use crate::bundle::SCHEMA_VERSION;

/// Why a document the typed pass refused (`typed` is its error) is not a bundle.
///
/// Errors before the typed pass's stopped it, so only what comes before that point is looked
/// at: a scan of the text up to it finds the JSON path, the top-level `schema_version` (a bundle
/// of another version is refused for that, not for its fields) and, for an error inside a
/// kernel's `bytes`, that value (for a specific message). Only when the version is not before
/// the error does a lighter full pass ([`diagnose_fully`]) look for it.
pub(super) fn diagnose(text: &str, typed: &serde_json::Error) -> ReadError {
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

pub(super) fn check_version(version: Option<&serde_json::Value>) -> Result<(), ReadError> {
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

#[cfg(test)]
mod tests {
    use crate::bundle::Bundle;
    use crate::bundle::read::fixtures::{MINIMAL, invalid, with};
    use crate::bundle::read::{Problem, ReadError, parse_bundle};

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
}
