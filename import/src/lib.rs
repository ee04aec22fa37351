//! The importers: other tools' outputs turned into roofline bundles.
//!
//! Pure functions only, as in `roofline-model`: no file system, no processes, no threads, no
//! clocks. Every importer reads bytes (or a [`std::io::Read`] of bytes) handed to it and returns
//! kernels, devices and notes; the CLI finds and opens the files, and the viewer's import worker
//! hands it what the user dropped on the page. The crate compiles natively and to `wasm32-unknown-unknown`.
//!
//! - [`ncu`]: Nsight Compute's CSV output (raw page, one metric per capture or all at once): the
//!   table finder, units, the per-architecture metric table and the join of one-metric captures;
//! - [`trace`]: torch.profiler (Kineto) traces, streamed into kernels linked to the operators,
//!   modules and annotations that launched them, with CUPTI range-profiler counters read through
//!   [`ncu`]'s metric table;
//! - [`operators`]: the analytical compute and bandwidth complexity (F, B) of PyTorch operators
//!   from the shapes a trace records, one rule per operator family;
//! - [`input`]: what an input is from its first bytes (a trace, CSV text, or what neither reads);
//! - [`assemble`]: the imported pieces, a machine bundle, notes and provenance into one bundle,
//!   the same for the CLI and the viewer's import worker;
//! - [`datasheet`]: the GPU catalogue's datasheet ceilings for an import without a measured
//!   machine, matched to the device the input names;
//! - [`driver`]: the one import driver the CLI and the page's worker run: inputs, a request with
//!   the options, a sink, typed refusals;
//! - [`pipeline`]: the driver's steps (captures into a bundle, a trace streamed kernel by
//!   kernel, the option refusals);
//! - [`ranks`]: several ranks' bundles joined into one run, a device per rank, as a stream.
//!
//! Architecture invariant: the crate does no I/O; its callers read the inputs and write the
//! bundle behind [`driver::Input`] and [`driver::Sink`].

pub mod assemble;
pub mod datasheet;
pub mod driver;
pub mod input;
pub mod ncu;
pub mod operators;
pub mod pipeline;
pub mod ranks;
pub mod trace;
