//! Finding the CUDA libraries (NVRTC, cuBLASLt, cuDNN) where pip or a system toolkit put them.
//!
//! cudarc (feature `dynamic-loading`, bindings `cuda-12080`) opens each library by *name*, from a
//! fixed list of candidates ([`cudarc::get_lib_name_candidates`]: `libnvrtc.so`, `libnvrtc.so.12`,
//! `.so.11`, …, but no `.so.13`), and glibc's `dlopen` looks for a bare name only in the
//! directories of `LD_LIBRARY_PATH` *as it was when the process started*, the executable's
//! run path, and the system's cache (`ldconfig`). Libraries installed by pip — the `nvidia-*`
//! wheels that `pip install torch` brings, under `site-packages/nvidia/<package>/lib` — are on
//! none of these; PyTorch itself preloads them by full path from its Python code.
//!
//! # Decision
//! At the start of the GPU commands (`machine`, `suite`; see [`needs_cuda_libraries`]),
//! [`prepare`] looks for library directories:
//! 1. `site-packages/nvidia/*/lib` of the Python environment the binary lives in (`<prefix>/bin/
//!    roofline` → `<prefix>/lib/python3.*/site-packages`, as `pip install` lays out a virtual
//!    environment, a conda environment, `--user` or a system prefix), of `$VIRTUAL_ENV` and
//!    `$CONDA_PREFIX`, and, only when those hold no `nvidia` package, of the `python3` on `PATH`
//!    (asked for its `site.getsitepackages()`; one short subprocess);
//! 2. a system toolkit's `lib64`: `$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`.
//!
//! The directories not yet in `LD_LIBRARY_PATH` are appended to it (the user's own entries keep
//! precedence) and the binary re-executes itself once with the new value, so that every later
//! `dlopen` by name — cudarc's and the libraries' own (cuDNN opens its sub-libraries, NVRTC its
//! builtins) — sees them. The variable [`ADDED_VAR`] marks the second run, so it never loops,
//! and lists what was added. `ROOFLINE_CUDA_LIB_SEARCH=off` turns the search off;
//! `ROOFLINE_DEBUG_LIBS=1` prints what it found to standard error. Commands that need no CUDA
//! library (`validate`, `info`, …) and `profile` (whose program must see the user's own
//! environment unchanged) never re-execute.
//!
//! CUDA 13's wheels (`nvidia/cu13/lib`) name their libraries `libnvrtc.so.13` and
//! `libcublasLt.so.13`, which cudarc 0.19 built for CUDA 12.8 does not try. Rather than build
//! against `cuda-13000` (whose driver bindings call entry points that CUDA 12 drivers lack), when
//! no directory holds a name cudarc tries but one holds a newer major version, [`prepare`] makes
//! the unversioned name (`libnvrtc.so`, the name cudarc tries first and a toolkit's own
//! development link) as a symbolic link in a per-user cache directory
//! (`$XDG_CACHE_HOME/roofline/cuda-links-<hash>`, made in a temporary directory and renamed into
//! place, so concurrent runs never see it half made), and adds that directory too. A CUDA 12
//! library, when there is one, is always preferred, as the bindings are CUDA 12.8's. Loading a
//! CUDA 13 NVRTC or cuBLASLt through CUDA 12.8 bindings relies on their C interfaces being
//! unchanged for the calls we make; that has not been verified on a CUDA 13 host.
//!
//! The path finding is tested on the CPU with fake directory trees (empty files named like the
//! libraries): that tests which directories are found and which links are made, not that the
//! libraries load.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::report::Report;

/// Set in the re-executed process to the directories that were appended to `LD_LIBRARY_PATH`
/// (its presence stops a second re-execution).
pub const ADDED_VAR: &str = "ROOFLINE_CUDA_LIBS_ADDED";
/// `off` (or `0`) disables the search.
pub const SEARCH_VAR: &str = "ROOFLINE_CUDA_LIB_SEARCH";
/// `1` prints what the search found to standard error.
pub const DEBUG_VAR: &str = "ROOFLINE_DEBUG_LIBS";

/// How to install the CUDA libraries, for the messages that say one is missing.
pub const INSTALL_HINT: &str = "install them with pip in roofline's Python environment (`pip install torch`, or `pip install nvidia-cuda-nvrtc-cu12==12.X.* nvidia-cublas-cu12==12.X.* nvidia-cudnn-cu12` with a CUDA major version no newer than the one nvidia-smi shows), or install the CUDA toolkit and add its lib64 directory to LD_LIBRARY_PATH";

