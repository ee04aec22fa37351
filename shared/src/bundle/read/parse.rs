//! The one typed pass: a bundle's bytes (UTF-8, else what the file seems to be) and text read
//! straight into the types, then validated; anything else goes to the diagnosing pass.

use super::ReadError;
use super::diagnose::{check_version, diagnose};
use super::validate::validate;
use crate::bundle::{Bundle, SCHEMA_VERSION};

/// Parses and validates a bundle from the bytes of a file: UTF-8, with or without a byte-order
/// mark, or a columns file ([`crate::bundle::columns`], the same bundle in binary). Anything
/// else (UTF-16, another encoding, binary or compressed data) is refused naming the byte offset
/// and what the file seems to be.
///
/// # Errors
/// [`ReadError::Encoding`], [`ReadError::Columns`], or any error of [`parse_bundle`].
pub fn parse_bundle_bytes(bytes: &[u8]) -> Result<Bundle, ReadError> {
    if crate::bundle::columns::is_columns(bytes) {
        return crate::bundle::columns::decode(bytes);
    }
    parse_json_bytes(bytes)
}

/// [`parse_bundle_bytes`] for a bundle's JSON only (a reader that reads columns files its own
/// way).
///
/// # Errors
/// [`ReadError::Encoding`], or any error of [`parse_bundle`].
pub fn parse_json_bytes(bytes: &[u8]) -> Result<Bundle, ReadError> {
    parse_bundle(decode(bytes)?)
}

/// The UTF-8 text of a file's bytes, or what it seems to be instead.
fn decode(bytes: &[u8]) -> Result<&str, ReadError> {
    utf8_start(bytes, true)
}

/// A whole input's bytes as text, or, when they are not UTF-8, the error the bundle reader gives
/// for them (what the file seems to be: UTF-16, compressed, binary…). Valid UTF-8 is taken as it
/// is (validated once); only bytes that are not UTF-8 are looked at again, for the message.
///
/// # Errors
/// [`ReadError::Encoding`] with the byte offset and what the file seems to be.
pub fn utf8_string(bytes: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        // Never `Ok`: the bytes as a whole are not UTF-8.
        utf8_start(bytes, true)
            .err()
            .unwrap_or_else(|| not_utf8(bytes, e.utf8_error().valid_up_to()))
    })
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
    utf8_start(bytes, whole).map(|_| ())
}

