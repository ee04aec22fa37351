//! The roofline model: the bundle format, the roofline analysis and the chart geometry, in three
//! floors, each using only the floors below it.
//!
//! Pure functions only: no file system, no processes, no threads, no clocks, no GPU. The crate
//! compiles natively (for the `roofline` CLI) and to `wasm32-unknown-unknown` (for the viewer),
//! so that every figure on a chart is computed here, once.
//!
//! - [`bundle`] (floor 1, the format): the bundle types (format v1), reading and validating them
//!   with typed errors that name the JSON path ([`bundle::read`]), streaming them kernel by kernel
//!   ([`bundle::stream`], through [`bundle::window`], the one byte window for streamed JSON), their
//!   JSON Schema ([`bundle::schema`]) and merging bundles ([`bundle::merge`]). It uses nothing else
//!   of the crate.
//! - [`analysis`] (floor 2): what the figures mean: the ceiling per level and datapath
//!   ([`analysis::ceilings`]), the two rooflines' formulas ([`analysis::hierarchical`],
//!   [`analysis::time_based`]), kernels aggregated and analysed ([`analysis::aggregate`],
//!   [`analysis::kernel`], [`analysis::Analysed`]), grouped per operator or module
//!   ([`analysis::group`]), two runs compared ([`analysis::compare`]), the report rows
//!   ([`analysis::report`]), and the measurement maths the collector uses (analytical complexity
//!   [`analysis::dl`], theoretical ceilings [`analysis::theoretical`], sweep plateaus
//!   [`analysis::plateau`], the machine summary [`analysis::summary`], [`analysis::stats`]) with
//!   the SI words every figure is written in ([`analysis::si`]). It uses the bundle floor only.
//! - [`chart`] (floor 3): the drawing: log scales and shapes ([`chart::geometry`]), scenes in
//!   pixels (hierarchical, time-based, sweep), the comparison overlay ([`chart::overlay`]), the one
//!   SVG renderer ([`chart::svg`]), the standalone page ([`chart::standalone`]) and the viewer's
//!   view state and URL format ([`chart::view`]).
//!
//! `tests/e2e/architecture.rs` checks that no floor uses one above it.

pub mod analysis;
pub mod bundle;
pub mod chart;

pub use bundle::read::{ReadError, parse_bundle, parse_bundle_bytes, to_json, validate};
pub use bundle::{Bundle, SCHEMA_VERSION};
