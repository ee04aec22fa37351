//! The `roofline` collector: the only crate that touches CUDA, processes and the file system.
//!
//! `main` parses the command line ([`cli`]), validates it once into a [`config::Config`], and
//! hands it to [`commands::run`]. Exporters ([`export`]) return bytes; [`io`] is the one place
//! files are read and (atomically) written. [`gpu`] is the GPU layer: it finds the CUDA driver
//! without panicking, times work in one [`gpu::Session`], and launches the kernels of
//! [`kernels`] through typed launchers that carry each launch's work; [`machine`] measures
//! ceilings with them and the cuBLASLt GEMMs of [`blaslt`]; [`suite`] runs the conv2d/LSTM/GEMM
//! study (cuDNN through [`dnn`]); both only describe what to measure. [`progress`] makes the
//! progress bars; [`trace`] reads torch.profiler traces for `import`.

// Every write to the standard streams goes through `io::stdout` and `io::message`, which never
// panic (a closed pipe or a full device is an error or is ignored, not a crash).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod capture;
pub mod cli;
pub mod commands;
pub mod config;
pub mod error;
pub mod export;
pub mod gpu;
pub mod io;
pub mod machine;
pub mod ncu;
pub mod progress;
pub mod provenance;
pub mod stderr;
pub mod suite;
pub mod trace;

pub use error::Error;
