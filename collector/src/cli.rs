//! The command line as clap sees it: raw arguments, before validation (see [`crate::config`]).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use roofline_model::analysis::group::GroupBy;
use roofline_model::bundle::options::Convention;

/// Hierarchical and time-based rooflines for GPU deep-learning work.
///
/// Measure a GPU's ceilings, profile kernels with Nsight Compute, and read, merge, report and
/// plot the resulting bundles. Bundles are portable JSON (schema v1); open them in the viewer too.
#[derive(Debug, Parser)]
#[command(
    name = "roofline",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check that bundles are readable and their figures possible; exit non-zero if not.
    Validate(ValidateArgs),
    /// Print a bundle's devices, ceilings and kernels (sorted by share of time) with their bounds.
    Info(InfoArgs),
    /// Draw the hierarchical or time-based roofline of a bundle as a static SVG, or save it with
    /// the viewer as one self-contained HTML file.
    Plot(PlotArgs),
    /// Join several bundles (for example one per MPI rank) into one.
    Merge(MergeArgs),
    /// Measure this GPU's ceilings per memory level and precision, and its launch overhead (GPU).
    Machine(MachineArgs),
    /// Run the time-based roofline study of conv2d, LSTM and GEMM kernels (GPU).
    Suite(SuiteArgs),
    /// Profile an application under Nsight Compute with the hierarchical roofline metrics (GPU).
    Profile(ProfileArgs),
    /// Turn existing Nsight Compute CSV or report files, or a torch.profiler trace, into a bundle.
    Import(ImportArgs),
    /// List the GPU catalogue: the datasheet ceilings an import without --machine uses, each
    /// GPU with its figures and their sources.
    Catalogue(CatalogueArgs),
    /// Write bundles as typed Parquet tables (kernels, operators) for query engines: DuckDB,
    /// Spark, a warehouse (docs/fleet.md).
    Export(ExportArgs),
}

/// `roofline export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Bundles to export, one run each.
    #[arg(required = true, num_args = 1.., value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The folder the tables go to: DIR/kernels/RUN.parquet and, for bundles with PyTorch
    /// operators, DIR/operators/RUN.parquet (RUN: each bundle's file stem).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// The format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Parquet)]
    pub format: ExportFormat,
}

/// `roofline export --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Apache Parquet, Snappy-compressed, one file per run and table.
    Parquet,
}

/// `roofline catalogue`.
#[derive(Debug, Args)]
pub struct CatalogueArgs {
    /// Show one GPU (its id or product name) with every figure and its source.
    #[arg(value_name = "GPU")]
    pub gpu: Option<String>,
}

/// `roofline validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Bundle files to check.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Output formats of `roofline info`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InfoFormat {
    /// Aligned text for a terminal.
    Table,
    /// One row per kernel name, stable column names (for pandas).
    Csv,
    /// Devices, ceilings and the kernel rows as JSON.
    Json,
}

/// `roofline info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The bundle.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = InfoFormat::Table)]
    pub format: InfoFormat,
    /// Show only the N kernels with the largest share of time (table only; csv and json hold all).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Compare with this bundle: per kernel name its baseline time, Δ, speed-up and change of
    /// bound, and where the total time moved (table or csv).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// One row per kernel name, or per PyTorch operator or module (torch.profiler imports).
    /// Default: per kernel; with --baseline, per operator when both bundles carry the operators
    /// that launched their kernels (as the viewer compares them), else per kernel.
    #[arg(long, value_parser = group_by_values())]
    pub group_by: Option<GroupBy>,
    /// With --baseline: compare this device only, by id (by default every device, each in its
    /// own section).
    #[arg(long, value_name = "ID", requires = "baseline")]
    pub device: Option<String>,
}

/// `--group-by`'s values: the model's one vocabulary of groupings ([`GroupBy::key`], with
/// [`GroupBy::help`] as each value's help).
fn group_by_values() -> impl clap::builder::TypedValueParser<Value = GroupBy> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(
        GroupBy::ALL.map(|g| clap::builder::PossibleValue::new(g.key()).help(g.help())),
    )
    .map(|key: String| GroupBy::from_key(&key).unwrap_or_default())
}

