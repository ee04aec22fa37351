//! Why a catalogue could not be read: the file does not parse, is of another format, or breaks
//! one of the catalogue's rules (every figure sourced, derived figures with their formula, …).

use thiserror::Error;

/// A catalogue that could not be read.
#[derive(Debug, Error)]
pub enum CatalogueError {
    /// The text is not JSON of the catalogue's shape.
    #[error("catalogue/gpus.json does not parse: {0}")]
    Parse(#[source] serde_json::Error),
    /// The file declares a format this build does not read.
    #[error("catalogue/gpus.json is format {found}; this build reads format {expected}")]
    Format {
        /// The file's `format`.
        found: u32,
        /// The format this build reads.
        expected: u32,
    },
    /// The file parses but breaks the catalogue's rules.
    #[error("catalogue/gpus.json breaks {} rule(s): {}", .0.len(), list(.0))]
    Invalid(Vec<Problem>),
}

fn list(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// One broken rule; `at` is the path of the offending field (`gpus[nvidia-t4].peaks_flop_per_s.fp32`).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Problem {
    /// Two records of one list share an id.
    #[error("{list} has the id {id} twice")]
    DuplicateId {
        /// `sources`, `gpus` or `systems`.
        list: &'static str,
        /// The repeated id.
        id: String,
    },
    /// An id is not lowercase ASCII letters, digits and hyphens.
    #[error("{list} id {id:?} is not lowercase letters, digits and hyphens")]
    BadId {
        /// `sources`, `gpus` or `systems`.
        list: &'static str,
        /// The id.
        id: String,
    },
    /// A reference to a source that the catalogue does not list.
    #[error("{at} cites the unknown source {source_id}")]
    UnknownSource {
        /// Where.
        at: String,
        /// The missing source id.
        source_id: String,
    },
    /// A derived figure without its formula.
    #[error("{at} is derived but gives no formula")]
    DerivedWithoutFormula {
        /// Where.
        at: String,
    },
    /// A formula on a figure that is not derived.
    #[error("{at} has a formula but is not of kind derived")]
    FormulaWithoutDerived {
        /// Where.
        at: String,
    },
    /// A ceiling (peak, bandwidth, link) of kind recorded: ceilings come from documents.
    #[error("{at} is a ceiling of kind recorded; ceilings must be datasheet or derived")]
    RecordedCeiling {
        /// Where.
        at: String,
    },
    /// A value that is not finite and positive.
    #[error("{at} = {value} is not a finite positive number")]
    NotPositive {
        /// Where.
        at: String,
        /// The value.
        value: f64,
    },
    /// A count or size that is not a whole number.
    #[error("{at} = {value} is not a whole number")]
    NotWhole {
        /// Where.
        at: String,
        /// The value.
        value: f64,
    },
    /// A clock outside 100 MHz – 5 GHz (a unit slip, MHz for Hz).
    #[error("{at} = {value} Hz is outside 1e8..5e9 (a unit slip?)")]
    ClockOutOfRange {
        /// Where.
        at: String,
        /// The value.
        value: f64,
    },
    /// A compute capability that is not `major.minor`.
    #[error("gpus[{entry}].compute_capability {value:?} is not major.minor")]
    BadComputeCapability {
        /// The entry.
        entry: String,
        /// The text.
        value: String,
    },
    /// An AMD entry without its gfx target, or an NVIDIA entry with one.
    #[error("gpus[{entry}]: {what}")]
    VendorMismatch {
        /// The entry.
        entry: String,
        /// What is wrong.
        what: &'static str,
    },
    /// An entry without names, or with an empty or repeated one.
    #[error("gpus[{entry}].names: {what}")]
    BadNames {
        /// The entry.
        entry: String,
        /// What is wrong.
        what: String,
    },
    /// A required text that is empty.
    #[error("{at} is empty")]
    Empty {
        /// Where.
        at: String,
    },
    /// A link with a bandwidth but no direction.
    #[error("{at} has a bandwidth but no direction")]
    LinkWithoutDirection {
        /// Where.
        at: String,
    },
    /// A system naming a GPU the catalogue does not have.
    #[error("systems[{system}] names the unknown GPU {gpu}")]
    UnknownGpu {
        /// The system.
        system: String,
        /// The missing GPU id.
        gpu: String,
    },
}
