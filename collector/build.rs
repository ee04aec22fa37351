//! With the `viewer-page` feature, embeds the viewer's standalone page template
//! (`standalone.html`, written by `cargo xtask web` into `dist/`, or found in
//! `$ROOFLINE_VIEWER_DIST`) for `roofline plot --format html`, and fails the build without it.
//! Without the feature, embeds nothing and says so: the binary then refuses HTML and says how to
//! get it.
//!
//! `dist/` is tracked (its README), so it exists in every clone and cargo can watch it without
//! rerunning this script on every build.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_VIEWER_PAGE").is_none() {
        println!(
            "cargo:warning=roofline is built without the viewer's standalone page: `roofline plot --format html` will refuse; for it, run `cargo xtask web` and build with `--features viewer-page`"
        );
        return;
    }
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
    let text = match std::fs::read_to_string(&page) {
        Ok(text) if !text.trim().is_empty() => text,
        Ok(_) => {
            return fail(&format!(
                "{} is empty: run `cargo xtask web` to build the viewer, then build again",
                page.display()
            ));
        }
        Err(e) => {
            return fail(&format!(
                "the `viewer-page` feature embeds the viewer's standalone page, and {} cannot be read ({e}): run `cargo xtask web` first (it writes dist/standalone.html), or set ROOFLINE_VIEWER_DIST to a folder holding standalone.html, or build without `--features viewer-page` (then `roofline plot` writes SVG only)",
                page.display()
            ));
        }
    };
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("standalone.html");
    if std::fs::read_to_string(&out).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&out, text).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    }
}

/// Fails the build with `message`: cargo prints it as the build's error once this script ends.
fn fail(message: &str) {
    println!("cargo::error={message}");
}
