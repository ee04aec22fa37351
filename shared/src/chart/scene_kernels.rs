//! Each drawn kernel's lines of figures for a scene ([`SceneKernel`]): its hover summary and its
//! side-panel brief, from its analysis.

use super::{ChartOptions, SceneKernel};
use crate::analysis::analysed::Analysed;
use crate::analysis::kernel::KernelAnalysis;
use crate::analysis::si::format_si;
use crate::bundle::{Bundle, Kernel};

/// The analysis a chart of `bundle` with options `o` draws.
pub(super) fn analysed(bundle: &Bundle, o: &ChartOptions) -> Analysed {
    Analysed::new(bundle, o.device.as_deref(), o.ceilings.as_ref())
}

fn kernel_summary(k: &Kernel, a: &KernelAnalysis) -> String {
    let mut s = format!(
        "{} in {} launch{} ({:.1}% of time)",
        format_si(a.time_s, "s"),
        k.launches,
        if k.launches == 1 { "" } else { "es" },
        a.share_of_time * 100.0
    );
    // An operator: its calls, and one call's F and B.
    if let Some(n) = crate::analysis::report::calls_of(k) {
        s.push_str(&format!(", {n} call{}", if n == 1 { "" } else { "s" }));
        let per = |v: Option<f64>, unit| v.map(|v| format_si(v / n as f64, unit));
        if let Some(f) = per(a.complexity_flops, "FLOP") {
            s.push_str(&format!(", {f}"));
        }
        if let Some(b) = per(a.complexity_bytes, "B") {
            s.push_str(&format!(", {b}"));
        }
        if a.complexity_flops.is_some() || a.complexity_bytes.is_some() {
            s.push_str(" per call");
        }
    }
    if let Some(p) = a.flop_per_s {
        s.push_str(&format!(", {}", format_si(p, "FLOP/s")));
    }
    if let Some(h) = &a.hierarchical {
        s.push_str(&format!(", bound by {}", h.ceiling_label()));
    }
    if let Some(h) = a.headroom {
        s.push_str(&format!(", headroom {h:.2}×"));
    }
    if let (Some(tb), Some(g)) = (&a.time_bound, a.gap) {
        s.push_str(&format!(
            ", T_bound {} ({} region), T/T_bound {g:.2}",
            format_si(tb.bound_s, "s"),
            tb.region.key()
        ));
    }
    if !a.missing_peaks.is_empty() {
        let names: Vec<&str> = a.missing_peaks.iter().map(|d| d.label()).collect();
        s.push_str(&format!(", no bound: no ceiling for {}", names.join(", ")));
    }
    s
}

fn kernel_brief(a: &KernelAnalysis, time_chart: bool) -> String {
    let mut parts = vec![format!("{:.1}%", a.share_of_time * 100.0)];
    if time_chart {
        parts.push(format_si(a.time_s, "s"));
        if let (Some(tb), Some(g)) = (&a.time_bound, a.gap) {
            parts.push(format!("{} · gap {g:.2}", tb.region.key()));
        }
    } else {
        if let Some(p) = a.flop_per_s {
            parts.push(format_si(p, "FLOP/s"));
        }
        if let Some(h) = &a.hierarchical {
            parts.push(format!("{}-bound", h.ceiling_label()));
        }
    }
    parts.join(" · ")
}

pub(super) fn scene_kernels(p: &Analysed, drawn: &[usize], time_chart: bool) -> Vec<SceneKernel> {
    let names = p.display_names();
    drawn
        .iter()
        .enumerate()
        .map(|(rank, &i)| {
            let a = &p.top[i];
            let k = &p.kernels[a.index];
            SceneKernel {
                rank: rank + 1,
                name: names[a.index].clone(),
                full_name: k.name.clone(),
                analysis: a.clone(),
                launches: k.launches,
                summary: kernel_summary(k, a),
                brief: kernel_brief(a, time_chart),
                bound_path: None,
            }
        })
        .collect()
}
