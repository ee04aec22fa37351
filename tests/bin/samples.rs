//! `cargo xtask samples`: regenerates the viewer's real sample bundles
//! (`tests/fixtures/bundles/deepcam-v100-*.json`) from the study's Nsight Compute outputs with the
//! collector's `import` (see `roofline_tests::samples`).

use std::process::ExitCode;

use roofline_tests::samples::{SAMPLES, bundles_dir, import};

fn main() -> ExitCode {
    for s in &SAMPLES {
        let path = bundles_dir().join(s.file);
        let written = import(s).and_then(|text| {
            let tmp = path.with_extension("json.tmp");
            std::fs::write(&tmp, text)
                .and_then(|()| std::fs::rename(&tmp, &path))
                .map_err(|e| format!("{}: {e}", path.display()))
        });
        match written {
            Ok(()) => eprintln!("wrote {}", path.display()),
            Err(e) => {
                eprintln!("samples: error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
