//! The architecture's invariants, checked (rust-analyzer's tidy tests, rerun's dependency
//! checks): see ARCHITECTURE.md.
//!
//! - `roofline-model` and `roofline-import` do no I/O and touch no GPU or DOM: their manifests
//!   name no crate outside the allowed list, and their sources use no file system, process,
//!   thread, network, environment or clock.
//! - The collector and the viewer never depend on each other; the model depends on no other
//!   crate of the workspace, the import crate only on the model (and the catalogue).
//! - The GPU library (`roofline-gpu`) depends on no front end, the CLI included, and only it and
//!   the kernel catalogue (NVRTC alone, no driver) name cudarc; the catalogue does no I/O.
//! - The SASS audit is a developer crate of its own (`kernels/audit/`): the CLI's package holds
//!   none of it.
//! - The model's floors: `bundle` (the format) uses neither `analysis` nor `chart`; `analysis`
//!   does not use `chart` (code outside tests).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The names under `[dependencies]` (and target-specific dependency tables) of a manifest.
fn dependencies(manifest: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(manifest)).unwrap();
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]"
                || (line.starts_with("[target.") && line.ends_with(".dependencies]"));
            continue;
        }
        if inside && let Some((name, _)) = line.split_once('=') {
            let name = name.trim();
            if !name.is_empty() && !name.starts_with('#') {
                out.push(name.trim_end_matches(".workspace").to_string());
            }
        }
    }
    out
}

fn sources(dir: &str) -> Vec<(PathBuf, String)> {
    fn walk(p: &Path, out: &mut Vec<(PathBuf, String)>) {
        for e in std::fs::read_dir(p).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join(dir), &mut out);
    out
}

#[test]
fn the_pure_crates_depend_on_nothing_that_does_io() {
    let allowed = [
        "roofline-model",
        "roofline-catalogue",
        "memchr",
        "rustc-hash",
        "schemars",
        "serde",
        "serde_json",
        "sha2",
        "thiserror",
    ];
    for manifest in [
        "shared/Cargo.toml",
        "import/Cargo.toml",
        "catalogue/Cargo.toml",
    ] {
        for d in dependencies(manifest) {
            assert!(
                allowed.contains(&d.as_str()),
                "{manifest} depends on {d}: the model and import crates stay pure (ARCHITECTURE.md)"
            );
        }
    }
    assert!(!dependencies("shared/Cargo.toml").contains(&"roofline-import".to_string()));
}