/// The libraries the collector loads through cudarc, by the name cudarc gives them.
pub const FAMILIES: [&str; 3] = ["nvrtc", "cublasLt", "cudnn"];

/// Whether this subcommand loads NVRTC, cuBLASLt or cuDNN (and so gets the search).
pub fn needs_cuda_libraries(subcommand: Option<&OsStr>) -> bool {
    subcommand.is_some_and(|s| s == "machine" || s == "suite")
}

/// What the search looks at: the process's environment, gathered once so that tests can pass
/// their own.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// This executable's path.
    pub exe: Option<PathBuf>,
    /// `LD_LIBRARY_PATH` now.
    pub ld_library_path: Option<OsString>,
    /// Environment prefixes to look in besides the executable's (`$VIRTUAL_ENV`, `$CONDA_PREFIX`).
    pub prefixes: Vec<PathBuf>,
    /// Toolkit roots (`$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`); their `lib64` is searched.
    pub toolkits: Vec<PathBuf>,
    /// Where the per-user link directory goes (`$XDG_CACHE_HOME/roofline` or the like).
    pub cache: Option<PathBuf>,
}

impl Inputs {
    /// The real environment of this process.
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let prefixes = ["VIRTUAL_ENV", "CONDA_PREFIX"]
            .into_iter()
            .filter_map(|k| var(k).map(PathBuf::from))
            .collect();
        let mut toolkits: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
            .into_iter()
            .filter_map(|k| var(k).map(PathBuf::from))
            .collect();
        toolkits.push(PathBuf::from("/usr/local/cuda"));
        let cache = var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| Path::new(&h).join(".cache")))
            .map(|c| c.join("roofline"));
        Self {
            exe: std::env::current_exe().ok(),
            ld_library_path: var("LD_LIBRARY_PATH"),
            prefixes,
            toolkits,
            cache,
        }
    }
}

/// What the search decided.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// Library directories found, in search order (pip's, then the link directory, then a
    /// toolkit's), whether or not already on `LD_LIBRARY_PATH`.
    pub found: Vec<PathBuf>,
    /// Links to make: (link name, file it points to), for libraries only under a newer major
    /// version than cudarc tries.
    pub links: Vec<(String, PathBuf)>,
    /// The directory the links go in (when there are links).
    pub link_dir: Option<PathBuf>,
    /// The directories to append to `LD_LIBRARY_PATH` (empty: nothing to do).
    pub add: Vec<PathBuf>,
}

impl Plan {
    /// `LD_LIBRARY_PATH` with [`Plan::add`] appended.
    pub fn ld_library_path(&self, current: Option<&OsStr>) -> OsString {
        let mut parts: Vec<PathBuf> = current.map(split_paths).unwrap_or_default();
        parts.extend(self.add.iter().cloned());
        std::env::join_paths(parts).unwrap_or_default()
    }
}

fn split_paths(v: &OsStr) -> Vec<PathBuf> {
    std::env::split_paths(v)
        .filter(|p| !p.as_os_str().is_empty())
        .collect()
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn file_name(p: &Path) -> &str {
    p.file_name().and_then(OsStr::to_str).unwrap_or("")
}

/// The `site-packages` (and Debian's `dist-packages`) directories under an installation prefix:
/// `lib/python3.*/site-packages`, `lib64/…`, `local/lib/python3.*/dist-packages`,
/// `lib/python3/dist-packages`, those that exist.
pub fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for lib in [
        prefix.join("lib"),
        prefix.join("lib64"),
        prefix.join("local/lib"),
    ] {
        for py in sorted_entries(&lib) {
            if !file_name(&py).starts_with("python3") {
                continue;
            }
            for sub in ["site-packages", "dist-packages"] {
                push_unique(&mut out, py.join(sub));
            }
        }
    }
    out
}

/// Appends an existing directory unless it is already there under another name (a virtual
/// environment's `lib64` is a link to its `lib`).
fn push_unique(out: &mut Vec<PathBuf>, dir: PathBuf) {
    let Ok(real) = dir.canonicalize() else { return };
    if real.is_dir()
        && !out
            .iter()
            .any(|o| o.canonicalize().is_ok_and(|r| r == real))
    {
        out.push(dir);
    }
}

