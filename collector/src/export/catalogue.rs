//! `roofline catalogue`: the GPU catalogue as text, one line per GPU, or one GPU with every
//! figure, its kind (printed in a datasheet, or derived with the formula given) and its source.

use std::fmt::Write as _;

use roofline_catalogue::{Catalogue, GpuEntry, Kind};
use roofline_model::analysis::si::{format_plain_with_digits, format_si_with_digits};
use roofline_model::bundle::Datapath;

/// The figure `f` in SI units with three significant digits, or `-` when absent.
fn si(f: Option<f64>, unit: &str) -> String {
    f.map_or_else(|| "-".to_string(), |v| format_si_with_digits(v, unit, 3))
}

/// The compute capability (NVIDIA) or gfx target (AMD) an entry is recognised by.
fn target(e: &GpuEntry) -> String {
    match (&e.compute_capability, &e.gfx) {
        (Some(cc), Some(gfx)) => format!("{cc} {gfx}"),
        (Some(cc), None) => cc.clone(),
        (None, Some(gfx)) => gfx.clone(),
        (None, None) => "-".to_string(),
    }
}

/// The highest dense Tensor Core peak at 16 bits (BF16, else FP16), the figure most DL work
/// is held against.
fn tensor16(e: &GpuEntry) -> Option<f64> {
    e.peak(Datapath::TensorBf16)
        .or_else(|| e.peak(Datapath::TensorFp16))
        .map(|f| f.value)
}

/// A figure with the unit its path in the catalogue names, four significant digits.
fn value(path: &str, v: f64) -> String {
    let unit = if path.ends_with("bytes_per_s") {
        "B/s"
    } else if path.ends_with("flop_per_s") || path.starts_with("peaks_flop_per_s") {
        "FLOP/s"
    } else if path.ends_with("_hz") {
        "Hz"
    } else if path.ends_with("bytes") {
        // Memory and caches are sold in binary units ("80GB" is 80 x 2^30 bytes).
        return if v >= f64::from(1u32 << 30) {
            format!(
                "{} GiB",
                format_plain_with_digits(v / f64::from(1u32 << 30), 4)
            )
        } else {
            format!(
                "{} MiB",
                format_plain_with_digits(v / f64::from(1u32 << 20), 4)
            )
        };
    } else {
        return format_plain_with_digits(v, 4);
    };
    format_si_with_digits(v, unit, 4)
}

/// Every entry, one line each: id, product, compute capability, SMs, memory, and the DRAM,
/// FP32 and 16-bit Tensor Core figures; then the systems.
pub fn list(catalogue: &Catalogue) -> Vec<u8> {
    let mut out = String::new();
    let id_w = catalogue
        .entries()
        .iter()
        .map(|e| e.id.len())
        .max()
        .unwrap_or(2);
    let product_w = catalogue
        .entries()
        .iter()
        .map(|e| e.product.chars().count())
        .max()
        .unwrap_or(7);
    let _ = writeln!(
        out,
        "{:<id_w$}  {:<product_w$}  {:<10} {:>5} {:>8} {:>10} {:>13} {:>13}",
        "id", "product", "cc", "SMs", "memory", "DRAM", "FP32", "Tensor 16-bit"
    );
    for e in catalogue.entries() {
        let _ = writeln!(
            out,
            "{:<id_w$}  {:<product_w$}  {:<10} {:>5} {:>8} {:>10} {:>13} {:>13}",
            e.id,
            e.product,
            target(e),
            e.sm_count()
                .map_or_else(|| "-".to_string(), |n| n.to_string()),
            format!("{:.0} GiB", e.memory_bytes() / f64::from(1u32 << 30)),
            si(e.dram().map(|f| f.value), "B/s"),
            si(e.peak(Datapath::Fp32).map(|f| f.value), "FLOP/s"),
            si(tensor16(e), "FLOP/s"),
        );
    }
    if !catalogue.systems().is_empty() {
        out.push_str("\nsystems\n");
        for s in catalogue.systems() {
            let _ = writeln!(
                out,
                "{:<id_w$}  {:<product_w$}  {} x {}, NVLink {} per GPU",
                s.id,
                s.name,
                s.gpus_per_node,
                s.gpu_ids.join(" or "),
                si(Some(s.nvlink_bytes_per_s_per_gpu.value), "B/s"),
            );
        }
    }
    out.push_str(
        "\nPeaks are dense (no structured sparsity) at the boost clock the datasheet assumes. \
         `roofline catalogue ID` shows one GPU's figures and sources. An import without \
         --machine draws the ceilings of the entry its device matches, labelled datasheet; \
         --ceilings datasheet:ID chooses one, --no-datasheet draws none.\n",
    );
    out.into_bytes()
}

