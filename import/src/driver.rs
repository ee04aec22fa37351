//! The one import driver: what `roofline import` does and the page's import worker does, in one
//! place. A [`Request`] names the inputs (each an [`Input`]: a file for the CLI, a `Blob` in the
//! worker), the machine bundle, the provenance and the [`ImportOptions`]; [`run`] tells each
//! input apart by its first bytes, imports the one torch.profiler trace (joined with a
//! range-profiler trace's counters where given) kernel by kernel, or joins the Nsight Compute
//! CSV captures of one run, places the kernels against the machine and hands the bundle to a
//! [`Sink`] (the CLI's atomic file, the worker's stream to the page). Every refusal is typed
//! ([`Failure`], [`Refusal`]); its words are the ones both front ends show.
//!
//! Pure: the front ends do the reading and writing behind [`Input`] and [`Sink`].
//!
//! Architecture invariant: the CLI and the worker keep only their I/O and their words; the
//! sequence of an import (pick, classify, options, refusals, stream) is here alone.

use std::io::{self, BufRead, Read};

use roofline_model::bundle::options::{Datasheet, ImportOptions};
use roofline_model::bundle::{Bundle, Kernel, Provenance};

use crate::assemble::{AssembleError, Machine};
use crate::datasheet;
use crate::input::{self, Content};
use crate::ncu::{Arch, NcuError};
use crate::operators::ModelConfig;
use crate::pipeline::{
    self, NcuBundle, NcuBundleError, NcuCaptures, NcuOptions, TraceStream, TraceStreamError,
};
use crate::trace::comm::CommOptions;
use crate::trace::{self, TraceError, import::ImportError};

/// One input as the import reads it: a file, a dropped `Blob`, a URL's body.
pub trait Input {
    /// The caller's error where it converts a report or fails otherwise than by reading.
    type Error;

    /// Its name in messages and in the bundle's description.
    fn name(&self) -> &str;

    /// Whether it is an Nsight Compute report (binary, read only by Nsight Compute; never
    /// classified by its bytes).
    fn is_report(&self) -> bool {
        self.name().ends_with(".ncu-rep")
    }

    /// Up to [`input::HEAD`] bytes from its start, as stored.
    ///
    /// # Errors
    /// The reader's.
    fn raw_head(&mut self) -> io::Result<Vec<u8>>;

    /// Up to [`input::HEAD`] bytes from its start once gzip-decompressed (asked only of gzip),
    /// or why they cannot be had, in words.
    ///
    /// # Errors
    /// The decompressor's.
    fn decompressed_head(&mut self) -> Result<Vec<u8>, String>;

    /// Its text from the start, decompressed when it is gzip.
    ///
    /// # Errors
    /// The reader's.
    fn text(&mut self) -> io::Result<Box<dyn BufRead + '_>>;

    /// All its bytes, as stored (a CSV is read whole and never decompressed).
    ///
    /// # Errors
    /// The reader's.
    fn bytes(&mut self) -> io::Result<Vec<u8>>;

    /// For a report, its raw page as CSV text (Nsight Compute exports it), or `None` where no
    /// Nsight Compute can be run (the page).
    ///
    /// # Errors
    /// The caller's, when Nsight Compute is missing or fails.
    fn report_csv(&mut self) -> Option<Result<String, Self::Error>>;
}

/// Where the bundle goes: whole (Nsight Compute captures) or streamed kernel by kernel (a
/// trace: its shell first, each kernel, then the shell with its final notes).
pub trait Sink {
    /// The sink's error.
    type Error;

    /// A whole bundle.
    ///
    /// # Errors
    /// The sink's.
    fn bundle(&mut self, b: &Bundle) -> Result<(), Self::Error>;

    /// A streamed bundle begins with this shell (everything but its kernels).
    ///
    /// # Errors
    /// The sink's.
    fn begin(&mut self, shell: &Bundle) -> Result<(), Self::Error>;

    /// The next kernel entry of a streamed bundle.
    ///
    /// # Errors
    /// The sink's.
    fn kernel(&mut self, k: &Kernel) -> Result<(), Self::Error>;

