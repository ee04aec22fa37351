//! Raw CLI arguments become a validated configuration here, once; commands never see clap types.

use std::path::{Path, PathBuf};

use roofline_import::ncu::{Arch, Convention};
use roofline_model::bundle::options::{ComputeCapability, Datasheet, ImportOptions};

use crate::cli::{ChartKind, Cli, Command, InfoFormat, PlotFormat, PrecisionArg, StudyArg};
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
        /// Rows per kernel name, operator or module, as asked (`None`: per kernel, or with a
        /// baseline [`roofline_model::chart::view::ViewState::group_for`]'s choice).
        group_by: Option<roofline_model::analysis::group::GroupBy>,
        /// With a baseline: the one device compared (`None`: every device).
        device: Option<String>,
    },
    /// Draw a chart as SVG.
    Plot {
        /// The bundle.
        file: PathBuf,
        /// Which chart; `None`: [`crate::commands::plot_default`]'s choice.
        chart: Option<ChartKind>,
        /// The SVG to write.
        output: PathBuf,
        /// Kernels drawn.
        top: usize,
        /// Size in pixels.
        size: (f64, f64),
        /// Device to draw.
        device: Option<String>,
        /// Points per kernel name, operator or module.
        group_by: roofline_model::analysis::group::GroupBy,
    },
    /// Save the viewer with a bundle as one standalone HTML file.
    Page(Box<PageConfig>),
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
        /// The import's options (the model's one type; `counters` names the file below).
        options: ImportOptions,
        /// `--counters`: the range-profiler trace read.
        counters: Option<PathBuf>,
        /// The ncu executable flag.
        ncu: Option<PathBuf>,
        /// With `-o DIR/`: the bundle of each trace, in the order of `files` (empty otherwise).
        per_trace: Vec<PathBuf>,
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
        /// Time the kernels the SASS audit refuses, as notes.
        diagnose_refused: bool,
    },
    /// `roofline export`: bundles as Parquet tables.
    Export {
        /// Each bundle with the files its tables go to.
        runs: Vec<ExportRun>,
    },
    /// `roofline catalogue`: the GPU catalogue listed, or one GPU shown.
    Catalogue {
        /// The GPU shown, by id or product name.
        gpu: Option<String>,
    },
    /// `roofline machine --plan`: the schedule, printed; nothing measured.
    MachinePlan {
        /// The plan.
        plan: crate::machine::Plan,
        /// The GPU it is computed for.
        target: crate::machine::schedule::Target,
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

impl Config {
    /// The files the command reads and the files it writes (`-` is standard output), for the
    /// checks of [`crate::io::check_files`] before it runs.
    ///
    /// Every variant is destructured field by field (no `..`): a path added to a command must be
    /// placed here, among its inputs or outputs, or the crate does not compile.
    pub fn files(&self) -> (Vec<&Path>, Vec<&Path>) {
        let mut inputs: Vec<&Path> = Vec::new();
        let mut outputs: Vec<&Path> = Vec::new();
        match self {
            Config::Validate { files } => inputs.extend(files.iter().map(PathBuf::as_path)),
            Config::Info {
                file,
                format: _,
                top: _,
                baseline,
                output,
                group_by: _,
                device: _,
            } => {
                inputs.push(file);
                inputs.extend(baseline.as_deref());
                outputs.extend(output.as_deref());
            }
            Config::Plot {
                file,
                chart: _,
                output,
                top: _,
                size: _,
                device: _,
                group_by: _,
            } => {
                inputs.push(file);
                outputs.push(output);
            }
            Config::Page(p) => {
                let PageConfig {
                    file,
                    baseline,
                    output,
                    chart: _,
                    top: _,
                    labels: _,
                    device: _,
                    group_by: _,
                    embed: _,
                } = p.as_ref();
                inputs.push(file);
                inputs.extend(baseline.as_deref());
                outputs.push(output);
            }
            Config::Merge { files, output } => {
                inputs.extend(files.iter().map(PathBuf::as_path));
                outputs.push(output);
            }
            Config::Import {
                files,
                output,
                machine,
                options,
                counters,
                ncu: _,
                per_trace,
            } => {
                inputs.extend(files.iter().map(PathBuf::as_path));
                inputs.extend(machine.as_deref());
                inputs.extend(counters.as_deref());
                inputs.extend(options.model_config.as_deref().map(Path::new));
                if per_trace.is_empty() {
                    outputs.push(output);
                } else {
                    outputs.extend(per_trace.iter().map(PathBuf::as_path));
                }
            }
            Config::Profile(c) => {
                let ProfileConfig {
                    output,
                    machine,
                    nvtx: _,
                    kernel: _,
                    launch_skip: _,
                    launch_count: _,
                    ncu: _,
                    arch: _,
                    convention: _,
                    keep_report: _,
                    command: _,
                    allow_machine_mismatch: _,
                } = c.as_ref();
                // The report ncu keeps is written by ncu itself, under a name it chooses.
                inputs.extend(machine.as_deref());
                outputs.push(output);
            }
            Config::Machine {
                output,
                devices: _,
                quick: _,
                diagnose_refused: _,
            } => outputs.push(output),
            Config::MachinePlan { plan: _, target: _ } | Config::Catalogue { gpu: _ } => {}
            Config::Export { runs } => {
                for r in runs {
                    inputs.push(&r.input);
                    outputs.push(&r.kernels);
                    outputs.push(&r.operators);
                }
            }
            Config::Suite {
                plan: _,
                machine,
                output,
            } => {
                inputs.extend(machine.as_deref());
                outputs.push(output);
            }
        }
        (inputs, outputs)
    }
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
    /// Place the kernels against a machine of another GPU, noted in the bundle.
    pub allow_machine_mismatch: bool,
}

/// `--arch`'s compute capability, read by the model's one parser; one outside the metric table
/// is said on standard error (the nearest documented one is used).
fn arch(cc: Option<&str>) -> Result<Option<ComputeCapability>, Error> {
    cc.map(|cc| {
        let cc: ComputeCapability = cc
            .parse()
            .map_err(|e| Error::Usage(format!("--arch {e}")))?;
        if let (_, Some(n)) = Arch::of(cc) {
            crate::stderr::message(&format!("note: {n}"));
        }
        Ok(cc)
    })
    .transpose()
}

/// `--tensor-parallel` or `--expert-parallel`'s ranks, read by the model's one parser.
fn ranks(flag: &str, value: Option<&str>) -> Result<Option<u64>, Error> {
    value
        .map(|v| ImportOptions::ranks_value(flag, v).map_err(Error::Usage))
        .transpose()
}

/// `-o` with its `{rank}`, `{host}` and `{device}` filled in from the launcher's environment
/// ([`crate::ncu::fill_placeholders`]); a placeholder filled with its default outside a launcher
/// is said on standard error, so that `run-{rank}.json` becoming `run-0.json` is never silent.
/// With `-o DIR/`, each trace's bundle: `DIR/` and the trace's file name without `.gz` and its
/// `.json` ending, then `.json`. Two traces of one name are refused (one would overwrite the
/// other).
fn per_trace_outputs(files: &[PathBuf], dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out: Vec<PathBuf> = Vec::with_capacity(files.len());
    for f in files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = name.strip_suffix(".gz").unwrap_or(&name);
        let stem = stem.strip_suffix(".json").unwrap_or(stem);
        let path = dir.join(format!("{stem}.json"));
        if let Some(i) = out.iter().position(|p| *p == path) {
            return Err(Error::Usage(format!(
                "-o {}: {} and {} would both be written to {}; import them into separate directories",
                dir.display(),
                files[i].display(),
                f.display(),
                path.display()
            )));
        }
        out.push(path);
    }
    Ok(out)
}

