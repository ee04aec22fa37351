//! Helpers shared by the end-to-end tests: where the fixtures are.

use std::path::PathBuf;

/// The `tests/fixtures` folder of the workspace.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Reads a fixture file as text, panicking with the path when it is missing (tests only).
pub fn fixture_text(relative: &str) -> String {
    let path = fixtures().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