/// The charts `roofline plot` draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChartKind {
    /// Performance against arithmetic intensity, one point per kernel and memory level.
    Hierarchical,
    /// FLOPs against bytes (Wang et al. 2020), each kernel joined to its time vertex.
    Time,
    /// The machine's ERT-style sweep: performance against intensity per working set.
    Sweep,
    /// The collectives (NCCL kernels): bus bandwidth against message size, under the roofs of
    /// the links they run on (NVLink, PCIe, the network).
    Comm,
}

/// What `roofline plot` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlotFormat {
    /// A static SVG of the chart.
    Svg,
    /// One self-contained HTML file: the viewer with the bundle (and baseline) inlined, which
    /// opens from disk or an e-mail attachment with no server.
    Html,
}

/// `roofline plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The bundle.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Which chart (in HTML: the view the page opens on; `sweep` opens the machine view). By
    /// default the hierarchical one, or the time-based one when the hierarchical chart has
    /// nothing to draw and the time-based has (a torch.profiler trace imported without counters
    /// or a machine).
    #[arg(long, value_enum)]
    pub chart: Option<ChartKind>,
    /// The file to write: OUT.svg, or OUT.html for the standalone page.
    #[arg(short, long, value_name = "OUT.svg|OUT.html")]
    pub output: PathBuf,
    /// svg or html; by default from the output's extension (svg for standard output).
    #[arg(long, value_enum)]
    pub format: Option<PlotFormat>,
    /// Label and draw only the N kernels with the largest share of time (SVG: 12 by default;
    /// HTML: the viewer's default).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Width of the SVG in pixels (960 by default; SVG only).
    #[arg(long)]
    pub width: Option<u32>,
    /// Height of the SVG in pixels (640 by default; SVG only).
    #[arg(long)]
    pub height: Option<u32>,
    /// The device to draw, by id, when the bundle holds several.
    #[arg(long, value_name = "ID")]
    pub device: Option<String>,
    /// Compare with this bundle: arrows from each kernel's baseline point to its current one,
    /// new and gone kernels, the compare table (HTML only).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Name the N largest kernels on the chart (HTML only; the viewer's default otherwise).
    #[arg(long, value_name = "N")]
    pub labels: Option<usize>,
    /// One point per kernel name, or per PyTorch operator or module (torch.profiler imports).
    #[arg(long, value_parser = group_by_values(), default_value = "kernel")]
    pub group_by: GroupBy,
    /// The chart-only page for an iframe in documentation (HTML only): the chart with hover, zoom
    /// and the chart switch, no pickers or tables; it tells the page around it its height
    /// (docs/embedding.md).
    #[arg(long)]
    pub embed: bool,
    /// With --embed: a link "open in the full viewer" to this URL (relative or http(s)), for
    /// example the full page written by `plot --format html` beside the chart.
    #[arg(long, value_name = "URL", requires = "embed")]
    pub link: Option<String>,
}

/// `roofline merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Bundles to join, in order.
    #[arg(required = true, num_args = 1.., value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The merged bundle.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
}

/// `roofline machine`.
#[derive(Debug, Args)]
pub struct MachineArgs {
    /// Where to write the bundle.
    #[arg(short, long, value_name = "FILE", default_value = "machine.json")]
    pub output: PathBuf,
    /// The CUDA device to measure.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        conflicts_with = "all_devices"
    )]
    pub device: u32,
    /// Measure every visible device.
    #[arg(long)]
    pub all_devices: bool,
    /// Shorter warm-ups and windows, fewer intervals, two reference GEMM shapes per datapath
    /// (marked indicative), a coarser sweep: see `--plan --quick` for how long (computed, not yet
    /// timed on a GPU; docs/measurements/methodology.md).
    #[arg(long)]
    pub quick: bool,
    /// Also time the kernels the SASS audit refuses on this GPU (emulated or spilling code),
    /// and say in the bundle's notes how fast they ran: a diagnostic, never a ceiling.
    #[arg(long)]
    pub diagnose_refused: bool,
    /// Measure nothing: print how long each phase of this plan (with --quick and
    /// --diagnose-refused as given) takes on a GPU, computed from the plan's own numbers and the
    /// GPU's datasheet; needs no GPU. The last line is `total_seconds LOW HIGH`.
    #[arg(long)]
    pub plan: bool,
    /// With --plan: the GPU to plan for (`H100 SXM5`, `H200 SXM`, `H100 PCIe`).
    #[arg(
        long,
        value_name = "GPU",
        requires = "plan",
        default_value = "H100 SXM5"
    )]
    pub plan_gpu: String,
}

