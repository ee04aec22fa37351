//! What an input is, told from its first bytes: a torch.profiler trace (JSON), other text (the
//! Nsight Compute CSV reader's), or something neither importer reads, refused with what it
//! seems to be (an empty file or gzip stream, gzip inside gzip, UTF-16, bzip2, xz, binary data).
//!
//! Pure: the caller reads the bytes and decompresses gzip (the CLI with flate2, the viewer's
//! worker with the browser's `DecompressionStream`), so that both refuse the same inputs with the
//! same words.

use std::io::{BufRead, Read};

/// The gzip magic number (RFC 1952, §2.3.1).
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// How a decompressor's error about data after the end of a gzip stream begins (something
/// appended to a whole stream, not a stream cut short).
pub const TRAILING_DATA: &str = "data after the gzip stream";

/// How much of an input's start (decompressed) tells what it is.
pub const HEAD: usize = 4096;

/// The UTF-8 byte-order mark, as Windows tools write it: not part of the text.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What an input is, from its first bytes (gzip decompressed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// A Chrome-trace JSON (an object or an array at its first non-blank byte), as
    /// torch.profiler writes; Nsight Compute CSV never starts so.
    Trace,
    /// Other UTF-8 text (Nsight Compute CSV, or anything the CSV reader will refuse by name).
    Text,
}

/// Whether bytes start as gzip.
pub fn is_gzip(start: &[u8]) -> bool {
    start.starts_with(&GZIP_MAGIC)
}

/// Tells what an input is from `raw`, its first [`HEAD`] bytes as stored, and, for gzip, the
/// first [`HEAD`] bytes once decompressed (asked only then: `decompressed` gives them, or the
/// decompressor's error in words).
///
/// # Errors
/// What the input is, in words, when neither importer reads it.
pub fn classify(
    raw: &[u8],
    decompressed: impl FnOnce() -> Result<Vec<u8>, String>,
) -> Result<Content, String> {
    if raw.is_empty() {
        return Err("the file is empty (0 bytes): nothing to import".into());
    }
    let gzip = is_gzip(raw);
    let decompressed_head;
    let head = if gzip {
        decompressed_head = decompressed().map_err(|e| {
            if e.starts_with(TRAILING_DATA) {
                e
            } else {
                format!(
                    "the file starts as gzip but cannot be decompressed ({e}): is it cut short?"
                )
            }
        })?;
        &decompressed_head[..]
    } else {
        raw
    };
    if gzip && head.is_empty() {
        return Err(
            "the gzip stream holds no data (an empty file, compressed): nothing to import".into(),
        );
    }
    if gzip && is_gzip(head) {
        return Err("the gzip stream holds gzip-compressed data again (compressed twice): decompress it once (`gunzip`) and import the .gz that is left".into());
    }
    roofline_model::bundle::read::check_text_start(head, false).map_err(|e| {
        if gzip {
            format!("once decompressed, {e}")
        } else {
            e.to_string()
        }
    })?;
    let text = head.strip_prefix(BOM).unwrap_or(head);
    if text.iter().all(u8::is_ascii_whitespace) {
        return Err(format!(
            "the file{} holds only blank space: nothing to import",
            if gzip { ", once decompressed," } else { "" }
        ));
    }
    Ok(
        if matches!(
            text.iter().find(|b| !b.is_ascii_whitespace()),
            Some(b'{' | b'[')
        ) {
            Content::Trace
        } else {
            Content::Text
        },
    )
}

/// A whole input's bytes as text, or what it seems to be when it is not UTF-8 (UTF-16,
/// compressed, binary), as for bundles.
///
/// # Errors
/// The reason, in words.
pub fn utf8_text(bytes: Vec<u8>) -> Result<String, String> {
    roofline_model::bundle::read::utf8_string(bytes).map_err(|e| e.to_string())
}

/// A reader of text without its UTF-8 byte-order mark, if it starts with one.
///
/// # Errors
/// The reader's, while looking for the mark.
pub fn without_bom<'a>(mut r: impl BufRead + 'a) -> std::io::Result<Box<dyn BufRead + 'a>> {
    let mut first = Vec::with_capacity(BOM.len());
    while first.len() < BOM.len() {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let take = buf.len().min(BOM.len() - first.len());
        first.extend_from_slice(&buf[..take]);
        r.consume(take);
    }
    Ok(if first == BOM {
        Box::new(r)
    } else {
        Box::new(std::io::Cursor::new(first).chain(r))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unused() -> Result<Vec<u8>, String> {
        unreachable!("asked for the decompressed head of plain text")
    }

    #[test]
    fn inputs_are_told_apart_by_their_start() {
        assert_eq!(
            classify(b"  {\"traceEvents\": []}", unused),
            Ok(Content::Trace)
        );
        assert_eq!(classify(b"\xEF\xBB\xBF[{}]", unused), Ok(Content::Trace));
        assert_eq!(classify(b"==PROF== x\n\"ID\",", unused), Ok(Content::Text));
        let gz = [0x1f, 0x8b, 8, 0];
        assert_eq!(classify(&gz, || Ok(b"{}".to_vec())), Ok(Content::Trace));
        for (raw, head, says) in [
            (&b""[..], Ok(Vec::new()), "the file is empty (0 bytes)"),
            (&gz[..], Ok(Vec::new()), "the gzip stream holds no data"),
            (&gz[..], Ok(gz.to_vec()), "compressed twice"),
            (
                &gz[..],
                Err("corrupt".to_string()),
                "cannot be decompressed (corrupt)",
            ),
            (
                &gz[..],
                Err(format!("{TRAILING_DATA}: at byte offset 9")),
                "data after the gzip stream: at byte offset 9",
            ),
            (
                &gz[..],
                Ok(b"\xff\xfe{".to_vec()),
                "once decompressed, not UTF-8 text",
            ),
            (
                &b" \n "[..],
                Ok(Vec::new()),
                "the file holds only blank space",
            ),
            (&b"\xff\xfe{\x00"[..], Ok(Vec::new()), "UTF-16"),
        ] {
            let e = classify(raw, || head).unwrap_err();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn the_byte_order_mark_is_skipped_once() {
        let mut s = String::new();
        without_bom(&b"\xEF\xBB\xBFab"[..])
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "ab");
        s.clear();
        without_bom(&b"a"[..])
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "a");
        assert!(
            utf8_text(vec![0xff, 0xfe, b'a', 0])
                .unwrap_err()
                .contains("UTF-16")
        );
    }
}
