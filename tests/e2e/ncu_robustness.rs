//! The Nsight Compute CSV import on mutated real captures, on stable Rust: a bounded random-input
//! driver beside the cargo-fuzz target `ncu_csv` (`fuzz/`), run in CI. Every step returns a
//! value or a typed error with a message, never panics; the bundle made of what the import
//! accepts is validated as `roofline import` does before writing.

use proptest::prelude::*;
use roofline_import::ncu::{self, Convention, ImportOptions};
use roofline_model::bundle::{Bundle, DataSource, Provenance};

/// The table header and first launches of three one-metric DeepCAM captures of one run.
fn seeds() -> Vec<String> {
    [
        "out.dram__bytes.sum.csv",
        "out.sm__cycles_elapsed.avg.csv",
        "out.sm__cycles_elapsed.avg.per_second.csv",
    ]
    .map(|f| {
        let text = roofline_tests::fixture_text(&format!("ncu/nersc-v100-deepcam/{f}"));
        let start = text.find("\"ID\"").expect("a table");
        text[start..].lines().take(6).collect::<Vec<_>>().join("\n") + "\n"
    })
    .to_vec()
}

/// Imports the files as `roofline import` does; panics only on a broken invariant.
fn import(files: &[String]) {
    let mut captures = Vec::new();
    for (i, text) in files.iter().enumerate() {
        match ncu::parse_capture(text, &format!("f{i}.csv")) {
            Ok(c) => captures.push((format!("f{i}.csv"), c)),
            Err(e) => {
                assert!(!e.to_string().is_empty());
                return;
            }
        }
    }
    let launches = match ncu::join(captures) {
        Ok(l) => l,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    for convention in [Convention::Current, Convention::Study2020] {
        let options = ImportOptions {
            convention,
            arch: None,
            source: DataSource::Import,
        };
        match ncu::to_kernels(&launches, &options) {
            Err(e) => assert!(!e.to_string().is_empty()),
            Ok(imported) => {
                let mut b = Bundle::new(Provenance::default());
                b.devices = imported.devices;
                b.kernels = imported.kernels;
                if b.devices.len() <= 1 {
                    for k in &mut b.kernels {
                        k.device = None;
                    }
                }
                // `roofline import` validates before writing: an invalid bundle is refused there
                // with the figure's JSON path (the fuzz target found an empty kernel name).
                if let Err(e) = roofline_model::validate(&b) {
                    assert!(!e.to_string().is_empty());
                }
            }
        }
    }
}

#[test]
fn the_seeds_import() {
    import(&seeds());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// One of the three captures with a byte range replaced by arbitrary text.
    #[test]
    fn mutated_captures_import_or_err(
        which in 0usize..3,
        start in 0usize..4000,
        len in 0usize..24,
        insert in ".{0,16}",
    ) {
        let mut files = seeds();
        let text = &files[which];
        let start = start.min(text.len());
        let end = (start + len).min(text.len());
        if text.is_char_boundary(start) && text.is_char_boundary(end) {
            files[which] = format!("{}{}{}", &text[..start], insert, &text[end..]);
            import(&files);
        }
    }

    /// Arbitrary text after a valid header: an error or launches, never a panic.
    #[test]
    fn arbitrary_rows_import_or_err(rows in "[0-9a-z\",. \n-]{0,300}") {
        let header = seeds()[0].lines().next().unwrap().to_string();
        import(&[format!("{header}\n{rows}")]);
    }
}
