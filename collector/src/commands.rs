//! The subcommands, each taking its validated [`Config`] and returning a typed error.

use std::path::{Path, PathBuf};

use roofline_model::Bundle;
use roofline_model::analysis::comm::CommAcc;
use roofline_model::analysis::group::{GroupBy, regroup};
use roofline_model::chart::view::{View, ViewState};

use crate::cli::{ChartKind, InfoFormat};
use crate::config::Config;
use crate::error::Error;
use crate::export;
use crate::io::{describe, is_stdout, read_bundle, write_bundle, write_output};
use crate::stderr::message;

/// Runs a validated command, once its outputs are known to be safe to write: none is one of
/// its inputs or an existing non-regular file, and `merge` and `import` get no input twice.
///
/// # Errors
/// Whatever the command fails with; see [`Error`].
pub fn run(config: Config) -> Result<(), Error> {
    let (inputs, outputs) = config.files();
    crate::io::check_files(&inputs, &outputs)?;
    match &config {
        Config::Merge { files, .. } | Config::Import { files, .. } => {
            crate::io::check_distinct(&files.iter().map(PathBuf::as_path).collect::<Vec<_>>())?;
        }
        Config::Export { runs } => {
            crate::io::check_distinct(&runs.iter().map(|r| r.input.as_path()).collect::<Vec<_>>())?;
        }
        _ => {}
    }
    match config {
        Config::Validate { files } => validate(&files),
        Config::Info {
            file,
            format,
            top,
            baseline,
            output,
            group_by,
            device,
        } => {
            if let Some(b) = baseline {
                let (bundle, base) = read_compared(group_by, &file, &b)?;
                // The table says it on its first lines; the CSV's columns stay as they are.
                if format == InfoFormat::Csv {
                    for n in roofline_model::analysis::compare::incomplete_words(&bundle, &base) {
                        message(&format!("note: {n}"));
                    }
                }
                let bytes = match format {
                    InfoFormat::Csv => export::compare::to_csv(&bundle, &base, device.as_deref()),
                    _ => export::compare::to_table(&bundle, &base, top, device.as_deref()),
                }
                .map_err(Error::Usage)?;
                return write_output(output.as_deref(), &bytes);
            }
            let (bundle, entries, comm) = read_grouped(&file, group_by.unwrap_or_default())?;
            let bytes = match format {
                InfoFormat::Table => export::info::to_table_of(&bundle, top, entries, &comm),
                InfoFormat::Csv => export::info::to_csv(&bundle),
                InfoFormat::Json => export::info::to_json_of(&bundle, &comm),
            };
            write_output(output.as_deref(), &bytes)
        }
        Config::Plot {
            file,
            chart,
            output,
            top,
            size,
            device,
            group_by,
        } => {
            let bundle = if chart == Some(ChartKind::Comm) && group_by == GroupBy::Kernel {
                read_collectives(&file)?
            } else {
                read_grouped(&file, group_by)?.0
            };
            let (_, svg) = plot_default(&bundle, chart, top, size, device.as_deref())?;
            write_output(Some(&output), &svg)?;
            if !is_stdout(&output) {
                message(&format!("wrote {}", output.display()));
            }
            Ok(())
        }
        Config::Page(p) => {
            page(&p)?;
            if !is_stdout(&p.output) {
                message(&format!("wrote {}", p.output.display()));
            }
            Ok(())
        }
        Config::Merge { files, output } => merge(&files, &output),
        Config::Import {
            files,
            output,
            machine,
            options,
            counters,
            ncu,
            per_trace,
        } => crate::capture::import(&crate::capture::ImportRequest {
            files: &files,
            output: &output,
            machine: machine.as_deref(),
            options: &options,
            counters: counters.as_deref(),
            ncu: ncu.as_deref(),
            per_trace: &per_trace,
        }),
        Config::Profile(c) => crate::capture::profile(&c),
        Config::Machine {
            output,
            devices,
            quick,
            diagnose_refused,
        } => machine(
            &output,
            devices,
            crate::machine::Plan {
                quick,
                diagnose_refused,
            },
        ),
        Config::MachinePlan { plan, target } => write_output(
            None,
            crate::machine::schedule::render(plan, &target).as_bytes(),
        ),
        Config::Suite {
            plan,
            machine,
            output,
        } => suite(&plan, machine.as_deref(), &output),
        Config::Export { runs } => export(&runs),
        Config::Catalogue { gpu } => {
            let catalogue = roofline_catalogue::Catalogue::get();
            let bytes = match gpu {
                None => export::catalogue::list(catalogue),
                Some(name) => {
                    let entry = roofline_import::datasheet::named(catalogue, &name)
                        .map_err(|e| Error::Usage(e.to_string()))?;
                    export::catalogue::one(catalogue, entry)
                }
            };
            write_output(None, &bytes)
        }
    }
}

