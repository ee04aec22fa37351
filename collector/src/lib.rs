//! The `roofline` CLI: the commands, their files and streams, Nsight Compute and the profiled
//! programs, on top of the pure crates (`roofline-model`, `roofline-import`) and the GPU library
//! (`roofline-gpu`, which alone touches CUDA).
//!
//! `main` parses the command line ([`cli`]), validates it once into a [`config::Config`], and
//! hands it to [`commands::run`]; exporters ([`export`]) return bytes; [`io`] is the one place
//! files are read and (atomically) written and standard output is written, [`stderr`] the one
//! writer of standard error; [`ncu`] runs Nsight Compute and [`capture`] is `import` and
//! `profile` on top of it; [`trace`] reads torch.profiler traces for `import`; [`provenance`] is
//! a small helper, and [`progress`] the CLI's [`roofline_gpu::Report`] (progress bars and
//! messages on standard error). Library code fails with [`error::Error`], which wraps the module
//! errors below it (none of them imports it).
//!
//! The GPU commands (`machine`, `suite`) run `roofline-gpu`: its crate and its [`machine`],
//! [`suite`] and [`interrupt`] modules are re-exported here under the paths the CLI's modules
//! name them by (`crate::gpu::probe`, `crate::machine::Plan`, …).

// Every write to the standard streams goes through `io::stdout` and `stderr::message`, which
// never panic (a closed pipe or a full device is an error or is ignored, not a crash).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod capture;
pub mod cli;
pub mod commands;
pub mod config;
pub mod error;
pub mod export;
pub mod io;
pub mod ncu;
pub mod progress;
pub mod provenance;
pub mod stderr;
pub mod trace;

pub use error::Error;
pub use roofline_gpu as gpu;
pub use roofline_gpu::{interrupt, machine, suite};
