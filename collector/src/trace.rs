//! `roofline import` of torch.profiler (Kineto) traces: recognising one by its content, gzip or
//! not (and telling what else an input is), and streaming it through `roofline_import::trace`
//! (which never sees the whole text); `capture` imports it.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;
use roofline_import::trace;

use crate::error::Error;

/// The gzip magic number (RFC 1952, §2.3.1).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// How much of an input's start is read to tell what it is.
const HEAD: usize = 4096;

/// What an input file is, from its first bytes (gzip decompressed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// A Chrome-trace JSON (an object or an array at its first non-blank byte), as
    /// torch.profiler writes; Nsight Compute CSV never starts so.
    Trace,
    /// Other UTF-8 text (Nsight Compute CSV, or anything the CSV reader will refuse by name).
    Text,
}

/// Opens a file as text, decompressing gzip (recognised by its magic number, not its name), a
/// UTF-8 byte-order mark skipped.
///
/// # Errors
/// [`Error::ReadFile`].
pub fn open_text(path: &Path) -> Result<Box<dyn BufRead>, Error> {
    let err = |source| Error::ReadFile {
        path: path.to_path_buf(),
        source,
    };
    let mut file = BufReader::with_capacity(1 << 20, crate::io::open_regular(path)?);
    let gzip = file.fill_buf().map_err(err)?.starts_with(&GZIP_MAGIC);
    let mut r: Box<dyn BufRead> = if gzip {
        Box::new(BufReader::with_capacity(1 << 20, MultiGzDecoder::new(file)))
    } else {
        Box::new(file)
    };
    // The mark (as Windows tools write it) is not part of the JSON.
    let mut first = Vec::with_capacity(3);
    while first.len() < 3 {
        let buf = r.fill_buf().map_err(err)?;
        if buf.is_empty() {
            break;
        }
        let take = buf.len().min(3 - first.len());
        first.extend_from_slice(&buf[..take]);
        r.consume(take);
    }
    if first != b"\xEF\xBB\xBF" {
        r = Box::new(std::io::Cursor::new(first).chain(r));
    }
    Ok(r)
}

/// Up to `n` bytes from the start of `r`.
fn head_of(r: &mut dyn Read, n: usize) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(n);
    r.take(n as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// Tells what an input is from its start, and refuses what neither importer reads, saying what
/// it seems to be as `validate` does for bundles: an empty file or gzip stream, gzip inside
/// gzip, UTF-16, bzip2, xz, zstd, zip, binary data, another encoding.
///
/// # Errors
/// [`Error::ReadFile`] naming the file and what it is.
pub fn classify(path: &Path) -> Result<Content, Error> {
    let refuse = |what: String| Error::ReadFile {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, what),
    };
    let read_err = |source| Error::ReadFile {
        path: path.to_path_buf(),
        source,
    };
    let raw = head_of(&mut crate::io::open_regular(path)?, HEAD).map_err(read_err)?;
    if raw.is_empty() {
        return Err(refuse(
            "the file is empty (0 bytes): nothing to import".into(),
        ));
    }
    let gzip = raw.starts_with(&GZIP_MAGIC);
    let head = if gzip {
        let mut r = MultiGzDecoder::new(BufReader::new(crate::io::open_regular(path)?));
        head_of(&mut r, HEAD).map_err(|e| {
            refuse(format!(
                "the file starts as gzip but cannot be decompressed ({e}): is it cut short?"
            ))
        })?
    } else {
        raw
    };
    if gzip && head.is_empty() {
        return Err(refuse(
            "the gzip stream holds no data (an empty file, compressed): nothing to import".into(),
        ));
    }
    if gzip && head.starts_with(&GZIP_MAGIC) {
        return Err(refuse(
            "the gzip stream holds gzip-compressed data again (compressed twice): decompress it once (`gunzip`) and import the .gz that is left".into(),
        ));
    }
    roofline_model::read::check_text_start(&head, false).map_err(|e| {
        refuse(if gzip {
            format!("once decompressed, {e}")
        } else {
            e.to_string()
        })
    })?;
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    if text.iter().all(u8::is_ascii_whitespace) {
        return Err(refuse(format!(
            "the file{} holds only blank space: nothing to import",
            if gzip { ", once decompressed," } else { "" }
        )));
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

/// True when the file is a Chrome-trace JSON ([`Content::Trace`]).
///
/// # Errors
/// As [`classify`].
pub fn is_trace(path: &Path) -> Result<bool, Error> {
    Ok(classify(path)? == Content::Trace)
}

/// Whether a file that failed to read as a bundle is a torch.profiler trace: its first MiB
/// (decompressed) names `traceEvents`. Only asked on that error path.
pub fn looks_like_trace(path: &Path) -> bool {
    let Ok(mut r) = open_text(path) else {
        return false;
    };
    let Ok(head) = head_of(&mut r, 1 << 20) else {
        return false;
    };
    let key = b"\"traceEvents\"";
    head.windows(key.len()).any(|w| w == key)
}

/// Reads one trace as a stream.
///
/// # Errors
/// [`Error::ReadFile`]; [`Error::Trace`] (not a trace, a broken one).
pub fn read(path: &Path) -> Result<trace::Trace, Error> {
    trace::parse(open_text(path)?).map_err(|source| Error::Trace {
        path: path.to_path_buf(),
        source: Box::new(source),
    })
}
