//! torch.profiler (Kineto) traces: the Chrome-trace JSON that `torch.profiler` writes
//! (`export_chrome_trace`, `tensorboard_trace_handler`), read as a stream into a compact event
//! model ([`mod@parse`]), then turned into bundle kernels linked to the PyTorch operators that
//! launched them ([`mod@import`]).
//!
//! The event categories read are Kineto's (`libkineto/src/output_json.cpp` and
//! `ActivityType.cpp` in the Kineto repository): `kernel`, `gpu_memcpy`, `gpu_memset`, `cpu_op`,
//! `cuda_runtime` and `cuda_driver`, `user_annotation`, `python_function`, `cuda_profiler_range`
//! and the `ac2g` flow events; the top-level `deviceProperties` and `distributedInfo`.
//!
//! Pure: the caller gives any [`std::io::Read`] (the collector decompresses gzip first); no file
//! is opened here, and the text is never held whole.

pub mod calls;
pub mod comm;
mod cost;
pub mod derive;
mod elems;
pub mod error;
mod event;
pub mod import;
mod inner;
pub mod join;
pub mod link;
pub mod model;
mod notes;
pub mod parse;
mod stats;
mod window;

pub use error::TraceError;
pub use import::{
    ImportOptions, Summary, TraceImport, import, import_each, import_with_counters, launch_devices,
};
pub use model::Trace;
pub use parse::parse;
