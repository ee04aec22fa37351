//! Project automation, the rust-analyzer way: plain Rust, no dependencies.
//!
//! - `cargo xtask test`: every check CI runs, in order: formatting, clippy (native and wasm32),
//!   the wasm32 build of the model and viewer (the site, before the tests: the collector embeds
//!   its standalone page for `plot --format html`), every test of the workspace, the CUDA kernels'
//!   index arithmetic run on the CPU, and the browser tests. It installs the wasm32 target with
//!   rustup, and g++, Chromium and chromedriver with apt, when they are missing.
//! - `cargo xtask web`: builds the viewer into `dist/` (the rerun way: `cargo build` for wasm32
//!   with the size-tuned `wasm-release` profile, then wasm-bindgen as a library), writes the
//!   standalone page's template `dist/standalone.html` (which the collector embeds), and reports
//!   the wasm size.
//! - `cargo xtask serve [--port N]`: `web`, then serves `dist/` on localhost: the main job.
//! - `cargo xtask bench-viewer`: `web`, then the viewer's speed budgets measured in headless
//!   Chromium on SYNTHETIC inputs (`tests/bench/viewer.rs`); prints a table.
//! - `cargo xtask wheel [x86_64|aarch64|all]`: the `roofline` binary as a manylinux2014 Python
//!   wheel, built with maturin (see `wheel.rs`); `test` builds, installs and runs this machine's.
//! - `cargo xtask sass [--check] [--keep]`: the SASS audit of every CUDA kernel, without a driver or GPU
//!   (`sass` below); writes `docs/kernels-sass.md` and `kernels/sass-audit.tsv`, or with `--check`
//!   (as `test` runs it) fails when they differ from a fresh audit.
//! - `cargo xtask samples`: regenerates the viewer's real sample bundles
//!   (`tests/fixtures/bundles/deepcam-v100-*.json`) from the study's Nsight Compute outputs.
//! - `cargo xtask demo`: reports on the sample bundles and draws both rooflines of each as SVG
//!   under `target/demo/` with the CLI.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod wheel;

