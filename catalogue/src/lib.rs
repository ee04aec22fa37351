//! A reviewed catalogue of GPU datasheet ceilings, as data: for each GPU, its dense peak per
//! datapath, its memory bandwidth, the L1/L2 bandwidth where a whitepaper's bytes per clock give
//! it, its links, and the names, compute capability, SM count and memory size a recorded device
//! is recognised by; plus the DGX systems, for collectives. Every figure names its source and
//! whether it is printed there or derived (with the formula).
//!
//! The data lives in `catalogue/gpus.json`, compiled in and parsed once. Its README lists the
//! sources and what was left empty and why. The crate is pure: no I/O, no clocks, no threads;
//! it builds for wasm32.
//!
//! ```
//! use roofline_catalogue::{Catalogue, DeviceQuery, Match};
//! use roofline_model::bundle::Datapath;
//!
//! let catalogue = Catalogue::get();
//! let a100 = catalogue.by_id("nvidia-a100-sxm4-80gb").unwrap();
//! assert_eq!(a100.peak(Datapath::TensorBf16).unwrap().value, 312e12);
//!
//! let seen = DeviceQuery::new().name("NVIDIA H100 80GB HBM3").sm_count(132);
//! assert_eq!(catalogue.match_device(&seen).exact().unwrap().id, "nvidia-h100-sxm5");
//! ```

mod ceilings;
mod entry;
mod error;
mod matching;
mod validate;

#[cfg(test)]
mod checks;

use std::sync::OnceLock;

use serde::Deserialize;

pub use ceilings::citation;
pub use entry::{
    Direction, Figure, GpuEntry, Kind, Link, LinkScope, Links, Source, System, Vendor,
};
pub use error::{CatalogueError, Problem};
pub use matching::{
    Candidate, Conflict, DeviceQuery, EQUIVALENT_RELATIVE, Field, MEMORY_FIT, Match, NoMatchReason,
    equivalent,
};

/// The catalogue file, as compiled in.
pub const GPUS_JSON: &str = include_str!("../gpus.json");

/// The catalogue format this build reads.
pub const FORMAT: u32 = 1;

/// The whole catalogue: its conventions, sources, GPU entries and systems.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    /// The file's format version.
    pub format: u32,
    /// The conventions every figure follows (units, dense peaks, kinds), in words.
    pub conventions: Vec<String>,
    /// The documents figures cite.
    pub sources: Vec<Source>,
    /// One entry per GPU (or per GCD).
    pub gpus: Vec<GpuEntry>,
    /// Multi-GPU nodes.
    pub systems: Vec<System>,
}

/// Just the format field, read before the rest so that a newer file is reported as such.
#[derive(Deserialize)]
struct FormatOnly {
    format: u32,
}

static COMPILED: OnceLock<Result<Catalogue, CatalogueError>> = OnceLock::new();

impl Catalogue {
    /// Parses and validates a catalogue file.
    pub fn parse(json: &str) -> Result<Catalogue, CatalogueError> {
        let FormatOnly { format } = serde_json::from_str(json).map_err(CatalogueError::Parse)?;
        if format != FORMAT {
            return Err(CatalogueError::Format {
                found: format,
                expected: FORMAT,
            });
        }
        let catalogue: Catalogue = serde_json::from_str(json).map_err(CatalogueError::Parse)?;
        let problems = validate::validate(&catalogue);
        if problems.is_empty() {
            Ok(catalogue)
        } else {
            Err(CatalogueError::Invalid(problems))
        }
    }

    /// The compiled-in catalogue, parsed on first use; the error if it does not parse or
    /// validate (the unit tests make sure it does).
    pub fn try_get() -> Result<&'static Catalogue, &'static CatalogueError> {
        COMPILED
            .get_or_init(|| Catalogue::parse(GPUS_JSON))
            .as_ref()
    }