fn output_path(output: PathBuf) -> Result<PathBuf, Error> {
    let template = output.to_string_lossy().into_owned();
    if !template.contains('{') {
        return Ok(output);
    }
    let host = crate::provenance::host_name().unwrap_or_else(|| "host".into());
    let filled = crate::ncu::fill_placeholders(&template, |k| std::env::var(k).ok(), &host)
        .map_err(|e| Error::Usage(format!("-o {template}: {e}")))?;
    for n in &filled.defaulted {
        crate::stderr::message(&format!("note: -o {template}: {n}"));
    }
    Ok(PathBuf::from(filled.path))
}

/// One bundle of `roofline export` and the files its tables go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportRun {
    /// The bundle.
    pub input: PathBuf,
    /// The run's name: the bundle's file stem (`run-7` for `run-7.json`).
    pub name: String,
    /// `DIR/kernels/NAME.parquet`.
    pub kernels: PathBuf,
    /// `DIR/operators/NAME.parquet`, written for a bundle with PyTorch operators.
    pub operators: PathBuf,
}

impl ExportRun {
    /// Each file's run and tables under `dir`.
    ///
    /// # Errors
    /// [`Error::Usage`] for two bundles of the same name (one table would overwrite the other)
    /// or a file with no name.
    pub fn plan(files: &[PathBuf], dir: &Path) -> Result<Vec<ExportRun>, Error> {
        let mut runs: Vec<ExportRun> = Vec::new();
        for f in files {
            let name = f
                .file_stem()
                .and_then(|s| s.to_str())
                .map(|s| s.strip_suffix(".roofline").unwrap_or(s).to_string())
                .filter(|s| !s.is_empty())
                .ok_or_else(|| {
                    Error::Usage(format!("{}: no file name to name its run by", f.display()))
                })?;
            if let Some(other) = runs.iter().find(|r| r.name == name) {
                return Err(Error::Usage(format!(
                    "{} and {} would both be run {name:?}: their tables would overwrite each other; rename one",
                    other.input.display(),
                    f.display()
                )));
            }
            runs.push(ExportRun {
                input: f.clone(),
                kernels: dir.join("kernels").join(format!("{name}.parquet")),
                operators: dir.join("operators").join(format!("{name}.parquet")),
                name,
            });
        }
        Ok(runs)
    }
}

