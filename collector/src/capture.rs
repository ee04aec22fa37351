//! `roofline import` and `roofline profile`: traces and Nsight Compute output into bundles.
//! `import` is the import driver ([`roofline_import::driver`]) on files: this module only reads
//! them ([`FileInput`]) and writes the bundle ([`FileSink`]).
//!
//! Profiling runs the program once under ncu with the metric set of the GPU's architecture
//! (filtered by what the GPU lists), exports the report as the raw CSV page in base units, and
//! hands it to `roofline_import::ncu`, as `import` does with existing files.

use std::path::{Path, PathBuf};

use std::io::{BufRead, BufReader};

use roofline_import::assemble::{AssembleError, Machine};
use roofline_import::driver::{self, Input, Request, Sink};
use roofline_import::input::HEAD;
use roofline_import::ncu::{self as model_ncu, Arch, Convention, ImportOptions, metrics};
use roofline_model::Bundle;
use roofline_model::bundle::DataSource;

use crate::config::ProfileConfig;
use crate::error::Error;
use crate::io::{describe, open_regular, open_text, read_bundle, read_bytes, write_bundle};
use crate::ncu::{self, NcuProcessError};
use crate::stderr::message;

/// A `--machine` bundle (`roofline_import::assemble::Machine`, named by its path), read.
fn machine_bundle(path: &Path, allow_mismatch: bool) -> Result<Machine, Error> {
    let b = read_bundle(path)?;
    Machine::new(path.display().to_string(), b, allow_mismatch).map_err(assemble_error)
}

/// The assembly's refusals as the CLI reports them (the same words; a machine of another GPU
/// by its own variant).
fn assemble_error(e: AssembleError) -> Error {
    match e {
        AssembleError::MachineMismatch {
            machine,
            machine_gpu,
            input_gpu,
        } => Error::MachineMismatch {
            machine: PathBuf::from(machine),
            machine_gpu,
            input_gpu,
        },
        e @ (AssembleError::NoMachine { .. }
        | AssembleError::DeviceNotInMachine { .. }
        | AssembleError::ArchMismatch { .. }) => Error::Usage(e.to_string()),
    }
}

/// Puts imported kernels and a machine (if any) in one bundle
/// ([`roofline_import::assemble::assemble`]), with this process's provenance.
fn assemble(
    imported: model_ncu::Imported,
    machine: Option<Machine>,
    notes: Vec<String>,
) -> Result<Bundle, Error> {
    roofline_import::assemble::assemble(imported, machine, notes, crate::provenance::current())
        .map_err(assemble_error)
}

fn options(convention: Convention, arch: Option<Arch>, source: DataSource) -> ImportOptions {
    ImportOptions {
        convention,
        arch,
        source,
    }
}

/// What `roofline import` is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct ImportRequest<'a> {
    /// Nsight Compute CSV files or reports, or one torch.profiler trace.
    pub files: &'a [PathBuf],
    /// The bundle to write.
    pub output: &'a Path,
    /// A bundle with the machine's ceilings.
    pub machine: Option<&'a Path>,
    /// The import's options (`--arch`, `--convention`, `--allow-partial`,
    /// `--allow-machine-mismatch`, `--counters`, `--model-config` (read from its path here),
    /// `--tensor-parallel`, `--expert-parallel`).
    pub options: &'a roofline_model::bundle::options::ImportOptions,
    /// `--counters`: the range-profiler trace to read.
    pub counters: Option<&'a Path>,
    /// The ncu executable, for reports.
    pub ncu: Option<&'a Path>,
    /// With `-o DIR/`: each trace's bundle, in the order of `files`.
    pub per_trace: &'a [PathBuf],
}

/// A file given to `roofline import`, read for the import driver.
struct FileInput<'a> {
    path: &'a Path,
    name: String,
    ncu: Option<&'a Path>,
}

impl<'a> FileInput<'a> {
    fn new(path: &'a Path, ncu: Option<&'a Path>) -> Self {
        FileInput {
            path,
            name: path.display().to_string(),
            ncu,
        }
    }
}

/// The I/O error inside the collector's read error (the driver names the file itself).
fn io_of(e: Error) -> std::io::Error {
    match e {
        Error::ReadFile { source, .. } => source,
        e => std::io::Error::other(e.to_string()),
    }
}

