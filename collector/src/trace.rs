//! `roofline import` of torch.profiler (Kineto) traces: recognising one by its content, gzip or
//! not (and telling what else an input is), and streaming it through `roofline_import::trace`
//! (which never sees the whole text); `capture` imports it.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;
use roofline_import::trace;

use crate::error::Error;

pub use roofline_import::input::Content;
use roofline_import::input::{HEAD, is_gzip, without_bom};

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
    let gzip = is_gzip(file.fill_buf().map_err(err)?);
    let r: Box<dyn BufRead> = if gzip {
        Box::new(BufReader::with_capacity(1 << 20, MultiGzDecoder::new(file)))
    } else {
        Box::new(file)
    };
    without_bom(r).map_err(err)
}

/// Up to `n` bytes from the start of `r`.
fn head_of(r: &mut dyn Read, n: usize) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(n);
    r.take(n as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// Tells what an input is from its start, and refuses what neither importer reads, saying what
/// it seems to be as `validate` does for bundles ([`roofline_import::input::classify`]: an empty
/// file or gzip stream, gzip inside gzip, UTF-16, bzip2, xz, zstd, zip, binary data, another
/// encoding).
///
/// # Errors
/// [`Error::ReadFile`] naming the file and what it is.
pub fn classify(path: &Path) -> Result<Content, Error> {
    let read_err = |source| Error::ReadFile {
        path: path.to_path_buf(),
        source,
    };
    let raw = head_of(&mut crate::io::open_regular(path)?, HEAD).map_err(read_err)?;
    // Opened again from its start to be decompressed, when it is gzip.
    let again = if is_gzip(&raw) {
        Some(crate::io::open_regular(path)?)
    } else {
        None
    };
    let decompressed = move || match again {
        Some(f) => {
            head_of(&mut MultiGzDecoder::new(BufReader::new(f)), HEAD).map_err(|e| e.to_string())
        }
        None => Ok(Vec::new()),
    };
    roofline_import::input::classify(&raw, decompressed).map_err(|what| Error::ReadFile {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, what),
    })
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
