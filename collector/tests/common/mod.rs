//! What the binary's integration tests share: the `roofline` binary run as a user runs it, with
//! no GPU driver reachable whatever the host has.

use std::process::{Command, Output};

/// `roofline ARGS`, not yet run.
pub fn cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_roofline"));
    c.args(args).env("LD_LIBRARY_PATH", "/nonexistent");
    c
}

/// `roofline ARGS`, run to its end.
pub fn roofline(args: &[&str]) -> Output {
    cmd(args).output().unwrap()
}
