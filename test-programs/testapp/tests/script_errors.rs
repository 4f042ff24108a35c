//! The test app's own contract with the tests that drive it: a script it
//! cannot follow, or a display it cannot open, is one `testapp: error:`
//! line and exit 1, never a panic or a hang. (Its presents are tested with
//! the layer, from the workspace's top-level `tests/`.)

use std::process::Command;

fn testapp(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_steadyhud-testapp"))
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("run steadyhud-testapp");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_one_error_line(args: &[&str], says: &str) {
    let (code, stdout, stderr) = testapp(args);
    assert_eq!(code, Some(1), "{args:?}: exit code; stderr: {stderr}");
    assert_eq!(stdout, "", "{args:?}: nothing on stdout");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line: {stderr}");
    assert!(
        lines[0].starts_with("testapp: error: ") && lines[0].contains(says),
        "{args:?}: {:?} should say {says:?}",
        lines[0]
    );
}

#[test]
fn a_script_it_cannot_follow_is_one_error_line() {
    assert_one_error_line(&["--pattern", "abc"], "duration `abc` is not a number");
    assert_one_error_line(&["--pattern", "16ms*0"], "count must be at least 1");
    assert_one_error_line(&["--pattern", "16ms,,16ms"], "--pattern");
}

#[test]
fn no_display_is_one_error_line() {
    assert_one_error_line(&["--frames", "3"], "display");
}
