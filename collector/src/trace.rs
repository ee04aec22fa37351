//! `roofline import` of torch.profiler (Kineto) traces: recognising one by its content, gzip or
//! not, and streaming it through `roofline_import::trace` (which never sees the whole text).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;
use roofline_import::ncu::{Arch, Convention, Imported};
use roofline_import::trace::{self, ImportOptions};

use crate::error::Error;

/// The gzip magic number (RFC 1952, §2.3.1).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Opens a file as text, decompressing gzip (recognised by its magic number, not its name).
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
    Ok(if gzip {
        Box::new(BufReader::with_capacity(1 << 20, MultiGzDecoder::new(file)))
    } else {
        Box::new(file)
    })
}

/// True when the file is a Chrome-trace JSON (an object or an array at its first non-blank
/// byte), as torch.profiler writes; Nsight Compute CSV never starts so.
///
/// # Errors
/// [`Error::ReadFile`] when the file (or its gzip stream) cannot be read.
pub fn is_trace(path: &Path) -> Result<bool, Error> {
    let mut r = open_text(path)?;
    let mut head = [0u8; 512];
    let mut n = 0;
    while n < head.len() {
        let got = r.read(&mut head[n..]).map_err(|source| Error::ReadFile {
            path: path.to_path_buf(),
            source,
        })?;
        if got == 0 {
            break;
        }
        n += got;
    }
    // A UTF-8 byte-order mark, then blanks.
    let text = head[..n]
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(&head[..n]);
    Ok(matches!(
        text.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    ))
}

/// Reads one trace as a stream.
fn read(path: &Path) -> Result<trace::Trace, Error> {
    trace::parse(open_text(path)?).map_err(|source| Error::Trace {
        path: path.to_path_buf(),
        source: Box::new(source),
    })
}

/// Reads and converts one trace into the pieces `capture` assembles into a bundle; with
/// `counters`, a range-profiler trace whose counters join it ([`trace::import_with_counters`]).
///
/// # Errors
/// [`Error::ReadFile`], [`Error::Trace`] (not a trace, a broken one) and
/// [`Error::TraceImport`] (nothing to import, or traces that do not join).
pub fn import(
    path: &Path,
    arch: Option<Arch>,
    convention: Convention,
    counters: Option<&Path>,
) -> Result<(Imported, usize), Error> {
    let t = read(path)?;
    let opts = ImportOptions { convention, arch };
    let imp = match counters {
        Some(c) => {
            if !is_trace(c)? {
                return Err(Error::Usage(format!(
                    "--counters {}: not a torch.profiler trace (JSON, gzip or not)",
                    c.display()
                )));
            }
            let ct = read(c)?;
            trace::import_with_counters(&t, &ct, &opts)
        }
        None => trace::import(&t, &opts),
    }
    .map_err(|source| Error::TraceImport {
        path: path.to_path_buf(),
        source: Box::new(source),
    })?;
    let launches = imp.stats.launches;
    Ok((
        Imported {
            kernels: imp.kernels,
            devices: imp.devices,
            notes: imp.notes,
        },
        launches,
    ))
}