/// `roofline export`: each bundle's kernel table, and its operator table where it has PyTorch
/// operators, as Parquet; each run's id is its bundle's content digest.
///
/// # Errors
/// A bundle that cannot be read, a table that cannot be written.
fn export(runs: &[crate::config::ExportRun]) -> Result<(), Error> {
    use crate::export::parquet::{Run, Table, to_parquet};
    let mut written = 0usize;
    for r in runs {
        let mut bundle = read_bundle(&r.input)?;
        let run = Run {
            id: roofline_model::bundle::merge::digest(&bundle)
                .map_err(|e| Error::Usage(format!("{}: {e}", r.input.display())))?,
            name: r.name.clone(),
        };
        let operators = GroupBy::Operator.applies_to(&bundle.kernels).then(|| {
            let mut b = bundle.clone();
            regroup(&mut b, GroupBy::Operator);
            b
        });
        let table = |t: Table, b: &Bundle| {
            to_parquet(t, &run, b).map_err(|e| Error::Usage(format!("{}: {e}", r.input.display())))
        };
        bundle.kernels = roofline_model::analysis::aggregate::aggregate_by_name(&bundle.kernels);
        let kernels = table(Table::Kernels, &bundle)?;
        crate::io::create_parent(&r.kernels)?;
        write_output(Some(&r.kernels), &kernels)?;
        written += 1;
        if let Some(ops) = operators {
            let bytes = table(Table::Operators, &ops)?;
            crate::io::create_parent(&r.operators)?;
            write_output(Some(&r.operators), &bytes)?;
            written += 1;
        }
    }
    message(&format!(
        "wrote {written} Parquet table{} of {} run{}",
        if written == 1 { "" } else { "s" },
        runs.len(),
        if runs.len() == 1 { "" } else { "s" }
    ));
    Ok(())
}

/// Reads a bundle for `info` and `plot`, its kernels grouped as asked, how many kernel entries
/// it held, and its collective launches (which the exposure per step and the skew across ranks
/// read). The kernels are grouped as they are read, so that a bundle of a million launches is
/// never in memory: by kernel name aggregated (the reports and charts aggregate by name anyway,
/// and aggregating twice changes nothing), per operator or module regrouped
/// ([`roofline_model::analysis::group::Grouper`]); only the collectives are kept whole.
///
/// # Errors
/// As [`read_bundle`].
fn read_grouped(path: &Path, group_by: GroupBy) -> Result<(Bundle, usize, CommAcc), Error> {
    use roofline_model::analysis::aggregate::Aggregator;
    use roofline_model::analysis::group::Grouper;
    // A kernel's device is its own, or the bundle's only one (known once the shell is read: the
    // collectives' devices are settled after).
    let (streamed, mut comm, kernels) = if group_by == GroupBy::Kernel {
        let (streamed, (agg, comm)) =
            crate::io::read_bundle_reduced::<(Aggregator, CommAcc)>(path, |(a, c), k| {
                c.push(&k, k.device.as_deref());
                a.push(&k);
            })?;
        (streamed, comm, agg.finish())
    } else {
        let (streamed, (grouper, comm)) =
            crate::io::read_bundle_reduced::<(Option<Grouper>, CommAcc)>(path, |(g, c), k| {
                c.push(&k, k.device.as_deref());
                g.get_or_insert_with(|| Grouper::new(group_by)).push(&k);
            })?;
        let kernels = grouper.map(Grouper::finish).unwrap_or_default();
        (streamed, comm, kernels)
    };
    if streamed.shell.devices.len() == 1 {
        for r in &mut comm.records {
            r.device
                .get_or_insert_with(|| streamed.shell.devices[0].id.clone());
        }
    }
    let mut bundle = streamed.shell;
    bundle.kernels = kernels;
    Ok((bundle, streamed.entries, comm))
}

