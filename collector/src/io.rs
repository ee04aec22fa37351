//! The one place the collector reads bundles and writes files.
//!
//! Every write is atomic: the bytes go to a temporary file beside the target, which is flushed
//! and then renamed over it, so a crash or a full disk never leaves half a file behind.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use roofline_model::Bundle;

use crate::error::Error;

/// Reads and validates a bundle file.
///
/// # Errors
/// [`Error::ReadFile`] when the file cannot be read, [`Error::Bundle`] when it is not a valid
/// bundle (the cause names the JSON path or line and column).
pub fn read_bundle(path: &Path) -> Result<Bundle, Error> {
    let bytes = fs::read(path).map_err(|source| Error::ReadFile {
        path: path.to_path_buf(),
        source,
    })?;
    roofline_model::parse_bundle_bytes(&bytes).map_err(|source| Error::Bundle {
        path: path.to_path_buf(),
        source,
    })
}

/// Serializes a bundle (validating it first) and writes it atomically.
///
/// # Errors
/// [`Error::InvalidOutput`] if the bundle holds impossible figures; [`Error::WriteFile`].
pub fn write_bundle(path: &Path, bundle: &Bundle) -> Result<(), Error> {
    let json = roofline_model::to_json(bundle).map_err(|source| Error::InvalidOutput {
        path: path.to_path_buf(),
        source,
    })?;
    write_atomic(path, json.as_bytes())
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, synced, then
/// renamed over the target.
///
/// # Errors
/// [`Error::WriteFile`] naming the target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let err = |source| Error::WriteFile {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| err(std::io::Error::other("the path names no file")))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(err(e));
    }
    Ok(())
}

/// Writes to the file if one is given, else to standard output.
///
/// # Errors
/// [`Error::WriteFile`].
pub fn write_output(path: Option<&Path>, bytes: &[u8]) -> Result<(), Error> {
    match path {
        Some(p) => write_atomic(p, bytes),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(|source| Error::WriteFile {
                    path: PathBuf::from("<stdout>"),
                    source,
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"second");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
    }

    #[test]
    fn a_failed_write_names_the_target_and_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-dir").join("out.json");
        let e = write_atomic(&missing, b"x").unwrap_err();
        assert!(e.to_string().contains("out.json"), "{e}");
    }
}
