//! The cuBLASLt reference GEMMs per Tensor Core datapath: a search over shapes and heuristic
//! algorithms timed as bursts, the fastest then measured as a ceiling with its shape, algorithm
//! and every candidate recorded.

use roofline_kernels::Fill;
use roofline_model::bundle::{Datapath, GemmCandidate, GemmChoice, Machine, Skipped};

use crate::DeviceError;
use crate::blaslt::{self, BlasLtError, Gemm};
use crate::timing::BurstPlan;

use super::MachineError;
use super::rig::{Rig, peak};

/// One timed candidate of a datapath's GEMM search: which shape (its index in the search's
/// list) and algorithm, and its burst rate.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Timed {
    shape: usize,
    algorithm: usize,
    rate: f64,
    /// Its index in the recorded candidates.
    candidate: usize,
}

/// The `n` best candidates by burst rate, best first (finite rates only; ties keep the order
/// timed).
fn finalists(timed: &[Timed], n: usize) -> Vec<Timed> {
    let mut v: Vec<Timed> = timed
        .iter()
        .copied()
        .filter(|t| t.rate.is_finite())
        .collect();
    v.sort_by(|a, b| b.rate.total_cmp(&a.rate));
    v.truncate(n);
    v
}

/// The finalist kept: the best figure the charts would use of each (sustained where measured,
/// else burst), the first of equals. Returns its index in `figures`.
fn best_finalist(figures: &[(f64, Option<f64>)]) -> Option<usize> {
    figures
        .iter()
        .enumerate()
        .filter_map(|(i, (burst, sustained))| {
            let f = sustained.unwrap_or(*burst);
            f.is_finite().then_some((i, f))
        })
        .reduce(|a, b| if b.1 > a.1 { b } else { a })
        .map(|(i, _)| i)
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

/// Soaks the GPU before the references: a BF16 GEMM (8192³, the heuristic's first algorithm,
/// bounded random operands) back to back for the plan's `soak_s`, so that every reference meets
/// the board at the temperature and power a long GEMM does; notes NVML's clock, power and
/// hottest temperature over the soak. Skipped (with a note) where BF16 GEMMs cannot run.
fn soak(rig: &mut Rig) -> Result<(), MachineError> {
    let seconds = rig.measure.soak_s;
    let d = Datapath::TensorBf16;
    let Some(spec) = blaslt::Spec::tensor(d) else {
        return Ok(());
    };
    if rig.session.compute_capability() < (8, 0) || seconds <= 0.0 {
        rig.notes
            .push("no soak before the Tensor Core references: BF16 GEMMs need sm_80".into());
        return Ok(());
    }
    let mut g = match Gemm::with_algorithms(rig.session.stream(), spec, (8192, 8192, 8192), 1) {
        Ok(g) => g,
        Err(e) => {
            rig.notes.push(format!(
                "no soak before the Tensor Core references: the BF16 GEMM could not be set up ({e})"
            ));
            return Ok(());
        }
    };
    fill_gemm(rig, &g, Fill::for_datapath(d))?;
    let started = std::time::Instant::now();
    let soaked = rig.session.soak("soak: cuBLASLt BF16 GEMM", seconds, |_| {
        g.launch().map_err(MachineError::BlasLt)
    });
    match soaked {
        Ok(p) => {
            let telemetry = rig.session.telemetry(p.wall);
            rig.notes.push(soak_note(
                p.seconds(),
                p.overall_rate(g.flops()),
                telemetry.as_ref(),
                started.elapsed().as_secs_f64(),
            ));
            Ok(())
        }
        Err(MachineError::BlasLt(e)) => {
            rig.notes.push(format!(
                "no soak before the Tensor Core references: the BF16 GEMM failed ({e})"
            ));
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// The note a soak leaves: how long, at what rate, and what NVML saw.
fn soak_note(
    gpu_s: f64,
    rate: f64,
    t: Option<&roofline_model::bundle::Telemetry>,
    wall_s: f64,
) -> String {
    use roofline_model::analysis::si::format_si;
    let nvml = match t {
        Some(t) => {
            let mut parts = Vec::new();
            if let Some(c) = t.sm_clock_hz {
                parts.push(format!(
                    "SM clock {:.0}–{:.0} MHz (median {:.0})",
                    c.min / 1e6,
                    c.max / 1e6,
                    c.median / 1e6
                ));
            }
            if let Some(p) = t.power_w {
                parts.push(format!("power median {:.0} W", p.median));
            }
            if let Some(c) = t.temperature_c_max {
                parts.push(format!("hottest {c:.0} °C"));
            }
            if parts.is_empty() {
                "NVML recorded no figure".into()
            } else {
                parts.join(", ")
            }
        }
        None => "NVML not sampled".into(),
    };
    format!(
        "soak before the Tensor Core references: cuBLASLt BF16 GEMM 8192³ back to back for {gpu_s:.1} s of GPU time ({wall_s:.1} s wall) at {}; {nvml}",
        format_si(rate, "FLOP/s")
    )
}

/// The cuBLASLt reference per Tensor Core datapath, after a BF16 soak ([`soak`]): every shape
/// of [`super::Plan::gemm_shapes`] with up to [`super::Plan::gemm_algorithms`] of the
/// heuristic's algorithms each, each warmed and timed as a burst on bounded random operands
/// ([`BurstPlan::candidates`]); the best few ([`crate::timing::MeasurePlan::gemm_finalists`])
/// are then measured as ceilings (warm-up, burst, sustained) and the one with the best sustained
/// figure is kept, with its shape, algorithm and every candidate recorded.
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
    soak(rig)?;
    let cc = rig.session.compute_capability();
    for (d, min_cc) in DATAPATHS {
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
        if let Some(c) = reference(rig, d, spec, &what, skipped)? {
            m.compute.push(c);
        }
    }
    Ok(())
}

/// The Tensor Core datapaths with a cuBLASLt reference, and the oldest GPU each runs on.
pub(super) const DATAPATHS: [(Datapath, (i32, i32)); 6] = [
    (Datapath::TensorFp16, (7, 0)),
    (Datapath::TensorBf16, (8, 0)),
    (Datapath::TensorTf32, (8, 0)),
    (Datapath::TensorFp8, (8, 9)),
    (Datapath::TensorInt8, (7, 5)),
    (Datapath::TensorFp64, (8, 0)),
];

/// One datapath's reference: the search, the finalists measured in full, the best kept (`None`
/// and a `skipped` entry when nothing ran).
fn reference(
    rig: &mut Rig,
    d: Datapath,
    spec: blaslt::Spec,
    what: &str,
    skipped: &mut Vec<Skipped>,
) -> Result<Option<roofline_model::bundle::ComputeCeiling>, MachineError> {
    let fill = Fill::for_datapath(d);
    let shapes = rig.plan.gemm_shapes(d);
    let keep = rig.measure.gemm_finalists.max(1);
    let mut candidates: Vec<GemmCandidate> = Vec::new();
    let mut timed: Vec<Timed> = Vec::new();
    // The shapes' GEMMs, kept while one of their algorithms is among the finalists so far.
    let mut gemms: Vec<Option<Gemm>> = Vec::new();
    let mut shapes_tried = 0u32;
    let mut last_error = None;
    for (si, &(mm, n, k)) in shapes.iter().enumerate() {
        let candidate = |rank: u32, value: Option<f64>, error: Option<String>| GemmCandidate {
            m: mm,
            n,
            k,
            heuristic_rank: rank,
            value,
            sustained: None,
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
                gemms.push(None);
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        shapes_tried += 1;
        fill_gemm(rig, &g, fill)?;
        for i in 0..g.algorithms() {
            g.select(i);
            let rank = u32::try_from(i).unwrap_or(u32::MAX);
            let label = format!("cuBLASLt {} {mm}×{n}×{k} algorithm {i}", d.label());
            match time_candidate(rig, &mut g, &label)? {
                Ok(rate) => {
                    timed.push(Timed {
                        shape: si,
                        algorithm: i,
                        rate,
                        candidate: candidates.len(),
                    });
                    candidates.push(candidate(rank, Some(rate), None));
                }
                Err(e) => {
                    last_error = Some(e.to_string());
                    candidates.push(candidate(rank, None, Some(e.to_string())));
                }
            }
        }
        gemms.push(Some(g));
        // Device memory: only the shapes that hold a finalist so far are kept.
        let now = finalists(&timed, keep);
        for (j, slot) in gemms.iter_mut().enumerate() {
            if !now.iter().any(|t| t.shape == j) {
                *slot = None;
            }
        }
    }
    let chosen = finalists(&timed, keep);
    if chosen.is_empty() {
        skipped.push(Skipped {
            what: what.to_owned(),
            reason: last_error.unwrap_or_else(|| "no shape ran".into()),
        });
        return Ok(None);
    }
    // Each finalist timed with the whole plan; the best sustained figure is kept.
    let mut measured = Vec::new();
    let mut failure = None;
    for t in &chosen {
        let Some(g) = gemms[t.shape].as_mut() else {
            continue;
        };
        g.select(t.algorithm);
        let flops = g.flops();
        let (mm, n, k) = g.size;
        let label = format!(
            "cuBLASLt {} {mm}×{n}×{k} algorithm {}",
            d.label(),
            t.algorithm
        );
        match rig.measure(&label, |_| g.launch().map_err(MachineError::BlasLt)) {
            Ok(m) => {
                let f = rig.figures(&label, &m, flops);
                candidates[t.candidate].sustained = f.sustained_value();
                measured.push((*t, f));
            }
            // A failing GEMM launch means cuBLASLt cannot run this one here: the next
            // finalist is tried; a driver failure around it stops the run.
            Err(MachineError::BlasLt(e)) => failure = Some(e.to_string()),
            Err(e) => return Err(e),
        }
    }
    let figures: Vec<(f64, Option<f64>)> = measured
        .iter()
        .map(|(_, f)| (f.value, f.sustained_value()))
        .collect();
    let Some(best) = best_finalist(&figures) else {
        skipped.push(Skipped {
            what: what.to_owned(),
            reason: failure.unwrap_or_else(|| "no finalist could be timed".into()),
        });
        return Ok(None);
    };
    let finalists_timed = measured.len();
    let (t, f) = measured.swap_remove(best);
    let Some(g) = gemms[t.shape].as_mut() else {
        return Ok(None);
    };
    g.select(t.algorithm);
    let (mm, n, k) = g.size;
    let version = g.version;
    let algo = g.selected_algorithm();
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
            "cuBLASLt {version} GEMM {mm}×{n}×{k} (TN{accumulation}), heuristic algorithm {}{}, the best sustained figure of {finalists_timed} finalists timed in full, from {shapes_tried} shapes × up to {} algorithms ({tried} timed)",
            t.algorithm,
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
    Ok(Some(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(shape: usize, algorithm: usize, rate: f64) -> Timed {
        Timed {
            shape,
            algorithm,
            rate,
            candidate: shape * 10 + algorithm,
        }
    }

    /// The finalists are the best few by burst, best first, NaN never among them; the kept one
    /// is the best sustained figure (burst where none), not the best burst.
    #[test]
    fn finalists_are_ranked_by_burst_and_chosen_by_sustained() {
        let t = [
            timed(0, 0, 700.0),
            timed(0, 1, f64::NAN),
            timed(1, 0, 760.0),
            timed(1, 1, 740.0),
            timed(2, 0, 720.0),
        ];
        let f = finalists(&t, 3);
        assert_eq!(
            f.iter().map(|t| (t.shape, t.algorithm)).collect::<Vec<_>>(),
            [(1, 0), (1, 1), (2, 0)]
        );
        assert_eq!(finalists(&t, 1).len(), 1);
        assert!(finalists(&[], 3).is_empty());
        // The burst winner sags to 690 sustained; the second holds 720.
        assert_eq!(
            best_finalist(&[
                (760.0, Some(690.0)),
                (740.0, Some(720.0)),
                (720.0, Some(700.0))
            ]),
            Some(1)
        );
        assert_eq!(best_finalist(&[(760.0, None), (740.0, None)]), Some(0));
        assert_eq!(best_finalist(&[(f64::NAN, None)]), None);
    }

    #[test]
    fn a_soak_says_how_long_how_fast_and_what_nvml_saw() {
        use roofline_model::bundle::{Spread, Telemetry};
        let spread = |min: f64, median: f64, max: f64| Spread { min, median, max };
        let t = Telemetry {
            samples: 5000,
            window_s: 25.0,
            sm_clock_hz: Some(spread(1.62e9, 1.71e9, 1.98e9)),
            power_w: Some(spread(600.0, 690.0, 700.0)),
            energy_power_w: None,
            temperature_c_max: Some(71.0),
            clock_event_reasons: vec![],
        };
        assert_eq!(
            soak_note(25.0, 6.5e14, Some(&t), 25.4),
            "soak before the Tensor Core references: cuBLASLt BF16 GEMM 8192³ back to back for 25.0 s of GPU time (25.4 s wall) at 650 TFLOP/s; SM clock 1620–1980 MHz (median 1710), power median 690 W, hottest 71 °C"
        );
        assert!(soak_note(5.0, 1e14, None, 5.1).ends_with("NVML not sampled"));
    }
}