/// Reads a bundle for `plot --chart comm`: its collective launches alone, each kept as it was
/// recorded (the chart places every launch), the other kernels dropped as they are read.
///
/// # Errors
/// As [`read_bundle`].
fn read_collectives(path: &Path) -> Result<Bundle, Error> {
    let (streamed, kernels) =
        crate::io::read_bundle_reduced::<Vec<roofline_model::bundle::Kernel>>(path, |v, k| {
            if k.collective.is_some() {
                v.push(k);
            }
        })?;
    let mut bundle = streamed.shell;
    bundle.kernels = kernels;
    Ok(bundle)
}

/// The two bundles of `info --baseline`, grouped as asked, else as the viewer compares
/// ([`roofline_model::chart::view::ViewState::group_for`]): per operator when both bundles carry the
/// operators that launched their kernels, per kernel otherwise. Unasked, each bundle is streamed
/// once and grouped both ways as it is read (aggregated per kernel as [`read_grouped`] does, and
/// regrouped per operator), so that neither is ever held whole nor read twice. Says so on
/// standard error when it chose per operator.
///
/// # Errors
/// As [`read_bundle`].
fn read_compared(
    asked: Option<GroupBy>,
    file: &Path,
    baseline: &Path,
) -> Result<(Bundle, Bundle), Error> {
    use roofline_model::analysis::aggregate::Aggregator;
    use roofline_model::analysis::group::Grouper;
    if let Some(g) = asked {
        let (bundle, _, _) = read_grouped(file, g)?;
        let (base, _, _) = read_grouped(baseline, g)?;
        return Ok((bundle, base));
    }
    /// One bundle read both ways: its kernels per name, and per operator while any carries one.
    #[derive(Default)]
    struct Both {
        per_kernel: Aggregator,
        per_operator: Option<Grouper>,
        operators: bool,
    }
    let both = |path: &Path| -> Result<(Bundle, Both), Error> {
        let (streamed, both) = crate::io::read_bundle_reduced::<Both>(path, |b, k| {
            b.operators = b.operators || GroupBy::Operator.group_of(&k).is_some();
            b.per_kernel.push(&k);
            b.per_operator
                .get_or_insert_with(|| Grouper::new(GroupBy::Operator))
                .push(&k);
        })?;
        Ok((streamed.shell, both))
    };
    let (mut bundle, current) = both(file)?;
    let (mut base, baseline) = both(baseline)?;
    let group = ViewState::group_for(None, current.operators && baseline.operators);
    let kernels = |b: Both| match group {
        GroupBy::Kernel => b.per_kernel.finish(),
        _ => b.per_operator.map(Grouper::finish).unwrap_or_default(),
    };
    bundle.kernels = kernels(current);
    base.kernels = kernels(baseline);
    if group == GroupBy::Operator {
        message(
            "comparing per operator: both bundles carry the PyTorch operators that launched their kernels (--group-by kernel compares kernel names)",
        );
    }
    Ok((bundle, base))
}