impl Input for FileInput<'_> {
    type Error = Error;

    fn name(&self) -> &str {
        &self.name
    }

    fn is_report(&self) -> bool {
        self.path.extension().is_some_and(|e| e == "ncu-rep")
    }

    fn raw_head(&mut self) -> std::io::Result<Vec<u8>> {
        crate::io::head_of(&mut open_regular(self.path).map_err(io_of)?, HEAD)
    }

    fn decompressed_head(&mut self) -> Result<Vec<u8>, String> {
        let f = open_regular(self.path).map_err(|e| io_of(e).to_string())?;
        crate::io::head_of(&mut crate::io::gunzip(BufReader::new(f)), HEAD)
            .map_err(|e| e.to_string())
    }

    fn text(&mut self) -> std::io::Result<Box<dyn BufRead + '_>> {
        open_text(self.path).map_err(io_of)
    }

    fn bytes(&mut self) -> std::io::Result<Vec<u8>> {
        read_bytes(self.path).map_err(io_of)
    }

    fn report_csv(&mut self) -> Option<Result<String, Error>> {
        Some(
            ncu::find(self.ncu)
                .and_then(|exe| ncu::export_csv(&exe, self.path))
                .map_err(Error::Ncu),
        )
    }
}

/// The bundle file `roofline import` writes: whole, or kernel by kernel
/// ([`crate::io::BundleOut`]), atomically either way.
struct FileSink<'a> {
    output: &'a Path,
    out: Option<crate::io::BundleOut>,
}

impl Sink for FileSink<'_> {
    type Error = Error;

    fn bundle(&mut self, b: &Bundle) -> Result<(), Error> {
        write_bundle(self.output, b)
    }

    fn begin(&mut self, shell: &Bundle) -> Result<(), Error> {
        self.out = Some(crate::io::BundleOut::create(self.output, shell)?);
        Ok(())
    }

    fn kernel(&mut self, k: &roofline_model::bundle::Kernel) -> Result<(), Error> {
        match self.out.as_mut() {
            Some(out) => out.kernel(k),
            None => Err(Error::Usage("a kernel before the bundle began".into())),
        }
    }

    fn finish(&mut self, shell: &Bundle) -> Result<(), Error> {
        match self.out.take() {
            Some(out) => out.finish(shell),
            None => Err(Error::Usage("the bundle ended before it began".into())),
        }
    }
}

/// `roofline import`: the import driver ([`roofline_import::driver`]) on the files given,
/// writing the bundle to its file.
///
/// # Errors
/// Unreadable files, ncu failures for reports, files that cannot be joined, no launches;
/// `--counters` with no torch.profiler trace to join: the driver's refusals, in its words.
pub fn import(req: &ImportRequest<'_>) -> Result<(), Error> {
    let options = req.options;
    let machine = req
        .machine
        .map(|m| machine_bundle(m, options.allow_machine_mismatch))
        .transpose()?;
    if req.files.len() > 1 || !req.per_trace.is_empty() {
        let mut inputs: Vec<FileInput<'_>> = req
            .files
            .iter()
            .map(|f| FileInput::new(f, req.ncu))
            .collect();
        let traces = driver::all_traces(&mut inputs).map_err(|e| Error::Driver(Box::new(e)))?;
        if traces {
            if req.counters.is_some() {
                return Err(Error::Usage(
                    "--counters joins a range-profiler trace with one torch.profiler trace: import that rank alone".into(),
                ));
            }
            return import_ranks(req, machine.as_ref());
        }
        if !req.per_trace.is_empty() {
            return Err(Error::Usage(format!(
                "-o {}: a directory takes one bundle per torch.profiler trace, and not every file given is one",
                req.output.display()
            )));
        }
    }
    let counters = req.counters.map(|c| FileInput::new(c, req.ncu));
    let model_config = options
        .model_config
        .as_deref()
        .map(|m| FileInput::new(Path::new(m), req.ncu));
    let request = Request {
        inputs: req
            .files
            .iter()
            .map(|f| FileInput::new(f, req.ncu))
            .collect(),
        counters,
        model_config,
        machine,
        provenance: crate::provenance::current(),
        options: options.clone(),
        counters_option: true,
    };
    let mut sink = FileSink {
        output: req.output,
        out: None,
    };
    let done =
        driver::run(request, &mut sink, &mut |_, _| ()).map_err(|e| Error::Driver(Box::new(e)))?;
    report_written(req.output, &done.shell, done.launches, done.entries);
    Ok(())
}

/// Workers importing traces at once: each holds one trace's events, so this bounds the memory.
const RANK_WORKERS: usize = 4;

