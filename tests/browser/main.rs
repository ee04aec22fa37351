//! The viewer in a real browser: Debian's Chromium driven by chromedriver over the W3C WebDriver
//! protocol (a small std-only client below), against the built site in `dist/` served on
//! 127.0.0.1 by the test itself.
//!
//! These tests are `#[ignore]`d in a plain `cargo test`, because they need `dist/` and Chromium;
//! `cargo xtask test` installs Chromium and chromedriver when missing, builds the site and runs
//! them with `--ignored`. Screenshots are kept in `browser-screenshots/` under the target directory
//! (`$CARGO_TARGET_DIR`, else `target/`) for a person to look at.

mod embed_kit;
mod import;

use std::path::PathBuf;

use roofline_collector::cli::ChartKind;
use roofline_collector::commands::plot;
use roofline_model::analysis::ceilings::Ceilings;
use roofline_model::analysis::compare::{Presence, Summary, compare};
use roofline_model::bundle::{Bundle, MemoryLevel};
use roofline_model::chart::overlay::compare_scene;
use roofline_model::chart::{self, ChartOptions, MarkerKind};
use roofline_tests::repo;
use roofline_tests::webdriver::{Browser, serve};
use serde_json::json;

fn v100() -> Bundle {
    roofline_model::parse_bundle(&roofline_tests::fixture_text(
        "bundles/v100-deepcam-example.json",
    ))
    .unwrap()
}

fn dist() -> PathBuf {
    let d = repo().join("dist");
    assert!(
        d.join("roofline_viewer_bg.wasm").is_file(),
        "build the site first: cargo xtask web"
    );
    d
}

/// The query that opens the hand-built V100 example (the page opens the first real sample
/// otherwise).
const EXAMPLE: &str = "bundle=samples/v100-deepcam-example.json";

const WAIT_CHART: &str = "return document.querySelectorAll('#chart circle.marker').length";

/// How far a drawn position may lie from the model's, pixels: the renderer
/// (`roofline_model::chart::svg`) writes positions to a tenth of a pixel.
const PX: f64 = 0.051;

/// The viewer's chart options on this page: sized to the width the page gives the chart (the
/// model draws the chart at its pixel size, `ChartOptions::browser_sized`), read from the drawn
/// chart's view box.
fn page_options(b: &Browser) -> ChartOptions {
    let w = b.js("return document.getElementById('chart').viewBox.baseVal.width");
    ChartOptions::browser_sized(w.as_f64().unwrap())
}

/// The kernel table's figure cells (every cell but the names, which are cut with an ellipsis):
/// how many there are, how many are laid out (rows off screen are skipped until asked), and
/// the text of those wider than their column. Figure cells do not clip (a clip per cell cost
/// the page a compositing step per cell on every redraw), so their columns must hold them.
const OVERFLOWING_CELLS: &str = "const cells = [...document.querySelectorAll('#kernel-table td:not(.name), #kernel-table th:not(.name)')]; \
    return { cells: cells.length, laid_out: cells.filter(c => c.clientWidth > 0).length, \
    over: cells.filter(c => c.scrollWidth > c.clientWidth).map(c => c.textContent) }";

/// Checks that every figure cell of the kernel table fits its column ([`OVERFLOWING_CELLS`]).
fn assert_cells_fit(b: &Browser, what: &str) {
    let r = b.js(OVERFLOWING_CELLS);
    assert!(r["cells"].as_u64().unwrap() >= 12, "{what}: {r}");
    assert_eq!(r["laid_out"], r["cells"], "{what}: every cell measured");
    assert_eq!(
        r["over"],
        json!([]),
        "{what}: cells wider than their columns"
    );
}

#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn the_viewer_draws_what_the_model_computes() {
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    b.go(&format!("http://127.0.0.1:{port}/?{EXAMPLE}"));
    let n = b.wait(WAIT_CHART, "the chart");
    b.screenshot("hierarchical");

    // The same scene, computed natively with the viewer's options.
    let bundle = v100();
    let options = ChartOptions {
        ceilings: bundle.machines.first().map(Ceilings::from_machine),
        ..page_options(&b)
    };
    // The chart uses the width the page has (1280 px less the page's padding and scroll bar),
    // at its pixel size: not a fixed 900 px scaled.
    assert!(options.width > 1100.0, "{}", options.width);
    let drawn_width = b.js("return document.getElementById('chart').getBoundingClientRect().width");
    assert!(
        (drawn_width.as_f64().unwrap() - options.width).abs() < 1.0,
        "{drawn_width} drawn for {}",
        options.width
    );
    let scene = chart::hierarchical(&bundle, &options).unwrap();
    assert_eq!(n.as_u64().unwrap() as usize, scene.markers.len());
    let drawn = b.js(
        "return [...document.querySelectorAll('#chart circle.marker')].map(c => [c.dataset.kernel, c.dataset.kind, +c.dataset.x, +c.dataset.y, +c.getAttribute('cx'), +c.getAttribute('cy')])",
    );
    for m in &scene.markers {
        let name = &scene.kernels[m.kernel].full_name;
        let kind = match m.kind {
            MarkerKind::Level(l) => l.key(),
            _ => "other",
        };
        let found = drawn.as_array().unwrap().iter().any(|d| {
            d[0] == json!(name)
                && d[1] == json!(kind)
                && (d[2].as_f64().unwrap() / m.data.0 - 1.0).abs() < 1e-9
                && (d[3].as_f64().unwrap() / m.data.1 - 1.0).abs() < 1e-9
                && (d[4].as_f64().unwrap() - m.at.0).abs() < PX
                && (d[5].as_f64().unwrap() - m.at.1).abs() < PX
        });
        assert!(
            found,
            "marker of {name} at {kind} {:?} not drawn where the model puts it",
            m.data
        );
    }
    let labels = b.js(
        "return [...document.querySelectorAll('#chart .ceiling-label')].map(t => t.textContent)",
    );
    for l in &scene.labels {
        assert!(
            labels.as_array().unwrap().contains(&json!(l.text)),
            "ceiling label {:?} missing",
            l.text
        );
    }

    // Hover over the largest marker shows its kernel's figures.
    let tip = b.js(
        "const c = [...document.querySelectorAll('#chart circle.marker')].sort((a, b) => b.r.baseVal.value - a.r.baseVal.value)[0];
         const r = c.getBoundingClientRect();
         document.getElementById('chart').dispatchEvent(new MouseEvent('mousemove', {clientX: r.x + r.width / 2, clientY: r.y + r.height / 2, bubbles: true}));
         return c.dataset.kernel;",
    );
    let text = b.wait(
        "const t = document.querySelector('.tooltip'); return t && t.textContent",
        "the tooltip",
    );
    assert!(
        text.as_str().unwrap().contains(tip.as_str().unwrap()),
        "{text}"
    );
    assert!(text.as_str().unwrap().contains("headroom"), "{text}");
    // The tooltip names the binding ceiling, and the kernel's path to it is drawn.
    let hovered = scene
        .kernels
        .iter()
        .find(|k| k.full_name == tip.as_str().unwrap())
        .unwrap();
    let ceiling = hovered
        .analysis
        .hierarchical
        .as_ref()
        .unwrap()
        .ceiling_label();
    assert!(
        text.as_str()
            .unwrap()
            .contains(&format!("bound by {ceiling}")),
        "{text}"
    );
    let path = b.wait(
        "const t = document.querySelector('#chart .bound-path text'); return t && t.textContent",
        "the path to the binding ceiling",
    );
    let p = hovered.bound_path.as_ref().unwrap();
    assert_eq!(path, json!(p.text));
    let ends = b.js("const l = document.querySelector('#chart .bound-path line'); return [+l.getAttribute('x2'), +l.getAttribute('y2')]");
    assert!(
        (ends[0].as_f64().unwrap() - p.to.0).abs() < 0.01
            && (ends[1].as_f64().unwrap() - p.to.1).abs() < 0.01
    );
    b.screenshot("hover");

    // Toggling L1 off removes every L1 marker and the L1 ceiling.
    b.js("document.getElementById('level-l1').click()");
    b.wait(
        "return document.querySelectorAll('#chart circle.marker[data-kind=l1]').length === 0",
        "L1 hidden",
    );
    let l1 = b.js("return [...document.querySelectorAll('#chart .ceiling-label')].some(t => t.textContent.startsWith('L1 '))");
    assert_eq!(l1, json!(false));
    assert!(
        b.js("return document.querySelectorAll('#chart circle.marker[data-kind=hbm]').length")
            .as_u64()
            .unwrap()
            > 0
    );
    b.js("document.getElementById('level-l1').click()");

    // Selecting a table row rings that kernel's markers (the chart is not redrawn).
    b.js("document.querySelector('#kernel-table tbody tr').click()");
    b.wait(
        "return document.querySelectorAll('#chart circle.selected').length",
        "the selection",
    );
    b.screenshot("selected");
}

