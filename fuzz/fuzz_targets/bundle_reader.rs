//! The bundle reader on arbitrary bytes: `parse_bundle` must return a bundle or a typed error,
//! never panic; an accepted bundle must write back (`to_json`), read back to the same bundle,
//! and go through everything `info` and `plot` do with it (report rows, CSV, both charts).
#![no_main]

use libfuzzer_sys::fuzz_target;
use roofline_model::chart::{self, ChartOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match roofline_model::parse_bundle(text) {
        Err(e) => {
            // The message is built too (it walks the error's own data).
            let _ = e.to_string();
        }
        Ok(bundle) => {
            let json = roofline_model::to_json(&bundle).expect("an accepted bundle writes back");
            let again = roofline_model::parse_bundle(&json).expect("a written bundle reads back");
            assert_eq!(again, bundle, "the round trip changed the bundle");
            let _ = roofline_model::analysis::report::to_csv(&bundle);
            let _ = roofline_model::analysis::report::to_json(&bundle);
            let o = ChartOptions::default();
            let _ = chart::hierarchical(&bundle, &o);
            let _ = chart::time_based(&bundle, &o);
            let _ = chart::sweep(&bundle, &o);
        }
    }
});
