//! The conv2d study: per configuration, direction and precision, our own direct and
//! implicit-GEMM kernels (FP32 arithmetic on CUDA cores), then every cuDNN algorithm with Tensor
//! Cores on and off, the fastest marked, and the algorithm cuDNN's own search picks.
//!
//! Before each is timed, the two tensors its direction reads ([`conv_inputs`]) are filled with
//! bounded random data of the precision ([`super::operand_fill`], scaled for the direction's
//! reduction depth by [`super::operand_scale`]); the one it writes stays zero. cuDNN's search
//! (`cudnnFindConvolution*Algorithm`) runs on buffers it allocates itself.
#![forbid(unsafe_code)]

use roofline_kernels::{DlOp, Fill, Kernel};
use roofline_model::analysis::dl::{self, Conv2d, Direction, Precision};
use roofline_model::bundle::{Datapath, Skipped};

use super::{
    Failure, Measured, Plan, Rig, SuiteError, datapath, mark_fastest, on_off, record, tags,
};
use crate::dnn::DnnError;
use crate::dnn::conv::{ConvAlgo, CudnnConv, find_conv_algorithm};
use crate::launch::Launcher;
use crate::launch::dl::{ConvTensors, OwnConv, conv_inputs, conv_op, reduction_depth};
use crate::report::Progress;

/// How the tensors a direction of `c` reads are filled in precision `p`: the fill kind and scale.
fn operands(c: &Conv2d, dir: Direction, p: Precision) -> (Fill, f32) {
    (
        super::operand_fill(p),
        super::operand_scale(p, reduction_depth(c, dir)),
    )
}

/// Our own convolution kernel of `dir`: direct, or implicit-GEMM (with `conv_sum_*` when the
/// reduction is split), on tensors whose inputs hold real data. Returns the times and the
/// launches per run.
fn own(
    rig: &Rig,
    c: &Conv2d,
    dir: Direction,
    p: Precision,
    implicit_gemm: bool,
) -> Result<(Vec<f64>, u64), Failure> {
    let kernel = Kernel::Dl(conv_op(implicit_gemm, dir), p);
    rig.usable(kernel)?;
    if implicit_gemm {
        rig.usable(Kernel::Dl(DlOp::ConvSum, p))?;
    }
    let tensors = ConvTensors::new(&rig.session, c, p)?;
    let (kind, scale) = operands(c, dir, p);
    for t in conv_inputs(dir) {
        rig.filler().fill_whole(tensors.get(t), kind, scale)?;
    }
    let l = OwnConv::new(&rig.session, &rig.dl, c, dir, p, implicit_gemm, &tensors)?;
    let times = rig.time(kernel.entry(), |s| Ok(l.launch(s)?))?;
    Ok((times, l.launches()))
}

/// A cuDNN failure: out of memory or a refusal skips the configuration; a failed allocation
/// for another reason, or a context that cannot be made current, is fatal.
fn cudnn_failure(e: DnnError) -> Failure {
    if e.is_out_of_memory() {
        return Failure::Skip(format!("out of GPU memory: {e}"));
    }
    match e {
        DnnError::Alloc { .. } | DnnError::Context(_) => Failure::Fatal(SuiteError::Dnn(e)),
        other => Failure::Skip(other.to_string()),
    }
}

/// One cuDNN convolution direction with one algorithm, its inputs holding real data.
fn cudnn(
    rig: &Rig,
    handle: &std::sync::Arc<cudarc::cudnn::Cudnn>,
    c: &Conv2d,
    p: Precision,
    tensor: bool,
    algo: ConvAlgo,
) -> Result<Vec<f64>, Failure> {
    let mut conv =
        CudnnConv::new(handle, rig.session.stream(), c, p, tensor, algo).map_err(cudnn_failure)?;
    let (kind, scale) = operands(c, algo.direction(), p);
    conv.fill_inputs(&rig.filler(), kind, scale)?;
    rig.time(&format!("cuDNN {}", algo.direction().key()), |_| {
        conv.run().map_err(cudnn_failure)
    })
}

