//! The subcommands, each taking its validated [`Config`] and returning a typed error.

use std::path::{Path, PathBuf};

use roofline_model::Bundle;

use crate::cli::{ChartKind, InfoFormat};
use crate::config::Config;
use crate::error::Error;
use crate::export;
use crate::io::{read_bundle, write_atomic, write_bundle, write_output};

/// Runs a validated command.
///
/// # Errors
/// Whatever the command fails with; see [`Error`].
pub fn run(config: Config) -> Result<(), Error> {
    match config {
        Config::Validate { files } => validate(&files),
        Config::Info {
            file,
            format,
            top,
            baseline,
            output,
        } => {
            let bundle = read_bundle(&file)?;
            if let Some(b) = baseline {
                let base = read_bundle(&b)?;
                let bytes = match format {
                    InfoFormat::Csv => export::compare::to_csv(&bundle, &base),
                    _ => export::compare::to_table(&bundle, &base, top),
                };
                return write_output(output.as_deref(), &bytes);
            }
            let bytes = match format {
                InfoFormat::Table => export::info::to_table(&bundle, top),
                InfoFormat::Csv => export::info::to_csv(&bundle),
                InfoFormat::Json => export::info::to_json(&bundle),
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
        } => {
            let bundle = read_bundle(&file)?;
            let svg = plot(&bundle, chart, top, size, device.as_deref())?;
            write_atomic(&output, &svg)?;
            eprintln!("wrote {}", output.display());
            Ok(())
        }
        Config::Merge { files, output } => merge(&files, &output),
        Config::Import {
            files,
            output,
            machine,
            arch,
            convention,
            ncu,
        } => crate::capture::import(
            &files,
            &output,
            machine.as_deref(),
            arch,
            convention,
            ncu.as_deref(),
        ),
        Config::Profile(c) => crate::capture::profile(&c),
        Config::Machine {
            output,
            devices,
            quick,
        } => machine(&output, devices, quick),
        Config::Suite {
            plan,
            machine,
            output,
        } => suite(&plan, machine.as_deref(), &output),
    }
}

/// `roofline machine`: measures each requested device, writes one bundle, prints the summary.
fn machine(output: &Path, devices: Option<u32>, quick: bool) -> Result<(), Error> {
    let command = "machine";
    let count = crate::gpu::probe().map_err(|source| Error::Gpu { command, source })?;
    if !crate::kernels::nvrtc_present() {
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
    let plan = crate::machine::Plan { quick };
    let mut combined: Option<Bundle> = None;
    let mut failure = None;
    for ordinal in ordinals {
        let outcome = crate::machine::run(ordinal, plan, crate::provenance::current())
            .map_err(|source| Error::Machine { ordinal, source })?;
        print!(
            "{}",
            export::machine_summary(&outcome.bundle, outcome.wall_s)
        );
        if let Some((phase, e)) = outcome.failure {
            failure = Some((ordinal, phase, e));
        }
        combined = Some(match combined {
            None => outcome.bundle,
            Some(mut b) => {
                b.complete &= outcome.bundle.complete;
                b.devices.extend(outcome.bundle.devices);
                b.machines.extend(outcome.bundle.machines);
                b.skipped.extend(outcome.bundle.skipped);
                b.notes.extend(outcome.bundle.notes);
                b
            }
        });
        if failure.is_some() {
            break;
        }
    }
    let Some(bundle) = combined else {
        return Err(Error::Nothing("no device was measured".into()));
    };
    write_bundle(output, &bundle)?;
    match failure {
        None => {
            eprintln!("wrote {}", output.display());
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

/// `roofline suite`: runs the study on GPU 0, writes the bundle, prints each entry's verdict.
fn suite(plan: &crate::suite::Plan, machine: Option<&Path>, output: &Path) -> Result<(), Error> {
    let command = "suite";
    let machine = machine.map(read_bundle).transpose()?;
    crate::gpu::probe().map_err(|source| Error::Gpu { command, source })?;
    if !crate::kernels::nvrtc_present() {
        return Err(Error::Gpu {
            command,
            source: crate::gpu::GpuError::NoNvrtc,
        });
    }
    let outcome = crate::suite::run(0, plan, crate::provenance::current(), machine)
        .map_err(|source| Error::Suite { source })?;
    write_bundle(output, &outcome.bundle)?;
    eprintln!(
        "{} entries, {} skipped, in {:.1} s; wrote {}",
        outcome.bundle.kernels.len(),
        outcome.bundle.skipped.len(),
        outcome.wall_s,
        output.display()
    );
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
        match read_bundle(f) {
            Ok(b) => println!(
                "{}: ok (schema v{}, {}, {} device{}, {} machine{}, {} kernel entr{})",
                f.display(),
                b.schema_version,
                if b.complete { "complete" } else { "incomplete" },
                b.devices.len(),
                if b.devices.len() == 1 { "" } else { "s" },
                b.machines.len(),
                if b.machines.len() == 1 { "" } else { "s" },
                b.kernels.len(),
                if b.kernels.len() == 1 { "y" } else { "ies" },
            ),
            Err(e) => {
                failed += 1;
                eprintln!("{}", crate::report_chain(&e));
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
    let options = roofline_model::chart::ChartOptions {
        width: size.0,
        height: size.1,
        top_kernels: top,
        device,
        ..roofline_model::chart::ChartOptions::default()
    };
    let scene = match chart {
        ChartKind::Hierarchical => roofline_model::chart::hierarchical(bundle, &options),
        ChartKind::Time => roofline_model::chart::time_based(bundle, &options),
        ChartKind::Sweep => roofline_model::chart::sweep(bundle, &options),
    }
    .map_err(|e| Error::Nothing(e.to_string()))?;
    Ok(export::svg::render(&scene))
}

fn merge(files: &[PathBuf], output: &Path) -> Result<(), Error> {
    let inputs = files
        .iter()
        .map(|f| Ok((f.display().to_string(), read_bundle(f)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let merged = roofline_model::merge::merge(&inputs, crate::provenance::current())
        .map_err(Error::Merge)?;
    write_bundle(output, &merged)?;
    eprintln!(
        "wrote {} ({} device{}, {} kernel entr{})",
        output.display(),
        merged.devices.len(),
        if merged.devices.len() == 1 { "" } else { "s" },
        merged.kernels.len(),
        if merged.kernels.len() == 1 {
            "y"
        } else {
            "ies"
        }
    );
    Ok(())
}
