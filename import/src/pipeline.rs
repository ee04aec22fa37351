//! The import driver's steps ([`crate::driver`]): Nsight Compute CSV captures parsed, joined and
//! assembled into a bundle ([`NcuCaptures`]); a trace imported kernel by kernel into a sink
//! ([`TraceStream`]); the refusals of options that do not apply ([`partial_with_trace`],
//! [`counter_options_unused`]).

use roofline_model::bundle::{Bundle, DataSource, Kernel, Provenance};

use roofline_model::bundle::options::{ComputeCapability, Datasheet};

use crate::assemble::{self, AssembleError, Machine, Placement};
use crate::datasheet::{self, DatasheetError};
use crate::ncu::{self, Arch, Capture, Convention, JoinOptions, NcuError};
use crate::trace::{self, Trace, import::ImportError};

/// `--allow-partial` with a torch.profiler trace: the refusal, in `roofline import`'s words
/// (the option reads Nsight Compute capture sets only).
pub fn partial_with_trace(trace: &str) -> String {
    format!(
        "--allow-partial applies to Nsight Compute capture sets; {trace} is a torch.profiler trace"
    )
}

/// `--arch` or `--convention` given for a trace `t` (`trace` its name) that has no counters,
/// nor has the range-profiler trace joined with it (`counters`, when given): the refusal,
/// naming the first option given, in `roofline import`'s words (which mention `--counters`
/// where the caller has that option: `counters_option`). Both options only change how counters
/// are read; a trace without any would import the same without them.
pub fn counter_options_unused(
    t: &Trace,
    trace: &str,
    counters: Option<&Trace>,
    counters_option: bool,
    (arch_given, convention_given): (bool, bool),
) -> Option<String> {
    if !t.ranges.is_empty() || counters.is_some_and(|c| !c.ranges.is_empty()) {
        return None;
    }
    let option = if arch_given {
        "--arch"
    } else if convention_given {
        "--convention"
    } else {
        return None;
    };
    Some(format!(
        "{option} applies to counters (Nsight Compute's, or a trace's cuda_profiler_range events), and {trace} has none{}; leave it out",
        if counters.is_none() && counters_option {
            " (nor was --counters given)"
        } else {
            ""
        }
    ))
}

/// `--arch` (`arch`) against the compute capabilities `input` names (each with what names it,
/// in words): the refusal where one differs, in `roofline import`'s words. An input's own
/// compute capability picks its metric table; `--arch` stands in only where it names none.
pub fn arch_contradicts(
    arch: ComputeCapability,
    input: &str,
    named: impl IntoIterator<Item = (String, String)>,
) -> Option<String> {
    named.into_iter().find_map(|(what, cc)| {
        let theirs = cc.trim().parse::<ComputeCapability>().ok()?;
        (theirs != arch).then(|| {
            format!(
                "--arch {arch} contradicts {input}, which names compute capability {theirs} ({what}): its counters are read with the metric table of the GPU it names; leave --arch out"
            )
        })
    })
}

/// The note a bundle whose counters were read with `--arch` carries: what it said, and whether
/// the input named the same compute capability or none.
pub fn arch_note(arch: ComputeCapability, input_names_it: bool) -> String {
    let table = Arch::of(arch).0.name();
    if input_names_it {
        format!(
            "--arch {arch} given, as the input names it: counters read with the {table} metric table"
        )
    } else {
        format!(
            "--arch {arch} given: the input names no compute capability, so its counters are read with the {table} metric table on the word of --arch"
        )
    }
}

/// `--counters` (`counters`, named `counters_name`) recorded on another GPU than the trace `t`
/// (named `trace`) whose launches it joins: the refusal naming both GPUs, device by device (the
/// join pairs ranges and launches of one device id), in `roofline import`'s words.
pub fn counters_of_another_gpu(
    t: &Trace,
    trace: &str,
    counters: &Trace,
    counters_name: &str,
) -> Option<String> {
    let timing = trace::launch_devices(t);
    trace::launch_devices(counters).into_iter().find_map(|c| {
        let x = timing.iter().find(|x| x.id == c.id)?;
        assemble::differs(x, &c).then(|| {
            format!(
                "--counters {counters_name} was recorded on {}, but the kernels of {trace} ran on {} (device {} in both): counters of another GPU would give its launches wrong FLOPs and bytes; record both traces on the same GPU",
                assemble::describe_gpu(&c),
                assemble::describe_gpu(x),
                c.id
            )
        })
    })
}

