//! The in-browser import's speed and memory (issue 31), measured in headless Chromium beside the
//! CLI on the same files in the same run: `cargo xtask bench-import` (which builds `dist/` and
//! the release CLI first) prints a table.
//!
//! Budgets (issue 31): a 35 MB trace opens and draws in under 2 s; a 500 MB one in under 20 s
//! with the tab's memory under 1.5 GB. A benchmark, not a timed test: nothing fails on a budget
//! missed, the table says so.
//!
//! Inputs: the real traces of `../shared/reference/pytorch-traces-hta` (the A100 shapes trace,
//! 1.76 MB once decompressed, as `.json` and as the `.json.gz` it is stored as; the V100
//! ns-resolution trace, 15.4 MB, the largest real one there), and SYNTHETIC traces made by
//! repeating the shapes trace's events ([`roofline_tests::repeat_trace`]) to about 35 MB and
//! 500 MB (and the 500 MB one gzipped), written into a temporary folder, never committed.
//!
//! The browser: a fresh Chromium per run opens the viewer (its first sample drawn), then the
//! trace is chosen with the file input `#file-input` through WebDriver, as a person picking the
//! file from disk would. The time runs from that `change` event (its `timeStamp`) until the
//! progress bar is gone, the bundle select shows the file, the time-based chart's markers and
//! the kernel table are drawn and laid out (a trace recorded without shapes, whose kernels have
//! no F and B, has no markers: there the chart's note that there is nothing to plot); the breakdown comes from the viewer's User Timing
//! marks (`roofline:open:read` when the bundle made by the import has been read into the viewer,
//! `roofline:open:parsed` when it is parsed). The tab's memory: a thread samples, every 50 ms,
//! the proportional set size (`/proc/PID/smaps_rollup`) of every Chromium renderer process this
//! benchmark started (`--type=renderer`; the import's Web Worker runs in the page's renderer),
//! summed, and the table gives its peak and the peak less its value before the file was chosen;
//! the same for every Chromium process (browser, GPU and utility processes too: the blobs of a
//! gzip trace's inflated text live in the browser process). Each run is checked against the CLI's
//! bundle of the same file: the table's rows (kernel names) and their launches summed, after
//! "Show all", are the CLI's, so a run that imported nothing cannot report a fast time.
//!
//! The CLI: `roofline import FILE -o OUT` (the release binary) under GNU `time -v`, its wall time
//! and peak resident memory. Its bundle is read back as a stream: its launches and summed kernel
//! time are the page's, and for a SYNTHETIC trace exactly `copies ×` those of the trace repeated.
//!
//! `ROOFLINE_BENCH_LARGE_RUNS` (default 2) sets the runs of the 500 MB inputs,
//! `ROOFLINE_BENCH_RUNS` (default 3) those of the others, `ROOFLINE_BENCH_SKIP_LARGE=1` leaves
//! out the 500 MB rows and `ROOFLINE_BENCH_SKIP_GZ_LARGE=1` only the gzipped one,
//! `ROOFLINE_BENCH_ONLY=TEXT` measures only the inputs whose file name holds `TEXT`;
//! `ROOFLINE_REFERENCE_TRACES` names the folder of the real traces.

use std::io::{BufRead, BufReader, Read, Write};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use roofline_model::analysis::aggregate::Aggregator;
use roofline_tests::repeat_trace::Repeater;
use roofline_tests::webdriver::{Browser, serve};
use serde_json::{Value, json};

/// The issue's sizes: about 35 MB and 500 MB of trace text.
const MID: u64 = 35_000_000;
const LARGE: u64 = 500_000_000;

/// Installs, before the file is chosen, what records the moment it is (the `change` event's
/// time stamp, on the page's clock), ahead of the viewer's own handler.
const ARM: &str = r"
window.__bench = { t0: null };
window.addEventListener('change', e => {
  if (e.target && e.target.id === 'file-input' && window.__bench.t0 === null) window.__bench.t0 = e.timeStamp;
}, true);
";

