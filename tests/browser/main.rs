//! The viewer in a real browser: Debian's Chromium driven by chromedriver over the W3C WebDriver
//! protocol (a small std-only client below), against the built site in `dist/` served on
//! 127.0.0.1 by the test itself.
//!
//! These tests are `#[ignore]`d in a plain `cargo test`, because they need `dist/` and Chromium;
//! `cargo xtask test` installs Chromium and chromedriver when missing, builds the site and runs
//! them with `--ignored`. Screenshots are kept in `target/browser-screenshots/` for a person to
//! look at.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use roofline_model::bundle::{Bundle, MemoryLevel};
use roofline_model::ceilings::Ceilings;
use roofline_model::chart::{self, ChartOptions, MarkerKind};
use serde_json::{Value, json};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Serves `dist/` at `/`, the fixtures at `/fixtures/`, and `extra` at `/extra/`.
fn serve(dist: PathBuf, extra: PathBuf) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let fixtures = repo().join("tests/fixtures");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let mut h = String::new();
            while reader.read_line(&mut h).is_ok_and(|n| n > 0) && h.trim() != "" {
                h.clear();
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/");
            let path = path.split('?').next().unwrap_or("/");
            let file = if let Some(rest) = path.strip_prefix("/fixtures/") {
                fixtures.join(rest)
            } else if let Some(rest) = path.strip_prefix("/extra/") {
                extra.join(rest)
            } else if path == "/" {
                dist.join("index.html")
            } else {
                dist.join(path.trim_start_matches('/'))
            };
            let ct = match file.extension().and_then(|e| e.to_str()) {
                Some("html") => "text/html",
                Some("js") => "text/javascript",
                Some("wasm") => "application/wasm",
                Some("json") => "application/json",
                _ => "application/octet-stream",
            };
            let resp = match std::fs::read(&file) {
                Ok(body) if !path.contains("..") => {
                    let mut r = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    r.extend(body);
                    r
                }
                _ => b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found".to_vec(),
            };
            let _ = stream.write_all(&resp);
            let _ = stream.shutdown(std::net::Shutdown::Write);
        }
    });
    port
}

/// One HTTP exchange with chromedriver.
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(60))).ok();
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .map_err(|e| e.to_string())?;
    // chromedriver may keep the connection open: read the head, then exactly the body.
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed before the response head".into());
        }
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    match length {
        Some(len) => {
            while raw.len() < head_end + len {
                let n = s.read(&mut buf).map_err(|e| e.to_string())?;
                if n == 0 {
                    break;
                }
                raw.extend_from_slice(&buf[..n]);
            }
        }
        None => {
            let _ = s.read_to_end(&mut raw);
        }
    }
    let rest = String::from_utf8_lossy(&raw[head_end..]).into_owned();
    let body = if head.contains("transfer-encoding: chunked") {
        dechunk(&rest)
    } else {
        rest
    };
    serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n.min(rest.len())]);
        s = rest.get(n + 2..).unwrap_or("");
    }
    out
}

struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

