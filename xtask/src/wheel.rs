//! `cargo xtask wheel`: the `roofline` binary as a Python wheel, and its check in
//! `cargo xtask test`.
//!
//! maturin (`bindings = "bin"`, `collector/pyproject.toml`) builds the collector in release with
//! its `viewer-page` feature (the pyproject's `features`: the viewer's standalone page, which
//! `cargo xtask web` writes first, built in) and packs the binary into a
//! `py3-none-manylinux_2_17_<arch>` wheel. The glibc floor, 2.17
//! (manylinux2014: CentOS/RHEL 7 and every later HPC distribution), comes from linking with zig
//! against that glibc (`--zig`), whatever glibc the building machine has; maturin then checks the
//! binary's symbol versions against the manylinux2014 policy and refuses a wheel that needs more.
//! maturin and zig are pinned ([`MATURIN`], [`ZIG`]) and installed with pip into a virtual
//! environment under the target directory the first time; the build reuses the target directory
//! (`<target>/<triple>/release`), so later builds only relink what changed.
//!
//! `cargo xtask wheel [x86_64|aarch64|all]` (default: this machine's architecture) writes the
//! wheels to `<target>/wheels/`; `cargo xtask wheel check` runs the check alone. aarch64 (Grace
//! Hopper) is cross-built the same way, after `rustup target add aarch64-unknown-linux-gnu`.
//!
//! The check ([`check`]) builds this machine's wheel, installs it into a fresh virtual
//! environment with pip (no index), and runs the installed `roofline`: `--version` (the
//! workspace's version), `validate` on a sample bundle, `machine` (with no GPU driver: the clear
//! message and exit 1), and `machine` again with an empty stand-in `libnvrtc.so.12` placed as
//! pip's `nvidia-cuda-nvrtc-cu12` wheel would put it, to see that the binary finds that
//! directory from where pip installed it (a file name, not a library: nothing is loaded); then
//! the Python package `roofline` the same wheel installs (`collector/python/`, maturin's
//! `python-source`): `import roofline` finds the binary installed with it and loads a sample's
//! table; then the notebook and the docs sites (`embed_kit.rs`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::process::{prepend_path, target_dir};

/// The maturin that builds the wheel (pinned: its flags and tags are what this file relies on).
pub const MATURIN: &str = "1.16.0";
/// The zig that links against glibc 2.17 (`pip install ziglang`).
pub const ZIG: &str = "0.15.2";
/// The wheels' platform compatibility: manylinux2014 = glibc 2.17.
pub const COMPATIBILITY: &str = "manylinux2014";

fn output(step: &str, cmd: &mut Command) -> Result<Output, String> {
    cmd.output()
        .map_err(|e| format!("{step}: could not start {:?}: {e}", cmd.get_program()))
}

/// The virtual environment holding the pinned maturin and zig, made with pip when missing.
fn tools() -> Result<PathBuf, String> {
    let venv = target_dir().join("wheel-tools/venv");
    let maturin = venv.join("bin/maturin");
    let have = Command::new(&maturin)
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == format!("maturin {MATURIN}"));
    let zig = Command::new(venv.join("bin/python"))
        .args(["-m", "ziglang", "version"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == ZIG);
    if have && zig {
        return Ok(venv);
    }
    if !venv.join("bin/pip").is_file() {
        crate::process::venv(
            &venv,
            "make a virtual environment for maturin",
            "`cargo xtask wheel` needs python3 with the venv module (Debian: apt-get install python3-venv)",
        )?;
    }
    crate::process::pip_install(
        &venv,
        &[format!("maturin=={MATURIN}"), format!("ziglang=={ZIG}")],
        &format!("pip install maturin {MATURIN} and zig {ZIG}"),
        "maturin and zig",
        &format!(
            "; or install maturin=={MATURIN} and ziglang=={ZIG} yourself into {}",
            venv.display()
        ),
    )?;
    Ok(venv)
}

fn triple(arch: &str) -> Result<&'static str, String> {
    match arch {
        "x86_64" => Ok("x86_64-unknown-linux-gnu"),
        "aarch64" => Ok("aarch64-unknown-linux-gnu"),
        other => Err(format!(
            "no wheel for architecture {other:?} (x86_64, aarch64 or all)"
        )),
    }
}

fn ensure_rust_target(triple: &str) -> Result<(), String> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.trim() == triple)
        });
    if installed {
        return Ok(());
    }
    let mut c = Command::new("rustup");
    c.args(["target", "add", triple]);
    crate::process::run(&format!("install the {triple} target"), c)
}

