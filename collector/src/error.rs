//! The collector's error type: each variant names the file, command or device concerned.

use std::path::PathBuf;

use roofline_model::ReadError;
use roofline_model::bundle::merge::MergeError;

use crate::gpu::GpuError;
use crate::ncu::NcuProcessError;

/// Everything a `roofline` command can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file is not a readable bundle.
    #[error("{} is not a readable bundle", path.display())]
    Bundle {
        /// The file.
        path: PathBuf,
        /// The reading error, with JSON path or line and column.
        #[source]
        source: ReadError,
    },
    /// A torch.profiler trace given where a bundle is read.
    #[error(
        "{} is a torch.profiler trace, not a bundle: turn it into one with `roofline import {} -o run.json`, then give run.json",
        path.display(),
        path.display()
    )]
    TraceNotBundle {
        /// The file.
        path: PathBuf,
    },
    /// A bundle about to be written holds impossible figures (a bug upstream; nothing is written).
    #[error("refusing to write {}: the bundle holds impossible figures", path.display())]
    InvalidOutput {
        /// The file that was not written.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: ReadError,
    },
    /// A file could not be written.
    #[error("cannot write {}", path.display())]
    WriteFile {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Standard output failed (a full device, for example).
    #[error("cannot write to standard output")]
    Stdout(#[source] std::io::Error),
    /// Standard output's reader has gone (a closed pipe, as under `| head`): the command stops,
    /// and the binary ends quietly with the status of a process killed by SIGPIPE.
    #[error("standard output was closed")]
    StdoutClosed,
    /// An output file is one of the command's inputs.
    #[error("-o {} is the input {}: writing it would destroy the input; write to another file", output.display(), input.display())]
    OutputIsInput {
        /// The output as given.
        output: PathBuf,
        /// The input as given.
        input: PathBuf,
    },
    /// One file given twice as an input.
    #[error("{} and {} are the same file: given twice, every launch would count twice; give each input once", first.display(), second.display())]
    SameInput {
        /// The first mention.
        first: PathBuf,
        /// The second.
        second: PathBuf,
    },
    /// Bundles could not be merged.
    #[error("cannot merge the bundles")]
    Merge(#[source] MergeError),
    /// Arguments that clap accepted but that make no sense together.
    #[error("invalid arguments: {0}")]
    Usage(String),
    /// Some of the files given to `validate` are not valid.
    #[error("{failed} of {total} bundle{} failed validation", if *total == 1 { "" } else { "s" })]
    ValidationFailed {
        /// How many failed.
        failed: usize,
        /// How many were checked.
        total: usize,
    },
    /// This binary was built without the viewer's standalone page (the `viewer-page` feature), so
    /// it cannot write HTML.
    #[error(
        "this roofline was built without the viewer's standalone page, so it cannot write HTML: build the viewer with `cargo xtask web` (it writes dist/standalone.html), then rebuild roofline with `--features viewer-page` (`cargo install --path collector --features viewer-page`), or install the wheel (`cargo xtask wheel`), which has the page; --format svg works without it"
    )]
    NoViewerPage,
    /// The standalone page could not be made.
    #[error("cannot make the standalone HTML page")]
    Standalone(#[source] roofline_model::chart::standalone::StandaloneError),
    /// `--machine` describes another GPU than the one the kernels ran on.
    #[error(
        "--machine {} describes {machine_gpu}, but the kernels ran on {input_gpu}: its ceilings would bound them wrongly; give the machine bundle of that GPU (`roofline machine` on it), or pass --allow-machine-mismatch to place them against this one anyway (the bundle's notes then say so)",
        machine.display()
    )]
    MachineMismatch {
        /// The machine bundle.
        machine: PathBuf,
        /// Its GPU, described.
        machine_gpu: String,
        /// The GPU the input names, described.
        input_gpu: String,
    },
    /// Nothing to draw or report.
    #[error("{0}")]
    Nothing(String),
    /// The GPU could not be used.
    #[error("roofline {command} needs a CUDA GPU")]
    Gpu {
        /// The subcommand.
        command: &'static str,
        /// Why the GPU is unusable.
        #[source]
        source: GpuError,
    },
    /// Nsight Compute could not be found or run.
    #[error("Nsight Compute failed")]
    Ncu(#[source] NcuProcessError),
    /// Nsight Compute output could not be read.
    #[error("cannot import the Nsight Compute output")]
    Import(#[source] roofline_import::ncu::NcuError),
    /// A torch.profiler trace could not be read.
    #[error("{} is not a readable torch.profiler trace", path.display())]
    Trace {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        #[source]
        source: Box<roofline_import::trace::TraceError>,
    },
    /// A torch.profiler trace held nothing to import.
    #[error("cannot import the torch.profiler trace {}", path.display())]
    TraceImport {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<roofline_import::trace::import::ImportError>,
    },
    /// Nothing was profiled or imported.
    #[error("no kernel launch {0}")]
    NoKernels(String),
    /// `roofline import` failed: the import driver's failure, in its words (the page's too).
    #[error(transparent)]
    Driver(Box<roofline_import::driver::Failure<Error>>),
    /// The profiled program failed after some launches were profiled.
    #[error("the profiled program failed ({status}); the launches profiled before are in {} (marked incomplete)", written.display())]
    ProgramFailed {
        /// How it ended.
        status: String,
        /// The bundle written with what was profiled.
        written: PathBuf,
    },
    /// ncu reported errors (launches it could not profile, or its own failure) but wrote a
    /// report: what it profiled is written, marked incomplete.
    #[error("ncu reported {count} error{} ({status}), first: {first}; the launches it profiled are in {} (marked incomplete; its notes list the errors)", if *count == 1 { "" } else { "s" }, written.display())]
    NcuErrors {
        /// How ncu ended.
        status: String,
        /// How many `==ERROR==` lines it logged.
        count: usize,
        /// The first of them.
        first: String,
        /// The bundle written with what was profiled.
        written: PathBuf,
    },
    /// ncu or the program failed before any launch was profiled.
    #[error("nothing was profiled: ncu or the program failed ({status}){}", detail.as_ref().map(|d| format!("; ncu said: {d}")).unwrap_or_default())]
    NothingProfiled {
        /// How it ended.
        status: String,
        /// ncu's first error line.
        detail: Option<String>,
    },
    /// `roofline machine` could not start on a device.
    #[error("cannot measure GPU {ordinal}")]
    Machine {
        /// The CUDA ordinal.
        ordinal: usize,
        /// Why.
        #[source]
        source: crate::machine::MachineError,
    },
    /// `roofline machine` stopped mid-run; what was measured is written.
    #[error("measuring GPU {ordinal} stopped in the {phase} phase; the phases measured before are in {} (marked incomplete)", written.display())]
    MachineIncomplete {
        /// The CUDA ordinal.
        ordinal: usize,
        /// The phase that failed.
        phase: &'static str,
        /// The bundle written.
        written: PathBuf,
        /// Why.
        #[source]
        source: crate::machine::MachineError,
    },
    /// `roofline suite` could not start.
    #[error("cannot run the suite")]
    Suite {
        /// Why.
        #[source]
        source: crate::suite::SuiteError,
    },
    /// `roofline suite` stopped mid-run; what was measured is written.
    #[error("the suite stopped; the configurations measured before are in {} (marked incomplete)", written.display())]
    SuiteIncomplete {
        /// The bundle written.
        written: PathBuf,
        /// Why.
        #[source]
        source: crate::suite::SuiteError,
    },
}

/// Formats an error with its chain of causes, `error: a: b: c`: the one way the collector
/// reports an error (`main` for the command's, `validate` for each file's).
pub fn report_chain(e: &dyn std::error::Error) -> String {
    let mut s = format!("error: {e}");
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}
