//! NVIDIA's compiler tools for the SASS audit (NVRTC, `ptxas`, `nvdisasm`), no GPU or driver
//! needed: the pinned toolkits, and their installation from the Python package index's wheels
//! into a cache (once).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::process::run;

/// One file taken from a pinned wheel of the Python package index: `(member, destination)`,
/// the destination relative to the toolkit's directory.
type Extract = (&'static str, &'static str);

/// A pinned wheel and the files the audit takes from it.
pub struct Wheel {
    name: &'static str,
    version: &'static str,
    files: &'static [Extract],
}

/// A set of NVIDIA tools (NVRTC, ptxas, nvdisasm) the audit runs, and the architectures it
/// audits with them.
pub struct Toolkit {
    /// Its name in the audit's table (`cuda-12.9`).
    pub name: &'static str,
    /// Its tools' versions and where they come from.
    pub description: &'static str,
    /// The architectures audited with it.
    pub archs: &'static [&'static str],
    /// The NVRTC library, linked as `lib/libnvrtc.so` (the name cudarc loads).
    nvrtc: &'static str,
    wheels: &'static [Wheel],
}

/// The toolkits audited. CUDA 12.9 is the last to compile for sm_70 (Volta); its nvdisasm is not
/// published on its own, so the one inside Triton's wheel (12.8) reads its cubins. CUDA 13.0 is
/// what current GPU hosts run; NVRTC 13 refuses sm_70, which the report records.
pub const TOOLKITS: [Toolkit; 2] = [
    Toolkit {
        name: "cuda-12.9",
        description: "NVRTC 12.9.86 (nvidia-cuda-nvrtc-cu12), ptxas 12.9.86 (nvidia-cuda-nvcc-cu12), nvdisasm 12.8.55 (from triton 3.3.1)",
        archs: &[
            "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100",
        ],
        nvrtc: "libnvrtc.so.12",
        wheels: &[
            Wheel {
                name: "nvidia-cuda-nvrtc-cu12",
                version: "12.9.86",
                files: &[
                    ("nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "lib/libnvrtc.so.12"),
                    (
                        "nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.9",
                        "lib/libnvrtc-builtins.so.12.9",
                    ),
                ],
            },
            Wheel {
                name: "nvidia-cuda-nvcc-cu12",
                version: "12.9.86",
                files: &[("nvidia/cuda_nvcc/bin/ptxas", "bin/ptxas")],
            },
            Wheel {
                name: "triton",
                version: "3.3.1",
                files: &[("triton/backends/nvidia/bin/nvdisasm", "bin/nvdisasm")],
            },
        ],
    },
    Toolkit {
        name: "cuda-13.0",
        description: "NVRTC 13.0.88 (nvidia-cuda-nvrtc), ptxas 13.0.88 (nvidia-cuda-nvcc), nvdisasm 13.5.37 (nvidia-cuda-nvdisasm)",
        archs: &[
            "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100",
        ],
        nvrtc: "libnvrtc.so.13",
        wheels: &[
            Wheel {
                name: "nvidia-cuda-nvrtc",
                version: "13.0.88",
                files: &[
                    ("nvidia/cu13/lib/libnvrtc.so.13", "lib/libnvrtc.so.13"),
                    (
                        "nvidia/cu13/lib/libnvrtc-builtins.so.13.0",
                        "lib/libnvrtc-builtins.so.13.0",
                    ),
                ],
            },
            Wheel {
                name: "nvidia-cuda-nvcc",
                version: "13.0.88",
                files: &[("nvidia/cu13/bin/ptxas", "bin/ptxas")],
            },
            Wheel {
                name: "nvidia-cuda-nvdisasm",
                version: "13.5.37",
                files: &[("nvidia/cu13/bin/nvdisasm", "bin/nvdisasm")],
            },
        ],
    },
];

/// Where the wheels and the tools taken from them are kept: `$ROOFLINE_TOOLS_CACHE`, else
/// `nvidia-tools/` in the cargo target directory.
pub fn tools_cache() -> PathBuf {
    if let Some(dir) = std::env::var_os("ROOFLINE_TOOLS_CACHE") {
        return PathBuf::from(dir);
    }
    crate::process::target_dir().join("nvidia-tools")
}

/// The Python that runs pip (and unzips the wheels): `python3`, or `python`.
fn python() -> Result<String, String> {
    for py in ["python3", "python"] {
        let ok = Command::new(py)
            .args(["-m", "pip", "--version"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Ok(py.into());
        }
    }
    Err("the SASS audit installs NVIDIA's compiler tools as Python wheels, and needs pip: install python3 and python3-pip (no GPU or driver is needed)".into())
}

/// The wheel file of `w` in `dir`, if it was downloaded.
fn find_wheel(dir: &Path, w: &Wheel) -> Option<PathBuf> {
    let prefix = format!("{}-{}-", w.name.replace('-', "_"), w.version);
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
        })
}

