//! The roofline model: bundle format, roofline maths and chart geometry.
//!
//! Pure functions only: no file system, no processes, no threads, no clocks, no GPU. The crate
//! compiles natively (for the `roofline` CLI) and to `wasm32-unknown-unknown` (for the viewer),
//! so that every figure on a chart is computed here, once.
//!
//! - [`bundle`]: the bundle types (format v1) and [`schema`] their JSON Schema;
//! - [`read`]: parsing and validation with typed errors that name the JSON path;
//! - [`ceilings`]: choosing the ceiling per level and datapath from a machine characterization;
//! - [`hierarchical`] and [`time_based`]: the two rooflines' formulas;
//! - [`aggregate`] and [`analysis`]: launches grouped by name, and per-kernel verdicts;
//! - [`dl`]: analytical complexity of GEMM, conv2d and LSTM, and the suite's study configurations;
//! - [`group`]: kernel lists read per operator or module;
//! - [`merge`]: joining bundles (one per rank);
//! - [`stream`]: bundles written and read kernel by kernel, never whole, through [`window`], the
//!   one byte window for streamed JSON (the trace importer reads through it too);
//! - [`theoretical`], [`plateau`] and [`summary`]: ceilings from device attributes, levels read off
//!   an ERT-style sweep, and own measurements set beside their references;
//! - [`stats`]: the one median of repeated measurements;
//! - [`geometry`] and [`chart`]: scales, ticks, ceilings, points and labels in pixel space, and
//!   [`svg`] the one renderer of a chart, for the CLI and the viewer;
//! - [`compare`]: two runs matched kernel by kernel, and the arrows between their points;
//! - [`view`]: the viewer's view as data and its URL query, which the CLI's saved pages write too.

pub mod aggregate;
pub mod analysis;
pub mod bundle;
pub mod ceilings;
pub mod chart;
pub mod compare;
pub mod dl;
pub mod geometry;
pub mod group;
pub mod hierarchical;
pub mod merge;
pub mod names;
pub mod plateau;
pub mod read;
pub mod report;
pub mod schema;
pub mod standalone;
pub mod stats;
pub mod stream;
pub mod summary;
pub mod svg;
pub mod theoretical;
pub mod time_based;
pub mod view;
pub mod window;

pub use bundle::{Bundle, SCHEMA_VERSION};
pub use read::{ReadError, parse_bundle, parse_bundle_bytes, to_json, validate};
