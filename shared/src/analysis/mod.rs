//! The analysis floor: what a bundle's figures mean, computed once for the CLI's tables and the
//! viewer alike. It uses the bundle floor ([`crate::bundle`]) and nothing above it.
//!
//! - [`ceilings`]: the ceiling per level and datapath from a machine characterization;
//! - [`hierarchical`] and [`time_based`]: the two rooflines' formulas;
//! - [`aggregate`], [`kernel`] and [`Analysed`]: launches grouped by name, per-kernel verdicts,
//!   and one device's kernels analysed against its ceilings;
//! - [`group`] and [`names`]: kernel lists read per operator or module, and short display names;
//! - [`comm`]: collectives against the links they run on (bus bandwidth, exposed
//!   communication, skew across ranks);
//! - [`compare`]: two runs matched kernel by kernel;
//! - [`report`]: the rows of `roofline info` (table, CSV, JSON);
//! - [`dl`], [`theoretical`], [`plateau`], [`summary`] and [`stats`]: the maths the collector's
//!   measurements use (analytical complexity, ceilings from device attributes, levels read off an
//!   ERT-style sweep, own figures beside their references, the one median);
//! - [`si`]: figures in SI words.
//!
//! Architecture invariant: nothing here draws; the chart floor draws what this floor computes.

pub mod aggregate;
pub mod analysed;
pub mod ceilings;
pub mod comm;
pub mod compare;
pub mod dl;
pub mod group;
pub mod hierarchical;
pub mod kernel;
pub mod names;
pub mod plateau;
pub mod report;
pub mod si;
pub mod stats;
pub mod summary;
pub mod theoretical;
pub mod time_based;

pub use analysed::Analysed;
pub use kernel::*;
