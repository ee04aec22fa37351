//! `cargo xtask sass [--check] [--keep]`: the SASS audit of every CUDA kernel, without a driver
//! or GPU, with the tools of [`crate::nvidia`].

use std::process::Command;

use crate::nvidia::{TOOLKITS, ensure_nvidia_tools, tools_cache};
use crate::process::{cargo, root, run};

/// The SASS audit: installs the pinned NVIDIA wheels, builds the developer crate
/// `roofline-sass-audit` (`kernels/audit/`, not part of the `roofline` CLI) and runs its binary once
/// per toolkit (both at once, one NVRTC each), then renders `docs/reference/kernels-sass.md` and
/// `kernels/sass-audit.tsv`, or with `check` fails if they differ from the fresh result. With
/// `keep`, every PTX, cubin, `ptxas -v` report and listing stays under `listings/` in the cache.
pub fn sass(check: bool, keep: bool) -> Result<(), String> {
    let started = std::time::Instant::now();
    let cache = tools_cache();
    ensure_nvidia_tools(&cache)?;
    let mut c = cargo();
    c.args([
        "build",
        "-p",
        "roofline-sass-audit",
        "--bin",
        "roofline-sass-audit",
    ]);
    run("build roofline-sass-audit", c)?;
    let bin = crate::process::target_dir().join("debug/roofline-sass-audit");
    let out = cache.join("out");
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!("\n==> SASS audit ({} toolkits at once)", TOOLKITS.len());
    let mut children = Vec::new();
    for tk in &TOOLKITS {
        let dir = cache.join(tk.name);
        let mut c = Command::new(&bin);
        c.current_dir(root())
            .env("LD_LIBRARY_PATH", dir.join("lib"))
            .args([
                "audit",
                "--toolkit",
                tk.name,
                "--description",
                tk.description,
            ])
            .arg("--ptxas")
            .arg(dir.join("bin/ptxas"))
            .arg("--nvdisasm")
            .arg(dir.join("bin/nvdisasm"))
            .arg("--out")
            .arg(out.join(format!("{}.tsv", tk.name)));
        for a in tk.archs {
            c.args(["--arch", a]);
        }
        if keep {
            c.arg("--keep").arg(cache.join("listings"));
        }
        let child = c
            .spawn()
            .map_err(|e| format!("could not start {}: {e}", bin.display()))?;
        children.push((tk.name, child));
    }
    let mut failed = Vec::new();
    for (name, mut child) in children {
        match child.wait() {
            Ok(s) if s.success() => {}
            Ok(s) => failed.push(format!("{name} ({s})")),
            Err(e) => failed.push(format!("{name} ({e})")),
        }
    }
    if !failed.is_empty() {
        return Err(format!("the SASS audit failed: {}", failed.join(", ")));
    }
    let mut c = Command::new(&bin);
    c.current_dir(root()).arg("render");
    for tk in &TOOLKITS {
        c.arg("--input").arg(out.join(format!("{}.tsv", tk.name)));
    }
    c.args([
        "--table",
        "kernels/sass-audit.tsv",
        "--markdown",
        "docs/reference/kernels-sass.md",
    ]);
    if check {
        c.arg("--check");
    }
    run(
        if check {
            "check docs/reference/kernels-sass.md and kernels/sass-audit.tsv against the fresh audit"
        } else {
            "write docs/reference/kernels-sass.md and kernels/sass-audit.tsv"
        },
        c,
    )?;
    eprintln!(
        "SASS audit done in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
