//! Issue 32 in the browser: charts inside other pages. The notebook executed by `cargo xtask
//! test` (its nbconvert HTML, and its outputs rendered the way JupyterLab and VS Code render
//! HTML outputs), the MkDocs, Sphinx and plain HTML sites built from `docs/embedding.md`'s
//! recipes, and the hosted `embed.html` in an iframe: each chart drawn inside its iframe, the
//! iframe sized to it, the chart switch and the link to the full viewer.
//!
//! What they open is written by `xtask/src/embed_kit.rs` under `<target>/embed-kit/`.

use std::path::PathBuf;

use roofline_tests::repo;
use roofline_tests::webdriver::{Browser, serve};
use serde_json::{Value, json};

use super::dist;

/// `<target>/embed-kit/…`, which `cargo xtask test` writes before the browser tests.
fn kit(path: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| repo().join("target"), |t| repo().join(t));
    let p = target.join("embed-kit").join(path);
    assert!(
        p.exists(),
        "{} is missing: `cargo xtask test` (or `cargo xtask wheel check`) writes it",
        p.display()
    );
    p
}

/// Every iframe of the page: the markers its chart drew, its title, the iframe's height and its
/// page's (`-1` while it has no document yet).
const FRAMES: &str = "return [...document.querySelectorAll('iframe')].map(f => {
    const d = f.contentDocument;
    const t = d && d.querySelector('#chart text');
    return {
      markers: d ? d.querySelectorAll('#chart circle.marker').length : -1,
      title: t ? t.textContent : '',
      frame: Math.round(f.getBoundingClientRect().height),
      page: d && d.querySelector('.app') ? Math.ceil(d.documentElement.getBoundingClientRect().height) : -1,
      status: d && d.getElementById('roofline-status') ? d.getElementById('roofline-status').textContent : '',
      at: d ? d.location.href + ' ' + d.readyState : ''
    };
  })";

