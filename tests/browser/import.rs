//! Issue 31: torch.profiler traces and Nsight Compute exports opened in the page, imported in
//! the browser by the importer (`dist/importer.js`, its worker and wasm), by URL, by drop, by
//! the file picker and from `file://`; the bundle saved equals the CLI's; every refusal of the
//! bad-input corpus is the CLI's message; the importer is loaded only when it is needed, and an
//! import can be cancelled.

use std::path::Path;

use roofline_tests::repo;
use roofline_tests::webdriver::{Browser, serve};
use serde_json::{Value, json};

use super::{WAIT_CHART, dist, import_trace, take_download};

/// The trace of a real training step (1,154 kernels, shapes recorded), gzipped, served by the
/// test's server.
const TRACE: &str = "/fixtures/traces/sampled-rank-0-shapes.json.gz";

/// The V100 example's machine (it holds kernels too: `--machine` reads its ceilings).
const V100: &str = "/fixtures/bundles/v100-deepcam-example.json";

/// The 12 one-metric Nsight Compute captures of one DeepCAM run (no `CC` column: the machine's
/// architecture stands in), served by the test's server.
fn deepcam_csvs() -> Vec<String> {
    let dir = repo().join("tests/fixtures/ncu/nersc-v100-deepcam");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().into_string().unwrap();
            n.ends_with(".csv").then_some(n)
        })
        .collect();
    names.sort();
    assert_eq!(names.len(), 12);
    names
        .into_iter()
        .map(|n| format!("/fixtures/ncu/nersc-v100-deepcam/{n}"))
        .collect()
}

/// Chooses the default convention in "Import options", as a reader does.
const CONVENTION_DEFAULT: &str = "const s = document.getElementById('import-convention'); s.value = ''; s.dispatchEvent(new Event('change', {bubbles: true}));";

/// The page's error, when it shows one.
const ERROR: &str = "const e = document.querySelector('.error'); return e && e.textContent";

/// Waits for the page's error and checks that it says `expected`.
fn expect_refusal(b: &Browser, expected: &str) {
    let refusal = b.wait(ERROR, expected);
    assert!(
        refusal.as_str().unwrap_or_default().contains(expected),
        "expected {expected:?} in {refusal}"
    );
}

/// Whether the importer (`importer.js`) was fetched by this page.
const IMPORTER_LOADED: &str =
    "return performance.getEntriesByType('resource').some(e => e.name.endsWith('/importer.js'))";

/// Drops files fetched from `urls` (named by their last part) on the page, as a user drags
/// them from a file manager: one `drop` event whose `DataTransfer` holds them.
fn drop_urls(b: &Browser, urls: &[&str]) {
    b.js_async(
        "const [urls, done] = arguments;
         Promise.all(urls.map(async u => new File([await (await fetch(u)).blob()], u.split('/').pop())))
           .then(files => {
             const dt = new DataTransfer();
             files.forEach(f => dt.items.add(f));
             document.querySelector('.app').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
             done(true);
           });",
        &[json!(urls)],
    );
}

/// Waits until the page shows the bundle named `name`.
fn wait_for_bundle(b: &Browser, name: &str) {
    b.wait(
        &format!(
            "const s = document.getElementById('bundle-select'); return s && s.selectedOptions[0] && s.selectedOptions[0].textContent === {}",
            json!(name)
        ),
        name,
    );
}

/// Waits for the chart's kernel markers and ceiling labels; returns how many markers.
fn wait_for_markers_and_ceilings(b: &Browser, what: &str) -> u64 {
    b.wait(
        "const n = document.querySelectorAll('#chart circle.marker').length; return document.querySelectorAll('#chart .ceiling-label').length > 0 && n",
        what,
    )
    .as_u64()
    .unwrap()
}

/// The notes under the chart.
fn notes(b: &Browser) -> String {
    b.js("return [...document.querySelectorAll('.notes li')].map(l => l.textContent).join('\\n')")
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A bundle's text without its provenance (the one block that says who wrote it, where and when,
/// which differs between the CLI and the page): the rest must be the same bytes.
fn without_provenance(text: &str) -> String {
    let start = text
        .find("\n  \"provenance\": {")
        .expect("a provenance block");
    let end = start + text[start..].find("\n  },").expect("its end") + "\n  },".len();
    format!("{}{}", &text[..start], &text[end..])
}

/// Copies the captures (served paths under `tests/`) and the machine bundle `machine` into
/// `work`; returns `roofline import`'s arguments for them: the captures' file names, then
/// `--machine` and the machine's file name (as the page names them).
fn captures_with_machine(work: &Path, csvs: &[String], machine: &Path) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    for c in csvs {
        let file = c.rsplit('/').next().unwrap();
        std::fs::copy(
            repo().join("tests").join(c.trim_start_matches('/')),
            work.join(file),
        )
        .unwrap();
        args.push(file.to_string());
    }
    let name = machine.file_name().unwrap();
    std::fs::copy(machine, work.join(name)).unwrap();
    args.extend(["--machine".into(), name.to_string_lossy().into_owned()]);
    args
}