#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn what_if_swap_url_state_and_bad_input() {
    let extra = tempfile::tempdir().unwrap();
    // A copy of the V100 example whose HBM is a hundred times slower: the big GEMM becomes
    // HBM-bound when its ceilings are swapped in.
    let mut slow = v100();
    for bw in &mut slow.machines[0].bandwidth {
        if bw.level == MemoryLevel::Hbm {
            bw.value /= 100.0;
        }
    }
    slow.kernels.clear();
    let slow_path = extra.path().join("slow-hbm.json");
    std::fs::write(&slow_path, roofline_model::to_json(&slow).unwrap()).unwrap();
    std::fs::write(
        extra.path().join("bad.json"),
        "{\"schema_version\": 1, \"complete\": tru",
    )
    .unwrap();
    std::fs::write(extra.path().join("v9.json"), "{\"schema_version\": 9}").unwrap();
    let mut evil = v100();
    evil.kernels[0].name = "<img src=x onerror=alert(1)>".into();
    evil.kernels[0].display_name = None;
    std::fs::write(
        extra.path().join("evil.json"),
        roofline_model::to_json(&evil).unwrap(),
    )
    .unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();

    let base = format!("http://127.0.0.1:{port}/");
    b.go(&format!("{base}?{EXAMPLE}"));
    b.wait(WAIT_CHART, "the chart");
    // The Top and Names fields clamp what is typed to their ranges (1–500, 0–40).
    for (id, typed, kept) in [
        ("top", "0", "1"),
        ("top", "900", "500"),
        ("labels", "99", "40"),
    ] {
        b.js(&format!(
            "const e = document.getElementById('{id}'); e.value = '{typed}'; e.dispatchEvent(new Event('change')); return true"
        ));
        b.wait(
            &format!("return document.getElementById('{id}').value === '{kept}' || null"),
            &format!("{id} = {typed} clamped to {kept}"),
        );
    }
    b.go(&format!("{base}?{EXAMPLE}"));
    b.wait(WAIT_CHART, "the chart");
    let bound = "return [...document.querySelectorAll('#kernel-table tbody tr')].find(r => r.title.startsWith('Volta_hmma_implicit_gemm_fprop_fp32_nhwc_128x128')).children[8].textContent";
    // The table names the binding ceiling: the Tensor Core roof.
    assert_eq!(b.js(bound), json!("Tensor FP16"));
    b.choose_file("#file-input", &slow_path);
    b.wait(
        "return document.querySelectorAll('#machine-select option').length === 3",
        "the second bundle",
    );
    // Back to the V100 example, with the slow machine's ceilings.
    b.js("const s = document.getElementById('bundle-select'); s.value = '0'; s.dispatchEvent(new Event('change'));");
    b.js("const s = document.getElementById('machine-select'); s.value = '1'; s.dispatchEvent(new Event('change'));");
    b.wait(
        &format!("{} === 'HBM'", bound.trim_end_matches(';')),
        "the swapped bound",
    );
    b.screenshot("what-if");

    // The URL carries the state: time chart, a filter, a selection.
    b.go(&format!(
        "{base}?{EXAMPLE}&chart=time&filter=volta&kernel=volta_fp16_sgemm_fp16_128x32_nt"
    ));
    b.wait(WAIT_CHART, "the time chart");
    assert_eq!(
        b.js("return document.getElementById('tab-time').classList.contains('active')"),
        json!(true)
    );
    assert_eq!(
        b.js("return document.getElementById('kernel-search').value"),
        json!("volta")
    );
    assert_eq!(
        b.js("return document.querySelector('#kernel-table tr.selected').title"),
        json!("volta_fp16_sgemm_fp16_128x32_nt")
    );
    // The URL follows the view once it keeps still (a moment after the change).
    b.wait(
        "return location.href.includes('chart=time') && location.href.includes('filter=volta')",
        "the URL of the time-based view",
    );
    let href = b.js("return location.href");
    b.screenshot("time");
    // A copied link reproduces the view.
    b.go(href.as_str().unwrap());
    b.wait(WAIT_CHART, "the chart again");
    assert_eq!(
        b.js("return document.getElementById('tab-time').classList.contains('active')"),
        json!(true)
    );

    // Bad bundles explain themselves instead of leaving a blank page.
    for (file, expected) in [
        (
            "bad.json",
            "is not a readable bundle: malformed JSON at line 1",
        ),
        ("v9.json", "this bundle is schema v9; this build reads v1"),
        ("missing.json", "HTTP 404"),
    ] {
        b.go(&format!("{base}?bundle=/extra/{file}"));
        let text = b.wait(
            "const e = document.querySelector('.error'); return e && e.textContent",
            file,
        );
        assert!(text.as_str().unwrap().contains(expected), "{file}: {text}");
    }
    b.screenshot("error");

    // A kernel name is text, never markup.
    b.go(&format!("{base}?bundle=/extra/evil.json"));
    b.wait(WAIT_CHART, "the evil bundle");
    assert_eq!(
        b.js("return document.querySelectorAll('img').length"),
        json!(0)
    );
    let cell = b.js("return document.querySelector('#kernel-table').textContent.includes('<img src=x onerror=alert(1)>')");
    assert_eq!(cell, json!(true));

    // The embed page: chart only.
    b.go(&format!(
        "http://127.0.0.1:{port}/embed.html?{EXAMPLE}&chart=time"
    ));
    b.wait(WAIT_CHART, "the embedded chart");
    assert_eq!(
        b.js("return document.querySelectorAll('header, #kernel-table').length"),
        json!(0)
    );
    b.screenshot("embed");
}

#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn long_tables_machine_view_and_hand_edits() {
    let extra = tempfile::tempdir().unwrap();
    // 450 kernels (SYNTHETIC, labelled as such): more than the table draws at first.
    let wide = roofline_tests::synthetic::aggregated(450);
    let report = roofline_model::analysis::report::Report::new(&wide);
    let smallest = report.kernels[report.analyses.last().unwrap().index]
        .name
        .clone();
    std::fs::write(
        extra.path().join("wide.json"),
        roofline_model::to_json(&wide).unwrap(),
    )
    .unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    let base = format!("http://127.0.0.1:{port}/");
    let rows = "return document.querySelectorAll('#kernel-table tbody tr').length";

    b.go(&format!("{base}?bundle=/extra/wide.json"));
    b.wait(WAIT_CHART, "the synthetic chart");
    assert_eq!(b.js(rows), json!(100));
    let more = b.js("return document.getElementById('table-more').textContent");
    assert!(
        more.as_str()
            .unwrap()
            .contains("Showing 100 of 450 kernels"),
        "{more}"
    );
    b.js("document.getElementById('show-more').click()");
    b.wait(
        "return document.querySelectorAll('#kernel-table tbody tr').length === 200",
        "100 more rows",
    );
    b.js("document.getElementById('show-all').click()");
    b.wait(
        "return document.querySelectorAll('#kernel-table tbody tr').length === 450 && !document.getElementById('table-more')",
        "every row",
    );
    // Rows far below the screen (not laid out until asked) fit their columns too.
    assert_cells_fit(&b, "450 synthetic rows");
    // A kernel selected through the URL is listed even when it is beyond the rows drawn.
    let url = format!(
        "{base}?bundle=/extra/wide.json&kernel={}",
        url_encode(&smallest)
    );
    b.go(&url);
    b.wait(WAIT_CHART, "the synthetic chart again");
    assert_eq!(b.js(rows), json!(101));
    assert_eq!(
        b.js("return document.querySelector('#kernel-table tr.selected').title"),
        json!(smallest)
    );
    // The filter counts what it matches.
    b.js("const s = document.getElementById('kernel-search'); s.value = 'cutlass'; s.dispatchEvent(new Event('input', {bubbles: true}));");
    let cutlass = wide
        .kernels
        .iter()
        .filter(|k| k.name.to_lowercase().contains("cutlass"))
        .count();
    b.wait(
        &format!(
            "return document.querySelectorAll('#kernel-table tbody tr').length === {}",
            cutlass.min(100)
        ),
        "the filtered rows",
    );

    // The machine view of the V100 example: one row per ceiling in the bundle, no sweep, and a
    // hand edit of the HBM bandwidth that makes the big GEMM HBM-bound.
    let v = v100();
    let m = &v.machines[0];
    b.go(&format!("{base}?{EXAMPLE}&chart=machine"));
    b.wait(
        "return document.querySelectorAll('#ceilings tbody tr').length",
        "the ceilings table",
    );
    assert_eq!(
        b.js("return document.querySelectorAll('#ceilings tbody tr').length"),
        json!(m.bandwidth.len() + m.compute.len() + usize::from(m.launch_overhead.is_some()))
    );
    // One entry per level and datapath in use (bold), as `Ceilings` resolves them, each at the
    // figure the charts draw; the study measured no sustained figures.
    let c = Ceilings::from_machine(m);
    assert_eq!(
        b.js("return document.querySelectorAll('#ceilings tbody tr.in-use').length"),
        json!(
            c.levels().count() + c.datapaths().count() + usize::from(c.launch_overhead_s.is_some())
        )
    );
    assert_eq!(
        b.js("return [...document.querySelectorAll('#ceilings tbody tr')].every(r => r.children[2].textContent === '–')"),
        json!(true)
    );
    assert_eq!(
        b.js("return !!document.getElementById('no-sweep')"),
        json!(true)
    );
    b.screenshot("machine");
    let bound = "[...document.querySelectorAll('#kernel-table tbody tr')].find(r => r.title.startsWith('Volta_hmma_implicit_gemm_fprop_fp32_nhwc_128x128')).children[8].textContent";
    assert_eq!(b.js(&format!("return {bound}")), json!("Tensor FP16"));
    b.js("const e = document.getElementById('edit-hbm'); e.value = '5'; e.dispatchEvent(new Event('change', {bubbles: true}));");
    b.wait(&format!("return {bound} === 'HBM'"), "the edited bound");
    // The edited HBM ceiling is no longer the bundle's: its row is not marked in use.
    let hbm_used = "return [...document.querySelectorAll('#ceilings tbody tr')].find(r => r.children[0].textContent === 'HBM').children[6].textContent";
    assert_eq!(b.js(hbm_used), json!(""));
    b.js("document.getElementById('reset-edits').click()");
    b.wait(
        &format!("return {bound} === 'Tensor FP16'"),
        "the bound again",
    );
    assert_eq!(b.js(hbm_used), json!("burst"));
}

