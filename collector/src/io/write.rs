//! Writing files: bundles kernel by kernel ([`BundleOut`], with the columns file beside a large
//! one), and any bytes ([`write_atomic`]), every write atomic (see the parent module).

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use roofline_model::Bundle;

use super::{is_stdout, not_regular_output};
use crate::error::Error;

/// Serializes a bundle (validating it first) and writes it atomically, or to standard output
/// for `-`, kernel by kernel: its text is never held whole ([`BundleOut`]). A file of at least
/// [`COLUMNS_FROM`] kernel entries gets its columns file beside it, which the bundle names.
///
/// # Errors
/// [`Error::InvalidOutput`] if the bundle holds impossible figures; the errors of
/// [`write_output`].
pub fn write_bundle(path: &Path, bundle: &Bundle) -> Result<(), Error> {
    // Every problem at once, and nothing written (not even to standard output) when there is one.
    roofline_model::validate(bundle).map_err(|source| Error::InvalidOutput {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = BundleOut::create(path, bundle)?;
    for k in &bundle.kernels {
        out.kernel(k)?;
    }
    out.finish(bundle)
}

/// How many kernel entries a bundle file holds before a columns file
/// ([`roofline_model::bundle::columns`]) is written beside it: below, its JSON opens in the
/// viewer in well under a second (a 10,000-launch bundle is about 6 MB).
pub const COLUMNS_FROM: usize = 10_000;

/// The columns file written beside a bundle file of `entries` kernel entries, if one is.
pub fn columns_beside(path: &Path, entries: usize) -> Option<PathBuf> {
    if is_stdout(path) || entries < COLUMNS_FROM {
        return None;
    }
    let name = path.file_name()?.to_string_lossy();
    Some(path.with_file_name(roofline_model::bundle::columns::file_name_for(&name)))
}

/// A fresh id for a bundle and its columns file: 128 bits from the standard library's
/// randomly keyed hasher, the time and the process.
fn columns_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let half = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(now);
        h.write_u32(std::process::id());
        h.finish()
    };
    format!("{:016x}{:016x}", half(), half())
}

/// Where a write lands once symbolic links are followed.
pub(super) struct Target {
    /// The file to replace or create.
    path: PathBuf,
    /// The permissions of the file replaced, when there is one.
    permissions: Option<fs::Permissions>,
}

/// Follows `path` through symbolic links to the file a write must replace or create.
///
/// # Errors
/// [`Error::WriteFile`] when the path (or what a link names) exists and is not a regular file,
/// or when the links loop.
pub(super) fn resolve_target(path: &Path) -> Result<Target, Error> {
    let err = |source| Error::WriteFile {
        path: path.to_path_buf(),
        source,
    };
    let mut p = path.to_path_buf();
    // As many links as Linux follows (MAXSYMLINKS).
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Ok(Target {
                    path: p,
                    permissions: None,
                });
            }
            Err(e) => return Err(err(e)),
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p).map_err(err)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            Ok(m) if m.is_file() => {
                return Ok(Target {
                    path: p,
                    permissions: Some(m.permissions()),
                });
            }
            Ok(m) => return Err(not_regular_output(path, m.file_type())),
        }
    }
    Err(err(std::io::Error::other(
        "too many levels of symbolic links",
    )))
}

/// Writes `bytes` to `path` atomically: a new temporary file in the target's directory, synced,
/// then renamed over the target. A symlink is written through (the link stays); an existing
/// file keeps its permission bits; the temporary file is removed on every error.
///
/// # Errors
/// [`Error::WriteFile`] naming the target: it is not a regular file, or the directory, the disk
/// or a file-size limit refused the bytes.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut out = Atomic::create(path)?;
    out.file()
        .write_all(bytes)
        .map_err(|source| Error::WriteFile {
            path: path.to_path_buf(),
            source,
        })?;
    out.persist()
}

/// A file being written atomically: a temporary file beside the target (see [`write_atomic`]),
/// removed when dropped unless [`Atomic::persist`] renamed it over the target.
pub struct Atomic {
    /// The path as given, for messages.
    path: PathBuf,
    /// Where the bytes go once complete.
    target: Target,
    tmp: tempfile::NamedTempFile,
    dir: PathBuf,
}

