//! The LSTM study: per configuration, precision and Tensor Core setting, our own step-by-step
//! LSTM (per time step a cuBLASLt GEMM into FP32 gates, then the fused cell kernel of `dl.cu`)
//! and cuDNN's RNN with every algorithm, the fastest of cuDNN's marked.
//!
//! What each reads holds bounded random data before it is timed: the input, the weights, the
//! bias and the initial hidden and cell states ([`super::operand_fill`] in the storage
//! precision; our cell's bias and cell state are FP32). The outputs, cuDNN's workspace and its
//! sequence lengths are left as allocated.
#![forbid(unsafe_code)]

use roofline_kernels::{DlOp, Fill, Kernel, NORMAL_SCALE};
use roofline_model::analysis::dl::{self, Lstm, Precision};
use roofline_model::bundle::Skipped;

use super::{
    Failure, Measured, Plan, Rig, SuiteError, datapath, mark_fastest, on_off, record, tags,
};
use crate::blaslt::{BlasLtError, Gemm, Spec};
use crate::dnn::lstm::{Algo as RnnAlgo, CudnnLstm};
use crate::dnn::{DnnError, DnnHandle};
use crate::launch::Launcher;
use crate::launch::dl::LstmCell;
use crate::report::Progress;

/// cuDNN's LSTM forward (inference mode) over the whole sequence with one algorithm.
fn cudnn(
    rig: &Rig,
    handle: &DnnHandle,
    l: &Lstm,
    p: Precision,
    tensor: bool,
    algo: RnnAlgo,
) -> Result<Vec<f64>, Failure> {
    let refused = |e: DnnError| {
        if e.is_out_of_memory() {
            Failure::Skip(format!("out of GPU memory: {e}"))
        } else {
            match e {
                DnnError::Alloc { .. } | DnnError::Context(_) => Failure::Fatal(SuiteError::Dnn(e)),
                _ => Failure::Skip(format!("cuDNN refused it: {e}")),
            }
        }
    };
    let mut lstm = CudnnLstm::new(handle, l, p, tensor, algo).map_err(refused)?;
    let (kind, scale) = (
        super::operand_fill(p),
        super::operand_scale(p, l.step_gemm().k),
    );
    for buf in lstm.inputs() {
        rig.filler().fill_whole(buf, kind, scale)?;
    }
    rig.time("cuDNN LSTM", |_| lstm.forward().map_err(refused))
}

/// One LSTM sequence, step by step: per step a cuBLASLt GEMM `[x_t, h_{t−1}] · W` into FP32
/// gates, then the fused cell kernel, which writes `h_t` back into the GEMM's input. The input
/// `x_t` is the same buffer every step (its values do not change the work). `[x, h]`, `W`, the
/// bias and the cell state are filled with bounded random data first.
fn own(rig: &Rig, l: &Lstm, p: Precision, tensor: bool) -> Result<Vec<f64>, Failure> {
    let spec = Spec::suite(p, tensor, true).ok_or_else(|| {
        Failure::Skip(format!(
            "cuBLASLt has no CUDA-core GEMM for {} inputs",
            p.key()
        ))
    })?;
    rig.usable(Kernel::Dl(DlOp::LstmCell, p))?;
    let g = l.step_gemm();
    let mut gemm = match Gemm::new(rig.session.stream(), spec, (g.m, g.n, g.k)) {
        Ok(gemm) => gemm,
        Err(e @ (BlasLtError::NoAlgorithm(_) | BlasLtError::Call { .. })) => {
            return Err(Failure::Skip(e.to_string()));
        }
        Err(e) => return Err(Failure::Fatal(e.into())),
    };
    // h sits after x in each row of [x, h].
    let mut cell = LstmCell::new(&rig.session, &rig.dl, p, l.batch, l.hidden, l.input)?;
    rig.fill_gemm(&gemm, p, g.k)?;
    for buf in cell.inputs() {
        rig.filler().fill_whole(buf, Fill::F32, NORMAL_SCALE)?;
    }
    let steps = l.seq;
    rig.time("LSTM", |s| {
        for _ in 0..steps {
            gemm.launch().map_err(|e| Failure::Skip(e.to_string()))?;
            let (xh, gates) = gemm.a_and_d();
            cell.step(gates, xh)?.launch(s)?;
        }
        Ok(())
    })
}

/// Runs the LSTM study.
pub(super) fn study(
    rig: &Rig,
    plan: &Plan,
    out: &mut Vec<Measured>,
    skipped: &mut Vec<Skipped>,
    bar: &dyn Progress,
) -> Result<(), SuiteError> {
    for case in dl::lstm_study() {
        let l = case.op;
        for &p in &plan.precisions {
            for &tensor in plan.tensor.settings() {
                let base = |imp: &str, algo: &str| {
                    tags(&[
                        ("study", "lstm".into()),
                        ("parameter", case.parameter.into()),
                        ("value", case.value.to_string()),
                        ("precision", p.key().into()),
                        ("tensor", on_off(tensor).into()),
                        ("implementation", imp.into()),
                        ("algorithm", algo.into()),
                        ("direction", "forward".into()),
                    ])
                };
                let label = format!(
                    "lstm {}={} {} tensor {}",
                    case.parameter,
                    case.value,
                    p.key(),
                    on_off(tensor)
                );
                let what = format!("{label} own step-by-step");
                let r = own(rig, &l, p, tensor).map(|times| Measured {
                    name: what.clone(),
                    times,
                    launches: l.step_by_step_launches(),
                    complexity: l.complexity(p.bytes()),
                    datapath: datapath(p, tensor),
                    tags: base("own", "cuBLASLt GEMM + fused cell per step"),
                });
                record(out, skipped, what, r)?;
                let Some(handle) = &rig.dnn else { continue };
                let group_start = out.len();
                for algo in RnnAlgo::ALL {
                    let what = format!("{label} cuDNN {}", algo.key());
                    let r = cudnn(rig, handle, &l, p, tensor, algo).map(|times| Measured {
                        name: what.clone(),
                        times,
                        launches: 1,
                        complexity: l.complexity(p.bytes()),
                        datapath: datapath(p, tensor),
                        tags: base("cudnn", algo.key()),
                    });
                    record(out, skipped, what, r)?;
                }
                mark_fastest(out, group_start);
            }
        }
        bar.inc(1);
    }
    Ok(())
}
