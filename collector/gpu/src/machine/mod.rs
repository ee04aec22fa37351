//! `roofline machine`: measures a GPU's ceilings with our own microbenchmarks (kernels in
//! `kernels/`), beside same-run references (the driver's device-to-device copy, cuBLASLt GEMMs)
//! and theoretical figures at the clock observed while measuring and at the datasheet's clock.
//!
//! Phases, in order: device attributes, HBM, L2, L1 and shared memory, CUDA-core FMA peaks,
//! Tensor Core `mma.sync` peaks, cuBLASLt GEMMs, launch overhead, the PCIe host link, NVLink to
//! a peer GPU (where the host has one: the machine's measured link ceilings), the ERT-style
//! sweep. Every
//! ceiling is timed by [`crate::Session::measure`] under the plan of [`crate::timing`]
//! (docs/measurements/methodology.md): its own warm-up, intervals of back-to-back launches
//! between two events (no host
//! launch latency inside), a burst figure (the median interval's rate, `value`, with the
//! intervals' rates as `samples`) and a sustained one after the rate settled (`sustained`), with
//! NVML's SM clock, power and clock-event reasons over both windows where NVML can be read.
//! Every GEMM and `mma.sync` operand, and every buffer a bandwidth kernel or the sweep reads, is
//! bounded random data written on the GPU once per run (`kernels/init.cu`). The cuBLASLt
//! references are the best of several shapes and heuristic algorithms per datapath. Every FLOP
//! and byte counted comes from the launch's work ([`crate::launch`], from the kernel's work
//! formula). A kernel that cannot run on this GPU, or that the SASS audit refused there
//! ([`roofline_kernels::refusal`]), is recorded under `skipped`. A phase that fails stops the
//! run: what was measured before is written in a bundle marked incomplete, and the command exits
//! non-zero.
//!
//! This module only describes what to measure: the GPU work itself is the session's
//! ([`crate::session`]) and the launchers' ([`crate::launch`]).
//!
//! The files, in the order of a run: [`plan`] (how much to measure: buffer sizes, the sweep's
//! grid, the reference GEMM shapes), [`rig`] (the run's session, compiled kernels and notes, and
//! a measurement's figures as ceilings), then one file per family of ceilings — [`memory`]
//! (HBM, L2, L1 and shared memory), [`compute`] (CUDA-core FMA and `mma.sync` peaks), [`gemm`]
//! (the cuBLASLt references), [`overhead`] (launch overhead), [`link`] (the PCIe host link and NVLink),
//! [`sweep`] (the ERT-style sweep) —
//! and [`assemble`] (the theoretical ceilings, the "best reach" marks, the bundle completed and
//! devices combined). This file holds the run itself ([`run`]) and its outcome.
#![forbid(unsafe_code)]

mod assemble;
mod compute;
mod gemm;
mod link;
mod memory;
mod overhead;
mod plan;
mod rig;
pub mod schedule;
mod sweep;

use std::cell::Cell;
use std::time::Instant;

use cudarc::driver::sys::CUdevice_attribute as A;
use roofline_kernels::Source;
use roofline_model::bundle::{Bundle, Device, Machine, Skipped};

use crate::blaslt::BlasLtError;
use crate::report::Report;
use crate::timing::MeasurePlan;
use crate::{DeviceError, Session};

pub use assemble::{KNOWN_SHORT, SHORTFALL, assemble, combine, limit_of};
pub use plan::{Plan, Shape};
pub use sweep::{FLOP_CAP, sweep_repeats};

use rig::Rig;

/// What stopped a run.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// GPU work failed: a driver call, a kernel that could not be compiled or loaded, a launch.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// cuBLASLt failed setting up a GEMM in a way that is not a plain "unsupported here".
    #[error(transparent)]
    BlasLt(#[from] BlasLtError),
}

/// The result of a run: the bundle (complete or not) and the error that stopped it, if any.
pub struct Outcome {
    /// The bundle with every phase measured.
    pub bundle: Bundle,
    /// The phase that failed and why.
    pub failure: Option<(&'static str, MachineError)>,
    /// Wall time of the run, seconds.
    pub wall_s: f64,
}

/// The device's identity and attributes as the bundle records them.
fn describe(s: &Session) -> Device {
    let attr = |a| s.attribute(a).ok().filter(|k| *k > 0);
    let cc = s.compute_capability();
    let mut d = Device::new(format!("gpu{}", s.ordinal()), s.name());
    d.compute_capability = Some(format!("{}.{}", cc.0, cc.1));
    d.sm_count = Some(s.sm_count());
    d.sm_clock_hz = attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).map(|k| f64::from(k) * 1e3);
    d.memory_clock_hz = attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).map(|k| f64::from(k) * 1e3);
    d.memory_bus_width_bits =
        attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH).and_then(|w| u32::try_from(w).ok());
    d.memory_bytes = s.total_mem().map(|b| b as f64);
    d.l2_bytes = Some(s.l2_bytes() as f64).filter(|b| *b > 0.0);
    d.power_limit_w = s.power_limit_w();
    d
}