/// `roofline plot --format html`: the standalone page's bundles and view.
#[derive(Debug, Clone, PartialEq)]
pub struct PageConfig {
    /// The bundle shown.
    pub file: PathBuf,
    /// The bundle compared with.
    pub baseline: Option<PathBuf>,
    /// The page to write.
    pub output: PathBuf,
    /// The chart the page opens on; `None`: [`crate::commands::plot_default`]'s choice.
    pub chart: Option<ChartKind>,
    /// Kernels drawn (`None`: the viewer's default).
    pub top: Option<usize>,
    /// Kernels named on the chart (`None`: the viewer's default).
    pub labels: Option<usize>,
    /// Device shown.
    pub device: Option<String>,
    /// Points per kernel name, operator or module.
    pub group_by: roofline_model::analysis::group::GroupBy,
    /// The chart-only page for iframes (`--embed`), with its link to the full viewer (`--link`).
    pub embed: Option<Embed>,
}

/// `--embed` and its `--link`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Embed {
    /// The URL of the "open in the full viewer" link.
    pub link: Option<String>,
}

/// The format `-o` asks for, by its extension: `Some` for `.svg` and `.html`/`.htm`.
fn format_of(output: &Path) -> Option<PlotFormat> {
    if crate::io::is_stdout(output) {
        return Some(PlotFormat::Svg);
    }
    match output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("svg") => Some(PlotFormat::Svg),
        Some("html" | "htm") => Some(PlotFormat::Html),
        _ => None,
    }
}

