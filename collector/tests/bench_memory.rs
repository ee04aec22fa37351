//! Benchmark, not a timed test (ignored): the time and peak memory of `roofline import`, `info`
//! (per kernel and per operator), `info --baseline` (per kernel and per operator) and `plot` (per
//! kernel and per operator) on a SYNTHETIC torch.profiler trace of a million kernel launches, and
//! of refusing an event larger than the reader's limit, each run through the binary under GNU
//! `time` (its maximum resident set size). It prints a table (the README's); it asserts nothing
//! about speed. Run pinned to one core, in release:
//!
//! `taskset -c 0 cargo test --release -p roofline-collector --test bench_memory -- --ignored --nocapture`
//!
//! `BENCH_KERNELS` changes the number of launches (1,000,000 by default); `BENCH_DIR` keeps the
//! files in that folder. Nothing here is a
//! measurement of a GPU: the trace is made up (its shape is Kineto's: a step annotation, per
//! three operators with recorded shapes four runtime launch calls and their kernels), written to
//! a temporary folder and removed.

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::Command;

/// Kernel names of the kind a training step launches, lengths as they come.
const NAMES: [&str; 8] = [
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
    "void at::native::(anonymous namespace)::layer_norm_stats(int)",
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn",
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})",
    "triton_poi_fused_add_mul_0",
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8::Params)",
];

/// Writes a SYNTHETIC trace of `kernels` launches (times scaled by `scale`); returns its size.
fn write_trace(path: &Path, kernels: u64, scale: f64) -> io::Result<u64> {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    write!(
        w,
        r#"{{"schemaVersion": 1, "deviceProperties": [{{"id": 0, "name": "SYNTHETIC GPU", "computeMajor": 9, "computeMinor": 0, "numSms": 132}}], "traceEvents": ["#
    )?;
    let mut t: u64 = 1_700_000_000_000_000;
    let mut k = 0u64;
    let ops: [(&str, &str, &[usize]); 3] = [
        (
            "aten::mm",
            r#""Input Dims": [[8192, 4096], [4096, 4096]], "Input type": ["c10::BFloat16", "c10::BFloat16"]"#,
            &[0],
        ),
        (
            "aten::native_layer_norm",
            r#""Input Dims": [[8192, 4096], [], [4096], [4096], []], "Input type": ["c10::BFloat16", "", "c10::BFloat16", "c10::BFloat16", "Scalar"], "Concrete Inputs": ["", "[4096]", "", "", "1e-05"]"#,
            &[2, 3],
        ),
        (
            "aten::add",
            r#""Input Dims": [[8192, 4096], [8192, 4096], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"], "Concrete Inputs": ["", "", "1"]"#,
            &[1],
        ),
    ];
    let mut first = true;
    while k < kernels {
        if k.is_multiple_of(4000) {
            if !first {
                w.write_all(b",\n")?;
            }
            first = false;
            write!(
                w,
                r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "pid": 1, "tid": 1, "ts": {t}, "dur": 400000}}"#,
                k / 4000
            )?;
        }
        for (op, args, launched) in ops {
            write!(
                w,
                ",\n{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{op}\", \"pid\": 1, \"tid\": 1, \"ts\": {t}, \"dur\": 60, \"args\": {{\"External id\": {k}, {args}}}}}"
            )?;
            for (i, &n) in launched.iter().enumerate() {
                let c = k + 1;
                let rt = t + 5 + 20 * i as u64;
                let dur = (3.0 + (k % 97) as f64) * scale;
                write!(
                    w,
                    ",\n{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": {rt}, \"dur\": 5, \"args\": {{\"correlation\": {c}}}}},\n{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{}\", \"pid\": 0, \"tid\": 7, \"ts\": {}, \"dur\": {dur:.3}, \"args\": {{\"device\": 0, \"stream\": 7, \"correlation\": {c}, \"grid\": [132, 1, 1], \"block\": [256, 1, 1]}}}}",
                    NAMES[(n + 4 * (k as usize % 2)) % NAMES.len()],
                    rt + 10,
                )?;
                k += 1;
            }
            t += 100;
        }
    }
    w.write_all(b"\n]}\n")?;
    w.flush()?;
    Ok(std::fs::metadata(path)?.len())
}

/// One command's cost: wall seconds, CPU seconds (user + system), peak resident set in MB.
struct Cost {
    wall: f64,
    cpu: f64,
    peak_mb: f64,
    ok: bool,
    /// What it printed (HTA's counts of what it read).
    stdout: String,
}

/// Runs `roofline ARGS` under GNU time.
fn measure(args: &[&str]) -> Option<Cost> {
    measure_program(Path::new(env!("CARGO_BIN_EXE_roofline")), args)
}

