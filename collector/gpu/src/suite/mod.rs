//! `roofline suite`: the time-based roofline study of Wang et al. (2020), run natively: conv2d
//! (cuDNN, every algorithm it offers, and our own direct and implicit-GEMM kernels; [`conv`]),
//! LSTM (cuDNN's RNN, every algorithm, through [`crate::dnn`]; and our own step-by-step
//! implementation: a cuBLASLt GEMM and a fused cell kernel per time step; [`lstm`]) and GEMM
//! (cuBLASLt; [`gemm`]), in FP32, FP16 and BF16, Tensor Cores on and off.
//!
//! Every entry carries the analytical complexity of [`roofline_model::analysis::dl`] (F and the minimum B),
//! its launch count n, the median time of repeats after warm-up (CUDA events,
//! [`crate::Session::time_adaptive`]) with the spread in its tags, and its FLOPs on the
//! datapath the configuration asks for (so the time-based bound uses that datapath's peak). A
//! configuration that cannot run is recorded in `skipped` with why; so is one of our own kernels
//! that cannot run on this GPU or that the SASS audit refused there ([`roofline_kernels::refusal`]).
//!
//! Tags beyond the sweep's: `implementation` (`cudnn`, `own`, `cublaslt`), `algorithm`,
//! `precision`, `tensor`, `direction`; among one configuration's cuDNN algorithms, `fastest` on
//! the one our timing found fastest and, for convolutions, `autotuned = cudnnFind` (with
//! `cudnn_find_time_s`) on the one cuDNN's own search (`cudnnFindConvolution*Algorithm`, what
//! frameworks' auto-tuning calls) picks.
//!
//! Operands: every tensor a timed kernel or cuDNN call reads (GEMM A and B; a convolution's
//! input, filters or output gradient, the two its direction reads; an LSTM's input, weights,
//! bias and initial hidden and cell states) holds bounded random data of its element type
//! ([`operand_fill`]), written on the GPU by `kernels/init.cu` before anything is timed, once per
//! buffer, from the run's seed (recorded in the bundle's notes), as `roofline machine` does:
//! zeros toggle no bits, and a power-limited GPU then keeps a higher clock (10–15% on Hopper's
//! Tensor Cores), so kernels would seem faster than their bound. FP16 operands of reductions
//! longer than [`MAX_K_FP16`] products are scaled down ([`operand_scale`]) so that no sum can
//! overflow FP16. What a kernel only writes, workspaces and integer data (cuDNN's sequence
//! lengths) are left as allocated.
//!
//! This module only describes what to measure: the GPU work itself is the session's
//! ([`crate::session`]), the launchers' ([`crate::launch`]), cuBLASLt's ([`crate::blaslt`]) and
//! cuDNN's ([`crate::dnn`]).
#![forbid(unsafe_code)]

pub mod conv;
pub mod gemm;
pub mod lstm;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use cudarc::cudnn::Cudnn;
use roofline_kernels::{Fill, MAX_K_FP16, NORMAL_BOUND, NORMAL_SCALE, Source};
use roofline_model::analysis::dl::{self, Precision};
use roofline_model::analysis::stats::median_or_nan;
use roofline_model::bundle::{
    Bundle, Complexity, DataSource, Datapath, Device, Kernel, Provenance, Skipped,
};

use crate::blaslt::{BlasLtError, Gemm};
use crate::compiled::Compiled;
use crate::dnn::{DnnError, DnnHandle};
use crate::launch::fill::{Filler, run_seed};
use crate::report::Report;
use crate::session::Adaptive;
use crate::{DeviceError, Session};

/// One sweep of the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Study {
    /// 2D convolutions.
    Conv2d,
    /// LSTM layers.
    Lstm,
    /// Matrix products.
    Gemm,
}

impl Study {
    /// Every study, in the order `all` runs them.
    pub const ALL: [Study; 3] = [Study::Conv2d, Study::Lstm, Study::Gemm];
}

/// Tensor Cores on, off, or both (`--tensor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum TensorMode {
    /// Tensor Core math only.
    On,
    /// CUDA cores only.
    Off,
    /// Both, one entry each.
    Both,
}