/// `roofline plot`: an SVG, or with `--format html` (or `-o OUT.html`) the standalone page.
fn plot(a: crate::cli::PlotArgs) -> Result<Config, Error> {
    let by_name = format_of(&a.output);
    let format = match (a.format, by_name) {
        (Some(f), Some(n)) if f != n && !crate::io::is_stdout(&a.output) => {
            return Err(Error::Usage(format!(
                "-o {} names {} file, but --format is {}; make them agree",
                a.output.display(),
                if n == PlotFormat::Svg {
                    "an SVG"
                } else {
                    "an HTML"
                },
                if f == PlotFormat::Svg { "svg" } else { "html" },
            )));
        }
        (Some(f), _) => f,
        (None, Some(n)) => n,
        (None, None) => {
            return Err(Error::Usage(format!(
                "-o {}: the plot is an SVG or a standalone HTML page; name the file *.svg or *.html, or choose with --format svg|html",
                a.output.display()
            )));
        }
    };
    if a.top == Some(0) {
        return Err(Error::Usage("--top must be at least 1".into()));
    }
    let group_by = a.group_by;
    match format {
        PlotFormat::Svg => {
            if a.embed {
                return Err(Error::Usage(
                    "--embed makes the chart-only HTML page; write -o OUT.html (or --format html)"
                        .into(),
                ));
            }
            if a.baseline.is_some() || a.labels.is_some() {
                return Err(Error::Usage(format!(
                    "{} works with the HTML page only (the viewer draws it); write -o OUT.html",
                    if a.baseline.is_some() {
                        "--baseline"
                    } else {
                        "--labels"
                    }
                )));
            }
            let (width, height) = (a.width.unwrap_or(960), a.height.unwrap_or(640));
            for (name, v) in [("--width", width), ("--height", height)] {
                if !(MIN_SIZE..=MAX_SIZE).contains(&v) {
                    return Err(Error::Usage(format!(
                        "{name} {v} is out of range; use {MIN_SIZE} to {MAX_SIZE} pixels"
                    )));
                }
            }
            Ok(Config::Plot {
                file: a.file,
                chart: a.chart,
                output: a.output,
                top: a.top.unwrap_or(12),
                size: (f64::from(width), f64::from(height)),
                device: a.device,
                group_by,
            })
        }
        PlotFormat::Html => {
            if a.width.is_some() || a.height.is_some() {
                return Err(Error::Usage(
                    "--width and --height size the SVG; the HTML page fits the chart to the window"
                        .into(),
                ));
            }
            if a.labels.is_some_and(|n| n > 40) {
                return Err(Error::Usage(
                    "--labels names at most 40 kernels (as the viewer)".into(),
                ));
            }
            if a.top.is_some_and(|n| n > 500) {
                return Err(Error::Usage(
                    "--top draws at most 500 kernels in the HTML page (as the viewer)".into(),
                ));
            }
            Ok(Config::Page(Box::new(PageConfig {
                file: a.file,
                baseline: a.baseline,
                output: a.output,
                chart: a.chart,
                top: a.top,
                labels: a.labels,
                device: a.device,
                group_by,
                embed: a.embed.then_some(Embed { link: a.link }),
            })))
        }
    }
}

/// The studies a `roofline suite` argument names.
fn studies(s: StudyArg) -> Vec<crate::suite::Study> {
    use crate::suite::Study;
    match s {
        StudyArg::Conv2d => vec![Study::Conv2d],
        StudyArg::Lstm => vec![Study::Lstm],
        StudyArg::Gemm => vec![Study::Gemm],
        StudyArg::All => Study::ALL.to_vec(),
    }
}