/// Runs `program ARGS` under GNU time (and `timeout`, 900 s: a peer that takes longer is
/// reported as not done).
fn measure_program(program: &Path, args: &[&str]) -> Option<Cost> {
    let o = Command::new("/usr/bin/time")
        .args(["-f", "TIME %e %U %S %M", "timeout", "900"])
        .arg(program)
        .args(args)
        .env("LD_LIBRARY_PATH", "/nonexistent")
        .output()
        .ok()?;
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err.lines().rev().find(|l| l.starts_with("TIME "))?;
    let v: Vec<f64> = line[5..]
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let [wall, user, sys, kb] = v[..] else {
        return None;
    };
    Some(Cost {
        wall,
        cpu: user + sys,
        peak_mb: kb * 1024.0 / 1e6,
        ok: o.status.success(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
    })
}

/// `path` gzipped (flate2's default level, as `gzip` writes) beside it as `path.gz`; its size.
fn gzip(path: &Path) -> io::Result<(String, u64)> {
    let out = format!("{}.gz", path.display());
    let mut gz = flate2::write::GzEncoder::new(
        BufWriter::with_capacity(1 << 20, std::fs::File::create(&out)?),
        flate2::Compression::default(),
    );
    io::copy(&mut std::fs::File::open(path)?, &mut gz)?;
    gz.finish()?.flush()?;
    let size = std::fs::metadata(&out)?.len();
    Ok((out, size))
}

/// Benchmark (ignored): `roofline import` of SYNTHETIC traces of 100,000 and 1,000,000 launches,
/// plain and gzipped, beside Holistic Trace Analysis reading the same files in the same run
/// (`scripts/bench/hta_kernels.py`: its event table and kernel breakdown), each under GNU time.
/// HTA runs with the Python named by `BENCH_HTA_PYTHON` (`cargo xtask bench-import` makes a
/// virtual environment with it); without it, its rows say so. `BENCH_SIZES` changes the sizes
/// (`100000,1000000`). Prints the table of `docs/performance.md`; asserts nothing about speed.
#[test]
#[ignore = "benchmark: writes ~0.9 GB of SYNTHETIC traces; run in release with --ignored --nocapture"]
fn bench_import_sizes() {
    let sizes: Vec<u64> = std::env::var("BENCH_SIZES")
        .unwrap_or_else(|_| "100000,1000000".into())
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let hta = std::env::var("BENCH_HTA_PYTHON").ok();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/bench/hta_kernels.py");
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::env::var("BENCH_DIR").map_or_else(|_| tmp.path().to_path_buf(), Into::into);
    let cell = |c: &Option<Cost>| match c {
        Some(c) if c.ok => format!("{:.2} s / {:.2} s / {:.0} MB", c.wall, c.cpu, c.peak_mb),
        Some(c) => format!("failed after {:.0} s ({:.0} MB)", c.wall, c.peak_mb),
        None => "not run".into(),
    };
    println!(
        "| input | size | roofline import: wall / CPU / peak | HTA: wall / CPU / peak | HTA / roofline (wall) | target |"
    );
    println!("|---|---:|---:|---:|---:|---|");
    let mut notes: Vec<String> = Vec::new();
    for n in sizes {
        let plain = dir.join(format!("t{n}.json"));
        let size = write_trace(&plain, n, 1.0).unwrap();
        let (gz, gz_size) = gzip(&plain).unwrap();
        for (what, file, bytes) in [
            ("`.json`", plain.to_str().unwrap().to_string(), size),
            ("`.json.gz`", gz, gz_size),
        ] {
            let out = dir.join("run.json");
            let ours = measure(&["import", &file, "-o", out.to_str().unwrap()]);
            let peer = hta
                .as_ref()
                .map(|py| measure_program(Path::new(py), &[script.to_str().unwrap(), &file]));
            if let Some(Some(c)) = &peer {
                notes.extend(
                    c.stdout
                        .lines()
                        .filter(|l| l.starts_with("hta:"))
                        .map(|l| format!("{n} launches, {what}: {l}")),
                );
            }
            let ratio = match (&ours, &peer) {
                (Some(a), Some(Some(b))) if a.ok && b.ok => format!("{:.1}", b.wall / a.wall),
                _ => "–".into(),
            };
            println!(
                "| {n} launches (SYNTHETIC), {what} | {:.1} MB | {} | {} | {ratio} | {} |",
                bytes as f64 / 1e6,
                cell(&ours),
                peer.map_or_else(|| "no BENCH_HTA_PYTHON".into(), |c| cell(&c)),
                if n >= 1_000_000 {
                    "< 8 s wall, < 1 GB"
                } else {
                    ""
                },
            );
            let _ = std::fs::remove_file(&out);
            let _ = std::fs::remove_file(dir.join("run.columns"));
        }
        let _ = std::fs::remove_file(&plain);
    }
    for n in notes {
        println!("{n}");
    }
}

#[test]
#[ignore = "benchmark: writes a ~0.5 GB SYNTHETIC trace; run in release with --ignored --nocapture"]
fn bench_million_kernels() {
    let n: u64 = std::env::var("BENCH_KERNELS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    // `BENCH_DIR` keeps the files there (to look at them, or to profile a command by hand).
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::env::var("BENCH_DIR").map_or_else(|_| tmp.path().to_path_buf(), Into::into);
    let p = |f: &str| dir.join(f).to_str().unwrap().to_string();
    let size = write_trace(Path::new(&p("a.json")), n, 1.0).unwrap();
    write_trace(Path::new(&p("b.json")), n, 0.8).unwrap();
    // One event of 1 GiB (its name), gzipped to about a megabyte: refused at 16 MiB.
    {
        let f = std::fs::File::create(p("huge.json.gz")).unwrap();
        let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::default());
        gz.write_all(br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": ""#)
            .unwrap();
        let block = vec![b'a'; 1 << 20];
        for _ in 0..1024 {
            gz.write_all(&block).unwrap();
        }
        gz.write_all(br#"", "ts": 1, "dur": 1}]}"#).unwrap();
        gz.finish().unwrap();
    }
    let trace = format!(
        "{:.0} MB trace, {n} kernel launches (SYNTHETIC)",
        size as f64 / 1e6
    );
    let bundle = format!("its bundle, {n} kernel entries");
    let rows: Vec<(&str, String, Vec<String>, f64)> = vec![
        (
            "import",
            trace.clone(),
            vec!["import".into(), p("a.json"), "-o".into(), p("a-run.json")],
            8.0,
        ),
        (
            "import (the baseline's)",
            trace,
            vec!["import".into(), p("b.json"), "-o".into(), p("b-run.json")],
            8.0,
        ),
        (
            "info",
            bundle.clone(),
            vec!["info".into(), p("a-run.json"), "-o".into(), p("info.txt")],
            f64::NAN,
        ),
        (
            "info --format csv",
            bundle.clone(),
            vec![
                "info".into(),
                p("a-run.json"),
                "--format".into(),
                "csv".into(),
                "-o".into(),
                p("info.csv"),
            ],
            f64::NAN,
        ),
        (
            "info --group-by op",
            bundle.clone(),
            vec![
                "info".into(),
                p("a-run.json"),
                "--group-by".into(),
                "op".into(),
                "-o".into(),
                p("ops.txt"),
            ],
            f64::NAN,
        ),
        (
            "info --baseline --group-by kernel",
            "two such bundles".to_string(),
            vec![
                "info".into(),
                p("a-run.json"),
                "--baseline".into(),
                p("b-run.json"),
                "--group-by".into(),
                "kernel".into(),
                "-o".into(),
                p("cmp-kernels.txt"),
            ],
            f64::NAN,
        ),
        (
            "plot",
            bundle.clone(),
            vec!["plot".into(), p("a-run.json"), "-o".into(), p("a.svg")],
            f64::NAN,
        ),
        (
            "plot --group-by op",
            bundle,
            vec![
                "plot".into(),
                p("a-run.json"),
                "--group-by".into(),
                "op".into(),
                "-o".into(),
                p("a-ops.svg"),
            ],
            f64::NAN,
        ),
        (
            "info --baseline (per operator)",
            "two such bundles".to_string(),
            vec![
                "info".into(),
                p("a-run.json"),
                "--baseline".into(),
                p("b-run.json"),
                "-o".into(),
                p("cmp.txt"),
            ],
            f64::NAN,
        ),
        (
            "import (refused)",
            "1 MB .json.gz: one event with a 1 GiB name".into(),
            vec![
                "import".into(),
                p("huge.json.gz"),
                "-o".into(),
                p("never.json"),
            ],
            f64::NAN,
        ),
    ];
    println!("| command | input | wall | CPU | peak memory | target |");
    println!("|---|---|---:|---:|---:|---|");
    for (what, input, args, secs) in rows {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let target = if secs.is_nan() {
            "< 1 GB".to_string()
        } else {
            format!("< {secs} s CPU, < 1 GB")
        };
        match measure(&args) {
            Some(c) => println!(
                "| `{what}` | {input} | {:.2} s | {:.2} s | {:.0} MB | {target}{} |",
                c.wall,
                c.cpu,
                c.peak_mb,
                if c.ok || what.contains("refused") {
                    ""
                } else {
                    " (FAILED)"
                }
            ),
            None => println!(
                "| `{what}` | {input} | ? | ? | ? (no GNU time at /usr/bin/time) | {target} |"
            ),
        }
    }
}