    /// A streamed bundle ends, with its final shell (the import's notes).
    ///
    /// # Errors
    /// The sink's.
    fn finish(&mut self, shell: &Bundle) -> Result<(), Self::Error>;
}

/// What to import.
pub struct Request<I> {
    /// The inputs: one torch.profiler trace, or the Nsight Compute CSV captures (or reports) of
    /// one run.
    pub inputs: Vec<I>,
    /// `--counters`: a range-profiler trace whose counters join the trace's launches.
    pub counters: Option<I>,
    /// `--model-config`: the model's Hugging Face `config.json`, read for the operators that do
    /// not record what their F and B need (a mixture of experts' top-k and width).
    pub model_config: Option<I>,
    /// The machine bundle whose ceilings bound the kernels (`--machine`), read with
    /// `options.allow_machine_mismatch`.
    pub machine: Option<Machine>,
    /// The bundle's provenance.
    pub provenance: Provenance,
    /// The options.
    pub options: ImportOptions,
    /// Whether the front end has `--counters` (the CLI does, the page not): refusals mention
    /// it only then.
    pub counters_option: bool,
}

/// What an import made.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The bundle's shell (with its notes; the kernels went to the sink).
    pub shell: Bundle,
    /// Launches imported.
    pub launches: u64,
    /// Kernel entries written.
    pub entries: usize,
    /// The rank a trace records (`distributedInfo.rank`).
    pub rank: Option<String>,
}

/// An import refused for its arguments (the CLI's "invalid arguments: …").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A trace came with other inputs.
    #[error(
        "{trace} is a torch.profiler trace: import it alone, or several traces alone (one per rank of a run)"
    )]
    TraceNotAlone {
        /// The trace.
        trace: String,
    },
    /// An option that does not apply to what is imported, in words.
    #[error("{0}")]
    Option(String),
    /// `--counters` with no trace to join.
    #[error(
        "--counters {counters} joins a range-profiler trace with a torch.profiler trace, and none of the files given is one"
    )]
    CountersWithoutTrace {
        /// The counter trace.
        counters: String,
    },
    /// `--counters` that is not a trace.
    #[error("--counters {counters}: not a torch.profiler trace (JSON, gzip or not)")]
    CountersNotTrace {
        /// The input given.
        counters: String,
    },
    /// The machine bundle does not fit (no machine in it, or not the device's).
    #[error("{0}")]
    Machine(String),
    /// The datasheet named by hand (`--ceilings datasheet:NAME`) is not the catalogue's, or
    /// not the GPU the input names.
    #[error("--ceilings: {0}")]
    Ceilings(String),
    /// `--arch` contradicts the compute capability the input names.
    #[error("{0}")]
    Arch(String),
    /// `--counters` recorded on another GPU than the trace it joins.
    #[error("{0}")]
    CountersOfAnotherGpu(String),
    /// `--model-config` that is not a model configuration.
    #[error("--model-config {name}: {why}")]
    ModelConfig {
        /// The file given.
        name: String,
        /// What is wrong with it.
        why: String,
    },
}

