//! `cargo xtask web`: the viewer built into `dist/` (wasm32 with the size-tuned `wasm-release`
//! profile, then wasm-bindgen as a library), the sample bundles copied beside it, and the
//! standalone page's template `dist/standalone.html` (which the collector embeds with its
//! `viewer-page` feature), and the
//! importer `dist/importer.js` (the import worker, which the viewer loads only when a trace or
//! CSV is opened); `cargo xtask bench-viewer`, the viewer's speed budgets in headless Chromium;
//! and `cargo xtask bench-import`, the in-browser import beside the CLI.

use std::path::{Path, PathBuf};

use crate::install::{WASM, ensure_browser, ensure_wasm_target};
use crate::process::{cargo, root, run, target_dir};

/// The viewer benchmark (`tests/bench/viewer.rs`) on the built site, in headless Chromium.
pub fn bench_viewer() -> Result<(), String> {
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

/// The in-browser import benchmark (`tests/bench/import.rs`) on the built site, in headless
/// Chromium, beside the release CLI (built here) on the same traces.
pub fn bench_import() -> Result<(), String> {
    ensure_browser()?;
    let mut c = cargo();
    c.args([
        "build",
        "--release",
        "-p",
        "roofline-collector",
        "--bin",
        "roofline",
    ]);
    run("build the CLI (release)", c)?;
    let mut c = cargo();
    c.args([
        "run",
        "--release",
        "-p",
        "roofline-tests",
        "--bin",
        "import-bench",
    ]);
    run("import benchmark (headless Chromium and the CLI)", c)
}

/// Builds `package`'s library for wasm32 with the size-tuned `wasm-release` profile.
fn build_wasm(package: &str, what: &str) -> Result<(), String> {
    let mut c = cargo();
    c.args([
        "build",
        "-p",
        package,
        "--lib",
        "--target",
        WASM,
        "--profile",
        "wasm-release",
    ]);
    run(&format!("build {what} (wasm32, wasm-release)"), c)
}

/// Builds the viewer into `dist/` and returns its path.
pub fn build_web() -> Result<PathBuf, String> {
    ensure_wasm_target()?;
    build_wasm("roofline-viewer", "the viewer")?;
    // Built apart: in one build, the importers' features (serde_json's exact float parsing)
    // would be the viewer's too, and its first-paint wasm would grow.
    build_wasm("roofline-import-worker", "the import worker")?;
    let root = root();
    // Cargo's target folder: $CARGO_TARGET_DIR when set (a shared one), else the workspace's.
    let target = target_dir();
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
    // The page (at the repository's top), and the viewer's web assets (viewer/web/).
    for page in [
        "index.html",
        "viewer/web/embed.html",
        "viewer/web/embed.js",
        "viewer/web/viewer.css",
    ] {
        let from = root.join(page);
        let name = from.file_name().unwrap_or_default();
        if from.is_file() {
            std::fs::copy(&from, dist.join(name)).map_err(|e| format!("{page}: {e}"))?;
        }
    }
    // The chart-only page's script, which `plot --embed` inlines and embed.html loads.
    std::fs::copy(
        root.join("viewer/web/embed_page.js"),
        dist.join("embed_page.js"),
    )
    .map_err(|e| format!("viewer/web/embed_page.js: {e}"))?;
    let open_js = root.join("viewer/web/open.js");
    std::fs::copy(&open_js, dist.join("open.js"))
        .map_err(|e| format!("{}: {e}", open_js.display()))?;
    copy_samples(&root, &dist)?;
    let wasm_out = dist.join("roofline_viewer_bg.wasm");
    let bytes = std::fs::read(&wasm_out).map_err(|e| format!("{}: {e}", wasm_out.display()))?;
    let gz = gzip(&bytes)?;
    let page = standalone_template(&dist, &gz)?;
    offline_page(&dist, &open_js)?;
    let importer = importer(
        &root,
        &target.join("wasm32-unknown-unknown/wasm-release/roofline_import_worker.wasm"),
        &dist,
    )?;
    eprintln!(
        "viewer built in {}: wasm {} KB, {} KB gzipped (budget {} KB); standalone page template {} KB; \
         importer (loaded only when a trace or CSV is opened or a chart it draws is shown) wasm {} KB, {} KB gzipped (budget {} KB), importer.js {} KB",
        dist.display(),
        bytes.len() / 1000,
        gz.len() / 1000,
        VIEWER_BUDGET / 1000,
        page / 1000,
        importer.wasm / 1000,
        importer.gzipped / 1000,
        IMPORTER_BUDGET / 1000,
        importer.script / 1000,
    );
    if gz.len() > VIEWER_BUDGET {
        return Err(format!(
            "the viewer's wasm is {} bytes gzipped, over its first-paint budget of {VIEWER_BUDGET}",
            gz.len()
        ));
    }
    if importer.gzipped > IMPORTER_BUDGET {
        return Err(format!(
            "the importer's wasm is {} bytes gzipped, over its budget of {IMPORTER_BUDGET}",
            importer.gzipped
        ));
    }
    Ok(dist)
}

/// The viewer's first-paint budget: its wasm, gzipped (flate2's best level), in bytes (opening
/// a page pays for the viewer only).
const VIEWER_BUDGET: usize = 400_000;

/// The importer's budget: its wasm, gzipped, in bytes. It is loaded only when a trace or CSV is
/// opened or a chart it draws is shown, never for the first paint; it holds the GPU catalogue's
/// cited figures (about 18 KB gzipped), the operator rules of the LLM stack, every refusal's
/// words, and the chart renderer for the communication view and the machine's sweep (about
/// 40 KB gzipped: drawn here, not in the viewer, to keep the first paint within its budget).
const IMPORTER_BUDGET: usize = 490_000;

/// Sizes of the importer written into `dist/`, bytes.
struct ImporterSizes {
    /// Its wasm as wasm-bindgen writes it.
    wasm: usize,
    /// The same, gzipped (what a browser downloads, base64 aside).
    gzipped: usize,
    /// `dist/importer.js`.
    script: usize,
}

/// Writes `dist/importer.js`: the import worker (`import-worker/`) run through wasm-bindgen (its
/// `no-modules` glue: the worker is a classic script), the glue and `import-worker/js/worker.js`
/// as the worker's script, its wasm gzipped and
/// base64-encoded, both put into `import-worker/js/importer.js`. One classic script, so that
/// the viewer loads it from `file://` as well as from a server, and only when a trace or CSV is
/// opened.
fn importer(root: &Path, wasm: &Path, dist: &Path) -> Result<ImporterSizes, String> {
    use base64::Engine;
    eprintln!("\n==> wasm-bindgen (import worker)");
    let out = target_dir().join("importer-bindgen");
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    // A classic worker's glue (`no-modules`): a `file://` page may start a worker from a Blob
    // URL only as a classic script.
    wasm_bindgen_cli_support::Bindgen::new()
        .input_path(wasm)
        .no_modules(true)
        .map_err(|e| format!("wasm-bindgen: {e}"))?
        .typescript(false)
        .remove_name_section(std::env::var_os("ROOFLINE_WASM_NAMES").is_none())
        .remove_producers_section(true)
        .generate(&out)
        .map_err(|e| format!("wasm-bindgen: {e:#}"))?;
    let read =
        |p: PathBuf| std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()));
    let glue = read(out.join("roofline_import_worker.js"))?;
    // The worker is made from a Blob URL: its script can import nothing.
    if glue.contains("import ") && glue.lines().any(|l| l.trim_start().starts_with("import ")) {
        return Err("the import worker's glue imports other files (a wasm-bindgen snippet?): it must stand alone".into());
    }
    let boot = read(root.join("import-worker/js/worker.js"))?;
    let template = read(root.join("import-worker/js/importer.js"))?;
    let bytes = std::fs::read(out.join("roofline_import_worker_bg.wasm"))
        .map_err(|e| format!("the import worker's wasm: {e}"))?;
    let gz = gzip(&bytes)?;
    let worker = format!("{glue}\n{boot}");
    let script = template
        .replacen(
            "\"__ROOFLINE_WORKER__\"",
            &serde_json::to_string(&worker).map_err(|e| e.to_string())?,
            1,
        )
        .replacen(
            "__ROOFLINE_WASM__",
            &base64::engine::general_purpose::STANDARD.encode(&gz),
            1,
        );
    let path = dist.join("importer.js");
    std::fs::write(&path, &script).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(ImporterSizes {
        wasm: bytes.len(),
        gzipped: gz.len(),
        script: script.len(),
    })
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
/// (`roofline_model::chart::standalone::template`): the glue inlined, the wasm gzipped (`gz`) and
/// base64-encoded. Returns its size in bytes.
fn standalone_template(dist: &Path, gz: &[u8]) -> Result<usize, String> {
    use base64::Engine;
    let glue_path = dist.join("roofline_viewer.js");
    let glue =
        std::fs::read_to_string(&glue_path).map_err(|e| format!("{}: {e}", glue_path.display()))?;
    let wasm = base64::engine::general_purpose::STANDARD.encode(gz);
    let css_path = root().join("viewer/web/viewer.css");
    let css =
        std::fs::read_to_string(&css_path).map_err(|e| format!("{}: {e}", css_path.display()))?;
    let page = roofline_model::chart::standalone::template(&glue, &wasm, &css)
        .map_err(|e| format!("the standalone page: {e}"))?;
    let out = dist.join("standalone.html");
    std::fs::write(&out, &page).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(page.len())
}

/// Writes `dist/offline.html`, where `index.html` sends a browser that opened it from disk
/// (`file://`, where a page may not import its module script nor fetch its wasm): the standalone
/// page's template (the viewer inlined, no bundle) with `open.js` inlined, so that bundles,
/// traces and CSV files dropped or picked there open as on a served site (the importer,
/// `importer.js`, is a classic script, which a `file://` page may load).
fn offline_page(dist: &Path, open_js: &Path) -> Result<(), String> {
    let template = std::fs::read_to_string(dist.join("standalone.html"))
        .map_err(|e| format!("dist/standalone.html: {e}"))?;
    let script =
        std::fs::read_to_string(open_js).map_err(|e| format!("{}: {e}", open_js.display()))?;
    if script.contains("</script") || script.contains("<!--") {
        return Err("viewer/web/open.js cannot be inlined: it holds `</script` or `<!--`".into());
    }
    let page = template.replacen(
        "</head>",
        &format!("<script>\n{script}</script>\n</head>"),
        1,
    );
    std::fs::write(dist.join("offline.html"), page).map_err(|e| format!("dist/offline.html: {e}"))
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
