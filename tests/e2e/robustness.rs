//! Reading never panics, whatever the input; and what reads back validates and round-trips.

use proptest::prelude::*;
use roofline_model::ReadError;

fn fixture() -> String {
    roofline_tests::fixture_text("bundles/v100-deepcam-example.json")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Arbitrary text: an error, never a panic.
    #[test]
    fn arbitrary_text_is_refused_cleanly(text in ".{0,400}") {
        let _ = roofline_model::parse_bundle(&text);
    }

    /// The real fixture with one byte range replaced by arbitrary text: either a valid bundle that
    /// survives a write and a re-read unchanged, or a typed error with a message.
    #[test]
    fn mutated_fixture_reads_or_errs(start in 0usize..9000, len in 0usize..16, insert in ".{0,12}") {
        let text = fixture();
        let start = start.min(text.len());
        let end = (start + len).min(text.len());
        if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            return Ok(());
        }
        let mutated = format!("{}{}{}", &text[..start], insert, &text[end..]);
        match roofline_model::parse_bundle(&mutated) {
            Ok(b) => {
                let again = roofline_model::parse_bundle(&roofline_model::to_json(&b).unwrap()).unwrap();
                prop_assert_eq!(b, again);
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    /// Any finite figure replaced by a negative one is caught, with the path of the figure.
    #[test]
    fn negative_figures_are_caught(kernel in 0usize..11, value in -1e12f64..-1e-12) {
        let mut b = roofline_model::parse_bundle(&fixture()).unwrap();
        b.kernels[kernel].bytes.l2 = Some(value);
        match roofline_model::validate(&b) {
            Err(ReadError::Invalid(issues)) => {
                prop_assert_eq!(issues[0].path.clone(), format!("$.kernels[{kernel}].bytes.l2"));
            }
            other => prop_assert!(false, "expected Invalid, got {:?}", other),
        }
    }
}