/// Why an import failed: typed, in the words the CLI and the page both show.
#[derive(Debug, thiserror::Error)]
pub enum Failure<E> {
    /// An input could not be read, or is not what either importer reads.
    #[error("cannot read {name}")]
    ReadFile {
        /// The input.
        name: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A torch.profiler trace could not be read.
    #[error("{name} is not a readable torch.profiler trace")]
    Trace {
        /// The input.
        name: String,
        /// What is wrong, and where.
        #[source]
        source: Box<TraceError>,
    },
    /// A torch.profiler trace held nothing to import.
    #[error("cannot import the torch.profiler trace {name}")]
    TraceImport {
        /// The input.
        name: String,
        /// Why.
        #[source]
        source: Box<ImportError>,
    },
    /// Nsight Compute output could not be read.
    #[error("cannot import the Nsight Compute output")]
    Ncu(#[source] NcuError),
    /// Nothing was imported.
    #[error("no kernel launch {0}")]
    NoKernels(String),
    /// Arguments that cannot go together.
    #[error("invalid arguments: {0}")]
    Refused(Refusal),
    /// The machine bundle describes another GPU.
    #[error(transparent)]
    MachineMismatch(AssembleError),
    /// The caller's error (a report Nsight Compute could not export, a sink that failed).
    #[error(transparent)]
    Caller(E),
}

impl<E> From<AssembleError> for Failure<E> {
    fn from(e: AssembleError) -> Self {
        match e {
            e @ (AssembleError::MachineMismatch { .. } | AssembleError::ArchMismatch { .. }) => {
                Failure::MachineMismatch(e)
            }
            e => Failure::Refused(Refusal::Machine(e.to_string())),
        }
    }
}

/// An error with its causes, `a: b: c` (the CLI's `error: …` line without `error: `).
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

fn read_failure<E>(name: &str, what: impl Into<String>) -> Failure<E> {
    Failure::ReadFile {
        name: name.to_string(),
        source: io::Error::new(io::ErrorKind::InvalidData, what.into()),
    }
}

fn read_error<E>(name: &str) -> impl FnOnce(io::Error) -> Failure<E> + '_ {
    move |source| Failure::ReadFile {
        name: name.to_string(),
        source,
    }
}

/// What an input is ([`input::classify`]), or the refusal naming it.
fn classify<I: Input>(f: &mut I) -> Result<Content, Failure<I::Error>> {
    let name = f.name().to_string();
    let raw = f.raw_head().map_err(read_error(&name))?;
    input::classify(&raw, || f.decompressed_head()).map_err(|what| read_failure(&name, what))
}

/// Whether every input is a torch.profiler trace (recognised by its content; never a report):
/// what a run of several ranks is imported from, each alone, then joined
/// ([`crate::ranks::RankJoin`]).
///
/// # Errors
/// An input that cannot be read, in the words [`run`] would use.
pub fn all_traces<I: Input>(inputs: &mut [I]) -> Result<bool, Failure<I::Error>> {
    for f in inputs.iter_mut() {
        if f.is_report() || classify(f)? != Content::Trace {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A trace parsed from an input.
fn parse_trace<I: Input>(f: &mut I) -> Result<trace::Trace, Failure<I::Error>> {
    let name = f.name().to_string();
    let text = f
        .text()
        .and_then(input::without_bom)
        .map_err(read_error(&name))?;
    trace::parse(text).map_err(|source| Failure::Trace {
        name,
        source: Box::new(source),
    })
}

/// How inputs opened together are imported: each torch.profiler trace alone, the other inputs
/// (Nsight Compute CSV captures, reports) together as the captures of one run, and an input that
/// neither importer reads alone, so that its import says why. Indices into `inputs`: the traces
/// and unreadable inputs in their order, then the captures.
pub fn groups<I: Input>(inputs: &mut [I]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut captures = Vec::new();
    for (i, f) in inputs.iter_mut().enumerate() {
        if f.is_report() || matches!(classify(f), Ok(Content::Text)) {
            captures.push(i);
        } else {
            out.push(vec![i]);
        }
    }
    if !captures.is_empty() {
        out.push(captures);
    }
    out
}

/// The architecture the options give (their compute capability's metric table).
fn arch_of(options: &ImportOptions) -> Option<Arch> {
    options.arch.map(|cc| Arch::of(cc).0)
}

/// Imports `req` into `sink`; `progress` hears of each 4,096th kernel entry made, with the
/// trace's kernel events (or ranges) in all.
///
/// # Errors
/// [`Failure`], in the words the CLI and the page show.
pub fn run<I, S>(
    req: Request<I>,
    sink: &mut S,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Outcome, Failure<I::Error>>
where
    I: Input,
    S: Sink<Error = I::Error>,
{
    let Request {
        mut inputs,
        counters,
        model_config,
        machine,
        provenance,
        options,
        counters_option,
    } = req;
    // `--arch` names the input's GPU: a machine of another one is refused as one would be.
    let mut notes = Vec::new();
    if let (Some(cc), Some(m)) = (options.arch, &machine) {
        notes.extend(m.check_arch(cc)?);
    }
    // A trace is recognised by its content (JSON, gzip or not); reports go to Nsight Compute.
    let mut trace_at = None;
    for (i, f) in inputs.iter_mut().enumerate() {
        if !f.is_report() && classify(f)? == Content::Trace {
            trace_at = Some(i);
            break;
        }
    }
    if let Some(i) = trace_at {
        if inputs.len() != 1 {
            return Err(Failure::Refused(Refusal::TraceNotAlone {
                trace: inputs[i].name().to_string(),
            }));
        }
        let f = inputs.swap_remove(i);
        return import_trace(
            f,
            (counters, model_config),
            (machine, notes),
            provenance,
            &options,
            counters_option,
            sink,
            progress,
        );
    }
    if let Some(c) = counters {
        return Err(Failure::Refused(Refusal::CountersWithoutTrace {
            counters: c.name().to_string(),
        }));
    }
    if model_config.is_some()
        || options.tensor_parallel.is_some()
        || options.expert_parallel.is_some()
    {
        return Err(Failure::Refused(Refusal::Option(
            "--model-config, --tensor-parallel and --expert-parallel apply to a torch.profiler trace's operators, and none of the files given is a trace".into(),
        )));
    }
    import_captures(inputs, (machine, notes), provenance, &options, sink)
}

/// The model configuration `--model-config` names, read (its text, gzip or not) and parsed.
fn read_model_config<I: Input>(f: &mut I) -> Result<ModelConfig, Failure<I::Error>> {
    let name = f.name().to_string();
    let mut text = String::new();
    f.text()
        .and_then(|mut r| r.read_to_string(&mut text))
        .map_err(read_error(&name))?;
    ModelConfig::from_json(&text).map_err(|e| {
        Failure::Refused(Refusal::ModelConfig {
            name,
            why: e.to_string(),
        })
    })
}

/// Nsight Compute CSV captures (or reports) of one run into a bundle, handed whole to `sink`.
fn import_captures<I, S>(
    inputs: Vec<I>,
    (machine, notes): (Option<Machine>, Vec<String>),
    provenance: Provenance,
    options: &ImportOptions,
    sink: &mut S,
) -> Result<Outcome, Failure<I::Error>>
where
    I: Input,
    S: Sink<Error = I::Error>,
{
    let mut captures = NcuCaptures::new();
    for mut f in inputs {
        let name = f.name().to_string();
        let text = if f.is_report() {
            match f.report_csv() {
                Some(csv) => csv.map_err(Failure::Caller)?,
                None => {
                    return Err(read_failure(
                        &name,
                        format!(
                            "an Nsight Compute report is read by Nsight Compute, which the browser does not have: export its raw page as CSV (`ncu --import {name} --csv --page raw --print-units base > {name}.csv`) and open that, or import it with `roofline import {name}` where Nsight Compute is installed"
                        ),
                    ));
                }
            }
        } else {
            let bytes = f.bytes().map_err(read_error(&name))?;
            input::utf8_text(bytes).map_err(|what| read_failure(&name, what))?
        };
        captures.add(&name, &text).map_err(Failure::Ncu)?;
    }
    let NcuBundle {
        mut bundle,
        launches,
    } = captures
        .bundle(
            &NcuOptions {
                allow_partial: options.allow_partial,
                convention: options.convention.unwrap_or_default(),
                arch: arch_of(options),
                compute_capability: options.arch,
                datasheet: options.datasheet.clone(),
            },
            machine,
            provenance,
        )
        .map_err(|e| match e {
            NcuBundleError::Import(e) => Failure::Ncu(e),
            NcuBundleError::NoLaunches => Failure::NoKernels("in the given files".into()),
            NcuBundleError::Assemble(e) => Failure::from(e),
            NcuBundleError::Datasheet(e) => Failure::Refused(Refusal::Ceilings(e.to_string())),
            NcuBundleError::Arch(e) => Failure::Refused(Refusal::Arch(e)),
        })?;
    bundle.notes.extend(notes);
    sink.bundle(&bundle).map_err(Failure::Caller)?;
    let entries = bundle.kernels.len();
    let mut shell = bundle;
    shell.kernels.clear();
    Ok(Outcome {
        shell,
        launches,
        entries,
        rank: None,
    })
}

/// A torch.profiler trace (with a range-profiler trace's counters joined, where given) into a
/// bundle, each kernel entry handed to `sink` as it is made.
#[allow(clippy::too_many_arguments)]
fn import_trace<I, S>(
    mut f: I,
    (counters, model_config): (Option<I>, Option<I>),
    (machine, mut notes): (Option<Machine>, Vec<String>),
    provenance: Provenance,
    options: &ImportOptions,
    counters_option: bool,
    sink: &mut S,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Outcome, Failure<I::Error>>
where
    I: Input,
    S: Sink<Error = I::Error>,
{
    let name = f.name().to_string();
    if options.allow_partial {
        return Err(Failure::Refused(Refusal::Option(
            pipeline::partial_with_trace(&name),
        )));
    }
    let t = parse_trace(&mut f)?;
    let ct = match counters {
        Some(mut c) => {
            if classify(&mut c)? != Content::Trace {
                return Err(Failure::Refused(Refusal::CountersNotTrace {
                    counters: c.name().to_string(),
                }));
            }
            Some((c.name().to_string(), parse_trace(&mut c)?))
        }
        None => None,
    };
    if let Some(refusal) = pipeline::counter_options_unused(
        &t,
        &name,
        ct.as_ref().map(|c| &c.1),
        counters_option,
        (options.arch.is_some(), options.convention.is_some()),
    ) {
        return Err(Failure::Refused(Refusal::Option(refusal)));
    }
    if let Some((c_name, c)) = &ct
        && let Some(refusal) = pipeline::counters_of_another_gpu(&t, &name, c, c_name)
    {
        return Err(Failure::Refused(Refusal::CountersOfAnotherGpu(refusal)));
    }
    if let Some(cc) = options.arch {
        // The devices whose counters are read: the counter trace's and the timing trace's
        // (whose compute capability stands in for a range's), or the trace's own ranges'.
        let mut devices: Vec<(String, roofline_model::bundle::Device)> = trace::launch_devices(&t)
            .into_iter()
            .map(|d| (name.clone(), d))
            .collect();
        if let Some((c_name, c)) = &ct {
            devices.extend(
                trace::launch_devices(c)
                    .into_iter()
                    .map(|d| (c_name.clone(), d)),
            );
        }
        let named = devices.iter().filter_map(|(input, d)| {
            let whose = if ct.is_some() {
                format!("{input}'s ")
            } else {
                String::new()
            };
            Some((
                format!("{whose}device {}, {}", d.id, d.name),
                d.compute_capability.clone()?,
            ))
        });
        let inputs = match &ct {
            Some((c_name, _)) => std::borrow::Cow::Owned(format!("{name} and {c_name}")),
            None => std::borrow::Cow::Borrowed(name.as_str()),
        };
        if let Some(refusal) = pipeline::arch_contradicts(cc, &inputs, named) {
            return Err(Failure::Refused(Refusal::Arch(refusal)));
        }
        let named = devices.iter().any(|(_, d)| d.compute_capability.is_some());
        notes.push(pipeline::arch_note(cc, named));
    }
    let model = match model_config {
        Some(mut m) => Some(read_model_config(&mut m)?),
        None => None,
    };
    let system = options
        .system
        .as_deref()
        .map(|n| datasheet::named_system(roofline_catalogue::Catalogue::get(), n))
        .transpose()
        .map_err(|e| Failure::Refused(Refusal::Option(e.to_string())))?;
    // Counters are read for the architecture given, else the machine's.
    let opts = trace::ImportOptions {
        convention: options.convention.unwrap_or_default(),
        arch: arch_of(options).or_else(|| machine.as_ref().and_then(Machine::arch)),
        comm: CommOptions {
            group_size: options.group_size,
            gpus_per_node: options
                .gpus_per_node
                .or_else(|| system.map(|s| s.gpus_per_node)),
            gpus_per_node_from_system: options.gpus_per_node.is_none() && system.is_some(),
        },
        model,
        tensor_parallel: options.tensor_parallel,
        expert_parallel: options.expert_parallel,
    };
    let seen = datasheet::of_trace(&t, &trace::launch_devices(&t));
    // Without a measured machine, the datasheet of the GPU the trace names.
    let (machine, mut sheet_notes) = match machine {
        Some(m) => (Some(m), notes),
        None => {
            let launch = datasheet::launch_overhead(&t);
            let (m, mut sheet) =
                datasheet::machine(&seen, &options.datasheet, launch.as_ref().ok())
                    .map_err(|e| Failure::Refused(Refusal::Ceilings(e.to_string())))?;
            if let (Some(_), Err(why)) = (&m, launch) {
                sheet.push(why);
            }
            notes.extend(sheet);
            (m, notes)
        }
    };
    // The links the collectives run on: the system's, else the catalogue's for each GPU.
    let (machine, link_notes) = if options.datasheet == Datasheet::Off && system.is_none() {
        (machine, Vec::new())
    } else {
        datasheet::with_links(machine, &seen, system)
    };
    sheet_notes.extend(link_notes);
    let stream = TraceStream::with_notes(
        &t,
        machine,
        sheet_notes,
        provenance,
        &name,
        ct.as_ref().map(|c| c.0.as_str()),
    )?;
    sink.begin(stream.shell()).map_err(Failure::Caller)?;
    let total = t.kernels.len().max(t.ranges.len());
    let mut entries = 0usize;
    let done = stream
        .run(&t, ct.as_ref().map(|c| &c.1), &opts, |k| {
            entries += 1;
            if entries.is_multiple_of(4096) {
                progress(entries, total);
            }
            sink.kernel(k)
        })
        .map_err(|e| match e {
            TraceStreamError::Sink(e) => Failure::Caller(e),
            TraceStreamError::Import(source) => Failure::TraceImport {
                name: name.clone(),
                source: Box::new(source),
            },
        })?;
    sink.finish(&done.shell).map_err(Failure::Caller)?;
    Ok(Outcome {
        shell: done.shell,
        launches: done.launches,
        entries: done.entries,
        rank: t.rank,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_model::bundle::options::Convention;

    /// An input held in memory (plain text; a report when its name ends so).
    struct Bytes(&'static str, Vec<u8>);

    impl Input for Bytes {
        type Error = io::Error;
        fn name(&self) -> &str {
            self.0
        }
        fn raw_head(&mut self) -> io::Result<Vec<u8>> {
            Ok(self.1[..self.1.len().min(input::HEAD)].to_vec())
        }
        fn decompressed_head(&mut self) -> Result<Vec<u8>, String> {
            Err("not gzip".into())
        }
        fn text(&mut self) -> io::Result<Box<dyn BufRead + '_>> {
            Ok(Box::new(&self.1[..]))
        }
        fn bytes(&mut self) -> io::Result<Vec<u8>> {
            Ok(self.1.clone())
        }
        fn report_csv(&mut self) -> Option<Result<String, io::Error>> {
            None
        }
    }

    /// A sink that keeps the bundle as `roofline_model::bundle::stream` writes it.
    #[derive(Default)]
    struct Json {
        out: Vec<u8>,
        writer: Option<roofline_model::bundle::stream::Writer<Vec<u8>>>,
    }

    fn other(e: impl std::fmt::Display) -> io::Error {
        io::Error::other(e.to_string())
    }

    impl Sink for Json {
        type Error = io::Error;
        fn bundle(&mut self, b: &Bundle) -> io::Result<()> {
            self.out = roofline_model::to_json(b).map_err(other)?.into_bytes();
            Ok(())
        }
        fn begin(&mut self, shell: &Bundle) -> io::Result<()> {
            self.writer = Some(
                roofline_model::bundle::stream::Writer::begin(Vec::new(), shell).map_err(other)?,
            );
            Ok(())
        }
        fn kernel(&mut self, k: &Kernel) -> io::Result<()> {
            self.writer
                .as_mut()
                .ok_or_else(|| other("no begin"))?
                .kernel(k)
                .map_err(other)
        }
        fn finish(&mut self, shell: &Bundle) -> io::Result<()> {
            self.out = self
                .writer
                .take()
                .ok_or_else(|| other("no begin"))?
                .finish(shell)
                .map_err(other)?;
            Ok(())
        }
    }

    fn run_with(inputs: Vec<Bytes>, options: ImportOptions) -> Result<String, String> {
        let mut sink = Json::default();
        let req = Request {
            inputs,
            counters: None,
            model_config: None,
            machine: None,
            provenance: Provenance::default(),
            options,
            counters_option: false,
        };
        run(req, &mut sink, &mut |_, _| ())
            .map(|_| String::from_utf8(sink.out).unwrap())
            .map_err(|e| chain(&e))
    }

    fn run_on(inputs: Vec<Bytes>) -> Result<String, String> {
        run_with(inputs, ImportOptions::default())
    }

    const TRACE: &[u8] = br#"{"deviceProperties": [{"id": 0, "name": "SYNTHETIC GPU", "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
      "traceEvents": [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 2, "args": {"correlation": 7}},
        {"ph": "X", "cat": "kernel", "name": "synthetic_sgemm", "pid": 0, "tid": 7, "ts": 20, "dur": 5, "args": {"correlation": 7, "device": 0}}
      ]}"#;

    #[test]
    fn refusals_say_what_the_cli_says() {
        let e = run_on(vec![Bytes("empty.csv", Vec::new())]).unwrap_err();
        assert_eq!(
            e,
            "cannot read empty.csv: the file is empty (0 bytes): nothing to import"
        );
        let e = run_on(vec![
            Bytes("a.json", b"{\"traceEvents\": []}".to_vec()),
            Bytes("b.csv", b"x".to_vec()),
        ])
        .unwrap_err();
        assert!(
            e.starts_with(
                "invalid arguments: a.json is a torch.profiler trace: import it alone, or several traces alone"
            ),
            "{e}"
        );
        let e = run_on(vec![Bytes("r.ncu-rep", b"\x00".to_vec())]).unwrap_err();
        assert!(e.contains("export its raw page as CSV"), "{e}");
        let e = run_on(vec![Bytes("t.json", b"{\"traceEvents\": [}".to_vec())]).unwrap_err();
        assert!(
            e.starts_with("t.json is not a readable torch.profiler trace: line 1"),
            "{e}"
        );
    }

    #[test]
    fn a_trace_becomes_a_bundle_that_reads_back() {
        let json = run_on(vec![Bytes("t.json", TRACE.to_vec())]).unwrap();
        let b = roofline_model::parse_bundle(&json).unwrap();
        assert_eq!(b.kernels.len(), 1);
        assert_eq!(
            b.description.as_deref(),
            Some("imported from a torch.profiler trace: t.json")
        );
        // The placement's note, then the datasheet's: a made-up GPU is in no catalogue.
        let n = &b.notes;
        assert!(
            n[n.len() - 2].starts_with("no machine characterization")
                && n[n.len() - 1].starts_with("no datasheet ceilings for device 0"),
            "{n:?}"
        );
        assert_eq!(roofline_model::to_json(&b).unwrap(), json);
    }

    /// Options that do not apply to a trace are refused in the CLI's words; `--counters`
    /// without a trace too.
    #[test]
    fn trace_options_refused_as_the_cli_refuses_them() {
        let with = |o: ImportOptions| run_with(vec![Bytes("t.json", TRACE.to_vec())], o);
        assert_eq!(
            with(ImportOptions {
                allow_partial: true,
                ..ImportOptions::default()
            })
            .unwrap_err(),
            "invalid arguments: --allow-partial applies to Nsight Compute capture sets; t.json is a torch.profiler trace"
        );
        assert_eq!(
            with(ImportOptions {
                convention: Some(Convention::Study2020),
                ..ImportOptions::default()
            })
            .unwrap_err(),
            "invalid arguments: --convention applies to counters (Nsight Compute's, or a trace's cuda_profiler_range events), and t.json has none; leave it out"
        );
        let mut sink = Json::default();
        let req = Request {
            inputs: vec![Bytes("a.csv", b"x".to_vec())],
            counters: Some(Bytes("c.json", TRACE.to_vec())),
            model_config: None,
            machine: None,
            provenance: Provenance::default(),
            options: ImportOptions::default(),
            counters_option: true,
        };
        let e = chain(&run(req, &mut sink, &mut |_, _| ()).unwrap_err());
        assert_eq!(
            e,
            "invalid arguments: --counters c.json joins a range-profiler trace with a torch.profiler trace, and none of the files given is one"
        );
    }

    /// `--model-config` is read for a trace, refused when it is not a configuration, and, as
    /// the parallelism, refused without a trace.
    #[test]
    fn a_model_configuration_is_read_or_refused() {
        let run_cfg = |inputs: Vec<Bytes>, cfg: &'static [u8], options: ImportOptions| {
            let mut sink = Json::default();
            let req = Request {
                inputs,
                counters: None,
                model_config: Some(Bytes("config.json", cfg.to_vec())),
                machine: None,
                provenance: Provenance::default(),
                options,
                counters_option: true,
            };
            run(req, &mut sink, &mut |_, _| ()).map_err(|e| chain(&e))
        };
        let trace = || vec![Bytes("t.json", TRACE.to_vec())];
        let cfg = br#"{"hidden_size": 64, "num_local_experts": 4, "num_experts_per_tok": 2}"#;
        assert!(run_cfg(trace(), cfg, ImportOptions::default()).is_ok());
        assert_eq!(
            run_cfg(trace(), b"[]", ImportOptions::default()).unwrap_err(),
            "invalid arguments: --model-config config.json: not a model configuration: a Hugging Face config.json is a JSON object"
        );
        let e = run_cfg(
            vec![Bytes("a.csv", b"x".to_vec())],
            cfg,
            ImportOptions::default(),
        )
        .unwrap_err();
        assert!(
            e.contains("apply to a torch.profiler trace's operators"),
            "{e}"
        );
    }

    /// Traces are imported alone, CSV captures together, an unreadable input alone.
    #[test]
    fn inputs_are_grouped_into_imports() {
        let mut inputs = vec![
            Bytes("a.csv", b"\"ID\",x".to_vec()),
            Bytes("t.json", TRACE.to_vec()),
            Bytes("empty.csv", Vec::new()),
            Bytes("r.ncu-rep", b"\x00".to_vec()),
            Bytes("u.json", b"[]".to_vec()),
        ];
        assert_eq!(groups(&mut inputs), [vec![1], vec![2], vec![4], vec![0, 3]]);
        assert!(groups::<Bytes>(&mut []).is_empty());
    }

    /// Captures become one bundle, handed whole to the sink.
    #[test]
    fn captures_become_one_bundle() {
        let csv = "\"ID\",\"Kernel Name\",\"Device\",\"CC\",\"dram__bytes.sum\",\"gpu__time_duration.sum\"\n\
\"\",\"\",\"\",\"\",\"byte\",\"nsecond\"\n\
\"0\",\"gemm\",\"0\",\"9.0\",\"1000\",\"10\"\n";
        let json = run_on(vec![Bytes("a.csv", csv.as_bytes().to_vec())]).unwrap();
        let b = roofline_model::parse_bundle(&json).unwrap();
        assert_eq!(b.kernels.len(), 1);
        assert_eq!(
            b.description.as_deref(),
            Some("imported from Nsight Compute output: a.csv")
        );
    }
}
