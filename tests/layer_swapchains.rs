//! Issue 3, several swapchains and swapchain recreation, with the validation
//! layer on: no crash, no `VUID-` line, and logs that follow the layer's
//! documented multi-swapchain semantics (crates/capture/src/analysis/stream.rs): one session
//! log per presented window, kept across swapchain recreation, whose frames
//! are that window's consecutive presents. So a window presented P times has
//! P-1 rows, and the logs' rows sum to (total presents) - (windows).

mod common;
use common::*;

/// Runs the app for `frames` presents 10 ms apart plus `extra` options,
/// with layer + validation, and checks the logs against the app's
/// per-swapchain present counts.
fn check(h: &Harness, frames: u32, extra: &[&str], windows: usize) {
    h.clear_logs();
    let frames = frames.to_string();
    let mut args = vec!["--frames", &frames, "--interval", "10ms"];
    args.extend_from_slice(extra);
    let what = format!("testapp {args:?} with steadyhud + validation");
    let out = run(h.testapp(&args).layer().validation());
    out.assert_success(&what).assert_no_vuid(&what);
    let per = out.swapchain_presents();
    assert_eq!(
        per.len(),
        windows,
        "{what}: swapchain presents line:\n{}",
        out.stdout
    );

    let logs = h.session_logs();
    assert_eq!(
        logs.len(),
        windows,
        "{what}: expected one session log per window, found {:?}",
        list_dir(&h.log_dir)
    );
    let mut rows: Vec<u64> = logs
        .iter()
        .map(|l| logged_durations_ns(&l.csv).len() as u64)
        .collect();
    rows.sort_unstable();
    let mut want: Vec<u64> = per.iter().map(|p| p - 1).collect();
    want.sort_unstable();
    assert_eq!(rows, want, "{what}: rows per log vs presents-1 per window");
    for l in &logs {
        let a = h.analyze(&l.csv);
        assert_eq!(
            a["frames"].as_u64(),
            Some(logged_durations_ns(&l.csv).len() as u64),
            "{}",
            l.csv.display()
        );
        assert!(
            l.summary.is_some(),
            "{what}: no summary next to {}",
            l.csv.display()
        );
    }
}

#[test]
fn two_swapchains_presented_in_turn() {
    let h = Harness::new();
    h.assert_layer_inserted();
    check(&h, 40, &["--swapchains", "2"], 2);
}

#[test]
fn two_swapchains_in_one_multi_present_call() {
    let h = Harness::new();
    check(&h, 40, &["--swapchains", "2", "--multi-present"], 2);
}

#[test]
fn resize_recreates_the_swapchain_and_keeps_one_log() {
    let h = Harness::new();
    let args = ["--resize-at", "15:200x150", "--resize-at", "40:400x300"];
    check(&h, 60, &args, 1);
    // Resize noticed by polling the surface (recreation before the next acquire).
    check(&h, 40, &["--resize-at", "10:240x180", "--resize-lazy"], 1);
    // Resizes while two windows present in one call, sRGB swapchains.
    check(
        &h,
        40,
        &[
            "--swapchains",
            "2",
            "--multi-present",
            "--format",
            "srgb",
            "--resize-at",
            "20:160x120",
        ],
        2,
    );
}

#[test]
fn two_threads_present_two_windows() {
    let h = Harness::new();
    check(&h, 40, &["--threads", "2"], 2);
}

#[test]
fn two_devices_presented_in_turn_and_from_two_threads() {
    let h = Harness::new();
    check(&h, 30, &["--devices", "2"], 2);
    check(&h, 30, &["--devices", "2", "--threads", "2"], 2);
}

#[test]
fn instances_created_and_destroyed_repeatedly_each_get_their_log() {
    // Each round creates and destroys the instance: the loader unloads and
    // reloads the layer, and every session ends with its own log + summary.
    let h = Harness::new();
    let what = "testapp --repeat 3 with steadyhud + validation";
    let out = run(h
        .testapp(&["--frames", "15", "--interval", "5ms", "--repeat", "3"])
        .layer()
        .validation());
    out.assert_success(what).assert_no_vuid(what);
    assert_eq!(out.presented(), Some(48), "{what}");
    let logs = h.session_logs();
    assert_eq!(
        logs.len(),
        3,
        "{what}: one log per session, found {:?}",
        list_dir(&h.log_dir)
    );
    for l in &logs {
        assert_eq!(logged_durations_ns(&l.csv).len(), 15, "{}", l.csv.display());
        assert_eq!(
            l.summary_json()["frames"].as_u64(),
            Some(15),
            "{}",
            l.csv.display()
        );
    }
}
