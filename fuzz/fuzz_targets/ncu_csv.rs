//! The Nsight Compute CSV import on arbitrary bytes: each part of the input (split at form
//! feeds, so that several one-metric files can be joined) is parsed as a capture, the captures
//! are joined and turned into kernels under both conventions. Every step returns a value or a
//! typed error, never panics; the bundle made of the kernels that come out is validated as
//! `roofline import` does before writing (an invalid one is an error there, not a crash).
#![no_main]

use libfuzzer_sys::fuzz_target;
use roofline_model::bundle::{Bundle, DataSource, Provenance};
use roofline_import::ncu::{self, Convention, ImportOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut captures = Vec::new();
    for (i, part) in text.split('\u{c}').enumerate() {
        let name = format!("part{i}.csv");
        match ncu::parse_capture(part, &name) {
            Ok(c) => captures.push((name, c)),
            Err(e) => {
                let _ = e.to_string();
                return;
            }
        }
    }
    let launches = match ncu::join(captures) {
        Ok(l) => l,
        Err(e) => {
            let _ = e.to_string();
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
            Err(e) => {
                let _ = e.to_string();
            }
            Ok(imported) => {
                let mut b = Bundle::new(Provenance::default());
                b.devices = imported.devices;
                b.kernels = imported.kernels;
                if b.devices.len() <= 1 {
                    // As `roofline import` writes it: one device need not be repeated.
                    for k in &mut b.kernels {
                        k.device = None;
                    }
                }
                // What the import lets through is validated again before `roofline import`
                // writes it; a bundle refused there is an error with the figure's JSON path
                // (found by this target: an empty kernel name), not a crash.
                if let Err(e) = roofline_model::validate(&b) {
                    assert!(!e.to_string().is_empty());
                }
            }
        }
    }
});