#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn compare_mode_on_real_runs() {
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    // Apex O1 mixed precision against plain FP32, forward pass; then the two FP32 runs, the
    // backward pass against the forward one (few kernels in common: many new and gone).
    check_compare(
        &b,
        port,
        ("deepcam-v100-amp-fw.json", "deepcam-v100-fp32-fw.json"),
        "compare",
    );
    check_compare(
        &b,
        port,
        ("deepcam-v100-fp32-bw.json", "deepcam-v100-fp32-fw.json"),
        "compare-fp32-bw",
    );
}

/// A baseline marked incomplete (`complete: false`, as a run stopped early writes it): the
/// comparison's summary says so in the CLI's words (`analysis::compare::incomplete_words`), and
/// says nothing of the kind for two complete runs.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn an_incomplete_baseline_is_named_in_the_summary() {
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let text = roofline_tests::fixture_text("bundles/deepcam-v100-fp32-fw.json");
    let cut = text.replacen("\"complete\": true", "\"complete\": false", 1);
    assert_ne!(cut, text);
    std::fs::write(extra.path().join("fp32-fw-stopped.json"), &cut).unwrap();
    let (cur, base) = (
        roofline_model::parse_bundle(&roofline_tests::fixture_text(
            "bundles/deepcam-v100-amp-fw.json",
        ))
        .unwrap(),
        roofline_model::parse_bundle(&cut).unwrap(),
    );
    let words = roofline_model::analysis::compare::incomplete_words(&cur, &base);
    assert_eq!(words.len(), 1);
    let b = Browser::start();
    b.go(&format!(
        "http://127.0.0.1:{port}/?bundle=samples/deepcam-v100-amp-fw.json&baseline=/extra/fp32-fw-stopped.json"
    ));
    let shown = b.wait(
        "const l = document.querySelector('#compare-summary li.incomplete'); return l && l.textContent",
        "the incomplete baseline's line",
    );
    assert_eq!(shown, json!(words[0]));
    assert!(words[0].starts_with("the baseline is INCOMPLETE"));
    b.go(&format!(
        "http://127.0.0.1:{port}/?bundle=samples/deepcam-v100-amp-fw.json&baseline=samples/deepcam-v100-fp32-fw.json"
    ));
    b.wait(
        "return document.getElementById('compare-summary')",
        "the summary",
    );
    assert_eq!(
        b.js("return document.querySelectorAll('#compare-summary li.incomplete').length"),
        json!(0)
    );
}

/// Opens sample `current` with sample `baseline` as its baseline and checks the comparison drawn
/// against the model's: arrows where the model puts them, new and gone markers, the summary, the
/// table's speed-ups, its columns, and the baseline in the URL; screenshots are named after `shots`.
fn check_compare(b: &Browser, port: u16, (current, baseline): (&str, &str), shots: &str) {
    let read = |f: &str| {
        roofline_model::parse_bundle(&roofline_tests::fixture_text(&format!("bundles/{f}")))
            .unwrap()
    };
    let (cur, base) = (read(current), read(baseline));
    let (cur, base) = (
        roofline_model::analysis::Analysed::new(&cur, None, None),
        roofline_model::analysis::Analysed::new(&base, None, None),
    );
    let c = compare(&cur, &base);
    b.go(&format!(
        "http://127.0.0.1:{port}/?bundle=samples/{current}&baseline=samples/{baseline}"
    ));
    b.wait(
        "return document.querySelectorAll('#chart line.arrow').length",
        "the arrows",
    );
    b.screenshot(&format!("{shots}-hierarchical"));
    // The wider table scrolls sideways, to its last column.
    let scrolled = b.js(
        "const s = document.querySelector('.table-scroll'); s.scrollLeft = s.scrollWidth; \
         const c = document.querySelector('#kernel-table tbody td.bound-change').getBoundingClientRect(); \
         const r = s.getBoundingClientRect(); return [s.scrollLeft > 0, c.right <= r.right + 1]",
    );
    assert_eq!(scrolled, json!([true, true]));
    b.js("window.scrollTo(0, document.body.scrollHeight)");
    b.screenshot(&format!("{shots}-table-scrolled"));
    b.js("document.querySelector('.table-scroll').scrollLeft = 0; window.scrollTo(0, 0)");
    // The arrows are the model's, where the model puts them.
    for (tab, draw) in [
        ("hierarchical", chart::hierarchical_of as fn(&_, &_) -> _),
        ("time", chart::time_based_of),
    ] {
        b.js(&format!("document.getElementById('tab-{tab}').click()"));
        let (_, overlay) = compare_scene(&cur, &base, draw, &page_options(b)).unwrap();
        // Drawn: the arrows longer than the current marker they point at.
        let expected: Vec<_> = overlay
            .arrows
            .iter()
            .filter(|a| a.tip().is_some())
            .collect();
        assert!(expected.len() >= 3, "{tab}: {} arrows", expected.len());
        b.wait(
            &format!(
                "return document.querySelectorAll('#chart line.arrow').length === {}",
                expected.len()
            ),
            &format!("the {tab} arrows"),
        );
        let drawn = b.js(
            "return [...document.querySelectorAll('#chart line.arrow')].map(l => [l.dataset.kernel, +l.getAttribute('x1'), +l.getAttribute('y1'), +l.dataset.toX, +l.dataset.toY])",
        );
        for a in &expected {
            let found = drawn.as_array().unwrap().iter().any(|d| {
                d[0] == json!(a.kernel)
                    && (d[1].as_f64().unwrap() - a.from.0).abs() < PX
                    && (d[2].as_f64().unwrap() - a.from.1).abs() < PX
                    && (d[3].as_f64().unwrap() - a.to.0).abs() < PX
                    && (d[4].as_f64().unwrap() - a.to.1).abs() < PX
            });
            assert!(
                found,
                "{tab}: arrow of {} not drawn where the model puts it",
                a.kernel
            );
        }
        // Every kernel only in the current run is flagged new; gone ones are drawn hollow.
        let new = b.js("return document.querySelectorAll('#chart circle.marker.new').length");
        assert_eq!(new, json!(overlay.new_markers.len()), "{tab}");
        let gone = b.js("return document.querySelectorAll('#chart circle.gone').length");
        assert_eq!(gone, json!(overlay.gone.len()), "{tab}");
        // A faint marker where each arrow starts, and the arrowheads show: each head ends
        // outside its current marker, and no marker is drawn over it.
        let faint = b.js("return document.querySelectorAll('#chart circle.baseline').length");
        assert_eq!(faint, json!(overlay.arrows.len()), "{tab}");
        let hidden_heads = b.js(
            "const svg = document.getElementById('chart'); const r = svg.getBoundingClientRect(); \
             const k = r.width / svg.viewBox.baseVal.width; \
             return [...svg.querySelectorAll('line.arrow')].filter(l => { \
               const x = r.left + (+l.getAttribute('x2')) * k, y = r.top + (+l.getAttribute('y2')) * k; \
               const top = document.elementFromPoint(x, y); \
               return top && top.classList.contains('marker') && top.dataset.kernel === l.dataset.kernel && top.dataset.kind === l.dataset.kind; }).length",
        );
        assert_eq!(
            hidden_heads,
            json!(0),
            "{tab}: arrowheads under their own markers"
        );
        b.screenshot(&format!("{shots}-{tab}"));
    }
    // The summary line and the table's speed-ups are what shared computes.
    let summary = b.js("return document.getElementById('compare-summary').textContent");
    let summary = summary.as_str().unwrap();
    assert!(
        summary.contains(&c.summary.headline()),
        "{summary} vs {}",
        c.summary.headline()
    );
    // Each split lists every part, and the parts add up to the totals.
    for groups in [&c.summary.by_bound, &c.summary.by_datapath] {
        assert!(summary.contains(&Summary::split(groups)), "{summary}");
        let (before, after): (f64, f64) = groups
            .iter()
            .fold((0.0, 0.0), |(b, a), m| (b + m.before_s, a + m.after_s));
        assert!((before - c.summary.before_s).abs() <= 1e-12 * c.summary.before_s.max(1.0));
        assert!((after - c.summary.after_s).abs() <= 1e-12 * c.summary.after_s.max(1.0));
    }
    let rows = b.js(
        "return [...document.querySelectorAll('#kernel-table tbody tr')].map(r => [r.title, r.querySelector('td.speedup').textContent, r.querySelector('td.bound-change').textContent])",
    );
    let rows = rows.as_array().unwrap();
    assert!(rows.len() >= 40);
    let mut checked = 0;
    for r in rows {
        let row = c.row(r[0].as_str().unwrap()).unwrap();
        let want = row.speedup().map_or("–".into(), |x| format!("{x:.2}×"));
        assert_eq!(r[1], json!(want), "{}", row.name);
        checked += usize::from(row.speedup().is_some());
    }
    assert!(checked >= 3, "{checked} speed-ups checked");
    assert_cells_fit(b, &format!("{shots}: table"));
    b.wait(
        "return location.search.includes('baseline=samples')",
        "the baseline in the URL",
    );
}