impl Atomic {
    /// Creates the temporary file for `path` (through symlinks, keeping the target's mode).
    ///
    /// # Errors
    /// [`Error::WriteFile`] as [`write_atomic`].
    pub fn create(path: &Path) -> Result<Self, Error> {
        let err = |source| Error::WriteFile {
            path: path.to_path_buf(),
            source,
        };
        let target = resolve_target(path)?;
        let dir = match target.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .path
            .file_name()
            .ok_or_else(|| err(std::io::Error::other("the path names no file")))?;
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(name);
        prefix.push(".");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // A new file gets what `File::create` would give (0666 less the umask).
            builder.permissions(
                target
                    .permissions
                    .clone()
                    .unwrap_or_else(|| fs::Permissions::from_mode(0o666)),
            );
        }
        // Dropped on any error below, which deletes it.
        let tmp = builder.tempfile_in(&dir).map_err(err)?;
        if let Some(p) = &target.permissions {
            // The umask applied at creation; the replaced file's bits are restored exactly.
            tmp.as_file().set_permissions(p.clone()).map_err(err)?;
        }
        Ok(Atomic {
            path: path.to_path_buf(),
            target,
            tmp,
            dir,
        })
    }

    /// The temporary file, to write to.
    pub fn file(&mut self) -> &mut fs::File {
        self.tmp.as_file_mut()
    }

    /// Syncs the temporary file and renames it over the target.
    ///
    /// # Errors
    /// [`Error::WriteFile`] naming the target (the temporary file is removed).
    pub fn persist(self) -> Result<(), Error> {
        let err = |source| Error::WriteFile {
            path: self.path.clone(),
            source,
        };
        self.tmp.as_file().sync_all().map_err(err)?;
        self.tmp
            .persist(&self.target.path)
            .map_err(|e| err(e.error))?;
        // Make the rename itself durable; a directory that cannot be synced loses nothing written.
        if let Ok(d) = fs::File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

/// A bundle written kernel by kernel ([`roofline_model::bundle::stream::Writer`]) to a file, atomically
/// (or to standard output for `-`): [`BundleOut::create`] with everything but the kernels,
/// [`BundleOut::kernel`] for each, [`BundleOut::finish`] with the final notes. Dropped without
/// finishing, it leaves nothing behind.
///
/// A file that reaches [`COLUMNS_FROM`] kernel entries gets its columns file beside it
/// (`run.json` → `run.columns`), written alongside and put in place before the bundle that
/// names it; the first kernels wait in memory until the count is known to be reached or the
/// bundle ends. The bundle names its own columns file or none, never one it was read with.
pub struct BundleOut {
    path: PathBuf,
    /// The shell as given, until the writers begin.
    shell: Option<Bundle>,
    /// Kernels waiting for the writers to begin.
    waiting: Vec<roofline_model::bundle::Kernel>,
    writer: Option<roofline_model::bundle::stream::Writer<std::io::BufWriter<Sink>>>,
    columns: Option<ColumnsOut>,
}

/// A columns file being written beside a bundle.
struct ColumnsOut {
    path: PathBuf,
    writer: roofline_model::bundle::columns::Writer<std::io::BufWriter<Atomic>>,
}

/// Where a streamed bundle goes.
enum Sink {
    File(Atomic),
    Stdout(std::io::Stdout),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::File(a) => a.file().write(buf),
            Sink::Stdout(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::File(a) => a.file().flush(),
            Sink::Stdout(s) => s.flush(),
        }
    }
}

impl Write for Atomic {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file().flush()
    }
}

impl BundleOut {
    /// Starts the bundle at `path` (`-`: standard output) with `shell`'s fields before the
    /// kernels (its kernels are ignored).
    ///
    /// # Errors
    /// [`Error::InvalidOutput`] for impossible figures; [`Error::WriteFile`].
    pub fn create(path: &Path, shell: &Bundle) -> Result<Self, Error> {
        let mut shell = shell.shell();
        shell.columns = None;
        let mut out = BundleOut {
            path: path.to_path_buf(),
            shell: Some(shell),
            waiting: Vec::new(),
            writer: None,
            columns: None,
        };
        if is_stdout(path) {
            out.begin()?;
        }
        Ok(out)
    }

