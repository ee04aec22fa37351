//! The import the page runs, step by step as `roofline import` takes it with `--machine`,
//! `--arch`, `--convention`, `--allow-partial` and `--allow-machine-mismatch` ([`Options`]; the
//! last one applies where the machine bundle is read): each input told apart by its first bytes ([`roofline_import::input`]), a
//! torch.profiler trace streamed through the parser and imported kernel by kernel, or Nsight
//! Compute CSV captures joined, then assembled with the machine bundle, in the steps the CLI
//! takes too ([`roofline_import::pipeline`]), and written as `roofline_model::bundle::stream` writes
//! bundles.
//!
//! Pure: the inputs are handed as [`Input`]s (the worker reads the dropped files, the tests read
//! files), the bundle goes to any [`Write`]. Every refusal is a [`Failure`] whose words,
//! [`chain`]ed, are the CLI's for the same input.

use std::io::{self, BufRead, Write};

use roofline_import::assemble::{AssembleError, Machine};
use roofline_import::input::{self, Content};
use roofline_import::ncu::{Arch, Convention, NcuError};
use roofline_import::pipeline::{
    self, NcuBundle, NcuBundleError, NcuCaptures, NcuOptions, PickError, TraceStream,
    TraceStreamError,
};
use roofline_import::trace::{self, TraceError, import::ImportError};
use roofline_model::ReadError;
use roofline_model::bundle::Provenance;
use roofline_model::bundle::stream::{WriteError, Writer};

/// One input as the import reads it: a file dropped or picked, or a URL's body.
pub trait Input {
    /// Its name in messages and in the bundle's description.
    fn name(&self) -> &str;
    /// Up to [`input::HEAD`] bytes from its start, as stored.
    ///
    /// # Errors
    /// The reader's.
    fn raw_head(&mut self) -> io::Result<Vec<u8>>;
    /// Up to [`input::HEAD`] bytes from its start once gzip-decompressed (asked only of gzip),
    /// or why they cannot be had.
    ///
    /// # Errors
    /// The decompressor's, in words.
    fn decompressed_head(&mut self) -> Result<Vec<u8>, String>;
    /// Its text from the start, decompressed when it is gzip.
    ///
    /// # Errors
    /// The reader's.
    fn text(&mut self) -> io::Result<Box<dyn BufRead + '_>>;
    /// All its bytes, as stored (a CSV is read whole, never decompressed: as the CLI reads it).
    ///
    /// # Errors
    /// The reader's.
    fn bytes(&mut self) -> io::Result<Vec<u8>>;
}

/// What to import: the inputs (one trace, or the CSV captures of one run), the machine bundle
/// whose ceilings bound them (if any), and the bundle's provenance.
pub struct Request<I> {
    /// The inputs.
    pub inputs: Vec<I>,
    /// The machine bundle (`--machine`).
    pub machine: Option<Machine>,
    /// The bundle's provenance.
    pub provenance: Provenance,
    /// The import's options.
    pub options: Options,
}

/// `roofline import`'s options that change what an import makes, as the page passes them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Options {
    /// The architecture, when the inputs do not say (`--arch`).
    pub arch: Option<Arch>,
    /// How FLOPs and times are counted from counters (`--convention`), when given.
    pub convention: Option<Convention>,
    /// Import an incomplete capture set, marked incomplete (`--allow-partial`).
    pub allow_partial: bool,
}

/// The page's words for the options (from its URL or its form), as `roofline import` reads its
/// flags: `arch` a compute capability (`9.0`), `convention` `current` or `2020`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Words {
    /// `--arch`.
    pub arch: Option<String>,
    /// `--convention`.
    pub convention: Option<String>,
    /// `--allow-partial`.
    pub allow_partial: bool,
}

