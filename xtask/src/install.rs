//! Installing what a task needs when it is missing: the wasm32 target (rustup), Chromium and
//! chromedriver, and a C++ compiler (apt, as CI does).

use std::path::Path;
use std::process::Command;

use crate::process::run;

/// The target the viewer and the model build for.
pub const WASM: &str = "wasm32-unknown-unknown";

/// Adds the wasm32 target with rustup when it is not installed.
pub fn ensure_wasm_target() -> Result<(), String> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.trim() == WASM)
        })
        .unwrap_or(false);
    if installed {
        return Ok(());
    }
    let mut c = Command::new("rustup");
    c.args(["target", "add", WASM]);
    run("install the wasm32 target", c)
}

/// Debian's Chromium and chromedriver, installed with apt when missing (as CI does).
pub fn ensure_browser() -> Result<(), String> {
    let have = |p: &str| Path::new(p).is_file();
    if have("/usr/bin/chromium") && have("/usr/bin/chromedriver") {
        return Ok(());
    }
    let mut c = Command::new("apt-get");
    c.arg("update").arg("-qq");
    run("apt-get update", c)?;
    let mut c = Command::new("apt-get");
    c.args(["install", "-y", "-qq", "chromium", "chromium-driver"])
        .env("DEBIAN_FRONTEND", "noninteractive");
    run("install Chromium and chromedriver", c)
}

/// A C++20 compiler for the kernels' CPU check (`c++` or `$CXX`), installed with apt as g++ when
/// missing.
pub fn ensure_cxx() -> Result<(), String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    if Command::new(&cxx).arg("--version").output().is_ok() {
        return Ok(());
    }
    let mut c = Command::new("apt-get");
    c.arg("update").arg("-qq");
    run("apt-get update", c)?;
    let mut c = Command::new("apt-get");
    c.args(["install", "-y", "-qq", "g++"])
        .env("DEBIAN_FRONTEND", "noninteractive");
    run("install g++", c)
}