const WASM: &str = "wasm32-unknown-unknown";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(),
        Some("demo") => demo(),
        Some("web") => build_web().map(|_| ()),
        // The site first: the wheel's binary embeds its standalone page.
        Some("wheel") => build_web().and_then(|_| wheel::build(&args[1..]).map(|_| ())),
        Some("sass") => sass(
            args.iter().any(|a| a == "--check"),
            args.iter().any(|a| a == "--keep"),
        ),
        Some("samples") => samples(),
        Some("bench-viewer") => build_web().and_then(|_| bench_viewer()),
        Some("serve") => {
            let port = args
                .iter()
                .position(|a| a == "--port")
                .and_then(|i| args.get(i + 1))
                .map_or(Ok(8080), |p| {
                    p.parse::<u16>().map_err(|e| format!("--port {p}: {e}"))
                });
            port.and_then(|port| build_web().and_then(|dist| serve(&dist, port)))
        }
        _ => {
            eprintln!(
                "usage: cargo xtask <test|web|serve|demo|bench-viewer|sass|wheel|samples>\n  test   run every check CI runs\n  sass   SASS audit of the CUDA kernels without a GPU (--check: compare with docs/kernels-sass.md; --keep: keep the PTX, cubins and listings)\n  web    build the viewer into dist/\n  bench-viewer  time the viewer's budgets in headless Chromium (SYNTHETIC inputs)\n  serve  build and serve the viewer on localhost (--port N, default 8080)\n  demo   report on and plot the sample bundles with the CLI\n  wheel  build the roofline wheel with maturin (x86_64|aarch64|all; default this machine)\n  samples  regenerate tests/fixtures/bundles/deepcam-v100-*.json from the study's ncu outputs"
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

/// Debian's Chromium and chromedriver, installed with apt when missing (as CI does).
fn ensure_browser() -> Result<(), String> {
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
fn ensure_cxx() -> Result<(), String> {
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
        "roofline-import",
        "-p",
        "roofline-viewer",
        "--lib",
        "--target",
        WASM,
        "--",
        "-D",
        "warnings",
    ]);
    run("clippy (wasm32: model, import and viewer)", c)?;
    // The site first: the collector embeds its standalone page (`plot --format html`), which the
    // tests and the wheel check use.
    build_web()?;
    let mut c = cargo();
    c.args(["test", "--workspace"]);
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
    sass(true, false)?;
    wheel::check()?;
    ensure_browser()?;
    let mut c = cargo();
    c.args([
        "test",
        "-p",
        "roofline-tests",
        "--test",
        "browser",
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

/// Regenerates the viewer's real sample bundles from the study's Nsight Compute outputs
/// (`tests/bin/samples.rs`); `tests/e2e/samples.rs` checks that the committed ones equal a fresh
/// import.
fn samples() -> Result<(), String> {
    let mut c = cargo();
    c.args(["run", "-p", "roofline-tests", "--bin", "samples"]);
    run("import the sample bundles (roofline import --arch 7.0)", c)
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

/// Builds the viewer into `dist/` and returns its path.
fn bench_viewer() -> Result<(), String> {
    ensure_browser()?;
    let mut c = cargo();
    c.args([
        "run",
        "--release",
        "-p",
        "roofline-tests",
        "--bin",
        "viewer-bench",
    ]);
    run("viewer benchmark (headless Chromium)", c)
}

fn build_web() -> Result<PathBuf, String> {
    ensure_wasm_target()?;
    let mut c = cargo();
    c.args([
        "build",
        "-p",
        "roofline-viewer",
        "--lib",
        "--target",
        WASM,
        "--profile",
        "wasm-release",
    ]);
    run("build the viewer (wasm32, wasm-release)", c)?;
    let root = root();
    // Cargo's target folder: $CARGO_TARGET_DIR when set (a shared one), else the workspace's.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map_or_else(|| root.join("target"), |t| root.join(t));
    let wasm = target.join("wasm32-unknown-unknown/wasm-release/roofline_viewer.wasm");
    let dist = root.join("dist");
    clear_dist(&dist)?;
    eprintln!("\n==> wasm-bindgen");
    wasm_bindgen_cli_support::Bindgen::new()
        .input_path(&wasm)
        .web(true)
        .map_err(|e| format!("wasm-bindgen: {e}"))?
        .typescript(false)
        // `ROOFLINE_WASM_NAMES=1` keeps the functions' names, for a profile (`bench-viewer`
        // with `ROOFLINE_BENCH_PROFILE=1`); the shipped wasm leaves them out.
        .remove_name_section(std::env::var_os("ROOFLINE_WASM_NAMES").is_none())
        .remove_producers_section(true)
        .generate(&dist)
        .map_err(|e| format!("wasm-bindgen: {e:#}"))?;
    for page in ["index.html", "embed.html"] {
        let from = root.join(page);
        if from.is_file() {
            std::fs::copy(&from, dist.join(page)).map_err(|e| format!("{page}: {e}"))?;
        }
    }
    copy_samples(&root, &dist)?;
    let wasm_out = dist.join("roofline_viewer_bg.wasm");
    let bytes = std::fs::read(&wasm_out).map_err(|e| format!("{}: {e}", wasm_out.display()))?;
    let gz = gzip(&bytes)?;
    let page = standalone_template(&dist, &gz)?;
    eprintln!(
        "viewer built in {}: wasm {} KB, {} KB gzipped (budget 400 KB); standalone page template {} KB",
        dist.display(),
        bytes.len() / 1000,
        gz.len() / 1000,
        page / 1000
    );
    Ok(dist)
}

/// Empties `dist/` but for its tracked `README.md` (the folder exists in every clone, so that the
/// collector's build script can watch it for `standalone.html`).
fn clear_dist(dist: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dist).map_err(|e| format!("{}: {e}", dist.display()))?;
    for entry in std::fs::read_dir(dist).map_err(|e| format!("{}: {e}", dist.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.file_name().is_some_and(|n| n == "README.md") {
            continue;
        }
        let removed = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed.map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Writes `dist/standalone.html`, the page "Save as HTML" and `roofline plot --format html` fill
/// (`roofline_model::standalone::template`): the glue inlined, the wasm gzipped (`gz`) and
/// base64-encoded. Returns its size in bytes.
fn standalone_template(dist: &Path, gz: &[u8]) -> Result<usize, String> {
    use base64::Engine;
    let glue_path = dist.join("roofline_viewer.js");
    let glue =
        std::fs::read_to_string(&glue_path).map_err(|e| format!("{}: {e}", glue_path.display()))?;
    let wasm = base64::engine::general_purpose::STANDARD.encode(gz);
    let page = roofline_model::standalone::template(&glue, &wasm)
        .map_err(|e| format!("the standalone page: {e}"))?;
    let out = dist.join("standalone.html");
    std::fs::write(&out, &page).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(page.len())
}

/// Copies the sample bundles into `dist/samples/` with their list (`viewer/samples.json` as
/// `index.json`), which the viewer's picker reads: samples are files beside the site, never
/// compiled into the wasm. `tests/e2e/samples.rs` checks that the list names existing bundles.
fn copy_samples(root: &Path, dist: &Path) -> Result<(), String> {
    let to = dist.join("samples");
    std::fs::create_dir_all(&to).map_err(|e| format!("{}: {e}", to.display()))?;
    let index = root.join("viewer/samples.json");
    std::fs::copy(&index, to.join("index.json"))
        .map_err(|e| format!("{}: {e}", index.display()))?;
    let bundles = root.join("tests/fixtures/bundles");
    let mut n = 0;
    for entry in std::fs::read_dir(&bundles).map_err(|e| format!("{}: {e}", bundles.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|e| e == "json")
            && let Some(name) = path.file_name()
        {
            std::fs::copy(&path, to.join(name)).map_err(|e| format!("{}: {e}", path.display()))?;
            n += 1;
        }
    }
    eprintln!("copied {n} sample bundles to {}", to.display());
    Ok(())
}

/// Gzip at the best level, with no time stamp or file name: the same bytes every time.
fn gzip(bytes: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes).map_err(|e| e.to_string())?;
    enc.finish().map_err(|e| e.to_string())
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

/// A minimal static file server for `dist/` on 127.0.0.1 (GET and HEAD only).
fn serve(dist: &Path, port: u16) -> Result<(), String> {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    eprintln!(
        "\nserving {} at http://127.0.0.1:{port}/ (Ctrl-C to stop)",
        dist.display()
    );
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        // Read the whole request head: closing a socket with unread input resets the
        // connection and truncates the response.
        let mut reader = BufReader::new(&stream);
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).is_err() {
            continue;
        }
        let mut header = String::new();
        while reader.read_line(&mut header).is_ok_and(|n| n > 0) && header.trim() != "" {
            header.clear();
        }
        let mut parts = request_line.split_whitespace();
        let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
        let path = target.split(['?', '#']).next().unwrap_or("/");
        let rel = path.trim_start_matches('/');
        let rel = if rel.is_empty() { "index.html" } else { rel };
        let file = dist.join(rel);
        let safe = !rel.split('/').any(|c| c == "..");
        let response = match (method, safe, std::fs::read(&file)) {
            ("GET" | "HEAD", true, Ok(body)) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
                    content_type(&file),
                    body.len()
                );
                let mut r = head.into_bytes();
                if method == "GET" {
                    r.extend(body);
                }
                r
            }
            _ => {
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found"
                    .to_vec()
            }
        };
        let _ = stream.write_all(&response);
        let _ = stream.flush();
        let _ = stream.shutdown(std::net::Shutdown::Write);
    }
    Ok(())
}

/// One file taken from a pinned wheel of the Python package index: `(member, destination)`,
/// the destination relative to the toolkit's directory.
type Extract = (&'static str, &'static str);

/// A pinned wheel and the files the audit takes from it.
struct Wheel {
    name: &'static str,
    version: &'static str,
    files: &'static [Extract],
}

/// A set of NVIDIA tools (NVRTC, ptxas, nvdisasm) the audit runs, and the architectures it
/// audits with them.
struct Toolkit {
    name: &'static str,
    description: &'static str,
    archs: &'static [&'static str],
    /// The NVRTC library, linked as `lib/libnvrtc.so` (the name cudarc loads).
    nvrtc: &'static str,
    wheels: &'static [Wheel],
}

/// The toolkits audited. CUDA 12.9 is the last to compile for sm_70 (Volta); its nvdisasm is not
/// published on its own, so the one inside Triton's wheel (12.8) reads its cubins. CUDA 13.0 is
/// what current GPU hosts run; NVRTC 13 refuses sm_70, which the report records.
const TOOLKITS: [Toolkit; 2] = [
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
fn tools_cache() -> PathBuf {
    if let Some(dir) = std::env::var_os("ROOFLINE_TOOLS_CACHE") {
        return PathBuf::from(dir);
    }
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root().join("target"), PathBuf::from)
        .join("nvidia-tools")
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
fn ensure_nvidia_tools(cache: &Path) -> Result<(), String> {
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

/// The SASS audit: installs the pinned NVIDIA wheels, runs `roofline-sass-audit` once per
/// toolkit (both at once, one NVRTC each), then renders `docs/kernels-sass.md` and
/// `kernels/sass-audit.tsv`, or with `check` fails if they differ from the fresh result. With
/// `keep`, every PTX, cubin, `ptxas -v` report and listing stays under `listings/` in the cache.
fn sass(check: bool, keep: bool) -> Result<(), String> {
    let started = std::time::Instant::now();
    let cache = tools_cache();
    ensure_nvidia_tools(&cache)?;
    let mut c = cargo();
    c.args([
        "build",
        "-p",
        "roofline-collector",
        "--bin",
        "roofline-sass-audit",
    ]);
    run("build roofline-sass-audit", c)?;
    let bin = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root().join("target"), PathBuf::from)
        .join("debug/roofline-sass-audit");
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
        "docs/kernels-sass.md",
    ]);
    if check {
        c.arg("--check");
    }
    run(
        if check {
            "check docs/kernels-sass.md and kernels/sass-audit.tsv against the fresh audit"
        } else {
            "write docs/kernels-sass.md and kernels/sass-audit.tsv"
        },
        c,
    )?;
    eprintln!(
        "SASS audit done in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
