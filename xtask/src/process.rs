//! Running cargo and the other programs the tasks need, from the workspace's root, and the
//! paths they share: the target directory and a `$PATH` with a tool's directory in front.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace's root (the parent of `xtask/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// `cargo` (the one running xtask, `$CARGO`), in the workspace's root.
pub fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

/// Runs a step, echoing its name, and fails unless it succeeds.
pub fn run(step: &str, mut cmd: Command) -> Result<(), String> {
    eprintln!("\n==> {step}");
    let status = cmd
        .status()
        .map_err(|e| format!("{step}: could not start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{step} failed ({status})"))
    }
}

/// The target directory: `$CARGO_TARGET_DIR` (relative to the workspace), else `target/`.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| if p.is_absolute() { p } else { root().join(p) })
        .unwrap_or_else(|| root().join("target"))
}

/// `$PATH` with `dir` in front.
pub fn prepend_path(dir: &Path) -> std::ffi::OsString {
    let mut parts = vec![dir.to_path_buf()];
    if let Some(p) = std::env::var_os("PATH") {
        parts.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(parts).unwrap_or_default()
}

/// Makes a Python virtual environment at `path` (`python3 -m venv`) as the step `step`; its
/// error ends with `hint`.
pub fn venv(path: &Path, step: &str, hint: &str) -> Result<(), String> {
    let mut c = Command::new("python3");
    c.args(["-m", "venv"]).arg(path);
    run(step, c).map_err(|e| format!("{e}; {hint}"))
}

/// `pip install --quiet <packages>` into the virtual environment `venv`, as the step `step`; its
/// error says pip could not install `what`, asks whether the package registry is reachable, and
/// ends with `or` (another way, or nothing).
pub fn pip_install(
    venv: &Path,
    packages: &[String],
    step: &str,
    what: &str,
    or: &str,
) -> Result<(), String> {
    let mut c = Command::new(venv.join("bin/pip"));
    c.args(["install", "--quiet"]).args(packages);
    run(step, c).map_err(|e| {
        format!(
            "{e}: pip could not install {what} (is the Python package registry reachable? pip \
             honours PIP_INDEX_URL for a mirror){or}"
        )
    })
}