/// Builds the wheel for one architecture and returns its path.
fn build_one(arch: &str) -> Result<PathBuf, String> {
    let triple = triple(arch)?;
    ensure_rust_target(triple)?;
    let venv = tools()?;
    let out = target_dir().join("wheels");
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let before = wheels_in(&out, arch);
    let mut c = Command::new(venv.join("bin/maturin"));
    c.current_dir(crate::process::root())
        .args([
            "build",
            "--release",
            "--zig",
            "--compatibility",
            COMPATIBILITY,
        ])
        .args(["--target", triple, "-m", "collector/Cargo.toml", "-o"])
        .arg(&out)
        // maturin finds zig through the Python of its own environment.
        .env("PATH", prepend_path(&venv.join("bin")))
        .env("CARGO_TARGET_DIR", target_dir());
    let started = std::time::Instant::now();
    crate::process::run(&format!("maturin: the {arch} wheel ({COMPATIBILITY})"), c)?;
    let after = wheels_in(&out, arch);
    let wheel = after
        .into_iter()
        .max_by_key(|(m, _)| *m)
        .map(|(_, p)| p)
        .ok_or_else(|| format!("maturin wrote no {arch} wheel into {}", out.display()))?;
    if before.iter().any(|(_, p)| *p == wheel) {
        eprintln!("(the wheel was rewritten in place)");
    }
    eprintln!(
        "wheel: {} ({:.0} s)",
        wheel.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(wheel)
}

fn wheels_in(dir: &Path, arch: &str) -> Vec<(std::time::SystemTime, PathBuf)> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with("roofline-") && n.ends_with(&format!("_{arch}.whl"))
                    })
                })
                .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
                .collect()
        })
        .unwrap_or_default()
}

/// `cargo xtask wheel [x86_64|aarch64|all|check]` (`check`: what `cargo xtask test` runs).
pub fn build(args: &[String]) -> Result<Vec<PathBuf>, String> {
    let archs: Vec<&str> = match args.first().map(String::as_str) {
        Some("check") => return check().map(|_| Vec::new()),
        None => vec![std::env::consts::ARCH],
        Some("all") => vec!["x86_64", "aarch64"],
        Some(a) => vec![a],
    };
    archs.into_iter().map(build_one).collect()
}

/// The workspace's version, from the root Cargo.toml's `[workspace.package]`.
fn workspace_version() -> Result<String, String> {
    let path = crate::process::root().join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut in_package = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[workspace.package]";
        } else if in_package && let Some(v) = line.strip_prefix("version") {
            let v = v
                .trim_start()
                .trim_start_matches('=')
                .trim()
                .trim_matches('"');
            return Ok(v.to_string());
        }
    }
    Err(format!(
        "no [workspace.package] version in {}",
        path.display()
    ))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn driver_installed() -> bool {
    Command::new("sh")
        .args(["-c", "ldconfig -p 2>/dev/null | grep -q 'libcuda\\.so\\.1'"])
        .status()
        .is_ok_and(|s| s.success())
}