/// Waits (at most `arguments[1]` ms this call) until the import of the file named `arguments[0]`
/// is drawn: the progress bar gone, the bundle shown, the kernel table's rows, and markers on the
/// time-based chart (or, with `arguments[2]` false, for a trace whose kernels have no F and B,
/// the chart's note that there is nothing to plot); then lays the page out and returns the times
/// since the file was chosen.
/// Woken by DOM changes (a `MutationObserver`) and every 250 ms, so that waiting costs the page
/// next to nothing while the import runs.
const WAIT: &str = r"
const [name, budget, markers, done] = arguments;
const since = (n, t0) => { const e = performance.getEntriesByName(n).filter(x => x.startTime >= t0); return e.length ? e[e.length - 1].startTime - t0 : null; };
const started = performance.now();
let finished = false;
const check = () => {
  if (finished) return;
  const t0 = window.__bench.t0;
  const sel = document.getElementById('bundle-select');
  const shown = sel && sel.selectedOptions[0] && sel.selectedOptions[0].textContent === name;
  // A refused import: its message, the bundle not opened (the chart's own notes, such as the
  // hierarchical chart's nothing-to-plot before the time-based one is chosen, are not).
  const err = document.querySelector('.error');
  if (t0 !== null && !shown && !document.getElementById('importing') && err && err.textContent
      && performance.now() - t0 > 1000) return finish({ failed: 'the page shows: ' + err.textContent });
  const drawn = markers
    ? document.querySelector('#tab-time.active') && document.querySelector('#chart circle.marker')
    : err && err.textContent.startsWith('nothing to plot');
  const ready = t0 !== null && shown && !document.getElementById('importing') && drawn
    && document.querySelector('#kernel-table tbody tr');
  if (ready) {
    document.body.getBoundingClientRect();
    const t1 = performance.now();
    return finish({
      total: t1 - t0,
      read: since('roofline:open:read', t0),
      parsed: since('roofline:open:parsed', t0),
      markers: document.querySelectorAll('#chart circle.marker').length,
    });
  }
  if (performance.now() - started > budget) {
    const q = s => document.querySelector(s);
    return finish({ pending: {
      shown: sel && sel.selectedOptions[0] && sel.selectedOptions[0].textContent,
      importing: q('#importing') && q('#importing').textContent,
      error: err && err.textContent,
      time_tab: !!q('#tab-time.active'),
      markers: document.querySelectorAll('#chart circle.marker').length,
      rows: document.querySelectorAll('#kernel-table tbody tr').length,
    } });
  }
};
const obs = new MutationObserver(check);
const timer = setInterval(check, 250);
const finish = v => { finished = true; obs.disconnect(); clearInterval(timer); done(v); };
obs.observe(document.body, { childList: true, subtree: true, attributes: true, characterData: true });
check();
";

/// The kernel table, all rows shown: how many, and their launches summed.
const TABLE: &str = r"
const done = arguments[arguments.length - 1];
(async () => {
  const all = document.getElementById('show-all');
  if (all) all.click();
  const t0 = performance.now();
  const total = () => { const m = (document.querySelector('.kernels') || document.body).textContent.match(/Showing \d+ of (\d+) kernels/); return m ? Number(m[1]) : null; };
  while (document.getElementById('show-all') && performance.now() - t0 < 30000) await new Promise(r => setTimeout(r, 50));
  await new Promise(r => setTimeout(r, 100));
  const rows = [...document.querySelectorAll('#kernel-table tbody tr')];
  const launches = rows.reduce((a, r) => a + Number(r.children[3].textContent), 0);
  done({ rows: rows.length, launches, more: total() });
})().catch(e => done({ failed: String(e) }));
";

/// One input of the table.
struct Input {
    /// Its file name (what the page's bundle select shows).
    name: String,
    path: PathBuf,
    /// "real" or "SYNTHETIC (…)".
    what: String,
    bytes: u64,
    /// For a SYNTHETIC trace: the copies of the real trace's events it holds.
    copies: Option<u64>,
    /// Budget: seconds, and the tab's memory in bytes where the issue sets one.
    budget_s: f64,
    budget_mem: Option<u64>,
    runs: usize,
}

/// What a CLI bundle holds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Counts {
    entries: usize,
    launches: u64,
    time_s: f64,
    /// Kernel names (per device): the viewer's table rows.
    names: usize,
    /// Entries with an analytical F and B (from recorded shapes): the time-based chart's points.
    plotted: usize,
}

/// One run of the page.
struct PageRun {
    total_s: f64,
    /// Until the bundle made by the import had been read into the viewer.
    imported_s: f64,
    /// Parsing that bundle.
    parse_s: f64,
    renderer_peak: u64,
    renderer_before: u64,
    all_peak: u64,
    all_before: u64,
}

