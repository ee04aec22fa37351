//! Raw CLI arguments become a validated configuration here, once; commands never see clap types.

use std::path::PathBuf;

use crate::cli::{ChartKind, Cli, Command, InfoFormat};
use crate::error::Error;

/// A validated command.
#[derive(Debug, Clone, PartialEq)]
pub enum Config {
    /// Validate bundle files.
    Validate {
        /// The files.
        files: Vec<PathBuf>,
    },
    /// Report on a bundle.
    Info {
        /// The bundle.
        file: PathBuf,
        /// Output format.
        format: InfoFormat,
        /// Kernels shown in the table.
        top: Option<usize>,
        /// Output file, or standard output.
        output: Option<PathBuf>,
    },
    /// Draw a chart.
    Plot {
        /// The bundle.
        file: PathBuf,
        /// Which chart.
        chart: ChartKind,
        /// The SVG to write.
        output: PathBuf,
        /// Kernels drawn.
        top: usize,
        /// Size in pixels.
        size: (f64, f64),
        /// Device to draw.
        device: Option<String>,
    },
    /// Merge bundles.
    Merge {
        /// Inputs.
        files: Vec<PathBuf>,
        /// Output.
        output: PathBuf,
    },
    /// A GPU command that has not landed yet.
    Pending {
        /// Subcommand name.
        command: &'static str,
        /// Whether it needs a GPU (checked first, so the message is the most useful one).
        needs_gpu: bool,
        /// What it will do and where it is tracked.
        what: &'static str,
    },
}

/// Smallest chart size that still fits axes, labels and a legend.
const MIN_SIZE: u32 = 320;
/// Largest chart size accepted.
const MAX_SIZE: u32 = 16_384;

impl Config {
    /// Validates the parsed command line.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the argument and what is wrong with it.
    pub fn from_cli(cli: Cli) -> Result<Self, Error> {
        Ok(match cli.command {
            Command::Validate(a) => Config::Validate { files: a.files },
            Command::Info(a) => {
                if a.top == Some(0) {
                    return Err(Error::Usage("--top must be at least 1".into()));
                }
                Config::Info {
                    file: a.file,
                    format: a.format,
                    top: a.top,
                    output: a.output,
                }
            }
            Command::Plot(a) => {
                for (name, v) in [("--width", a.width), ("--height", a.height)] {
                    if !(MIN_SIZE..=MAX_SIZE).contains(&v) {
                        return Err(Error::Usage(format!(
                            "{name} {v} is out of range; use {MIN_SIZE} to {MAX_SIZE} pixels"
                        )));
                    }
                }
                if a.top == 0 {
                    return Err(Error::Usage("--top must be at least 1".into()));
                }
                if a.output.extension().and_then(|e| e.to_str()) != Some("svg") {
                    return Err(Error::Usage(format!(
                        "-o {}: the plot is an SVG; name the file *.svg",
                        a.output.display()
                    )));
                }
                Config::Plot {
                    file: a.file,
                    chart: a.chart,
                    output: a.output,
                    top: a.top,
                    size: (f64::from(a.width), f64::from(a.height)),
                    device: a.device,
                }
            }
            Command::Merge(a) => {
                if a.files.contains(&a.output) {
                    return Err(Error::Usage(format!(
                        "-o {} is also an input; write the merged bundle to a new file",
                        a.output.display()
                    )));
                }
                Config::Merge {
                    files: a.files,
                    output: a.output,
                }
            }
            Command::Machine(_) => Config::Pending {
                command: "machine",
                needs_gpu: true,
                what: "measuring ceilings is tracked in issue #3",
            },
            Command::Suite(_) => Config::Pending {
                command: "suite",
                needs_gpu: true,
                what: "the conv2d/LSTM/GEMM study is tracked in issue #6",
            },
            Command::Profile(_) => Config::Pending {
                command: "profile",
                needs_gpu: true,
                what: "profiling through Nsight Compute is tracked in issue #4",
            },
            Command::Import(_) => Config::Pending {
                command: "import",
                needs_gpu: false,
                what: "importing Nsight Compute output is tracked in issue #4",
            },
        })
    }
}
