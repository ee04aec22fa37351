//! `roofline import` and `roofline profile`: Nsight Compute output into bundles.
//!
//! Profiling runs the program once under ncu with the metric set of the GPU's architecture
//! (filtered by what the GPU lists), exports the report as the raw CSV page in base units, and
//! hands it to `roofline_import::ncu`, as `import` does with existing files.

use std::path::{Path, PathBuf};

use roofline_import::assemble::{AssembleError, Machine};
use roofline_import::ncu::{self as model_ncu, Arch, Convention, ImportOptions, metrics};
use roofline_import::pipeline::{
    self, NcuBundle, NcuBundleError, NcuCaptures, NcuOptions, PickError, TraceStream,
    TraceStreamError,
};
use roofline_model::Bundle;
use roofline_model::bundle::DataSource;

use crate::config::ProfileConfig;
use crate::error::Error;
use crate::io::{describe, read_bundle, read_text, write_bundle};
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
        e @ (AssembleError::NoMachine { .. } | AssembleError::DeviceNotInMachine { .. }) => {
            Error::Usage(e.to_string())
        }
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
    /// The architecture, when the inputs do not say.
    pub arch: Option<Arch>,
    /// FLOP and time convention, when given (`current` otherwise).
    pub convention: Option<Convention>,
    /// The ncu executable, for reports.
    pub ncu: Option<&'a Path>,
    /// Import an incomplete capture set, marked incomplete.
    pub allow_partial: bool,
    /// A range-profiler trace joined with the torch.profiler trace imported.
    pub counters: Option<&'a Path>,
    /// Place the kernels against a machine of another GPU, with a note.
    pub allow_machine_mismatch: bool,
}

/// `roofline import`.
///
/// # Errors
/// Unreadable files, ncu failures for reports, files that cannot be joined, no launches;
/// `--counters` with no torch.profiler trace to join.
pub fn import(req: &ImportRequest<'_>) -> Result<(), Error> {
    let ImportRequest {
        files,
        output,
        machine,
        arch,
        convention,
        ncu: ncu_flag,
        allow_partial,
        counters,
        allow_machine_mismatch,
    } = *req;
    let machine = machine
        .map(|m| machine_bundle(m, allow_machine_mismatch))
        .transpose()?;
    // torch.profiler traces are recognised by their content (JSON, gzip or not).
    // Reports (`.ncu-rep`, binary) go to ncu as before.
    let trace_at = pipeline::pick_trace(
        &mut files.iter().collect::<Vec<_>>(),
        |f| Ok(f.extension().is_none_or(|e| e != "ncu-rep") && crate::trace::is_trace(f)?),
        |f| f.display().to_string(),
    )
    .map_err(|e| match e {
        PickError::Input(e) => e,
        PickError::NotAlone(what) => Error::Usage(what),
    })?;
    if let Some(trace) = trace_at.map(|i| &files[i]) {
        if allow_partial {
            return Err(Error::Usage(pipeline::partial_with_trace(
                &trace.display().to_string(),
            )));
        }
        let counter_arch = arch.or_else(|| machine_arch(machine.as_ref()));
        return import_trace(
            trace,
            output,
            machine,
            counter_arch,
            (arch.is_some(), convention),
            counters,
        );
    }
    if let Some(c) = counters {
        return Err(Error::Usage(format!(
            "--counters {} joins a range-profiler trace with a torch.profiler trace, and none of the files given is one",
            c.display()
        )));
    }
    let mut captures = NcuCaptures::new();
    for f in files {
        let name = f.display().to_string();
        let text = if f.extension().is_some_and(|e| e == "ncu-rep") {
            let exe = ncu::find(ncu_flag).map_err(Error::Ncu)?;
            ncu::export_csv(&exe, f).map_err(Error::Ncu)?
        } else {
            read_text(f)?
        };
        captures.add(&name, &text).map_err(Error::Import)?;
    }
    let opts = NcuOptions {
        allow_partial,
        convention: convention.unwrap_or_default(),
        arch,
    };
    let NcuBundle { bundle, launches } = captures
        .bundle(opts, machine, crate::provenance::current())
        .map_err(|e| match e {
            NcuBundleError::Import(e) => Error::Import(e),
            NcuBundleError::NoLaunches => Error::NoKernels("in the given files".into()),
            NcuBundleError::Assemble(e) => assemble_error(e),
        })?;
    write_bundle(output, &bundle)?;
    report_written(output, &bundle, launches, bundle.kernels.len());
    Ok(())
}

/// `roofline import` of a torch.profiler trace, written as it is imported: each kernel entry
/// goes to the file as it is made ([`roofline_import::trace::import_each`],
/// [`crate::io::BundleOut`]), so that a trace of a million launches never holds its bundle.
/// `given` says whether `--arch` was given, and `--convention` if it was.
fn import_trace(
    trace: &Path,
    output: &Path,
    machine: Option<Machine>,
    arch: Option<Arch>,
    given: (bool, Option<Convention>),
    counters: Option<&Path>,
) -> Result<(), Error> {
    let t = crate::trace::read(trace)?;
    let ct = match counters {
        Some(c) => {
            if !crate::trace::is_trace(c)? {
                return Err(Error::Usage(format!(
                    "--counters {}: not a torch.profiler trace (JSON, gzip or not)",
                    c.display()
                )));
            }
            Some(crate::trace::read(c)?)
        }
        None => None,
    };
    if let Some(refusal) = pipeline::counter_options_unused(
        &t,
        &trace.display().to_string(),
        ct.as_ref(),
        true,
        (given.0, given.1.is_some()),
    ) {
        return Err(Error::Usage(refusal));
    }
    let counters_name = counters.map(|c| c.display().to_string());
    let stream = TraceStream::new(
        &t,
        machine,
        crate::provenance::current(),
        &trace.display().to_string(),
        counters_name.as_deref(),
    )
    .map_err(assemble_error)?;
    let opts = roofline_import::trace::ImportOptions {
        convention: given.1.unwrap_or_default(),
        arch,
    };
    let mut out = crate::io::BundleOut::create(output, stream.shell())?;
    let done = stream
        .run(&t, ct.as_ref(), &opts, |k| out.kernel(k))
        .map_err(|e| match e {
            TraceStreamError::Sink(e) => e,
            TraceStreamError::Import(source) => Error::TraceImport {
                path: trace.to_path_buf(),
                source: Box::new(source),
            },
        })?;
    out.finish(&done.shell)?;
    report_written(output, &done.shell, done.launches, done.entries);
    Ok(())
}

/// The architecture of the machine bundle's only device, when it says.
fn machine_arch(machine: Option<&Machine>) -> Option<Arch> {
    machine?.arch()
}

fn report_written(output: &Path, bundle: &Bundle, launches: u64, entries: usize) {
    message(&format!(
        "wrote {} ({launches} launch{}, {entries} kernel entr{}{})",
        describe(output),
        if launches == 1 { "" } else { "es" },
        if entries == 1 { "y" } else { "ies" },
        if bundle.machines.is_empty() {
            "; no machine"
        } else {
            ""
        }
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
    let mut bundle = assemble(imported, machine, notes)?;
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