impl TensorMode {
    /// The settings to run, Tensor Cores first.
    pub fn settings(self) -> &'static [bool] {
        match self {
            TensorMode::On => &[true],
            TensorMode::Off => &[false],
            TensorMode::Both => &[true, false],
        }
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The sweeps.
    pub studies: Vec<Study>,
    /// The precisions.
    pub precisions: Vec<Precision>,
    /// Tensor Cores on, off or both.
    pub tensor: TensorMode,
}

/// What stopped a suite run.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// GPU work failed: a driver call, our kernels could not be compiled or loaded, a launch.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// cuBLASLt failed in a way that is not "unsupported here".
    #[error(transparent)]
    BlasLt(#[from] BlasLtError),
    /// cuDNN failed in a way that is not "unsupported here".
    #[error(transparent)]
    Dnn(#[from] DnnError),
    /// `--machine` describes other GPUs than this one; checked before anything is compiled.
    #[error("--machine describes {}, not this GPU ({gpu})", described.join(", "))]
    MachineMismatch {
        /// This GPU's name.
        gpu: String,
        /// The names of the devices the `--machine` bundle describes.
        described: Vec<String>,
    },
}

/// The id of the device of `machine` (a `--machine` bundle) that is this GPU, by name.
///
/// # Errors
/// [`SuiteError::MachineMismatch`] when none is.
pub fn machine_device(machine: &Bundle, gpu: &str) -> Result<String, SuiteError> {
    machine
        .devices
        .iter()
        .find(|d| d.name == gpu)
        .map(|d| d.id.clone())
        .ok_or_else(|| SuiteError::MachineMismatch {
            gpu: gpu.to_owned(),
            described: machine.devices.iter().map(|d| d.name.clone()).collect(),
        })
}

/// The datapath a configuration's FLOPs run on: Tensor Cores of its precision (TF32 for FP32)
/// when `tensor`, else FP32 on CUDA cores, whatever the data's precision: every configuration
/// without Tensor Cores computes in FP32 (our own kernels; cuDNN's convolutions with an FP32
/// convolution descriptor and its LSTMs with FP32 math precision, `dnn.rs`; cuBLASLt offers no
/// FP16/BF16 GEMM off Tensor Cores), so its bound is the FP32 peak, not the packed-half one.
pub fn datapath(p: Precision, tensor: bool) -> Datapath {
    match (p, tensor) {
        (Precision::Fp32, true) => Datapath::TensorTf32,
        (Precision::Fp16, true) => Datapath::TensorFp16,
        (Precision::Bf16, true) => Datapath::TensorBf16,
        (_, false) => Datapath::Fp32,
    }
}

/// How an operand of precision `p` is filled: bounded normal values of its element type (the
/// input type of the Tensor Core datapath of `p`, [`Fill::for_datapath`]: FP32, FP16, BF16).
pub fn operand_fill(p: Precision) -> Fill {
    Fill::for_datapath(datapath(p, true))
}

/// FP16's largest finite value.
const FP16_MAX: f64 = 65504.0;

/// The largest sum of `depth` products of two bounded normal values scaled by `scale`:
/// `depth · (2√3 · scale)²`.
fn worst_sum(scale: f32, depth: u64) -> f64 {
    let bound = NORMAL_BOUND * f64::from(scale);
    depth as f64 * bound * bound
}

/// The scale of the bounded normal operands of precision `p` that feed sums of up to `depth`
/// products: [`NORMAL_SCALE`] (values within ±1.73, products within ±3), halved for FP16 until
/// no such sum can exceed FP16's largest finite value (only beyond [`MAX_K_FP16`] products: the
/// backward-filter convolutions, whose reduction runs over N·P·Q). BF16 and FP32 sums cannot
/// overflow. A power of two keeps the values' mantissas as random as before.
pub fn operand_scale(p: Precision, depth: u64) -> f32 {
    let mut scale = NORMAL_SCALE;
    if p == Precision::Fp16 {
        while worst_sum(scale, depth) > FP16_MAX {
            scale /= 2.0;
        }
    }
    scale
}

/// One measured configuration, before it becomes a bundle entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Unique entry name (the aggregation key).
    pub name: String,
    /// Times of the repeats, seconds.
    pub times: Vec<f64>,
    /// Kernel launches per run.
    pub launches: u64,
    /// F and B.
    pub complexity: Complexity,
    /// The datapath its FLOPs run on.
    pub datapath: Datapath,
    /// Sweep parameter, value, algorithm, precision, tensor, direction, …
    pub tags: BTreeMap<String, String>,
}

