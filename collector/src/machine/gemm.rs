//! The cuBLASLt reference GEMMs per Tensor Core datapath: a search over shapes and heuristic
//! algorithms timed as bursts, the fastest then measured as a ceiling with its shape, algorithm
//! and every candidate recorded.

use roofline_model::bundle::{Datapath, GemmCandidate, GemmChoice, Machine, Skipped};

use crate::gpu::DeviceError;
use crate::gpu::blaslt::{self, BlasLtError, Gemm};
use crate::gpu::kernels::Fill;
use crate::gpu::timing::BurstPlan;

use super::MachineError;
use super::rig::{Rig, peak};

/// The best candidate so far of a datapath's GEMM search.
struct Best {
    gemm: Gemm,
    algorithm: usize,
    rate: f64,
}

/// Fills a GEMM's A and B with real data (as many whole values of `fill` as fit; INT8's raw
/// words cover four values each).
fn fill_gemm(rig: &Rig, g: &Gemm, fill: Fill) -> Result<(), DeviceError> {
    for (buf, bytes) in g.operands() {
        rig.fill(buf, fill, bytes / fill.value_bytes())?;
    }
    Ok(())
}

/// One candidate (shape, algorithm): untimed calls, then burst intervals. `Ok(Err(e))` when
/// cuBLASLt cannot run it.
fn time_candidate(
    rig: &mut Rig,
    g: &mut Gemm,
    label: &str,
) -> Result<Result<f64, BlasLtError>, MachineError> {
    let plan = BurstPlan::candidates(rig.plan.quick);
    for _ in 0..plan.untimed {
        if let Err(e) = g.launch() {
            return Ok(Err(e));
        }
    }
    rig.session.synchronize("running a cuBLASLt GEMM")?;
    let flops = g.flops();
    match rig
        .session
        .burst(label, plan, |_| g.launch().map_err(MachineError::BlasLt))
    {
        Ok((_, p)) => Ok(Ok(p.median_rate(flops))),
        Err(MachineError::BlasLt(e)) => Ok(Err(e)),
        Err(e) => Err(e),
    }
}

/// The cuBLASLt reference per Tensor Core datapath: every shape of
/// [`super::Plan::gemm_shapes`] with up to [`super::Plan::gemm_algorithms`] of the heuristic's
/// algorithms each, timed as bursts on bounded random operands; the fastest is then measured as
/// a ceiling (warm-up, burst, sustained), with its shape, algorithm and every candidate recorded.
pub(super) fn cublaslt(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
) -> Result<(), MachineError> {
    if !blaslt::present() {
        skipped.push(Skipped {
            what: "cuBLASLt reference GEMMs".into(),
            reason: BlasLtError::Missing.to_string(),
        });
        return Ok(());
    }
    let datapaths = [
        (Datapath::TensorFp16, (7, 0)),
        (Datapath::TensorBf16, (8, 0)),
        (Datapath::TensorTf32, (8, 0)),
        (Datapath::TensorFp8, (8, 9)),
        (Datapath::TensorInt8, (7, 5)),
        (Datapath::TensorFp64, (8, 0)),
    ];
    let cc = rig.session.compute_capability();
    for (d, min_cc) in datapaths {
        let what = format!("{} cuBLASLt GEMM", d.label());
        if cc < min_cc {
            skipped.push(Skipped {
                what,
                reason: format!("needs sm_{}{} or later", min_cc.0, min_cc.1),
            });
            continue;
        }
        let Some(spec) = blaslt::Spec::tensor(d) else {
            continue;
        };
        let fill = Fill::for_datapath(d);
        let shapes = rig.plan.gemm_shapes(d);
        let mut candidates = Vec::new();
        let mut best: Option<Best> = None;
        let mut shapes_tried = 0u32;
        let mut last_error = None;
        for &(mm, n, k) in &shapes {
            let candidate = |rank: u32, value: Option<f64>, error: Option<String>| GemmCandidate {
                m: mm,
                n,
                k,
                heuristic_rank: rank,
                value,
                error,
            };
            let mut g = match Gemm::with_algorithms(
                rig.session.stream(),
                spec,
                (mm, n, k),
                rig.plan.gemm_algorithms(),
            ) {
                Ok(g) => g,
                Err(
                    e @ (BlasLtError::NoAlgorithm(_)
                    | BlasLtError::Call { .. }
                    | BlasLtError::Alloc { .. }),
                ) => {
                    candidates.push(candidate(0, None, Some(e.to_string())));
                    last_error = Some(e.to_string());
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            shapes_tried += 1;
            fill_gemm(rig, &g, fill)?;
            let mut shape_best: Option<(usize, f64)> = None;
            for i in 0..g.algorithms() {
                g.select(i);
                let rank = u32::try_from(i).unwrap_or(u32::MAX);
                let label = format!("cuBLASLt {} {mm}×{n}×{k} algorithm {i}", d.label());
                match time_candidate(rig, &mut g, &label)? {
                    Ok(rate) => {
                        candidates.push(candidate(rank, Some(rate), None));
                        if rate.is_finite() && shape_best.is_none_or(|(_, r)| rate > r) {
                            shape_best = Some((i, rate));
                        }
                    }
                    Err(e) => {
                        last_error = Some(e.to_string());
                        candidates.push(candidate(rank, None, Some(e.to_string())));
                    }
                }
            }
            if let Some((i, rate)) = shape_best
                && best.as_ref().is_none_or(|b| rate > b.rate)
            {
                best = Some(Best {
                    gemm: g,
                    algorithm: i,
                    rate,
                });
            }
        }
        let Some(Best {
            gemm: mut g,
            algorithm,
            ..
        }) = best
        else {
            skipped.push(Skipped {
                what,
                reason: last_error.unwrap_or_else(|| "no shape ran".into()),
            });
            continue;
        };
        g.select(algorithm);
        let flops = g.flops();
        let (mm, n, k) = g.size;
        let version = g.version;
        let algo = g.selected_algorithm();
        let label = format!("cuBLASLt {}", d.label());
        let t = match rig.measure(&label, |_| g.launch().map_err(MachineError::BlasLt)) {
            Ok(t) => t,
            // A failing GEMM launch means cuBLASLt cannot run this one here: skipped, with its
            // error; a driver failure around it stops the run.
            Err(MachineError::BlasLt(e)) => {
                skipped.push(Skipped {
                    what,
                    reason: e.to_string(),
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        let f = rig.figures(&label, &t, flops);
        let clock = f.nvml_clock();
        let accumulation = if spec.fast_accumulation {
            ", fast accumulation"
        } else {
            ""
        };
        let tried = candidates.iter().filter(|c| c.value.is_some()).count();
        let mut c = peak(
            f,
            d,
            fill.operands(),
            format!(
                "cuBLASLt {version} GEMM {mm}×{n}×{k} (TN{accumulation}), heuristic algorithm {algorithm}{}, the best of {shapes_tried} shapes × up to {} algorithms ({tried} timed)",
                algo.id.map(|i| format!(" (id {i})")).unwrap_or_default(),
                rig.plan.gemm_algorithms()
            ),
        );
        c.clock_hz = clock;
        c.reference = true;
        c.indicative = rig.plan.quick || shapes_tried < 3;
        c.gemm = Some(GemmChoice {
            m: mm,
            n,
            k,
            algorithm: algo,
            shapes_tried,
            algorithms_tried: u32::try_from(tried).unwrap_or(u32::MAX),
            candidates,
        });
        m.compute.push(c);
    }
    Ok(())
}