    /// Opens the bundle's writer (and its columns file's, when [`columns_beside`] says the
    /// kernels that waited make one) and writes the kernels that waited.
    fn begin(&mut self) -> Result<(), Error> {
        let Some(shell) = self.shell.take() else {
            return Ok(());
        };
        let path = &self.path;
        let named = if let Some(at) = columns_beside(path, self.waiting.len()) {
            let file = at
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let id = columns_id();
            let w = std::io::BufWriter::with_capacity(1 << 20, Atomic::create(&at)?);
            let named = roofline_model::bundle::columns::ColumnsRef { file, id };
            let writer = roofline_model::bundle::columns::Writer::begin(w, named.clone()).map_err(
                |source| Error::WriteFile {
                    path: at.clone(),
                    source,
                },
            )?;
            self.columns = Some(ColumnsOut { path: at, writer });
            Some(named)
        } else {
            None
        };
        let w = open_sink(path)?;
        self.writer = Some(
            roofline_model::bundle::stream::Writer::begin_naming(w, &shell, named)
                .map_err(|e| stream_error(path, e))?,
        );
        for k in std::mem::take(&mut self.waiting) {
            self.write(&k)?;
        }
        Ok(())
    }

    /// Writes one kernel to the begun writers.
    fn write(&mut self, k: &roofline_model::bundle::Kernel) -> Result<(), Error> {
        if let Some(w) = self.writer.as_mut() {
            w.kernel(k).map_err(|e| stream_error(&self.path, e))?;
        }
        if let Some(c) = self.columns.as_mut() {
            c.writer.kernel(k).map_err(|source| Error::WriteFile {
                path: c.path.clone(),
                source,
            })?;
        }
        Ok(())
    }

    /// Checks and writes one kernel.
    ///
    /// # Errors
    /// [`Error::InvalidOutput`] naming the kernel's JSON path; [`Error::WriteFile`].
    pub fn kernel(&mut self, k: &roofline_model::bundle::Kernel) -> Result<(), Error> {
        if self.shell.is_none() {
            return self.write(k);
        }
        self.waiting.push(k.clone());
        if self.waiting.len() >= COLUMNS_FROM {
            self.begin()?;
        }
        Ok(())
    }

    /// Writes the rest of `shell` (its notes as they are now) and puts the files in place: the
    /// columns file first, so that a bundle never names one that is not there.
    ///
    /// # Errors
    /// [`Error::InvalidOutput`]; [`Error::WriteFile`]; for standard output, as [`stdout`].
    pub fn finish(mut self, shell: &Bundle) -> Result<(), Error> {
        self.begin()?;
        let path = self.path;
        if let Some(c) = self.columns {
            let w = c
                .writer
                .finish(shell)
                .map_err(|e| stream_error(&c.path, e))?;
            let atomic = w.into_inner().map_err(|e| Error::WriteFile {
                path: c.path.clone(),
                source: e.into_error(),
            })?;
            atomic.persist()?;
        }
        let Some(writer) = self.writer else {
            return Ok(());
        };
        let w = writer.finish(shell).map_err(|e| stream_error(&path, e))?;
        close_sink(&path, w)
    }
}

/// The output of a streamed bundle at `path` (`-`: standard output), buffered.
///
/// # Errors
/// [`Error::WriteFile`].
fn open_sink(path: &Path) -> Result<std::io::BufWriter<Sink>, Error> {
    let sink = if is_stdout(path) {
        Sink::Stdout(std::io::stdout())
    } else {
        Sink::File(Atomic::create(path)?)
    };
    Ok(std::io::BufWriter::with_capacity(1 << 20, sink))
}

/// Flushes a streamed bundle's output and puts its file in place.
///
/// # Errors
/// [`Error::WriteFile`].
fn close_sink(path: &Path, w: std::io::BufWriter<Sink>) -> Result<(), Error> {
    let sink = w.into_inner().map_err(|e| Error::WriteFile {
        path: path.to_path_buf(),
        source: e.into_error(),
    })?;
    match sink {
        Sink::File(a) => a.persist(),
        Sink::Stdout(_) => Ok(()),
    }
}

/// A streamed write's failure as the collector's error.
fn stream_error(path: &Path, e: roofline_model::bundle::stream::WriteError) -> Error {
    use roofline_model::bundle::stream::WriteError;
    match e {
        WriteError::Invalid(source) => Error::InvalidOutput {
            path: path.to_path_buf(),
            source,
        },
        WriteError::Io(source) if is_stdout(path) => {
            if source.kind() == ErrorKind::BrokenPipe {
                Error::StdoutClosed
            } else {
                Error::Stdout(source)
            }
        }
        WriteError::Io(source) => Error::WriteFile {
            path: path.to_path_buf(),
            source,
        },
        WriteError::ShellChanged => Error::WriteFile {
            path: path.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        },
    }
}