impl Measured {
    /// The bundle entry: time = median of the repeats (the spread in tags `time_min_s`,
    /// `time_max_s`, `repeats`), `launches` = n, the analytical complexity, and F on its datapath.
    pub fn into_kernel(self, device: &str) -> Kernel {
        let t = median_or_nan(&self.times);
        let mut k = Kernel::new(self.name, t, DataSource::Suite);
        k.device = Some(device.to_owned());
        k.launches = self.launches;
        k.complexity = Some(self.complexity);
        k.flops.set(self.datapath, Some(self.complexity.flops));
        k.tags = self.tags;
        let min = self.times.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self.times.iter().copied().fold(0.0, f64::max);
        k.tags.insert("time_min_s".into(), format!("{min:e}"));
        k.tags.insert("time_max_s".into(), format!("{max:e}"));
        k.tags
            .insert("repeats".into(), self.times.len().to_string());
        k.tags.insert("datapath".into(), self.datapath.key().into());
        k
    }
}

fn tags(pairs: &[(&str, String)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn on_off(tensor: bool) -> &'static str {
    if tensor { "on" } else { "off" }
}

/// How a configuration is timed: one timed warm-up; then, for runs under 50 ms, a second
/// warm-up and 7 timed repeats, for slower ones 3 (so that `suite all` stays within minutes).
pub const SCHEDULE: Adaptive = Adaptive {
    repeats: 7,
    slow_s: 0.05,
    slow_repeats: 3,
};

/// What every study needs: the session, our compiled DL kernels, the operand fills and the
/// run's seed, the cuDNN handles.
struct Rig {
    session: Session,
    dl: Compiled,
    /// `kernels/init.cu`.
    init: Compiled,
    /// The run's seed; every buffer gets the next value.
    seed: Cell<u64>,
    cudnn: Option<Arc<Cudnn>>,
    dnn: Option<DnnHandle>,
}

impl Rig {
    /// The run's operand filler ([`Filler`], shared with `roofline machine`).
    fn filler(&self) -> Filler<'_> {
        Filler::new(&self.session, &self.init, &self.seed)
    }

    /// Fills a GEMM's A and B, of precision `p`, for its reduction of `g.k` products.
    fn fill_gemm(&self, g: &Gemm, p: Precision, depth: u64) -> Result<(), DeviceError> {
        let (kind, scale) = (operand_fill(p), operand_scale(p, depth));
        for (buf, bytes) in g.operands() {
            self.filler()
                .fill_scaled(buf, kind, bytes / kind.value_bytes(), scale)?;
        }
        Ok(())
    }

    /// Times `run` on [`SCHEDULE`].
    fn time(
        &self,
        what: &str,
        run: impl FnMut(&Session) -> Result<(), Failure>,
    ) -> Result<Vec<f64>, Failure> {
        self.session.time_adaptive(what, SCHEDULE, run)
    }

    /// Skips a configuration that needs `kernel` when it cannot, or must not, run here.
    fn usable(&self, kernel: roofline_kernels::Kernel) -> Result<(), Failure> {
        match roofline_kernels::refusal(kernel, self.session.compute_capability()) {
            Some(reason) => Err(Failure::Skip(reason)),
            None => Ok(()),
        }
    }
}

/// A configuration either cannot run here (skipped, with why) or broke the device (fatal).
enum Failure {
    Skip(String),
    Fatal(SuiteError),
}

impl From<SuiteError> for Failure {
    fn from(e: SuiteError) -> Self {
        Failure::Fatal(e)
    }
}