/// One entry: how it is recognised, then every figure with its kind and citation.
pub fn one(catalogue: &Catalogue, e: &GpuEntry) -> Vec<u8> {
    let mut out = String::new();
    let _ = writeln!(out, "{} ({})", e.product, e.id);
    let _ = writeln!(out, "architecture: {}", e.architecture);
    if let Some(cc) = &e.compute_capability {
        let _ = writeln!(out, "compute capability: {cc}");
    }
    if let Some(gfx) = &e.gfx {
        let _ = writeln!(out, "gfx target: {gfx}");
    }
    if e.per_gcd {
        out.push_str("one GCD of a two-GCD package: each GCD is one device\n");
    }
    let _ = writeln!(out, "recognised by: {}", e.names.join("; "));
    if let Some(t) = &e.memory_type {
        let _ = writeln!(out, "memory: {t}");
    }
    out.push_str("\nfigures (value, kind, [source] words printed there or the formula)\n");
    let mut cited: Vec<&str> = Vec::new();
    for (path, f) in e.figures() {
        let kind = match f.kind {
            Kind::Datasheet => "datasheet",
            Kind::Derived => "derived",
            Kind::Recorded => "recorded",
        };
        let n = match cited.iter().position(|c| *c == f.source) {
            Some(i) => i + 1,
            None => {
                cited.push(&f.source);
                cited.len()
            }
        };
        let mut said = Vec::new();
        if let Some(p) = &f.printed {
            said.push(format!("\"{p}\""));
        }
        if let Some(formula) = &f.formula {
            said.push(format!("derived: {formula}"));
        }
        if let Some(note) = &f.note {
            said.push(format!("note: {note}"));
        }
        let _ = writeln!(
            out,
            "{path:<30} {:>15}  {kind:<9}  [{n}] {}",
            value(&path, f.value),
            said.join("; ")
        );
    }
    out.push_str("\nsources\n");
    for (i, id) in cited.iter().enumerate() {
        match catalogue.sources.iter().find(|s| s.id == *id) {
            Some(s) => {
                let _ = writeln!(
                    out,
                    "[{}] {}, {} ({}): {}{}",
                    i + 1,
                    s.title,
                    s.publisher,
                    s.year,
                    s.location,
                    s.url
                        .as_deref()
                        .map(|u| format!(", {u}"))
                        .unwrap_or_default()
                );
            }
            None => {
                let _ = writeln!(out, "[{}] {id}", i + 1);
            }
        }
    }
    if let Some(n) = &e.note {
        let _ = writeln!(out, "\nnote: {n}");
    }
    let systems: Vec<_> = catalogue
        .systems_with(&e.id)
        .map(|s| s.name.clone())
        .collect();
    if !systems.is_empty() {
        let _ = writeln!(out, "in systems: {}", systems.join(", "));
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_has_every_entry_and_the_h100_figures() {
        let c = Catalogue::get();
        let text = String::from_utf8(list(c)).unwrap();
        for e in c.entries() {
            assert!(text.contains(&e.id), "{} missing", e.id);
        }
        let h100 = text
            .lines()
            .find(|l| l.starts_with("nvidia-h100-sxm5 "))
            .unwrap();
        // 3.35 TB/s HBM3, 66.9 TFLOP/s FP32, 989 TFLOP/s dense BF16 (H100 datasheet).
        assert!(h100.contains("3.35 TB/s"), "{h100}");
        assert!(h100.contains("989 TFLOP/s"), "{h100}");
    }

    #[test]
    fn one_cites_every_figure() {
        let c = Catalogue::get();
        let e = c.by_id("nvidia-a100-sxm4-80gb").unwrap();
        let text = String::from_utf8(one(c, e)).unwrap();
        for (path, _) in e.figures() {
            assert!(text.contains(&path), "{path} missing:\n{text}");
        }
        let bf16 = text
            .lines()
            .find(|l| l.starts_with("peaks_flop_per_s.tensor_bf16"))
            .unwrap();
        assert!(bf16.contains("312 TFLOP/s"), "{bf16}");
        assert!(bf16.contains("datasheet"), "{bf16}");
        let source = &c
            .source_of(e.peak(Datapath::TensorBf16).unwrap())
            .unwrap()
            .title;
        assert!(text.contains(source.as_str()), "{source} missing:\n{text}");
    }
}
