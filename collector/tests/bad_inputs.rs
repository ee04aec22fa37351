//! The bad-input corpus (`tests/fixtures/bad/`, see its README) through the binary: every file
//! is refused with exit status 1, its `.expected` text in the message, no panic, nothing written.

use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/bad")
}

#[test]
fn every_bad_input_gets_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "csv"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "the corpus shrank: {files:?}");
    let mut failures = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let expected_path = PathBuf::from(format!("{}.expected", f.display()));
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
        let expected = expected.trim_end_matches('\n');
        assert!(!expected.is_empty(), "{name}.expected is empty");
        let mut c = Command::new(env!("CARGO_BIN_EXE_roofline"));
        c.env("LD_LIBRARY_PATH", "/nonexistent")
            .current_dir(corpus());
        if name.ends_with(".json") {
            c.args(["validate", &name]);
        } else {
            c.args(["import", &name, "-o"]).arg(&out);
        }
        let o = c.output().unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        if o.status.code() != Some(1)
            || !e.starts_with("error: ")
            || !e.contains(expected)
            || e.contains("panicked")
            || out.exists()
        {
            failures.push(format!(
                "{name}: status {:?}, written: {}, expected {expected:?} in:\n{e}",
                o.status,
                out.exists()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_expected_file_has_its_input() {
    for e in std::fs::read_dir(corpus()).unwrap() {
        let p = e.unwrap().path();
        if let Some(input) = p.to_str().and_then(|s| s.strip_suffix(".expected")) {
            assert!(Path::new(input).is_file(), "{} has no input", p.display());
        }
    }
}