impl From<DeviceError> for Failure {
    /// Running out of device memory skips the configuration, and so does a shape whose grid is
    /// beyond CUDA's limits (nothing was launched); any other failure is fatal, a launcher's
    /// refused arguments included (a programming error, never a skip).
    fn from(e: DeviceError) -> Self {
        if e.is_out_of_memory() {
            Failure::Skip(format!("out of GPU memory: {e}"))
        } else if matches!(e, DeviceError::GridLimits { .. }) {
            Failure::Skip(e.to_string())
        } else {
            Failure::Fatal(e.into())
        }
    }
}

/// The result of a run.
pub struct Outcome {
    /// The bundle (incomplete if a fatal error stopped the run).
    pub bundle: Bundle,
    /// The error that stopped it.
    pub failure: Option<SuiteError>,
    /// Wall time, seconds.
    pub wall_s: f64,
}

fn record(
    out: &mut Vec<Measured>,
    skipped: &mut Vec<Skipped>,
    what: String,
    result: Result<Measured, Failure>,
) -> Result<(), SuiteError> {
    match result {
        Ok(m) => out.push(m),
        Err(Failure::Skip(reason)) => skipped.push(Skipped { what, reason }),
        Err(Failure::Fatal(e)) => return Err(e),
    }
    Ok(())
}

/// Marks the fastest of `out[from..]` (by median time) with `fastest = true`.
fn mark_fastest(out: &mut [Measured], from: usize) {
    let best = out
        .iter()
        .enumerate()
        .skip(from)
        .map(|(i, m)| (median_or_nan(&m.times), i))
        .filter(|(t, _)| t.is_finite())
        .min_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((_, i)) = best {
        out[i].tags.insert("fastest".into(), "true".into());
    }
}

const NO_CUDNN: &str = "libcudnn could not be loaded (install cuDNN or add it to LD_LIBRARY_PATH)";