/// Downloads the pinned wheels (once) and takes the tools of each toolkit out of them.
pub fn ensure_nvidia_tools(cache: &Path) -> Result<(), String> {
    let wheels = cache.join("wheels");
    std::fs::create_dir_all(&wheels).map_err(|e| format!("{}: {e}", wheels.display()))?;
    for tk in &TOOLKITS {
        let dir = cache.join(tk.name);
        let stamp = dir.join(".complete");
        let pins: String = tk
            .wheels
            .iter()
            .map(|w| format!("{}=={}\n", w.name, w.version))
            .collect();
        if std::fs::read_to_string(&stamp).is_ok_and(|s| s == pins) {
            continue;
        }
        let py = python()?;
        for w in tk.wheels {
            if find_wheel(&wheels, w).is_none() {
                eprintln!("==> pip download {}=={}", w.name, w.version);
                let out = Command::new(&py)
                    .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
                    .args(["--python-version", "3.12"])
                    .args(["--platform", "manylinux_2_27_x86_64"])
                    .args(["--platform", "manylinux_2_28_x86_64"])
                    .args(["--platform", "manylinux2014_x86_64"])
                    .args(["--platform", "manylinux_2_17_x86_64"])
                    .arg(format!("{}=={}", w.name, w.version))
                    .arg("-d")
                    .arg(&wheels)
                    .output()
                    .map_err(|e| format!("could not start pip: {e}"))?;
                if !out.status.success() || find_wheel(&wheels, w).is_none() {
                    let err = String::from_utf8_lossy(&out.stderr);
                    let tail: Vec<&str> = err.lines().rev().take(6).collect();
                    return Err(format!(
                        "pip could not download {}=={} from the Python package index (is it reachable from here? pip honours PIP_INDEX_URL and the proxy variables):\n{}",
                        w.name,
                        w.version,
                        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                    ));
                }
            }
            let wheel = find_wheel(&wheels, w).ok_or("the wheel vanished")?;
            // Python's zipfile takes only the few files needed out of each wheel.
            let script = "import os, sys, zipfile\n\
                z = zipfile.ZipFile(sys.argv[1])\n\
                for member, dest in zip(sys.argv[2::2], sys.argv[3::2]):\n\
                \x20   os.makedirs(os.path.dirname(dest), exist_ok=True)\n\
                \x20   with open(dest + '.tmp', 'wb') as f:\n\
                \x20       f.write(z.read(member))\n\
                \x20   os.chmod(dest + '.tmp', 0o755)\n\
                \x20   os.replace(dest + '.tmp', dest)\n";
            let mut c = Command::new(&py);
            c.arg("-c").arg(script).arg(&wheel);
            for (member, dest) in w.files {
                c.arg(member).arg(dir.join(dest));
            }
            run(&format!("unpack {}=={}", w.name, w.version), c)?;
        }
        let link = dir.join("lib/libnvrtc.so");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(tk.nvrtc, &link)
            .map_err(|e| format!("{}: {e}", link.display()))?;
        std::fs::write(&stamp, pins).map_err(|e| format!("{}: {e}", stamp.display()))?;
    }
    Ok(())
}
