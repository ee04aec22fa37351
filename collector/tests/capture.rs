//! `roofline import` on real Nsight Compute output, and `roofline profile`'s handling of ncu and
//! the profiled program, end to end through the binary.
//!
//! The profile tests run a stand-in `ncu` (a shell script written by the test) that records its
//! arguments, runs the program, and "exports" a small hand-written raw CSV: it exercises process
//! handling, filters, placeholders and error paths. No figure from it is presented as a
//! measurement; the real-GPU runs are recorded under docs/measurements/.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn roofline(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_roofline"));
    c.args(args)
        .env("LD_LIBRARY_PATH", "/nonexistent")
        .env_remove("NCU");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `roofline profile --ncu NCU --arch 9.0 [EXTRA…] -o OUT -- true` with the stand-in ncu of
/// `dir`, in `mode` (none: a plain run).
fn profile_true(dir: &Path, ncu: &Path, out: &Path, extra: &[&str], mode: Option<&str>) -> Output {
    let mut args = vec!["profile", "--ncu", arg(ncu), "--arch", "9.0"];
    args.extend_from_slice(extra);
    args.extend(["-o", arg(out), "--", "true"]);
    let mut envs = vec![("FAKE_NCU_DIR", arg(dir))];
    envs.extend(mode.map(|m| ("FAKE_NCU_MODE", m)));
    roofline(&args, &envs)
}

#[test]
fn import_the_2020_study_outputs_with_its_convention() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v100.json");
    let ncu_dir = repo().join("tests/fixtures/ncu/nersc-v100-deepcam");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&ncu_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    files.sort();
    let machine = repo().join("tests/fixtures/bundles/v100-deepcam-example.json");
    let mut args = vec![
        "import",
        "--convention",
        "2020",
        "--machine",
        arg(&machine),
        "-o",
        arg(&out),
    ];
    args.extend(files.iter().map(|f| arg(f)));
    let o = roofline(&args, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("(797 launches, 45 kernel entries)"),
        "{}",
        stderr(&o)
    );
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(b.kernels.len(), 45);
    assert_eq!(b.machines.len(), 1, "the machine comes from --machine");
    // The architecture came from the machine's device (7.0), so tensor work was counted.
    assert!(
        b.kernels
            .iter()
            .any(|k| k.flops.tensor_fp16.unwrap_or(0.0) > 0.0)
    );

    let o = roofline(&["info", arg(&out), "--format", "csv"], &[]);
    assert!(o.status.success());
    let csv = String::from_utf8(o.stdout).unwrap();
    assert!(
        csv.lines().skip(1).any(|l| l.contains(",compute,")),
        "some kernel is compute-bound"
    );
}