/// Runs the plan on device `ordinal`. `machine` (from `--machine`) provides the device entry and
/// ceilings; it must describe this GPU, which is checked before anything is compiled. Fatal
/// errors stop the run and the bundle so far is returned marked incomplete. Each study's
/// progress goes to `report`.
///
/// # Errors
/// Setting up the context or compiling the kernels failed; a `--machine` for another GPU.
pub fn run(
    ordinal: usize,
    plan: &Plan,
    provenance: Provenance,
    machine: Option<Bundle>,
    report: &dyn Report,
) -> Result<Outcome, SuiteError> {
    let started = Instant::now();
    let session = Session::new(ordinal)?;
    let name = session.name().to_owned();
    let (mut bundle, device_id) = match machine {
        Some(mut m) => {
            let id = machine_device(&m, &name)?;
            m.provenance = provenance;
            m.kernels.clear();
            m.skipped.clear();
            m.notes = vec!["devices and machines copied from the --machine bundle".into()];
            (m, id)
        }
        None => {
            let cc = session.compute_capability();
            let mut b = Bundle::new(provenance);
            let mut d = Device::new(format!("gpu{ordinal}"), name.clone());
            d.compute_capability = Some(format!("{}.{}", cc.0, cc.1));
            b.devices.push(d);
            b.notes.push(
                "no --machine given: the bundle has no ceilings, so no time-based bound; merge a \
                 `roofline machine` bundle or open one beside it in the viewer"
                    .into(),
            );
            (b, format!("gpu{ordinal}"))
        }
    };
    let mut skipped = Vec::new();
    let cudnn_present = crate::dnn::present();
    let cudnn = if cudnn_present {
        match Cudnn::new(Arc::clone(session.stream())) {
            Ok(h) => Some(h),
            Err(e) => {
                skipped.push(Skipped {
                    what: "every cuDNN convolution".into(),
                    reason: format!("cuDNN could not start: {:?}", e.0),
                });
                None
            }
        }
    } else {
        skipped.push(Skipped {
            what: "every cuDNN convolution".into(),
            reason: NO_CUDNN.into(),
        });
        None
    };
    let dnn = if cudnn_present {
        match DnnHandle::new(Arc::clone(session.stream())) {
            Ok(h) => Some(h),
            Err(e) => {
                skipped.push(Skipped {
                    what: "every cuDNN LSTM and convolution search".into(),
                    reason: format!("cuDNN could not start: {e}"),
                });
                None
            }
        }
    } else {
        skipped.push(Skipped {
            what: "every cuDNN LSTM and convolution search".into(),
            reason: NO_CUDNN.into(),
        });
        None
    };
    // One seed per run (the clock's nanoseconds), recorded; each buffer gets the next value.
    let seed = run_seed();
    let rig = Rig {
        dl: session.compile(Source::Dl)?,
        init: session.compile(Source::Init)?,
        seed: Cell::new(seed),
        session,
        cudnn,
        dnn,
    };
    bundle.description = Some(format!(
        "roofline suite on {name}: the time-based roofline study (Wang et al. 2020)"
    ));
    let mut measured = Vec::new();
    let mut failure = None;
    for study in &plan.studies {
        let (len, title) = match study {
            Study::Conv2d => (dl::conv2d_study().len() * 3, "conv2d"),
            Study::Lstm => (dl::lstm_study().len(), "LSTM"),
            Study::Gemm => (dl::gemm_study().len(), "GEMM"),
        };
        let bar = report.progress(len as u64, title);
        let r = match study {
            Study::Conv2d => conv::study(&rig, plan, &mut measured, &mut skipped, bar.as_ref()),
            Study::Lstm => lstm::study(&rig, plan, &mut measured, &mut skipped, bar.as_ref()),
            Study::Gemm => gemm::study(&rig, plan, &mut measured, &mut skipped, bar.as_ref()),
        };
        drop(bar);
        if let Err(e) = r {
            failure = Some(e);
            break;
        }
    }
    let wall_s = started.elapsed().as_secs_f64();
    bundle.kernels = measured
        .into_iter()
        .map(|m| m.into_kernel(&device_id))
        .collect();
    bundle.skipped.extend(skipped);
    bundle
        .notes
        .push(format!("wall time of the run: {wall_s:.1} s"));
    bundle.notes.push(operands_note(seed));
    bundle.notes.push(
        "cuDNN entries (convolutions and LSTMs) count 1 launch per call, a lower bound: most \
         algorithms launch several kernels (an LSTM's standard algorithm one or more per time \
         step); profile them to know n"
            .into(),
    );
    // cuBLAS and cuDNN read this variable: at 0 they never use TF32, and the FP32 "tensor on"
    // entries (filed under the TF32 datapath) ran on CUDA cores.
    if crate::tf32_disabled() {
        bundle.notes.push(
            "NVIDIA_TF32_OVERRIDE=0 was set: cuBLAS and cuDNN used no TF32, so the FP32 entries \
             with tensor on ran on CUDA cores, not on the TF32 Tensor Cores they are bound by"
                .into(),
        );
    }
    if let Some(e) = &failure {
        bundle.notes.push(format!("incomplete: {e}"));
    }
    bundle.complete = failure.is_none();
    Ok(Outcome {
        bundle,
        failure,
        wall_s,
    })
}