/// The installation prefix of an executable in `<prefix>/bin/`.
pub fn prefix_of_exe(exe: &Path) -> Option<PathBuf> {
    let bin = exe.parent()?;
    (file_name(bin) == "bin").then(|| bin.parent().map(Path::to_path_buf))?
}

/// Whether a file name is one of this library's: `lib<family>.so` or `lib<family>.so.<…>`.
fn version_of<'a>(name: &'a str, family: &str) -> Option<&'a str> {
    let rest = name.strip_prefix("lib")?.strip_prefix(family)?;
    let rest = rest.strip_prefix(".so")?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('.')
    }
}

fn holds_a_library(dir: &Path) -> bool {
    sorted_entries(dir).iter().any(|p| {
        let n = file_name(p);
        FAMILIES.iter().any(|f| version_of(n, f).is_some())
    })
}

/// The `nvidia/<package>/lib` directories of a `site-packages` that hold NVRTC, cuBLASLt or
/// cuDNN (`nvidia/cuda_nvrtc/lib`, `nvidia/cublas/lib`, `nvidia/cudnn/lib` for CUDA 12,
/// `nvidia/cu13/lib` for CUDA 13).
pub fn nvidia_lib_dirs(site_packages: &Path) -> Vec<PathBuf> {
    sorted_entries(&site_packages.join("nvidia"))
        .into_iter()
        .map(|p| p.join("lib"))
        .filter(|lib| holds_a_library(lib))
        .collect()
}

/// The `site-packages` of the `python3` on `PATH` (a subprocess; empty if there is none).
pub fn python_site_packages() -> Vec<PathBuf> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import site\nfor p in site.getsitepackages() + [site.getusersitepackages()]: print(p)",
        ])
        .stderr(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .collect(),
        _ => Vec::new(),
    }
}

/// A stable 64-bit FNV-1a hash, for naming the link directory after its links.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Decides what to add, from the inputs; `python` is asked for its `site-packages` only when the
/// prefixes hold no `nvidia` package. Reads directories, writes nothing.
pub fn plan(inputs: &Inputs, python: impl FnOnce() -> Vec<PathBuf>) -> Plan {
    let mut prefixes: Vec<PathBuf> = inputs
        .exe
        .as_deref()
        .and_then(prefix_of_exe)
        .into_iter()
        .collect();
    prefixes.extend(inputs.prefixes.iter().cloned());
    let mut sites: Vec<PathBuf> = Vec::new();
    for p in &prefixes {
        for s in site_packages(p) {
            push_unique(&mut sites, s);
        }
    }
    let mut pip: Vec<PathBuf> = sites.iter().flat_map(|s| nvidia_lib_dirs(s)).collect();
    if pip.is_empty() {
        pip = python().iter().flat_map(|s| nvidia_lib_dirs(s)).collect();
    }
    pip.dedup();
    let toolkit: Vec<PathBuf> = inputs
        .toolkits
        .iter()
        .map(|t| t.join("lib64"))
        .filter(|d| holds_a_library(d))
        .collect();
    let current: Vec<PathBuf> = inputs
        .ld_library_path
        .as_deref()
        .map(split_paths)
        .unwrap_or_default();

    // A library cudarc can open by one of its names anywhere we know of needs no link.
    let everywhere: Vec<PathBuf> = current
        .iter()
        .chain(&pip)
        .chain(&toolkit)
        .flat_map(|d| sorted_entries(d))
        .collect();
    let mut links = Vec::new();
    for family in FAMILIES {
        let candidates = cudarc::get_lib_name_candidates(family);
        if everywhere
            .iter()
            .any(|p| candidates.iter().any(|c| c == file_name(p)))
        {
            continue;
        }
        // The highest major version on offer (`libnvrtc.so.13` over `.so.13.0.88`'s siblings).
        let newest = everywhere
            .iter()
            .filter_map(|p| {
                let v = version_of(file_name(p), family)?;
                let major: u32 = v.split('.').next()?.parse().ok()?;
                Some((major, std::cmp::Reverse(v.len()), p))
            })
            .max();
        if let Some((_, _, target)) = newest {
            links.push((format!("lib{family}.so"), target.clone()));
        }
    }
    let link_dir = inputs
        .cache
        .as_ref()
        .filter(|_| !links.is_empty())
        .map(|c| {
            let key: String = links
                .iter()
                .map(|(n, t)| format!("{n}={}\n", t.display()))
                .collect();
            c.join(format!("cuda-links-{:016x}", fnv1a(key.as_bytes())))
        });
    let links = if link_dir.is_some() {
        links
    } else {
        Vec::new()
    };

    let found: Vec<PathBuf> = pip
        .into_iter()
        .chain(link_dir.clone())
        .chain(toolkit)
        .collect();
    let mut add = Vec::new();
    for d in &found {
        if !current.contains(d) && !add.contains(d) {
            add.push(d.clone());
        }
    }
    Plan {
        found,
        links,
        link_dir,
        add,
    }
}

