//! The committed sample bundles are what the importer makes of the study's outputs today, and the
//! viewer's sample list names only bundles that exist.

use roofline_model::analysis::aggregate::aggregate_by_name;
use roofline_tests::samples::{SAMPLES, bundles_dir, import};

#[test]
fn committed_samples_equal_a_fresh_import() {
    for s in &SAMPLES {
        let fresh = import(s).unwrap();
        let path = bundles_dir().join(s.file);
        let committed = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run `cargo xtask samples`)", path.display()));
        assert!(
            committed == fresh,
            "{} differs from a fresh import of {}: run `cargo xtask samples`",
            s.file,
            s.source
        );
        let b = roofline_model::parse_bundle(&committed).unwrap();
        assert!(
            b.kernels.len() > 100,
            "{}: {} kernels",
            s.file,
            b.kernels.len()
        );
        assert_eq!(b.machines.len(), 1);
        assert!(b.description.as_deref().unwrap().contains("1290c76"));
        assert!(aggregate_by_name(&b.kernels).len() < b.kernels.len());
    }
}

#[test]
fn the_viewer_sample_list_names_committed_bundles() {
    let index: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(roofline_tests::repo().join("viewer/samples.json")).unwrap(),
    )
    .unwrap();
    let entries = index.as_array().unwrap();
    for s in &SAMPLES {
        assert!(
            entries.iter().any(|e| e["file"] == s.file),
            "{} missing from viewer/samples.json",
            s.file
        );
    }
    for e in entries {
        let file = e["file"].as_str().unwrap();
        assert!(!e["title"].as_str().unwrap().is_empty());
        let text = std::fs::read_to_string(bundles_dir().join(file)).unwrap();
        roofline_model::parse_bundle(&text).unwrap();
    }
}