/// The studies `roofline suite` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StudyArg {
    /// 2D convolutions (forward, backward-data, backward-filter).
    Conv2d,
    /// LSTM layers.
    Lstm,
    /// Matrix products.
    Gemm,
    /// All three.
    All,
}

/// Storage precisions of the suite's configurations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    /// 32-bit float.
    Fp32,
    /// IEEE half.
    Fp16,
    /// bfloat16.
    Bf16,
}

/// `roofline suite`.
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Which study to run.
    #[arg(value_name = "STUDY", value_enum, default_value_t = StudyArg::All)]
    pub study: StudyArg,
    /// Precisions, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "fp32,fp16,bf16"
    )]
    pub precision: Vec<PrecisionArg>,
    /// Tensor Cores: on, off or both.
    #[arg(long, value_enum, default_value_t = crate::suite::TensorMode::Both)]
    pub tensor: crate::suite::TensorMode,
    /// A bundle holding this GPU's machine characterization.
    #[arg(long, value_name = "FILE")]
    pub machine: Option<PathBuf>,
    /// Where to write the bundle.
    #[arg(short, long, value_name = "FILE", default_value = "suite.json")]
    pub output: PathBuf,
}

/// `--convention`'s values: the model's one convention type ([`Convention::key`], with
/// [`Convention::help`] as each value's help).
fn convention_values() -> impl clap::builder::TypedValueParser<Value = Convention> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(
        Convention::ALL.map(|c| clap::builder::PossibleValue::new(c.key()).help(c.help())),
    )
    .map(|key: String| key.parse().unwrap_or_default())
}