    /// The compiled-in catalogue.
    ///
    /// # Panics
    ///
    /// If `catalogue/gpus.json` does not parse or validate, which this crate's tests rule out
    /// for the file it ships.
    pub fn get() -> &'static Catalogue {
        match Catalogue::try_get() {
            Ok(c) => c,
            Err(e) => panic!("the compiled-in {e}"),
        }
    }

    /// Every GPU entry, in file order.
    pub fn entries(&self) -> &[GpuEntry] {
        &self.gpus
    }

    /// The entry with this id.
    pub fn by_id(&self, id: &str) -> Option<&GpuEntry> {
        self.gpus.iter().find(|g| g.id == id)
    }

    /// Every source.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// The source with this id.
    pub fn source(&self, id: &str) -> Option<&Source> {
        self.sources.iter().find(|s| s.id == id)
    }

    /// The source a figure cites (every figure's source exists in a validated catalogue).
    pub fn source_of(&self, figure: &Figure) -> Option<&Source> {
        self.source(&figure.source)
    }

    /// Every system.
    pub fn systems(&self) -> &[System] {
        &self.systems
    }

    /// The system with this id.
    pub fn system(&self, id: &str) -> Option<&System> {
        self.systems.iter().find(|s| s.id == id)
    }

    /// The systems built with a GPU entry.
    pub fn systems_with(&self, gpu_id: &str) -> impl Iterator<Item = &System> {
        self.systems
            .iter()
            .filter(move |s| s.gpu_ids.iter().any(|g| g == gpu_id))
    }

    /// Matches a recorded device to its entry (see [`Match`] and the matching rules on
    /// [`DeviceQuery`]'s module).
    pub fn match_device(&self, query: &DeviceQuery) -> Match<'_> {
        matching::match_device(&self.gpus, query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_model::bundle::Datapath;

    #[test]
    fn the_shipped_file_parses_and_validates() {
        let c = Catalogue::parse(GPUS_JSON).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.format, FORMAT);
        assert!(Catalogue::try_get().is_ok());
    }

    #[test]
    fn every_requested_gpu_is_present() {
        let c = Catalogue::get();
        for id in [
            "nvidia-v100-sxm2-16gb",
            "nvidia-v100-sxm2-32gb",
            "nvidia-v100-pcie-16gb",
            "nvidia-v100-pcie-32gb",
            "nvidia-v100-dgxs-32gb",
            "nvidia-t4",
            "nvidia-a100-sxm4-40gb",
            "nvidia-a100-sxm4-80gb",
            "nvidia-a100-pcie-40gb",
            "nvidia-a100-pcie-80gb",
            "nvidia-a10",
            "nvidia-a30",
            "nvidia-a40",
            "nvidia-l4",
            "nvidia-l40s",
            "nvidia-h100-sxm5",
            "nvidia-h100-pcie",
            "nvidia-h100-nvl",
            "nvidia-h200-sxm",
            "nvidia-h200-nvl",
            "nvidia-gh200-96gb",
            "nvidia-gh200-144gb",
            "nvidia-h20",
            "nvidia-b200",
            "nvidia-gb200",
            "nvidia-rtx-3090",
            "nvidia-rtx-4090",
            "nvidia-rtx-5090",
            "nvidia-rtx-a6000",
            "nvidia-rtx-6000-ada",
            "amd-mi100",
            "amd-mi210",
            "amd-mi250-gcd",
            "amd-mi250x-gcd",
            "amd-mi300x",
            "amd-mi325x",
        ] {
            assert!(c.by_id(id).is_some(), "{id} missing");
        }
        assert_eq!(c.entries().len(), 36);
        for id in [
            "nvidia-dgx-a100",
            "nvidia-dgx-h100",
            "nvidia-dgx-h200",
            "nvidia-dgx-b200",
        ] {
            assert!(c.system(id).is_some(), "{id} missing");
        }
    }

    #[test]
    fn a_broken_file_is_a_typed_error() {
        assert!(matches!(
            Catalogue::parse("{"),
            Err(CatalogueError::Parse(_))
        ));
        assert!(matches!(
            Catalogue::parse(r#"{"format": 2}"#),
            Err(CatalogueError::Format {
                found: 2,
                expected: 1
            })
        ));
        let broken =
            GPUS_JSON.replacen(r#""source": "nvidia-v100-ds""#, r#""source": "nowhere""#, 1);
        let err = Catalogue::parse(&broken).unwrap_err();
        assert!(matches!(err, CatalogueError::Invalid(_)));
        let text = err.to_string();
        assert!(
            text.starts_with("catalogue/gpus.json breaks 1 rule(s)"),
            "{text}"
        );
        assert!(text.contains("nowhere"), "{text}");
    }

    #[test]
    fn peaks_are_dense_and_typed() {
        let c = Catalogue::get();
        let h100 = c.by_id("nvidia-h100-sxm5").unwrap();
        let fp16 = h100.peak(Datapath::TensorFp16).unwrap();
        assert_eq!(fp16.value, 989.4e12);
        assert_eq!(fp16.clock_hz, Some(1.83e9));
        assert_eq!(h100.assumed_clock_hz(Datapath::Fp32), Some(1.98e9));
        assert_eq!(c.source_of(fp16).unwrap().publisher, "NVIDIA");
        // A sparse-only datasheet figure is halved and marked derived.
        let l4 = c
            .by_id("nvidia-l4")
            .unwrap()
            .peak(Datapath::TensorFp16)
            .unwrap();
        assert_eq!((l4.value, l4.kind), (121e12, Kind::Derived));
        // A datapath the GPU lacks is absent.
        assert!(
            c.by_id("nvidia-v100-sxm2-16gb")
                .unwrap()
                .peak(Datapath::TensorBf16)
                .is_none()
        );
    }

    #[test]
    fn no_dense_peak_is_a_sparse_figure_in_disguise() {
        // Where a figure is derived from a printed sparse one, it is exactly half of it.
        for g in Catalogue::get().entries() {
            for (d, f) in g.peaks() {
                if let (Kind::Derived, Some(p)) = (f.kind, &f.printed)
                    && p.contains('*')
                {
                    let formula = f.formula.as_deref().unwrap_or("");
                    assert!(formula.contains("/ 2"), "{} {}: {formula}", g.id, d.key());
                }
            }
        }
    }

    #[test]
    fn systems_resolve_to_entries() {
        let c = Catalogue::get();
        let h100 = c.system("nvidia-dgx-h100").unwrap();
        assert_eq!(h100.gpus_per_node, 8);
        assert_eq!(h100.network_bits_per_s_per_gpu.value, 400e9);
        assert_eq!(
            c.systems_with("nvidia-b200")
                .map(|s| s.id.as_str())
                .collect::<Vec<_>>(),
            ["nvidia-dgx-b200"]
        );
    }

    #[test]
    fn every_entry_notes_what_it_leaves_out_or_how_it_was_derived() {
        for g in Catalogue::get().entries() {
            assert!(
                g.note.as_deref().is_some_and(|n| !n.trim().is_empty()),
                "{} has no note",
                g.id
            );
        }
    }
}
