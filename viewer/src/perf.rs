//! User Timing marks and measures (`performance.mark` / `performance.measure`) around the
//! viewer's work, so that the browser's performance timeline shows where time goes: reading and
//! parsing a bundle, analysing its kernels and building the chart's scene. The viewer benchmark
//! (`cargo xtask bench-viewer`) reads them; they cost a few microseconds each.
//!
//! Names: `roofline:open:start|read|parsed` (marks), `roofline:aggregate`, `roofline:analysis`
//! (every kernel against the ceilings in use) and `roofline:scene` (the chart) (measures).

/// Records a mark on the performance timeline (nothing happens where there is no timeline).
pub fn mark(name: &str) {
    if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
        let _ = p.mark(name);
    }
}

/// Runs `f` between two marks and records the span as a measure named `name`.
pub fn span<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let Some(p) = web_sys::window().and_then(|w| w.performance()) else {
        return f();
    };
    let start = format!("{name}:start");
    let _ = p.mark(&start);
    let out = f();
    let _ = p.measure_with_start_mark(name, &start);
    out
}
