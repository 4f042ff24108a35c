//! Runs the `steadyhud` binary of this test build (shared by the CLI's
//! integration tests).

use std::process::{Command, Output};

/// `steadyhud ARGS`, waited for, its output.
pub fn steadyhud(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .args(args)
        .output()
        .expect("run steadyhud")
}
