//! Project automation, the rust-analyzer way: plain Rust, no dependencies.
//!
//! - `cargo xtask test`: every check CI runs, in order: formatting, clippy (native and wasm32),
//!   the wasm32 build of the model and viewer, and every test of the workspace. It installs the
//!   wasm32 target with rustup when it is missing.
//! - `cargo xtask demo`: the main job until the viewer lands: reports on the sample bundles and
//!   draws both rooflines of each as SVG under `target/demo/`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const WASM: &str = "wasm32-unknown-unknown";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(),
        Some("demo") => demo(),
        _ => {
            eprintln!(
                "usage: cargo xtask <test|demo>\n  test  run every check CI runs\n  demo  report on and plot the sample bundles"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

fn run(step: &str, mut cmd: Command) -> Result<(), String> {
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

fn ensure_wasm_target() -> Result<(), String> {
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

fn test() -> Result<(), String> {
    ensure_wasm_target()?;
    let mut c = cargo();
    c.args(["fmt", "--all", "--", "--check"]);
    run("cargo fmt --check", c)?;
    let mut c = cargo();
    c.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]);
    run("clippy (native)", c)?;
    let mut c = cargo();
    c.args([
        "clippy",
        "-p",
        "roofline-model",
        "-p",
        "roofline-viewer",
        "--lib",
        "--target",
        WASM,
        "--",
        "-D",
        "warnings",
    ]);
    run("clippy (wasm32: model and viewer)", c)?;
    let mut c = cargo();
    c.args(["test", "--workspace"]);
    let (passed, failed) = run_counting_tests("cargo test --workspace", c)?;
    eprintln!("\nall checks passed");
    // One closing line for every test binary together, in the plain form CI reads.
    println!("{passed} passed, {failed} failed");
    Ok(())
}

/// Runs `cargo test`, echoing its output, and adds up its `test result:` lines.
fn run_counting_tests(step: &str, mut cmd: Command) -> Result<(usize, usize), String> {
    use std::io::{BufRead, BufReader};
    eprintln!("\n==> {step}");
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{step}: could not start: {e}"))?;
    let (mut passed, mut failed) = (0, 0);
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            if let Some(rest) = line.strip_prefix("test result: ") {
                passed += count(rest, " passed");
                failed += count(rest, " failed");
            }
        }
    }
    let status = child.wait().map_err(|e| format!("{step}: {e}"))?;
    if status.success() {
        Ok((passed, failed))
    } else {
        Err(format!(
            "{step} failed ({status}): {passed} passed, {failed} failed"
        ))
    }
}

/// The number before `label` in a `test result:` line (`ok. 12 passed; 0 failed; …`).
fn count(line: &str, label: &str) -> usize {
    line.find(label)
        .and_then(|i| line[..i].rsplit([' ', '.']).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn demo() -> Result<(), String> {
    let mut c = cargo();
    c.args(["build", "--release", "-p", "roofline-collector"]);
    run("build the roofline CLI", c)?;
    let bin = root().join("target/release/roofline");
    let out = root().join("target/demo");
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