/// One run of the CLI.
struct CliRun {
    wall_s: f64,
    /// The bundle written, bytes.
    bundle: u64,
    peak_rss: Option<u64>,
    counts: Counts,
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn chromium() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into())
}

fn chromium_version() -> String {
    Command::new(chromium())
        .arg("--version")
        .stderr(Stdio::null())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "Chromium (version unknown)".into())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// Every process descending from this one (chromedriver, Chromium and its children), with
/// whether it is a renderer.
fn descendants() -> Vec<(u32, bool)> {
    let me = std::process::id();
    let mut parent = std::collections::HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The name is in parentheses and may hold spaces: the fields after its last `)`.
        let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        parent.insert(pid, ppid);
    }
    let mut out = Vec::new();
    for &pid in parent.keys() {
        let mut p = pid;
        let mut hops = 0;
        while let Some(&up) = parent.get(&p) {
            if up == me {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                // Chromium rewrites its children's command lines (one string, spaces between).
                let renderer = cmd.windows(15).any(|w| w == b"--type=renderer");
                out.push((pid, renderer));
                break;
            }
            p = up;
            hops += 1;
            if hops > 64 {
                break;
            }
        }
    }
    out
}

/// A process's proportional set size, bytes (0 when it is gone).
fn pss(pid: u32) -> u64 {
    let Ok(f) = std::fs::File::open(format!("/proc/{pid}/smaps_rollup")) else {
        return 0;
    };
    for line in BufReader::new(f).lines().map_while(Result::ok) {
        if let Some(kb) = line.strip_prefix("Pss:") {
            return kb
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .unwrap_or(0)
                * 1024;
        }
    }
    0
}

/// The renderers' PSS summed, and every descendant's (chromedriver's is small and constant).
fn memory_now() -> (u64, u64) {
    let mut r = 0;
    let mut all = 0;
    for (pid, renderer) in descendants() {
        let p = pss(pid);
        all += p;
        if renderer {
            r += p;
        }
    }
    (r, all)
}

/// Samples [`memory_now`] every 50 ms until stopped; keeps the peaks.
struct Sampler {
    stop: Arc<AtomicBool>,
    renderer: Arc<AtomicU64>,
    all: Arc<AtomicU64>,
    thread: std::thread::JoinHandle<usize>,
}

impl Sampler {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let renderer = Arc::new(AtomicU64::new(0));
        let all = Arc::new(AtomicU64::new(0));
        let (s, r, a) = (stop.clone(), renderer.clone(), all.clone());
        let thread = std::thread::spawn(move || {
            let mut n = 0;
            while !s.load(Ordering::Relaxed) {
                let (rn, an) = memory_now();
                r.fetch_max(rn, Ordering::Relaxed);
                a.fetch_max(an, Ordering::Relaxed);
                n += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            n
        });
        Sampler {
            stop,
            renderer,
            all,
            thread,
        }
    }

    /// The peaks (renderers, all) and the number of samples.
    fn finish(self) -> (u64, u64, usize) {
        self.stop.store(true, Ordering::Relaxed);
        let n = self.thread.join().unwrap_or(0);
        let (rn, an) = memory_now();
        (
            self.renderer.load(Ordering::Relaxed).max(rn),
            self.all.load(Ordering::Relaxed).max(an),
            n,
        )
    }
}

fn num(v: &Value, key: &str) -> Result<f64, String> {
    if let Some(e) = v.get("failed") {
        return Err(format!("the page reported: {e}"));
    }
    v.get(key)
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("no {key} in {v}"))
}