#[test]
fn import_refuses_what_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("log.txt");
    std::fs::write(&f, "just a program log\n").unwrap();
    let o = roofline(
        &["import", arg(&f), "-o", arg(&dir.path().join("x.json"))],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no Nsight Compute table found"),
        "{}",
        stderr(&o)
    );
    let o = roofline(
        &[
            "import",
            arg(&dir.path().join("r.ncu-rep")),
            "--ncu",
            "/nonexistent/ncu",
        ],
        &[],
    );
    assert!(
        stderr(&o).contains("Nsight Compute (ncu) not found at --ncu /nonexistent/ncu"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_incomplete_capture_set_is_refused_unless_allow_partial() {
    let dir = tempfile::tempdir().unwrap();
    let ncu_dir = repo().join("tests/fixtures/ncu/nersc-v100-deepcam");
    let dram = std::fs::read_to_string(ncu_dir.join("out.dram__bytes.sum.csv")).unwrap();
    // The DRAM capture holding only its first 100 launches, as with a launch limit.
    let cut = dir.path().join("out.dram__bytes.sum.csv");
    std::fs::write(&cut, &dram[..=dram.find("\n\"100\",").unwrap()]).unwrap();
    let others = [
        "out.sm__cycles_elapsed.avg.csv",
        "out.sm__cycles_elapsed.avg.per_second.csv",
    ]
    .map(|f| ncu_dir.join(f));
    let out = dir.path().join("partial.json");
    let mut args = vec!["import", "--arch", "7.0", "-o", arg(&out), arg(&cut)];
    args.extend(others.iter().map(|p| arg(p)));
    let o = roofline(&args, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("out.dram__bytes.sum.csv holds 100 of the 797 launches of this capture set; the first missing is launch 100"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists(), "nothing written");
    args.push("--allow-partial");
    let o = roofline(&args, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(!b.complete, "marked incomplete");
    assert!(
        b.notes
            .iter()
            .any(|n| n.contains("dram__bytes.sum 100 of 797")
                && n.contains("sm__cycles_elapsed.avg 797 of 797")),
        "{:?}",
        b.notes
    );
    assert_eq!(
        b.kernels.iter().filter(|k| k.bytes.hbm.is_some()).count(),
        100
    );
}

/// A hand-written raw page in base units for the stand-in ncu to "export" (test input only).
const RAW: &str = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"dram__bytes.sum\",\"gpu__time_duration.sum\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\"
\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"byte\",\"nsecond\",\"inst\"
\"0\",\"1\",\"python\",\"h\",\"void gemm<float>(float*)\",\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"1000000\",\"20000\",\"500000000\"
\"1\",\"1\",\"python\",\"h\",\"void gemm<float>(float*)\",\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"1000000\",\"22000\",\"500000000\"
";

const FAKE_NCU: &str = r#"#!/bin/sh
# Stand-in for Nsight Compute, for the collector's tests only.
case "$1" in
  --version) echo "NVIDIA (R) Nsight Compute Command Line Profiler"; echo "Version 0.0 (test stand-in)"; exit 0;;
  --query-metrics) if [ "$FAKE_NCU_MODE" = queryfail ]; then echo "==ERROR== the driver could not be loaded" >&2; exit 1; fi; printf 'Device TEST\n----\nMetric Name   Metric Description\ndram__bytes   bytes\ngpu__time_duration   duration\nsm__sass_thread_inst_executed_op_ffma_pred_on   ffma\n'; exit 0;;
  --import) cat "$FAKE_NCU_DIR/raw.csv"; exit 0;;
esac
echo "$@" > "$FAKE_NCU_DIR/args"
report=""
log=/dev/null
while [ $# -gt 0 ]; do
  case "$1" in
    --export) report="$2"; shift 2;;
    --log-file) log="$2"; shift 2;;
    --) shift; break;;
    *) shift;;
  esac
done
case "$FAKE_NCU_MODE" in
  perm)
    echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0." >> "$log"
    exit 1;;
  ncufail)
    echo "==ERROR== Failed to find metric sm__nonexistent" >> "$log"
    exit 1;;
esac
echo "==PROF== Connected to process 1" >> "$log"
"$@"
rc=$?
# Real ncu logs this when the program fails (it is not an error of ncu's own).
[ $rc -ne 0 ] && echo "==ERROR== The application returned an error code ($rc)." >> "$log"
[ "$FAKE_NCU_MODE" = noreport ] || : > "$report.ncu-rep"
[ "$FAKE_NCU_MODE" = partial ] && echo '==ERROR== Failed to profile "gemm" in process 1' >> "$log"
echo "==PROF== Disconnected from process 1" >> "$log"
exit $rc
"#;

fn fake_ncu(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("ncu");
    std::fs::write(&p, FAKE_NCU).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("raw.csv"), RAW).unwrap();
    p
}

#[test]
fn profile_runs_one_ncu_pass_and_fills_placeholders() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(dir.path());
    let out = dir.path().join("run-{rank}-gpu{device}.json");
    let d = arg(dir.path());
    let o = roofline(
        &[
            "profile",
            "--ncu",
            arg(&ncu),
            "--arch",
            "9.0",
            "--nvtx",
            "step/",
            "--kernel",
            "gemm",
            "-o",
            arg(&out),
            "--",
            "echo",
            "hello from the program",
        ],
        &[
            ("FAKE_NCU_DIR", d),
            ("SLURM_PROCID", "3"),
            ("CUDA_VISIBLE_DEVICES", "1"),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("hello from the program"),
        "the program's output passes through"
    );
    let written = dir.path().join("run-3-gpu1.json");
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&written).unwrap()).unwrap();
    assert_eq!(b.kernels.len(), 2);
    assert_eq!(b.kernels[0].flops.fp32, Some(1e9));
    assert_eq!(b.kernels[0].time.total_s, 2e-5);
    assert_eq!(b.kernels[0].nvtx_range.as_deref(), Some("step/"));
    assert_eq!(b.kernels[0].tags.get("rank").map(String::as_str), Some("3"));
    assert_eq!(
        b.provenance.ncu_version.as_deref(),
        Some("Version 0.0 (test stand-in)")
    );
    assert!(
        b.notes
            .iter()
            .any(|n| n.starts_with("metrics this GPU does not list")),
        "{:?}",
        b.notes
    );
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    assert!(args.contains("--clock-control none"), "{args}");
    assert!(args.contains("--log-file "), "{args}");
    assert!(
        stderr(&o).contains("==PROF== Disconnected from process 1"),
        "ncu's log is echoed"
    );
    assert!(args.contains("--metrics gpu__time_duration.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,dram__bytes.sum "), "{args}");
    assert!(
        args.contains(
            "--nvtx --nvtx-include step/ --kernel-name-base demangled --kernel-name regex:gemm"
        ),
        "{args}"
    );
    assert!(args.ends_with("-- echo hello from the program\n"), "{args}");
}