/// The bundle's note on the operands, with the run's seed.
fn operands_note(seed: u64) -> String {
    format!(
        "operands: bounded random data written on the GPU (kernels/init.cu) before anything is \
         timed, once per buffer, into every tensor a timed kernel or cuDNN call reads, from the \
         run's seed {seed:#018x}; FP16 operands of reductions longer than {MAX_K_FP16} products \
         (backward-filter convolutions) scaled down by powers of two so that no sum can overflow \
         FP16; outputs, workspaces and cuDNN's sequence lengths left as allocated, and cuDNN's \
         own algorithm search runs on buffers it allocates"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_map_to_datapaths() {
        assert_eq!(datapath(Precision::Fp32, true), Datapath::TensorTf32);
        // FP16/BF16 data without Tensor Cores is computed in FP32 (cuDNN's FP32 descriptors).
        assert_eq!(datapath(Precision::Bf16, false), Datapath::Fp32);
        assert_eq!(datapath(Precision::Fp16, false), Datapath::Fp32);
        assert_eq!(TensorMode::Both.settings(), [true, false]);
        assert_eq!(TensorMode::Off.settings(), [false]);
    }

    /// A `--machine` bundle for another GPU is refused by name, listing what it describes.
    #[test]
    fn a_machine_for_another_gpu_is_refused() {
        let mut m = Bundle::new(Provenance::default());
        m.devices.push(Device::new("gpu0", "NVIDIA H100 80GB HBM3"));
        m.devices.push(Device::new("gpu1", "NVIDIA A100-SXM4-40GB"));
        assert_eq!(machine_device(&m, "NVIDIA A100-SXM4-40GB").unwrap(), "gpu1");
        let e = machine_device(&m, "Tesla V100-SXM2-16GB").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--machine describes NVIDIA H100 80GB HBM3, NVIDIA A100-SXM4-40GB, not this GPU \
             (Tesla V100-SXM2-16GB)"
        );
        assert!(matches!(e, SuiteError::MachineMismatch { .. }));
        let empty = Bundle::new(Provenance::default());
        assert!(machine_device(&empty, "x").is_err());
    }

    #[test]
    fn the_fastest_of_a_group_is_marked() {
        let m = |name: &str, times: Vec<f64>| Measured {
            name: name.into(),
            times,
            launches: 1,
            complexity: dl::Gemm { m: 1, n: 1, k: 1 }.complexity(4.0),
            datapath: Datapath::Fp32,
            tags: BTreeMap::new(),
        };
        let mut out = vec![
            m("before", vec![1e-9]),
            m("a", vec![3.0, 2.0, 1.0]),
            m("b", vec![1.5]),
            m("c", vec![]),
        ];
        mark_fastest(&mut out, 1);
        let marked: Vec<_> = out
            .iter()
            .filter(|m| m.tags.contains_key("fastest"))
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(marked, ["b"]);
    }

    /// Fixed unit-test inputs (not measurements): an entry carries median time, n, F on its
    /// datapath, B, and the spread; the time-based analysis then bounds it.
    #[test]
    fn measured_entries_become_bounded_kernels() {
        use roofline_model::bundle::{
            BandwidthCeiling, ComputeCeiling, LaunchOverhead, Machine, MemoryLevel, Method,
        };
        let g = dl::Gemm {
            m: 1024,
            n: 1024,
            k: 1024,
        };
        let m = Measured {
            name: "gemm 1024³ fp16 tensor on cuBLASLt".into(),
            times: vec![3e-5, 1e-5, 2e-5],
            launches: 1,
            complexity: g.complexity(2.0),
            datapath: Datapath::TensorFp16,
            tags: tags(&[("study", "gemm".into())]),
        };
        let k = m.into_kernel("gpu0");
        assert_eq!(k.time.total_s, 2e-5);
        assert_eq!(
            k.flops.get(Datapath::TensorFp16),
            Some(2.0 * 1024f64.powi(3))
        );
        assert_eq!(k.tags["repeats"], "3");
        assert_eq!(k.tags["time_min_s"], "1e-5");
        let mut b = Bundle::new(Provenance::default());
        b.devices.push(Device::new("gpu0", "Unit-test GPU"));
        let mut mach = Machine {
            device: "gpu0".into(),
            ..Machine::default()
        };
        mach.compute.push(ComputeCeiling::new(
            Datapath::TensorFp16,
            500e12,
            Method::Empirical,
        ));
        mach.bandwidth.push(BandwidthCeiling::new(
            MemoryLevel::Hbm,
            3e12,
            Method::Empirical,
        ));
        mach.launch_overhead = Some(LaunchOverhead::new(4e-6, Method::Empirical));
        b.machines.push(mach);
        b.kernels.push(k);
        roofline_model::validate(&b).unwrap();
        let a = roofline_model::analysis::analyze(&b, &b.kernels);
        let bound = a[0].time_bound.unwrap();
        // F / P = 2^31 / 5e14 = 4.3 µs; B / BW = 6 MiB / 3e12 = 2.1 µs; n·t_launch = 4 µs.
        assert!((bound.bound_s - 2.0 * 1024f64.powi(3) / 500e12).abs() < 1e-12);
        assert_eq!(
            bound.region,
            roofline_model::analysis::time_based::Region::Compute
        );
    }

    /// Each precision's operands get bounded normal values of its own element type.
    #[test]
    fn operands_are_filled_in_their_element_type() {
        assert_eq!(operand_fill(Precision::Fp32), Fill::F32);
        assert_eq!(operand_fill(Precision::Fp16), Fill::F16);
        assert_eq!(operand_fill(Precision::Bf16), Fill::Bf16);
        for p in Precision::ALL {
            let f = operand_fill(p);
            assert_eq!(f.value_bytes() as f64, p.bytes(), "{p:?}");
            assert_eq!(
                f.operands(),
                roofline_model::bundle::Operands::BoundedNormal,
                "{p:?}"
            );
        }
    }

    /// Every reduction the suite runs, against FP16's range: `depth · (2√3 · scale)²` stays
    /// within 65504 for FP16 operands, at the machine's scale wherever the depth allows it
    /// (≤ `MAX_K_FP16` = 21,834). What the study holds: GEMMs to K = 16,384 and LSTM steps to
    /// input + hidden = 160, and convolutions to 5,184 forward (R·S·C, 9×9×64) and backward-data
    /// (R·S·K), are within it; every backward-filter convolution (N·P·Q, 23,104 at stride 3 to
    /// 200,704 at stride 1 or batch 64) is not, and its FP16 operands are scaled by 0.25 (up to
    /// 87,338 products) or 0.125.
    #[test]
    fn no_reduction_of_the_suite_can_overflow_fp16() {
        use crate::launch::dl::reduction_depth;
        let mut depths: Vec<(&str, u64)> = Vec::new();
        depths.extend(dl::gemm_study().iter().map(|c| ("gemm", c.op.k)));
        depths.extend(
            dl::lstm_study()
                .iter()
                .map(|c| ("lstm", c.op.step_gemm().k)),
        );
        for c in dl::conv2d_study() {
            for d in dl::Direction::ALL {
                depths.push((d.key(), reduction_depth(&c.op, d)));
            }
        }
        let max = |what: &str| {
            depths
                .iter()
                .filter(|(w, _)| *w == what)
                .map(|(_, k)| *k)
                .max()
        };
        let min = |what: &str| {
            depths
                .iter()
                .filter(|(w, _)| *w == what)
                .map(|(_, k)| *k)
                .min()
        };
        let fwd = dl::Direction::Forward.key();
        let bwd_data = dl::Direction::BackwardData.key();
        let bwd_filter = dl::Direction::BackwardFilter.key();
        assert_eq!(max("gemm"), Some(16_384));
        assert_eq!(max("lstm"), Some(160));
        assert_eq!(max(fwd), Some(5_184));
        assert_eq!(max(bwd_data), Some(5_184));
        assert_eq!(min(bwd_filter), Some(23_104));
        assert_eq!(max(bwd_filter), Some(200_704));
        for &(what, depth) in &depths {
            for p in Precision::ALL {
                let scale = operand_scale(p, depth);
                if p == Precision::Fp16 {
                    assert!(worst_sum(scale, depth) <= FP16_MAX, "{what} {depth}");
                }
                // The machine's scale wherever it is safe, and only a power of two below it.
                let within = depth <= MAX_K_FP16;
                assert_eq!(
                    scale == NORMAL_SCALE,
                    within || p != Precision::Fp16,
                    "{what} {depth} {p:?}"
                );
                assert_eq!((NORMAL_SCALE / scale).log2().fract(), 0.0, "{what} {depth}");
                assert_eq!(within, what != bwd_filter, "{what} {depth}");
            }
        }
        assert_eq!(operand_scale(Precision::Fp16, MAX_K_FP16), NORMAL_SCALE);
        assert_eq!(operand_scale(Precision::Fp16, MAX_K_FP16 + 1), 0.25);
        assert_eq!(operand_scale(Precision::Fp16, 50_176), 0.25);
        assert_eq!(operand_scale(Precision::Fp16, 87_338), 0.25);
        assert_eq!(operand_scale(Precision::Fp16, 87_339), 0.125);
        assert_eq!(operand_scale(Precision::Fp16, 200_704), 0.125);
        assert_eq!(operand_scale(Precision::Bf16, 200_704), NORMAL_SCALE);
        assert!(operands_note(0x1234).contains("seed 0x0000000000001234"));
    }
}
