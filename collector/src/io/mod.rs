//! The one place the collector reads files, writes files and writes to standard output.
//!
//! - **Reading**: only regular files are read. A FIFO, a device or a directory is refused before
//!   any byte is read (it is opened without blocking, then checked), so `/dev/zero` cannot fill
//!   memory and a FIFO with no writer cannot hang the command. [`open_text`] opens one as text,
//!   gzip or not (how [`crate::trace`] reads traces); a file that fails to read as a bundle is
//!   told apart as a torch.profiler trace here, by its first MiB.
//! - **Writing files**: every write is atomic: the bytes go to a fresh temporary file beside the
//!   target (created exclusively, never through a planted link), which is synced and then renamed
//!   over it; on any error the temporary file is removed, so a full disk or a file-size limit
//!   (`ulimit -f`, see [`survive_file_size_limit`]) never leaves half a file or a stray
//!   temporary behind. A symlink is written through to the file it names (the link is kept); an
//!   existing target keeps its permission bits; a target that exists and is not a regular file
//!   (a device, a FIFO, a directory) is refused. `-` means standard output.
//! - **Identity**: [`check_files`] refuses an output that is one of the command's inputs, and
//!   [`check_distinct`] the same input twice, by file identity (device and inode), so `./a.json`,
//!   an absolute path, a symlink or a hard link to an input are all recognised.
//! - **Standard output**: [`stdout`] turns a closed pipe into [`Error::StdoutClosed`] (the
//!   binary then ends quietly, as `head` expects) and any other failure, such as a full device,
//!   into a clear error. Lines for standard error go through [`crate::stderr::message`]; nothing
//!   else in the collector prints (`print!` and `eprint!` are denied by lint in the crate).

use std::fs;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

use flate2::bufread::GzDecoder;
use roofline_import::input::{is_gzip, without_bom};
use roofline_model::Bundle;

use crate::error::Error;

mod write;
use write::resolve_target;
pub use write::{Atomic, BundleOut, COLUMNS_FROM, columns_beside, write_atomic, write_bundle};

/// The `-o` value that means standard output.
pub const STDOUT: &str = "-";

/// Whether `path` is `-`, standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == STDOUT
}

/// How a path is named in messages: `standard output` for `-`, else the path.
pub fn describe(path: &Path) -> String {
    if is_stdout(path) {
        "standard output".into()
    } else {
        path.display().to_string()
    }
}

/// Writes `bytes` to standard output and flushes it.
///
/// # Errors
/// [`Error::StdoutClosed`] when the reader has gone (a closed pipe); [`Error::Stdout`] for any
/// other failure (a full device, for example).
pub fn stdout(bytes: &[u8]) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| {
            if e.kind() == ErrorKind::BrokenPipe {
                Error::StdoutClosed
            } else {
                Error::Stdout(e)
            }
        })
}

/// A no-op handler for SIGXFSZ (see [`survive_file_size_limit`]).
#[cfg(unix)]
extern "C" fn on_file_size_limit(_: libc::c_int) {}