/// Makes the link directory of a plan, atomically: links made in a temporary sibling directory,
/// then renamed into place. A directory already there (from an earlier or concurrent run) is
/// kept: its name is the hash of its links.
///
/// # Errors
/// The file system's error.
pub fn make_links(plan: &Plan) -> std::io::Result<()> {
    let Some(dir) = &plan.link_dir else {
        return Ok(());
    };
    if dir.is_dir() {
        return Ok(());
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let tmp = tempfile::Builder::new()
        .prefix(".cuda-links-")
        .tempdir_in(parent)?;
    for (name, target) in &plan.links {
        std::os::unix::fs::symlink(target, tmp.path().join(name))?;
    }
    let tmp = tmp.keep();
    match std::fs::rename(&tmp, dir) {
        Ok(()) => Ok(()),
        Err(_) if dir.is_dir() => std::fs::remove_dir_all(&tmp),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

/// Called first thing in `main`: for the GPU commands, finds the CUDA libraries pip or a toolkit
/// installed and, if some are not yet on `LD_LIBRARY_PATH`, re-executes this binary once with
/// them appended (see the module documentation). Returns only if there is nothing to do or the
/// re-execution failed (then the libraries on the loader's path are used as they are). With
/// [`DEBUG_VAR`] set to `1`, it says what it found and did through `report`.
pub fn prepare(report: &dyn Report) {
    let subcommand = std::env::args_os().nth(1);
    if !needs_cuda_libraries(subcommand.as_deref())
        || std::env::var_os(ADDED_VAR).is_some()
        || std::env::var_os(SEARCH_VAR).is_some_and(|v| v == "off" || v == "0")
    {
        return;
    }
    let debug = std::env::var_os(DEBUG_VAR).is_some_and(|v| v == "1");
    let inputs = Inputs::from_env();
    let mut plan = plan(&inputs, python_site_packages);
    if let Err(e) = make_links(&plan) {
        if debug {
            report.message(&format!(
                "roofline: cannot make the CUDA 13 library links: {e}"
            ));
        }
        plan.add.retain(|d| Some(d) != plan.link_dir.as_ref());
    }
    if debug {
        report.message(&format!(
            "roofline: CUDA library directories found: {:?}",
            plan.found
        ));
        for (name, target) in &plan.links {
            report.message(&format!("roofline: link {name} -> {}", target.display()));
        }
    }
    if plan.add.is_empty() {
        return;
    }
    let Some(exe) = inputs.exe else { return };
    let value = plan.ld_library_path(inputs.ld_library_path.as_deref());
    let added = std::env::join_paths(&plan.add).unwrap_or_default();
    if debug {
        report.message(&format!(
            "roofline: re-running with LD_LIBRARY_PATH={}",
            value.to_string_lossy()
        ));
    }
    let mut args = std::env::args_os();
    let mut cmd = std::process::Command::new(exe);
    if let Some(arg0) = args.next() {
        std::os::unix::process::CommandExt::arg0(&mut cmd, arg0);
    }
    cmd.args(args)
        .env("LD_LIBRARY_PATH", value)
        .env(ADDED_VAR, added);
    // `exec` returns only on failure.
    let e = std::os::unix::process::CommandExt::exec(&mut cmd);
    if debug {
        report.message(&format!(
            "roofline: re-running failed ({e}); going on without the libraries found"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Empty files named like libraries: these tests check paths, never loading.
    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"").unwrap();
    }

    fn venv(root: &Path) -> (PathBuf, PathBuf) {
        let exe = root.join("venv/bin/roofline");
        touch(&exe);
        let site = root.join("venv/lib/python3.11/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        (exe, site)
    }

    fn inputs(exe: &Path, cache: &Path) -> Inputs {
        Inputs {
            exe: Some(exe.to_path_buf()),
            cache: Some(cache.to_path_buf()),
            ..Inputs::default()
        }
    }

    fn no_python() -> Vec<PathBuf> {
        Vec::new()
    }

    #[test]
    fn cuda12_wheels_beside_the_binary_are_added_without_links() {
        let t = tempfile::tempdir().unwrap();
        let (exe, site) = venv(t.path());
        touch(&site.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12"));
        touch(&site.join("nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.8"));
        touch(&site.join("nvidia/cublas/lib/libcublasLt.so.12"));
        touch(&site.join("nvidia/cudnn/lib/libcudnn.so.9"));
        touch(&site.join("nvidia/nccl/lib/libnccl.so.2"));
        touch(&site.join("nvidia/__init__.py"));
        let p = plan(&inputs(&exe, &t.path().join("cache")), no_python);
        let n = |s: &str| site.join("nvidia").join(s).join("lib");
        assert_eq!(p.found, vec![n("cublas"), n("cuda_nvrtc"), n("cudnn")]);
        assert_eq!(p.add, p.found);
        assert!(p.links.is_empty() && p.link_dir.is_none());
        assert_eq!(
            p.ld_library_path(Some(OsStr::new("/opt/x"))),
            std::env::join_paths(
                std::iter::once(PathBuf::from("/opt/x")).chain(p.found.iter().cloned())
            )
            .unwrap()
        );
    }

    #[test]
    fn a_venv_lib64_link_and_virtual_env_count_once() {
        let t = tempfile::tempdir().unwrap();
        let (exe, site) = venv(t.path());
        std::os::unix::fs::symlink("lib", t.path().join("venv/lib64")).unwrap();
        touch(&site.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12"));
        let mut i = inputs(&exe, &t.path().join("cache"));
        i.prefixes = vec![t.path().join("venv")];
        let p = plan(&i, no_python);
        assert_eq!(p.add, vec![site.join("nvidia/cuda_nvrtc/lib")]);
    }

    #[test]
    fn cuda13_wheels_get_unversioned_links_in_the_cache() {
        let t = tempfile::tempdir().unwrap();
        let (exe, site) = venv(t.path());
        let lib = site.join("nvidia/cu13/lib");
        touch(&lib.join("libnvrtc.so.13"));
        touch(&lib.join("libnvrtc-builtins.so.13.0"));
        touch(&lib.join("libcublasLt.so.13"));
        touch(&site.join("nvidia/cudnn/lib/libcudnn.so.9"));
        let cache = t.path().join("cache");
        let p = plan(&inputs(&exe, &cache), no_python);
        assert_eq!(
            p.links,
            vec![
                ("libnvrtc.so".to_string(), lib.join("libnvrtc.so.13")),
                ("libcublasLt.so".to_string(), lib.join("libcublasLt.so.13")),
            ]
        );
        let dir = p.link_dir.clone().unwrap();
        assert!(dir.starts_with(&cache));
        assert_eq!(
            p.add,
            vec![lib.clone(), site.join("nvidia/cudnn/lib"), dir.clone()]
        );
        make_links(&p).unwrap();
        assert_eq!(
            std::fs::read_link(dir.join("libnvrtc.so")).unwrap(),
            lib.join("libnvrtc.so.13")
        );
        assert_eq!(
            std::fs::read_link(dir.join("libcublasLt.so")).unwrap(),
            lib.join("libcublasLt.so.13")
        );
        // A second run finds the directory made and keeps it; no temporary directory is left.
        make_links(&p).unwrap();
        let left: Vec<_> = sorted_entries(&cache);
        assert_eq!(left, vec![dir]);
    }

    #[test]
    fn a_cuda12_library_is_preferred_to_a_cuda13_one() {
        let t = tempfile::tempdir().unwrap();
        let (exe, site) = venv(t.path());
        touch(&site.join("nvidia/cu13/lib/libnvrtc.so.13"));
        touch(&site.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12"));
        touch(&site.join("nvidia/cublas/lib/libcublasLt.so.12"));
        let p = plan(&inputs(&exe, &t.path().join("cache")), no_python);
        assert!(p.links.is_empty(), "{p:?}");
        // A toolkit on LD_LIBRARY_PATH with a name cudarc tries counts too.
        let t2 = tempfile::tempdir().unwrap();
        let (exe2, site2) = venv(t2.path());
        touch(&site2.join("nvidia/cu13/lib/libnvrtc.so.13"));
        let sys = t2.path().join("toolkit/lib64");
        touch(&sys.join("libnvrtc.so.12"));
        let mut i = inputs(&exe2, &t2.path().join("cache"));
        i.ld_library_path = Some(sys.into_os_string());
        let p = plan(&i, no_python);
        assert!(p.links.is_empty(), "{p:?}");
        assert_eq!(p.add, vec![site2.join("nvidia/cu13/lib")]);
    }

    #[test]
    fn directories_already_on_the_path_need_no_rerun() {
        let t = tempfile::tempdir().unwrap();
        let (exe, site) = venv(t.path());
        let lib = site.join("nvidia/cuda_nvrtc/lib");
        touch(&lib.join("libnvrtc.so.12"));
        let mut i = inputs(&exe, &t.path().join("cache"));
        i.ld_library_path = Some(std::env::join_paths([Path::new("/a"), &lib]).unwrap());
        let p = plan(&i, no_python);
        assert_eq!(p.found, vec![lib]);
        assert!(p.add.is_empty());
    }

    #[test]
    fn a_system_toolkit_and_other_prefixes_are_searched() {
        let t = tempfile::tempdir().unwrap();
        // The binary is not in a Python environment (cargo install puts it in ~/.cargo/bin).
        let exe = t.path().join("cargo/bin/roofline");
        touch(&exe);
        let conda = t.path().join("conda");
        touch(&conda.join("lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9"));
        let cuda = t.path().join("cuda-12.8");
        touch(&cuda.join("lib64/libnvrtc.so.12"));
        touch(&cuda.join("lib64/libcublasLt.so.12"));
        let empty_toolkit = t.path().join("cuda-empty");
        std::fs::create_dir_all(empty_toolkit.join("lib64")).unwrap();
        let mut i = inputs(&exe, &t.path().join("cache"));
        i.prefixes = vec![conda.clone()];
        i.toolkits = vec![empty_toolkit, cuda.clone()];
        let p = plan(&i, || {
            panic!("python is asked only when no prefix has nvidia wheels")
        });
        assert_eq!(
            p.add,
            vec![
                conda.join("lib/python3.12/site-packages/nvidia/cudnn/lib"),
                cuda.join("lib64")
            ]
        );
    }

    #[test]
    fn python_is_asked_when_the_prefixes_have_nothing() {
        let t = tempfile::tempdir().unwrap();
        let exe = t.path().join("bin/roofline");
        touch(&exe);
        let user_site = t.path().join("home/.local/lib/python3.11/site-packages");
        touch(&user_site.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12"));
        let site = user_site.clone();
        let p = plan(&inputs(&exe, &t.path().join("cache")), move || vec![site]);
        assert_eq!(p.add, vec![user_site.join("nvidia/cuda_nvrtc/lib")]);
    }

    #[test]
    fn nothing_found_means_nothing_to_do() {
        let t = tempfile::tempdir().unwrap();
        let (exe, _) = venv(t.path());
        let p = plan(&inputs(&exe, &t.path().join("cache")), no_python);
        assert_eq!(p, Plan::default());
        make_links(&p).unwrap();
        assert!(!t.path().join("cache").exists());
    }

    #[test]
    fn names_and_prefixes() {
        assert_eq!(version_of("libnvrtc.so.12", "nvrtc"), Some("12"));
        assert_eq!(version_of("libnvrtc.so", "nvrtc"), Some(""));
        assert_eq!(version_of("libnvrtc-builtins.so.12", "nvrtc"), None);
        assert_eq!(version_of("libcudnn_ops.so.9", "cudnn"), None);
        assert_eq!(version_of("libnvrtc.sox", "nvrtc"), None);
        assert_eq!(
            prefix_of_exe(Path::new("/v/bin/roofline")),
            Some(PathBuf::from("/v"))
        );
        assert_eq!(prefix_of_exe(Path::new("/v/target/release/roofline")), None);
        assert!(needs_cuda_libraries(Some(OsStr::new("machine"))));
        assert!(needs_cuda_libraries(Some(OsStr::new("suite"))));
        for other in ["validate", "profile", "--version"] {
            assert!(!needs_cuda_libraries(Some(OsStr::new(other))));
        }
        assert!(!needs_cuda_libraries(None));
    }
}