/// Every label's rectangle as the browser laid it out (`getBBox()` in the text's own space, taken
/// through its rotation by `getScreenCTM()` into the SVG's units), every marker's (and a
/// comparison's rings and faint markers), whether any two overlap or a label lies on a ceiling
/// line or an arrow (separating axes), and each label's measured width, ascent and descent.
/// `svg` names the chart's root element; labels are `text.ceiling-label` and `text.{names}`,
/// markers `circle.marker`.
fn measure_labels(svg: &str, names: &str) -> String {
    MEASURE_LABELS
        .replace("SVG_ROOT", svg)
        .replace("text.kernel-label", &format!("text.{names}"))
}

const MEASURE_LABELS: &str = "const svg = SVG_ROOT;
 const inv = svg.getScreenCTM().inverse();
 const quad = e => { const b = e.getBBox(); const m = inv.multiply(e.getScreenCTM());
   return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
     .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]); };
 const hit = (p, q) => { for (const r of [p, q]) for (let i = 0; i < 2; i++) {
     const ax = r[i + 1][0] - r[i][0], ay = r[i + 1][1] - r[i][1];
     const a = p.map(v => v[0] * ax + v[1] * ay), b = q.map(v => v[0] * ax + v[1] * ay);
     if (Math.max(...a) <= Math.min(...b) || Math.max(...b) <= Math.min(...a)) return false; }
   return true; };
 const texts = [...svg.querySelectorAll('text.ceiling-label, text.kernel-label')].map(t => ({
   n: t.textContent, kind: t.classList.contains('kernel-label') ? 'kernel' : 'ceiling',
   q: quad(t), b: t.getBBox(), y: +t.getAttribute('y') }));
 const marks = [...svg.querySelectorAll('circle.marker, circle.gone, circle.baseline')].map(c => ({ k: c.classList[0] + ' of ' + c.dataset.kernel, q: quad(c) }));
 const pts = e => { const m = inv.multiply(e.getScreenCTM()); return [...e.points].map(p => [m.a * p.x + m.c * p.y + m.e, m.b * p.x + m.d * p.y + m.f]); };
 const segs = [];
 svg.querySelectorAll('polyline.line').forEach(l => { if (!l.dataset.role.startsWith('KernelLink')) {
   const p = pts(l); for (let i = 0; i + 1 < p.length; i++) segs.push({ r: l.dataset.role, a: p[i], b: p[i + 1] }); } });
 svg.querySelectorAll('line.arrow').forEach(l => segs.push({ r: 'arrow of ' + l.dataset.kernel,
   a: [+l.getAttribute('x1'), +l.getAttribute('y1')], b: [+l.getAttribute('x2'), +l.getAttribute('y2')] }));
 const cross = (q, s) => { const axes = [[q[1][0] - q[0][0], q[1][1] - q[0][1]], [q[3][0] - q[0][0], q[3][1] - q[0][1]], [s.a[1] - s.b[1], s.b[0] - s.a[0]]];
   return axes.every(([ax, ay]) => { const d = q.map(v => v[0] * ax + v[1] * ay); const x = s.a[0] * ax + s.a[1] * ay, y = s.b[0] * ax + s.b[1] * ay;
     return Math.min(x, y) < Math.max(...d) && Math.min(...d) < Math.max(x, y); }); };
 const bad = [];
 texts.forEach((a, i) => {
   marks.forEach(m => { if (hit(a.q, m.q)) bad.push(a.kind + ' label ' + a.n + ' covers a ' + m.k); });
   segs.forEach(g => { if (cross(a.q, g)) bad.push(a.kind + ' label ' + a.n + ' on the line ' + g.r); });
   texts.slice(i + 1).forEach(c => { if (hit(a.q, c.q)) bad.push(a.kind + ' label ' + a.n + ' on ' + c.n); });
 });
 return { bad, sizes: texts.map(t => [t.n, t.b.width, t.y - t.b.y, t.b.y + t.b.height - t.y]),
   kernel: texts.filter(t => t.kind === 'kernel').length, ceiling: texts.filter(t => t.kind === 'ceiling').length,
   markers: marks.length };";

/// Every sample the viewer lists, both charts, with the default number of kernel names and with
/// 20, and the CLI's SVG of each: no label (kernel name, rank or ceiling) covers a marker or
/// another label or sits on a ceiling line, as the browser measures them; and the model's text
/// extents
/// (`roofline_model::chart::text_width`, `text_height`) are never smaller than the browser's.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn kernel_names_on_every_sample_keep_clear() {
    use roofline_model::chart::{text_height, text_width};
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dist().join("samples/index.json")).unwrap())
            .unwrap();
    let (ascent, descent) = text_height();
    let (mut measured, mut widest) = (0, 0.0_f64);
    for e in index.as_array().unwrap() {
        let file = e["file"].as_str().unwrap();
        for chart in ["hierarchical", "time"] {
            for names in ["", "&labels=20"] {
                let what = format!("{file} {chart}{names}");
                b.go(&format!(
                    "http://127.0.0.1:{port}/?bundle=samples/{file}&chart={chart}{names}"
                ));
                b.wait(
                    "return document.querySelectorAll('#chart text.kernel-label').length",
                    &format!("{what}: kernel names"),
                );
                if chart == "hierarchical" && names.is_empty() {
                    assert_cells_fit(&b, &format!("{file}: table"));
                }
                let r = b.js(&measure_labels(
                    "document.getElementById('chart')",
                    "kernel-label",
                ));
                assert_eq!(r["bad"], json!([]), "{what}");
                assert!(r["ceiling"].as_u64().unwrap() >= 3, "{what}: {r}");
                assert!(r["markers"].as_u64().unwrap() >= 3, "{what}: {r}");
                for s in r["sizes"].as_array().unwrap() {
                    let text = s[0].as_str().unwrap();
                    let (w, up, down) = (
                        s[1].as_f64().unwrap(),
                        s[2].as_f64().unwrap(),
                        s[3].as_f64().unwrap(),
                    );
                    assert!(w > 0.0, "{what}: {text} has no width");
                    assert!(
                        w <= text_width(text) && up <= ascent && down <= descent,
                        "{what}: {text} measures {w:.2} wide, {up:.2} up, {down:.2} down; the model estimates {:.2}, {ascent:.2}, {descent:.2}",
                        text_width(text)
                    );
                    widest = widest.max(w / text_width(text));
                    measured += 1;
                }
                let shot = format!(
                    "labels-{}-{chart}{}",
                    file.trim_end_matches(".json"),
                    if names.is_empty() { "" } else { "-20" }
                );
                b.screenshot(&shot);
            }
        }
    }
    // The CLI's SVG (`roofline plot`, at its default size) of every sample, opened as it is.
    for e in index.as_array().unwrap() {
        let file = e["file"].as_str().unwrap();
        let bundle =
            roofline_model::parse_bundle(&roofline_tests::fixture_text(&format!("bundles/{file}")))
                .unwrap();
        for (chart, kind) in [
            ("hierarchical", ChartKind::Hierarchical),
            ("time", ChartKind::Time),
        ] {
            let what = format!("roofline plot {file} --chart {chart}");
            let svg = plot(&bundle, kind, 12, (960.0, 640.0), None).unwrap();
            let name = format!("{}-{chart}.svg", file.trim_end_matches(".json"));
            std::fs::write(extra.path().join(&name), svg).unwrap();
            b.go(&format!("http://127.0.0.1:{port}/extra/{name}"));
            b.wait(
                "return document.querySelectorAll('text.rank').length",
                &format!("{what}: ranks"),
            );
            let r = b.js(&measure_labels("document.documentElement", "rank"));
            assert_eq!(r["bad"], json!([]), "{what}");
            assert!(r["ceiling"].as_u64().unwrap() >= 3, "{what}: {r}");
            for s in r["sizes"].as_array().unwrap() {
                let text = s[0].as_str().unwrap();
                let w = s[1].as_f64().unwrap();
                assert!(
                    w <= text_width(text)
                        && s[2].as_f64().unwrap() <= ascent
                        && s[3].as_f64().unwrap() <= descent,
                    "{what}: {text} measures {s}"
                );
                widest = widest.max(w / text_width(text));
                measured += 1;
            }
            b.screenshot(&format!("plot-{}", name.trim_end_matches(".svg")));
        }
    }
    assert!(measured > 300, "{measured} labels measured");
    eprintln!(
        "{measured} labels measured; the widest takes {:.0}% of its estimated width",
        widest * 100.0
    );
}