/// `roofline machine`: measures each requested device, writes one bundle, then prints the
/// summary (to standard error when the bundle goes to standard output).
fn machine(output: &Path, devices: Option<u32>, plan: crate::machine::Plan) -> Result<(), Error> {
    let command = "machine";
    let count = crate::gpu::probe().map_err(|source| Error::Gpu { command, source })?;
    if !crate::gpu::nvrtc_present() {
        return Err(Error::Gpu {
            command,
            source: crate::gpu::GpuError::NoNvrtc,
        });
    }
    let ordinals: Vec<usize> = match devices {
        Some(d) if (d as usize) < count => vec![d as usize],
        Some(d) => {
            return Err(Error::Usage(format!(
                "--device {d}: only {count} GPU{} visible (0 to {})",
                if count == 1 { "" } else { "s" },
                count - 1
            )));
        }
        None => (0..count).collect(),
    };
    let mut measured = Vec::new();
    let mut failure = None;
    let mut summary = String::new();
    crate::interrupt::watch();
    for ordinal in ordinals {
        let outcome = crate::machine::run(
            ordinal,
            plan,
            crate::provenance::current(),
            &crate::progress::Terminal,
        )
        .map_err(|source| Error::Machine { ordinal, source })?;
        summary.push_str(&export::machine_summary(&outcome.bundle, outcome.wall_s));
        if let Some((phase, e)) = outcome.failure {
            failure = Some((ordinal, phase, e));
        }
        measured.push((format!("gpu{ordinal}"), outcome.bundle));
        if failure.is_some() {
            break;
        }
    }
    let Some(bundle) = crate::machine::combine(measured).map_err(Error::Merge)? else {
        return Err(Error::Nothing("no device was measured".into()));
    };
    let shown = write_then_show(output, &bundle, &summary, show_summary(output))?;
    match failure {
        None => {
            shown?;
            message(&format!("wrote {}", describe(output)));
            Ok(())
        }
        Some((ordinal, phase, source)) => Err(Error::MachineIncomplete {
            ordinal,
            phase,
            written: output.to_path_buf(),
            source,
        }),
    }
}

/// Writes the bundle first, then shows the summary: a terminal or pipe that fails can never
/// lose a measurement. The outer result is the write's; the inner one, the summary's.
/// Should the write fail, the summary still goes to standard error, so the figures are seen.
/// `show` prints the summary (standard output, or standard error when the bundle went there).
fn write_then_show(
    output: &Path,
    bundle: &Bundle,
    summary: &str,
    show: impl FnOnce(&str) -> Result<(), Error>,
) -> Result<Result<(), Error>, Error> {
    if let Err(e) = write_bundle(output, bundle) {
        message(summary.trim_end());
        return Err(e);
    }
    Ok(show(summary))
}

/// Where `roofline machine`'s summary goes: standard output, unless the bundle took it.
fn show_summary(output: &Path) -> impl FnOnce(&str) -> Result<(), Error> {
    let to_stderr = is_stdout(output);
    move |summary: &str| {
        if to_stderr {
            message(summary.trim_end());
            Ok(())
        } else {
            crate::io::stdout(summary.as_bytes())
        }
    }
}

/// `roofline suite`: runs the study on GPU 0, writes the bundle, prints each entry's verdict.
fn suite(plan: &crate::suite::Plan, machine: Option<&Path>, output: &Path) -> Result<(), Error> {
    let command = "suite";
    let machine = machine.map(read_bundle).transpose()?;
    crate::gpu::probe().map_err(|source| Error::Gpu { command, source })?;
    if !crate::gpu::nvrtc_present() {
        return Err(Error::Gpu {
            command,
            source: crate::gpu::GpuError::NoNvrtc,
        });
    }
    let outcome = crate::suite::run(
        0,
        plan,
        crate::provenance::current(),
        machine,
        &crate::progress::Terminal,
    )
    .map_err(|source| Error::Suite { source })?;
    write_bundle(output, &outcome.bundle)?;
    message(&format!(
        "{} entries, {} skipped, in {:.1} s; wrote {}",
        outcome.bundle.kernels.len(),
        outcome.bundle.skipped.len(),
        outcome.wall_s,
        describe(output)
    ));
    match outcome.failure {
        None => Ok(()),
        Some(source) => Err(Error::SuiteIncomplete {
            written: output.to_path_buf(),
            source,
        }),
    }
}

