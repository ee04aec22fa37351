//! `cargo xtask bench-import`'s first table: `roofline import` (release) of SYNTHETIC traces of
//! 100,000 and 1,000,000 launches, plain and gzipped, beside Holistic Trace Analysis reading the
//! same files in the same run (`collector/tests/bench_memory.rs`, `bench_import_sizes`). HTA
//! goes into a virtual environment under the target directory (kept between runs).

use std::path::PathBuf;

use crate::process::{cargo, pip_install, run, target_dir, venv};

/// HTA, pinned.
const HTA: &str = "HolisticTraceAnalysis==0.5.0";

/// The virtual environment with HTA, made once.
fn environment() -> Result<PathBuf, String> {
    let env = target_dir().join("bench-hta/venv");
    let stamp = env.join(".roofline-packages");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(HTA) {
        return Ok(env);
    }
    let _ = std::fs::remove_dir_all(&env);
    venv(
        &env,
        "a virtual environment for HTA",
        "python3 with venv is needed",
    )?;
    pip_install(
        &env,
        &[HTA.to_string()],
        "pip install HolisticTraceAnalysis",
        "Holistic Trace Analysis",
        "",
    )?;
    std::fs::write(&stamp, HTA).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(env)
}

/// The import table at 100k and 1M launches, HTA beside it; `BENCH_SIZES` changes the sizes.
pub fn import_sizes() -> Result<(), String> {
    let env = environment()?;
    let mut c = cargo();
    c.args([
        "test",
        "--release",
        "-p",
        "roofline-collector",
        "--test",
        "bench_memory",
        "bench_import_sizes",
        "--",
        "--ignored",
        "--nocapture",
    ])
    .env("BENCH_HTA_PYTHON", env.join("bin/python"));
    run(
        "import benchmark at 100k and 1M launches, beside HTA (release)",
        c,
    )
}