impl Browser {
    fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver =
            Command::new(std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into()))
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("chromedriver (install Debian's chromium-driver; `cargo xtask test` does)");
        let deadline = Instant::now() + Duration::from_secs(20);
        while http(port, "GET", "/status", None).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        let profile = tempfile::tempdir().unwrap().keep();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--disable-quic", "--no-first-run", "--disable-background-networking",
                         "--disable-component-update", "--disable-sync", "--window-size=1280,1400",
                         format!("--user-data-dir={}", profile.display())]
            }
        }}});
        let r = http(port, "POST", "/session", Some(&caps)).unwrap();
        let session = r["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {r}"))
            .to_string();
        Browser {
            driver,
            port,
            session,
        }
    }

    fn cmd(&self, method: &str, what: &str, body: Option<&Value>) -> Value {
        let path = format!("/session/{}/{what}", self.session);
        let r = http(self.port, method, &path, body).unwrap();
        if r["value"].get("error").is_some() {
            panic!("WebDriver {what}: {}", r["value"]);
        }
        r["value"].clone()
    }

    fn go(&self, url: &str) {
        self.cmd("POST", "url", Some(&json!({ "url": url })));
    }

    fn js(&self, script: &str) -> Value {
        self.cmd(
            "POST",
            "execute/sync",
            Some(&json!({ "script": script, "args": [] })),
        )
    }

    /// Waits until `script` returns something truthy; returns it.
    fn wait(&self, script: &str, what: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let v = self.js(script);
            if !(v.is_null() || v == json!(false) || v == json!(0) || v == json!("")) {
                return v;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn screenshot(&self, name: &str) {
        use base64::Engine;
        let v = self.cmd("GET", "screenshot", None);
        let png = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap_or_default())
            .unwrap();
        let dir = repo().join("target/browser-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    /// Sends a local file path to a file input (the W3C way to "choose" a file).
    fn choose_file(&self, css: &str, path: &Path) {
        let el = self.cmd(
            "POST",
            "element",
            Some(&json!({"using": "css selector", "value": css})),
        );
        let id = el
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap()
            .to_string();
        self.cmd(
            "POST",
            &format!("element/{id}/value"),
            Some(&json!({ "text": path.display().to_string() })),
        );
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = http(
            self.port,
            "DELETE",
            &format!("/session/{}", self.session),
            None,
        );
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

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

const WAIT_CHART: &str = "return document.querySelectorAll('#chart circle.marker').length";

#[test]
#[ignore = "needs dist/ and Chromium: run through `cargo xtask test`"]
fn the_viewer_draws_what_the_model_computes() {
    let extra = tempfile::tempdir().unwrap();
    let port = serve(dist(), extra.path().to_path_buf());
    let b = Browser::start();
    b.go(&format!("http://127.0.0.1:{port}/"));
    let n = b.wait(WAIT_CHART, "the chart");
    b.screenshot("hierarchical");

    // The same scene, computed natively with the viewer's options.
    let bundle = v100();
    let options = ChartOptions {
        ceilings: bundle.machines.first().map(Ceilings::from_machine),
        ..ChartOptions::browser()
    };
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
                && (d[4].as_f64().unwrap() - m.at.0).abs() < 0.01
                && (d[5].as_f64().unwrap() - m.at.1).abs() < 0.01
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

    // Selecting a table row highlights that kernel's markers.
    b.js("document.querySelector('#kernel-table tbody tr').click()");
    b.wait(
        "return document.querySelectorAll('#chart circle.marker.selected').length",
        "the selection",
    );
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
    b.go(&base);
    b.wait(WAIT_CHART, "the chart");
    let bound = "return [...document.querySelectorAll('#kernel-table tbody tr')].find(r => r.title.startsWith('Volta_hmma_implicit_gemm_fprop_fp32_nhwc_128x128')).children[8].textContent";
    assert_eq!(b.js(bound), json!("compute"));
    b.choose_file("#file-input", &slow_path);
    b.wait(
        "return document.querySelectorAll('#machine-select option').length === 3",
        "the second bundle",
    );
    // Back to the V100 example, with the slow machine's ceilings.
    b.js("const s = document.getElementById('bundle-select'); s.value = '0'; s.dispatchEvent(new Event('change'));");
    b.js("const s = document.getElementById('machine-select'); s.value = '1'; s.dispatchEvent(new Event('change'));");
    b.wait(
        &format!("{} === 'hbm'", bound.trim_end_matches(';')),
        "the swapped bound",
    );
    b.screenshot("what-if");

    // The URL carries the state: time chart, a filter, a selection.
    b.go(&format!(
        "{base}?chart=time&filter=volta&kernel=volta_fp16_sgemm_fp16_128x32_nt"
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
    let href = b.js("return location.href");
    assert!(
        href.as_str().unwrap().contains("chart=time")
            && href.as_str().unwrap().contains("filter=volta"),
        "{href}"
    );
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
    b.go(&format!("http://127.0.0.1:{port}/embed.html?chart=time"));
    b.wait(WAIT_CHART, "the embedded chart");
    assert_eq!(
        b.js("return document.querySelectorAll('header, #kernel-table').length"),
        json!(0)
    );
    b.screenshot("embed");
}