/// Why Nsight Compute captures gave no bundle.
#[derive(Debug)]
pub enum NcuBundleError {
    /// The captures could not be joined or read into kernels.
    Import(NcuError),
    /// They hold no kernel launch.
    NoLaunches,
    /// The machine bundle does not fit them.
    Assemble(AssembleError),
    /// The datasheet named by hand is not the catalogue's, or not their GPU's.
    Datasheet(DatasheetError),
    /// `--arch` contradicts the captures' `CC` column ([`arch_contradicts`]'s words).
    Arch(String),
}

/// How Nsight Compute captures are read into kernels (`roofline import`'s options; the viewer's
/// import worker takes the defaults).
#[derive(Debug, Clone, Default)]
pub struct NcuOptions {
    /// Import an incomplete capture set, marked incomplete (`--allow-partial`).
    pub allow_partial: bool,
    /// FLOP and time convention (`--convention`).
    pub convention: Convention,
    /// The architecture, when the inputs do not say (`--arch`); else the machine's stands in
    /// for a `CC` column the CSV lacks.
    pub arch: Option<Arch>,
    /// The compute capability `--arch` gave, which also tells the GPU catalogue what GPU
    /// captures without a device column ran on.
    pub compute_capability: Option<ComputeCapability>,
    /// Without a machine, where ceilings come from (`--ceilings`, `--no-datasheet`).
    pub datasheet: Datasheet,
}

/// A bundle made from Nsight Compute captures.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuBundle {
    /// The bundle, with its description.
    pub bundle: Bundle,
    /// Launches imported.
    pub launches: u64,
}

/// Nsight Compute CSV captures of one run, parsed as they are read ([`NcuCaptures::add`]), then
/// joined into one bundle ([`NcuCaptures::bundle`]).
#[derive(Debug, Default)]
pub struct NcuCaptures {
    captures: Vec<(String, Capture)>,
    notes: Vec<String>,
    names: Vec<String>,
}

impl NcuCaptures {
    /// No captures yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses one capture's text ([`ncu::parse_capture`]), named `name`, and keeps what it
    /// notes.
    ///
    /// # Errors
    /// [`ncu::parse_capture`]'s.
    pub fn add(&mut self, name: &str, text: &str) -> Result<(), NcuError> {
        let cap = ncu::parse_capture(text, name)?;
        self.notes.extend(cap.notes(name));
        self.captures.push((name.to_string(), cap));
        self.names.push(name.to_string());
        Ok(())
    }

