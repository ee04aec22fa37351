//! `cargo xtask fleet`: the fleet recipe of `docs/fleet.md` run end to end
//! (`scripts/fleet/recipe.py`): 1,000 runs exported as Parquet by the debug `roofline`, queried
//! with DuckDB and with Spark in local mode, the answers compared. `test` runs it as one check.
//! DuckDB and PySpark go into a virtual environment under the target directory (kept between
//! runs); Spark needs a Java runtime, installed with apt as OpenJDK 17 when `java` is missing.

use std::path::PathBuf;
use std::process::Command;

use crate::process::{cargo, pip_install, root, run, target_dir, venv};

/// The Python packages the recipe needs, pinned.
const PACKAGES: [&str; 2] = ["duckdb==2.0.1", "pyspark==4.3.0"];

/// A Java runtime for Spark, from apt when `java` is missing.
fn ensure_java() -> Result<(), String> {
    if Command::new("java").arg("-version").output().is_ok() {
        return Ok(());
    }
    let mut c = Command::new("apt-get");
    c.arg("update").arg("-qq");
    run("apt-get update", c)?;
    let mut c = Command::new("apt-get");
    c.args(["install", "-y", "-qq", "openjdk-17-jre-headless"])
        .env("DEBIAN_FRONTEND", "noninteractive");
    run("install a Java runtime (for Spark)", c)
}

/// The virtual environment with DuckDB and PySpark, made once.
fn environment() -> Result<PathBuf, String> {
    let dir = target_dir().join("fleet-check");
    let env = dir.join("venv");
    let stamp = env.join(".roofline-packages");
    let want = PACKAGES.join(" ");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()) {
        return Ok(env);
    }
    let _ = std::fs::remove_dir_all(&env);
    venv(
        &env,
        "a virtual environment for the fleet recipe",
        "python3 with venv is needed",
    )?;
    pip_install(
        &env,
        &PACKAGES.map(String::from),
        "pip install duckdb and pyspark",
        "DuckDB and PySpark",
        "",
    )?;
    std::fs::write(&stamp, want).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(env)
}

/// Builds the debug `roofline` and runs the recipe with Spark.
pub fn fleet() -> Result<(), String> {
    let mut c = cargo();
    c.args(["build", "-p", "roofline-collector", "--bin", "roofline"]);
    run("build roofline", c)?;
    ensure_java()?;
    let env = environment()?;
    let mut c = Command::new(env.join("bin/python"));
    c.arg(root().join("scripts/fleet/recipe.py"))
        .arg("--roofline")
        .arg(target_dir().join("debug/roofline"))
        .args(["--runs", "1000", "--spark", "--out"])
        .arg(target_dir().join("fleet-check/work"));
    run(
        "the fleet recipe: 1,000 runs in Parquet, DuckDB and Spark",
        c,
    )
}
