//! The GEMM study: per size, precision and Tensor Core setting, one cuBLASLt GEMM, its A and B
//! filled with bounded random data of the precision first ([`super::operand_fill`]).
#![forbid(unsafe_code)]

use roofline_model::analysis::dl;
use roofline_model::bundle::Skipped;

use super::{Failure, Measured, Plan, Rig, SuiteError, datapath, on_off, record, tags};
use crate::blaslt::{BlasLtError, Gemm, Spec};
use crate::report::Progress;

/// Runs the GEMM study.
pub(super) fn study(
    rig: &Rig,
    plan: &Plan,
    out: &mut Vec<Measured>,
    skipped: &mut Vec<Skipped>,
    bar: &dyn Progress,
) -> Result<(), SuiteError> {
    for case in dl::gemm_study() {
        let g = case.op;
        for &p in &plan.precisions {
            for &tensor in plan.tensor.settings() {
                let what = format!(
                    "gemm {}³ {} tensor {} cuBLASLt",
                    case.value,
                    p.key(),
                    on_off(tensor)
                );
                let r = (|| {
                    let spec = Spec::suite(p, tensor, false).ok_or_else(|| {
                        Failure::Skip(format!(
                            "cuBLASLt has no CUDA-core GEMM for {} inputs",
                            p.key()
                        ))
                    })?;
                    let mut gemm = match Gemm::new(rig.session.stream(), spec, (g.m, g.n, g.k)) {
                        Ok(gemm) => gemm,
                        Err(e @ (BlasLtError::NoAlgorithm(_) | BlasLtError::Call { .. })) => {
                            return Err(Failure::Skip(e.to_string()));
                        }
                        Err(BlasLtError::Alloc { source, .. })
                            if source.0
                                == cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY =>
                        {
                            return Err(Failure::Skip("out of GPU memory".into()));
                        }
                        Err(e) => return Err(Failure::Fatal(e.into())),
                    };
                    rig.fill_gemm(&gemm, p, g.k)?;
                    let times = rig.time("GEMM", |_| {
                        gemm.launch().map_err(|e| Failure::Skip(e.to_string()))
                    })?;
                    Ok(Measured {
                        name: what.clone(),
                        times,
                        launches: 1,
                        complexity: g.complexity(p.bytes()),
                        datapath: datapath(p, tensor),
                        tags: tags(&[
                            ("study", "gemm".into()),
                            ("parameter", case.parameter.into()),
                            ("value", case.value.to_string()),
                            ("precision", p.key().into()),
                            ("tensor", on_off(tensor).into()),
                            ("implementation", "cublaslt".into()),
                            ("algorithm", spec.label.into()),
                        ]),
                    })
                })();
                record(out, skipped, what, r)?;
            }
        }
        bar.inc(1);
    }
    Ok(())
}
