//! The GL test program's own checks (which also make `cargo test` build
//! it for the GL library's tests): it refuses bad arguments and a missing
//! display with one line and exit code 1, never a panic.

use std::process::Command;

fn gltest() -> Command {
    Command::new(env!("CARGO_BIN_EXE_steadyhud-gltest"))
}

#[test]
fn bad_arguments_exit_1_with_a_message() {
    let out = gltest().args(["--profile", "vulkan"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid value 'vulkan'"), "{err}");
}

#[test]
fn no_display_is_one_line() {
    let out = gltest()
        .env("DISPLAY", ":9999")
        .args(["--frames", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim(), "gltest: cannot open the X display", "{err}");
}
