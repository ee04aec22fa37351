//! A small std-only W3C WebDriver client for Debian's chromedriver, and a static file server for
//! the built site: what the browser tests and the viewer benchmark drive Chromium with.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Serves `dist/` at `/`, the fixtures at `/fixtures/`, and `extra` at `/extra/`.
pub fn serve(dist: PathBuf, extra: PathBuf) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let fixtures = crate::repo().join("tests/fixtures");
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
                Some("css") => "text/css",
                Some("wasm") => "application/wasm",
                Some("json") => "application/json",
                Some("svg") => "image/svg+xml",
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
///
/// # Errors
/// A connection or protocol failure, as text.
pub fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(180))).ok();
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

/// A Chromium session driven through chromedriver.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session.
    pub fn start() -> Self {
        Self::start_with(false)
    }

    /// Starts a session; with `timeline`, Chromium records its DevTools timeline (the
    /// `devtools.timeline` trace categories) into chromedriver's performance log, which
    /// [`Browser::timeline`] reads.
    pub fn start_with(timeline: bool) -> Self {
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
        let mut caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--disable-quic", "--no-first-run", "--disable-background-networking",
                         "--disable-component-update", "--disable-sync", "--window-size=1280,1400",
                         format!("--user-data-dir={}", profile.display())]
            }
        }}});
        if timeline {
            let m = &mut caps["capabilities"]["alwaysMatch"];
            m["goog:loggingPrefs"] = json!({"performance": "ALL"});
            m["goog:chromeOptions"]["perfLoggingPrefs"] = json!({
                "enableNetwork": false,
                "enablePage": false,
                "traceCategories": "devtools.timeline,disabled-by-default-devtools.timeline,blink.user_timing,v8"
            });
        }
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

    /// One WebDriver command; panics on a WebDriver error (tests only).
    pub fn cmd(&self, method: &str, what: &str, body: Option<&Value>) -> Value {
        let path = format!("/session/{}/{what}", self.session);
        let r = http(self.port, method, &path, body).unwrap();
        if r["value"].get("error").is_some() {
            panic!("WebDriver {what}: {}", r["value"]);
        }
        r["value"].clone()
    }

    /// Navigates.
    pub fn go(&self, url: &str) {
        self.cmd("POST", "url", Some(&json!({ "url": url })));
    }

    /// Runs a script and returns its value.
    pub fn js(&self, script: &str) -> Value {
        self.cmd(
            "POST",
            "execute/sync",
            Some(&json!({ "script": script, "args": [] })),
        )
    }

    /// Runs an asynchronous script: its last argument is the callback that returns the value.
    /// Scripts may run for up to two minutes.
    pub fn js_async(&self, script: &str, args: &[Value]) -> Value {
        self.cmd("POST", "timeouts", Some(&json!({ "script": 300_000 })));
        self.cmd(
            "POST",
            "execute/async",
            Some(&json!({ "script": script, "args": args })),
        )
    }

    /// Waits until `script` returns something truthy; returns it.
    pub fn wait(&self, script: &str, what: &str) -> Value {
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

    /// Saves a screenshot under `browser-screenshots/` in the target directory
    /// (`$CARGO_TARGET_DIR`, else the workspace's `target/`).
    pub fn screenshot(&self, name: &str) {
        use base64::Engine;
        let v = self.cmd("GET", "screenshot", None);
        let png = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap_or_default())
            .unwrap();
        let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
            || crate::repo().join("target"),
            |t| crate::repo().join(t), // an absolute path stays as it is
        );
        let dir = target.join("browser-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    /// Lets the page's downloads land in `dir` without asking (Chromium's DevTools command
    /// `Browser.setDownloadBehavior`, through chromedriver).
    pub fn allow_downloads(&self, dir: &Path) {
        self.cmd(
            "POST",
            "goog/cdp/execute",
            Some(&json!({
                "cmd": "Browser.setDownloadBehavior",
                "params": {"behavior": "allow", "downloadPath": dir.display().to_string()}
            })),
        );
    }

    /// One Chrome DevTools Protocol command (through chromedriver's `goog/cdp/execute`).
    pub fn cdp(&self, cmd: &str, params: &Value) -> Value {
        self.cmd(
            "POST",
            "goog/cdp/execute",
            Some(&json!({ "cmd": cmd, "params": params })),
        )
    }

    /// The timeline events recorded since the last call (a session started with
    /// [`Browser::start_with`]`(true)`): Chrome trace events (`name`, `ph`, `ts`, `dur` in µs,
    /// `pid`, `tid`).
    pub fn timeline(&self) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let log = self.cmd("POST", "se/log", Some(&json!({"type": "performance"})));
            let Some(entries) = log.as_array().filter(|a| !a.is_empty()) else {
                return events;
            };
            for e in entries {
                let Some(m) = e["message"]
                    .as_str()
                    .and_then(|m| serde_json::from_str::<Value>(m).ok())
                else {
                    continue;
                };
                let m = &m["message"];
                if m["method"] == "Tracing.dataCollected" {
                    match m["params"].get("value").and_then(Value::as_array) {
                        Some(v) => events.extend(v.iter().cloned()),
                        None => events.push(m["params"].clone()),
                    }
                }
            }
        }
    }

    /// Sends a local file path to a file input (the W3C way to "choose" a file).
    pub fn choose_file(&self, css: &str, path: &Path) {
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
