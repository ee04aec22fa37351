//! The `roofline` binary: parse, validate, run, and print `error: …` with the cause chain.

use std::process::ExitCode;

use clap::Parser;
use roofline_collector::{cli::Cli, commands, config::Config};

fn main() -> ExitCode {
    // GPU commands: find pip's or a toolkit's CUDA libraries (may re-execute once).
    roofline_collector::cudalibs::prepare();
    let cli = Cli::parse();
    let result: anyhow::Result<()> = Config::from_cli(cli)
        .and_then(commands::run)
        .map_err(anyhow::Error::new);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
