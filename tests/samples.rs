//! The viewer's real sample bundles, made from the 2020 NERSC study's raw Nsight Compute outputs
//! with `roofline import`, so that they can be regenerated (`cargo xtask samples`) and checked
//! against a fresh import (`tests/e2e/samples.rs`): they can never drift from the importer.
//!
//! Each run is imported exactly as `roofline import <dir>/out.*.csv --arch 7.0 --machine
//! v100-ceilings.json` does (the collector's own `import`, in process), where the machine is the
//! study's published V100 ceilings: the devices and machines of
//! `tests/fixtures/bundles/v100-deepcam-example.json` with its kernels removed. Then the parts of
//! the bundle that depend on where and when it ran (host, time, temporary paths) are replaced by
//! the fixed command line and a description that names the source.

use std::io::Read;
use std::path::{Path, PathBuf};

use roofline_model::Bundle;
use roofline_model::bundle::options::{Convention, ImportOptions};

use crate::fixtures;

/// One sample: a run of the study imported into a bundle.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// The bundle's file name under `tests/fixtures/bundles/` (and `dist/samples/`).
    pub file: &'static str,
    /// The folder under `tests/fixtures/ncu/` holding the run's `out.<metric>.csv[.gz]` files.
    pub source: &'static str,
    /// The run's folder in the study's repository.
    pub study_folder: &'static str,
    /// What the run is, in words.
    pub what: &'static str,
}

/// The four DeepCAM runs: plain FP32 (apex `O0`) and apex mixed precision (`O1`), forward and
/// backward.
pub const SAMPLES: [Sample; 4] = [
    Sample {
        file: "deepcam-v100-fp32-fw.json",
        source: "ncu/nersc-v100-deepcam-o0-fw",
        study_folder: "mlperf-deepcam/PT-fp32-O0-Adam-fw-733726",
        what: "plain FP32 (apex O0), forward pass",
    },
    Sample {
        file: "deepcam-v100-amp-fw.json",
        source: "ncu/nersc-v100-deepcam",
        study_folder: "mlperf-deepcam/PT-fp32-O1-Adam-fw-733728",
        what: "apex O1 mixed precision, forward pass",
    },
    Sample {
        file: "deepcam-v100-fp32-bw.json",
        source: "ncu/nersc-v100-deepcam-o0-bw",
        study_folder: "mlperf-deepcam/PT-fp32-O0-Adam-bw-732898",
        what: "plain FP32 (apex O0), backward pass",
    },
    Sample {
        file: "deepcam-v100-amp-bw.json",
        source: "ncu/nersc-v100-deepcam-o1-bw",
        study_folder: "mlperf-deepcam/PT-fp32-O1-Adam-bw-733727",
        what: "apex O1 mixed precision, backward pass",
    },
];

/// The study's published V100 ceilings as a machine bundle: the hand-built example's devices and
/// machines, without its kernels.
///
/// # Panics
/// When the example fixture is unreadable (tests and tools only).
pub fn v100_ceilings() -> Bundle {
    let mut b =
        roofline_model::parse_bundle(&crate::fixture_text("bundles/v100-deepcam-example.json"))
            .expect("the V100 example bundle reads");
    b.kernels.clear();
    b.notes.clear();
    b.description = Some(
        "The 2020 NERSC study's published V100 ceilings (see v100-deepcam-example.json)".into(),
    );
    b
}

/// The run's metric files, sorted, as `out.<metric>.csv` copies in `dir` (gzip-compressed ones
/// decompressed).
fn metric_files(source: &Path, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(source)
        .map_err(|e| format!("{}: {e}", source.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("out.") && (n.ends_with(".csv") || n.ends_with(".csv.gz"))
            })
        })
        .collect();
    names.sort();
    let mut out = Vec::new();
    for p in names {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let plain = name.trim_end_matches(".gz");
        let mut text = Vec::new();
        let file = std::fs::File::open(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        if name.ends_with(".gz") {
            flate2::read::GzDecoder::new(file).read_to_end(&mut text)
        } else {
            std::io::BufReader::new(file).read_to_end(&mut text)
        }
        .map_err(|e| format!("{}: {e}", p.display()))?;
        let to = dir.join(plain);
        std::fs::write(&to, text).map_err(|e| format!("{}: {e}", to.display()))?;
        out.push(to);
    }
    if out.is_empty() {
        return Err(format!("{}: no out.<metric>.csv files", source.display()));
    }
    Ok(out)
}

/// The description a sample bundle carries.
fn description(s: &Sample) -> String {
    format!(
        "DeepCAM (PyTorch 1.5, Adam) on an NVIDIA V100, {}: real Nsight Compute counters (CUDA 11.0) \
         from the 2020 NERSC study \"Hierarchical Roofline Performance Analysis for Deep Learning \
         Applications\", public repository cyanguwa/DeepLearningProfiling, commit 1290c76, folder \
         {}/. Imported with `roofline import --arch 7.0` (current counting convention, one entry \
         per launch) against the study's published V100 ceilings (the machine of \
         v100-deepcam-example.json: its notebook's figures, G taken as 10^9; the launch overhead \
         is the time-based study's figure, not a measurement). Regenerate with `cargo xtask samples`.",
        s.what, s.study_folder
    )
}

/// Imports one sample from its fixtures and returns the bundle's JSON text.
///
/// # Errors
/// Unreadable fixtures or a failed import, as text.
pub fn import(s: &Sample) -> Result<String, String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let files = metric_files(&fixtures().join(s.source), tmp.path())?;
    let machine = tmp.path().join("v100-ceilings.json");
    let ceilings = roofline_model::to_json(&v100_ceilings()).map_err(|e| e.to_string())?;
    std::fs::write(&machine, ceilings).map_err(|e| e.to_string())?;
    let out = tmp.path().join(s.file);
    let options = ImportOptions {
        arch: Some("7.0".parse()?),
        convention: Some(Convention::Current),
        ..ImportOptions::default()
    };
    roofline_collector::capture::import(&roofline_collector::capture::ImportRequest {
        files: &files,
        output: &out,
        machine: Some(&machine),
        options: &options,
        counters: None,
        ncu: None,
        per_trace: &[],
    })
    .map_err(|e| format!("{}: {e}", s.file))?;
    let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut b = roofline_model::parse_bundle(&text).map_err(|e| format!("{}: {e}", s.file))?;
    b.description = Some(description(s));
    // The notes name the machine as the command line below does, not by its temporary path.
    let tmp_machine = machine.display().to_string();
    for n in &mut b.notes {
        *n = n.replace(&tmp_machine, "v100-ceilings.json");
    }
    let p = &mut b.provenance;
    p.host = None;
    p.created = None;
    p.command_line = [
        "roofline",
        "import",
        &format!("{}/out.*.csv", s.study_folder),
        "--arch",
        "7.0",
        "--machine",
        "v100-ceilings.json",
        "-o",
        s.file,
    ]
    .map(String::from)
    .to_vec();
    roofline_model::to_json(&b).map_err(|e| format!("{}: {e}", s.file))
}

/// Where the committed sample bundles live.
pub fn bundles_dir() -> PathBuf {
    fixtures().join("bundles")
}
