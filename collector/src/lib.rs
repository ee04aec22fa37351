//! The `roofline` collector: the only crate that touches CUDA, processes and the file system.
//!
//! Two halves. The CLI's modules: `main` parses the command line ([`cli`]), validates it once
//! into a [`config::Config`], and hands it to [`commands::run`]; exporters ([`export`]) return
//! bytes; [`io`] is the one place files are read and (atomically) written and standard output
//! is written, [`stderr`] the one writer of standard error; [`ncu`] runs Nsight Compute and
//! [`capture`] is `import` and `profile` on top of it; [`trace`] reads torch.profiler traces for
//! `import`; [`provenance`] and [`progress`] are small helpers. Library code fails with
//! [`error::Error`], which wraps the module errors below it (none of them imports it).
//!
//! The GPU half is [`gpu`]: the CUDA libraries found and loaded, the kernel catalogue and its
//! SASS audit, one timing [`gpu::Session`], the typed launchers, cuBLASLt and cuDNN. Between the
//! two, [`machine`] (the ceilings) and [`suite`] (the conv2d/LSTM/GEMM study) only describe what
//! to measure (`#![forbid(unsafe_code)]`): their FLOPs and bytes come from the launchers' work.

// Every write to the standard streams goes through `io::stdout` and `stderr::message`, which
// never panic (a closed pipe or a full device is an error or is ignored, not a crash).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod capture;
pub mod cli;
pub mod commands;
pub mod config;
pub mod error;
pub mod export;
pub mod gpu;
pub mod interrupt;
pub mod io;
pub mod machine;
pub mod ncu;
pub mod progress;
pub mod provenance;
pub mod stderr;
pub mod suite;
pub mod trace;

pub use error::Error;
