//! The `roofline` binary placed as pip installs it (`<venv>/bin/roofline`) finds the CUDA
//! libraries of pip's `nvidia-*` wheels beside it and re-executes itself once with them on
//! `LD_LIBRARY_PATH`. The "libraries" are empty files named like them: this checks the search
//! and the re-execution, not loading (no driver is reachable, so `machine` stops at the driver).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fake virtual environment holding a copy (or hard link) of the binary under test.
fn venv(root: &Path) -> (PathBuf, PathBuf) {
    let bin = root.join("venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("roofline");
    let built = Path::new(env!("CARGO_BIN_EXE_roofline"));
    if std::fs::hard_link(built, &exe).is_err() {
        std::fs::copy(built, &exe).unwrap();
    }
    let site = root.join("venv/lib/python3.12/site-packages");
    std::fs::create_dir_all(&site).unwrap();
    (exe, site)
}

fn touch(p: &Path) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, b"").unwrap();
}

fn run(exe: &Path, root: &Path, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        // No GPU driver is reachable from the tests, whatever the host has.
        .env("LD_LIBRARY_PATH", "/nonexistent")
        .env("ROOFLINE_DEBUG_LIBS", "1")
        .env("XDG_CACHE_HOME", root.join("cache"))
        .env_remove("ROOFLINE_CUDA_LIBS_ADDED")
        .env_remove("ROOFLINE_CUDA_LIB_SEARCH")
        .env_remove("VIRTUAL_ENV")
        .env_remove("CONDA_PREFIX")
        .env_remove("CUDA_HOME")
        .env_remove("CUDA_PATH")
        .output()
        .unwrap()
}

fn reruns(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("roofline: re-running with LD_LIBRARY_PATH="))
        .map(str::to_string)
        .collect()
}

fn tmp() -> tempfile::TempDir {
    // Beside the target directory, so that the binary can be hard-linked rather than copied.
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

#[test]
fn machine_reruns_once_with_pips_cuda12_directories() {
    let t = tmp();
    let (exe, site) = venv(t.path());
    touch(&site.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12"));
    touch(&site.join("nvidia/cublas/lib/libcublasLt.so.12"));
    let o = run(&exe, t.path(), &["machine"]);
    let e = String::from_utf8_lossy(&o.stderr);
    let r = reruns(&o);
    let cublas = site.join("nvidia/cublas/lib");
    let nvrtc = site.join("nvidia/cuda_nvrtc/lib");
    // (A system toolkit in /usr/local/cuda, if this host has one, comes after.)
    let want = format!("/nonexistent:{}:{}", cublas.display(), nvrtc.display());
    assert!(r.len() == 1 && r[0].starts_with(&want), "{e}");
    // The second run goes on to the driver, which is missing here: the usual message, once.
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert_eq!(
        e.matches("error: roofline machine needs a CUDA GPU")
            .count(),
        1,
        "{e}"
    );
    assert!(
        !t.path().join("cache").exists(),
        "no link is needed for CUDA 12"
    );
}

#[test]
fn machine_links_cuda13_names_cudarc_tries() {
    let t = tmp();
    let (exe, site) = venv(t.path());
    let lib = site.join("nvidia/cu13/lib");
    touch(&lib.join("libnvrtc.so.13"));
    touch(&lib.join("libcublasLt.so.13"));
    let o = run(&exe, t.path(), &["machine"]);
    let e = String::from_utf8_lossy(&o.stderr);
    let r = reruns(&o);
    assert_eq!(r.len(), 1, "{e}");
    let links: Vec<PathBuf> = std::fs::read_dir(t.path().join("cache/roofline"))
        .unwrap()
        .map(|d| d.unwrap().path())
        .collect();
    assert_eq!(links.len(), 1, "{links:?}");
    assert_eq!(
        std::fs::read_link(links[0].join("libnvrtc.so")).unwrap(),
        lib.join("libnvrtc.so.13")
    );
    assert!(
        r[0].contains(&format!("{}:{}", lib.display(), links[0].display())),
        "{e}"
    );
    assert_eq!(o.status.code(), Some(1), "{e}");
}

#[test]
fn commands_without_cuda_libraries_and_reruns_do_not_search() {
    let t = tmp();
    let (exe, site) = venv(t.path());
    touch(&site.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12"));
    let o = run(&exe, t.path(), &["--version"]);
    assert!(o.status.success());
    assert!(reruns(&o).is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).is_empty());
    // Already re-executed (or turned off): no second search.
    for (k, v) in [
        ("ROOFLINE_CUDA_LIBS_ADDED", "/x"),
        ("ROOFLINE_CUDA_LIB_SEARCH", "off"),
    ] {
        let o = Command::new(&exe)
            .arg("machine")
            .env("LD_LIBRARY_PATH", "/nonexistent")
            .env("ROOFLINE_DEBUG_LIBS", "1")
            .env(k, v)
            .output()
            .unwrap();
        assert!(reruns(&o).is_empty(), "{k}");
        assert_eq!(o.status.code(), Some(1));
    }
}