/// `encodeURIComponent` for the characters kernel names hold.
fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|c| {
            if c.is_ascii_alphanumeric() || b"-_.~".contains(&c) {
                (c as char).to_string()
            } else {
                format!("%{c:02X}")
            }
        })
        .collect()
}

/// Every bad bundle of the corpus (`tests/fixtures/bad/*.json`, each with the error it must
/// produce in `.expected`) opened in the viewer: the page shows that error in its alert, as the
/// CLI does, never a blank page; and a UTF-16 bundle is named as such (the viewer reads bytes
/// and lets the model decode them).
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn every_bad_bundle_of_the_corpus_explains_itself() {
    let extra = tempfile::tempdir().unwrap();
    // UTF-16 with a byte-order mark, as some Windows editors save JSON.
    let mut utf16 = vec![0xff, 0xfe];
    for u in "{\"schema_version\": 1}".encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    std::fs::write(extra.path().join("utf16.json"), utf16).unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    let base = format!("http://127.0.0.1:{port}/");
    let corpus = repo().join("tests/fixtures/bad");
    let mut cases: Vec<(String, String)> = std::fs::read_dir(&corpus)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name()?.to_str()?.to_owned();
            let expected = std::fs::read_to_string(corpus.join(format!("{name}.expected"))).ok()?;
            // Cases with a command line of their own or a trace go through the CLI's import.
            let import_only =
                name.starts_with("trace-") || corpus.join(format!("{name}.args")).is_file();
            (name.ends_with(".json") && !import_only).then(|| {
                (
                    format!("/fixtures/bad/{name}"),
                    expected.trim_end().to_owned(),
                )
            })
        })
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "the corpus shrank: {cases:?}");
    cases.push(("/extra/utf16.json".into(), "UTF-16".into()));
    let mut failures = Vec::new();
    for (path, expected) in &cases {
        b.go(&format!("{base}?bundle={path}"));
        let text = b.wait(
            "const e = document.querySelector('.error'); return e && e.textContent",
            path,
        );
        let text = text.as_str().unwrap_or_default();
        if !(text.contains("is not a readable bundle") && text.contains(expected.as_str())) {
            failures.push(format!("{path}: expected {expected:?} in {text:?}"));
        }
    }
    b.screenshot("bad-corpus");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A torch.profiler trace imported by the CLI, read per operator in the viewer: it opens on the
/// time-based chart, and the group toggle (and `group=op` in the URL) gives the rows
/// `roofline_model::analysis::group` computes.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn a_trace_bundle_groups_by_operator() {
    use roofline_model::analysis::group::{GroupBy, group};
    let extra = tempfile::tempdir().unwrap();
    let out = extra.path().join("trace.json");
    import_trace(
        repo().join("tests/fixtures/traces/sampled-rank-0-shapes.json.gz"),
        &out,
    );
    let bundle = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let ops = group(&bundle.kernels, GroupBy::Operator);
    let mm = ops.iter().find(|k| k.name == "aten::mm").expect("aten::mm");
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    // With no chart in the URL, the trace (F, B and times, no counters, no machine: nothing for
    // the hierarchical chart) opens on the time-based chart, with no error.
    b.go(&format!(
        "http://127.0.0.1:{port}/?bundle=/extra/trace.json"
    ));
    b.wait(WAIT_CHART, "the trace's default chart");
    assert_eq!(
        b.js("return document.querySelector('#tab-time.active') !== null && document.querySelector('#tab-hierarchical.active') === null"),
        json!(true)
    );
    b.wait(
        "return location.href.includes('chart=time') || null",
        "chart=time in the URL",
    );
    b.go(&format!(
        "http://127.0.0.1:{port}/?bundle=/extra/trace.json&group=op&chart=time"
    ));
    b.wait(WAIT_CHART, "the grouped trace");
    // The first column says what a row is.
    let head = b.js("return document.querySelector('#kernel-table th').textContent");
    assert!(head.as_str().unwrap().starts_with("Operator"), "{head}");
    let launches = b.wait(
        "const r = Array.from(document.querySelectorAll('#kernel-table tr')).find(r => { const n = r.querySelector('td.name'); return n && n.textContent === 'aten::mm'; }); return r && r.querySelectorAll('td')[3].textContent",
        "the aten::mm row",
    );
    assert_eq!(launches, json!(mm.launches.to_string()));
    assert_eq!(
        b.js("return document.getElementById('group-select').value"),
        json!("op")
    );
    b.screenshot("group-by-operator");
    let served_chart = b.js("return document.getElementById('chart').outerHTML");
    // Back to kernels: the operator row is gone, kernel names are back.
    b.js("const s = document.getElementById('group-select'); s.value = 'kernel'; s.dispatchEvent(new Event('change')); return true");
    b.wait(
        "return !Array.from(document.querySelectorAll('#kernel-table td.name')).some(n => n.textContent === 'aten::mm') || null",
        "the kernel rows",
    );
    // Asked for per kernel: the URL says so (a link keeps the choice).
    b.wait(
        "return location.href.includes('group=kernel')",
        "the URL with the grouping asked for",
    );
    // The grouping survives a saved page: written by the CLI, opened from disk.
    let page = extra.path().join("trace.html");
    roofline_cli(&[
        "plot",
        out.to_str().unwrap(),
        "--group-by",
        "op",
        "--chart",
        "time",
        "-o",
        page.to_str().unwrap(),
    ]);
    b.go(&format!("file://{}", page.display()));
    b.wait(WAIT_CHART, "the saved grouped trace");
    assert_eq!(
        b.js("return document.getElementById('group-select').value"),
        json!("op")
    );
    assert!(
        b.js("return document.getElementById('chart').outerHTML") == served_chart,
        "the saved page's grouped chart differs from the served one"
    );
    b.screenshot("standalone-group-by-operator");
    // Compared per operator with a SYNTHETIC copy in which every aten::mm kernel takes twice as
    // long: aten::mm is matched by operator, 0.50× (half the speed), the rest unchanged.
    let mut slower = bundle;
    slower.description = Some("SYNTHETIC: the trace with aten::mm kernels 2× slower".into());
    for k in &mut slower.kernels {
        if k.operator.as_ref().is_some_and(|o| o.name == "aten::mm") {
            k.time.total_s *= 2.0;
            if let Some(p) = &mut k.time.per_launch {
                p.min_s *= 2.0;
                p.mean_s *= 2.0;
                p.max_s *= 2.0;
                p.median_s = p.median_s.map(|m| m * 2.0);
                p.stddev_s = p.stddev_s.map(|s| s * 2.0);
            }
        }
    }
    std::fs::write(
        extra.path().join("trace-slower-mm-SYNTHETIC.json"),
        roofline_model::to_json(&slower).unwrap(),
    )
    .unwrap();
    b.go(&format!(
        "http://127.0.0.1:{port}/?bundle=/extra/trace-slower-mm-SYNTHETIC.json&baseline=/extra/trace.json&group=op&chart=time"
    ));
    let speedup = b.wait(
        "const r = Array.from(document.querySelectorAll('#kernel-table tr')).find(r => { const n = r.querySelector('td.name'); return n && n.textContent === 'aten::mm'; }); return r && r.querySelector('td.speedup') && r.querySelector('td.speedup').textContent",
        "the aten::mm row compared",
    );
    assert_eq!(speedup, json!("0.50×"));
    let summary = b.js("return document.getElementById('compare-summary').textContent");
    assert!(
        summary
            .as_str()
            .unwrap()
            .contains(&format!("{} operators matched, 0 new, 0 gone", ops.len())),
        "{summary}"
    );
    b.screenshot("compare-by-operator");
}

/// `roofline …` as the binary runs it (the collector's parser, validation and command), here.
fn roofline_cli(args: &[&str]) {
    use clap::Parser;
    let cli = roofline_collector::cli::Cli::try_parse_from(
        std::iter::once("roofline").chain(args.iter().copied()),
    )
    .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    roofline_collector::config::Config::from_cli(cli)
        .and_then(roofline_collector::commands::run)
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
}

/// `roofline import TRACE -o OUT` with the default options and no machine, in this process.
fn import_trace(trace: PathBuf, out: &std::path::Path) {
    roofline_collector::capture::import(&roofline_collector::capture::ImportRequest {
        files: &[trace],
        output: out,
        machine: None,
        options: &Default::default(),
        counters: None,
        ncu: None,
        per_trace: &[],
    })
    .unwrap();
}