/// `roofline import ARGS… -o OUT`, as the binary runs it, in `dir` (so that the inputs are
/// named as the page names them); returns the bundle's text. (The browser tests run one at a
/// time: the working directory is theirs.)
fn cli_import(dir: &Path, args: &[&str]) -> String {
    let out = dir.join("cli-bundle.json");
    let before = std::env::current_dir().unwrap();
    std::env::set_current_dir(dir).unwrap();
    let mut all = vec!["import"];
    all.extend_from_slice(args);
    all.extend(["-o", out.to_str().unwrap()]);
    super::roofline_cli(&all);
    std::env::set_current_dir(before).unwrap();
    std::fs::read_to_string(out).unwrap()
}

#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn a_trace_opens_by_url_and_by_drop_with_its_notes_and_the_clis_bundle() {
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let base = format!("http://127.0.0.1:{port}/");
    let downloads = tempfile::tempdir().unwrap();
    let b = Browser::start();
    b.allow_downloads(downloads.path());

    // A bundle opens without the importer: the first paint does not load it.
    b.go(&format!("{base}?bundle=samples/v100-deepcam-example.json"));
    b.wait(WAIT_CHART, "a bundle's chart");
    assert_eq!(b.js(IMPORTER_LOADED), json!(false));
    assert!(
        b.js("return document.querySelector('footer').textContent")
            .as_str()
            .unwrap()
            .contains("Nothing is uploaded"),
    );

    // ?trace=URL: imported here, drawn on the time-based chart (no counters), its notes shown.
    b.go(&format!("{base}?trace={TRACE}"));
    wait_for_bundle(&b, "sampled-rank-0-shapes.json.gz");
    b.wait(WAIT_CHART, "the trace's chart");
    assert_eq!(b.js(IMPORTER_LOADED), json!(true));
    assert_eq!(
        b.js("return document.querySelector('#tab-time.active') !== null"),
        json!(true)
    );
    let n = notes(&b);
    assert!(n.contains("no machine characterization"), "{n}");
    assert!(
        n.contains("assumed where the trace did not record it"),
        "{n}"
    );
    b.wait(
        "return location.search.includes('trace=') && !location.search.includes('bundle=')",
        "trace= kept in the URL",
    );
    b.screenshot("import-trace-url");

    // With a machine (?machine=URL, as --machine): both rooflines have their ceilings; the
    // kernels (F, B and times from the trace, no counters) are on the time-based one.
    b.go(&format!("{base}?trace={TRACE}&machine={V100}"));
    wait_for_bundle(&b, "sampled-rank-0-shapes.json.gz");
    b.wait(
        "return document.querySelectorAll('#chart .ceiling-label').length",
        "the hierarchical chart's ceilings",
    );
    assert!(!notes(&b).contains("no machine characterization"));
    b.screenshot("import-trace-machine-hierarchical");
    b.js("document.getElementById('tab-time').click()");
    wait_for_markers_and_ceilings(&b, "the time-based chart");
    b.screenshot("import-trace-machine-time");

    // "Save bundle": the bytes the CLI writes for the same trace and machine, provenance aside.
    b.js("document.getElementById('save-bundle').click()");
    let saved = take_download(downloads.path(), "sampled-rank-0-shapes.roofline.json");
    let saved = String::from_utf8(saved).unwrap();
    let work = tempfile::tempdir().unwrap();
    let fixtures = repo().join("tests/fixtures");
    std::fs::copy(
        fixtures.join("traces/sampled-rank-0-shapes.json.gz"),
        work.path().join("sampled-rank-0-shapes.json.gz"),
    )
    .unwrap();
    std::fs::copy(
        fixtures.join("bundles/v100-deepcam-example.json"),
        work.path().join("v100-deepcam-example.json"),
    )
    .unwrap();
    let cli = cli_import(
        work.path(),
        &[
            "sampled-rank-0-shapes.json.gz",
            "--machine",
            "v100-deepcam-example.json",
        ],
    );
    assert!(
        without_provenance(&saved) == without_provenance(&cli),
        "the page's bundle ({} bytes) differs from the CLI's ({} bytes)",
        saved.len(),
        cli.len()
    );
    let p: Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(
        p["provenance"]["command_line"],
        json!([
            "roofline-viewer",
            "import",
            "sampled-rank-0-shapes.json.gz",
            "--machine",
            "v100-deepcam-example.json"
        ])
    );

    // Dropped on the page: the same.
    b.go(&format!("{base}?bundle=samples/v100-deepcam-example.json"));
    b.wait(WAIT_CHART, "a bundle's chart");
    drop_urls(&b, &[TRACE]);
    wait_for_bundle(&b, "sampled-rank-0-shapes.json.gz");
    b.wait(WAIT_CHART, "the dropped trace's chart");
    assert!(notes(&b).contains("no machine characterization"));
    // A machine bundle dropped next: the import is made again against it ("Ceilings from").
    let machine_only = machine_only_bundle(extra.path());
    drop_urls(&b, &[&format!("/extra/{machine_only}")]);
    wait_for_markers_and_ceilings(&b, "the ceilings of the machine dropped next");
    wait_for_bundle(&b, "sampled-rank-0-shapes.json.gz");
    assert!(!notes(&b).contains("no machine characterization"));
    b.screenshot("import-trace-drop-machine");
}