/// [`check_text_start`], returning the text checked: all of `bytes`, or, for a start cut inside
/// a character, the text before that character.
fn utf8_start(bytes: &[u8], whole: bool) -> Result<&str, ReadError> {
    // `iconv` is told the encoding exactly: without a byte-order mark, `-f UTF-16` (or
    // `UTF-32`) would read little-endian text as big-endian.
    let wide = |offset, what: &str, encoding: &str, iconv: &str| ReadError::Encoding {
        offset,
        what: what.to_string(),
        seems: format!(
            "the file seems to be {encoding} text{}; save it as UTF-8 (e.g. `iconv -f {iconv} -t UTF-8`)",
            if encoding == "UTF-16" {
                " (as Windows PowerShell's `>` writes)"
            } else {
                ""
            }
        ),
    };
    // UTF-32 first: its little-endian mark starts as UTF-16's.
    for (mark, iconv) in [
        (&[0xff, 0xfe, 0, 0][..], "UTF-32"),
        (&[0, 0, 0xfe, 0xff][..], "UTF-32"),
    ] {
        if bytes.starts_with(mark) {
            let m: Vec<String> = mark.iter().map(|b| format!("{b:02X}")).collect();
            return Err(wide(
                0,
                &format!("UTF-32 byte-order mark {}", m.join(" ")),
                "UTF-32",
                iconv,
            ));
        }
    }
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return Err(wide(
            0,
            &format!("UTF-16 byte-order mark {:02X} {:02X}", bytes[0], bytes[1]),
            "UTF-16",
            "UTF-16",
        ));
    }
    // Wide text without a mark: an ASCII character and NUL bytes beside it; the run of NULs
    // tells UTF-16 (one) from UTF-32 (three), and where the character sits in its code unit
    // the byte order (first: little-endian).
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace() && *b != 0);
    if let Some(i) = start
        && bytes[i].is_ascii_graphic()
        && (bytes.get(i + 1) == Some(&0) || (i > 0 && bytes[i - 1] == 0))
    {
        let nul = bytes.iter().position(|b| *b == 0).unwrap_or(0);
        let zeros_after = bytes[i + 1..].iter().take_while(|b| **b == 0).count();
        let zeros_before = bytes[..i].iter().rev().take_while(|b| **b == 0).count();
        let (encoding, iconv) = match (zeros_after.max(zeros_before) >= 3, i) {
            (true, i) if i % 4 == 0 => ("UTF-32", "UTF-32LE"),
            (true, _) => ("UTF-32", "UTF-32BE"),
            (false, i) if i % 2 == 0 => ("UTF-16", "UTF-16LE"),
            (false, _) => ("UTF-16", "UTF-16BE"),
        };
        return Err(wide(nul, "NUL byte between characters", encoding, iconv));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text),
        // The start of a file may end inside a character.
        Err(e) if !whole && e.error_len().is_none() => {
            Ok(std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default())
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::read::fixtures::{MINIMAL, invalid, with};
    use crate::bundle::read::to_json;

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

    #[test]
    fn minimal_bundle_reads_and_round_trips() {
        let b = parse_bundle(MINIMAL).unwrap();
        assert_eq!(b.kernels[0].flops.fp32, Some(1e9));
        let again = parse_bundle(&to_json(&b).unwrap()).unwrap();
        assert_eq!(b, again);
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
    fn utf8_strings_are_taken_as_they_are_and_others_named_as_bundles_are() {
        assert_eq!(utf8_string(b"a\0b".to_vec()).unwrap(), "a\0b");
        let bytes = vec![0xff, 0xfe, b'a', 0];
        assert_eq!(
            utf8_string(bytes.clone()).unwrap_err(),
            parse_bundle_bytes(&bytes).unwrap_err()
        );
        let e = utf8_string(vec![0x1f, 0x8b, 0x08, 0x00, 0xff]).unwrap_err();
        assert!(e.to_string().contains("gzip-compressed"), "{e}");
        // A start may end inside a character; a whole input may not.
        assert_eq!(utf8_start("aé".as_bytes().split_at(2).0, false), Ok("a"));
        assert!(utf8_start("aé".as_bytes().split_at(2).0, true).is_err());
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
        assert!(
            e.to_string()
                .ends_with("(e.g. `iconv -f UTF-16LE -t UTF-8`)"),
            "{e}"
        );
        let be: Vec<u8> = "{}".encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert!(
            parse_bundle_bytes(&be)
                .unwrap_err()
                .to_string()
                .contains("UTF-16 text (as Windows PowerShell's `>` writes); save it as UTF-8 (e.g. `iconv -f UTF-16BE -t UTF-8`)")
        );
        // UTF-32, with and without its mark, either order: named as such, with the `iconv`
        // that reads it (UTF-16's would give garbage).
        let utf32 = |text: &str, le: bool| -> Vec<u8> {
            text.chars()
                .flat_map(|c| {
                    let c = c as u32;
                    if le { c.to_le_bytes() } else { c.to_be_bytes() }
                })
                .collect()
        };
        for (bytes, says) in [
            (
                utf32("\u{feff}{}", true),
                "UTF-32 byte-order mark FF FE 00 00 at byte offset 0; the file seems to be UTF-32 text; save it as UTF-8 (e.g. `iconv -f UTF-32 -t UTF-8`)",
            ),
            (
                utf32("\u{feff}{}", false),
                "UTF-32 byte-order mark 00 00 FE FF at byte offset 0; the file seems to be UTF-32 text; save it as UTF-8 (e.g. `iconv -f UTF-32 -t UTF-8`)",
            ),
            (
                utf32("{}", true),
                "the file seems to be UTF-32 text; save it as UTF-8 (e.g. `iconv -f UTF-32LE -t UTF-8`)",
            ),
            (
                utf32("{}", false),
                "the file seems to be UTF-32 text; save it as UTF-8 (e.g. `iconv -f UTF-32BE -t UTF-8`)",
            ),
        ] {
            let e = parse_bundle_bytes(&bytes).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
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
