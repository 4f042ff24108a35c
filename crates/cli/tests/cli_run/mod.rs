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

/// [`steadyhud`], asserted to exit 0 (its stderr in the failure).
#[allow(dead_code)]
pub fn steadyhud_ok(args: &[&str]) -> Output {
    let out = steadyhud(args);
    assert!(
        out.status.success(),
        "steadyhud {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
