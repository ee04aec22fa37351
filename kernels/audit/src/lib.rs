//! The SASS audit, a developer tool: proof, without a GPU, that every kernel of `kernels/`
//! executes what its work formula ([`roofline_kernels::Work`]) counts. NVIDIA's compiler tools
//! (NVRTC, `ptxas`, `nvdisasm`) run on any x86-64 machine; the `roofline-sass-audit` binary
//! (`cargo xtask sass`) drives them and this library reads their output and judges it. Pure
//! functions: no process, no file. It is not part of the `roofline` CLI.
//!
//! - [`ptxas`]: `ptxas -v` statistics (registers, spills);
//! - [`disasm`]: `nvdisasm` listings (functions, instructions, loops);
//! - [`audit`]: the census of each kernel's timed loop against its formula, and the verdict;
//! - [`report`]: the results as the Markdown report; the table the collector embeds, and its
//!   format, are [`roofline_kernels::audit_table`].

pub mod audit;
pub mod disasm;
pub mod ptxas;
pub mod report;

#[cfg(test)]
mod tests;
