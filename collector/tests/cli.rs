//! The `roofline` binary as a user runs it: exit codes, messages, files written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::roofline;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/bundles")
        .join(name)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

const V100: &str = "v100-deepcam-example.json";

#[test]
fn validate_accepts_the_fixture_and_refuses_garbage() {
    let ok = roofline(&["validate", arg(&fixture(V100))]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(String::from_utf8_lossy(&ok.stdout).contains(": ok (schema v1"));

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"schema_version\": 3}").unwrap();
    let o = roofline(&["validate", arg(&fixture(V100)), arg(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains(
            "bad.json is not a readable bundle: this bundle is schema v3; this build reads v1"
        ),
        "{e}"
    );
    assert!(e.contains("error: 1 of 2 bundles failed validation"), "{e}");

    let o = roofline(&["validate", arg(&dir.path().join("missing.json"))]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot read"), "{}", stderr(&o));
}

#[test]
fn gpu_commands_say_there_is_no_driver() {
    for cmd in [&["machine"][..], &["suite"]] {
        let o = roofline(cmd);
        assert_eq!(o.status.code(), Some(1), "{cmd:?}");
        let e = stderr(&o);
        let expected = format!(
            "error: roofline {} needs a CUDA GPU: no CUDA driver found (libcuda could not be loaded)",
            cmd[0]
        );
        assert!(e.starts_with(&expected), "{e}");
        assert!(!e.contains("panicked"), "{e}");
    }
    // Nothing is written when nothing was measured.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    let o = roofline(&["machine", "-o", arg(&out)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists());
    // profile needs the GPU's architecture: from --arch, --machine, or the driver.
    let o = roofline(&["profile", "--ncu", "/bin/true", "--", "true"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.starts_with("error: roofline profile needs a CUDA GPU: no CUDA driver found"),
        "{e}"
    );
}

#[test]
fn plot_writes_an_svg_and_checks_its_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("h.svg");
    let o = roofline(&["plot", arg(&fixture(V100)), "-o", arg(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));

    let o = roofline(&["plot", arg(&fixture(V100)), "-o", "x.png"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("name the file *.svg"), "{}", stderr(&o));
    let o = roofline(&["plot", arg(&fixture(V100)), "-o", "x.svg", "--device", "7"]);
    assert!(
        stderr(&o).contains("--device 7: the bundle has no such device (it has 0)"),
        "{}",
        stderr(&o)
    );
    assert!(!Path::new("x.svg").exists());
}

#[test]
fn info_formats_and_output_file() {
    let o = roofline(&["info", arg(&fixture(V100)), "--format", "csv"]);
    assert!(o.status.success());
    let csv = String::from_utf8(o.stdout).unwrap();
    assert!(csv.starts_with("name,launches,time_s,flops,flops_tensor,"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.json");
    let o = roofline(&[
        "info",
        arg(&fixture(V100)),
        "--format",
        "json",
        "-o",
        arg(&out),
    ]);
    assert!(o.status.success());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert_eq!(v["devices"][0]["name"], "Tesla V100-SXM2-16GB");
}

#[test]
fn info_baseline_prints_the_comparison() {
    let (cur, base) = (
        fixture("deepcam-v100-amp-fw.json"),
        fixture("deepcam-v100-fp32-fw.json"),
    );
    let o = roofline(&["info", arg(&cur), "--baseline", arg(&base), "--top", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.starts_with("total "), "{text}");
    assert!(text.contains("speed-up"), "{text}");
    let o = roofline(&[
        "info",
        arg(&cur),
        "--baseline",
        arg(&base),
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8(o.stdout)
            .unwrap()
            .starts_with("kernel,presence,baseline_time_s,")
    );
    let o = roofline(&[
        "info",
        arg(&cur),
        "--baseline",
        arg(&base),
        "--format",
        "json",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--baseline works with --format table or csv"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn merge_joins_and_refuses_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("merged.json");
    let f = fixture(V100);
    // Two ranks: the fixture and another run of the same kernels (other times).
    let single = roofline_model::parse_bundle(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let mut rank1 = single.clone();
    rank1.description = Some("rank 1".into());
    for k in &mut rank1.kernels {
        k.time.total_s *= 1.01;
    }
    let rank1_path = dir.path().join("rank1.json");
    std::fs::write(&rank1_path, roofline_model::to_json(&rank1).unwrap()).unwrap();
    let o = roofline(&["merge", arg(&f), arg(&rank1_path), "-o", arg(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(merged.kernels.len(), 2 * single.kernels.len());
    assert_eq!(merged.devices.len(), 1);
    assert_eq!(merged.provenance.tool, "roofline");

    // The same run again (another description): refused, as its launches would count twice.
    let mut again = single;
    again.description = Some("imported again".into());
    let again_path = dir.path().join("again.json");
    std::fs::write(&again_path, roofline_model::to_json(&again).unwrap()).unwrap();
    let never = dir.path().join("never.json");
    let o = roofline(&["merge", arg(&f), arg(&again_path), "-o", arg(&never)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("hold the same run"), "{}", stderr(&o));
    assert!(!never.exists());

    // Same device id, another GPU: refused, and nothing is written.
    let mut other = rank1.clone();
    other.devices[0].name = "NVIDIA A100-SXM4-40GB".into();
    let other_path = dir.path().join("a100.json");
    std::fs::write(&other_path, roofline_model::to_json(&other).unwrap()).unwrap();
    let never = dir.path().join("never.json");
    let o = roofline(&["merge", arg(&f), arg(&other_path), "-o", arg(&never)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("error: cannot merge the bundles: device \"0\" differs between"),
        "{}",
        stderr(&o)
    );
    assert!(!never.exists());

    let o = roofline(&["merge", arg(&f), arg(&rank1_path), "-o", arg(&rank1_path)]);
    assert!(stderr(&o).contains("is the input"), "{}", stderr(&o));
}

/// Compiles the C source `src` into `libcuda.so` and `libcuda.so.1` in `dir`: a stand-in driver
/// library for the tests below (a test double; no GPU figure comes from it).
fn build_stub_driver(dir: &Path, src: &Path) {
    for name in ["libcuda.so", "libcuda.so.1"] {
        let status = Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(dir.join(name))
            .arg(src)
            .status()
            .expect("a C compiler (cc) is needed to build the stub driver");
        assert!(status.success());
    }
}

/// The "driver present, no GPU" path: a stand-in `libcuda.so.1` whose `cuInit` answers
/// `CUDA_ERROR_NO_DEVICE` (100), built here with the system C compiler. This is a test double
/// for the driver library only; no GPU figure ever comes from it.
#[test]
fn a_driver_without_a_gpu_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("stub.c");
    std::fs::write(
        &src,
        "int cuInit(unsigned int flags) { (void)flags; return 100; }\n\
         int cuGetErrorString(int e, const char **s) { (void)e; *s = \"no CUDA-capable device is detected\"; return 0; }\n\
         int cuGetErrorName(int e, const char **s) { (void)e; *s = \"CUDA_ERROR_NO_DEVICE\"; return 0; }\n",
    )
    .unwrap();
    build_stub_driver(dir.path(), &src);
    let o = Command::new(env!("CARGO_BIN_EXE_roofline"))
        .arg("machine")
        .env("LD_LIBRARY_PATH", dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.starts_with("error: roofline machine needs a CUDA GPU: the CUDA driver found no GPU"),
        "{e}"
    );
    assert!(!e.contains("panicked"), "{e}");
}

/// A driver that reports one GPU, on a machine without NVRTC: `roofline machine` says that NVRTC
/// is missing and how to fix it, before touching the device, and writes nothing. The stand-in
/// driver is a test double built here; no GPU figure comes from it.
#[test]
fn a_missing_nvrtc_is_reported_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("stub.c");
    std::fs::write(
        &src,
        "int cuInit(unsigned int flags) { (void)flags; return 0; }\n\
         int cuDeviceGetCount(int *n) { *n = 1; return 0; }\n\
         int cuGetErrorString(int e, const char **s) { (void)e; *s = \"?\"; return 0; }\n\
         int cuGetErrorName(int e, const char **s) { (void)e; *s = \"?\"; return 0; }\n",
    )
    .unwrap();
    build_stub_driver(dir.path(), &src);
    let out = dir.path().join("m.json");
    let o = Command::new(env!("CARGO_BIN_EXE_roofline"))
        .args(["machine", "-o"])
        .arg(&out)
        .env("LD_LIBRARY_PATH", dir.path())
        .output()
        .unwrap();
    let e = stderr(&o);
    if Command::new("sh")
        .args(["-c", "ldconfig -p | grep -q libnvrtc"])
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("NVRTC is installed here; the missing-NVRTC path cannot be shown");
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.starts_with(
            "error: roofline machine needs a CUDA GPU: NVRTC (libnvrtc.so) could not be loaded"
        ),
        "{e}"
    );
    assert!(e.contains("LD_LIBRARY_PATH"), "{e}");
    assert!(!out.exists());
}

#[test]
fn suite_arguments_are_checked_before_the_gpu() {
    // clap refuses values outside the lists (exit status 2) and names the accepted ones.
    for (args, expected, accepted) in [
        (
            &["suite", "rnn"][..],
            "error: invalid value 'rnn' for '[STUDY]'",
            "[possible values: conv2d, lstm, gemm, all]",
        ),
        (
            &["suite", "--precision", "fp32,fp8"],
            "error: invalid value 'fp8' for '--precision <PRECISION>'",
            "[possible values: fp32, fp16, bf16]",
        ),
        (
            &["suite", "gemm", "--tensor", "maybe"],
            "error: invalid value 'maybe' for '--tensor <TENSOR>'",
            "[possible values: on, off, both]",
        ),
    ] {
        let o = roofline(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(e.starts_with(expected), "{args:?}: {e}");
        assert!(e.contains(accepted), "{args:?}: {e}");
    }
    let o = roofline(&["suite", "gemm", "--machine", "/nonexistent/m.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("error: cannot read /nonexistent/m.json"),
        "{}",
        stderr(&o)
    );
}

/// A stand-in driver (a test double built here; no GPU figure comes from it) that reports one
/// GPU named "Stub GPU" and answers the calls that open a timing session, and a stand-in NVRTC
/// that exports none of NVRTC's compile functions: `roofline suite --machine` with a bundle for
/// another GPU is refused by name, before anything is compiled (compiling through the stand-in
/// NVRTC would panic), and nothing is written.
#[test]
fn a_machine_for_another_gpu_is_refused_before_compiling() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("stub.c");
    std::fs::write(&src, STUB_DRIVER_WITH_ONE_GPU).unwrap();
    build_stub_driver(dir.path(), &src);
    let nvrtc = dir.path().join("nvrtc.c");
    std::fs::write(
        &nvrtc,
        "int nvrtcVersion(int *a, int *b) { *a = 0; *b = 0; return 0; }\n",
    )
    .unwrap();
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(dir.path().join("libnvrtc.so"))
        .arg(&nvrtc)
        .status()
        .expect("a C compiler (cc) is needed to build the stub NVRTC");
    assert!(status.success());
    let out = dir.path().join("s.json");
    let o = Command::new(env!("CARGO_BIN_EXE_roofline"))
        .args(["suite", "gemm", "--machine"])
        .arg(fixture(V100))
        .arg("-o")
        .arg(&out)
        .env("LD_LIBRARY_PATH", dir.path())
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.starts_with(
            "error: cannot run the suite: --machine describes Tesla V100-SXM2-16GB, not this GPU \
             (Stub GPU)"
        ),
        "{e}"
    );
    assert!(!e.contains("panicked"), "{e}");
    assert!(!out.exists());
}

/// The stand-in driver of the test above: success for every call a timing session makes,
/// one device, compute capability 9.0, named "Stub GPU".
const STUB_DRIVER_WITH_ONE_GPU: &str = r#"#include <string.h>
typedef unsigned long long u64;
int cuInit(unsigned int f) { (void)f; return 0; }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuDeviceGet(int *d, int o) { *d = o; return 0; }
int cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; static int ctx; *c = &ctx; return 0; }
int cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
int cuDevicePrimaryCtxRelease(int d) { (void)d; return 0; }
int cuDeviceGetAttribute(int *v, int a, int d) { (void)d;
  switch (a) { case 75: *v = 9; break; case 76: *v = 0; break; default: *v = 0; } return 0; }
int cuDeviceGetName(char *n, int len, int d) { (void)d; strncpy(n, "Stub GPU", len); return 0; }
int cuCtxSetCurrent(void *c) { (void)c; return 0; }
int cuCtxGetCurrent(void **c) { static int ctx; *c = &ctx; return 0; }
int cuCtxSynchronize(void) { return 0; }
int cuStreamCreate(void **s, unsigned int f) { (void)f; static int st; *s = &st; return 0; }
int cuStreamDestroy_v2(void *s) { (void)s; return 0; }
int cuStreamSynchronize(void *s) { (void)s; return 0; }
int cuEventCreate(void **e, unsigned int f) { (void)f; static int ev[8]; static int i; *e = &ev[i++ % 8]; return 0; }
int cuEventDestroy_v2(void *e) { (void)e; return 0; }
static char mem[1 << 16];
int cuMemAlloc_v2(u64 *p, size_t n) { (void)n; *p = (u64)mem; return 0; }
int cuMemAllocAsync(u64 *p, size_t n, void *s) { (void)n; (void)s; *p = (u64)mem; return 0; }
int cuMemFree_v2(u64 p) { (void)p; return 0; }
int cuMemFreeAsync(u64 p, void *s) { (void)p; (void)s; return 0; }
int cuMemsetD8Async(u64 p, unsigned char v, size_t n, void *s) { (void)p; (void)v; (void)n; (void)s; return 0; }
int cuMemsetD8_v2(u64 p, unsigned char v, size_t n) { (void)p; (void)v; (void)n; return 0; }
int cuGetErrorString(int e, const char **s) { (void)e; *s = "stub"; return 0; }
int cuGetErrorName(int e, const char **s) { (void)e; *s = "STUB"; return 0; }
"#;

/// `plot -o OUT.html`: the viewer's standalone page, holding the bundle, its baseline and the
/// view; or, from a binary built without the viewer, a clear refusal and no file.
#[test]
fn plot_writes_the_standalone_page_or_says_how_to_get_it() {
    use roofline_model::chart::standalone;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.html");
    let (cur, base) = (
        fixture("deepcam-v100-amp-fw.json"),
        fixture("deepcam-v100-fp32-fw.json"),
    );
    let args = [
        "plot",
        arg(&cur),
        "--baseline",
        arg(&base),
        "--chart",
        "time",
        "--top",
        "30",
        "--labels",
        "5",
        "-o",
        arg(&out),
    ];
    let o = roofline(&args);
    if roofline_collector::export::html::embedded_template().is_none() {
        assert_eq!(o.status.code(), Some(1));
        let e = stderr(&o);
        assert!(
            e.contains("built without the viewer's standalone page")
                && e.contains("cargo xtask web"),
            "{e}"
        );
        assert!(!out.exists());
        eprintln!("this build has no standalone page: only the refusal was checked");
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("wrote"), "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains(r#"<script type="module" id="roofline-app">"#));
    let saved = standalone::read(&html).unwrap();
    assert_eq!(saved.manifest.query, "chart=time&top=30&labels=5");
    let names: Vec<(&str, bool)> = saved
        .manifest
        .bundles
        .iter()
        .map(|e| (e.name.as_str(), e.baseline))
        .collect();
    assert_eq!(
        names,
        [
            ("deepcam-v100-amp-fw.json", false),
            ("deepcam-v100-fp32-fw.json", true)
        ]
    );
    // The bundles as the files hold them, but for each `<` of the kernel names written `\u003c`.
    for (text, file) in saved.bundles.iter().zip([&cur, &base]) {
        let orig = std::fs::read_to_string(file).unwrap();
        assert!(orig.contains('<') && !orig.contains("\\u003c"));
        assert!(text.replace("\\u003c", "<") == orig, "{}", file.display());
        assert_eq!(
            roofline_model::parse_bundle(text).unwrap(),
            roofline_model::parse_bundle(&orig).unwrap()
        );
    }
    // The same inputs, the same file.
    let again = dir.path().join("again.html");
    let mut args2 = args;
    args2[11] = arg(&again);
    assert!(roofline(&args2).status.success());
    assert_eq!(std::fs::read(&again).unwrap(), html.as_bytes());

    // A kernel name that would end a <script> element stays inside the bundle's element.
    let mut evil: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(V100)).unwrap()).unwrap();
    let name = "k</script><script>alert(1)</script><!--";
    evil["kernels"][0]["name"] = serde_json::json!(name);
    let evil_file = dir.path().join("evil.json");
    std::fs::write(&evil_file, serde_json::to_string(&evil).unwrap()).unwrap();
    let o = roofline(&["plot", arg(&evil_file), "--format", "html", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = String::from_utf8(o.stdout).unwrap();
    // manifest, bundle, wasm, app: four elements, four ends.
    assert_eq!(page.matches("</script").count(), 4);
    let saved = standalone::read(&page).unwrap();
    let b = roofline_model::parse_bundle(&saved.bundles[0]).unwrap();
    assert!(b.kernels.iter().any(|k| k.name == name));
}

#[test]
fn plot_format_and_options_must_agree() {
    let dir = tempfile::tempdir().unwrap();
    let v100 = fixture(V100);
    let out = |n: &str| dir.path().join(n);
    for (args, said) in [
        (
            vec!["--format", "html", "-o", arg(&out("a.svg"))],
            "names an SVG file, but --format is html",
        ),
        (
            vec!["-o", arg(&out("a.html")), "--width", "800"],
            "--width and --height size the SVG",
        ),
        (
            vec!["-o", arg(&out("a.svg")), "--baseline", arg(&v100)],
            "--baseline works with the HTML page only",
        ),
        (
            vec!["-o", arg(&out("a.svg")), "--labels", "3"],
            "--labels works with the HTML page only",
        ),
        (
            vec!["-o", arg(&out("a.txt"))],
            "name the file *.svg or *.html, or choose with --format svg|html",
        ),
        (
            vec!["-o", arg(&out("a.html")), "--labels", "41"],
            "--labels names at most 40",
        ),
    ] {
        let mut all = vec!["plot", arg(&v100)];
        all.extend(args);
        let o = roofline(&all);
        assert_eq!(o.status.code(), Some(1), "{all:?}");
        assert!(stderr(&o).contains(said), "{all:?}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // --format svg names any file an SVG.
    let o = roofline(&[
        "plot",
        arg(&fixture(V100)),
        "--format",
        "svg",
        "-o",
        arg(&out("chart.txt")),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read_to_string(out("chart.txt"))
            .unwrap()
            .starts_with("<svg")
    );
}

#[test]
fn catalogue_lists_the_gpus_and_shows_one_with_its_sources() {
    let o = roofline(&["catalogue"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let list = String::from_utf8_lossy(&o.stdout);
    let a100 = list
        .lines()
        .find(|l| l.starts_with("nvidia-a100-sxm4-80gb "))
        .unwrap_or_else(|| panic!("no A100 line:\n{list}"));
    // NVIDIA A100 datasheet: 2,039 GB/s, 19.5 TFLOP/s FP32, 312 TFLOP/s dense BF16.
    for figure in ["2.04 TB/s", "19.5 TFLOP/s", "312 TFLOP/s"] {
        assert!(a100.contains(figure), "{figure} missing: {a100}");
    }

    let o = roofline(&["catalogue", "A100 SXM4 80GB"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let one = String::from_utf8_lossy(&o.stdout);
    assert!(
        one.starts_with("NVIDIA A100 SXM4 80GB (nvidia-a100-sxm4-80gb)"),
        "{one}"
    );
    assert!(one.contains("\nsources\n[1] "), "{one}");

    let o = roofline(&["catalogue", "a100"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("no GPU of the catalogue is called `a100` (did you mean nvidia-a100-sxm4-40gb"),
        "{e}"
    );
}

/// `roofline export`: each bundle's kernel table (and operator table, for a trace's bundle) as
/// Parquet, read back here with the Parquet reader: one row per kernel name, the same figures as
/// `info --format csv`.
#[test]
fn export_writes_parquet_tables_with_the_csvs_figures() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    let dir = tempfile::tempdir().unwrap();
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/traces/mi250-rocm62-minitoy-train.json.gz");
    let run = dir.path().join("train-1.json");
    let o = roofline(&["import", arg(&trace), "-o", arg(&run)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("fleet");
    let o = roofline(&["export", arg(&fixture(V100)), arg(&run), "-o", arg(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("wrote 3 Parquet tables of 2 runs"),
        "{}",
        stderr(&o)
    );
    let read = |p: PathBuf| {
        let f = std::fs::File::open(p).unwrap();
        let batches: Vec<_> = ParquetRecordBatchReaderBuilder::try_new(f)
            .unwrap()
            .build()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        arrow_select_concat(&batches)
    };
    let v100 = read(out.join("kernels/v100-deepcam-example.parquet"));
    let csv = String::from_utf8(roofline(&["info", arg(&fixture(V100)), "--format", "csv"]).stdout)
        .unwrap();
    assert_eq!(v100.num_rows(), csv.lines().count() - 1);
    let col = |n: &str| v100.column(v100.schema().index_of(n).unwrap()).clone();
    // The first row is the largest time, as in the CSV; its figures are the CSV's.
    let first: Vec<&str> = csv.lines().nth(1).unwrap().rsplit(',').collect();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let cell = |name: &str| {
        let i = header.iter().position(|h| *h == name).unwrap();
        first[header.len() - 1 - i]
    };
    assert_eq!(
        col("time_s").as_primitive::<Float64Type>().value(0),
        cell("time_s").parse::<f64>().unwrap()
    );
    assert_eq!(
        col("headroom").as_primitive::<Float64Type>().value(0),
        cell("headroom").parse::<f64>().unwrap()
    );
    assert_eq!(
        col("run").as_string::<i32>().value(0),
        "v100-deepcam-example"
    );
    assert_eq!(
        col("ceiling_source").as_string::<i32>().value(0),
        "measured"
    );
    // The trace's run has an operator table with calls.
    let ops = read(out.join("operators/train-1.parquet"));
    let calls = ops.column(ops.schema().index_of("calls").unwrap());
    assert!(
        calls
            .as_primitive::<Int64Type>()
            .iter()
            .all(|c| c.is_some_and(|c| c > 0))
    );
    assert!(!out.join("operators/v100-deepcam-example.parquet").exists());
    // Two bundles of one name are refused: their tables would overwrite each other.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::copy(&run, other.join("train-1.json")).unwrap();
    let o = roofline(&[
        "export",
        arg(&run),
        arg(&other.join("train-1.json")),
        "-o",
        arg(&out),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("would both be run \"train-1\""),
        "{}",
        stderr(&o)
    );
}

/// The one batch of a table `roofline export` wrote.
fn arrow_select_concat(batches: &[arrow_array::RecordBatch]) -> arrow_array::RecordBatch {
    assert_eq!(batches.len(), 1);
    batches[0].clone()
}

/// A bundle of `n` launches of the V100 fixture's kernels, each its own entry, as a rank of a run
/// named `run` (its times scaled by `scale`).
fn many(n: usize, run: &str, scale: f64) -> roofline_model::Bundle {
    let mut b =
        roofline_model::parse_bundle(&std::fs::read_to_string(fixture(V100)).unwrap()).unwrap();
    b.description = Some(run.into());
    let kinds = std::mem::take(&mut b.kernels);
    b.kernels = (0..n)
        .map(|i| {
            let mut k = kinds[i % kinds.len()].clone();
            #[allow(clippy::cast_precision_loss)]
            let f = 1.0 + (i as f64) * 1e-4;
            k.time.total_s *= f * scale;
            k
        })
        .collect();
    b
}

#[test]
fn a_large_bundle_gets_a_columns_file_that_reads_as_its_json() {
    use roofline_model::bundle::columns;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(
        &a,
        roofline_model::to_json(&many(6_000, "rank 0", 1.0)).unwrap(),
    )
    .unwrap();
    std::fs::write(
        &b,
        roofline_model::to_json(&many(6_000, "rank 1", 1.1)).unwrap(),
    )
    .unwrap();
    let out = dir.path().join("run.json");
    let o = roofline(&["merge", arg(&a), arg(&b), "-o", arg(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    let json = roofline_model::parse_bundle(&text).unwrap();
    assert_eq!(json.kernels.len(), 12_000);
    // The bundle names its columns file at its start, with the id the file holds.
    let named = columns::named_in(&text.as_bytes()[..200]).unwrap();
    assert_eq!(Some(&named), json.columns.as_ref());
    assert_eq!(named.file, "run.columns");
    let bytes = std::fs::read(dir.path().join("run.columns")).unwrap();
    assert_eq!(columns::Columns::open(&bytes).unwrap().id(), named.id);
    // The same bundle, figure for figure.
    assert_eq!(columns::decode(&bytes).unwrap(), json);
    // Every command reads either; their reports agree.
    let info = |p: &Path| {
        let o = roofline(&["info", arg(p), "--format", "json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        o.stdout
    };
    assert_eq!(info(&out), info(&dir.path().join("run.columns")));
    // A page made from the columns file inlines the bundle's JSON, which reads as the bundle.
    if roofline_collector::export::html::embedded_template().is_some() {
        let page = dir.path().join("run.html");
        let o = roofline(&[
            "plot",
            arg(&dir.path().join("run.columns")),
            "--format",
            "html",
            "-o",
            arg(&page),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let saved =
            roofline_model::chart::standalone::read(&std::fs::read_to_string(&page).unwrap())
                .unwrap();
        assert_eq!(
            roofline_model::parse_bundle(&saved.bundles[0]).unwrap(),
            json
        );
    }

    // Written again from that bundle, small: the copy names no columns file (not the one it was
    // read with), and none is written.
    let small = dir.path().join("small.json");
    let one = dir.path().join("one.json");
    std::fs::write(&one, roofline_model::to_json(&many(10, "x", 1.2)).unwrap()).unwrap();
    let mut named_elsewhere =
        roofline_model::parse_bundle(&std::fs::read_to_string(&one).unwrap()).unwrap();
    named_elsewhere.columns = json.columns;
    std::fs::write(&one, roofline_model::to_json(&named_elsewhere).unwrap()).unwrap();
    let o = roofline(&["merge", arg(&one), arg(&fixture(V100)), "-o", arg(&small)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&small).unwrap();
    assert!(!text.contains("\"columns\""), "{}", &text[..300]);
    assert!(!dir.path().join("small.columns").exists());
    // To standard output: the text alone.
    let o = roofline(&["merge", arg(&a), arg(&b), "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!String::from_utf8_lossy(&o.stdout[..200]).contains("\"columns\""));
}