/// `--precision` values, in order, each once.
fn precisions(
    values: &[PrecisionArg],
) -> Result<Vec<roofline_model::analysis::dl::Precision>, Error> {
    use roofline_model::analysis::dl::Precision;
    let mut out = Vec::new();
    for v in values {
        let p = match v {
            PrecisionArg::Fp32 => Precision::Fp32,
            PrecisionArg::Fp16 => Precision::Fp16,
            PrecisionArg::Bf16 => Precision::Bf16,
        };
        if !out.contains(&p) {
            out.push(p);
        }
    }
    if out.is_empty() {
        return Err(Error::Usage(
            "--precision: give at least one of fp32, fp16, bf16".into(),
        ));
    }
    Ok(out)
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
                    group_by: a.group_by,
                    device: a.device,
                }
            }
            Command::Plot(a) => plot(a)?,
            // An output that is one of the inputs is refused by file identity when the command
            // runs (`io::check_files`), not by comparing spellings here.
            Command::Merge(a) => Config::Merge {
                files: a.files,
                output: a.output,
            },
            Command::Catalogue(a) => Config::Catalogue { gpu: a.gpu },
            Command::Export(a) => Config::Export {
                runs: ExportRun::plan(&a.files, &a.output)?,
            },
            Command::Machine(a) if a.plan => {
                let target =
                    crate::machine::schedule::Target::named(&a.plan_gpu).ok_or_else(|| {
                        Error::Usage(format!(
                            "--plan-gpu {:?}: the plan knows {}",
                            a.plan_gpu,
                            crate::machine::schedule::Target::known()
                                .iter()
                                .map(|t| format!("{:?}", t.sheet.product))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })?;
                Config::MachinePlan {
                    plan: crate::machine::Plan {
                        quick: a.quick,
                        diagnose_refused: a.diagnose_refused,
                    },
                    target,
                }
            }
            Command::Machine(a) => Config::Machine {
                output: a.output,
                devices: if a.all_devices { None } else { Some(a.device) },
                quick: a.quick,
                diagnose_refused: a.diagnose_refused,
            },
            Command::Suite(a) => Config::Suite {
                plan: crate::suite::Plan {
                    studies: studies(a.study),
                    precisions: precisions(&a.precision)?,
                    tensor: a.tensor,
                },
                machine: a.machine,
                output: a.output,
            },
            Command::Profile(a) => {
                if crate::io::is_stdout(&a.output) {
                    return Err(Error::Usage(
                        "-o -: the profiled program's own output goes to standard output; name a file for the bundle".into(),
                    ));
                }
                if a.launch_count == Some(0) {
                    return Err(Error::Usage("--launch-count must be at least 1".into()));
                }
                Config::Profile(Box::new(ProfileConfig {
                    output: output_path(a.output)?,
                    machine: a.machine,
                    nvtx: a.nvtx,
                    kernel: a.kernel,
                    launch_skip: a.launch_skip,
                    launch_count: a.launch_count,
                    ncu: a.ncu,
                    arch: arch(a.arch.as_deref())?.map(|cc| Arch::of(cc).0),
                    convention: a.convention,
                    keep_report: a.keep_report,
                    command: a.command,
                    allow_machine_mismatch: a.allow_machine_mismatch,
                }))
            }
            Command::Import(a) => {
                let files = crate::io::expand_trace_dirs(a.files)?;
                // `-` (standard output) has no placeholder: output_path keeps it.
                let output = output_path(a.output)?;
                let per_trace = if crate::io::is_dir_output(&output) {
                    per_trace_outputs(&files, &output)?
                } else {
                    Vec::new()
                };
                let count = |option: &str, v: &Option<String>| {
                    v.as_deref()
                        .map(|v| ImportOptions::count_value(option, v).map_err(Error::Usage))
                        .transpose()
                };
                Config::Import {
                    files,
                    output,
                    per_trace,
                    machine: a.machine,
                    options: ImportOptions {
                        arch: arch(a.arch.as_deref())?,
                        convention: a.convention,
                        allow_partial: a.allow_partial,
                        allow_machine_mismatch: a.allow_machine_mismatch,
                        counters: a.counters.as_ref().map(|c| c.display().to_string()),
                        datasheet: match (&a.ceilings, a.no_datasheet) {
                            (Some(v), _) => {
                                ImportOptions::ceilings_value(v).map_err(Error::Usage)?
                            }
                            (None, true) => Datasheet::Off,
                            (None, false) => Datasheet::Matched,
                        },
                        group_size: count("--group-size", &a.group_size)?,
                        gpus_per_node: count("--gpus-per-node", &a.gpus_per_node)?,
                        system: a.system,
                        model_config: a.model_config.as_ref().map(|m| m.display().to_string()),
                        tensor_parallel: ranks("--tensor-parallel", a.tensor_parallel.as_deref())?,
                        expert_parallel: ranks("--expert-parallel", a.expert_parallel.as_deref())?,
                    },
                    counters: a.counters,
                    ncu: a.ncu,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use roofline_model::analysis::dl::Precision;

    use super::*;
    use crate::suite::{Study, TensorMode};

    fn suite(args: &[&str]) -> Result<crate::suite::Plan, String> {
        let cli = Cli::try_parse_from(["roofline", "suite"].iter().chain(args))
            .map_err(|e| e.to_string())?;
        match Config::from_cli(cli).map_err(|e| e.to_string())? {
            Config::Suite { plan, .. } => Ok(plan),
            other => Err(format!("{other:?}")),
        }
    }

    #[test]
    fn suite_flags_parse_into_a_plan() {
        let all = suite(&[]).unwrap();
        assert_eq!(all.studies, Study::ALL);
        assert_eq!(all.precisions, Precision::ALL);
        assert_eq!(all.tensor, TensorMode::Both);
        let p = suite(&["lstm", "--precision", "fp16,fp32,fp16", "--tensor", "off"]).unwrap();
        assert_eq!(p.studies, [Study::Lstm]);
        // In the order given, each once.
        assert_eq!(p.precisions, [Precision::Fp16, Precision::Fp32]);
        assert_eq!(p.tensor, TensorMode::Off);
        assert_eq!(suite(&["conv2d"]).unwrap().studies, [Study::Conv2d]);
        assert_eq!(
            suite(&["gemm", "--tensor", "on"])
                .unwrap()
                .tensor
                .settings(),
            [true]
        );
    }

    #[test]
    fn embed_is_an_html_page_and_link_needs_it() {
        let plot = |args: &[&str]| {
            let cli = Cli::try_parse_from(["roofline", "plot", "a.json"].iter().chain(args))
                .map_err(|e| e.to_string())?;
            Config::from_cli(cli).map_err(|e| e.to_string())
        };
        match plot(&["--embed", "--link", "full.html", "-o", "c.html"]).unwrap() {
            Config::Page(p) => assert_eq!(
                p.embed,
                Some(Embed {
                    link: Some("full.html".into())
                })
            ),
            other => panic!("{other:?}"),
        }
        match plot(&["--format", "html", "-o", "-"]).unwrap() {
            Config::Page(p) => assert_eq!(p.embed, None),
            other => panic!("{other:?}"),
        }
        let e = plot(&["--embed", "-o", "c.svg"]).unwrap_err();
        assert!(e.contains("--embed makes the chart-only HTML page"), "{e}");
        let e = plot(&["--link", "x.html", "-o", "c.html"]).unwrap_err();
        assert!(e.contains("--embed"), "{e}");
    }

    #[test]
    fn suite_flags_outside_their_lists_are_refused_by_clap() {
        let e = suite(&["rnn"]).unwrap_err();
        assert!(e.contains("invalid value 'rnn'"), "{e}");
        assert!(e.contains("conv2d, lstm, gemm, all"), "{e}");
        let e = suite(&["--precision", "fp8"]).unwrap_err();
        assert!(e.contains("fp32, fp16, bf16"), "{e}");
        let e = suite(&["--tensor", "yes"]).unwrap_err();
        assert!(e.contains("on, off, both"), "{e}");
    }
}