/// ncu's query of the GPU's metrics failing stops the run before anything is profiled (asking
/// for every metric then would stop ncu at the first one the GPU lacks); ncu failing on some
/// launches but writing a report keeps the others, marked incomplete, with ncu's errors.
#[test]
fn ncu_failures_are_reported_not_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(dir.path());
    let out = dir.path().join("p.json");
    let o = profile_true(dir.path(), &ncu, &out, &[], Some("queryfail"));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains(
            "--query-metrics` failed (exit status: 1): ==ERROR== the driver could not be loaded"
        ) && e.contains("ncu stops at the first one it lacks"),
        "{e}"
    );
    assert!(!dir.path().join("args").exists(), "nothing was profiled");
    assert!(!out.exists());

    let o = profile_true(dir.path(), &ncu, &out, &[], Some("partial"));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("ncu reported 1 error (exit status 0), first: ==ERROR== Failed to profile \"gemm\" in process 1")
            && e.contains("(marked incomplete; its notes list the errors)"),
        "{e}"
    );
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(!b.complete);
    assert_eq!(b.kernels.len(), 2);
    assert!(
        b.notes
            .iter()
            .any(|n| n.starts_with("ncu reported errors (exit status 0)")
                && n.contains("Failed to profile \"gemm\"")),
        "{:?}",
        b.notes
    );
}

#[test]
fn a_failing_program_keeps_what_was_profiled() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(dir.path());
    let out = dir.path().join("p.json");
    let o = roofline(
        &[
            "profile",
            "--ncu",
            arg(&ncu),
            "--arch",
            "9.0",
            "-o",
            arg(&out),
            "--",
            "sh",
            "-c",
            "exit 3",
        ],
        &[("FAKE_NCU_DIR", arg(dir.path()))],
    );
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains(
            "the profiled program failed (exit status 3); the launches profiled before are in"
        ),
        "{e}"
    );
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(!b.complete);
    assert_eq!(b.kernels.len(), 2);
}

#[test]
fn a_stale_report_is_never_read_and_a_failed_import_keeps_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(dir.path());
    let out = dir.path().join("p.json");
    let kept = dir.path().join("kept");
    // Yesterday's report at the --keep-report path, and today's run profiles nothing.
    std::fs::write(dir.path().join("kept.ncu-rep"), "old").unwrap();
    let o = profile_true(
        dir.path(),
        &ncu,
        &out,
        &["--keep-report", arg(&kept)],
        Some("noreport"),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no kernel launch was profiled"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());

    // The export cannot be read: the report is kept beside the output for a later import.
    std::fs::write(dir.path().join("raw.csv"), "not a table").unwrap();
    let o = profile_true(dir.path(), &ncu, &out, &[], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("ncu's report is kept at"),
        "{}",
        stderr(&o)
    );
    assert!(dir.path().join("p.ncu-rep").is_file());
}