/// Writes the V100 example's machine alone (its kernels removed) into `dir`; returns its name.
fn machine_only_bundle(dir: &Path) -> &'static str {
    let mut m: Value = serde_json::from_str(&roofline_tests::fixture_text(
        "bundles/v100-deepcam-example.json",
    ))
    .unwrap();
    m["kernels"] = json!([]);
    m["description"] = json!("the V100 example's machine alone (its kernels removed)");
    let name = "v100-machine.json";
    std::fs::write(dir.join(name), serde_json::to_string_pretty(&m).unwrap()).unwrap();
    name
}

/// A raw-page Nsight Compute capture in base units, two launches of two kernels, written for
/// this test (SYNTHETIC: made-up figures, not a measurement), in the shape `ncu --page raw --csv
/// --print-units base` writes.
const RAW_CSV: &str = r#""ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes.sum","lts__t_bytes.sum","l1tex__t_bytes.sum","gpu__time_duration.sum","sm__sass_thread_inst_executed_op_ffma_pred_on.sum","sm__sass_thread_inst_executed_op_fadd_pred_on.sum","sm__sass_thread_inst_executed_op_fmul_pred_on.sum"
"","","","","","","","","","","","byte","byte","byte","nsecond","inst","inst","inst"
"0","1","python","h","void gemm<float>(float*)","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","1000000","4000000","16000000","20000","500000000","0","0"
"1","1","python","h","void scale<float>(float*)","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","8000000","8000000","8000000","10000","0","1000000","1000000"
"#;

#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn nsight_compute_csv_open_by_url_and_by_drop_and_save_the_clis_bundle() {
    let extra = tempfile::tempdir().unwrap();
    std::fs::write(extra.path().join("raw-SYNTHETIC.csv"), RAW_CSV).unwrap();
    let machine_only = machine_only_bundle(extra.path());
    let port = serve(dist(), extra.path().to_path_buf());
    let base = format!("http://127.0.0.1:{port}/");
    let downloads = tempfile::tempdir().unwrap();
    let b = Browser::start();
    b.allow_downloads(downloads.path());

    // A raw page by URL: both rooflines get points (counters give FLOPs and bytes per level).
    b.go(&format!(
        "{base}?trace=/extra/raw-SYNTHETIC.csv&chart=hierarchical"
    ));
    wait_for_bundle(&b, "raw-SYNTHETIC.csv");
    let n = b.wait(WAIT_CHART, "the CSV's hierarchical chart");
    assert!(n.as_u64().unwrap() >= 2, "{n}");
    b.js("document.getElementById('tab-time').click()");
    b.wait(WAIT_CHART, "the CSV's time-based chart");
    assert!(notes(&b).contains("no machine characterization"));

    // The 12 one-metric captures of one run, by URL (trace= several times) with the machine
    // whose architecture stands in for their missing CC column.
    let csvs = deepcam_csvs();
    let query: Vec<String> = csvs.iter().map(|c| format!("trace={c}")).collect();
    b.go(&format!("{base}?{}&machine={V100}", query.join("&")));
    let name = "out.dram__bytes.sum.csv and 11 more";
    wait_for_bundle(&b, name);
    let by_url = wait_for_markers_and_ceilings(&b, "the captures' hierarchical chart");
    b.screenshot("import-csv-url");
    b.wait(
        "return (location.search.match(/trace=/g) || []).length === 12",
        "the 12 captures in the URL",
    );

    // Dropped together with the machine alone: the same chart; saved, the CLI's bundle.
    b.go(&format!("{base}?bundle=samples/v100-deepcam-example.json"));
    b.wait(WAIT_CHART, "a bundle's chart");
    let mut dropped: Vec<&str> = csvs.iter().map(String::as_str).collect();
    let machine_url = format!("/extra/{machine_only}");
    dropped.push(&machine_url);
    drop_urls(&b, &dropped);
    wait_for_bundle(&b, name);
    assert_eq!(
        wait_for_markers_and_ceilings(&b, "the dropped captures' chart"),
        by_url
    );
    b.screenshot("import-csv-drop");
    b.js("document.getElementById('save-bundle').click()");
    let saved = String::from_utf8(take_download(
        downloads.path(),
        "out.dram__bytes.sum.roofline.json",
    ))
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let args = captures_with_machine(work.path(), &csvs, &extra.path().join(machine_only));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let cli = cli_import(work.path(), &args);
    assert!(
        without_provenance(&saved) == without_provenance(&cli),
        "the page's bundle ({} bytes) differs from the CLI's ({} bytes)",
        saved.len(),
        cli.len()
    );
}

