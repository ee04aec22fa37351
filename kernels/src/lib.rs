//! The CUDA kernels of `kernels/` as typed assets, for the collector's GPU library and the SASS
//! audit:
//!
//! - `source.rs`: each `.cu` file embedded with `include_str!` ([`Source`]), the prelude every
//!   one starts with and the constants each is compiled with;
//! - `catalogue.rs`: every entry point, typed ([`Kernel`], [`DlOp`]), with its source, name,
//!   oldest architecture and work formula;
//! - `work.rs`: the work formulas, what a kernel does per iteration of its timed loop
//!   ([`Work`]);
//! - `launch.rs`: what one launch does ([`LaunchWork`]), from which every FLOP and byte the
//!   collector records for one of our kernels is counted;
//! - `fill.rs`: the operands, bounded random data written on the GPU before anything is timed
//!   ([`Fill`]);
//! - `nvrtc.rs`: NVRTC compilation to PTX and CUBIN, with the kernel's file and NVRTC's log in
//!   every error ([`CompileError`]); NVRTC is loaded at run time and needs no driver or GPU;
//! - [`audit_table`] and `refusal.rs`: the SASS audit's verdicts (`kernels/sass-audit.tsv`,
//!   embedded) and the refusals they give ([`refusal`]), so that no kernel is timed where it
//!   failed.
//!
//! Everything but the audit's table is re-exported here (one path: `roofline_kernels::Kernel`).
//! Loading compiled code on a device and launching it is the GPU library's (`roofline-gpu`).

pub mod audit_table;
mod catalogue;
mod fill;
mod launch;
mod nvrtc;
mod refusal;
mod source;
mod work;

pub use catalogue::{DlOp, Kernel};
pub use fill::{
    Fill, MAX_K_FP16, NORMAL_BOUND, NORMAL_SCALE, RANDOM_WORDS, UNIT_FLOAT_WORDS, mma_operands,
    mma_sets,
};
pub use launch::{
    LaunchWork, fma_work, mma_work, per_thread_work, stream_work, sweep_fmas, sweep_work,
};
pub use nvrtc::{
    CompileError, NvrtcOutput, arch_name, compile_cubin, compile_ptx, nvrtc_compile, nvrtc_present,
};
pub use refusal::{audit_refusal, refusal};
pub use source::{
    BW_UNROLL, FMA_CHAINS, FMA_UNROLL, IG_DEPTH, IG_TILE, MMA_ACC, MMA_SETS, MMA_SETS_DMMA16,
    Source, VECTOR_BYTES,
};
pub use work::{Access, MmaShape, Work};