/// Waits for the download `name` in `dir` to be complete, then takes it out of the folder.
fn take_download(dir: &std::path::Path, name: &str) -> Vec<u8> {
    let file = dir.join(name);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let partial = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().ends_with(".crdownload"));
        if file.is_file() && !partial {
            let bytes = std::fs::read(&file).unwrap();
            std::fs::remove_file(&file).unwrap();
            return bytes;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no download {name} in {}",
            dir.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// What the chart shows: its SVG markup, and the compare summary after the baseline's name
/// (which is `sample: …` when served, the file name in a saved page).
fn drawn_chart(b: &Browser) -> (String, String) {
    let svg = b.js("return document.getElementById('chart').outerHTML");
    let summary = b.js("return document.getElementById('compare-summary').textContent");
    let summary = summary.as_str().unwrap();
    let (_, after) = summary.split_once(".json: ").unwrap();
    (svg.as_str().unwrap().to_string(), after.to_string())
}

const ARROWS: &str = "return document.querySelectorAll('#chart line.arrow').length";

#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn a_saved_page_opens_from_disk_and_draws_the_same_chart() {
    let work = tempfile::tempdir().unwrap();
    let page = work.path().join("amp-vs-fp32.html");
    let bundles = roofline_tests::fixtures().join("bundles");
    let (amp, fp32) = (
        bundles.join("deepcam-v100-amp-fw.json"),
        bundles.join("deepcam-v100-fp32-fw.json"),
    );
    // The CLI writes the page: AMP against FP32 (forward pass), time-based, 30 kernels, 5 names.
    roofline_cli(&[
        "plot",
        amp.to_str().unwrap(),
        "--baseline",
        fp32.to_str().unwrap(),
        "--chart",
        "time",
        "--top",
        "30",
        "--labels",
        "5",
        "-o",
        page.to_str().unwrap(),
    ]);
    let written = std::fs::read(&page).unwrap();

    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let downloads = tempfile::tempdir().unwrap();
    let b = Browser::start();
    b.allow_downloads(downloads.path());

    // The served viewer in the same view.
    b.go(&format!(
        "http://127.0.0.1:{port}/?bundle=samples/deepcam-v100-amp-fw.json&baseline=samples/deepcam-v100-fp32-fw.json&chart=time&top=30&labels=5"
    ));
    b.wait(ARROWS, "the served chart's arrows");
    let served = drawn_chart(&b);
    b.screenshot("standalone-served");
    // Its "Save as HTML" writes the CLI's file, byte for byte.
    b.js("document.getElementById('save-html').click()");
    let saved = take_download(downloads.path(), "deepcam-v100-amp-fw.html");
    assert!(
        saved == written,
        "the served viewer saved {} bytes, the CLI wrote {}",
        saved.len(),
        written.len()
    );

    // The file from disk, no server: the same chart, markers, arrows, names and summary.
    b.go(&format!("file://{}", page.display()));
    b.wait(ARROWS, "the saved page's arrows");
    assert_eq!(b.js("return location.protocol"), json!("file:"));
    // No samples in the open picker on a page with no samples beside it: a file only.
    assert_eq!(
        b.js("return document.querySelectorAll('#open-select option').length"),
        json!(2)
    );
    let from_disk = drawn_chart(&b);
    b.screenshot("standalone-file");
    assert_eq!(from_disk.1, served.1, "compare summary");
    assert!(
        from_disk.0 == served.0,
        "the saved page's chart differs from the served one:\n{}\n---\n{}",
        from_disk.0,
        served.0
    );
    let markers = b.js("return document.querySelectorAll('#chart circle.marker').length");
    assert!(markers.as_u64().unwrap() >= 30, "{markers}");
    // Saved again from the saved page (its template rebuilt from its own scripts): the same file.
    b.js("document.getElementById('save-html').click()");
    let again = take_download(downloads.path(), "deepcam-v100-amp-fw.html");
    assert!(again == written, "saving the saved page changed it");

    // A query in the file's URL wins over the saved view; the baseline stays.
    b.go(&format!(
        "file://{}?chart=hierarchical&top=30&labels=5",
        page.display()
    ));
    b.wait(ARROWS, "the arrows in the hierarchical view");
    assert_eq!(
        b.js("return document.getElementById('tab-hierarchical').classList.contains('active')"),
        json!(true)
    );
    b.screenshot("standalone-file-query");

    // A kernel name that would end a <script> element: the page still opens, the name is whole.
    let mut evil: serde_json::Value = serde_json::from_str(&roofline_tests::fixture_text(
        "bundles/v100-deepcam-example.json",
    ))
    .unwrap();
    let name = "k</script><script>alert(1)</script><!--";
    evil["kernels"][0]["name"] = json!(name);
    let evil_file = work.path().join("evil.json");
    std::fs::write(&evil_file, serde_json::to_string(&evil).unwrap()).unwrap();
    let evil_page = work.path().join("evil.html");
    roofline_cli(&[
        "plot",
        evil_file.to_str().unwrap(),
        "-o",
        evil_page.to_str().unwrap(),
    ]);
    b.go(&format!("file://{}", evil_page.display()));
    b.wait(WAIT_CHART, "the chart of the page with a hostile name");
    let found = b.js(&format!(
        "return [...document.querySelectorAll('#kernel-table tbody tr')].some(r => r.title === {})",
        json!(name)
    ));
    assert_eq!(found, json!(true));
    b.screenshot("standalone-hostile-name");
}

/// The screenshots the README links to (`docs/screenshots/NAME.png`).
const DOC_SHOTS: [&str; 11] = [
    "viewer-hierarchical-light",
    "viewer-hierarchical-dark",
    "viewer-time-light",
    "viewer-time-dark",
    "hover-light",
    "compare-hierarchical-light",
    "compare-time-dark",
    "compare-pair-by-hand",
    "compare-per-operator",
    "compare-500px",
    "embed-compare",
];

/// Saves a screenshot (`Browser::screenshot`) and, when `ROOFLINE_DOC_SCREENSHOTS` is set and the
/// README links to it ([`DOC_SHOTS`]), copies it to `docs/screenshots/` (committed by hand after
/// a look).
fn doc_shot(b: &Browser, name: &str) {
    b.screenshot(name);
    if std::env::var_os("ROOFLINE_DOC_SCREENSHOTS").is_some() && DOC_SHOTS.contains(&name) {
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(|| repo().join("target"), |t| repo().join(t));
        let dir = repo().join("docs/screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(
            target
                .join("browser-screenshots")
                .join(format!("{name}.png")),
            dir.join(format!("{name}.png")),
        )
        .unwrap();
    }
}

/// Resizes the browser's window (W3C WebDriver's Set Window Rect).
fn window(b: &Browser, width: u32, height: u32) {
    b.cmd(
        "POST",
        "window/rect",
        Some(&json!({"width": width, "height": height})),
    );
}

/// `#rrggbb` of a computed CSS colour (`rgb(r, g, b)`).
fn hex(css: &str) -> String {
    let v: Vec<u8> = css
        .trim_start_matches("rgba(")
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(',')
        .take(3)
        .map(|x| x.trim().parse().unwrap_or(0))
        .collect();
    format!("#{:02x}{:02x}{:02x}", v[0], v[1], v[2])
}

/// The chart's text labels (ceiling labels and kernel names) with their computed fill and halo,
/// the roofs and ceilings with their computed stroke, and the background's fill.
const INKS: &str = "const svg = document.getElementById('chart'); const c = e => getComputedStyle(e);
 return { bg: c(svg.querySelector('rect.bg')).fill,
   texts: [...svg.querySelectorAll('text.ceiling-label, text.kernel-label, .bound-path text')].map(t => [t.textContent, c(t).fill, c(t).stroke]),
   lines: [...svg.querySelectorAll('polyline.line')].filter(l => /^(Compute|Bandwidth|MachineBalance|LaunchBox)/.test(l.dataset.role)).map(l => [l.dataset.role, c(l).stroke]) };";

/// Every label of the chart shown reads against its halo and the background at WCAG AA's
/// 4.5:1, and every roof and ceiling line against the background.
fn assert_contrast(b: &Browser, what: &str) {
    use roofline_model::chart::style::contrast;
    let r = b.js(INKS);
    let bg = hex(r["bg"].as_str().unwrap());
    let texts = r["texts"].as_array().unwrap();
    let lines = r["lines"].as_array().unwrap();
    assert!(texts.len() >= 4 && lines.len() >= 3, "{what}: {r}");
    for t in texts {
        let (fill, halo) = (hex(t[1].as_str().unwrap()), hex(t[2].as_str().unwrap()));
        for (against, which) in [(&halo, "halo"), (&bg, "background")] {
            let x = contrast(&fill, against).unwrap();
            assert!(
                x >= 4.5,
                "{what}: {} {fill} on its {which} {against}: {x:.2}:1",
                t[0]
            );
        }
    }
    for l in lines {
        let stroke = hex(l[1].as_str().unwrap());
        let x = contrast(&stroke, &bg).unwrap();
        assert!(x >= 4.5, "{what}: {} {stroke} on {bg}: {x:.2}:1", l[0]);
    }
}

/// The font sizes of the chart's text as drawn, pixels: each text's computed size times the
/// chart's scale on the page.
const DRAWN_FONT_SIZES: &str = "const svg = document.getElementById('chart');
 const k = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
 return [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * k);";