#[test]
fn the_pure_crates_do_no_io() {
    let forbidden = [
        "std::fs",
        "std::process",
        "std::thread",
        "std::net",
        "std::env",
        "SystemTime",
        "Instant::now",
        "std::io::stdout",
        "std::io::stderr",
        "println!",
        "eprintln!",
    ];
    for dir in ["shared/src", "import/src", "catalogue/src"] {
        for (path, text) in sources(dir) {
            // Tests beside the code may read fixtures.
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for f in forbidden {
                assert!(
                    !code.contains(f),
                    "{} uses {f}: the model and import crates do no I/O (ARCHITECTURE.md)",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn the_front_ends_do_not_depend_on_each_other() {
    assert!(!dependencies("collector/Cargo.toml").contains(&"roofline-viewer".to_string()));
    assert!(!dependencies("viewer/Cargo.toml").contains(&"roofline-collector".to_string()));
    // The import crate reads the model and the GPU catalogue (datasheet ceilings for a trace
    // without a measured machine), both pure.
    for d in dependencies("import/Cargo.toml") {
        assert!(
            !d.starts_with("roofline-") || d == "roofline-model" || d == "roofline-catalogue",
            "import depends on {d}"
        );
    }
    assert!(!dependencies("catalogue/Cargo.toml").contains(&"roofline-import".to_string()));
    // The page's importer is the model and the import crate in a worker: no front end.
    for d in dependencies("import-worker/Cargo.toml") {
        assert!(
            !d.starts_with("roofline-") || d == "roofline-model" || d == "roofline-import",
            "import-worker depends on {d}"
        );
    }
}

/// The workspace's crates that depend on other crates of the workspace, by manifest, with the
/// only ones each may name.
#[test]
fn the_gpu_library_and_the_kernels_depend_on_no_front_end() {
    let rules = [
        (
            "collector/gpu/Cargo.toml",
            ["roofline-model", "roofline-kernels"].as_slice(),
        ),
        ("kernels/Cargo.toml", ["roofline-model"].as_slice()),
        (
            "kernels/audit/Cargo.toml",
            ["roofline-model", "roofline-kernels"].as_slice(),
        ),
    ];
    for (manifest, allowed) in rules {
        for d in dependencies(manifest) {
            assert!(
                !d.starts_with("roofline-") || allowed.contains(&d.as_str()),
                "{manifest} depends on {d}: the GPU library and the kernels know no front end (ARCHITECTURE.md)"
            );
        }
    }
    assert!(!dependencies("collector/gpu/Cargo.toml").contains(&"roofline-collector".to_string()));
}

/// CUDA is touched by the GPU library alone; the kernel catalogue loads NVRTC (compiling needs
/// no driver, so that the SASS audit runs without one) and does no I/O.
#[test]
fn only_the_gpu_library_touches_cuda() {
    let manifests = [
        "shared/Cargo.toml",
        "import/Cargo.toml",
        "catalogue/Cargo.toml",
        "collector/Cargo.toml",
        "collector/gpu/Cargo.toml",
        "kernels/Cargo.toml",
        "kernels/audit/Cargo.toml",
        "import-worker/Cargo.toml",
        "viewer/Cargo.toml",
        "tests/Cargo.toml",
        "xtask/Cargo.toml",
    ];
    for manifest in manifests {
        if dependencies(manifest).contains(&"cudarc".to_string()) {
            assert!(
                manifest == "collector/gpu/Cargo.toml" || manifest == "kernels/Cargo.toml",
                "{manifest} depends on cudarc: only roofline-gpu touches CUDA (ARCHITECTURE.md)"
            );
        }
    }
    let kernels = std::fs::read_to_string(root().join("kernels/Cargo.toml")).unwrap();
    let cudarc = kernels
        .lines()
        .find(|l| l.trim_start().starts_with("cudarc"))
        .unwrap_or_default();
    assert!(
        cudarc.contains("\"nvrtc\"") && !cudarc.contains("driver"),
        "kernels/Cargo.toml: cudarc with NVRTC only, no driver: {cudarc}"
    );
    for (path, text) in sources("kernels/src") {
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for f in [
            "std::fs",
            "std::process",
            "std::thread",
            "std::net",
            "std::env",
            "println!",
            "eprintln!",
        ] {
            assert!(
                !code.contains(f),
                "{} uses {f}: the kernel catalogue does no I/O (ARCHITECTURE.md)",
                path.display()
            );
        }
    }
}

/// The SASS audit (about 1,600 lines, NVIDIA's tools driven from Rust) is a developer tool, its
/// own crate under `kernels/audit/` that `cargo xtask sass` builds: the `roofline` package the
/// user installs holds none of it, neither a module, nor a binary, nor a dependency.
#[test]
fn the_cli_package_holds_no_sass_audit() {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(p).unwrap() {
            let p = e.unwrap().path();
            out.push(p.clone());
            if p.is_dir() {
                walk(&p, out);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&root().join("collector/src"), &mut paths);
    walk(&root().join("collector/gpu/src"), &mut paths);
    for p in paths {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        assert!(
            !name.contains("sass"),
            "{}: the SASS audit belongs to kernels/audit/, not to the CLI",
            p.display()
        );
    }
    for manifest in ["collector/Cargo.toml", "collector/gpu/Cargo.toml"] {
        let text = std::fs::read_to_string(root().join(manifest)).unwrap();
        assert!(
            !text.contains("sass"),
            "{manifest} names the SASS audit: it is a developer crate (kernels/audit/)"
        );
    }
    let audit = std::fs::read_to_string(root().join("kernels/audit/Cargo.toml")).unwrap();
    assert!(
        audit.contains("publish = false"),
        "the SASS audit is never published"
    );
    assert!(audit.contains("name = \"roofline-sass-audit\""));
}

#[test]
fn the_viewer_links_no_importer_so_its_first_paint_does_not_pay_for_one() {
    // The importer's wasm is its own module (dist/importer.js), loaded only when a trace or CSV
    // is opened (issue 31): the viewer's wasm must not link the import crate.
    for d in dependencies("viewer/Cargo.toml") {
        assert!(
            d != "roofline-import" && d != "roofline-import-worker",
            "the viewer depends on {d}: the importer would weigh on its first paint"
        );
    }
}

/// The model crate's floors: each uses only the floors below it (`bundle` ← `analysis` ←
/// `chart`), outside tests. A use of a higher floor is named with the file.
#[test]
fn the_models_floors_use_only_the_floors_below() {
    let rules = [
        (
            "shared/src/bundle",
            ["crate::analysis", "crate::chart"].as_slice(),
        ),
        ("shared/src/analysis", ["crate::chart"].as_slice()),
    ];
    let mut checked = 0;
    for (dir, forbidden) in rules {
        for (path, text) in sources(dir) {
            if path.file_name().is_some_and(|f| f == "tests.rs") {
                continue;
            }
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            // Doc comments may point upward (`crate::chart::hierarchical` draws this); code
            // may not.
            let code: String = code
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            for f in forbidden {
                assert!(
                    !code.contains(f),
                    "{} uses {f}: a floor of the model uses only the floors below it (ARCHITECTURE.md)",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} files checked");
}