/// Several torch.profiler traces, one per rank of a run: each imported alone
/// ([`driver::run`], as one trace is) by a small pool of threads, into its own bundle (`-o
/// DIR/`), or into a private directory beside the output, from which the bundles are joined
/// into one with a device per rank ([`roofline_import::ranks::RankJoin`]), kernel by kernel. A
/// progress line counts the traces on a terminal.
fn import_ranks(req: &ImportRequest<'_>, machine: Option<&Machine>) -> Result<(), Error> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let n = req.files.len();
    let scratch = if req.per_trace.is_empty() {
        Some(crate::io::temp_dir_beside(req.output)?)
    } else {
        crate::io::create_dir(req.output)?;
        None
    };
    let targets: Vec<PathBuf> = match &scratch {
        Some(dir) => (0..n)
            .map(|i| dir.path().join(format!("part-{i}.json")))
            .collect(),
        None => req.per_trace.to_vec(),
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(RANK_WORKERS)
        .min(n)
        .max(1);
    let bar = crate::progress::bar(n as u64, "importing traces");
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let done: Mutex<Vec<Option<Result<driver::Outcome, Error>>>> =
        Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let request = Request {
                        inputs: vec![FileInput::new(&req.files[i], req.ncu)],
                        counters: None,
                        model_config: req
                            .options
                            .model_config
                            .as_deref()
                            .map(|m| FileInput::new(Path::new(m), req.ncu)),
                        machine: machine.cloned(),
                        provenance: crate::provenance::current(),
                        options: req.options.clone(),
                        counters_option: true,
                    };
                    let mut sink = FileSink {
                        output: &targets[i],
                        out: None,
                    };
                    let r = driver::run(request, &mut sink, &mut |_, _| ())
                        .map_err(|e| Error::Driver(Box::new(e)));
                    if r.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if let Ok(mut d) = done.lock() {
                        d[i] = Some(r);
                    }
                    bar.inc(1);
                }
            });
        }
    });
    bar.finish_and_clear();
    let done = done
        .into_inner()
        .map_err(|_| Error::Usage("an import thread failed".into()))?;
    let mut outcomes = Vec::with_capacity(n);
    for (i, r) in done.into_iter().enumerate() {
        match r {
            Some(r) => outcomes.push(r?),
            None => {
                return Err(Error::Usage(format!(
                    "{} was not imported (an earlier trace failed)",
                    req.files[i].display()
                )));
            }
        }
    }
    if scratch.is_none() {
        // One bundle per trace: said each, the notes they share once.
        let mut said: Vec<&String> = Vec::new();
        for (o, t) in outcomes.iter().zip(&targets) {
            message(&format!(
                "wrote {} (rank {}: {} launch{}, {} kernel entr{})",
                describe(t),
                o.rank.as_deref().unwrap_or("unknown"),
                o.launches,
                if o.launches == 1 { "" } else { "es" },
                o.entries,
                if o.entries == 1 { "y" } else { "ies" },
            ));
        }
        for o in &outcomes {
            for note in &o.shell.notes {
                if !said.contains(&note) {
                    said.push(note);
                }
            }
        }
        for note in said {
            message(&format!("note: {note}"));
        }
        return Ok(());
    }
    let parts: Vec<roofline_import::ranks::RankPart> = outcomes
        .iter()
        .zip(req.files)
        .map(|(o, f)| roofline_import::ranks::RankPart {
            name: f.display().to_string(),
            rank: o.rank.clone(),
            shell: o.shell.clone(),
        })
        .collect();
    let join = roofline_import::ranks::RankJoin::new(&parts, crate::provenance::current())
        .map_err(|e| Error::Usage(e.to_string()))?;
    let mut out = crate::io::BundleOut::create(req.output, join.shell())?;
    for &i in join.order() {
        crate::io::stream_kernels(&targets[i], &mut |mut k| {
            join.kernel(i, &mut k);
            out.kernel(&k)
        })?;
    }
    out.finish(join.shell())?;
    let launches = outcomes.iter().map(|o| o.launches).sum();
    let entries = outcomes.iter().map(|o| o.entries).sum();
    report_written(req.output, join.shell(), launches, entries);
    Ok(())
}

/// The architecture of the machine bundle's only device, when it says.
fn machine_arch(machine: Option<&Machine>) -> Option<Arch> {
    machine?.arch()
}

