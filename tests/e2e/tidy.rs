//! Tidy checks over the product's sources (rust-analyzer's `tidy.rs`): comments explain the code
//! as it is, so none cites an issue number or narrates the code's history ("this session",
//! "before:"); history belongs in commit messages. Test code (files under `tests/`, `tests.rs`
//! files and `#[cfg(test)]` modules) may tell what a test guards against.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The product's source files: Rust, JavaScript, Python, shell and CUDA, outside tests,
/// fixtures and build outputs.
fn product_files() -> Vec<PathBuf> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(p) else {
            return;
        };
        for e in entries {
            let p = e.unwrap().path();
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            if p.is_dir() {
                if !matches!(
                    name.as_str(),
                    "target" | "tests" | "fixtures" | "node_modules" | ".git" | "benches"
                ) {
                    walk(&p, out);
                }
            } else if ["rs", "js", "py", "sh", "cu", "cuh"]
                .iter()
                .any(|x| name.ends_with(&format!(".{x}")))
                && name != "tests.rs"
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for dir in [
        "shared",
        "import",
        "import-worker",
        "catalogue",
        "collector",
        "kernels",
        "viewer",
        "xtask",
        "scripts",
    ] {
        walk(&root().join(dir), &mut out);
    }
    out
}

/// The text before the first `#[cfg(test)]` (a Rust file's test module comes last).
fn without_tests(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or_default()
}

/// A comment's words that narrate history, if any.
fn narrates(line: &str) -> Option<&'static str> {
    let lower = line.to_lowercase();
    let comment =
        lower.contains("//") || lower.trim_start().starts_with('#') || lower.contains("/*");
    if !comment {
        return None;
    }
    let issue = lower.match_indices("issue ").any(|(i, _)| {
        lower[i + 6..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    });
    if issue {
        return Some("an issue number");
    }
    if lower.contains("this session") {
        return Some("\"this session\"");
    }
    if lower.contains("before:") && !lower.contains("\"before:") && !lower.contains("`before:") {
        return Some("\"before:\"");
    }
    None
}

#[test]
fn product_comments_explain_and_never_narrate() {
    let files = product_files();
    assert!(files.len() > 100, "only {} files", files.len());
    let mut found = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let text = if f.extension().is_some_and(|e| e == "rs") {
            without_tests(&text)
        } else {
            &text
        };
        for (i, line) in text.lines().enumerate() {
            if let Some(what) = narrates(line) {
                found.push(format!(
                    "{}:{}: {what}: {}",
                    f.strip_prefix(root()).unwrap_or(f).display(),
                    i + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "comments that narrate history (say what the code does; history goes in commit messages):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_tidy_check_finds_what_it_looks_for() {
    assert_eq!(
        narrates("// as the study did (issue 33)"),
        Some("an issue number")
    );
    assert_eq!(
        narrates("/// Before: it was two rules"),
        Some("\"before:\"")
    );
    assert_eq!(narrates("# made in this session"), Some("\"this session\""));
    assert_eq!(narrates("let before: f64 = 1.0;"), None);
    assert_eq!(narrates("// the time before the kernel"), None);
    assert_eq!(narrates("// \"before: a; after: b\" lines"), None);
}