/// `roofline profile`.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Where to write the bundle; `{rank}`, `{host}` and `{device}` are filled in from the
    /// launcher's environment (Slurm, Open MPI, PMI, torchrun).
    #[arg(short, long, value_name = "FILE", default_value = "profile.json")]
    pub output: PathBuf,
    /// A bundle holding this GPU's machine characterization (from `roofline machine`).
    #[arg(long, value_name = "FILE")]
    pub machine: Option<PathBuf>,
    /// Profile only inside this NVTX range (ncu's --nvtx-include syntax, e.g. `train_step/`).
    #[arg(long, value_name = "RANGE")]
    pub nvtx: Option<String>,
    /// Profile only kernels whose demangled name (as the bundle shows it) matches this regular
    /// expression.
    #[arg(long, value_name = "REGEX")]
    pub kernel: Option<String>,
    /// Skip this many matching launches first.
    #[arg(long, value_name = "N")]
    pub launch_skip: Option<u64>,
    /// Profile at most this many launches.
    #[arg(long, value_name = "N")]
    pub launch_count: Option<u64>,
    /// The Nsight Compute executable (default: $NCU, then ncu on PATH).
    #[arg(long, value_name = "PATH")]
    pub ncu: Option<PathBuf>,
    /// The GPU's compute capability (e.g. 9.0), instead of asking the driver.
    #[arg(long, value_name = "CC")]
    pub arch: Option<String>,
    /// How FLOPs and times are counted.
    #[arg(long, value_parser = convention_values(), default_value = "current")]
    pub convention: Convention,
    /// Keep ncu's report at this path (without the .ncu-rep ending ncu adds).
    #[arg(long, value_name = "FILE")]
    pub keep_report: Option<PathBuf>,
    /// Place the kernels against --machine even though it describes another GPU (another name,
    /// compute capability or SM count); the bundle's notes say so. Without it, refused.
    #[arg(long, requires = "machine")]
    pub allow_machine_mismatch: bool,
    /// The program to profile and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `roofline import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Nsight Compute CSV files (raw or details page; several one-metric files of one run are
    /// joined), `.ncu-rep` reports (converted with ncu), one torch.profiler trace (`.json` or
    /// `.json.gz`, recognised by its content), or several traces, one per rank of a run (or a
    /// directory of them), imported in parallel into one bundle with a device per rank.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Where to write the bundle; `{rank}`, `{host}` and `{device}` are filled in as for
    /// `profile`. A directory (an existing one, or a path ending in `/`) takes one bundle per
    /// trace instead, named after it (`DIR/rank3.json` for `rank3.json.gz`).
    #[arg(short, long, value_name = "FILE", default_value = "import.json")]
    pub output: PathBuf,
    /// The ranks of a collective whose own arguments do not record its group (torch.profiler
    /// traces before PyTorch 2.3): used before distributedInfo's world size, which knows the
    /// default process group only.
    #[arg(long, value_name = "N")]
    pub group_size: Option<String>,
    /// GPUs per node, which tells a collective within one node (NVLink) from one across nodes
    /// (the network); by default the --system's, else the devices the trace lists.
    #[arg(long, value_name = "N")]
    pub gpus_per_node: Option<String>,
    /// The multi-GPU node of the GPU catalogue the job ran on (`nvidia-dgx-h100`, `dgx-a100`;
    /// `roofline catalogue` lists them): its NVLink and network per GPU bound the collectives,
    /// and its GPUs per node place the ranks.
    #[arg(long, value_name = "NAME")]
    pub system: Option<String>,
    /// A bundle holding the GPU's machine characterization.
    #[arg(long, value_name = "FILE")]
    pub machine: Option<PathBuf>,
    /// The GPU's compute capability (e.g. 7.0), when the input does not name it (a CSV without
    /// a CC column); refused where it contradicts the input or --machine, and with a trace
    /// without counters.
    #[arg(long, value_name = "CC")]
    pub arch: Option<String>,
    /// How FLOPs and times are counted from counters (`current` by default; refused with a
    /// trace that has no counters).
    #[arg(long, value_parser = convention_values())]
    pub convention: Option<Convention>,
    /// Place the kernels against --machine even though it describes another GPU than the one
    /// the input names (another name, compute capability or SM count); the bundle's notes say
    /// so. Without it, refused naming both GPUs.
    #[arg(long, requires = "machine")]
    pub allow_machine_mismatch: bool,
    /// The Nsight Compute executable, for .ncu-rep files (default: $NCU, then ncu on PATH).
    #[arg(long, value_name = "PATH")]
    pub ncu: Option<PathBuf>,
    /// With a torch.profiler trace: a second trace of the same program and steps, recorded with
    /// Kineto's CUPTI range profiler (per-kernel counters, no kernel times). Each launch it
    /// measured gets its counters (FLOPs per precision, bytes per level) and keeps its time from
    /// the trace imported; the two kernel sequences must agree by name (docs/pytorch.md).
    #[arg(long, value_name = "TRACE")]
    pub counters: Option<PathBuf>,
    /// Import a capture set that is incomplete (a file cut short, a broken row, or fewer
    /// launches than the others): the bundle is marked incomplete, with per-metric launch counts
    /// in its notes. Without it such a set is refused, naming the file and the line or the first
    /// launch missing. Nsight Compute CSV only.
    #[arg(long)]
    pub allow_partial: bool,
    /// Without --machine, the ceilings of this GPU of the catalogue (`datasheet:NAME`, NAME its
    /// id or product as `roofline catalogue` lists them), instead of the one matched to the
    /// device the input names; refused if it contradicts that device.
    #[arg(long, value_name = "datasheet:NAME", conflicts_with_all = ["machine", "no_datasheet"])]
    pub ceilings: Option<String>,
    /// Without --machine, no ceilings at all (by default the datasheet of the GPU the input
    /// names, from the catalogue, labelled as not measured).
    #[arg(long, conflicts_with = "machine")]
    pub no_datasheet: bool,
    /// With a torch.profiler trace of an LLM: the model's Hugging Face `config.json`, whose
    /// fields give the operators that do not record them their F and B (a mixture of experts'
    /// top-k, experts' width and weight format: vLLM's `moe_forward`; docs/pytorch.md).
    #[arg(long, value_name = "FILE")]
    pub model_config: Option<PathBuf>,
    /// The run's tensor parallelism (ranks), where the trace's distributedInfo does not say it
    /// (its world size is taken otherwise, no pipeline or data parallelism assumed).
    #[arg(long, value_name = "N")]
    pub tensor_parallel: Option<String>,
    /// The run's expert parallelism (ranks; none when not given).
    #[arg(long, value_name = "N")]
    pub expert_parallel: Option<String>,
}
