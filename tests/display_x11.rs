//! Displayed-frame timing on X11 (issue 42, X11 Present), as far as this
//! bed allows: Xvfb has Present but no DRI3, so lavapipe presents with
//! `PutImage` and no `CompleteNotify` ever comes (the mechanism itself is
//! tested on Xvfb in crates/x11present/tests/xvfb_present.rs, with a
//! client that presents pixmaps). Here the real layer follows the test
//! app's Xlib window, says once that no complete came, and writes every
//! row's display cells empty: nothing invented. The GL library does the
//! same for the GL test program's GLX window on llvmpipe, which presents
//! with (Shm)PutImage. The path is on with `display_x11=1` (off by
//! default: never run with a real DRI3 driver).

mod common;
mod require;

use common::gl::{gl_library, gltest_exe, preload};
use common::*;

/// The four display cells of every row of `csv` (`None`: the log has no
/// display columns).
fn display_cells(csv: &std::path::Path) -> Option<Vec<[String; 4]>> {
    let text = std::fs::read_to_string(csv).expect("read the session log");
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name);
    let cols = [
        at("displayed_ns")?,
        at("display_latency_ms")?,
        at("refresh_ms")?,
        at("display_source")?,
    ];
    let rows = lines
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            cols.map(|i| cells.get(i).copied().unwrap_or("?").to_owned())
        })
        .collect();
    Some(rows)
}

#[test]
fn lavapipe_on_xvfb_makes_no_present_completes_and_nothing_is_invented() {
    let h = Harness::new();
    h.write_config("display_x11=1\n");
    let out = run(h.testapp(&["--frames", "200", "--uncapped"]).layer());
    assert!(out.status.success(), "testapp failed: {}", out.stderr);
    // 201 presents (the app's first frame and 200 more): 200 frames.
    silent_and_empty(&h, &out, 200);
}

#[test]
fn llvmpipe_glx_on_xvfb_makes_no_present_completes_and_nothing_is_invented() {
    let h = Harness::new();
    h.write_config("display_x11=1\n");
    let mut cmd = h.command(gltest_exe());
    cmd.args(["--frames", "200", "--fps", "0"]);
    preload(&mut cmd, &[&gl_library()]);
    let out = run(&mut cmd);
    assert!(out.status.success(), "gltest failed: {}", out.stderr);
    // 200 swaps: 199 frames between them.
    silent_and_empty(&h, &out, 199);
}

/// vkcube makes an xcb surface (`vkCreateXcbSurfaceKHR`: our connection
/// goes to `$DISPLAY`): the same on lavapipe.
#[test]
fn vkcube_xcb_surface_on_xvfb_makes_no_present_completes() {
    if !require::programs(&[("vkcube", "vulkan-tools")]) {
        return;
    }
    let h = Harness::new();
    h.write_config("display_x11=1\n");
    let out = run(h.command("vkcube").args(["--c", "200"]).layer());
    assert!(out.status.success(), "vkcube failed: {}", out.stderr);
    let frames = logged_durations_ns(&h.only_session_log().csv).len();
    assert!(frames >= 150, "{frames} frames logged");
    silent_and_empty(&h, &out, frames);
}

/// One line (no complete came), `frames` rows with empty display cells,
/// and a summary that counts them all unknown.
fn silent_and_empty(h: &Harness, out: &RunOutput, frames: usize) {
    let notes = out.output_lines(|l| l.contains("X11 Present") || l.contains("display timing"));
    assert_eq!(notes.len(), 1, "one line about display timing: {notes:?}");
    assert!(
        notes[0].contains("no Present complete after")
            && notes[0].contains("do not go through X11 Present"),
        "{notes:?}"
    );
    let log = h.only_session_log();
    let cells = display_cells(&log.csv).expect("display columns: the window was followed");
    assert_eq!(cells.len(), frames, "one row per frame");
    for (i, c) in cells.iter().enumerate() {
        assert!(c.iter().all(String::is_empty), "row {i}: {c:?}");
    }
    let s = log.summary_json();
    let d = &s["display"];
    assert_eq!(d["displayed_frames"], 0, "{d}");
    assert_eq!(d["dropped_frames"], 0, "{d}");
    assert_eq!(d["unknown_frames"], frames, "{d}");
    assert_eq!(d["sources"], serde_json::json!({}), "{d}");
}

/// By default (`display_x11` off: never run with a real DRI3 driver) the
/// window is not followed: no line, and the log has no display columns
/// (as without a source at all), as before X11 Present was built.
#[test]
fn x11_windows_are_left_alone_by_default() {
    let h = Harness::new();
    let out = run(h.testapp(&["--frames", "130", "--uncapped"]).layer());
    assert!(out.status.success(), "testapp failed: {}", out.stderr);
    let notes = out.output_lines(|l| l.contains("X11 Present") || l.contains("display timing"));
    assert!(notes.is_empty(), "{notes:?}");
    let log = h.only_session_log();
    assert!(display_cells(&log.csv).is_none());
    assert_eq!(logged_durations_ns(&log.csv).len(), 130);
}

/// The local inodes of `pid`'s unix stream sockets whose peer is the X
/// server's end of a connection to display socket `x_socket`
/// (`/tmp/.X11-unix/X<n>`), from `ss -xp`: the process's connections to
/// that display.
fn x_connections(pid: u32, x_socket: &str) -> usize {
    let out = std::process::Command::new("ss")
        .args(["-xpn"])
        .output()
        .expect("ss is required (iproute2)");
    let text = String::from_utf8_lossy(&out.stdout);
    // Columns: Netid State Recv-Q Send-Q Local Port Peer Port [Process].
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .filter(|f: &Vec<&str>| f.len() >= 8)
        .collect();
    let ours = format!("pid={pid},");
    let mine: std::collections::HashSet<&str> = rows
        .iter()
        .filter(|f| f.len() > 8 && f[8].contains(&ours))
        .map(|f| f[5])
        .collect();
    rows.iter()
        .filter(|f| f[4].ends_with(x_socket) && mine.contains(f[7]))
        .count()
}

/// The game's connections to its X display, most seen in its first
/// seconds (the layer's analysis thread and X11 Present connect within
/// them), sampled every 100 ms while it runs.
fn most_x_connections(mut cmd: std::process::Command, x_socket: &str) -> usize {
    let mut app = spawn(&mut cmd);
    let pid = app.pid();
    let mut most = 0;
    let end = std::time::Instant::now() + std::time::Duration::from_secs(4);
    while std::time::Instant::now() < end && !app.has_exited() {
        most = most.max(x_connections(pid, x_socket));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = app.kill();
    most
}

/// One connection of ours per X display (issue 49): with the hotkeys
/// watched (their XInput 2 events) and the window followed by X11
/// Present, the game has exactly one X connection more than without the
/// layer.
#[test]
fn the_hotkeys_and_x11_present_share_one_connection() {
    let h = Harness::new();
    h.write_config("display_x11=1\n");
    let x_socket = format!(
        "/tmp/.X11-unix/X{}",
        h.xvfb.display().trim_start_matches(':')
    );
    let args = ["--frames", "100000"];
    let alone = most_x_connections(h.testapp(&args), &x_socket);
    assert!(alone >= 1, "the app's own connection is seen ({x_socket})");
    let mut cmd = h.testapp(&args);
    cmd.layer();
    let with_layer = most_x_connections(cmd, &x_socket);
    assert_eq!(
        with_layer,
        alone + 1,
        "one connection of ours (the hotkeys' and X11 Present's)"
    );
}
