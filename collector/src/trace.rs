//! `roofline import` of torch.profiler (Kineto) traces: recognising one by its content, gzip or
//! not (and telling what else an input is), and streaming it through `roofline_import::trace`
//! (which never sees the whole text); `capture` imports it.

use std::io::BufReader;
use std::path::Path;

use roofline_import::trace;

use crate::error::Error;
use crate::io::{head_of, open_regular, open_text};

pub use roofline_import::input::Content;
use roofline_import::input::{HEAD, is_gzip};

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
    let raw = head_of(&mut open_regular(path)?, HEAD).map_err(read_err)?;
    // Opened again from its start to be decompressed, when it is gzip.
    let again = if is_gzip(&raw) {
        Some(open_regular(path)?)
    } else {
        None
    };
    let decompressed = move || match again {
        Some(f) => {
            head_of(&mut crate::io::gunzip(BufReader::new(f)), HEAD).map_err(|e| e.to_string())
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