#[test]
fn counter_permission_and_missing_ncu_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(dir.path());
    let out = dir.path().join("p.json");
    let o = profile_true(dir.path(), &ncu, &out, &[], Some("perm"));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("ERR_NVGPUCTRPERM") && e.contains("NVreg_RestrictProfilingToAdminUsers=0"),
        "{e}"
    );
    assert!(!out.exists());

    let o = profile_true(
        dir.path(),
        &ncu,
        &out,
        &["--kernel", "nothing"],
        Some("noreport"),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no kernel launch matched the filters (--kernel nothing)"),
        "{}",
        stderr(&o)
    );

    let o = roofline(
        &["profile", "-o", arg(&out), "--", "true"],
        &[("PATH", "/nonexistent")],
    );
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("pass --ncu PATH or set NCU="), "{e}");

    let o = roofline(&["profile", "-o", "r{node}.json", "--", "true"], &[]);
    assert!(
        stderr(&o).contains("unknown placeholder {node}"),
        "{}",
        stderr(&o)
    );
}

/// `import --machine` for another GPU (issue 29): a CSV whose `CC` column says 9.0 against the
/// V100's machine (CC 7.0) is refused naming both GPUs, nothing written; with
/// `--allow-machine-mismatch` it is placed against that machine, and the bundle's notes say so.
/// A machine of the same GPU is taken without a word.
#[test]
fn a_machine_of_another_gpu_is_refused_or_applied_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("h100.csv");
    std::fs::write(&csv, RAW).unwrap();
    let v100 = repo().join("tests/fixtures/bundles/v100-deepcam-example.json");
    let out = dir.path().join("out.json");
    let o = roofline(
        &[
            "import",
            arg(&csv),
            "--machine",
            arg(&v100),
            "-o",
            arg(&out),
        ],
        &[],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("Tesla V100-SXM2-16GB (compute capability 7.0, 80 SMs)")
            && e.contains("compute capability 9.0")
            && e.contains("--allow-machine-mismatch"),
        "{e}"
    );
    assert!(!out.exists());
    let o = roofline(
        &[
            "import",
            arg(&csv),
            "--machine",
            arg(&v100),
            "--allow-machine-mismatch",
            "-o",
            arg(&out),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(
        b.notes
            .iter()
            .any(|n| n.contains("--allow-machine-mismatch")
                && n.contains("Tesla V100-SXM2-16GB")
                && n.contains("compute capability 9.0")),
        "{:?}",
        b.notes
    );
    // The same GPU: no refusal, no note about it.
    let v100_csv = dir.path().join("v100.csv");
    std::fs::write(&v100_csv, RAW.replace("\"9.0\"", "\"7.0\"")).unwrap();
    let o = roofline(
        &[
            "import",
            arg(&v100_csv),
            "--machine",
            arg(&v100),
            "-o",
            arg(&out),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("mismatch"), "{}", stderr(&o));
}

/// `-o run-{rank}.json` fills in the rank for `import` as for `profile`, and says so when no
/// launcher set one (issue 29: it kept `{rank}` in the file name without a word).
#[test]
fn import_fills_placeholders_and_says_when_a_rank_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("k.csv");
    std::fs::write(&csv, RAW).unwrap();
    let out = dir.path().join("run-{rank}.json");
    let o = roofline(&["import", arg(&csv), "-o", arg(&out)], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join("run-0.json").is_file());
    assert!(
        stderr(&o).contains("{rank} is 0: none of SLURM_PROCID"),
        "{}",
        stderr(&o)
    );
    let o = roofline(
        &["import", arg(&csv), "-o", arg(&out)],
        &[("SLURM_PROCID", "7")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join("run-7.json").is_file());
    assert!(!stderr(&o).contains("{rank} is 0"), "{}", stderr(&o));
    assert!(!out.exists(), "no file named with the placeholder itself");
}

/// A report whose launch has no value for a counter (`n/a`): `profile` keeps the launch, its
/// figure unknown (never the other counters' sum), and marks the bundle incomplete.
#[test]
fn profile_marks_a_counter_without_a_value_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(dir.path());
    let raw = RAW.replacen("\"22000\",\"500000000\"", "\"22000\",\"n/a\"", 1);
    assert_ne!(raw, RAW);
    std::fs::write(dir.path().join("raw.csv"), raw).unwrap();
    let out = dir.path().join("p.json");
    let o = profile_true(dir.path(), &ncu, &out, &[], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(!b.complete);
    assert_eq!(b.kernels[0].flops.fp32, Some(1e9));
    assert_eq!(b.kernels[1].flops.fp32, None);
    assert!(
        b.notes
            .iter()
            .any(|n| n.starts_with("INCOMPLETE: 1 launch lacks")),
        "{:?}",
        b.notes
    );
}
