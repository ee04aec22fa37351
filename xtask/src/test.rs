//! `cargo xtask test`: every check CI runs, in order, and one closing line with the number of
//! tests passed and failed.

use std::process::Command;

use crate::install::{WASM, ensure_browser, ensure_cxx, ensure_wasm_target};
use crate::process::{cargo, run};

/// Every check CI runs: formatting, clippy (native and wasm32), the site, every test of the
/// workspace, the kernels' index arithmetic on the CPU, the SASS audit, the wheel, the browser
/// tests.
pub fn test() -> Result<(), String> {
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
        "roofline-import",
        "-p",
        "roofline-viewer",
        "-p",
        "roofline-import-worker",
        "-p",
        "roofline-catalogue",
        "--lib",
        "--target",
        WASM,
        "--",
        "-D",
        "warnings",
    ]);
    run(
        "clippy (wasm32: model, import, catalogue, viewer and import worker)",
        c,
    )?;
    // The site first: the collector embeds its standalone page (`plot --format html`, the
    // `viewer-page` feature, which fails the build without it), which the tests, the browser
    // tests and the wheel check use.
    crate::web::build_web()?;
    let mut c = cargo();
    c.args(["test", "--workspace", "--features", VIEWER_PAGE]);
    let (mut passed, mut failed) = run_counting_tests("cargo test --workspace", c)?;
    ensure_cxx()?;
    let mut c = cargo();
    c.args([
        "test",
        "-p",
        "roofline-tests",
        "--test",
        "kernels",
        "--",
        "--ignored",
    ]);
    let (p, f) = run_counting_tests("CUDA kernels' index arithmetic on the CPU (C++20)", c)?;
    passed += p;
    failed += f;
    crate::sass::sass(true, false)?;
    let (p, f) = crate::wheel::check()?;
    passed += p;
    failed += f;
    // The fleet recipe: one check.
    crate::fleet::fleet()?;
    passed += 1;
    ensure_browser()?;
    let mut c = cargo();
    c.args([
        "test",
        "-p",
        "roofline-tests",
        "--test",
        "browser",
        "--features",
        VIEWER_PAGE,
        "--",
        "--ignored",
        "--test-threads=1",
    ]);
    let (p, f) = run_counting_tests("browser tests (Chromium)", c)?;
    passed += p;
    failed += f;
    eprintln!("\nall checks passed; screenshots in target/browser-screenshots/");
    // One closing line for every test binary together, in the plain form CI reads.
    println!("{passed} passed, {failed} failed");
    Ok(())
}

/// The collector's feature that builds the viewer's standalone page into `roofline` (`cargo
/// xtask web` writes it first), for the tests that write HTML.
const VIEWER_PAGE: &str = "roofline-collector/viewer-page";

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
