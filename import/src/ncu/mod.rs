//! Nsight Compute output: finding its CSV table, converting its units, the per-architecture
//! metric table, and turning launches into bundle kernels. Pure: text in, kernels out; running
//! `ncu` is the collector's job.

pub mod capture;
pub mod csv;
pub mod error;
pub mod join;
pub mod kernels;
pub mod metrics;
pub mod units;

#[cfg(test)]
mod tests;

pub use capture::{Capture, Launch, parse_capture};
pub use error::NcuError;
pub use join::{JoinOptions, Joined, join, join_with};
pub use kernels::{ImportOptions, Imported, to_kernels};
pub use metrics::{Arch, Convention};