/// One run of the page on `input`, checked against the CLI's `expected` bundle.
fn page_run(base: &str, input: &Input, expected: Counts) -> Result<PageRun, String> {
    let b = Browser::start();
    b.go(base);
    b.wait(
        "return document.querySelectorAll('#chart circle.marker').length",
        "the sample chart",
    );
    b.js(ARM);
    // The page settled (its first paint's work done) before the figure it starts from.
    std::thread::sleep(Duration::from_millis(1000));
    let (renderer_before, all_before) = memory_now();
    let sampler = Sampler::start();
    b.choose_file("#file-input", &input.path);
    let deadline = Instant::now() + Duration::from_secs(900);
    let v = loop {
        let v = b.js_async(
            WAIT,
            &[
                json!(input.name),
                json!(60_000),
                json!(expected.plotted > 0),
            ],
        );
        let Some(p) = v.get("pending") else { break v };
        eprintln!("  {}: still waiting: {p}", input.name);
        if Instant::now() > deadline {
            break json!({"failed": "not drawn within 15 minutes"});
        }
    };
    let (renderer_peak, all_peak, samples) = sampler.finish();
    let total = num(&v, "total")? / 1000.0;
    let read = num(&v, "read")? / 1000.0;
    let parsed = num(&v, "parsed")? / 1000.0;
    if samples < 2 && total > 0.2 {
        return Err(format!("only {samples} memory samples in {total:.1} s"));
    }
    let t = b.js_async(TABLE, &[]);
    let rows = num(&t, "rows")?;
    let launches = num(&t, "launches")?;
    #[allow(clippy::cast_precision_loss)]
    let (want_rows, want_launches) = (expected.names as f64, expected.launches as f64);
    if rows != want_rows || launches != want_launches {
        return Err(format!(
            "the page's table has {rows} kernel names and {launches} launches, the CLI's bundle {want_rows} and {want_launches} ({t})"
        ));
    }
    Ok(PageRun {
        total_s: total,
        imported_s: read,
        parse_s: parsed - read,
        renderer_peak,
        renderer_before,
        all_peak,
        all_before,
    })
}

/// A page run, a panic of the WebDriver client (a crashed tab) as an error.
fn page_run_caught(base: &str, input: &Input, expected: Counts) -> Result<PageRun, String> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| page_run(base, input, expected))) {
        Ok(r) => r,
        Err(p) => Err(p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_string()))
            .unwrap_or_else(|| "the browser run panicked".into())),
    }
}

/// What a bundle holds, read as a stream.
fn counts(path: &Path) -> Result<Counts, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut launches = 0u64;
    let mut time_s = 0.0;
    let mut agg = Aggregator::default();
    let mut plotted = 0;
    let s = roofline_model::bundle::stream::read(BufReader::with_capacity(1 << 20, f), &mut |k| {
        plotted += usize::from(k.complexity.is_some());
        launches += k.launches;
        time_s += k.time.total_s;
        agg.push(&k);
    })
    .map_err(|_| format!("{}: not a readable bundle", path.display()))?;
    Ok(Counts {
        entries: s.entries,
        launches,
        time_s,
        names: agg.finish().len(),
        plotted,
    })
}

/// The release CLI.
fn roofline_bin() -> PathBuf {
    if let Some(b) = std::env::var_os("ROOFLINE_BIN") {
        return PathBuf::from(b);
    }
    let repo = roofline_tests::repo();
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| repo.join("target"), |t| repo.join(t))
        .join("release/roofline")
}