/// A bad-corpus case's `roofline import` arguments (one a line) as the page's URL parameters,
/// each after `&`: `--machine` names the V100 example (served as `V100`), other flags keep their
/// names with `_` for `-`, a flag without a value is `=1`.
fn url_flags(args: &str) -> String {
    let mut out = String::new();
    let mut lines = args.lines().skip(1).peekable();
    while let Some(l) = lines.next() {
        let Some(flag) = l.strip_prefix("--") else {
            continue;
        };
        if flag == "machine" {
            lines.next();
            out.push_str(&format!("&machine={V100}"));
            continue;
        }
        let value = match lines.peek() {
            Some(v) if !v.starts_with('-') && *v != "{}" => lines.next().unwrap().to_string(),
            _ => "1".to_string(),
        };
        out.push_str(&format!("&{}={value}", flag.replace('-', "_")));
    }
    out
}

/// `roofline import`'s options in the page: by URL (`convention=2020`), the 12 DeepCAM captures
/// give the CLI's `--convention 2020` bundle (launches grouped by name, as the study counted);
/// "Import options" makes the import shown again with the option changed (or the import refused
/// for its options, once they change), and the URL follows;
/// `allow_machine_mismatch=1` places a trace against another GPU's ceilings, with the CLI's
/// note, where without it the page refuses as the CLI does.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn import_options_by_url_and_by_hand_give_the_clis_bundles() {
    let extra = tempfile::tempdir().unwrap();
    let machine_only = machine_only_bundle(extra.path());
    let port = serve(dist(), extra.path().to_path_buf());
    let base = format!("http://127.0.0.1:{port}/");
    let downloads = tempfile::tempdir().unwrap();
    let b = Browser::start();
    b.allow_downloads(downloads.path());
    let csvs = deepcam_csvs();
    let query: Vec<String> = csvs.iter().map(|c| format!("trace={c}")).collect();
    let name = "out.dram__bytes.sum.csv and 11 more";
    let machine_url = format!("/extra/{machine_only}");

    // Per launch (the default) first: how many markers the current convention gives.
    b.go(&format!("{base}?{}&machine={machine_url}", query.join("&")));
    wait_for_bundle(&b, name);
    wait_for_markers_and_ceilings(&b, "the captures per launch");

    // `convention=2020` by URL: the CLI's bundle with `--convention 2020`.
    b.go(&format!(
        "{base}?{}&machine={machine_url}&convention=2020",
        query.join("&")
    ));
    wait_for_bundle(&b, name);
    wait_for_markers_and_ceilings(&b, "the captures as the study counted");
    assert_eq!(
        b.js("return document.getElementById('import-convention').value"),
        json!("2020")
    );
    b.js("document.getElementById('save-bundle').click()");
    let saved = String::from_utf8(take_download(
        downloads.path(),
        "out.dram__bytes.sum.roofline.json",
    ))
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut args = captures_with_machine(work.path(), &csvs, &extra.path().join(machine_only));
    args.extend(["--convention".into(), "2020".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let cli = cli_import(work.path(), &args);
    assert!(
        without_provenance(&saved) == without_provenance(&cli),
        "the page's bundle ({} bytes) differs from the CLI's ({} bytes)",
        saved.len(),
        cli.len()
    );
    let provenance: Value = serde_json::from_str(&saved).unwrap();
    let command = provenance["provenance"]["command_line"].to_string();
    assert!(command.contains(r#""--convention","2020""#), "{command}");
    let kernels = |text: &str| {
        serde_json::from_str::<Value>(text).unwrap()["kernels"]
            .as_array()
            .unwrap()
            .len()
    };
    assert!(
        kernels(&saved) < 100,
        "grouped by name: {}",
        kernels(&saved)
    );

    // By hand: back to the current convention, made again against the same machine; the URL
    // follows.
    b.js("document.getElementById('import-options').open = true");
    b.js(CONVENTION_DEFAULT);
    b.wait(
        &format!(
            "return !location.search.includes('convention=') && document.getElementById('bundle-select').selectedOptions[0].textContent === {}",
            json!(name)
        ),
        "the import made again per launch",
    );
    // Against the same machine: its ceilings drawn, no "no machine" note, and saved, the
    // CLI's bundle without --convention (one entry per launch).
    wait_for_markers_and_ceilings(&b, "the ceilings kept");
    assert!(
        !notes(&b).contains("no machine characterization"),
        "{}",
        notes(&b)
    );
    b.screenshot("import-options");
    b.js("document.getElementById('save-bundle').click()");
    let again = String::from_utf8(take_download(
        downloads.path(),
        "out.dram__bytes.sum.roofline.json",
    ))
    .unwrap();
    let cli = cli_import(work.path(), &args[..args.len() - 2]);
    assert!(
        without_provenance(&again) == without_provenance(&cli),
        "the page's bundle made again ({} bytes) differs from the CLI's ({} bytes)",
        again.len(),
        cli.len()
    );
    assert!(kernels(&again) > kernels(&saved));

    // An import refused for its options is made again when they change: `--convention` with a
    // trace that has no counters, then without it.
    let no_counters = "/fixtures/bad/trace-with-convention.json";
    b.go(&format!("{base}?trace={no_counters}&convention=2020"));
    expect_refusal(&b, "--convention applies to counters");
    b.js(CONVENTION_DEFAULT);
    wait_for_bundle(&b, "trace-with-convention.json");
    // `convention=current` given is shown as given (the CLI refuses it for such a trace too),
    // and choosing the default clears it.
    b.go(&format!("{base}?trace={no_counters}&convention=current"));
    b.wait(ERROR, "--convention current refused");
    assert_eq!(
        b.js("return document.getElementById('import-convention').value"),
        json!("current")
    );
    b.js(CONVENTION_DEFAULT);
    wait_for_bundle(&b, "trace-with-convention.json");
    b.wait(
        "const e = document.querySelector('.error'); return !(e && e.textContent.includes('--convention')) && location.search.includes('trace=') && !location.search.includes('convention=')",
        "the import made again, its message gone",
    );

    // A trace of another GPU against the V100's ceilings: refused, then placed by hand.
    let mismatch = "/fixtures/bad/trace-machine-mismatch.json";
    b.go(&format!("{base}?trace={mismatch}&machine={V100}"));
    expect_refusal(&b, "but the kernels ran on SYNTHETIC GPU");
    b.go(&format!(
        "{base}?trace={mismatch}&machine={V100}&allow_machine_mismatch=1"
    ));
    wait_for_bundle(&b, "trace-machine-mismatch.json");
    b.wait(
        "return [...document.querySelectorAll('.notes li')].some(l => l.textContent.includes('--allow-machine-mismatch'))",
        "the mismatch note",
    );
    assert_eq!(
        b.js("return document.getElementById('import-allow-mismatch').checked"),
        json!(true)
    );
}

#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn every_bad_trace_and_csv_of_the_corpus_gets_the_clis_message() {
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    let corpus = repo().join("tests/fixtures/bad");
    let mut cases: Vec<(String, String, String)> = Vec::new();
    for e in std::fs::read_dir(&corpus).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let Ok(expected) = std::fs::read_to_string(corpus.join(format!("{name}.expected"))) else {
            continue;
        };
        let is_input = name.starts_with("trace-") || name.ends_with(".csv");
        let args = std::fs::read_to_string(corpus.join(format!("{name}.args"))).ok();
        // `roofline import`'s flags are the page's URL parameters (`--machine` its `machine=`,
        // the V100 example; `--arch 9.0` `arch=9.0`, `--allow-partial` `allow_partial=1`);
        // `info --baseline` is not an import: that case is the CLI's alone.
        let machine = match args.as_deref() {
            None => String::new(),
            Some(a) if a.starts_with("import") => url_flags(a),
            Some(_) => continue,
        };
        if is_input {
            // The page names a machine bundle by its file name, the CLI by the path given.
            let expected = expected.trim_end().replace("../bundles/", "");
            cases.push((name, machine, expected));
        }
    }
    cases.sort();
    assert!(cases.len() >= 35, "the corpus shrank: {cases:?}");
    for flag in ["&arch=9.0", "&convention=2020", "&allow_partial=1"] {
        assert!(
            cases.iter().any(|c| c.1.contains(flag)),
            "no case with {flag}"
        );
    }
    let mut failures = Vec::new();
    for (name, machine, expected) in &cases {
        b.go(&format!(
            "http://127.0.0.1:{port}/?trace=/fixtures/bad/{name}{machine}"
        ));
        let text = b.wait(ERROR, name);
        let text = text.as_str().unwrap_or_default();
        if !text.contains(expected.as_str()) {
            failures.push(format!("{name}: expected {expected:?} in {text:?}"));
        }
        // Never a blank page: the header and the picker are there.
        assert_eq!(
            b.js("return !!document.getElementById('open-select')"),
            json!(true)
        );
    }
    b.screenshot("import-bad-corpus");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An option changed while the page's `?trace=` import runs makes it again, and the first one's
/// answer is dropped: its refusal (`--convention` with a trace that has no counters, found once
/// the whole trace is read) never shows, the import with the option cleared does.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn an_option_changed_during_an_import_makes_it_again_and_drops_the_first() {
    let extra = tempfile::tempdir().unwrap();
    // A SYNTHETIC trace large enough to change an option while it is read.
    roofline_tests::synthetic_trace::write_trace(
        std::io::BufWriter::new(
            std::fs::File::create(extra.path().join("slow-SYNTHETIC.json")).unwrap(),
        ),
        80 << 20,
    )
    .unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    b.go(&format!(
        "http://127.0.0.1:{port}/?trace=/extra/slow-SYNTHETIC.json&convention=2020"
    ));
    b.wait(
        "const p = document.getElementById('importing'); return p && p.querySelector('progress').value > 0",
        "the first import under way",
    );
    b.js("window.sawRefusal = false; new MutationObserver(() => { const e = document.querySelector('.error'); if (e && e.textContent.includes('--convention')) window.sawRefusal = true; }).observe(document.body, {subtree: true, childList: true, characterData: true});");
    b.js(CONVENTION_DEFAULT);
    wait_for_bundle(&b, "slow-SYNTHETIC.json");
    b.wait(
        "return document.getElementById('importing') === null",
        "both imports done",
    );
    assert_eq!(b.js("return window.sawRefusal"), json!(false));
    assert_eq!(
        b.js("return document.querySelectorAll('#bundle-select option').length"),
        json!(1)
    );
}

#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn an_import_can_be_cancelled_and_a_picked_trace_opens_from_disk() {
    let extra = tempfile::tempdir().unwrap();
    // A SYNTHETIC trace large enough to cancel while it is read.
    let big = extra.path().join("big-SYNTHETIC.json");
    roofline_tests::synthetic_trace::write_trace(
        std::io::BufWriter::new(std::fs::File::create(&big).unwrap()),
        150 << 20,
    )
    .unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    b.go(&format!(
        "http://127.0.0.1:{port}/?bundle=samples/v100-deepcam-example.json"
    ));
    b.wait(WAIT_CHART, "a bundle's chart");
    b.choose_file("#file-input", &big);
    let line = b.wait(
        "const p = document.getElementById('importing'); return p && p.querySelector('progress').value > 0 && p.textContent",
        "the progress bar",
    );
    let line = line.as_str().unwrap();
    assert!(
        line.contains("MB") && line.contains("nothing is uploaded"),
        "{line}"
    );
    b.screenshot("import-progress");
    b.js("document.getElementById('cancel-import').click()");
    b.wait(
        "return document.getElementById('importing') === null",
        "the progress bar gone",
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(b.js(ERROR), json!(null));
    assert_eq!(
        b.js(
            "return [...document.getElementById('bundle-select').options].map(o => o.textContent)"
        ),
        json!(["sample: v100-deepcam-example.json"])
    );

    // dist/index.html from disk goes to offline.html (the viewer in one page), where a trace
    // chosen with the file picker is imported as on a server.
    b.go(&format!(
        "file://{}",
        dist().join("index.html").canonicalize().unwrap().display()
    ));
    b.wait(
        "return location.pathname.endsWith('/offline.html') && !!document.getElementById('file-input')",
        "offline.html",
    );
    b.choose_file(
        "#file-input",
        &roofline_tests::fixtures()
            .join("traces/sampled-rank-0-shapes.json.gz")
            .canonicalize()
            .unwrap(),
    );
    wait_for_bundle(&b, "sampled-rank-0-shapes.json.gz");
    b.wait(WAIT_CHART, "the trace's chart from file://");
    assert!(notes(&b).contains("no machine characterization"));
    b.screenshot("import-file-protocol");
    // And a bundle (the picker emptied first: WebDriver adds to a multiple input's files).
    b.js("document.getElementById('file-input').value = ''");
    b.choose_file(
        "#file-input",
        &roofline_tests::fixtures()
            .join("bundles/v100-deepcam-example.json")
            .canonicalize()
            .unwrap(),
    );
    wait_for_bundle(&b, "v100-deepcam-example.json");
    b.wait(WAIT_CHART, "a bundle's chart from file://");
}

/// A trace that names its GPU (an A100, as Meta's traces record it) is drawn against that GPU's
/// datasheet ceilings, labelled; "Ceilings from" lists the GPU catalogue (from the importer),
/// gives a trace that names no GPU the one chosen, and "no ceilings" takes them away, each as
/// `roofline import --ceilings datasheet:ID` and `--no-datasheet` do.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn datasheet_ceilings_from_the_trace_or_chosen_in_ceilings_from() {
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let base = format!("http://127.0.0.1:{port}/");
    let b = Browser::start();

    b.go(&format!(
        "{base}?trace=/fixtures/traces/inductor-triton-example.json.gz&chart=hierarchical"
    ));
    wait_for_bundle(&b, "inductor-triton-example.json.gz");
    b.wait(
        "return [...document.querySelectorAll('#chart .ceiling-label')].some(l => l.textContent === 'HBM 1.56 TB/s (datasheet)')",
        "the A100's datasheet HBM ceiling",
    );
    let n = notes(&b);
    assert!(
        n.contains("ceilings: NVIDIA A100 SXM4 40GB, datasheet, not measured"),
        "{n}"
    );
    // The catalogue's entries, filled in by the importer.
    let listed = b.wait(
        "const g = document.getElementById('catalogue'); return g && g.children.length > 30 && g.children.length",
        "the GPU catalogue in Ceilings from",
    );
    assert!(listed.as_u64().unwrap() > 30);
    b.screenshot("datasheet-ceilings");

    // A trace that names no GPU: no ceilings, then the one chosen.
    b.go(&format!("{base}?trace={TRACE}"));
    wait_for_bundle(&b, "sampled-rank-0-shapes.json.gz");
    b.wait(WAIT_CHART, "the trace's chart");
    assert!(notes(&b).contains("the input names no GPU"));
    b.wait(
        "return document.querySelector('#catalogue option[value=\"datasheet:nvidia-h100-sxm5\"]') !== null",
        "the H100 in the catalogue",
    );
    b.js("const s = document.getElementById('machine-select'); s.value = 'datasheet:nvidia-h100-sxm5'; s.dispatchEvent(new Event('change'));");
    b.wait(
        "return [...document.querySelectorAll('.notes li')].some(l => l.textContent.includes('named by hand: --ceilings datasheet:nvidia-h100-sxm5'))",
        "the H100's ceilings",
    );
    b.wait(
        "return location.search.includes('ceilings=datasheet%3Anvidia-h100-sxm5') || location.search.includes('ceilings=datasheet:nvidia-h100-sxm5')",
        "ceilings= in the URL",
    );
    b.js("const s = document.getElementById('machine-select'); s.value = 'none'; s.dispatchEvent(new Event('change'));");
    b.wait(
        "return [...document.querySelectorAll('.notes li')].some(l => l.textContent.includes('no machine characterization')) && ![...document.querySelectorAll('.notes li')].some(l => l.textContent.includes('named by hand'))",
        "no ceilings",
    );
}