impl Words {
    /// The options these words give. A compute capability that is not in the metric table is
    /// refused here (the CLI uses the nearest documented one and says so on standard error,
    /// which the page does not have).
    ///
    /// # Errors
    /// [`Failure::Usage`] naming the option and the value.
    pub fn options(&self) -> Result<Options, Failure> {
        let arch = match self.arch() {
            None => None,
            Some(cc) => match Arch::from_compute_capability(cc) {
                Ok((a, None)) => Some(a),
                Ok((_, Some(note))) => {
                    return Err(Failure::Usage(format!(
                        "--arch {cc}: {note}; the page takes only the documented ones (7.0, 7.2, 7.5, 8.0, 8.6, 8.7, 8.9, 9.0, 10.x, 12.x): use `roofline import --arch {cc}`, which says so and goes on"
                    )));
                }
                Err(e) => return Err(Failure::Usage(format!("--arch {e}"))),
            },
        };
        let convention = match self.convention() {
            None => None,
            Some("current") => Some(Convention::Current),
            Some("2020") => Some(Convention::Study2020),
            Some(other) => {
                return Err(Failure::Usage(format!(
                    "--convention {other:?}: expected current or 2020"
                )));
            }
        };
        Ok(Options {
            arch,
            convention,
            allow_partial: self.allow_partial,
        })
    }

    fn arch(&self) -> Option<&str> {
        self.arch
            .as_deref()
            .map(str::trim)
            .filter(|a| !a.is_empty())
    }

    fn convention(&self) -> Option<&str> {
        self.convention
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
    }

    /// These options as `roofline import`'s flags, for the bundle's provenance.
    pub fn flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(a) = self.arch() {
            out.extend(["--arch".to_string(), a.to_string()]);
        }
        if let Some(c) = self.convention() {
            out.extend(["--convention".to_string(), c.to_string()]);
        }
        if self.allow_partial {
            out.push("--allow-partial".to_string());
        }
        out
    }
}

/// What an import wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Launches imported.
    pub launches: u64,
    /// Kernel entries written.
    pub entries: usize,
}