fn report_written(output: &Path, bundle: &Bundle, launches: u64, entries: usize) {
    message(&format!(
        "wrote {} ({launches} launch{}, {entries} kernel entr{}{}){}",
        describe(output),
        if launches == 1 { "" } else { "es" },
        if entries == 1 { "y" } else { "ies" },
        if bundle.machines.is_empty() {
            "; no machine"
        } else {
            ""
        },
        crate::io::columns_beside(output, entries).map_or_else(String::new, |c| format!(
            " and its columns file {} (the same bundle in binary, which the viewer opens fast)",
            describe(&c)
        ))
    ));
    for n in &bundle.notes {
        message(&format!("note: {n}"));
    }
}

/// `roofline profile`.
///
/// # Errors
/// No ncu, no GPU (without `--arch`), no permission for the counters, a failed program (after
/// writing what was profiled), no launch profiled.
pub fn profile(c: &ProfileConfig) -> Result<(), Error> {
    let exe = ncu::find(c.ncu.as_deref()).map_err(Error::Ncu)?;
    let machine = c
        .machine
        .as_deref()
        .map(|m| machine_bundle(m, c.allow_machine_mismatch))
        .transpose()?;
    let mut notes = Vec::new();
    let arch = match c.arch.or_else(|| machine_arch(machine.as_ref())) {
        Some(a) => a,
        None => {
            let id = crate::gpu::identify(0).map_err(|source| Error::Gpu {
                command: "profile",
                source,
            })?;
            let (a, note) = Arch::from_compute_capability(&id.compute_capability)
                .map_err(|e| Error::Usage(format!("the driver reports {e}")))?;
            notes.extend(note);
            a
        }
    };
    let wanted: Vec<String> = metrics::profile_metrics(arch)
        .into_iter()
        .map(String::from)
        .collect();
    let available = ncu::available_metrics(&exe).map_err(Error::Ncu)?;
    let (have, missing): (Vec<String>, Vec<String>) = wanted
        .into_iter()
        .partition(|m| available.contains(metrics::base_name(m)));
    if !missing.is_empty() {
        notes.push(format!(
            "metrics this GPU does not list (left out; alternatives used where the table has them): {}",
            missing.join(", ")
        ));
    }
    let wanted = have;

    // A private working folder (unique, owner-only) for ncu's log, and its report unless kept.
    let work = tempfile::Builder::new()
        .prefix("roofline-profile-")
        .tempdir()
        .map_err(|source| Error::WriteFile {
            path: std::env::temp_dir(),
            source,
        })?;
    let report_base = match &c.keep_report {
        // ncu adds the ending itself.
        Some(p) if p.extension().is_some_and(|e| e == "ncu-rep") => p.with_extension(""),
        Some(p) => p.clone(),
        None => work.path().join("profile"),
    };
    let report = with_ending(&report_base);
    // A report left from an earlier run must never pass for this one's.
    if report.exists() {
        std::fs::remove_file(&report).map_err(|source| Error::WriteFile {
            path: report.clone(),
            source,
        })?;
    }
    let log_file = work.path().join("ncu.log");
    let result = profile_into(
        c,
        &exe,
        arch,
        wanted,
        &report_base,
        log_file,
        machine,
        notes,
    );
    if result.is_err() && c.keep_report.is_none() && report.is_file() {
        // Whatever failed after ncu ran, its report is kept for `roofline import`.
        let kept = c.output.with_extension("ncu-rep");
        if std::fs::copy(&report, &kept).is_ok() {
            message(&format!(
                "note: ncu's report is kept at {}; re-import it with `roofline import {}`",
                kept.display(),
                kept.display()
            ));
        }
    }
    result
}

fn with_ending(base: &Path) -> PathBuf {
    let mut r = base.as_os_str().to_owned();
    r.push(".ncu-rep");
    PathBuf::from(r)
}