/// Measures device `ordinal`, telling `report` how far it got (the phases, then the sweep's
/// points). Never panics on a driver failure: the phases measured before a failure are returned
/// in a bundle marked incomplete, with the failure.
///
/// # Errors
/// The session could not start or a microbenchmark could not be compiled.
pub fn run(
    ordinal: usize,
    plan: Plan,
    provenance: roofline_model::bundle::Provenance,
    report: &dyn Report,
) -> Result<Outcome, MachineError> {
    let started = Instant::now();
    let mut session = Session::new(ordinal)?;
    // NVML is sampled during every measurement where it can be read; without it, a note.
    let nvml = session.start_telemetry().err();
    // One seed per run (the clock's nanoseconds), recorded; each buffer gets the next value.
    let seed = crate::launch::fill::run_seed();
    let mut rig = Rig {
        bandwidth: session.compile(Source::Bandwidth)?,
        fma: session.compile(Source::Fma)?,
        mma: session.compile(Source::Mma)?,
        ert: session.compile(Source::Ert)?,
        init: session.compile(Source::Init)?,
        session,
        plan,
        measure: MeasurePlan::of(plan.quick),
        seed: Cell::new(seed),
        notes: Vec::new(),
    };
    if let Some(why) = nvml {
        rig.notes.push(format!(
            "NVML unavailable ({why}): SM clock, power and clock-event reasons not sampled"
        ));
    }
    rig.notes.push(format!(
        "operands: bounded random data written on the GPU once per run (kernels/init.cu), seed {seed:#018x}; the FMA chains run the bounded chaotic map x = x·x + c in registers; the HBM write and shared-memory kernels write constants"
    ));
    let device = describe(&rig.session);
    let mut bundle = Bundle::new(provenance);
    let (driver, cuda) = crate::driver_versions();
    bundle.provenance.driver_version = driver;
    bundle.provenance.cuda_version = cuda;
    bundle.description = Some(format!(
        "roofline machine{}: ceilings of {} measured with our own kernels, same-run references and theoretical figures",
        if plan.quick { " --quick" } else { "" },
        device.name
    ));
    let mut m = Machine {
        device: device.id.clone(),
        chart_figure: Some(roofline_model::bundle::ChartFigure::Sustained),
        ..Machine::default()
    };
    let mut skipped = Vec::new();
    type Phase = fn(&mut Rig, &mut Machine, &mut Vec<Skipped>) -> Result<(), MachineError>;
    let phases: [(&'static str, Phase); 9] = [
        ("HBM", memory::hbm),
        ("L2", memory::l2),
        ("L1 and shared memory", memory::l1_shared),
        ("CUDA-core FMA peaks", compute::fma),
        ("Tensor Core mma.sync peaks", compute::mma),
        ("cuBLASLt reference GEMMs", gemm::cublaslt),
        ("launch overhead", overhead::launch_overhead),
        ("PCIe host link", link::host_link),
        ("NVLink peer copies", link::peer_link),
    ];
    let mut failure = None;
    let overall = report.progress(phases.len() as u64 + 1, "measuring");
    for (name, phase) in phases {
        overall.set_message(name);
        if let Err(e) = phase(&mut rig, &mut m, &mut skipped) {
            failure = Some((name, e));
            break;
        }
        overall.inc(1);
    }
    drop(overall);
    if failure.is_none() {
        let points = sweep::sweep_grid(plan).0.len() as u64;
        let bar = report.progress(points, "ERT-style sweep");
        if let Err(e) = sweep::sweep(&mut rig, &mut m, &mut skipped, bar.as_ref()) {
            failure = Some(("ERT-style sweep", e));
        }
    }
    let wall_s = started.elapsed().as_secs_f64();
    let failed = failure
        .as_ref()
        .map(|(phase, e)| format!("the {phase} phase failed: {e}"));
    let mut bundle = assemble(bundle, device, m, skipped, failed.as_deref(), wall_s);
    bundle.notes.append(&mut rig.notes);
    if crate::tf32_disabled() {
        bundle.notes.push(
            "NVIDIA_TF32_OVERRIDE=0 was set: cuBLASLt used no TF32, so the TF32 reference GEMM ran on CUDA cores and is no Tensor Core figure"
                .into(),
        );
    }
    Ok(Outcome {
        bundle,
        failure,
        wall_s,
    })
}
