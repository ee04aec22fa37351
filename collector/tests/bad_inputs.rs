//! The bad-input corpus (`tests/fixtures/bad/`, see its README) through the binary: every file
//! is refused with exit status 1, its `.expected` text in the message, no panic, nothing written.
//!
//! A case is a file and its `.expected`; `NAME.args` (one argument a line, `{}` for the file,
//! `{out}` for the output) gives the command line, else `*.json` runs through
//! `roofline validate` and anything else (CSV, `trace-*` traces, compressed files) through
//! `roofline import FILE -o OUT`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/bad")
}

/// Whether a corpus file is a case (not its README, expected text or arguments).
fn is_case(p: &Path) -> bool {
    let name = p.file_name().unwrap_or_default().to_string_lossy();
    name != "README.md" && !name.ends_with(".expected") && !name.ends_with(".args")
}

#[test]
fn every_bad_input_gets_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| is_case(p))
        .collect();
    files.sort();
    assert!(files.len() >= 40, "the corpus shrank: {files:?}");
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
        let args_path = PathBuf::from(format!("{}.args", f.display()));
        if let Ok(args) = std::fs::read_to_string(&args_path) {
            for a in args.lines() {
                match a {
                    "{}" => c.arg(&name),
                    "{out}" => c.arg(&out),
                    a => c.arg(a),
                };
            }
        } else if name.ends_with(".json") && !name.starts_with("trace-") {
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
        if let Some(input) = p.to_str().and_then(|s| {
            s.strip_suffix(".expected")
                .or_else(|| s.strip_suffix(".args"))
        }) {
            assert!(Path::new(input).is_file(), "{} has no input", p.display());
        }
        if is_case(&p) {
            let expected = PathBuf::from(format!("{}.expected", p.display()));
            assert!(expected.is_file(), "{} has no .expected", p.display());
        }
    }
}