#[allow(clippy::too_many_arguments)]
fn profile_into(
    c: &ProfileConfig,
    exe: &Path,
    arch: Arch,
    metrics: Vec<String>,
    report_base: &Path,
    log_file: PathBuf,
    machine: Option<Machine>,
    mut notes: Vec<String>,
) -> Result<(), Error> {
    let request = ncu::ProfileRequest {
        metrics,
        nvtx: c.nvtx.clone(),
        kernel_regex: c.kernel.clone(),
        launch_skip: c.launch_skip,
        launch_count: c.launch_count,
        report_base: report_base.to_path_buf(),
        log_file,
        command: c.command.clone(),
    };
    let outcome = ncu::profile(exe, &request).map_err(Error::Ncu)?;
    if outcome.permission_denied {
        return Err(Error::Ncu(NcuProcessError::CounterPermission));
    }
    let report = with_ending(report_base);
    let status = describe_status(outcome.status);
    if !report.is_file() {
        return Err(if outcome.status.success() {
            Error::NoKernels(no_match_hint(c))
        } else {
            Error::NothingProfiled {
                status,
                detail: outcome.errors.first().cloned(),
            }
        });
    }
    let csv = ncu::export_csv(exe, &report).map_err(Error::Ncu)?;
    let cap =
        model_ncu::parse_capture(&csv, &report.display().to_string()).map_err(Error::Import)?;
    notes.extend(cap.notes("ncu report"));
    let launches = model_ncu::join(vec![("ncu report".into(), cap)]).map_err(Error::Import)?;
    if launches.is_empty() {
        return Err(if outcome.status.success() {
            Error::NoKernels(no_match_hint(c))
        } else {
            Error::NothingProfiled {
                status,
                detail: outcome.errors.first().cloned(),
            }
        });
    }
    let imported = model_ncu::to_kernels(
        &launches,
        &options(c.convention, Some(arch), DataSource::NsightCompute),
    )
    .map_err(Error::Import)?;
    // Launches left out for want of a time, or a figure without its counter's value: the
    // import's notes say which, and the bundle is incomplete.
    let imported_complete = imported.complete;
    let mut bundle = assemble(imported, machine, notes)?;
    bundle.complete &= imported_complete;
    let rank = ncu::launcher_rank(|k| std::env::var(k).ok());
    for k in &mut bundle.kernels {
        k.nvtx_range.clone_from(&c.nvtx);
        // Under a launcher, each kernel says which rank ran it (kept through `merge`).
        if let Some(r) = &rank {
            k.tags.insert("rank".into(), r.clone());
        }
    }
    bundle.provenance.ncu_version = ncu::version(exe);
    bundle.description = Some(format!(
        "profiled with Nsight Compute: {}",
        c.command.join(" ")
    ));
    // ncu can fail on some launches (or on itself) and still write a report of the others:
    // those launches are missing, which the bundle says. The line ncu logs for a program that
    // exited non-zero ("The application returned an error code") is the program's failure.
    let ncu_errors: Vec<String> = outcome
        .errors
        .iter()
        .filter(|e| !e.contains("The application returned an error code"))
        .cloned()
        .collect();
    if !ncu_errors.is_empty() {
        bundle.complete = false;
        bundle.notes.push(format!(
            "ncu reported errors ({status}); launches it could not profile are missing: {}",
            ncu_errors.join(" | ")
        ));
    }
    // Non-zero with no error of ncu's own, or with ncu's line for the program's failure.
    let program_failed = !outcome.status.success()
        && (ncu_errors.is_empty() || ncu_errors.len() < outcome.errors.len());
    if program_failed {
        bundle.complete = false;
        bundle.notes.push(format!(
            "the program failed ({status}); the launches profiled before it stopped are kept"
        ));
    }
    write_bundle(&c.output, &bundle)?;
    report_written(
        &c.output,
        &bundle,
        launches
            .iter()
            .map(|l| l.launches)
            .fold(0, u64::saturating_add),
        bundle.kernels.len(),
    );
    if let Some(first) = ncu_errors.first() {
        Err(Error::NcuErrors {
            status,
            count: ncu_errors.len(),
            first: first.clone(),
            written: c.output.clone(),
        })
    } else if outcome.status.success() {
        Ok(())
    } else {
        Err(Error::ProgramFailed {
            status,
            written: c.output.clone(),
        })
    }
}

fn describe_status(s: std::process::ExitStatus) -> String {
    match s.code() {
        Some(code) => format!("exit status {code}"),
        None => format!("{s}"),
    }
}

fn no_match_hint(c: &ProfileConfig) -> String {
    let mut filters = Vec::new();
    if let Some(n) = &c.nvtx {
        filters.push(format!("--nvtx {n}"));
    }
    if let Some(k) = &c.kernel {
        filters.push(format!("--kernel {k}"));
    }
    if let Some(n) = c.launch_skip {
        filters.push(format!("--launch-skip {n}"));
    }
    if filters.is_empty() {
        "was profiled: the program launched no CUDA kernel".into()
    } else {
        format!(
            "matched the filters ({}); check the NVTX range name (push/pop ranges end with '/') and the kernel regex",
            filters.join(", ")
        )
    }
}