/// The Communication view of a distributed run's trace (HTA's DDP trace on an A100, imported in
/// the page): each collective at (S, busbw) under the A100's NVLink and PCIe roofs, coloured by
/// collective, and the line of exposed communication per step above the chart.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn the_communication_view_places_collectives_under_their_links() {
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    b.go(&format!(
        "http://127.0.0.1:{port}/?trace=/fixtures/traces/a100-ddp-nccl-msgsize.json.gz&chart=comm"
    ));
    wait_for_bundle(&b, "a100-ddp-nccl-msgsize.json.gz");
    let n = b
        .wait(
            "const n = document.querySelectorAll('#comm-view svg circle.marker').length; return document.querySelectorAll('#comm-view svg .ceiling-label').length > 0 && n",
            "the collectives under their links",
        )
        .as_u64()
        .unwrap();
    assert!(n > 0);
    assert_eq!(
        b.js(
            "return document.querySelector('#comm-view polyline[data-role=\"Link(Nvlink)\"]') !== null"
        ),
        json!(true)
    );
    assert_eq!(
        b.js("return document.querySelectorAll('#comm-view circle.marker[data-kind=\"all_reduce\"]').length > 0"),
        json!(true)
    );
    let figures = b
        .js("return [...document.querySelectorAll('.comm-figures')].map(p => p.textContent).join('\\n')")
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(figures.starts_with("Exposed communication"), "{figures}");
    b.screenshot("comm-view");
}