    /// The captures joined ([`ncu::join_with`]), read into kernels ([`ncu::to_kernels`]) and
    /// assembled with the machine ([`assemble::assemble`]): the captures' notes, then the join's,
    /// the import's and the placement's; incomplete when the set was; described by its inputs'
    /// names.
    ///
    /// # Errors
    /// [`NcuBundleError`].
    pub fn bundle(
        self,
        opts: &NcuOptions,
        machine: Option<Machine>,
        provenance: Provenance,
    ) -> Result<NcuBundle, NcuBundleError> {
        let NcuCaptures {
            captures,
            mut notes,
            names,
        } = self;
        let joined = ncu::join_with(
            captures,
            JoinOptions {
                allow_partial: opts.allow_partial,
            },
        )
        .map_err(NcuBundleError::Import)?;
        let launches = joined.launches;
        if launches.is_empty() {
            return Err(NcuBundleError::NoLaunches);
        }
        notes.extend(joined.notes);
        if let Some(cc) = opts.compute_capability {
            let named = launches.iter().filter_map(|l| {
                let theirs = l.compute_capability.clone()?;
                let name = roofline_model::analysis::names::truncate(&l.name, 60);
                Some((format!("launch {} ({name})", l.id), theirs))
            });
            if let Some(refusal) = arch_contradicts(cc, &names.join(", "), named) {
                return Err(NcuBundleError::Arch(refusal));
            }
            let named = launches.iter().any(|l| l.compute_capability.is_some());
            notes.push(arch_note(cc, named));
        }
        // The machine's architecture, or that of the NVIDIA GPU named by `--ceilings
        // datasheet:NAME`, stands in for a `CC` column the CSV lacks, never overrides one.
        let named_cc = || match (&opts.datasheet, machine.is_none()) {
            (Datasheet::Named(n), true) => datasheet::named_compute_capability(n),
            _ => None,
        };
        let arch = opts.arch.or_else(|| {
            launches
                .iter()
                .all(|l| l.compute_capability.is_none())
                .then(|| {
                    machine
                        .as_ref()
                        .and_then(Machine::arch)
                        .or_else(|| named_cc().map(|cc| Arch::of(cc).0))
                })
                .flatten()
        });
        let import = ncu::ImportOptions {
            convention: opts.convention,
            arch,
            source: DataSource::Import,
        };
        let imported = ncu::to_kernels(&launches, &import).map_err(NcuBundleError::Import)?;
        if let Some((launches, first)) = &imported.left_out
            && !opts.allow_partial
        {
            return Err(NcuBundleError::Import(NcuError::Untimed {
                launches: *launches,
                first: Box::new(first.clone()),
            }));
        }
        let imported_complete = imported.complete;
        let kernel_launches = imported
            .kernels
            .iter()
            .map(|k| k.launches)
            .fold(0, u64::saturating_add);
        // Without a measured machine, the datasheet of the GPU the captures name.
        let (machine, sheet_notes) = match machine {
            Some(m) => (Some(m), Vec::new()),
            None => datasheet::machine(
                &datasheet::of_capture(&imported.devices, opts.compute_capability),
                &opts.datasheet,
                None,
            )
            .map_err(NcuBundleError::Datasheet)?,
        };
        let mut bundle = assemble::assemble(imported, machine, notes, provenance)
            .map_err(NcuBundleError::Assemble)?;
        bundle.notes.extend(sheet_notes);
        bundle.complete &= joined.complete && imported_complete;
        bundle.description = Some(assemble::ncu_description(&names));
        Ok(NcuBundle {
            bundle,
            launches: kernel_launches,
        })
    }
}

/// Why a trace's streamed import stopped.
#[derive(Debug)]
pub enum TraceStreamError<E> {
    /// The sink failed (the import stopped there).
    Sink(E),
    /// The trace held nothing to import.
    Import(ImportError),
}

/// A streamed trace import, done.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceStreamed {
    /// The bundle's shell with its final notes (the import's, then the placement's).
    pub shell: Bundle,
    /// Launches imported.
    pub launches: u64,
    /// Kernel entries handed to the sink.
    pub entries: usize,
}

/// A torch.profiler trace imported kernel by kernel ([`trace::import_each`]) into a sink, so
/// that its bundle is never held: [`TraceStream::new`] places the trace's devices against the
/// machine and gives the shell to begin the output with ([`TraceStream::shell`]);
/// [`TraceStream::run`] hands each kernel, placed, to the sink.
#[derive(Debug, Clone)]
pub struct TraceStream {
    placement: Placement,
    shell: Bundle,
    /// Notes the bundle ends with, after the placement's.
    extra: Vec<String>,
}

impl TraceStream {
    /// The placement of `trace`'s launch devices ([`trace::launch_devices`]) against the
    /// machine, and the shell described by the trace's name (and the counter trace's).
    ///
    /// # Errors
    /// As [`Placement::new`].
    pub fn new(
        trace: &Trace,
        machine: Option<Machine>,
        provenance: Provenance,
        trace_name: &str,
        counters_name: Option<&str>,
    ) -> Result<Self, AssembleError> {
        Self::with_notes(
            trace,
            machine,
            Vec::new(),
            provenance,
            trace_name,
            counters_name,
        )
    }

    /// [`TraceStream::new`], the bundle's notes ending with `extra` (the datasheet's).
    ///
    /// # Errors
    /// As [`Placement::new`].
    pub fn with_notes(
        trace: &Trace,
        machine: Option<Machine>,
        extra: Vec<String>,
        provenance: Provenance,
        trace_name: &str,
        counters_name: Option<&str>,
    ) -> Result<Self, AssembleError> {
        let placement = Placement::new(trace::launch_devices(trace), machine)?;
        let mut shell = placement.shell(Vec::new(), provenance);
        shell.description = Some(assemble::trace_description(trace_name, counters_name));
        // Ranges left out for want of a time: every total misses them.
        shell.complete = trace::import::untimed_ranges(trace) == 0;
        Ok(TraceStream {
            placement,
            shell,
            extra,
        })
    }