fn validate(files: &[PathBuf]) -> Result<(), Error> {
    let mut failed = 0;
    for f in files {
        // Read in one pass, kernels checked and dropped as they come: never held whole.
        match crate::io::read_bundle_reduced::<()>(f, |(), _| {}) {
            Ok((s, ())) => crate::io::stdout(
                format!(
                    "{}: ok (schema v{}, {}, {} device{}, {} machine{}, {} kernel entr{})\n",
                    f.display(),
                    s.shell.schema_version,
                    if s.shell.complete {
                        "complete"
                    } else {
                        "incomplete"
                    },
                    s.shell.devices.len(),
                    if s.shell.devices.len() == 1 { "" } else { "s" },
                    s.shell.machines.len(),
                    if s.shell.machines.len() == 1 { "" } else { "s" },
                    s.entries,
                    if s.entries == 1 { "y" } else { "ies" },
                )
                .as_bytes(),
            )?,
            Err(e) => {
                failed += 1;
                message(&crate::error::report_chain(&e));
            }
        }
    }
    if failed == 0 {
        Ok(())
    } else {
        Err(Error::ValidationFailed {
            failed,
            total: files.len(),
        })
    }
}

/// `roofline plot --format html`: the viewer's standalone page with the bundle (and baseline)
/// inlined and the view as the viewer's URL query, written as the viewer's "Save as HTML" writes
/// it. The bundles are checked first, and the chart must have something to draw, as for SVG.
fn page(p: &crate::config::PageConfig) -> Result<(), Error> {
    // A columns file's bundle is inlined as its JSON, the text a page reads.
    let read = |path: &Path| -> Result<(Bundle, Vec<u8>), Error> {
        let (bundle, bytes) = crate::io::read_bundle_and_bytes(path)?;
        if !roofline_model::bundle::columns::is_columns(&bytes) {
            return Ok((bundle, bytes));
        }
        let json = roofline_model::to_json(&bundle).map_err(|source| Error::Bundle {
            path: path.to_path_buf(),
            source,
        })?;
        Ok((bundle, json.into_bytes()))
    };
    let (mut bundle, bytes) = read(&p.file)?;
    regroup(&mut bundle, p.group_by);
    let (chart, _) = plot_default(
        &bundle,
        p.chart,
        p.top.unwrap_or(12),
        (960.0, 640.0),
        p.device.as_deref(),
    )?;
    let baseline = match &p.baseline {
        Some(b) => Some(read(b)?),
        None => None,
    };
    let name = |path: &Path| {
        path.file_name().map_or_else(
            || "bundle.json".into(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    // The view, as the viewer's own URL says it (`roofline_model::chart::view`).
    let view = ViewState {
        device: p.device.clone(),
        view: match chart {
            ChartKind::Hierarchical => View::Hierarchical,
            ChartKind::Time => View::Time,
            ChartKind::Sweep => View::Machine,
            ChartKind::Comm => View::Comm,
        },
        // Per kernel, the default, is left unasked, as the viewer's own URL leaves it.
        group: (p.group_by != GroupBy::Kernel).then_some(p.group_by),
        top: p.top,
        labels: p.labels,
        ..ViewState::default()
    };
    let query = view.to_query();
    let (current_name, base_name) = (name(&p.file), p.baseline.as_deref().map(name));
    let chrome = match &p.embed {
        Some(e) => export::html::Chrome::Embed {
            link: e.link.as_deref(),
        },
        None => export::html::Chrome::Full,
    };
    let html = export::html::render(
        export::html::embedded_template(),
        chrome,
        export::html::PageBundle {
            name: &current_name,
            bytes: &bytes,
        },
        baseline
            .as_ref()
            .zip(base_name.as_deref())
            .map(|((_, b), n)| export::html::PageBundle { name: n, bytes: b }),
        &query,
    )?;
    write_output(Some(&p.output), &html)
}

/// Renders `chart` of a bundle to SVG bytes, or when none is asked for the hierarchical chart,
/// or the time-based one where [`roofline_model::chart::prefers_time_based`] (a torch.profiler
/// trace imported without counters or a machine: analytical F and B and measured times, no bytes
/// per memory level), saying so. Returns the chart drawn. The bundle is analysed once, for the
/// choice and the drawing.
///
/// # Errors
/// As [`plot`].
pub fn plot_default(
    bundle: &Bundle,
    chart: Option<ChartKind>,
    top: usize,
    size: (f64, f64),
    device: Option<&str>,
) -> Result<(ChartKind, Vec<u8>), Error> {
    use roofline_model::analysis::Analysed;
    use roofline_model::chart::{hierarchical_of, prefers_time_based, time_based_of};
    let options = chart_options(bundle, top, size, device)?;
    let scene = if chart == Some(ChartKind::Sweep) {
        roofline_model::chart::sweep(bundle, &options).map(|s| (ChartKind::Sweep, s))
    } else if chart == Some(ChartKind::Comm) {
        // Collectives of every device; the roofs of the one asked for, else the first with links.
        let options = roofline_model::chart::ChartOptions {
            device: device.map(str::to_string),
            ..options
        };
        roofline_model::chart::communication(bundle, &bundle.kernels, &options)
            .map(|s| (ChartKind::Comm, s))
    } else {
        let analysed = Analysed::new(bundle, options.device.as_deref(), None);
        let chart = chart.unwrap_or_else(|| {
            if prefers_time_based(&analysed, &options.levels) {
                message("note: drawing the time-based chart: the hierarchical one has nothing to draw (no ceilings and no bytes per memory level); choose with --chart");
                ChartKind::Time
            } else {
                ChartKind::Hierarchical
            }
        });
        match chart {
            ChartKind::Time => time_based_of(&analysed, &options),
            _ => hierarchical_of(&analysed, &options),
        }
        .map(|s| (chart, s))
    };
    let (chart, scene) = scene.map_err(|e| Error::Nothing(e.to_string()))?;
    Ok((chart, export::svg::render(&scene)))
}

/// Renders a chart of a bundle to SVG bytes.
///
/// # Errors
/// [`Error::Nothing`] when the bundle has nothing to draw on that chart; [`Error::Usage`] for an
/// unknown device.
pub fn plot(
    bundle: &Bundle,
    chart: ChartKind,
    top: usize,
    size: (f64, f64),
    device: Option<&str>,
) -> Result<Vec<u8>, Error> {
    plot_default(bundle, Some(chart), top, size, device).map(|(_, svg)| svg)
}

/// The chart options of `plot`: the device checked against the bundle's (the first one when
/// none is named).
fn chart_options(
    bundle: &Bundle,
    top: usize,
    size: (f64, f64),
    device: Option<&str>,
) -> Result<roofline_model::chart::ChartOptions, Error> {
    let device = match device {
        Some(d) if !bundle.devices.iter().any(|x| x.id == d) => {
            return Err(Error::Usage(format!(
                "--device {d}: the bundle has no such device (it has {})",
                bundle
                    .devices
                    .iter()
                    .map(|x| x.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Some(d) => Some(d.to_string()),
        None => bundle.devices.first().map(|d| d.id.clone()),
    };
    Ok(roofline_model::chart::ChartOptions {
        width: size.0,
        height: size.1,
        top_kernels: top,
        device,
        ..roofline_model::chart::ChartOptions::default()
    })
}

fn merge(files: &[PathBuf], output: &Path) -> Result<(), Error> {
    let inputs = files
        .iter()
        .map(|f| Ok((f.display().to_string(), read_bundle(f)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let merged = roofline_model::bundle::merge::merge(&inputs, crate::provenance::current())
        .map_err(Error::Merge)?;
    write_bundle(output, &merged)?;
    message(&format!(
        "wrote {} ({} device{}, {} kernel entr{})",
        describe(output),
        merged.devices.len(),
        if merged.devices.len() == 1 { "" } else { "s" },
        merged.kernels.len(),
        if merged.kernels.len() == 1 {
            "y"
        } else {
            "ies"
        }
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_model::bundle::Provenance;

    #[test]
    fn info_aggregated_while_reading_says_what_info_of_the_whole_bundle_says() {
        // A bundle of one entry per launch (797), read in one pass and aggregated as it comes:
        // every report the same as from the bundle read whole, the entries counted as they were.
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/bundles/deepcam-v100-amp-fw.json");
        let whole = read_bundle(&path).unwrap();
        let (aggregated, entries, comm) = read_grouped(&path, GroupBy::Kernel).unwrap();
        assert_eq!(entries, whole.kernels.len());
        assert!(aggregated.kernels.len() < entries);
        assert_eq!(
            export::info::to_table_of(&aggregated, Some(10), entries, &comm),
            export::info::to_table(&whole, Some(10))
        );
        assert_eq!(
            export::info::to_json_of(&aggregated, &comm),
            export::info::to_json(&whole)
        );
        assert_eq!(
            export::info::to_csv(&aggregated),
            export::info::to_csv(&whole)
        );
        assert_eq!(
            export::info::to_json(&aggregated),
            export::info::to_json(&whole)
        );
        let base = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/bundles/deepcam-v100-fp32-fw.json");
        let (base_agg, _, _) = read_grouped(&base, GroupBy::Kernel).unwrap();
        assert_eq!(
            export::compare::to_csv(&aggregated, &base_agg, None),
            export::compare::to_csv(&whole, &read_bundle(&base).unwrap(), None)
        );
    }

    /// A trace's bundle (one entry per launch, with operators) read in one pass and grouped
    /// per operator or module as it comes: the same reports, charts and comparison as from the
    /// bundle read whole and regrouped.
    #[test]
    fn grouped_while_reading_says_what_the_whole_bundle_regrouped_says() {
        let dir = tempfile::tempdir().unwrap();
        let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/traces/sampled-rank-0-shapes.json.gz");
        let path = dir.path().join("run.json");
        crate::capture::import(&crate::capture::ImportRequest {
            files: &[trace],
            output: &path,
            machine: None,
            options: &roofline_model::bundle::options::ImportOptions::default(),
            counters: None,
            ncu: None,
            per_trace: &[],
        })
        .unwrap();
        let whole = read_bundle(&path).unwrap();
        for by in [GroupBy::Operator, GroupBy::Module, GroupBy::Kernel] {
            let (grouped, entries, comm) = read_grouped(&path, by).unwrap();
            assert_eq!(entries, whole.kernels.len());
            let mut regrouped = whole.clone();
            regroup(&mut regrouped, by);
            if by != GroupBy::Kernel {
                assert_eq!(grouped.kernels, regrouped.kernels, "{by:?}");
            }
            let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
            assert_eq!(
                text(export::info::to_table_of(&grouped, None, entries, &comm)),
                text(export::info::to_table_of(
                    &regrouped,
                    None,
                    entries,
                    &CommAcc::of(&whole)
                ))
            );
            assert_eq!(
                text(export::info::to_csv(&grouped)),
                text(export::info::to_csv(&regrouped))
            );
            for chart in [ChartKind::Time, ChartKind::Hierarchical] {
                assert_eq!(
                    plot_default(&grouped, Some(chart), 20, (900.0, 600.0), None)
                        .map(|p| p.1)
                        .ok(),
                    plot_default(&regrouped, Some(chart), 20, (900.0, 600.0), None)
                        .map(|p| p.1)
                        .ok(),
                    "{by:?} {chart:?}"
                );
            }
        }
        // Unasked, `info --baseline` of two such bundles compares per operator, in one pass each.
        let (cur, base) = read_compared(None, &path, &path).unwrap();
        let mut regrouped = whole;
        regroup(&mut regrouped, GroupBy::Operator);
        assert_eq!(cur.kernels, regrouped.kernels);
        assert_eq!(
            export::compare::to_csv(&cur, &base, None),
            export::compare::to_csv(&regrouped, &regrouped, None)
        );
    }

    #[test]
    fn the_machine_bundle_is_written_before_the_summary_is_shown() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m.json");
        let bundle = Bundle::new(Provenance::default());
        let shown = write_then_show(&out, &bundle, "summary\n", |s| {
            assert_eq!(s, "summary\n");
            // The bundle is complete on disk before a single byte of the summary is printed.
            let b = read_bundle(&out).expect("written before the summary");
            assert_eq!(b, bundle);
            Err(Error::StdoutClosed)
        })
        .unwrap();
        // A broken terminal is still reported, after the fact.
        assert!(matches!(shown, Err(Error::StdoutClosed)));

        // A write that fails is the error; the summary is not shown through `show` then.
        let missing = dir.path().join("no-such-dir").join("m.json");
        let e = write_then_show(&missing, &bundle, "summary", |_| {
            panic!("nothing to show after a failed write")
        })
        .unwrap_err();
        assert!(matches!(e, Error::WriteFile { .. }), "{e}");
    }
}