/// Readable: in the dark theme and the light one every label and roof reads against the
/// background (a contrast check on the page's computed colours), in both charts and in a
/// comparison; the chart uses the width it has (at 1400 px) and keeps its text at 11 px or more
/// at 500 px, with fewer names, the table's last column reachable and whole, names of more than
/// 25 characters; the words say what the controls do; a favicon.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn readable_in_the_dark_and_at_any_width() {
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    let base = format!("http://127.0.0.1:{port}/");
    for theme in ["", "&theme=dark"] {
        for chart in ["hierarchical", "time"] {
            for baseline in ["", "&baseline=samples/deepcam-v100-fp32-fw.json"] {
                b.go(&format!(
                    "{base}?bundle=samples/deepcam-v100-amp-fw.json&chart={chart}{theme}{baseline}"
                ));
                b.wait(WAIT_CHART, "the chart");
                if !baseline.is_empty() {
                    b.wait(ARROWS, "the arrows");
                }
                let shot = format!(
                    "{}-{chart}{}",
                    if baseline.is_empty() {
                        "viewer"
                    } else {
                        "compare"
                    },
                    if theme.is_empty() { "-light" } else { "-dark" }
                );
                doc_shot(&b, &shot);
                // Hover the largest marker: the path's text is checked too.
                b.js("const c = [...document.querySelectorAll('#chart circle.marker')].sort((a, b) => b.r.baseVal.value - a.r.baseVal.value)[0];
                      const r = c.getBoundingClientRect();
                      document.getElementById('chart').dispatchEvent(new MouseEvent('mousemove', {clientX: r.x + r.width / 2, clientY: r.y + r.height / 2, bubbles: true}));");
                b.wait("return document.querySelector('.tooltip')", "the tooltip");
                let what = format!("{chart}{theme}{baseline}");
                assert_contrast(&b, &what);
                if baseline.is_empty() && chart == "hierarchical" {
                    doc_shot(
                        &b,
                        &format!("hover{}", if theme.is_empty() { "-light" } else { "-dark" }),
                    );
                }
            }
        }
    }

    // 1400 px: the chart takes the width it has.
    window(&b, 1400, 1200);
    b.go(&format!("{base}?{EXAMPLE}"));
    b.wait(WAIT_CHART, "the chart at 1400 px");
    let (chart_w, page_w) = (
        b.js("return document.getElementById('chart').getBoundingClientRect().width"),
        b.js("return document.documentElement.clientWidth"),
    );
    assert!(
        chart_w.as_f64().unwrap() >= page_w.as_f64().unwrap() - 40.0,
        "{chart_w} of {page_w}"
    );
    // The words say what the controls do, and the page has an icon.
    let note = b.js("return document.querySelector('.notes').textContent");
    assert!(note.as_str().unwrap().contains("kernels plotted"), "{note}");
    let toolbar = b.js("return document.querySelector('.toolbar').textContent");
    for words in ["Kernels plotted", "Named on the chart"] {
        assert!(toolbar.as_str().unwrap().contains(words), "{toolbar}");
    }
    assert_eq!(
        b.js("return document.querySelector('link[rel=icon]') !== null"),
        json!(true)
    );
    // One picker for samples and files.
    assert_eq!(
        b.js("return [!!document.getElementById('open-select'), !document.getElementById('sample-select'), document.getElementById('file-input').hidden]"),
        json!([true, true, true])
    );

    // 500 px: a stacked page, the chart's text at 11 px or more, fewer names, the table whole.
    window(&b, 500, 1400);
    b.go(&format!(
        "{base}?bundle=samples/deepcam-v100-amp-fw.json&baseline=samples/deepcam-v100-fp32-fw.json"
    ));
    b.wait(ARROWS, "the arrows at 500 px");
    let sizes = b.js(DRAWN_FONT_SIZES);
    let smallest = sizes
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(
        smallest >= 10.99,
        "text drawn at {smallest:.2} px at 500 px"
    );
    let names = b.js("return document.querySelectorAll('#chart text.kernel-label').length");
    assert!(names.as_u64().unwrap() <= 4, "{names} names at 500 px");
    let scrolled = b.js(
        "const s = document.querySelector('.table-scroll'); s.scrollLeft = s.scrollWidth; \
         const c = document.querySelector('#kernel-table tbody td.bound-change').getBoundingClientRect(); \
         const r = s.getBoundingClientRect(); return [c.right <= r.right + 1, c.left >= r.left - 1]",
    );
    assert_eq!(scrolled, json!([true, true]), "the last column at 500 px");
    assert_cells_fit(&b, "500 px table");
    // Names keep more than 25 characters.
    let shown = b.js(
        "const td = [...document.querySelectorAll('#kernel-table td.name')].find(t => t.textContent.length > 30); \
         const ctx = document.createElement('canvas').getContext('2d'); ctx.font = getComputedStyle(td).font; \
         const pad = parseFloat(getComputedStyle(td).paddingLeft) + parseFloat(getComputedStyle(td).paddingRight); \
         return [ctx.measureText(td.textContent.slice(0, 26)).width, td.clientWidth - pad]",
    );
    assert!(
        shown[0].as_f64().unwrap() <= shown[1].as_f64().unwrap(),
        "26 characters need {} px, the name column has {}",
        shown[0],
        shown[1]
    );
    doc_shot(&b, "compare-500px");
    window(&b, 1280, 1400);
}

/// `embed.html`: without a bundle it says so (never a sample in its place); a failed fetch gives
/// its error without the "open a bundle" prompt; with a baseline, the compare summary and the
/// legend of arrows and rings.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn the_embed_page_says_what_it_shows() {
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    let embed = format!("http://127.0.0.1:{port}/embed.html");
    b.go(&embed);
    let text = b.wait(
        "const e = document.getElementById('empty-state'); return e && e.textContent",
        "the embed's message",
    );
    assert!(text.as_str().unwrap().contains("names no bundle"), "{text}");
    assert_eq!(
        b.js("return document.querySelectorAll('#chart, .error').length"),
        json!(0)
    );
    b.go(&format!("{embed}?bundle=/extra/missing.json"));
    let text = b.wait(
        "const e = document.querySelector('.error'); return e && e.textContent",
        "the failed fetch",
    );
    assert!(text.as_str().unwrap().contains("HTTP 404"), "{text}");
    assert_eq!(
        b.js("return document.getElementById('empty-state') === null && !document.body.textContent.includes('open a bundle')"),
        json!(true)
    );
    b.go(&format!(
        "{embed}?bundle=samples/deepcam-v100-amp-fw.json&baseline=samples/deepcam-v100-fp32-fw.json&chart=time"
    ));
    b.wait(ARROWS, "the embedded comparison");
    let summary = b.js("return document.getElementById('compare-summary').textContent");
    assert!(
        summary.as_str().unwrap().contains("kernels matched"),
        "{summary}"
    );
    let legend = b.js("return document.querySelector('.legend').textContent");
    for words in ["arrow:", "faint marker", "thick ring", "dashed ring"] {
        assert!(legend.as_str().unwrap().contains(words), "{legend}");
    }
    assert_eq!(
        b.js("return document.querySelectorAll('header, #kernel-table').length"),
        json!(0)
    );
    doc_shot(&b, "embed-compare");
}