/// Runs the conv2d study.
pub(super) fn study(
    rig: &Rig,
    plan: &Plan,
    out: &mut Vec<Measured>,
    skipped: &mut Vec<Skipped>,
    bar: &dyn Progress,
) -> Result<(), SuiteError> {
    for case in dl::conv2d_study() {
        let c = case.op;
        for dir in Direction::ALL {
            for &p in &plan.precisions {
                let cx = c.complexity(p.bytes());
                let base = |imp: &str, algo: &str, tensor: bool| {
                    tags(&[
                        ("study", "conv2d".into()),
                        ("parameter", case.parameter.into()),
                        ("value", case.value.to_string()),
                        ("direction", dir.key().into()),
                        ("precision", p.key().into()),
                        ("tensor", on_off(tensor).into()),
                        ("implementation", imp.into()),
                        ("algorithm", algo.into()),
                    ])
                };
                let label = format!(
                    "conv2d {} {}={} {}",
                    dir.key(),
                    case.parameter,
                    case.value,
                    p.key()
                );
                // Our own kernels: CUDA cores, FP32 arithmetic.
                for (implicit_gemm, algo) in [(false, "direct"), (true, "implicit-GEMM")] {
                    let name = format!("{label} own {algo}");
                    let r = own(rig, &c, dir, p, implicit_gemm).map(|(times, launches)| Measured {
                        name: name.clone(),
                        times,
                        launches,
                        complexity: cx,
                        datapath: Datapath::Fp32,
                        tags: base("own", algo, false),
                    });
                    record(out, skipped, name, r)?;
                }
                let Some(handle) = &rig.cudnn else { continue };
                for &tensor in plan.tensor.settings() {
                    let group_start = out.len();
                    for algo in ConvAlgo::all(dir) {
                        let what =
                            format!("{label} cuDNN {} tensor {}", algo.name(), on_off(tensor));
                        let m = cudnn(rig, handle, &c, p, tensor, algo).map(|times| Measured {
                            name: what.clone(),
                            times,
                            launches: 1,
                            complexity: cx,
                            datapath: datapath(p, tensor),
                            tags: base("cudnn", algo.name(), tensor),
                        });
                        record(out, skipped, what, m)?;
                    }
                    mark_fastest(out, group_start);
                    // Auto-tuning: the algorithm cuDNN's own search picks.
                    if let Some(dnn) = &rig.dnn {
                        let what = format!("{label} cuDNN search tensor {}", on_off(tensor));
                        match find_conv_algorithm(dnn, &c, dir, p, tensor) {
                            Ok(Some((algo, find_s))) => {
                                let picked = out.iter_mut().skip(group_start).find(|m| {
                                    let tag = |k: &str| m.tags.get(k).map(String::as_str);
                                    tag("implementation") == Some("cudnn")
                                        && tag("algorithm") == Some(algo.name())
                                        && tag("tensor") == Some(on_off(tensor))
                                });
                                match picked {
                                    Some(m) => {
                                        m.tags.insert("autotuned".into(), "cudnnFind".into());
                                        m.tags.insert(
                                            "cudnn_find_time_s".into(),
                                            format!("{find_s:e}"),
                                        );
                                    }
                                    None => skipped.push(Skipped {
                                        what,
                                        reason: format!(
                                            "cuDNN's search picked {}, which could not be timed here (see its own entry)",
                                            algo.name()
                                        ),
                                    }),
                                }
                            }
                            Ok(None) => skipped.push(Skipped {
                                what,
                                reason: "cuDNN's search found no algorithm that runs".into(),
                            }),
                            Err(e) if e.is_out_of_memory() => skipped.push(Skipped {
                                what,
                                reason: format!("out of GPU memory: {e}"),
                            }),
                            Err(e @ DnnError::UnknownAlgorithm { .. }) => skipped.push(Skipped {
                                what,
                                reason: e.to_string(),
                            }),
                            Err(e) => skipped.push(Skipped {
                                what,
                                reason: format!("cuDNN refused it: {e}"),
                            }),
                        }
                    }
                }
            }
            bar.inc(1);
        }
    }
    Ok(())
}
