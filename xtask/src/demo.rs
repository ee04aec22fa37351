//! The sample bundles: `cargo xtask samples` regenerates them from the study's Nsight Compute
//! outputs, `cargo xtask demo` reports on them and plots them with the CLI.

use std::path::PathBuf;
use std::process::Command;

use crate::process::{cargo, root, run};

/// Regenerates the viewer's real sample bundles from the study's Nsight Compute outputs
/// (`tests/bin/samples.rs`); `tests/e2e/samples.rs` checks that the committed ones equal a fresh
/// import.
pub fn samples() -> Result<(), String> {
    let mut c = cargo();
    c.args(["run", "-p", "roofline-tests", "--bin", "samples"]);
    run("import the sample bundles (roofline import --arch 7.0)", c)
}

/// Builds the CLI, then reports on every sample bundle and draws both rooflines of each as SVG
/// under `target/demo/`.
pub fn demo() -> Result<(), String> {
    let mut c = cargo();
    c.args(["build", "--release", "-p", "roofline-collector"]);
    run("build the roofline CLI", c)?;
    let bin = crate::process::target_dir().join("release/roofline");
    let out = crate::process::target_dir().join("demo");
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let bundles = root().join("tests/fixtures/bundles");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&bundles)
        .map_err(|e| format!("{}: {e}", bundles.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for f in &files {
        let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("bundle");
        let mut c = Command::new(&bin);
        c.arg("info").arg(f).args(["--top", "15"]);
        run(&format!("roofline info {}", f.display()), c)?;
        for chart in ["hierarchical", "time"] {
            let svg = out.join(format!("{stem}-{chart}.svg"));
            let mut c = Command::new(&bin);
            c.arg("plot")
                .arg(f)
                .args(["--chart", chart, "-o"])
                .arg(&svg);
            run(&format!("roofline plot --chart {chart}"), c)?;
        }
    }
    eprintln!("\nopen the SVGs in {} with a browser", out.display());
    Ok(())
}
