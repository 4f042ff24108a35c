//! Issue 39: a thread ended inside a hooked call passes through the layer
//! as it passes through the driver. `tests/exits/forced_exit.c` (built
//! here with gcc) presents from a worker thread and ends it inside one
//! call, the way Wine ends a process's threads (a signal whose handler
//! calls `pthread_exit`) or with `pthread_cancel`, then returns from main.
//! Each call, each way, with the HUD shown and, for the present and the
//! swap, also under a frame cap (the layer's own wait), with both cores
//! kept busy by other processes: exit code 0 as without the layer, no
//! `FATAL: exception not rethrown` or abort, and a complete log of every
//! present (rows = presents − 1, within the one in flight).
//!
//! Before the fix this failed: a forced unwind met the `catch_unwind` of
//! the HUD's draw (present) or of the GL frame cap (capped swap), and
//! glibc aborted the process.

mod common;
mod require;
use common::gl::{gl_library, preload};
use common::*;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The program, compiled once per test binary.
fn forced_exit_exe() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let dir = profile_dir().join("exit-test-programs");
        std::fs::create_dir_all(&dir).expect("create exit-test-programs");
        let out = dir.join(format!("forced_exit-{}", std::process::id()));
        let libs = ["-lvulkan", "-lX11", "-lEGL", "-lGLESv2", "-lpthread"];
        build_c("tests/exits/forced_exit.c", &out, &[], &libs);
        out
    })
    .clone()
}

/// The calls a thread is ended inside, Vulkan's and GL's swap.
const CALLS: [&str; 5] = [
    "present",
    "submit",
    "acquire",
    "create_swapchain",
    "egl_swap",
];

/// One run: `call` ended by `how`, with the layer (or the GL library) on
/// when `layer`. The process's output. A run whose thread ended outside
/// the call (the program says so; rare, with or without the layer) tested
/// nothing: it is run again, up to three times in all.
fn end_inside(h: &Harness, call: &str, how: &str, layer: bool) -> RunOutput {
    let mut tries = 0;
    loop {
        let mut cmd = h.command(forced_exit_exe());
        cmd.args([call, how]);
        if layer {
            if call == "egl_swap" {
                preload(&mut cmd, &[&gl_library()]);
            } else {
                cmd.layer();
            }
        }
        let out = run(&mut cmd);
        tries += 1;
        if tries == 3 || !out.stdout.contains(": no\n") {
            return out;
        }
        eprintln!("forced_exit: {call} by {how}: ended outside the call, again");
        h.clear_logs();
    }
}

/// `forced_exit: presents begun B returned R`: (B, R).
fn presents(stdout: &str) -> Option<(u64, u64)> {
    let rest = stdout
        .lines()
        .find_map(|l| l.strip_prefix("forced_exit: presents begun "))?;
    let (b, r) = rest.split_once(" returned ")?;
    Some((b.trim().parse().ok()?, r.trim().parse().ok()?))
}

/// What every run must show: exit 0, the thread ended inside the call, no
/// abort and (with the layer) a complete log of every present.
fn check(h: &Harness, call: &str, how: &str, what: &str, out: &RunOutput, layer: bool) {
    let both = format!("{}\n{}", out.stdout, out.stderr);
    assert!(
        !both.contains("FATAL") && !both.contains("cannot unwind"),
        "{what}: aborted:\n{both}"
    );
    assert_eq!(out.status.code(), Some(0), "{what}: exit status:\n{both}");
    assert!(
        out.stdout
            .contains(&format!("forced_exit: ended inside {call}: yes")),
        "{what}: the thread was not ended inside {call}:\n{both}"
    );
    if !layer {
        return;
    }
    let complaints = out.output_lines(is_layer_complaint);
    assert!(complaints.is_empty(), "{what}: {complaints:?}");
    let (begun, returned) =
        presents(&out.stdout).unwrap_or_else(|| panic!("{what}: no presents line:\n{both}"));
    let log = h.only_session_log();
    let rows = logged_durations_ns(&log.csv).len() as u64;
    // The present in flight when the thread ended may or may not have
    // reached the layer.
    assert!(
        rows + 1 >= returned && rows < begun.max(1),
        "{what} ({how}): {rows} rows for presents begun {begun}, returned {returned}"
    );
    let summary = log.summary_json();
    assert_eq!(summary["complete"], true, "{what}: {summary}");
    assert_eq!(summary["frames"], rows, "{what}: {summary}");
}

/// Every Vulkan call in `uncapped` ended one way, under load, with the HUD
/// shown, then the present and the GL swap under a frame cap; each
/// Vulkan one also without the layer.
fn every_call(how: &str, uncapped: &[&str]) {
    let h = Harness::new();
    let _load = CpuLoad::start();
    for (config, calls) in [
        ("", uncapped),
        ("fps_limit=30\n", &["present", "egl_swap"][..]),
    ] {
        h.write_config(config);
        for &call in calls {
            let what = format!("{call} ended by {how} [{}]", config.trim());
            eprintln!("forced_exit: {what}");
            // Without the layer a pbuffer's swap has no cancellation point,
            // and a thread ended inside glvnd leaves its lock taken (its
            // exit handler then spins): the swap is tested under the cap,
            // where the thread spends its time in the layer's own wait.
            if call != "egl_swap" {
                let plain = end_inside(&h, call, how, false);
                check(
                    &h,
                    call,
                    how,
                    &format!("{what} without the layer"),
                    &plain,
                    false,
                );
                h.clear_logs();
            }
            let out = end_inside(&h, call, how, true);
            check(&h, call, how, &what, &out, true);
            h.clear_logs();
        }
    }
}

#[test]
fn a_thread_ended_by_a_signal_inside_any_hook_passes_through() {
    if !require::programs(&[("gcc", "gcc"), ("Xvfb", "xvfb")]) {
        return;
    }
    every_call("signal", &CALLS[..4]);
}

#[test]
fn a_thread_cancelled_inside_any_hook_passes_through() {
    if !require::programs(&[("gcc", "gcc"), ("Xvfb", "xvfb")]) {
        return;
    }
    every_call("cancel", &CALLS[..4]);
}
