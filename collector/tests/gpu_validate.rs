//! The GPU validation (`scripts/gpu/validate.sh`) walked on a machine without a GPU, so that a
//! typo in a path, a file name or an input of `check.py` costs no device time: its plan fits the
//! device calls' budgets, and its dry run (stand-ins from `tests/gpu-dry-run/bin` for python3's
//! torch scripts, ncu, nvcc and nvidia-smi; the real collector, which refuses where it needs a
//! GPU) runs every step of the first two calls and leaves what a device call returns.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn validate(args: &[&str], out: Option<&Path>) -> (i32, String) {
    let mut c = Command::new("bash");
    c.arg(repo().join("scripts/gpu/validate.sh"))
        .args(args)
        .env("BIN", env!("CARGO_BIN_EXE_roofline"));
    if let Some(o) = out {
        c.env("OUT", o);
    }
    let o = c.output().expect("bash runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code().unwrap_or(-1), text)
}

/// `--plan`: each call's steps with their seconds, the first two calls within one command's
/// 360 s and, with one start, within the 900 s lent; `roofline machine`'s share comes from its
/// own plan.
#[test]
fn the_plan_fits_the_device_time() {
    let (rc, text) = validate(&["--plan"], None);
    assert_eq!(rc, 0, "{text}");
    assert!(
        text.contains("roofline machine --plan on H100 SXM5: "),
        "{text}"
    );
    for call in ["call1", "call2", "call3", "call4"] {
        assert!(text.contains(&format!("{call} (budget 360 s")), "{text}");
    }
    assert_eq!(text.matches("(within 360 s)").count(), 4, "{text}");
    assert!(!text.contains("OVER"), "{text}");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("machine "))
        .unwrap();
    let planned: f64 = line
        .split("planned ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(planned > 100.0 && planned <= 300.0, "{line}");
}

/// A name that is no call and no part is refused before anything runs.
#[test]
fn an_unknown_part_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (rc, text) = validate(&["--dry-run", "call1", "machne"], Some(dir.path()));
    assert_eq!(rc, 2, "{text}");
    assert!(text.contains("unknown part or call machne"), "{text}");
    assert!(!dir.path().join("steps.txt").exists());
}

/// The dry run of calls 1 and 2: every step runs and is logged with its limit, the collector
/// refuses `machine` and `profile` (no GPU), the trace is imported, check.py reads the output
/// (saying DRY RUN), and what comes back is at most seven files, the work directory packed.
#[test]
fn the_dry_run_walks_every_step_of_the_first_two_calls() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (rc, text) = validate(&["--dry-run", "call1", "call2"], Some(&out));
    assert_eq!(rc, 0, "{text}");
    let steps = std::fs::read_to_string(out.join("steps.txt")).unwrap();
    assert!(steps.starts_with("DRY RUN"), "{steps}");
    for name in [
        "torch-rates",
        "machine",
        "check",
        "probe-build",
        "probe",
        "known-gemm_bf16",
        "trace-shapes",
        "trace-import",
    ] {
        assert!(
            steps
                .lines()
                .any(|l| l.starts_with(&format!("{name} ")) && l.contains(" limit ")),
            "no step {name}: {steps}"
        );
    }
    let rc_of = |name: &str| -> String {
        steps
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .and_then(|l| l.split("rc=").nth(1))
            .and_then(|r| r.split(' ').next())
            .unwrap()
            .to_string()
    };
    assert_eq!(rc_of("machine"), "1");
    assert_eq!(rc_of("trace-import"), "0");
    let log = std::fs::read_to_string(out.join("log.txt")).unwrap();
    assert!(log.contains("roofline machine needs a CUDA GPU"), "{log}");
    assert!(log.contains("roofline profile needs a CUDA GPU"), "{log}");
    let check = std::fs::read_to_string(out.join("check.txt")).unwrap();
    assert!(check.contains("DRY RUN"), "{check}");
    assert!(!check.contains("Traceback"), "{check}");
    assert!(check.contains("# torch.profiler trace"), "{check}");
    assert!(check.contains("MISSING  machine "), "{check}");
    let plan = std::fs::read_to_string(out.join("plan.txt")).unwrap();
    assert!(plan.lines().last().unwrap().starts_with("total_seconds "));
    // What a device call returns: at most 8 files; the work directory packed.
    let mut files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "check.txt",
            "log.txt",
            "plan.txt",
            "steps.txt",
            "work.tar.gz"
        ]
    );
    let listing = Command::new("tar")
        .args(["tzf"])
        .arg(out.join("work.tar.gz"))
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout);
    for f in [
        "work/logs/machine.err",
        "work/versions.txt",
        "work/trace-shapes-bf16.json.gz",
        "work/trace-bf16.json",
        "work/trace-bf16-ops.txt",
        "work/known-expected.json",
    ] {
        assert!(listing.lines().any(|l| l == f), "no {f} in {listing}");
    }
}

/// check.py over a real machine bundle (the V100 study's ceilings, as a call's machine.json)
/// and the steps of a call that ran it: its machine section reads every figure without a
/// Python error.
#[test]
fn check_reads_a_machine_bundle() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("tests/fixtures/bundles/v100-deepcam-example.json"),
        dir.path().join("machine.json"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("steps.txt"),
        "machine                      rc=0       251000 ms   limit  300 s   roofline machine\n",
    )
    .unwrap();
    let o = Command::new("python3")
        .arg(repo().join("scripts/gpu/check.py"))
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && err.is_empty(), "{text}{err}");
    assert!(text.contains("machine under 300 s"), "{text}");
    assert!(text.contains("HBM copy >= 0.97"), "{text}");
    assert!(text.contains("not run in this call"), "{text}");
}
