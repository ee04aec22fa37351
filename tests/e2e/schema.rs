//! The committed JSON Schema must be exactly what the types generate.
//!
//! After changing a bundle type, regenerate it with
//! `ROOFLINE_BLESS=1 cargo test -p roofline-tests schema` and commit the file.

use std::path::PathBuf;

fn schema_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schema/bundle-v1.schema.json")
}

#[test]
fn committed_schema_is_current() {
    let generated = roofline_model::bundle::schema::bundle_schema_json();
    let path = schema_path();
    if std::env::var_os("ROOFLINE_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with ROOFLINE_BLESS=1 to create it",
            path.display()
        )
    });
    assert!(
        committed == generated,
        "{} is stale: the bundle types changed. Regenerate it with \
         `ROOFLINE_BLESS=1 cargo test -p roofline-tests schema` and commit it.",
        path.display()
    );
}

#[test]
fn schema_states_units_and_version() {
    let schema: serde_json::Value =
        serde_json::from_str(&roofline_model::bundle::schema::bundle_schema_json()).unwrap();
    let description = schema["description"].as_str().unwrap();
    assert!(description.contains("SI base units"), "{description}");
    assert!(schema["properties"]["schema_version"].is_object());
    // Every kernel figure the maths reads is in the schema.
    let kernel = &schema["$defs"]["Kernel"]["properties"];
    for field in [
        "name",
        "launches",
        "time",
        "flops",
        "bytes",
        "complexity",
        "tags",
        "nvtx_range",
    ] {
        assert!(
            kernel[field].is_object(),
            "Kernel.{field} missing from the schema"
        );
    }
}

#[test]
fn every_fixture_bundle_validates() {
    let dir = roofline_tests::fixtures().join("bundles");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            roofline_model::parse_bundle(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    assert!(n >= 1, "no fixture bundle in {}", dir.display());
}