/// A model's `config.json` dropped with an LLM trace is read as `--model-config`: the MoE
/// layers get their F, and the import's coverage note is the CLI's for the same files.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn a_model_configuration_dropped_with_its_trace() {
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    b.go(&format!("http://127.0.0.1:{port}/"));
    // The first sample shown before anything is dropped (its load would replace a message).
    b.wait(WAIT_CHART, "the first sample's chart");
    let trace = "/fixtures/traces/b200-vllm-gpt-oss-tp8-eager.json.gz";
    let config = "/fixtures/traces/gpt-oss-120b-config.json";
    drop_urls(&b, &[trace, config]);
    wait_for_bundle(&b, "b200-vllm-gpt-oss-tp8-eager.json.gz");
    let work = tempfile::tempdir().unwrap();
    for f in [
        "b200-vllm-gpt-oss-tp8-eager.json.gz",
        "gpt-oss-120b-config.json",
    ] {
        std::fs::copy(
            repo().join("tests/fixtures/traces").join(f),
            work.path().join(f),
        )
        .unwrap();
    }
    let cli: Value = serde_json::from_str(&cli_import(
        work.path(),
        &[
            "b200-vllm-gpt-oss-tp8-eager.json.gz",
            "--model-config",
            "gpt-oss-120b-config.json",
        ],
    ))
    .unwrap();
    let coverage = cli["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|n| n.contains("F and B for 94.3 % of the kernel time outside the collectives"))
        .expect("the CLI's coverage note")
        .to_string();
    b.wait(
        &format!(
            "return [...document.querySelectorAll('.notes li')].some(l => l.textContent === {})",
            json!(coverage)
        ),
        "the coverage note of the CLI",
    );
    // The configuration alone is no import: it says what to open with it.
    b.go(&format!("http://127.0.0.1:{port}/"));
    b.wait(WAIT_CHART, "the first sample's chart");
    drop_urls(&b, &[config]);
    expect_refusal(
        &b,
        "is a model configuration (--model-config): open it together with",
    );
}