/// The check in `cargo xtask test`: build this machine's wheel, install it into a fresh virtual
/// environment, and run the installed binary and package; then the notebook and the docs sites
/// ([`crate::embed_kit::check`]). Returns the Python unit tests passed and failed.
pub fn check() -> Result<(usize, usize), String> {
    let started = std::time::Instant::now();
    let wheel = build_one(std::env::consts::ARCH)?;
    let scratch = target_dir().join("wheel-check");
    let _ = std::fs::remove_dir_all(&scratch);
    let venv = scratch.join("venv");
    let mut c = Command::new("python3");
    c.args(["-m", "venv"]).arg(&venv);
    crate::process::run("a fresh virtual environment", c)?;
    let mut c = Command::new(venv.join("bin/pip"));
    c.args(["install", "--quiet", "--no-index", "--no-deps"])
        .arg(&wheel);
    crate::process::run("pip install the wheel", c)?;
    let roofline = venv.join("bin/roofline");
    let fail =
        |what: &str, o: &Output| format!("installed roofline: {what}; it said:\n{}", text(o));

    eprintln!("\n==> installed roofline --version, validate, machine");
    let o = output(
        "roofline --version",
        Command::new(&roofline).arg("--version"),
    )?;
    let want = format!("roofline {}", workspace_version()?);
    if !o.status.success() || String::from_utf8_lossy(&o.stdout).trim() != want {
        return Err(fail(&format!("--version is not {want:?}"), &o));
    }
    let bundles = crate::process::root().join("tests/fixtures/bundles");
    let sample = std::fs::read_dir(&bundles)
        .map_err(|e| format!("{}: {e}", bundles.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .min()
        .ok_or_else(|| format!("no sample bundle in {}", bundles.display()))?;
    let o = output(
        "roofline validate",
        Command::new(&roofline).arg("validate").arg(&sample),
    )?;
    if !o.status.success() {
        return Err(fail(&format!("validate {} failed", sample.display()), &o));
    }
    // The wheel's binary embeds the viewer's standalone page (the `viewer-page` feature; built by
    // `cargo xtask web` first).
    let page = scratch.join("sample.html");
    let o = output(
        "roofline plot --format html",
        Command::new(&roofline)
            .arg("plot")
            .arg(&sample)
            .arg("-o")
            .arg(&page),
    )?;
    let html = std::fs::read_to_string(&page).unwrap_or_default();
    if !o.status.success() || !html.contains(r#"id="roofline-manifest""#) {
        return Err(fail(
            "plot -o sample.html did not write the standalone page",
            &o,
        ));
    }
    if driver_installed() {
        eprintln!("a CUDA driver is installed here: the no-driver message cannot be shown");
    } else {
        let o = output("roofline machine", Command::new(&roofline).arg("machine"))?;
        let said = text(&o);
        if o.status.code() != Some(1)
            || !said.starts_with("error: roofline machine needs a CUDA GPU: no CUDA driver found")
        {
            return Err(fail("machine without a driver did not fail clearly", &o));
        }
        // Where pip puts NVRTC (an empty stand-in file: only the directory search is checked).
        let site = std::fs::read_dir(venv.join("lib"))
            .ok()
            .and_then(|rd| {
                rd.filter_map(Result::ok).map(|e| e.path()).find(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("python3"))
                })
            })
            .map(|p| p.join("site-packages"))
            .ok_or_else(|| format!("no lib/python3.*/site-packages in {}", venv.display()))?;
        let nvrtc = site.join("nvidia/cuda_nvrtc/lib");
        std::fs::create_dir_all(&nvrtc).map_err(|e| format!("{}: {e}", nvrtc.display()))?;
        std::fs::write(nvrtc.join("libnvrtc.so.12"), b"")
            .map_err(|e| format!("{}: {e}", nvrtc.display()))?;
        let o = output(
            "roofline machine (pip's NVRTC directory)",
            Command::new(&roofline)
                .arg("machine")
                .env("ROOFLINE_DEBUG_LIBS", "1")
                .env_remove("LD_LIBRARY_PATH")
                .env_remove("ROOFLINE_CUDA_LIBS_ADDED"),
        )?;
        let said = text(&o);
        let rerun = said
            .lines()
            .filter(|l| l.starts_with("roofline: re-running with LD_LIBRARY_PATH="))
            .collect::<Vec<_>>();
        if o.status.code() != Some(1)
            || rerun.len() != 1
            || !rerun[0].contains(&*nvrtc.to_string_lossy())
            || !said.contains("error: roofline machine needs a CUDA GPU: no CUDA driver found")
        {
            return Err(fail(
                "machine did not find pip's NVRTC directory once and then fail clearly",
                &o,
            ));
        }
    }
    // The Python package beside the binary, finding it where pip put it (no PATH, no
    // ROOFLINE_BIN): the per-kernel table of the sample, as `info --format csv` writes it.
    let o = output(
        "python -c 'import roofline'",
        Command::new(venv.join("bin/python"))
            .args([
                "-c",
                "import sys, roofline; rows = roofline.load(sys.argv[1]); \
                 print(roofline.binary()); print(len(rows), rows[0]['name'] is not None)",
            ])
            .arg(&sample)
            .env("PATH", "/usr/bin:/bin")
            .env_remove("ROOFLINE_BIN"),
    )?;
    let said = String::from_utf8_lossy(&o.stdout);
    let mut lines = said.lines();
    let found = lines.next().unwrap_or_default();
    if !o.status.success()
        || Path::new(found) != roofline.canonicalize().unwrap_or_default()
        || !lines.next().is_some_and(|l| l.ends_with(" True"))
    {
        return Err(fail(
            "the roofline package did not find its binary or load the sample",
            &o,
        ));
    }
    let counts = crate::embed_kit::check(&wheel, &roofline)?;
    let _ = std::fs::remove_dir_all(&scratch);
    eprintln!(
        "wheel check passed: {} installed and ran ({:.0} s in all)",
        wheel.file_name().unwrap_or_default().to_string_lossy(),
        started.elapsed().as_secs_f64()
    );
    Ok(counts)
}