/// Why an import failed: the CLI's error for the same input, in the same words (see
/// `collector/src/error.rs`).
#[derive(Debug, thiserror::Error)]
pub enum Failure {
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
    Import(#[source] NcuError),
    /// Nothing was imported.
    #[error("no kernel launch {0}")]
    NoKernels(String),
    /// Inputs that cannot be imported together, or a machine bundle without a machine.
    #[error("invalid arguments: {0}")]
    Usage(String),
    /// The machine bundle describes another GPU.
    #[error(transparent)]
    MachineMismatch(AssembleError),
    /// The bundle would hold impossible figures (a bug upstream; nothing is kept).
    #[error("refusing to write {name}: the bundle holds impossible figures")]
    InvalidOutput {
        /// The bundle.
        name: String,
        /// What is wrong.
        #[source]
        source: ReadError,
    },
    /// The bundle could not be written.
    #[error("cannot write {name}")]
    Write {
        /// The bundle.
        name: String,
        /// Why.
        #[source]
        source: io::Error,
    },
}

impl From<AssembleError> for Failure {
    fn from(e: AssembleError) -> Self {
        match e {
            e @ AssembleError::MachineMismatch { .. } => Failure::MachineMismatch(e),
            e => Failure::Usage(e.to_string()),
        }
    }
}

/// An error with its causes, `a: b: c`: the CLI's `error: …` line without `error: `.
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

/// What the bundle is called in messages about writing it.
const OUTPUT: &str = "the bundle";

fn read_failure(name: &str, what: impl Into<String>) -> Failure {
    Failure::ReadFile {
        name: name.to_string(),
        source: io::Error::new(io::ErrorKind::InvalidData, what.into()),
    }
}

fn write_failure(e: WriteError) -> Failure {
    match e {
        WriteError::Invalid(source) => Failure::InvalidOutput {
            name: OUTPUT.into(),
            source,
        },
        WriteError::Io(source) => Failure::Write {
            name: OUTPUT.into(),
            source,
        },
        e @ WriteError::ShellChanged => Failure::Write {
            name: OUTPUT.into(),
            source: io::Error::other(e.to_string()),
        },
    }
}

/// Whether an input is an Nsight Compute report (binary, read only by Nsight Compute).
fn is_report(name: &str) -> bool {
    name.ends_with(".ncu-rep")
}

/// What an input is ([`input::classify`]), or the CLI's refusal.
fn classify(f: &mut impl Input) -> Result<Content, Failure> {
    let name = f.name().to_string();
    let raw = f.raw_head().map_err(|source| Failure::ReadFile {
        name: name.clone(),
        source,
    })?;
    input::classify(&raw, || f.decompressed_head()).map_err(|what| read_failure(&name, what))
}

/// Imports `req` into a bundle written to `out`; `progress` hears of each kernel entry made, with
/// the trace's kernel events (or the CSV's launches) in all.
///
/// # Errors
/// [`Failure`], as the CLI's `roofline import` fails on the same inputs.
pub fn run<I: Input, W: Write>(
    req: Request<I>,
    out: W,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Outcome, Failure> {
    let Request {
        mut inputs,
        machine,
        provenance,
        options,
    } = req;
    let trace_at = pipeline::pick_trace(
        &mut inputs,
        |f| Ok(!is_report(f.name()) && classify(f)? == Content::Trace),
        |f| f.name().to_string(),
    )
    .map_err(|e| match e {
        PickError::Input(e) => e,
        PickError::NotAlone(what) => Failure::Usage(what),
    })?;
    if let Some(i) = trace_at {
        let f = inputs.swap_remove(i);
        if options.allow_partial {
            return Err(Failure::Usage(pipeline::partial_with_trace(f.name())));
        }
        return import_trace(f, machine, provenance, options, out, progress);
    }
    import_csv(inputs, machine, provenance, options, out)
}

/// Nsight Compute CSV captures of one run into a bundle.
fn import_csv<I: Input, W: Write>(
    inputs: Vec<I>,
    machine: Option<Machine>,
    provenance: Provenance,
    options: Options,
    out: W,
) -> Result<Outcome, Failure> {
    let mut captures = NcuCaptures::new();
    for mut f in inputs {
        let name = f.name().to_string();
        if is_report(&name) {
            return Err(read_failure(
                &name,
                format!(
                    "an Nsight Compute report is read by Nsight Compute, which the browser does not have: export its raw page as CSV (`ncu --import {name} --csv --page raw --print-units base > {name}.csv`) and open that, or import it with `roofline import {name}` where Nsight Compute is installed"
                ),
            ));
        }
        let bytes = f.bytes().map_err(|source| Failure::ReadFile {
            name: name.clone(),
            source,
        })?;
        let text = input::utf8_text(bytes).map_err(|what| read_failure(&name, what))?;
        captures.add(&name, &text).map_err(Failure::Import)?;
    }
    let NcuBundle { bundle, launches } = captures
        .bundle(
            NcuOptions {
                allow_partial: options.allow_partial,
                convention: options.convention.unwrap_or_default(),
                arch: options.arch,
            },
            machine,
            provenance,
        )
        .map_err(|e| match e {
            NcuBundleError::Import(e) => Failure::Import(e),
            NcuBundleError::NoLaunches => Failure::NoKernels("in the given files".into()),
            NcuBundleError::Assemble(e) => Failure::from(e),
        })?;
    roofline_model::bundle::stream::write(&bundle, || Ok(out), write_failure)?;
    Ok(Outcome {
        launches,
        entries: bundle.kernels.len(),
    })
}

/// A torch.profiler trace into a bundle, each kernel entry written as it is made.
fn import_trace<I: Input, W: Write>(
    mut f: I,
    machine: Option<Machine>,
    provenance: Provenance,
    options: Options,
    out: W,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Outcome, Failure> {
    let name = f.name().to_string();
    let text = f
        .text()
        .and_then(input::without_bom)
        .map_err(|source| Failure::ReadFile {
            name: name.clone(),
            source,
        })?;
    let t = trace::parse(text).map_err(|source| Failure::Trace {
        name: name.clone(),
        source: Box::new(source),
    })?;
    if let Some(refusal) = pipeline::counter_options_unused(
        &t,
        &name,
        None,
        false,
        (options.arch.is_some(), options.convention.is_some()),
    ) {
        return Err(Failure::Usage(refusal));
    }
    let opts = trace::ImportOptions {
        convention: options.convention.unwrap_or_default(),
        arch: options
            .arch
            .or_else(|| machine.as_ref().and_then(Machine::arch)),
    };
    let stream = TraceStream::new(&t, machine, provenance, &name, None)?;
    let mut w = Writer::begin(out, stream.shell()).map_err(write_failure)?;
    let total = t.kernels.len().max(t.ranges.len());
    let mut entries = 0usize;
    let done = stream
        .run(&t, None, &opts, |k| {
            entries += 1;
            if entries.is_multiple_of(4096) {
                progress(entries, total);
            }
            w.kernel(k)
        })
        .map_err(|e| match e {
            TraceStreamError::Sink(e) => write_failure(e),
            TraceStreamError::Import(source) => Failure::TraceImport {
                name: name.clone(),
                source: Box::new(source),
            },
        })?;
    w.finish(&done.shell).map_err(write_failure)?;
    Ok(Outcome {
        launches: done.launches,
        entries: done.entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An input held in memory (gzip not decompressed: these tests give plain text).
    struct Bytes(&'static str, Vec<u8>);

    impl Input for Bytes {
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
    }

    fn run_on(inputs: Vec<Bytes>) -> Result<String, String> {
        run_with(inputs, Options::default())
    }

    fn run_with(inputs: Vec<Bytes>, options: Options) -> Result<String, String> {
        let mut out = Vec::new();
        let req = Request {
            inputs,
            machine: None,
            provenance: Provenance::default(),
            options,
        };
        run(req, &mut out, &mut |_, _| ())
            .map(|_| String::from_utf8(out).unwrap())
            .map_err(|e| chain(&e))
    }

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
                "invalid arguments: a.json is a torch.profiler trace: import one trace at a time"
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
        let text = br#"{"deviceProperties": [{"id": 0, "name": "SYNTHETIC GPU", "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
          "traceEvents": [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 2, "args": {"correlation": 7}},
            {"ph": "X", "cat": "kernel", "name": "synthetic_sgemm", "pid": 0, "tid": 7, "ts": 20, "dur": 5, "args": {"correlation": 7, "device": 0}}
          ]}"#;
        let json = run_on(vec![Bytes("t.json", text.to_vec())]).unwrap();
        let b = roofline_model::parse_bundle(&json).unwrap();
        assert_eq!(b.kernels.len(), 1);
        assert_eq!(
            b.description.as_deref(),
            Some("imported from a torch.profiler trace: t.json")
        );
        assert!(
            b.notes
                .last()
                .unwrap()
                .starts_with("no machine characterization")
        );
        assert_eq!(roofline_model::to_json(&b).unwrap(), json);
    }

    /// The options' words read as `roofline import` reads its flags; unknown ones refused with
    /// the option named.
    #[test]
    fn option_words_read_as_the_clis_flags() {
        let w = Words {
            arch: Some(" 9.0 ".into()),
            convention: Some("2020".into()),
            allow_partial: true,
        };
        let o = w.options().unwrap();
        assert_eq!(o.arch, Some(Arch::Hopper));
        assert_eq!(o.convention, Some(Convention::Study2020));
        assert!(o.allow_partial);
        assert_eq!(
            w.flags(),
            ["--arch", "9.0", "--convention", "2020", "--allow-partial"]
        );
        assert_eq!(Words::default().options().unwrap(), Options::default());
        assert!(Words::default().flags().is_empty());
        let e = |w: Words| chain(&w.options().unwrap_err());
        assert_eq!(
            e(Words {
                convention: Some("2021".into()),
                ..Words::default()
            }),
            "invalid arguments: --convention \"2021\": expected current or 2020"
        );
        assert!(
            e(Words {
                arch: Some("nine".into()),
                ..Words::default()
            })
            .starts_with("invalid arguments: --arch \"nine\" is not a compute capability"),
        );
        assert!(
            e(Words {
                arch: Some("6.1".into()),
                ..Words::default()
            })
            .contains("compute capability 6.1 is not in the metric table"),
        );
    }

    /// Options that do not apply to a trace are refused in the CLI's words.
    #[test]
    fn trace_options_refused_as_the_cli_refuses_them() {
        let text = br#"{"traceEvents": [
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 20, "dur": 5, "args": {"correlation": 7, "device": 0}}
          ]}"#;
        let with = |o: Options| run_with(vec![Bytes("t.json", text.to_vec())], o).unwrap_err();
        assert_eq!(
            with(Options {
                allow_partial: true,
                ..Options::default()
            }),
            "invalid arguments: --allow-partial applies to Nsight Compute capture sets; t.json is a torch.profiler trace"
        );
        assert_eq!(
            with(Options {
                convention: Some(Convention::Study2020),
                ..Options::default()
            }),
            "invalid arguments: --convention applies to counters (Nsight Compute's, or a trace's cuda_profiler_range events), and t.json has none; leave it out"
        );
    }
}