/// One run of `roofline import FILE -o OUT`.
fn cli_run(input: &Input, out: &Path) -> Result<CliRun, String> {
    let bin = roofline_bin();
    let gnu_time = Path::new("/usr/bin/time").is_file();
    let mut c = if gnu_time {
        let mut c = Command::new("/usr/bin/time");
        c.arg("-v").arg(&bin);
        c
    } else {
        Command::new(&bin)
    };
    c.arg("import")
        .arg(&input.path)
        .arg("-o")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = c.spawn().map_err(|e| format!("{}: {e}", bin.display()))?;
    // Without GNU time: the child's high-water mark, read until it exits.
    let mut hwm = None;
    let mut stderr = String::new();
    if !gnu_time {
        let pid = child.id();
        while child.try_wait().map_err(|e| e.to_string())?.is_none() {
            if let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status"))
                && let Some(kb) = s
                    .lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                hwm = Some(kb * 1024);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    if let Some(mut e) = child.stderr.take() {
        e.read_to_string(&mut stderr).map_err(|e| e.to_string())?;
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let wall_s = start.elapsed().as_secs_f64();
    if !status.success() {
        return Err(format!(
            "roofline import {}: {stderr}",
            input.path.display()
        ));
    }
    let peak_rss = if gnu_time {
        stderr
            .lines()
            .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes):"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
    } else {
        hwm
    };
    Ok(CliRun {
        wall_s,
        bundle: std::fs::metadata(out).map_or(0, |m| m.len()),
        peak_rss,
        counts: counts(out)?,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    roofline_model::analysis::stats::median_or_nan(&v)
}

#[allow(clippy::cast_precision_loss)]
fn mb(b: u64) -> f64 {
    b as f64 / 1e6
}

/// Writes the inputs into `dir`.
fn inputs(dir: &Path) -> Result<(Vec<Input>, Counts), String> {
    let reference = std::env::var_os("ROOFLINE_REFERENCE_TRACES").map_or_else(
        || roofline_tests::repo().join("../shared/reference/pytorch-traces-hta"),
        PathBuf::from,
    );
    let shapes_gz = reference.join("sampled-rank-0-shapes.json.gz");
    let ns_gz = reference.join("ns-resolution-rank0.json.gz");
    for p in [&shapes_gz, &ns_gz] {
        if !p.is_file() {
            return Err(format!(
                "{} is missing (the real traces of pytorch-traces-hta; ROOFLINE_REFERENCE_TRACES names their folder)",
                p.display()
            ));
        }
    }
    let gunzip = |from: &Path, to: &Path| -> Result<u64, String> {
        let f = std::fs::File::open(from).map_err(|e| format!("{}: {e}", from.display()))?;
        let mut out = std::fs::File::create(to).map_err(|e| format!("{}: {e}", to.display()))?;
        std::io::copy(&mut flate2::read::MultiGzDecoder::new(f), &mut out)
            .map_err(|e| format!("{}: {e}", from.display()))
    };
    let small_runs = env_usize("ROOFLINE_BENCH_RUNS", 3);
    let large_runs = env_usize("ROOFLINE_BENCH_LARGE_RUNS", 2);
    let mut out = Vec::new();
    let input = |name: &str,
                 what: &str,
                 copies: Option<u64>,
                 budget_s: f64,
                 budget_mem: Option<u64>,
                 runs: usize|
     -> Result<Input, String> {
        let path = dir.join(name);
        let bytes = std::fs::metadata(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        Ok(Input {
            name: name.into(),
            path,
            what: what.into(),
            bytes,
            copies,
            budget_s,
            budget_mem,
            runs,
        })
    };
    // The real traces.
    let shapes = "sampled-rank-0-shapes.json";
    gunzip(&shapes_gz, &dir.join(shapes))?;
    out.push(input(
        shapes,
        "real (A100, shapes recorded), decompressed",
        None,
        2.0,
        None,
        small_runs,
    )?);
    std::fs::copy(&shapes_gz, dir.join("sampled-rank-0-shapes.json.gz"))
        .map_err(|e| format!("{}: {e}", shapes_gz.display()))?;
    out.push(input(
        "sampled-rank-0-shapes.json.gz",
        "real (A100, shapes recorded), gzip as stored",
        None,
        2.0,
        None,
        small_runs,
    )?);
    let ns = "ns-resolution-rank0.json";
    gunzip(&ns_gz, &dir.join(ns))?;
    out.push(input(
        ns,
        "real (V100, no shapes), decompressed",
        None,
        2.0,
        None,
        small_runs,
    )?);
    // The SYNTHETIC repeats of the shapes trace.
    let r = Repeater::read(
        std::fs::File::open(&shapes_gz).map_err(|e| format!("{}: {e}", shapes_gz.display()))?,
    )?;
    let one = counts_of_trace(&dir.join(shapes), dir)?;
    let mut sizes = vec![(MID, 2.0, None, small_runs, false)];
    if std::env::var_os("ROOFLINE_BENCH_SKIP_LARGE").is_none() {
        sizes.push((LARGE, 20.0, Some(1_500_000_000), large_runs, false));
        if std::env::var_os("ROOFLINE_BENCH_SKIP_GZ_LARGE").is_none() {
            sizes.push((LARGE, 20.0, Some(1_500_000_000), large_runs, true));
        }
    }
    for (target, budget_s, budget_mem, runs, gz) in sizes {
        let k = r.copies_for(target);
        let name = format!("shapes-x{k}-SYNTHETIC.json{}", if gz { ".gz" } else { "" });
        eprintln!("writing the SYNTHETIC {name}…");
        let f = std::fs::File::create(dir.join(&name)).map_err(|e| format!("{name}: {e}"))?;
        let w = std::io::BufWriter::with_capacity(1 << 20, f);
        let written = if gz {
            let mut enc = flate2::write::GzEncoder::new(w, flate2::Compression::default());
            let written = r.write(k, &mut enc).map_err(|e| format!("{name}: {e}"))?;
            enc.finish()
                .and_then(|mut w| w.flush())
                .map_err(|e| format!("{name}: {e}"))?;
            written
        } else {
            r.write(k, w).map_err(|e| format!("{name}: {e}"))?
        };
        let what = format!(
            "SYNTHETIC: the shapes trace's events ×{k}{}",
            if gz {
                format!(", gzip of {:.0} MB", mb(written.bytes))
            } else {
                String::new()
            }
        );
        out.push(input(&name, &what, Some(k), budget_s, budget_mem, runs)?);
    }
    Ok((out, one))
}

/// The CLI's bundle of one trace.
fn counts_of_trace(path: &Path, dir: &Path) -> Result<Counts, String> {
    let probe = Input {
        name: String::new(),
        path: path.to_path_buf(),
        what: String::new(),
        bytes: 0,
        copies: None,
        budget_s: 0.0,
        budget_mem: None,
        runs: 0,
    };
    Ok(cli_run(&probe, &dir.join("probe.roofline.json"))?.counts)
}

/// One row of the table.
struct Row {
    input: String,
    what: String,
    bytes: u64,
    counts: Counts,
    page: Vec<PageRun>,
    failures: Vec<String>,
    cli: Vec<CliRun>,
    budget_s: f64,
    budget_mem: Option<u64>,
    load: String,
}

fn run() -> Result<Vec<Row>, String> {
    let dist = roofline_tests::repo().join("dist");
    if !dist.join("importer.js").exists() {
        return Err(format!(
            "{} has no built viewer and importer: run `cargo xtask bench-import` (it builds dist/ first)",
            dist.display()
        ));
    }
    if !roofline_bin().is_file() {
        return Err(format!(
            "{} is missing: run `cargo xtask bench-import` (it builds the release CLI first)",
            roofline_bin().display()
        ));
    }
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    eprintln!("writing the inputs into {}…", dir.path().display());
    let (inputs, one) = inputs(dir.path())?;
    let port = serve(dist, dir.path().to_path_buf());
    let base = format!("http://127.0.0.1:{port}/");
    let out = dir.path().join("cli.roofline.json");
    let mut rows = Vec::new();
    let only = std::env::var("ROOFLINE_BENCH_ONLY").unwrap_or_default();
    for input in inputs.iter().filter(|i| i.name.contains(only.as_str())) {
        let mut row = Row {
            input: input.name.clone(),
            what: input.what.clone(),
            bytes: input.bytes,
            counts: Counts {
                entries: 0,
                launches: 0,
                time_s: 0.0,
                names: 0,
                plotted: 0,
            },
            page: Vec::new(),
            failures: Vec::new(),
            cli: Vec::new(),
            budget_s: input.budget_s,
            budget_mem: input.budget_mem,
            load: load_average(),
        };
        for i in 0..input.runs {
            // The CLI first: its bundle is what the page's run is checked against.
            let c = cli_run(input, &out)?;
            if let Some(k) = input.copies {
                #[allow(clippy::cast_precision_loss)]
                let kf = k as f64;
                if c.counts.launches != k * one.launches
                    || c.counts.entries != usize::try_from(k).unwrap_or(0) * one.entries
                    || (c.counts.time_s - kf * one.time_s).abs() > 1e-9 * c.counts.time_s
                    || c.counts.names != one.names
                {
                    return Err(format!(
                        "{}: the CLI's bundle holds {:?}, not {k} × {:?}",
                        input.name, c.counts, one
                    ));
                }
            }
            if i > 0 && c.counts != row.counts {
                return Err(format!(
                    "{}: the CLI's bundle changed between runs",
                    input.name
                ));
            }
            row.counts = c.counts;
            eprintln!(
                "{} run {}: CLI {:.2} s, peak RSS {:.0} MB (load {})",
                input.name,
                i + 1,
                c.wall_s,
                mb(c.peak_rss.unwrap_or(0)),
                load_average()
            );
            row.cli.push(c);
            match page_run_caught(&base, input, row.counts) {
                Ok(p) => {
                    eprintln!(
                        "{} run {}: browser {:.2} s (import until the bundle was read {:.2} s, its parse {:.2} s), renderers' PSS peak {:.0} MB (+{:.0}), all Chromium {:.0} MB (+{:.0})",
                        input.name,
                        i + 1,
                        p.total_s,
                        p.imported_s,
                        p.parse_s,
                        mb(p.renderer_peak),
                        mb(p.renderer_peak.saturating_sub(p.renderer_before)),
                        mb(p.all_peak),
                        mb(p.all_peak.saturating_sub(p.all_before)),
                    );
                    row.page.push(p);
                }
                Err(e) => {
                    eprintln!("{} run {}: the browser failed: {e}", input.name, i + 1);
                    row.failures.push(e);
                }
            }
        }
        rows.push(row);
    }
    Ok(rows)
}

fn main() -> ExitCode {
    let version = chromium_version();
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let rows = match run() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("import-bench: error: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "in-browser import benchmark: {version}, headless, release wasm from dist/; CLI: target/release/roofline; {cores} cores; medians over the runs given\n"
    );
    println!(
        "| input | what | size | kernels (launches) | bundle | runs | browser | CLI | browser / CLI | tab peak (renderers' PSS) | … of which the import | all Chromium, peak rise | CLI peak RSS | budget | met |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|");
    for r in &rows {
        let page = median(r.page.iter().map(|p| p.total_s).collect());
        let cli = median(r.cli.iter().map(|c| c.wall_s).collect());
        let peak = r.page.iter().map(|p| p.renderer_peak).max().unwrap_or(0);
        let rise = r
            .page
            .iter()
            .map(|p| p.renderer_peak.saturating_sub(p.renderer_before))
            .max()
            .unwrap_or(0);
        let all_rise = r
            .page
            .iter()
            .map(|p| p.all_peak.saturating_sub(p.all_before))
            .max()
            .unwrap_or(0);
        let rss = r.cli.iter().filter_map(|c| c.peak_rss).max();
        let budget = match r.budget_mem {
            Some(m) => format!("< {:.0} s, tab < {:.1} GB", r.budget_s, mb(m) / 1000.0),
            None => format!("< {:.0} s", r.budget_s),
        };
        let met = if r.page.is_empty() {
            "NO (no run finished)".to_string()
        } else {
            let time_ok = page < r.budget_s;
            let mem_ok = r.budget_mem.is_none_or(|m| peak < m);
            match (time_ok, mem_ok) {
                (true, true) => "yes".into(),
                (false, true) => "NO (time)".into(),
                (true, false) => "NO (memory)".into(),
                (false, false) => "NO (time and memory)".into(),
            }
        };
        let runs = if r.failures.is_empty() {
            format!("{}", r.page.len())
        } else {
            format!("{} (+{} failed)", r.page.len(), r.failures.len())
        };
        println!(
            "| {} | {} | {:.1} MB | {} ({}) | {:.1} MB | {runs} | {page:.2} s | {cli:.2} s | {:.1} | {:.0} MB | +{:.0} MB | +{:.0} MB | {} | {budget} | {met} |",
            r.input,
            r.what,
            mb(r.bytes),
            r.counts.names,
            r.counts.launches,
            mb(r.cli.last().map_or(0, |c| c.bundle)),
            page / cli,
            mb(peak),
            mb(rise),
            mb(all_rise),
            rss.map_or("?".into(), |b| format!("{:.0} MB", mb(b))),
        );
    }
    println!(
        "\nbrowser breakdown (medians): the import in the worker until the viewer has read the bundle it made / the viewer parsing that bundle / the rest (aggregation, analysis, chart, table, layout); load average at each input's start\n"
    );
    println!("| input | import | parse | rest | load |\n|---|---:|---:|---:|---:|");
    for r in &rows {
        let imp = median(r.page.iter().map(|p| p.imported_s).collect());
        let parse = median(r.page.iter().map(|p| p.parse_s).collect());
        let rest = median(
            r.page
                .iter()
                .map(|p| p.total_s - p.imported_s - p.parse_s)
                .collect(),
        );
        println!(
            "| {} | {imp:.2} s | {parse:.2} s | {rest:.2} s | {} |",
            r.input, r.load
        );
    }
    let failures: Vec<String> = rows
        .iter()
        .flat_map(|r| r.failures.iter().map(move |f| format!("{}: {f}", r.input)))
        .collect();
    if !failures.is_empty() {
        println!("\nbrowser runs that failed:");
        for f in failures {
            println!("- {f}");
        }
    }
    ExitCode::SUCCESS
}