    /// The bundle's shell, everything but its kernels, as the output begins.
    pub fn shell(&self) -> &Bundle {
        &self.shell
    }

    /// Imports `trace` (with `counters`' counters joined), each kernel placed and handed to
    /// `sink`; the first error of the sink stops the import.
    ///
    /// # Errors
    /// [`TraceStreamError::Sink`], before anything the import says;
    /// [`TraceStreamError::Import`].
    pub fn run<E>(
        self,
        trace: &Trace,
        counters: Option<&Trace>,
        opts: &trace::ImportOptions,
        mut sink: impl FnMut(&Kernel) -> Result<(), E>,
    ) -> Result<TraceStreamed, TraceStreamError<E>> {
        let TraceStream {
            placement,
            mut shell,
            extra,
        } = self;
        let mut failed = None;
        let mut entries = 0usize;
        let summary = trace::import_each(trace, counters, opts, &mut |mut k: Kernel| {
            placement.place(&mut k);
            entries += 1;
            match sink(&k) {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        });
        if let Some(e) = failed {
            return Err(TraceStreamError::Sink(e));
        }
        let summary = summary.map_err(TraceStreamError::Import)?;
        // The import's notes first, then the placement's (as `assemble` orders them).
        let mut notes = summary.notes;
        notes.extend(placement.notes().iter().cloned());
        notes.extend(extra);
        shell.notes = notes;
        Ok(TraceStreamed {
            shell,
            launches: summary.stats.launches as u64,
            entries,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "\"ID\",\"Kernel Name\",\"Device\",\"CC\",\"Some New Column\",\"dram__bytes.sum\",\"gpu__time_duration.sum\"\n\
\"\",\"\",\"\",\"\",\"\",\"byte\",\"nsecond\"\n\
\"0\",\"gemm\",\"0\",\"9.0\",\"x\",\"1000\",\"10\"\n\
\"1\",\"copy\",\"0\",\"9.0\",\"x\",\"2000\",\"5\"\n";

    const TRACE: &str = r#"{"deviceProperties": [{"id": 0, "name": "SYNTHETIC GPU", "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
      "traceEvents": [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 2, "args": {"correlation": 7}},
        {"ph": "X", "cat": "kernel", "name": "synthetic_sgemm", "pid": 0, "tid": 7, "ts": 20, "dur": 5, "args": {"correlation": 7, "device": 0}}
      ]}"#;

    #[test]
    fn captures_become_one_described_bundle() {
        let mut c = NcuCaptures::new();
        c.add("a.csv", CSV).unwrap();
        let NcuBundle { bundle, launches } = c
            .bundle(&NcuOptions::default(), None, Provenance::default())
            .unwrap();
        assert_eq!(launches, 2);
        assert_eq!(bundle.kernels.len(), 2);
        assert!(bundle.complete);
        assert_eq!(
            bundle.description.as_deref(),
            Some("imported from Nsight Compute output: a.csv")
        );
        // The captures' notes first, the placement's last.
        assert!(
            bundle.notes[0].contains("Some New Column"),
            "{:?}",
            bundle.notes
        );
        // The placement's note, then the datasheet's: a made-up GPU is in no catalogue.
        let n = &bundle.notes;
        assert!(
            n[n.len() - 2].starts_with("no machine characterization")
                && n[n.len() - 1].starts_with("no datasheet ceilings for device 0"),
            "{n:?}"
        );
        assert!(NcuCaptures::new().add("e.csv", "nothing").is_err());
    }

    /// A range without a time counter is left out: the bundle says so from its start
    /// (`complete: false`, before any kernel is streamed) and its notes say what was left out.
    #[test]
    fn ranges_left_out_make_the_streamed_bundle_incomplete() {
        let ranges = r#"{"traceEvents": [
 {"ph": "X", "cat": "cuda_profiler_range", "name": "a", "pid": 0, "tid": 0, "ts": 1, "dur": 50, "args": {"gpu__time_duration.sum": 2000}},
 {"ph": "X", "cat": "cuda_profiler_range", "name": "b", "pid": 0, "tid": 0, "ts": 51, "dur": 50, "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 10}}
]}"#;
        let t = trace::parse(ranges.as_bytes()).unwrap();
        let stream = TraceStream::new(&t, None, Provenance::default(), "r.json", None).unwrap();
        assert!(!stream.shell().complete);
        let opts = trace::ImportOptions::default();
        let done = stream.run(&t, None, &opts, |_| Ok::<(), ()>(())).unwrap();
        assert_eq!(done.launches, 1);
        assert!(!done.shell.complete);
        assert!(
            done.shell.notes.iter().any(|n| n
                == "INCOMPLETE: 1 profiler range without a time counter left out of every total"),
            "{:?}",
            done.shell.notes
        );
        let t = trace::parse(TRACE.as_bytes()).unwrap();
        let stream = TraceStream::new(&t, None, Provenance::default(), "t.json", None).unwrap();
        assert!(stream.shell().complete);
    }

    /// `--arch` against what an input names: another compute capability is refused, the same
    /// one or none is used and said.
    #[test]
    fn arch_is_refused_where_the_input_contradicts_it_and_said_where_used() {
        let cc = |s: &str| s.parse::<ComputeCapability>().unwrap();
        let named = || vec![("device 0".to_string(), "8.0".to_string())];
        assert_eq!(
            arch_contradicts(cc("7.0"), "t.json", named()).unwrap(),
            "--arch 7.0 contradicts t.json, which names compute capability 8.0 (device 0): its counters are read with the metric table of the GPU it names; leave --arch out"
        );
        assert_eq!(arch_contradicts(cc("8.0"), "t.json", named()), None);
        assert_eq!(arch_contradicts(cc("8.0"), "t.json", Vec::new()), None);
        assert!(
            arch_note(cc("9.0"), false)
                .contains("Hopper (sm_90) metric table on the word of --arch")
        );
        // Captures whose CC column says otherwise.
        let mut c = NcuCaptures::new();
        c.add("a.csv", CSV).unwrap();
        let o = NcuOptions {
            arch: Some(Arch::Volta),
            compute_capability: Some(cc("7.0")),
            ..NcuOptions::default()
        };
        let e = c.bundle(&o, None, Provenance::default()).unwrap_err();
        assert!(
            matches!(&e, NcuBundleError::Arch(m) if m.starts_with("--arch 7.0 contradicts a.csv, which names compute capability 9.0 (launch 0 (gemm))")),
            "{e:?}"
        );
        let mut c = NcuCaptures::new();
        c.add("a.csv", CSV).unwrap();
        let o = NcuOptions {
            arch: Some(Arch::Hopper),
            compute_capability: Some(cc("9.0")),
            ..NcuOptions::default()
        };
        let b = c.bundle(&o, None, Provenance::default()).unwrap().bundle;
        assert!(
            b.notes
                .iter()
                .any(|n| n.starts_with("--arch 9.0 given, as the input names it")),
            "{:?}",
            b.notes
        );
    }

    #[test]
    fn a_trace_streams_into_its_sink_and_a_sink_error_stops_it() {
        let t = trace::parse(TRACE.as_bytes()).unwrap();
        let stream = TraceStream::new(&t, None, Provenance::default(), "t.json", None).unwrap();
        assert_eq!(
            stream.shell().description.as_deref(),
            Some("imported from a torch.profiler trace: t.json")
        );
        let opts = trace::ImportOptions {
            convention: Convention::default(),
            arch: None,
            ..trace::ImportOptions::default()
        };
        let mut names = Vec::new();
        let done = stream
            .clone()
            .run(&t, None, &opts, |k| {
                names.push(k.name.clone());
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(names, ["synthetic_sgemm"]);
        assert_eq!((done.launches, done.entries), (1, 1));
        assert!(
            done.shell
                .notes
                .last()
                .unwrap()
                .starts_with("no machine characterization")
        );
        let e = stream.run(&t, None, &opts, |_| Err("full")).unwrap_err();
        assert!(matches!(e, TraceStreamError::Sink("full")), "{e:?}");
    }
}
