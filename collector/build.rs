//! Embeds the viewer's standalone page template (`standalone.html`, written by `cargo xtask web`
//! into `dist/`, or found in `$ROOFLINE_VIEWER_DIST`) for `roofline plot --format html`.
//!
//! Without it the collector still builds (a fresh clone has no `dist/` contents): the embedded
//! text is empty and `plot --format html` says how to get it. `dist/` is tracked (its README), so
//! it exists in every clone and cargo can watch it without rerunning this script on every build.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=ROOFLINE_VIEWER_DIST");
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let workspace = manifest_dir.parent().map(PathBuf::from).unwrap_or_default();
    let dist = match std::env::var_os("ROOFLINE_VIEWER_DIST") {
        Some(d) => workspace.join(d),
        None => workspace.join("dist"),
    };
    let page = dist.join("standalone.html");
    // The file when it is there (its changes), else the folder (the file's arrival). A path that
    // does not exist would rerun this script, and rebuild the crate, on every build.
    if page.is_file() {
        println!("cargo:rerun-if-changed={}", page.display());
    } else if dist.is_dir() {
        println!("cargo:rerun-if-changed={}", dist.display());
    }
    let text = std::fs::read_to_string(&page).unwrap_or_default();
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("standalone.html");
    if std::fs::read_to_string(&out).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&out, text).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    }
}