/// Makes a file-size limit (`ulimit -f`) a write error instead of a kill.
///
/// By default the kernel kills a process that writes past its file-size limit with SIGXFSZ,
/// leaving its temporary file behind. With a handler installed the write fails with `EFBIG`
/// ("File too large"), which [`write_atomic`] reports after removing the temporary file. A
/// handler, unlike ignoring the signal, is reset for the programs `roofline profile` runs, so
/// they keep the default behaviour. Call once, at the start of `main`.
pub fn survive_file_size_limit() {
    #[cfg(unix)]
    #[allow(unsafe_code)]
    // SAFETY: installs, before any other thread exists, a handler that does nothing (trivially
    // async-signal-safe) for one signal; no Rust state is touched.
    unsafe {
        libc::signal(
            libc::SIGXFSZ,
            on_file_size_limit as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// What a non-regular file is, for messages.
fn kind_of(t: fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "something other than a file"
    }
}

fn not_regular_input(path: &Path, t: fs::FileType) -> Error {
    Error::ReadFile {
        path: path.to_path_buf(),
        source: std::io::Error::other(format!("it is {}, not a regular file", kind_of(t))),
    }
}

fn not_regular_output(path: &Path, t: fs::FileType) -> Error {
    Error::WriteFile {
        path: path.to_path_buf(),
        source: std::io::Error::other(format!(
            "it is {}, not a regular file; write to a file, or give -o - for standard output",
            kind_of(t)
        )),
    }
}

/// Opens a regular file for reading, refusing anything else without blocking on it.
pub(crate) fn open_regular(path: &Path) -> Result<fs::File, Error> {
    let read_err = |source| Error::ReadFile {
        path: path.to_path_buf(),
        source,
    };
    // Sockets cannot be opened at all, so look first for the clearer message.
    let meta = fs::metadata(path).map_err(read_err)?;
    if !meta.is_file() {
        return Err(not_regular_input(path, meta.file_type()));
    }
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        // Should the file have been replaced by a FIFO since, opening it must not wait for a
        // writer; the check below then refuses it.
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(read_err)?;
    let meta = file.metadata().map_err(read_err)?;
    if !meta.is_file() {
        return Err(not_regular_input(path, meta.file_type()));
    }
    Ok(file)
}

/// Reads a regular file as text.
///
/// # Errors
/// [`Error::ReadFile`] when the file cannot be read, is not UTF-8, or is not a regular file
/// (naming what it is: a FIFO, a character device, a directory…).
pub fn read_text(path: &Path) -> Result<String, Error> {
    let bytes = read_bytes(path)?;
    // Say what the file seems to be (UTF-16, compressed, binary…), as for bundles.
    roofline_model::bundle::read::utf8_string(bytes).map_err(|e| Error::ReadFile {
        path: path.to_path_buf(),
        source: std::io::Error::new(ErrorKind::InvalidData, e.to_string()),
    })
}

/// Reads a regular file's bytes (refusing devices, FIFOs and directories, as [`read_text`]).
///
/// # Errors
/// [`Error::ReadFile`] when the file cannot be opened or read, or is not a regular file.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, Error> {
    let mut file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|source| Error::ReadFile {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(bytes)
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
    let mut file = BufReader::with_capacity(1 << 20, open_regular(path)?);
    let gzip = is_gzip(file.fill_buf().map_err(err)?);
    let r: Box<dyn BufRead> = if gzip {
        Box::new(Inflated::spawn(gunzip(file)))
    } else {
        Box::new(file)
    };
    without_bom(r).map_err(err)
}

/// Bytes inflated on a thread of their own, a few MiB ahead of their reader: decompression
/// overlaps parsing (on two cores, a gzipped trace is read in about the time of its parse alone).
/// At most [`Inflated::AHEAD`] chunks wait; the thread ends at the end of the stream, at an
/// error (handed to the reader in turn), or when the reader is dropped.
struct Inflated {
    rx: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
    done: bool,
}

impl Inflated {
    /// Chunks inflated ahead of the reader.
    const AHEAD: usize = 4;
    /// The size of a chunk, bytes.
    const CHUNK: usize = 1 << 20;

    fn spawn<R: Read + Send + 'static>(mut source: R) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel(Self::AHEAD);
        std::thread::spawn(move || {
            loop {
                let mut chunk = vec![0u8; Self::CHUNK];
                let mut filled = 0;
                let result = loop {
                    match source.read(&mut chunk[filled..]) {
                        Ok(0) => break Ok(()),
                        Ok(n) => {
                            filled += n;
                            if filled == chunk.len() {
                                break Ok(());
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                chunk.truncate(filled);
                let end = filled < Self::CHUNK;
                if filled > 0 && tx.send(Ok(chunk)).is_err() {
                    return;
                }
                if let Err(e) = result {
                    let _ = tx.send(Err(e));
                    return;
                }
                if end {
                    return;
                }
            }
        });
        Inflated {
            rx,
            chunk: Vec::new(),
            pos: 0,
            done: false,
        }
    }
}

impl Read for Inflated {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let have = self.fill_buf()?;
            let n = have.len().min(out.len());
            out[..n].copy_from_slice(&have[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Inflated {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.pos == self.chunk.len() && !self.done {
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    self.chunk = chunk;
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                // The thread ended: the end of the stream.
                Err(_) => self.done = true,
            }
        }
        Ok(&self.chunk[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.chunk.len());
    }
}

/// A gzip file's content, as `gzip -d` reads it: its members one after another, and NUL bytes
/// after the last ignored (padding, as tape and block devices leave); anything else after the
/// gzip stream is refused (`gzip -d` ignores it with a warning), naming its byte offset, so
/// that a file with something else appended is never read as if whole.
pub fn gunzip<R: BufRead>(r: R) -> impl Read {
    Gunzip {
        member: Some(GzDecoder::new(Counted { inner: r, read: 0 })),
    }
}

/// A reader that counts the bytes consumed from it.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.read += n as u64;
        self.inner.consume(n);
    }
}

/// [`gunzip`]'s reader: the member being read (`None` once the stream has ended).
struct Gunzip<R: BufRead> {
    member: Option<GzDecoder<Counted<R>>>,
}

impl<R: BufRead> Read for Gunzip<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let Some(member) = self.member.as_mut() else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // This member has ended: another follows, or padding, or something else.
            let Some(mut rest) = self.member.take().map(GzDecoder::into_inner) else {
                return Ok(0);
            };
            let at = rest.read;
            let next = rest.fill_buf()?;
            if next.is_empty() {
                return Ok(0);
            }
            if next.len() >= 2 && is_gzip(next) {
                self.member = Some(GzDecoder::new(rest));
                continue;
            }
            let mut offset = at;
            loop {
                let chunk = rest.fill_buf()?;
                if chunk.is_empty() {
                    return Ok(0);
                }
                if let Some(i) = chunk.iter().position(|b| *b != 0) {
                    offset += i as u64;
                    return Err(std::io::Error::new(
                        ErrorKind::InvalidData,
                        format!(
                            "{}: the stream ends at byte offset {at}, and byte offset {offset} holds neither another gzip member nor padding; `gzip -d` would ignore what follows with a warning (\"trailing garbage ignored\"): decompress the file, check what was appended to it, and import what you mean",
                            roofline_import::input::TRAILING_DATA
                        ),
                    ));
                }
                let len = chunk.len();
                offset += len as u64;
                rest.consume(len);
            }
        }
    }
}

/// Up to `n` bytes from the start of `r`.
pub(crate) fn head_of(r: &mut dyn Read, n: usize) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(n);
    r.take(n as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// Whether a file that failed to read as a bundle is a torch.profiler trace: its first MiB
/// (decompressed) names `traceEvents`. Only asked on that error path.
fn looks_like_trace(path: &Path) -> bool {
    let Ok(mut r) = open_text(path) else {
        return false;
    };
    let Ok(head) = head_of(&mut r, 1 << 20) else {
        return false;
    };
    let key = b"\"traceEvents\"";
    head.windows(key.len()).any(|w| w == key)
}

/// Reads and validates a bundle file.
///
/// # Errors
/// [`Error::ReadFile`] when the file cannot be read, [`Error::Bundle`] when it is not a valid
/// bundle (the cause names the JSON path or line and column).
pub fn read_bundle(path: &Path) -> Result<Bundle, Error> {
    read_bundle_and_bytes(path).map(|(b, _)| b)
}

/// Reads and validates a bundle file, returning its bytes too (for the standalone page, which
/// inlines the file as it is).
///
/// # Errors
/// As [`read_bundle`].
pub fn read_bundle_and_bytes(path: &Path) -> Result<(Bundle, Vec<u8>), Error> {
    let bytes = read_bytes(path)?;
    let bundle = roofline_model::parse_bundle_bytes(&bytes).map_err(|source| {
        // A torch.profiler trace (gzip or not) given where a bundle is read: say what to run.
        if looks_like_trace(path) {
            Error::TraceNotBundle {
                path: path.to_path_buf(),
            }
        } else {
            Error::Bundle {
                path: path.to_path_buf(),
                source,
            }
        }
    })?;
    Ok((bundle, bytes))
}

/// Reads a bundle in one pass without holding it whole ([`roofline_model::bundle::stream::read`]): each
/// kernel goes into the accumulator `A` through `push`; the bundle comes back without kernels,
/// with how many it held. A bundle the one pass cannot read is read whole for the diagnosis
/// (and, should that read succeed after all, its kernels go into a fresh accumulator).
///
/// # Errors
/// As [`read_bundle`].
pub fn read_bundle_reduced<A: Default>(
    path: &Path,
    push: impl Fn(&mut A, roofline_model::bundle::Kernel),
) -> Result<(roofline_model::bundle::stream::Streamed, A), Error> {
    let file = open_regular(path)?;
    let mut acc = A::default();
    let reader = BufReader::with_capacity(1 << 20, file);
    match roofline_model::bundle::stream::read(reader, &mut |k| push(&mut acc, k)) {
        Ok(s) => Ok((s, acc)),
        Err(_) => {
            let mut whole = read_bundle(path)?;
            let mut acc = A::default();
            let entries = whole.kernels.len();
            for k in std::mem::take(&mut whole.kernels) {
                push(&mut acc, k);
            }
            Ok((
                roofline_model::bundle::stream::Streamed {
                    shell: whole,
                    entries,
                },
                acc,
            ))
        }
    }
}

/// The inputs of `roofline import` with each directory among them replaced by the
/// torch.profiler traces in it (its `.json` and `.json.gz` files, by name); other paths as given.
///
/// # Errors
/// [`Error::ReadFile`]: a directory that cannot be listed, or holds no trace.
pub fn expand_trace_dirs(files: Vec<PathBuf>) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        if !f.is_dir() {
            out.push(f);
            continue;
        }
        let err = |source| Error::ReadFile {
            path: f.clone(),
            source,
        };
        let mut found: Vec<PathBuf> = fs::read_dir(&f)
            .map_err(err)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                p.is_file()
                    && name.is_some_and(|n| {
                        !n.starts_with('.') && (n.ends_with(".json") || n.ends_with(".json.gz"))
                    })
            })
            .collect();
        if found.is_empty() {
            return Err(err(std::io::Error::other(
                "the directory holds no torch.profiler trace (.json or .json.gz)",
            )));
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// Whether an output path names a directory: an existing one, or a path ending in `/`.
pub fn is_dir_output(path: &Path) -> bool {
    !is_stdout(path) && (path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/'))
}

/// Creates the directory `-o DIR/` names, and its parents.
///
/// # Errors
/// [`Error::WriteFile`].
pub fn create_dir(path: &Path) -> Result<(), Error> {
    fs::create_dir_all(path).map_err(|source| Error::WriteFile {
        path: path.to_path_buf(),
        source,
    })
}

/// A private directory beside `output` (in its directory, so that what is written there is on
/// the output's file system), removed with everything in it when dropped.
///
/// # Errors
/// [`Error::WriteFile`] naming `output`.
pub fn temp_dir_beside(output: &Path) -> Result<tempfile::TempDir, Error> {
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    tempfile::Builder::new()
        .prefix(".roofline-ranks-")
        .tempdir_in(&dir)
        .map_err(|source| Error::WriteFile {
            path: output.to_path_buf(),
            source,
        })
}

/// Reads a bundle kernel by kernel ([`roofline_model::bundle::stream::read`]), handing each to
/// `each`; the first error of `each` is returned once the file is read. The bundle comes back
/// without kernels.
///
/// # Errors
/// As [`read_bundle`]; `each`'s first error.
pub fn stream_kernels(
    path: &Path,
    each: &mut dyn FnMut(roofline_model::bundle::Kernel) -> Result<(), Error>,
) -> Result<roofline_model::bundle::stream::Streamed, Error> {
    let file = open_regular(path)?;
    let reader = BufReader::with_capacity(1 << 20, file);
    let mut failed = None;
    let read = roofline_model::bundle::stream::read(reader, &mut |k| {
        if failed.is_none()
            && let Err(e) = each(k)
        {
            failed = Some(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    match read {
        Ok(s) => Ok(s),
        // The diagnosis of a bundle the one pass cannot read.
        Err(_) => Err(read_bundle(path).err().unwrap_or_else(|| Error::ReadFile {
            path: path.to_path_buf(),
            source: std::io::Error::other("the bundle could not be read as a stream"),
        })),
    }
}

/// Writes to the file if one is given (standard output for `-` or none), atomically.
///
/// # Errors
/// [`Error::WriteFile`]; for standard output, those of [`stdout`].
pub fn write_output(path: Option<&Path>, bytes: &[u8]) -> Result<(), Error> {
    match path {
        Some(p) if !is_stdout(p) => write_atomic(p, bytes),
        _ => stdout(bytes),
    }
}

/// Creates the folder `path` goes in, and its parents, where missing.
///
/// # Errors
/// [`Error::WriteFile`] naming the folder.
pub fn create_parent(path: &Path) -> Result<(), Error> {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) => fs::create_dir_all(dir).map_err(|source| Error::WriteFile {
            path: dir.to_path_buf(),
            source,
        }),
        None => Ok(()),
    }
}

/// A file's identity: device and inode where the platform has them, else its canonical path.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileId {
    #[cfg(unix)]
    dev_ino: (u64, u64),
    #[cfg(not(unix))]
    canonical: PathBuf,
}

/// The identity of the file `path` names (through symlinks), `None` if there is none.
fn file_id(path: &Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = fs::metadata(path).ok()?;
        Some(FileId {
            dev_ino: (m.dev(), m.ino()),
        })
    }
    #[cfg(not(unix))]
    {
        Some(FileId {
            canonical: fs::canonicalize(path).ok()?,
        })
    }
}

/// Checks a command's outputs before it runs: each must be standard output, a new file, or an
/// existing regular file (through symlinks) that is none of the command's inputs.
///
/// # Errors
/// [`Error::WriteFile`] for a target that is not a regular file; [`Error::OutputIsInput`] when
/// an output is, by identity, one of the inputs.
pub fn check_files(inputs: &[&Path], outputs: &[&Path]) -> Result<(), Error> {
    for out in outputs.iter().filter(|o| !is_stdout(o)) {
        resolve_target(out)?;
        let Some(id) = file_id(out) else { continue };
        if let Some(input) = inputs.iter().find(|i| file_id(i).as_ref() == Some(&id)) {
            return Err(Error::OutputIsInput {
                output: out.to_path_buf(),
                input: input.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Refuses the same file twice among `inputs` (by identity).
///
/// # Errors
/// [`Error::SameInput`] naming both arguments.
pub fn check_distinct(inputs: &[&Path]) -> Result<(), Error> {
    let ids: Vec<Option<FileId>> = inputs.iter().map(|p| file_id(p)).collect();
    for (j, b) in ids.iter().enumerate() {
        if let Some(b) = b
            && let Some(i) = ids[..j].iter().position(|a| a.as_ref() == Some(b))
        {
            return Err(Error::SameInput {
                first: inputs[i].to_path_buf(),
                second: inputs[j].to_path_buf(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<std::ffi::OsString> {
        let mut v: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"second");
        assert_eq!(
            names(dir.path()),
            vec![std::ffi::OsString::from("out.json")]
        );
    }

    #[test]
    fn a_failed_write_names_the_target_and_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-dir").join("out.json");
        let e = write_atomic(&missing, b"x").unwrap_err();
        assert!(e.to_string().contains("out.json"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_a_temporary_name_is_not_followed() {
        // The old code created `.out.json.<pid>.tmp` with File::create, which follows a symlink
        // someone put there; temporary files are now created exclusively under a random name.
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        let planted = dir
            .path()
            .join(format!(".out.json.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        write_atomic(&dir.path().join("out.json"), b"new").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(
            fs::read_to_string(dir.path().join("out.json")).unwrap(),
            "new"
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_to_their_file_and_loops_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", &b).unwrap();
        let e = write_atomic(&a, b"x").unwrap_err();
        assert!(
            crate::error::report_chain(&e).contains("too many levels of symbolic links"),
            "{e}"
        );
        let c = dir.path().join("sub");
        fs::create_dir(&c).unwrap();
        std::os::unix::fs::symlink("sub/real", dir.path().join("l")).unwrap();
        write_atomic(&dir.path().join("l"), b"through").unwrap();
        assert_eq!(fs::read_to_string(c.join("real")).unwrap(), "through");
    }

    #[test]
    fn identity_sees_through_spellings_and_links() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        fs::write(&a, "{}").unwrap();
        let dotted = dir.path().join(".").join("a.json");
        let e = check_files(&[&a], &[&dotted]).unwrap_err();
        assert!(matches!(e, Error::OutputIsInput { .. }), "{e}");
        let e = check_distinct(&[&a, &dotted]).unwrap_err();
        assert!(matches!(e, Error::SameInput { .. }), "{e}");
        // A new file or standard output is never an input.
        check_files(&[&a], &[&dir.path().join("new.json"), Path::new(STDOUT)]).unwrap();
        check_distinct(&[&a, &dir.path().join("missing.json")]).unwrap();
    }
}
