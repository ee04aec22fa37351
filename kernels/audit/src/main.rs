//! `roofline-sass-audit`: the SASS audit of every kernel (see the library, `roofline_sass_audit`),
//! run by `cargo xtask sass` with one toolkit's NVRTC on the library path; kept out of the user's
//! `roofline` CLI.
//!
//! - `audit --toolkit NAME --description TEXT --ptxas PATH --nvdisasm PATH --arch sm_XY… --out
//!   FILE`: compiles every source with `roofline_kernels::nvrtc_compile` (the NVRTC on
//!   `LD_LIBRARY_PATH`) for each architecture, assembles with `ptxas -v`, disassembles with
//!   `nvdisasm -c`, audits every kernel and writes the rows (`roofline_kernels::audit_table`). No
//!   driver, no GPU.
//! - `render --input FILE… --table PATH --markdown PATH [--check]`: merges the rows of each
//!   toolkit into the embedded table and the Markdown report, or with `--check` compares them
//!   with the files and fails on any difference.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use roofline_kernels::audit_table::{Table, Verdict};
use roofline_kernels::{self as kernels, CompileError, Kernel, Source};
use roofline_sass_audit::{audit, disasm, ptxas, report};

#[derive(Parser)]
#[command(about = "SASS audit of the collector's CUDA kernels (run by `cargo xtask sass`)")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Audits every kernel with one toolkit.
    Audit {
        /// The toolkit's name in the table (`cuda-12.9`).
        #[arg(long)]
        toolkit: String,
        /// Its tool versions, for the report.
        #[arg(long)]
        description: String,
        /// `ptxas`.
        #[arg(long)]
        ptxas: PathBuf,
        /// `nvdisasm`.
        #[arg(long)]
        nvdisasm: PathBuf,
        /// The architectures (`sm_90`), repeated.
        #[arg(long = "arch", required = true)]
        archs: Vec<String>,
        /// Where the rows go.
        #[arg(long)]
        out: PathBuf,
        /// Also keep every PTX, cubin, `ptxas -v` report and listing in this directory.
        #[arg(long)]
        keep: Option<PathBuf>,
    },
    /// Merges the toolkits' rows into the table and the report (or checks them).
    Render {
        /// The rows of each toolkit, in order.
        #[arg(long = "input", required = true)]
        inputs: Vec<PathBuf>,
        /// The embedded table (`kernels/sass-audit.tsv`).
        #[arg(long)]
        table: PathBuf,
        /// The report (`docs/reference/kernels-sass.md`).
        #[arg(long)]
        markdown: PathBuf,
        /// Compare with the files instead of writing them; fail on a difference.
        #[arg(long)]
        check: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Cmd::Audit {
            toolkit,
            description,
            ptxas,
            nvdisasm,
            archs,
            out,
            keep,
        } => run_audit(
            &toolkit,
            &description,
            &ptxas,
            &nvdisasm,
            &archs,
            &out,
            keep.as_deref(),
        ),
        Cmd::Render {
            inputs,
            table,
            markdown,
            check,
        } => render(&inputs, &table, &markdown, check),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("roofline-sass-audit: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs a tool and returns its standard output and error together, or its failure.
fn tool(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .output()
        .with_context(|| format!("could not start {cmd:?}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        bail!("{cmd:?} failed ({}):\n{text}", out.status);
    }
    Ok(text)
}

fn run_audit(
    toolkit: &str,
    description: &str,
    ptxas_bin: &Path,
    nvdisasm_bin: &Path,
    archs: &[String],
    out: &Path,
    keep: Option<&Path>,
) -> Result<()> {
    if !kernels::nvrtc_present() {
        bail!(
            "NVRTC (libnvrtc.so) is not on the library path; `cargo xtask sass` installs it and sets LD_LIBRARY_PATH"
        );
    }
    let scratch = tempfile::tempdir().context("a temporary directory")?;
    let mut t = Table::default();
    t.toolkits.push((toolkit.into(), description.into()));
    for arch in archs {
        let dir = keep.unwrap_or(scratch.path()).join(toolkit).join(arch);
        std::fs::create_dir_all(&dir).with_context(|| format!("{}", dir.display()))?;
        let started = std::time::Instant::now();
        for source in Source::ALL {
            let compiled = match kernels::nvrtc_compile(source, arch) {
                Ok(p) => p,
                Err(CompileError::Compile { log, .. })
                    if log.contains("invalid value for --gpu-architecture") =>
                {
                    t.unsupported.push((
                        toolkit.into(),
                        arch.clone(),
                        "NVRTC: invalid value for --gpu-architecture".into(),
                    ));
                    break;
                }
                Err(e) => return Err(e).context(format!("{toolkit}, {arch}")),
            };
            let stem = source.file().trim_end_matches(".cu");
            let ptx_path = dir.join(format!("{stem}.ptx"));
            let cubin = dir.join(format!("{stem}.cubin"));
            // Scratch files of the audit, not results: written straight (the table and the report
            // go through write_atomic).
            std::fs::write(&ptx_path, compiled.ptx.to_src())
                .with_context(|| format!("{}", ptx_path.display()))?;
            let report = tool(
                Command::new(ptxas_bin)
                    .arg(format!("-arch={arch}"))
                    .arg("-v")
                    .arg(&ptx_path)
                    .arg("-o")
                    .arg(&cubin),
            )?;
            let listing = tool(Command::new(nvdisasm_bin).arg("-c").arg(&cubin))?;
            if keep.is_some() {
                std::fs::write(dir.join(format!("{stem}.ptxas.txt")), &report)?;
                std::fs::write(dir.join(format!("{stem}.sass")), &listing)?;
            }
            let resources = ptxas::parse(&report)
                .with_context(|| format!("{toolkit} {arch} {}", source.file()))?;
            let functions = disasm::parse(&listing)
                .with_context(|| format!("{toolkit} {arch} {}", source.file()))?;
            // The collector loads NVRTC's own CUBIN of the same compile (`kernels::compile_cubin`),
            // not this PTX through ptxas: the audit holds for what runs only if both are the same
            // code.
            let loaded = dir.join(format!("{stem}.nvrtc.cubin"));
            let Some(nvrtc_cubin) = &compiled.cubin else {
                bail!("{toolkit} {arch}: NVRTC gave no CUBIN (is {arch} a real architecture?)");
            };
            std::fs::write(&loaded, nvrtc_cubin)
                .with_context(|| format!("{}", loaded.display()))?;
            let loaded_listing = tool(Command::new(nvdisasm_bin).arg("-c").arg(&loaded))?;
            let loaded_functions = disasm::parse(&loaded_listing)
                .with_context(|| format!("{toolkit} {arch} {} (NVRTC's CUBIN)", source.file()))?;
            same_code(&functions, &loaded_functions)
                .with_context(|| format!("{toolkit} {arch} {}", source.file()))?;
            for kernel in Kernel::all().into_iter().filter(|k| k.source() == source) {
                let f = functions.iter().find(|f| f.name == kernel.entry());
                let r = resources.get(kernel.entry()).copied();
                let finding = audit::audit(kernel, arch, f, r);
                t.rows.push(finding.row(toolkit));
            }
        }
        eprintln!(
            "{toolkit} {arch}: audited in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    write_atomic(out, t.to_tsv().as_bytes()).with_context(|| format!("{}", out.display()))?;
    Ok(())
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, synced, then renamed over it,
/// so that an interrupted run never leaves half a table or report.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)?;
    Ok(())
}

/// Every function of `audited` (ptxas's CUBIN) has exactly the instructions of its namesake in
/// `loaded` (NVRTC's CUBIN, which the collector loads), and both hold the same functions (in
/// whatever order each laid them out).
fn same_code(audited: &[disasm::Function], loaded: &[disasm::Function]) -> Result<()> {
    fn by_name(fs: &[disasm::Function]) -> Vec<&disasm::Function> {
        let mut v: Vec<&disasm::Function> = fs.iter().collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }
    let (audited, loaded) = (by_name(audited), by_name(loaded));
    let names = |fs: &[&disasm::Function]| fs.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
    if names(&audited) != names(&loaded) {
        bail!(
            "NVRTC's CUBIN holds the functions {:?}, ptxas's {:?}",
            names(&loaded),
            names(&audited)
        );
    }
    for (a, l) in audited.iter().zip(&loaded) {
        if a.instructions != l.instructions {
            let at = a
                .instructions
                .iter()
                .zip(&l.instructions)
                .position(|(x, y)| x != y)
                .unwrap_or(a.instructions.len().min(l.instructions.len()));
            bail!(
                "{}: NVRTC's CUBIN (what the collector loads) differs from ptxas's (what was audited) at instruction {at}: {:?} against {:?}",
                a.name,
                l.instructions.get(at),
                a.instructions.get(at)
            );
        }
    }
    Ok(())
}

fn render(inputs: &[PathBuf], table_path: &Path, markdown: &Path, check: bool) -> Result<()> {
    let mut t = Table::default();
    for input in inputs {
        let text =
            std::fs::read_to_string(input).with_context(|| format!("{}", input.display()))?;
        t.extend(Table::parse(&text).with_context(|| format!("{}", input.display()))?);
    }
    let outputs = [(table_path, t.to_tsv()), (markdown, report::markdown(&t))];
    let mut stale = Vec::new();
    for (path, fresh) in &outputs {
        if check {
            let committed = std::fs::read_to_string(path).unwrap_or_default();
            if &committed != fresh {
                let first = committed
                    .lines()
                    .zip(fresh.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| committed.lines().count().min(fresh.lines().count()));
                stale.push(format!(
                    "{} differs from a fresh audit from line {}:\n  committed: {}\n  fresh:     {}",
                    path.display(),
                    first + 1,
                    committed.lines().nth(first).unwrap_or("(end of file)"),
                    fresh.lines().nth(first).unwrap_or("(end of file)")
                ));
            }
        } else {
            write_atomic(path, fresh.as_bytes()).with_context(|| format!("{}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    }
    if !stale.is_empty() {
        bail!(
            "{}\nrun `cargo xtask sass` and commit the result",
            stale.join("\n")
        );
    }
    let fails = t.rows.iter().filter(|r| r.verdict == Verdict::Fail).count();
    eprintln!(
        "{} kernel × architecture × toolkit audited: {} pass, {fails} fail, {} absent",
        t.rows.len(),
        t.rows.iter().filter(|r| r.verdict == Verdict::Pass).count(),
        t.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Absent)
            .count()
    );
    Ok(())
}