/// The DeepCAM showcase (apex O1 mixed precision against FP32, forward pass): no doubtful pair
/// is shown as a plain match, the FP32 batch-norm kernel is paired with its `_fp16` counterpart,
/// tooltips say baseline → current with the speed-up, and a pair made by hand is drawn, said and
/// kept in the URL.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn compare_shows_doubtful_pairs_and_pairs_by_hand() {
    let read = |f: &str| {
        roofline_model::parse_bundle(&roofline_tests::fixture_text(&format!("bundles/{f}")))
            .unwrap()
    };
    let (cur, base) = (
        roofline_model::analysis::Analysed::new(&read("deepcam-v100-amp-fw.json"), None, None),
        roofline_model::analysis::Analysed::new(&read("deepcam-v100-fp32-fw.json"), None, None),
    );
    let c = compare(&cur, &base);
    assert!(c.summary.doubtful >= 1);
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    let url = format!(
        "http://127.0.0.1:{port}/?bundle=samples/deepcam-v100-amp-fw.json&baseline=samples/deepcam-v100-fp32-fw.json"
    );
    b.go(&url);
    b.wait(ARROWS, "the arrows");
    b.js("document.getElementById('show-all') && document.getElementById('show-all').click()");
    let rows = b.js(
        "return [...document.querySelectorAll('#kernel-table tbody tr')].map(r => [r.title, r.querySelector('td.speedup').textContent, r.querySelector('td.bound-change').textContent, r.querySelector('td.bound-change').className])",
    );
    let rows = rows.as_array().unwrap();
    let mut doubtful = 0;
    for r in rows {
        let row = c
            .rows
            .iter()
            .find(|x| x.name == r[0].as_str().unwrap())
            .unwrap();
        if row.doubt.is_some() {
            doubtful += 1;
            // Flagged, never a plain match: no speed-up, a "?" and its class.
            assert_eq!(r[1], json!("–"), "{}", row.name);
            assert!(r[2].as_str().unwrap().ends_with('?'), "{r}");
            assert!(r[3].as_str().unwrap().contains("doubtful"), "{r}");
        }
        if row.presence == Presence::New {
            assert_eq!(r[1], json!("–"), "a new kernel with a speed-up: {r}");
        }
    }
    assert!(doubtful >= 1, "no doubtful row shown");
    // The batch-norm kernel's real counterpart, not the 1-launch half template.
    let bn = rows
        .iter()
        .find(|r| {
            r[0].as_str()
                .unwrap()
                .contains("bn_fw_tr_1C11_singleread_fp16<512, 1, 2, 0>")
        })
        .unwrap();
    assert_eq!(bn[1], json!("1.62×"));
    assert!(bn[2].as_str().unwrap().starts_with('≈'), "{bn}");
    let half = rows
        .iter()
        .find(|r| {
            r[0].as_str()
                .unwrap()
                .contains("bn_fw_tr_1C11_singleread<__half")
        })
        .unwrap();
    assert_eq!(half[1], json!("–"));
    // A matched kernel's tooltip: baseline → current with the speed-up.
    let tip = b.js(
        "const c = [...document.querySelectorAll('#chart circle.marker')].find(c => c.dataset.kernel.includes('bn_fw_tr_1C11_singleread_fp16<512, 1, 2, 0>'));
         const r = c.getBoundingClientRect();
         document.getElementById('chart').dispatchEvent(new MouseEvent('mousemove', {clientX: r.x + r.width / 2, clientY: r.y + r.height / 2, bubbles: true}));
         return true",
    );
    assert_eq!(tip, json!(true));
    let text = b.wait(
        "const t = document.querySelector('.tooltip'); return t && t.textContent",
        "the tooltip",
    );
    assert!(
        text.as_str()
            .unwrap()
            .contains("baseline 4.2 ms → 2.59 ms (1.62× speed-up)"),
        "{text}"
    );

    // Pair by hand: the Tensor Core convolution that replaced the FP32 cuDNN one.
    let new = "volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_filter1x1_stg8_interior_nchw_nn_v1";
    let gone = "volta_scudnn_128x64_relu_interior_nn_v1";
    b.js(&format!(
        "[...document.querySelectorAll('#kernel-table tbody tr')].find(r => r.title === '{new}').click()"
    ));
    b.wait(
        "return document.querySelector('#pair-bar.can-pair')",
        "the pairing bar",
    );
    doc_shot(&b, "compare-pair-by-hand");
    b.js(&format!(
        "const s = document.getElementById('pair-select'); s.value = '{gone}'; s.dispatchEvent(new Event('change')); document.getElementById('pair-button').click()"
    ));
    // The change cell of the new kernel's row starts with `prefix`.
    let change_is = |prefix: &str| {
        format!(
            "const r = [...document.querySelectorAll('#kernel-table tbody tr')].find(r => r.title === '{new}'); \
             return !!r && r.querySelector('td.bound-change').textContent.startsWith('{prefix}')"
        )
    };
    b.wait(&change_is("✋"), "the pair by hand");
    let speedup = b.js(&format!(
        "return [...document.querySelectorAll('#kernel-table tbody tr')].find(r => r.title === '{new}').querySelector('td.speedup').textContent"
    ));
    assert_ne!(speedup, json!("–"));
    b.wait(
        &format!("return [...document.querySelectorAll('#chart circle.baseline')].some(l => l.dataset.kernel === '{new}')"),
        "its faint baseline marker",
    );
    b.wait(
        "return decodeURIComponent(location.search.replace(/\\+/g, ' ')).includes('pair=volta_fp16_s884cudnn')",
        "the pair in the URL",
    );
    // The link keeps it.
    let href = b.js("return location.href");
    b.go(href.as_str().unwrap());
    b.wait(ARROWS, "the arrows again");
    b.wait(&change_is("✋"), "the pair after a reload");
    let summary = b.js("return document.getElementById('compare-summary').textContent");
    assert!(summary.as_str().unwrap().contains("1 by hand"), "{summary}");
    // Undone.
    b.js(&format!(
        "const r = [...document.querySelectorAll('#kernel-table tbody tr')].find(r => r.title === '{new}'); if (!r.classList.contains('selected')) r.click()"
    ));
    b.wait("return document.querySelector('#pair-bar.by-hand')", "undo");
    b.js("document.getElementById('undo-pair').click()");
    b.wait(&change_is("new"), "the pair undone");
    b.wait(
        "return !location.search.includes('pair=')",
        "the URL without the pair",
    );
}

/// Two torch.profiler trace bundles compared: per operator by default (both carry operators),
/// each operator with the kernels it launched before and after. The second trace is a
/// SYNTHETIC copy of the first whose aten::mm kernels are renamed (another GEMM kernel) and take
/// half the time.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn two_traces_compare_per_operator_with_their_kernels() {
    use roofline_model::analysis::group::{GroupBy, group};
    let extra = tempfile::tempdir().unwrap();
    let out = extra.path().join("trace.json");
    import_trace(
        repo().join("tests/fixtures/traces/sampled-rank-0-shapes.json.gz"),
        &out,
    );
    let before = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    // aten::mm's kernels before, by name, largest time first.
    let mut mm_before: Vec<(String, String, f64)> = Vec::new();
    for k in before
        .kernels
        .iter()
        .filter(|k| k.operator.as_ref().is_some_and(|o| o.name == "aten::mm"))
    {
        match mm_before.iter_mut().find(|(n, _, _)| *n == k.name) {
            Some(x) => x.2 += k.time.total_s,
            None => mm_before.push((k.name.clone(), k.short_name(), k.time.total_s)),
        }
    }
    mm_before.sort_by(|a, b| b.2.total_cmp(&a.2));
    let largest = mm_before[0].1.clone();
    assert!(!mm_before.is_empty());
    let mut after = before;
    after.description = Some(
        "SYNTHETIC: the trace with aten::mm's kernels renamed (another GEMM) and 2× faster".into(),
    );
    for k in &mut after.kernels {
        if k.operator.as_ref().is_some_and(|o| o.name == "aten::mm") {
            k.name = "cutlass_tensorop_synthetic_gemm_128x128".into();
            k.display_name = None;
            k.time.total_s /= 2.0;
            k.time.per_launch = None;
        }
    }
    std::fs::write(
        extra.path().join("after-SYNTHETIC.json"),
        roofline_model::to_json(&after).unwrap(),
    )
    .unwrap();
    let ops = group(&after.kernels, GroupBy::Operator);
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    let url = format!(
        "http://127.0.0.1:{port}/?bundle=/extra/after-SYNTHETIC.json&baseline=/extra/trace.json&chart=time"
    );
    b.go(&url);
    let speedup = b.wait(
        "const r = [...document.querySelectorAll('#kernel-table tr')].find(r => { const n = r.querySelector('td.name'); return n && n.textContent === 'aten::mm'; }); return r && r.querySelector('td.speedup') && r.querySelector('td.speedup').textContent",
        "the aten::mm row, per operator by default",
    );
    assert_eq!(speedup, json!("2.00×"));
    assert_eq!(
        b.js("return document.getElementById('group-select').value"),
        json!("op")
    );
    let summary = b.js("return document.getElementById('compare-summary').textContent");
    assert!(
        summary
            .as_str()
            .unwrap()
            .contains(&format!("{} operators matched", ops.len())),
        "{summary}"
    );
    // The operator's kernels before and after.
    b.js("[...document.querySelectorAll('#kernel-table tr')].find(r => { const n = r.querySelector('td.name'); return n && n.textContent === 'aten::mm'; }).click()");
    let launched = b.wait(
        "const l = document.getElementById('launched'); return l && getComputedStyle(l).display !== 'none' && l.textContent",
        "the kernels aten::mm launched",
    );
    let launched = launched.as_str().unwrap();
    assert!(
        launched.contains("after: cutlass_tensorop_synthetic_gemm_128x128"),
        "{launched}"
    );
    assert!(
        launched.contains(&format!("before: {largest} (")),
        "{launched}"
    );
    // The tooltip says it too.
    b.js("const c = [...document.querySelectorAll('#chart circle.marker')].find(c => c.dataset.kernel === 'aten::mm');
          const r = c.getBoundingClientRect();
          document.getElementById('chart').dispatchEvent(new MouseEvent('mousemove', {clientX: r.x + r.width / 2, clientY: r.y + r.height / 2, bubbles: true}));");
    let tip = b.wait(
        "const t = document.querySelector('.tooltip'); return t && t.textContent",
        "the tooltip",
    );
    assert!(
        tip.as_str()
            .unwrap()
            .contains("after: cutlass_tensorop_synthetic_gemm_128x128"),
        "{tip}"
    );
    doc_shot(&b, "compare-per-operator");
    // Asked per kernel: the renamed kernels are new and gone, and the URL keeps the choice.
    b.js("const s = document.getElementById('group-select'); s.value = 'kernel'; s.dispatchEvent(new Event('change'))");
    b.wait(
        "return location.search.includes('group=kernel')",
        "group=kernel in the URL",
    );
    b.wait(
        "return [...document.querySelectorAll('#kernel-table tr')].some(r => r.title === 'cutlass_tensorop_synthetic_gemm_128x128' && r.querySelector('td.bound-change').textContent.startsWith('new'))",
        "the renamed kernel, new per kernel",
    );
}
