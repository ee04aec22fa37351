//! Nsight Compute output: finding its CSV table, converting its units, the per-architecture
//! metric table, and turning launches into bundle kernels. Pure: text in, kernels out; running
//! `ncu` is the collector's job.

pub mod csv;
pub mod import;
pub mod metrics;
pub mod units;

pub use import::{
    Capture, ImportOptions, Imported, JoinOptions, Joined, Launch, NcuError, join, join_with,
    parse_capture, to_kernels,
};
pub use metrics::{Arch, Convention};
