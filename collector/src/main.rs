//! The `roofline` binary: parse, validate, run, and print `error: …` with the cause chain.
//!
//! A closed standard output (`roofline info … | head`) ends the command quietly with status 141,
//! what a program killed by SIGPIPE returns; every other failure prints `error: …` and exits 1.

use std::process::ExitCode;

use clap::Parser;
use roofline_collector::error::report_chain;
use roofline_collector::stderr::message;
use roofline_collector::{Error, cli::Cli, commands, config::Config, io};

/// 128 + SIGPIPE: the shell's status for a writer whose reader went away.
const CLOSED_PIPE: u8 = 141;

fn main() -> ExitCode {
    io::survive_file_size_limit();
    // GPU commands: find pip's or a toolkit's CUDA libraries (may re-execute once).
    roofline_collector::gpu::cudalibs::prepare(&roofline_collector::progress::Terminal);
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    match Config::from_cli(cli).and_then(commands::run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::StdoutClosed) => ExitCode::from(CLOSED_PIPE),
        Err(e) => {
            message(&report_chain(&e));
            ExitCode::FAILURE
        }
    }
}

/// Prints clap's help, version or usage error as clap would, but with a failing stream handled
/// as every other write: a closed pipe is quiet, a full device an error.
fn clap_exit(e: &clap::Error) -> ExitCode {
    let code = u8::try_from(e.exit_code()).unwrap_or(1);
    match e.print() {
        Ok(()) => ExitCode::from(code),
        // Usage errors go to standard error, which has nowhere to report its own failure.
        Err(_) if e.use_stderr() => ExitCode::from(code),
        Err(w) if w.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(CLOSED_PIPE),
        Err(w) => {
            message(&format!("error: cannot write to standard output: {w}"));
            ExitCode::FAILURE
        }
    }
}
