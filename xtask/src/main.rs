//! Project automation, the rust-analyzer way: plain Rust, one binary, run as `cargo xtask …`.
//! Its dependencies are what the web build needs: wasm-bindgen's library (pinned to the
//! viewer's), flate2 and base64 for the standalone page, and `roofline-model` for its template.
//!
//! - `cargo xtask test`: every check CI runs, in order: formatting, clippy (native and wasm32),
//!   the wasm32 build of the model and viewer (the site, before the tests: the collector embeds
//!   its standalone page for `plot --format html`, its `viewer-page` feature, which the tests
//!   turn on), every test of the workspace, the CUDA kernels' index arithmetic run on the CPU,
//!   the SASS audit's check, the wheel's check, the fleet recipe, and the browser tests. It installs the wasm32
//!   target with rustup, and g++, Chromium and chromedriver with apt, when they are missing.
//! - `cargo xtask web`: builds the viewer into `dist/` (the rerun way: `cargo build` for wasm32
//!   with the size-tuned `wasm-release` profile, then wasm-bindgen as a library), writes the
//!   standalone page's template `dist/standalone.html` (which the collector embeds with its
//!   `viewer-page` feature), and reports the wasm size.
//! - `cargo xtask serve [--port N]`: `web`, then serves `dist/` on localhost: the main job.
//! - `cargo xtask bench-viewer`: `web`, then the viewer's speed budgets measured in headless
//!   Chromium on SYNTHETIC inputs (`tests/bench/viewer.rs`); prints a table.
//! - `cargo xtask bench-import`: first `roofline import` of SYNTHETIC traces of 100k and 1M
//!   launches, plain and gzipped, beside Holistic Trace Analysis in the same run (`bench.rs`;
//!   `ROOFLINE_BENCH_ONLY=scale` stops there); then `web` and the release CLI, and the
//!   in-browser import of real and SYNTHETIC torch.profiler traces timed in headless Chromium
//!   (with the tab's memory) beside `roofline import` on the same files
//!   (`tests/bench/import.rs`); prints a table each.
//! - `cargo xtask wheel [x86_64|aarch64|all]`: the `roofline` binary as a manylinux2014 Python
//!   wheel, built with maturin (see `wheel.rs`); `test` builds, installs and runs this machine's.
//! - `cargo xtask sass [--check] [--keep]`: the SASS audit of every CUDA kernel, without a driver or GPU
//!   (`sass.rs`, with the tools `nvidia.rs` installs from pip); writes `docs/reference/kernels-sass.md` and `kernels/sass-audit.tsv`, or with `--check`
//!   (as `test` runs it) fails when they differ from a fresh audit.
//! - `cargo xtask samples`: regenerates the viewer's real sample bundles
//!   (`tests/fixtures/bundles/deepcam-v100-*.json`) from the study's Nsight Compute outputs.
//! - `cargo xtask demo`: reports on the sample bundles and draws both rooflines of each as SVG
//!   under `target/demo/` with the CLI.
//! - `cargo xtask fleet`: the fleet recipe (`docs/fleet.md`): 1,000 runs exported as Parquet,
//!   queried with DuckDB and with Spark in local mode, the two engines' answers compared.
//!
//! One module per job: [`test`], [`web`] (and the viewer benchmark), [`serve`], [`sass`] (with
//! the NVIDIA tools it installs, [`nvidia`]), [`wheel`], [`demo`] (and `samples`); [`process`]
//! runs cargo and the other programs, [`install`] installs what is missing (the wasm32 target,
//! Chromium, a C++ compiler).

use std::process::ExitCode;

mod bench;
mod demo;
mod embed_kit;
mod fleet;
mod install;
mod nvidia;
mod process;
mod sass;
mod serve;
mod test;
mod web;
mod wheel;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test::test(),
        Some("demo") => demo::demo(),
        Some("web") => web::build_web().map(|_| ()),
        // The site first: the wheel's binary embeds its standalone page.
        Some("wheel") => web::build_web().and_then(|_| wheel::build(&args[1..]).map(|_| ())),
        Some("sass") => sass::sass(
            args.iter().any(|a| a == "--check"),
            args.iter().any(|a| a == "--keep"),
        ),
        Some("samples") => demo::samples(),
        Some("fleet") => fleet::fleet(),
        Some("bench-viewer") => web::build_web().and_then(|_| web::bench_viewer()),
        // The scale table first (CLI and HTA); `ROOFLINE_BENCH_ONLY=scale` stops there.
        Some("bench-import") => bench::import_sizes().and_then(|()| {
            if std::env::var("ROOFLINE_BENCH_ONLY").as_deref() == Ok("scale") {
                return Ok(());
            }
            web::build_web().and_then(|_| web::bench_import())
        }),
        Some("serve") => {
            let port = args
                .iter()
                .position(|a| a == "--port")
                .and_then(|i| args.get(i + 1))
                .map_or(Ok(8080), |p| {
                    p.parse::<u16>().map_err(|e| format!("--port {p}: {e}"))
                });
            port.and_then(|port| web::build_web().and_then(|dist| serve::serve(&dist, port)))
        }
        _ => {
            eprintln!(
                "usage: cargo xtask <test|web|serve|demo|bench-viewer|bench-import|sass|wheel|samples|fleet>\n  test   run every check CI runs\n  sass   SASS audit of the CUDA kernels without a GPU (--check: compare with docs/reference/kernels-sass.md; --keep: keep the PTX, cubins and listings)\n  web    build the viewer into dist/\n  bench-viewer  time the viewer's budgets in headless Chromium (SYNTHETIC inputs)\n  bench-import  time roofline import at 100k and 1M launches beside HTA, then the in-browser import beside the CLI (headless Chromium)\n  serve  build and serve the viewer on localhost (--port N, default 8080)\n  demo   report on and plot the sample bundles with the CLI\n  wheel  build the roofline wheel with maturin (x86_64|aarch64|all; default this machine)\n  samples  regenerate tests/fixtures/bundles/deepcam-v100-*.json from the study's ncu outputs\n  fleet  the fleet recipe: 1,000 runs as Parquet, queried with DuckDB and Spark (docs/fleet.md)"
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
