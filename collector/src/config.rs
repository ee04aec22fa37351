//! Raw CLI arguments become a validated configuration here, once; commands never see clap types.

use std::path::PathBuf;

use roofline_model::ncu::{Arch, Convention};

use crate::cli::{ChartKind, Cli, Command, ConventionArg, InfoFormat};
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
        /// A baseline bundle to compare with.
        baseline: Option<PathBuf>,
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
    /// Import Nsight Compute output.
    Import {
        /// CSV files or reports.
        files: Vec<PathBuf>,
        /// The bundle to write.
        output: PathBuf,
        /// Machine bundle.
        machine: Option<PathBuf>,
        /// Architecture override.
        arch: Option<Arch>,
        /// FLOP and time convention.
        convention: Convention,
        /// The ncu executable flag.
        ncu: Option<PathBuf>,
    },
    /// Profile a program under Nsight Compute.
    Profile(Box<ProfileConfig>),
    /// `roofline machine`.
    Machine {
        /// Where the bundle goes.
        output: PathBuf,
        /// One device, or every visible device (`None`).
        devices: Option<u32>,
        /// Coarser, faster measurement.
        quick: bool,
    },
    /// `roofline suite`.
    Suite {
        /// What to run.
        plan: crate::suite::Plan,
        /// A machine bundle for this GPU.
        machine: Option<PathBuf>,
        /// Where the bundle goes.
        output: PathBuf,
    },
}

/// `roofline profile`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileConfig {
    /// The bundle to write, placeholders filled in.
    pub output: PathBuf,
    /// Machine bundle.
    pub machine: Option<PathBuf>,
    /// NVTX include expression.
    pub nvtx: Option<String>,
    /// Kernel-name regular expression.
    pub kernel: Option<String>,
    /// Launches to skip.
    pub launch_skip: Option<u64>,
    /// Launches to profile at most.
    pub launch_count: Option<u64>,
    /// The ncu executable flag.
    pub ncu: Option<PathBuf>,
    /// Architecture override (else asked of the driver).
    pub arch: Option<Arch>,
    /// FLOP and time convention.
    pub convention: Convention,
    /// Where to keep ncu's report, if anywhere.
    pub keep_report: Option<PathBuf>,
    /// The program and its arguments.
    pub command: Vec<String>,
}

fn convention(c: ConventionArg) -> Convention {
    match c {
        ConventionArg::Current => Convention::Current,
        ConventionArg::Study2020 => Convention::Study2020,
    }
}

fn arch(cc: Option<&str>) -> Result<Option<Arch>, Error> {
    cc.map(|cc| {
        Arch::from_compute_capability(cc)
            .map(|(a, note)| {
                if let Some(n) = note {
                    eprintln!("note: {n}");
                }
                a
            })
            .map_err(|e| Error::Usage(format!("--arch {e}")))
    })
    .transpose()
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
                if a.baseline.is_some() && a.format == InfoFormat::Json {
                    return Err(Error::Usage(
                        "--baseline works with --format table or csv, not json".into(),
                    ));
                }
                Config::Info {
                    file: a.file,
                    format: a.format,
                    top: a.top,
                    baseline: a.baseline,
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
            Command::Machine(a) => Config::Machine {
                output: a.output,
                devices: if a.all_devices { None } else { Some(a.device) },
                quick: a.quick,
            },
            Command::Suite(a) => Config::Suite {
                plan: crate::suite::Plan {
                    studies: crate::suite::Study::parse(&a.study).map_err(Error::Usage)?,
                    precisions: crate::suite::parse_precisions(&a.precision)
                        .map_err(Error::Usage)?,
                    tensor: crate::suite::TensorMode::parse(&a.tensor).map_err(Error::Usage)?,
                },
                machine: a.machine,
                output: a.output,
            },
            Command::Profile(a) => {
                if a.launch_count == Some(0) {
                    return Err(Error::Usage("--launch-count must be at least 1".into()));
                }
                let template = a.output.to_string_lossy().into_owned();
                let host = crate::provenance::host_name().unwrap_or_else(|| "host".into());
                let output =
                    crate::ncu::fill_placeholders(&template, |k| std::env::var(k).ok(), &host)
                        .map_err(|e| Error::Usage(format!("-o {template}: {e}")))?;
                Config::Profile(Box::new(ProfileConfig {
                    output: PathBuf::from(output),
                    machine: a.machine,
                    nvtx: a.nvtx,
                    kernel: a.kernel,
                    launch_skip: a.launch_skip,
                    launch_count: a.launch_count,
                    ncu: a.ncu,
                    arch: arch(a.arch.as_deref())?,
                    convention: convention(a.convention),
                    keep_report: a.keep_report,
                    command: a.command,
                }))
            }
            Command::Import(a) => Config::Import {
                files: a.files,
                output: a.output,
                machine: a.machine,
                arch: arch(a.arch.as_deref())?,
                convention: convention(a.convention),
                ncu: a.ncu,
            },
        })
    }
}
