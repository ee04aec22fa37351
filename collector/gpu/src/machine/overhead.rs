//! The launch overhead: an empty kernel's launch to completion (host wall time), back-to-back
//! launches, and launches replayed from a CUDA graph.

use std::time::Instant;

use roofline_kernels::Kernel;
use roofline_model::analysis::stats::median_or_nan;
use roofline_model::bundle::{LaunchOverhead, Machine, Method, Skipped};

use crate::launch::Launcher;
use crate::launch::micro::Empty;

use super::MachineError;
use super::rig::Rig;

/// Launch overhead: launch-to-completion of an empty kernel (host wall time), back-to-back
/// launches, and launches replayed from a CUDA graph.
pub(super) fn launch_overhead(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
) -> Result<(), MachineError> {
    if rig.refused(
        Kernel::Empty,
        "launch overhead (empty kernel)".into(),
        skipped,
    ) {
        return Ok(());
    }
    let empty = Empty::new(&rig.fma)?;
    let s = &rig.session;
    let n = if rig.plan.quick { 200 } else { 1000 };
    for _ in 0..50 {
        empty.launch(s)?;
    }
    s.synchronize("synchronizing")?;
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        empty.launch(s)?;
        s.synchronize("synchronizing after an empty kernel")?;
        samples.push(t0.elapsed().as_secs_f64());
    }
    let batch = if rig.plan.quick { 2000 } else { 10_000 };
    let t0 = Instant::now();
    for _ in 0..batch {
        empty.launch(s)?;
    }
    s.synchronize("synchronizing after back-to-back launches")?;
    let back_to_back = t0.elapsed().as_secs_f64() / f64::from(batch);
    let graph_n = 1000u32;
    let drv = crate::session::driver;
    s.stream()
        .begin_capture(
            cudarc::driver::sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
        )
        .map_err(drv("beginning graph capture"))?;
    for _ in 0..graph_n {
        empty.launch(s)?;
    }
    let graph = s
        .stream()
        .end_capture(cudarc::driver::sys::CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)
        .map_err(drv("ending graph capture"))?;
    let graph_s = match graph {
        Some(g) => {
            g.launch().map_err(drv("launching the graph"))?;
            s.synchronize("synchronizing")?;
            let t0 = Instant::now();
            g.launch().map_err(drv("launching the graph"))?;
            s.synchronize("synchronizing after the graph")?;
            Some(t0.elapsed().as_secs_f64() / f64::from(graph_n))
        }
        None => None,
    };
    let mut l = LaunchOverhead::new(median_or_nan(&samples), Method::Empirical);
    l.back_to_back_s = Some(back_to_back);
    l.graph_s = graph_s;
    l.samples = samples;
    l.implementation = Some("empty kernel, host wall time from launch to stream synchronize (median); back-to-back: 10,000 launches then one synchronize; graph: 1,000 launches captured in one CUDA graph".into());
    m.launch_overhead = Some(l);
    Ok(())
}