/// Waits until `n` iframes (at least) each show a drawn chart and are as tall as their page.
fn wait_frames(b: &Browser, n: usize, what: &str) -> Vec<Value> {
    let script = format!(
        "const fs = (() => {{ {FRAMES} }})(); \
         return fs.length >= {n} && fs.every(f => f.markers > 0 && f.page > 0 && Math.abs(f.frame - f.page) <= 1) && fs"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
    loop {
        let v = b.js(&script);
        if let Some(a) = v.as_array() {
            return a.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: the charts were not drawn and sized: {}",
            b.js(FRAMES)
        );
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
}

/// Clicks a chart switch button inside frame `i` and waits for that chart's title there.
fn switch(b: &Browser, i: usize, chart: &str, title: &str) {
    b.js(&format!(
        "document.querySelectorAll('iframe')[{i}].contentDocument.querySelector('button[data-chart={chart}]').click()"
    ));
    b.wait(
        &format!(
            "const d = document.querySelectorAll('iframe')[{i}].contentDocument; \
             const t = d && d.querySelector('#chart text'); \
             return t && t.textContent.startsWith('{title}') && d.querySelectorAll('#chart circle.marker').length > 0 \
               && d.querySelector('button[data-chart={chart}]').getAttribute('aria-pressed') === 'true'"
        ),
        &format!("frame {i} on the {chart} chart"),
    );
}

/// The notebook as nbconvert's HTML: the viewer's code written once, every chart drawn in its
/// frame and sized to it, the chart switch working inside a `srcdoc` frame.
#[test]
#[ignore = "needs the executed notebook: run through `cargo xtask test`"]
fn the_executed_notebook_draws_every_chart_with_the_viewer_loaded_once() {
    let dir = kit("notebook");
    let html = std::fs::read_to_string(dir.join("roofline-notebook.html")).unwrap();
    assert_eq!(
        html.matches("window.__rooflineViewer = ").count(),
        1,
        "the viewer's code once per notebook"
    );
    assert_eq!(html.matches("<iframe class=\"roofline-frame\"").count(), 2);
    let port = serve(dist(), dir);
    let b = Browser::start();
    b.go(&format!(
        "http://127.0.0.1:{port}/extra/roofline-notebook.html"
    ));
    let frames = wait_frames(&b, 2, "nbconvert's HTML");
    // The trace opens on the time-based chart (nothing for the hierarchical one), the
    // comparison on the one asked for.
    for f in &frames {
        assert!(
            f["title"].as_str().unwrap().starts_with("Time-based"),
            "{f}"
        );
        assert!(f["frame"].as_i64().unwrap() > 400, "{f}");
    }
    assert_eq!(
        b.js("return document.querySelectorAll('.roofline-hint').length"),
        json!(0),
        "the hint for outputs whose scripts did not run is gone"
    );
    b.js("document.querySelectorAll('iframe')[0].scrollIntoView()");
    b.screenshot("notebook-nbconvert");
    // The compare chart switched to the hierarchical one, inside its srcdoc frame.
    switch(&b, 1, "hierarchical", "Hierarchical");
    assert!(
        b.js("return document.querySelectorAll('iframe')[1].contentDocument.querySelectorAll('#chart line.arrow').length")
            .as_u64()
            .unwrap()
            > 0
    );
    wait_frames(&b, 2, "after the switch");
    b.js("document.querySelectorAll('iframe')[1].scrollIntoView()");
    b.screenshot("notebook-nbconvert-compare");
}

/// The executed notebook's HTML outputs rendered as JupyterLab renders a trusted `text/html`
/// output (`@jupyterlab/rendermime`'s `renderHTML`: `innerHTML`, then each script replaced by a
/// copy with its attributes, which runs) and as VS Code does (`notebook-renderers`' `renderHTML`:
/// `innerHTML` on a new element, appended, then each script's `innerText` run in a new script
/// with `type`, `src`, `nonce`, `noModule` and `async` kept, appended and removed). VS Code's are
/// rendered last first, so a chart starts before the output that carries the viewer's code.
#[test]
#[ignore = "needs the executed notebook: run through `cargo xtask test`"]
fn notebook_outputs_draw_in_jupyterlabs_and_vscodes_output_models() {
    let extra = tempfile::tempdir().unwrap();
    std::fs::copy(
        kit("notebook/roofline-notebook.ipynb"),
        extra.path().join("roofline-notebook.ipynb"),
    )
    .unwrap();
    std::fs::write(extra.path().join("models.html"), MODELS).unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    for model in ["jupyterlab", "vscode"] {
        b.go(&format!(
            "http://127.0.0.1:{port}/extra/models.html?model={model}"
        ));
        let n = b.wait(
            "return document.body.dataset.rendered",
            "the outputs rendered",
        );
        assert!(n.as_str().unwrap().parse::<usize>().unwrap() >= 3, "{n}");
        let frames = wait_frames(&b, 2, model);
        assert_eq!(frames.len(), 2, "{model}: {frames:?}");
        assert_eq!(
            b.js("return document.querySelectorAll('.roofline-hint').length"),
            json!(0)
        );
        b.screenshot(&format!("notebook-{model}"));
    }
}

/// The harness of [`notebook_outputs_draw_in_jupyterlabs_and_vscodes_output_models`].
const MODELS: &str = r#"<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>output models</title></head>
<body style="margin: 8px; width: 900px"><div id="out"></div>
<script>
// JupyterLab: @jupyterlab/rendermime renderHTML, trusted output.
function lab(host, html) {
  host.innerHTML = html;
  for (const s of Array.from(host.getElementsByTagName("script"))) {
    if (!s.parentNode) continue;
    const c = document.createElement("script");
    for (const a of Array.from(s.attributes)) c.setAttribute(a.name, a.value);
    c.textContent = s.textContent;
    s.parentNode.replaceChild(c, s);
  }
}
// VS Code: extensions/notebook-renderers renderHTML and domEval.
function vscode(container, html) {
  const element = document.createElement("div");
  element.innerHTML = html;
  container.appendChild(element);
  for (const node of Array.from(element.getElementsByTagName("script"))) {
    const tag = document.createElement("script");
    tag.text = node.innerText;
    for (const key of ["type", "src", "nonce", "noModule", "async"]) {
      const val = node[key] || (node.getAttribute && node.getAttribute(key));
      if (val) tag.setAttribute(key, val);
    }
    element.appendChild(tag).parentNode.removeChild(tag);
  }
}
const model = new URLSearchParams(location.search).get("model");
fetch("roofline-notebook.ipynb").then((r) => r.json()).then((nb) => {
  const outputs = nb.cells.flatMap((c) => c.outputs || [])
    .map((o) => o.data && o.data["text/html"]).filter(Boolean)
    .map((h) => (Array.isArray(h) ? h.join("") : h));
  const slots = outputs.map(() => document.getElementById("out").appendChild(document.createElement("div")));
  const order = outputs.map((_, i) => i);
  if (model === "vscode") order.reverse();
  for (const i of order) (model === "vscode" ? vscode : lab)(slots[i], outputs[i]);
  document.body.dataset.rendered = String(outputs.length);
});
</script></body></html>
"#;

/// The sites built from `docs/embedding.md`'s recipes: in each, the chart drawn inside its
/// iframe, the iframe sized to it by `embed.js`, the link to the full page, the chart switch.
#[test]
#[ignore = "needs the docs sites: run through `cargo xtask test`"]
fn the_docs_sites_draw_the_embedded_chart() {
    let b = Browser::start();
    for (site, root) in [
        ("mkdocs", "sites/mkdocs/site"),
        ("sphinx", "sites/sphinx/_build/html"),
        ("plain", "sites/plain"),
    ] {
        let port = serve(kit(root), kit("sites"));
        b.go(&format!("http://127.0.0.1:{port}/index.html"));
        // A lazy iframe loads once laid out near the viewport (headless Chromium under WebDriver
        // renders nothing until asked).
        b.js("document.querySelector('iframe').scrollIntoView()");
        let frames = wait_frames(&b, 1, site);
        let f = &frames[0];
        assert!(
            f["title"].as_str().unwrap().starts_with("Hierarchical"),
            "{site}: {f}"
        );
        // Sized to the chart, not the 640 px the recipe gives as a fallback.
        assert_ne!(f["frame"], json!(640), "{site}: {f}");
        let link = b.js(
            "const a = document.querySelector('iframe').contentDocument.getElementById('roofline-full'); \
             return a && [a.getAttribute('href'), a.target, a.textContent, a.hidden]",
        );
        assert_eq!(
            link,
            json!([
                "step-full.html",
                "_blank",
                "open in the full viewer ↗",
                false
            ]),
            "{site}"
        );
        // The full page the link opens is there.
        let full = b.js(
            "return fetch('step-full.html').then(r => r.text()).then(t => t.includes('id=\"roofline-manifest\"') && !t.includes('data-embed'))",
        );
        assert_eq!(full, json!(true), "{site}: step-full.html");
        b.js("document.querySelector('iframe').scrollIntoView()");
        b.screenshot(&format!("embed-{site}"));
        switch(&b, 0, "time", "Time-based");
        wait_frames(&b, 1, site);
    }
}

/// The hosted `embed.html` in an iframe of another page with `embed.js`: sized to its chart,
/// its link opening `index.html` on the view shown, hidden while no bundle is named.
#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn the_hosted_embed_page_sizes_itself_and_links_to_the_full_viewer() {
    let extra = tempfile::tempdir().unwrap();
    std::fs::write(
        extra.path().join("host.html"),
        "<!DOCTYPE html><html><body style=\"width: 900px\"><h1>Docs</h1>\
         <iframe src=\"/embed.html?bundle=samples/deepcam-v100-amp-fw.json&amp;baseline=samples/deepcam-v100-fp32-fw.json\" width=\"100%\" height=\"300\" style=\"border: 0\"></iframe>\
         <iframe src=\"/embed.html\" width=\"100%\" height=\"300\" style=\"border: 0\" data-roofline-height=\"fixed\"></iframe>\
         <script src=\"/embed.js\"></script></body></html>",
    )
    .unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    b.go(&format!("http://127.0.0.1:{port}/extra/host.html"));
    let sized = b.wait(
        "const f = document.querySelectorAll('iframe')[0]; const d = f.contentDocument; \
         const h = d && d.querySelector('.app') && d.querySelectorAll('#chart circle.marker').length > 0 \
           && Math.ceil(d.documentElement.getBoundingClientRect().height); \
         return h && Math.abs(f.getBoundingClientRect().height - h) <= 1 && h",
        "the hosted chart sized to its page",
    );
    assert!(sized.as_f64().unwrap() > 500.0, "{sized}");
    // The frame asked to keep its height keeps it; the one without a bundle offers no link.
    assert_eq!(
        b.js("return Math.round(document.querySelectorAll('iframe')[1].getBoundingClientRect().height)"),
        json!(300)
    );
    assert_eq!(
        b.js("return document.querySelectorAll('iframe')[1].contentDocument.getElementById('roofline-full').hidden"),
        json!(true)
    );
    let href = b.js(
        "const d = document.querySelectorAll('iframe')[0].contentDocument; const a = d.getElementById('roofline-full'); \
         a.addEventListener('click', (e) => e.preventDefault()); \
         a.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true})); \
         return [a.hidden, a.getAttribute('href')]",
    );
    assert_eq!(href[0], json!(false));
    let href = href[1].as_str().unwrap();
    assert!(
        href.starts_with("index.html?") && href.contains("bundle=") && href.contains("baseline="),
        "{href}"
    );
    b.screenshot("embed-hosted");
    switch(&b, 0, "time", "Time-based");
    assert!(
        b.js("return document.querySelectorAll('iframe')[0].contentWindow.location.search")
            .as_str()
            .unwrap()
            .contains("chart=time")
    );
}