/// The kernel table's rows as text.
const TABLE: &str = "return [...document.querySelectorAll('#kernel-table tbody tr')].map(r => r.textContent).join('\\n')";

/// Whether this page fetched a URL ending in `end`.
fn fetched(b: &Browser, end: &str) -> bool {
    b.js(&format!(
        "return performance.getEntriesByType('resource').some(e => e.name.endsWith({}))",
        json!(end)
    )) == json!(true)
}

#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn a_large_bundle_opens_from_its_columns_file_as_from_its_json() {
    use std::io::Read;
    let extra = tempfile::tempdir().unwrap();
    // A real training step's trace repeated nine times (10,386 launches, over the CLI's 10,000):
    // the CLI writes `run.json` and the columns file it names.
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(repo().join("tests/fixtures/traces/sampled-rank-0-shapes.json.gz"))
            .unwrap(),
    )
    .read_to_end(&mut text)
    .unwrap();
    let steps = extra.path().join("steps.json");
    roofline_tests::repeat_trace::Repeater::read(&text[..])
        .unwrap()
        .write(9, std::fs::File::create(&steps).unwrap())
        .unwrap();
    let out = extra.path().join("run.json");
    import_trace(steps, &out);
    let bundle = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(bundle.kernels.len(), 9 * 1154);
    let named = bundle
        .columns
        .clone()
        .expect("the bundle names its columns file");
    assert_eq!(named.file, "run.columns");
    // The same bundle naming no columns file: what its JSON alone shows.
    let mut plain = bundle.clone();
    plain.columns = None;
    std::fs::write(
        extra.path().join("plain.json"),
        roofline_model::to_json(&plain).unwrap(),
    )
    .unwrap();
    // One that names the columns file with another id (written apart).
    let mut stale = bundle;
    stale.columns.as_mut().unwrap().id = "0000".into();
    std::fs::write(
        extra.path().join("stale.json"),
        roofline_model::to_json(&stale).unwrap(),
    )
    .unwrap();

    let port = serve(dist(), extra.path().to_path_buf());
    let base = format!("http://127.0.0.1:{port}/");
    let b = Browser::start();
    let table = |b: &Browser, query: &str, name: &str| {
        b.go(&format!("{base}?{query}"));
        wait_for_bundle(b, name);
        b.wait(WAIT_CHART, name);
        b.js(TABLE).as_str().unwrap().to_string()
    };
    for group in ["kernel", "op"] {
        let from_json = table(
            &b,
            &format!("bundle=/extra/plain.json&group={group}&chart=time"),
            "/extra/plain.json",
        );
        assert!(!from_json.is_empty());
        assert!(!fetched(&b, "/extra/run.columns"));
        // By URL: the columns file beside it is fetched, and the table is the JSON's.
        let by_url = table(
            &b,
            &format!("bundle=/extra/run.json&group={group}&chart=time"),
            "/extra/run.json",
        );
        assert!(fetched(&b, "/extra/run.columns"), "{group}");
        assert_eq!(by_url, from_json, "{group}");
    }
    // Picked together: the columns file is read in the bundle's place.
    b.go(&format!("{base}?bundle=/extra/plain.json&chart=time"));
    wait_for_bundle(&b, "/extra/plain.json");
    let from_json = b.js(TABLE);
    drop_urls(&b, &["/extra/run.json", "/extra/run.columns"]);
    wait_for_bundle(&b, "run.columns");
    b.wait(WAIT_CHART, "the columns file's chart");
    assert_eq!(b.js(TABLE), from_json);
    assert_eq!(
        b.js("return document.querySelectorAll('#bundle-select option').length"),
        json!(2)
    );
    // Written apart: the page says so, and reads the bundle's JSON.
    drop_urls(&b, &["/extra/stale.json", "/extra/run.columns"]);
    expect_refusal(
        &b,
        "run.columns was not written with stale.json (its id differs)",
    );
    wait_for_bundle(&b, "stale.json");
}
