//! Tests that need an outside tool (a program, a Python package, root)
//! decide here what its absence means, so CI cannot pass by skipping:
//!
//! - without `STEADYHUD_REQUIRE_TOOLS`, the test prints one
//!   `SKIPPED <test>: <why>` line (straight to stderr, past the harness's
//!   capture) and leaves out what needs the tool;
//! - with `STEADYHUD_REQUIRE_TOOLS=1` (set by `.ci/run`), it fails, naming
//!   the tool and its apt package.
//!
//! Root tests: `mod require;`. Crates' tests:
//! `#[path = "../../../tests/require/mod.rs"] mod require;`.
#![allow(dead_code)]

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The switch that turns a missing tool into a failure.
pub const SWITCH: &str = "STEADYHUD_REQUIRE_TOOLS";

/// Whether missing tools fail tests: the switch is set to anything but
/// empty or `0`.
pub fn required() -> bool {
    std::env::var_os(SWITCH).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The running test's name (libtest names each test's thread after it).
fn test_name() -> String {
    match std::thread::current().name() {
        Some(n) if n != "main" => n.to_string(),
        _ => "(test)".to_string(),
    }
}

/// A tool the test needs is missing: panics when [`required`], else prints
/// `SKIPPED <test>: <why>` and returns (the caller then returns early or
/// leaves the part out).
pub fn skip_or_fail(why: &str) {
    if required() {
        panic!("{why} ({SWITCH} is set: a missing tool fails the test)");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED {}: {why}", test_name());
}

/// Whether `program` is an executable file in a folder of `PATH`.
pub fn on_path(program: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| executable(&dir.join(program)))
}

fn executable(p: &Path) -> bool {
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether every `(program, apt package)` is on `PATH`; when some are not,
/// one [`skip_or_fail`] naming them and their packages, and `false`.
pub fn programs(tools: &[(&str, &str)]) -> bool {
    let missing: Vec<String> = tools
        .iter()
        .filter(|(program, _)| !on_path(program))
        .map(|(program, package)| format!("`{program}` (apt-get install {package})"))
        .collect();
    if missing.is_empty() {
        return true;
    }
    skip_or_fail(&format!("not installed: {}", missing.join(", ")));
    false
}

/// [`programs`] for one program.
pub fn program(program: &str, package: &str) -> bool {
    programs(&[(program, package)])
}
